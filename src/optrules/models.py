"""Fitted models: prediction, readable text and JSON. No learning happens here."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

FORMAT = "optrules.RuleList"
FORMAT_VERSION = 1


@dataclass(frozen=True)
class Rule:
    """``if all conditions hold then predict classes[prediction]``, with its training counts."""

    conditions: tuple[str, ...]
    prediction: int
    n_captured: int
    n_positive: int
    #: weighted totals per class of the captured samples (weighted or multi-class lists), else None
    class_totals: tuple[float, ...] | None = None

    @property
    def positive_rate(self) -> float:
        """Training frequency of the positive class among the samples this rule captured."""
        return float(self.class_frequencies(2)[1])

    def class_frequencies(self, n_classes: int) -> np.ndarray:
        """Training (weighted) frequency of each class among the samples this rule captured; a rule that
        captured nothing puts all its mass on its prediction."""
        if self.class_totals is not None:
            totals = np.asarray(self.class_totals, dtype=np.float64)
        else:
            totals = np.array([self.n_captured - self.n_positive, self.n_positive], dtype=np.float64)
        if totals.sum() <= 0:
            totals = np.eye(n_classes)[self.prediction]
        return totals / totals.sum()


def _plain(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def _display_label(classes: Sequence[Any], index: int) -> str:
    if [_plain(c) for c in classes] in ([0, 1], [False, True]):
        return ("no", "yes")[index]
    return str(classes[index])


class RuleList:
    """An ordered if / else-if list of rules and a default rule (``default`` has no conditions).

    ``predict`` accepts a DataFrame of the original columns (when the list carries the ``binarizer``
    it was learnt with), a DataFrame whose columns are feature names, or a boolean matrix whose columns
    are ``feature_names``.
    """

    def __init__(
        self,
        rules: Sequence[Rule],
        default: Rule,
        classes: Sequence[Any] = (0, 1),
        binarizer=None,
        feature_names: Sequence[str] | None = None,
    ):
        if default.conditions:
            raise ValueError("the default rule has no conditions")
        if len(classes) < 2:
            raise ValueError(f"a rule list needs at least two classes, got classes {list(classes)}")
        if len(classes) > 2 and any(r.class_totals is None for r in [*rules, default]):
            raise ValueError("a multi-class rule list needs the class totals of every rule")
        self.rules = list(rules)
        self.default = default
        self.classes = np.asarray(classes)
        self.binarizer = binarizer
        if feature_names is None and binarizer is not None:
            feature_names = binarizer.feature_names_
        self.feature_names = list(feature_names) if feature_names is not None else None

    def __len__(self) -> int:
        return len(self.rules)

    # -- prediction --------------------------------------------------------------------------------
    def _feature_frame(self, X):
        # pandas is imported on use: learning a list (the search core) does not need it
        import pandas as pd

        from .data.validation import as_frame

        if self.binarizer is not None:  # only the features the rules use: prediction on large tables
            return self.binarizer.transform_frame(X, sorted({c for rule in self.rules for c in rule.conditions}))
        if isinstance(X, pd.DataFrame):
            frame = as_frame(X)
            missing = sorted({c for rule in self.rules for c in rule.conditions} - set(frame.columns))
            if missing:
                raise ValueError(f"columns {missing} used by the rule list are missing from the data")
            return frame
        if self.feature_names is None:
            raise ValueError("an array input needs feature_names (or a binarizer) to locate the conditions")
        array = np.asarray(X)
        if array.ndim != 2 or array.shape[1] != len(self.feature_names):
            raise ValueError(
                f"expected a matrix with {len(self.feature_names)} feature columns, got shape {array.shape}"
            )
        return pd.DataFrame(array.astype(bool), columns=self.feature_names)

    def rule_index(self, X) -> np.ndarray:
        """Index of the rule that fires for each sample (``len(self)`` for the default rule)."""
        frame = self._feature_frame(X)
        fired = np.full(frame.shape[0], len(self.rules), dtype=np.int64)
        undecided = np.ones(frame.shape[0], dtype=bool)
        for k, rule in enumerate(self.rules):
            captured = undecided.copy()
            for condition in rule.conditions:
                captured &= frame[condition].to_numpy(dtype=bool)
            fired[captured] = k
            undecided &= ~captured
        return fired

    def _all_rules(self) -> list[Rule]:
        return self.rules + [self.default]

    def predict(self, X) -> np.ndarray:
        predictions = np.array([rule.prediction for rule in self._all_rules()], dtype=np.int64)
        return self.classes[predictions[self.rule_index(X)]]

    def predict_proba(self, X) -> np.ndarray:
        """``P(classes[c])`` per sample and class: (weighted) training frequencies in the rule that fires."""
        n_classes = len(self.classes)
        rates = np.array([rule.class_frequencies(n_classes) for rule in self._all_rules()])
        return rates[self.rule_index(X)]

    # -- text ----------------------------------------------------------------------------------------
    def __str__(self) -> str:
        lines = []
        for k, rule in enumerate(self.rules):
            keyword = "if" if k == 0 else "else if"
            condition = " and ".join(f"({c})" for c in rule.conditions)
            lines.append(f"{keyword} {condition} then predict {_display_label(self.classes, rule.prediction)}")
        prefix = "else " if self.rules else ""
        lines.append(f"{prefix}predict {_display_label(self.classes, self.default.prediction)}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"RuleList({len(self.rules)} rules + default)"

    def __eq__(self, other) -> bool:
        return (
            isinstance(other, RuleList)
            and self.rules == other.rules
            and self.default == other.default
            and [_plain(c) for c in self.classes] == [_plain(c) for c in other.classes]
        )

    # -- JSON ----------------------------------------------------------------------------------------
    def to_dict(self) -> dict:
        def rule_dict(rule: Rule) -> dict:
            data = {
                "conditions": list(rule.conditions),
                "prediction": int(rule.prediction),
                "n_captured": int(rule.n_captured),
                "n_positive": int(rule.n_positive),
            }
            if rule.class_totals is not None:
                data["class_totals"] = [float(t) for t in rule.class_totals]
            return data

        return {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "classes": [_plain(c) for c in self.classes],
            "rules": [rule_dict(r) for r in self.rules],
            "default": rule_dict(self.default),
            "feature_names": self.feature_names,
            "binarizer": self.binarizer.to_dict() if self.binarizer is not None else None,
        }

    def to_json(self, **kwargs) -> str:
        return json.dumps(self.to_dict(), **kwargs)

    @classmethod
    def from_dict(cls, data: dict) -> "RuleList":
        if data.get("format") != FORMAT:
            raise ValueError(f"not a serialised RuleList (format {data.get('format')!r})")
        if data.get("version") != FORMAT_VERSION:
            raise ValueError(f"unsupported RuleList format version {data.get('version')!r}")

        def rule(d: dict) -> Rule:
            totals = d.get("class_totals")
            return Rule(tuple(d["conditions"]), int(d["prediction"]), int(d["n_captured"]), int(d["n_positive"]),
                        tuple(float(t) for t in totals) if totals is not None else None)

        binarizer = None
        if data.get("binarizer"):
            from .data.binarize import Binarizer

            binarizer = Binarizer.from_dict(data["binarizer"])
        return cls(
            [rule(r) for r in data["rules"]],
            rule(data["default"]),
            classes=data["classes"],
            binarizer=binarizer,
            feature_names=data.get("feature_names"),
        )

    @classmethod
    def from_json(cls, text: str) -> "RuleList":
        return cls.from_dict(json.loads(text))


class FallingRuleList(RuleList):
    """A falling rule list: each rule reports a probability of the positive class, and the
    probabilities never increase down the list (the else clause included).

    ``probabilities`` are the rules' empirical positive rates (for a softly falling list, their running
    minimum, so that the list reported is falling); a sample is predicted positive when the probability
    of its rule exceeds ``threshold`` = 1/(1+w).
    """

    def __init__(self, rules, default, probabilities, threshold: float, classes=(0, 1), binarizer=None,
                 feature_names=None):
        super().__init__(rules, default, classes, binarizer, feature_names)
        probabilities = [float(p) for p in probabilities]
        if len(probabilities) != len(self.rules) + 1:
            raise ValueError(f"{len(probabilities)} probabilities for {len(self.rules)} rules and the else clause")
        if any(b > a + 1e-12 for a, b in zip(probabilities[:-1], probabilities[1:])):
            raise ValueError(f"probabilities must not increase down the list, got {probabilities}")
        self.probabilities = probabilities
        self.threshold = float(threshold)

    def predict_proba(self, X) -> np.ndarray:
        p = np.asarray(self.probabilities)[self.rule_index(X)]
        return np.column_stack([1.0 - p, p])

    def predict(self, X) -> np.ndarray:
        positive = np.asarray(self.probabilities)[self.rule_index(X)] > self.threshold
        return self.classes[positive.astype(np.int64)]

    def table(self) -> list[dict]:
        """The paper's Table 1: one row per rule (and the else clause) with probability and counts."""
        rows = []
        for k, rule in enumerate(self.rules + [self.default]):
            condition = " and ".join(rule.conditions) if rule.conditions else "(otherwise)"
            rows.append({
                "rule": condition,
                "probability": self.probabilities[k],
                "positives": rule.n_positive,
                "negatives": rule.n_captured - rule.n_positive,
            })
        return rows

    def __str__(self) -> str:
        lines = []
        for k, row in enumerate(self.table()):
            keyword = "if" if k == 0 else ("else" if k == len(self.rules) else "else if")
            condition = "" if k == len(self.rules) else " " + " and ".join(f"({c})" for c in self.rules[k].conditions) + " then"
            lines.append(
                f"{keyword}{condition} probability {row['probability']:.3f}"
                f"  ({row['positives']} positives, {row['negatives']} negatives)"
            )
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"FallingRuleList({len(self.rules)} rules + else, threshold {self.threshold:.3f})"

    def __eq__(self, other) -> bool:
        return (
            isinstance(other, FallingRuleList)
            and super().__eq__(other)
            and np.allclose(self.probabilities, other.probabilities)
            and self.threshold == other.threshold
        )

    def to_dict(self) -> dict:
        data = super().to_dict()
        data["format"] = FALLING_FORMAT
        data["probabilities"] = list(self.probabilities)
        data["threshold"] = self.threshold
        return data

    @classmethod
    def from_dict(cls, data: dict) -> "FallingRuleList":
        if data.get("format") != FALLING_FORMAT:
            raise ValueError(f"not a serialised FallingRuleList (format {data.get('format')!r})")
        base = RuleList.from_dict({**data, "format": FORMAT})
        return cls(base.rules, base.default, data["probabilities"], data["threshold"], base.classes,
                   base.binarizer, base.feature_names)


FALLING_FORMAT = "optrules.FallingRuleList"


RULESET_FORMAT = "optrules.RuleSet"


class RuleSet(RuleList):
    """A Boolean rule set: DNF (``IF clause OR clause ... THEN positive``, a clause being an AND of
    features) or, with ``cnf``, CNF (``IF (a OR b) AND (c) ... THEN positive``).

    ``clauses`` are tuples of feature names. The set describes ``classes[describes]`` (the "positive"
    class it predicts when it holds; by default the second). ``rates`` are the training rates of that
    class among the samples the set rejects and accepts, reported by ``predict_proba`` (whose columns
    follow ``classes``).
    """

    def __init__(self, clauses, cnf: bool = False, rates=(0.0, 1.0), classes=(0, 1), binarizer=None,
                 feature_names=None, describes: int = 1):
        if describes not in (0, 1):
            raise ValueError(f"describes must be 0 or 1 (an index into classes), got {describes!r}")
        self.describes = int(describes)
        rules = [Rule(tuple(c), self.describes, 0, 0) for c in clauses]
        super().__init__(rules, Rule((), 1 - self.describes, 0, 0), classes, binarizer, feature_names)
        self.clauses = [tuple(c) for c in clauses]
        self.cnf = bool(cnf)
        self.rates = (float(rates[0]), float(rates[1]))

    def decision(self, X) -> np.ndarray:
        """True where the rule set predicts the positive class."""
        frame = self._feature_frame(X)
        n = frame.shape[0]

        def column(name):
            return frame[name].to_numpy(dtype=bool)

        if self.cnf:  # every clause needs one of its features; an empty clause can never hold
            out = np.ones(n, dtype=bool)
            for clause in self.clauses:
                any_true = np.zeros(n, dtype=bool)
                for name in clause:
                    any_true |= column(name)
                out &= any_true
            return out
        out = np.zeros(n, dtype=bool)
        for clause in self.clauses:
            all_true = np.ones(n, dtype=bool)
            for name in clause:
                all_true &= column(name)
            out |= all_true
        return out

    def predict(self, X) -> np.ndarray:
        accepted = self.decision(X)
        return self.classes[np.where(accepted, self.describes, 1 - self.describes)]

    def predict_proba(self, X) -> np.ndarray:
        p = np.where(self.decision(X), self.rates[1], self.rates[0])  # of the described class
        return np.column_stack([p, 1.0 - p] if self.describes == 0 else [1.0 - p, p])

    @property
    def complexity(self) -> int:
        """The paper's complexity: number of clauses plus number of conditions."""
        return len(self.clauses) + sum(len(c) for c in self.clauses)

    def __str__(self) -> str:
        positive = _display_label(self.classes, self.describes)
        negative = _display_label(self.classes, 1 - self.describes)
        if not self.clauses:
            return f"predict {positive if self.cnf else negative}"
        inner, outer = (" OR ", "\n  AND ") if self.cnf else (" AND ", "\n  OR ")
        body = outer.join("(" + (inner.join(c) if c else ("false" if self.cnf else "true")) + ")" for c in self.clauses)
        return f"IF {body}\nTHEN predict {positive}\nELSE predict {negative}"

    def __repr__(self) -> str:
        return f"RuleSet({'CNF' if self.cnf else 'DNF'}, {len(self.clauses)} clauses, complexity {self.complexity})"

    def __eq__(self, other) -> bool:
        return (isinstance(other, RuleSet) and self.clauses == other.clauses and self.cnf == other.cnf
                and self.describes == other.describes
                and [_plain(c) for c in self.classes] == [_plain(c) for c in other.classes])

    def to_dict(self) -> dict:
        return {
            "format": RULESET_FORMAT,
            "version": FORMAT_VERSION,
            "classes": [_plain(c) for c in self.classes],
            "clauses": [list(c) for c in self.clauses],
            "cnf": self.cnf,
            "describes": self.describes,
            "rates": list(self.rates),
            "feature_names": self.feature_names,
            "binarizer": self.binarizer.to_dict() if self.binarizer is not None else None,
        }

    @classmethod
    def from_dict(cls, data: dict) -> "RuleSet":
        if data.get("format") != RULESET_FORMAT:
            raise ValueError(f"not a serialised RuleSet (format {data.get('format')!r})")
        binarizer = None
        if data.get("binarizer"):
            from .data.binarize import Binarizer

            binarizer = Binarizer.from_dict(data["binarizer"])
        return cls(data["clauses"], data["cnf"], data["rates"], data["classes"], binarizer, data.get("feature_names"),
                   data.get("describes", 1))


def load_model(text: str):
    """A model saved with ``to_json``: rule list, falling rule list or rule set."""
    data = json.loads(text)
    formats = {FORMAT: RuleList, FALLING_FORMAT: FallingRuleList, RULESET_FORMAT: RuleSet}
    if data.get("format") not in formats:
        raise ValueError(f"not a saved optrules model (format {data.get('format')!r})")
    return formats[data["format"]].from_dict(data)
