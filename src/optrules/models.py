"""Fitted models: prediction, readable text and JSON. No learning happens here.

What every family's model shares lives here (:class:`Model`, read as a decision list of :class:`Branch`
es; :class:`OrderedRules` for the lists); each family's own model class lives in its package
(``corels/model.py``, ``frl/model.py``, ``rulesets/model.py``) and names its file ``FORMAT``;
:func:`load_model` finds the class of a saved file through the family registry."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ._lazy import lazy_exports
from .escape import plain as _plain
from .escape import printable

FORMAT_VERSION = 1  # of every family's saved files


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


def display_label(classes: Sequence[Any], index: int) -> str:
    if [_plain(c) for c in classes] in ([0, 1], [False, True]):
        return ("no", "yes")[index]
    return printable(classes[index])


@dataclass(frozen=True)
class Branch:
    """One step of a model read as a decision list, the form every family shares: if every literal
    holds (feature ``name`` is ``truth``), this branch decides the row. The last branch of a model has
    no literals (the default).

    ``probabilities`` are per class; ``support`` is the number of training rows the branch decided and
    ``class_totals`` their (weighted) totals per class (None when the model does not know them).
    """

    literals: tuple[tuple[str, bool], ...]
    prediction: int
    probabilities: tuple[float, ...]
    text: str
    support: int | None = None
    class_totals: tuple[float, ...] | None = None


def condition_text(literals) -> str:
    return " and ".join(name if truth else f"not ({name})" for name, truth in literals) or "(otherwise)"


class Model:
    """What every fitted model offers: prediction, explanations, a table of its rules, JSON, SQL and
    Python exports and a notebook view, all derived from :meth:`branches` (the model read as a
    decision list). Subclasses give the branches, the text and the JSON fields.

    ``predict`` accepts a DataFrame of the original columns (when the model carries the ``binarizer``
    it was learnt with), a DataFrame whose columns are feature names, or a boolean matrix whose columns
    are ``feature_names``.
    """

    #: the "format" entry of the model's saved files (each family's model names its own)
    FORMAT: str = ""

    def __init__(self, classes: Sequence[Any], binarizer=None, feature_names: Sequence[str] | None = None):
        if len(classes) < 2:
            raise ValueError(f"a model needs at least two classes, got classes {list(classes)}")
        self.classes = np.asarray(classes)
        self.binarizer = binarizer
        if feature_names is None and binarizer is not None:
            feature_names = binarizer.feature_names_
        self.feature_names = list(feature_names) if feature_names is not None else None

    def branches(self) -> list[Branch]:  # pragma: no cover - every model defines it
        raise NotImplementedError

    def used_features(self) -> list[str]:
        """The features the model tests, sorted (the only ones prediction evaluates)."""
        return sorted({name for branch in self.branches() for name, _ in branch.literals})

    # -- prediction --------------------------------------------------------------------------------
    def _feature_frame(self, X):
        # pandas is imported on use: learning a model (the search core) does not need it
        import pandas as pd

        from .data.validation import as_frame

        used = self.used_features()
        if self.binarizer is not None:  # only the features the rules use: prediction on large tables
            return self.binarizer.transform_frame(X, used)
        if isinstance(X, pd.DataFrame):
            frame = as_frame(X)
            missing = sorted(set(used) - set(frame.columns))
            if missing:
                raise ValueError(f"columns {missing} used by the model are missing from the data")
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
        """Index (into :meth:`branches`) of the branch that decides each sample: the first whose
        literals all hold."""
        branches = self.branches()
        frame = self._feature_frame(X)
        fired = np.full(frame.shape[0], len(branches) - 1, dtype=np.int64)
        undecided = np.ones(frame.shape[0], dtype=bool)
        for k, branch in enumerate(branches[:-1]):
            captured = undecided.copy()
            for name, truth in branch.literals:
                captured &= frame[name].to_numpy(dtype=bool) == truth
            fired[captured] = k
            undecided &= ~captured
        return fired

    def predict(self, X) -> np.ndarray:
        predictions = np.array([branch.prediction for branch in self.branches()], dtype=np.int64)
        return self.classes[predictions[self.rule_index(X)]]

    def predict_proba(self, X) -> np.ndarray:
        """``P(classes[c])`` per sample and class, from the branch that decides it."""
        rates = np.array([branch.probabilities for branch in self.branches()], dtype=np.float64)
        return rates[self.rule_index(X)]

    # -- explanations and tables ---------------------------------------------------------------------
    def get_rules(self, prior: float | None = None, level: float = 0.95):
        """A DataFrame, one row per branch in order: its condition, prediction, ``probability`` of that
        prediction (the one ``predict_proba`` gives: for rule lists the share of the branch's training
        rows of that class, the same number as ``accuracy``; for rule sets that share over every row the set
        accepts, or rejects; for falling lists the fitted, falling one), training support and training
        accuracy (share of its rows of the predicted class, weighted), and the training totals per class.

        With ``prior`` (a Dirichlet prior of ``prior`` pseudo-rows per class: 1 is Laplace's rule, 0.5
        Jeffreys'), also the smoothed probability of the predicted class, ``(n_pred + prior) / (n + K
        prior)``, and its equal-tailed credible interval at ``level`` (``low``, ``high``; the posterior
        of one class is Beta(n_pred + prior, n - n_pred + (K - 1) prior)). Counts are weighted when the
        model was fitted with weights.
        """
        import pandas as pd

        rows = []
        for branch in self.branches():
            totals = branch.class_totals
            row = {"rule": branch.text, "prediction": _plain(self.classes[branch.prediction]),
                   "probability": branch.probabilities[branch.prediction],
                   "support": branch.support if branch.support is not None else pd.NA,
                   "accuracy": (totals[branch.prediction] / sum(totals)) if totals and sum(totals) > 0 else np.nan}
            if prior is not None:
                row.update(_smoothed(totals, branch.prediction, len(self.classes), prior, level))
            for c, label in enumerate(self.classes):
                row[f"n({label})"] = totals[c] if totals is not None else np.nan
            rows.append(row)
        return pd.DataFrame(rows)

    def explain(self, X, prior: float | None = None, level: float = 0.95):
        """For each row of ``X``: the branch that decided it (``rule``, its index in :meth:`get_rules`),
        its condition, the prediction, the probability of that prediction, and the branch's training
        support and accuracy; with ``prior``, the smoothed probability and its interval (see
        :meth:`get_rules`)."""
        import pandas as pd

        fired = self.rule_index(X)
        table = self.get_rules(prior, level)
        shown = ["rule", "prediction", "probability", "support", "accuracy"]
        shown += ["smoothed", "low", "high"] if prior is not None else []
        out = table.iloc[fired][shown]
        out = out.rename(columns={"rule": "condition"}).reset_index(drop=True)
        out.insert(0, "rule", fired)
        if isinstance(X, pd.DataFrame):
            out.index = X.index
        return out

    def _repr_html_(self) -> str:
        from .escape import html_text

        table = self.get_rules()
        shown = ["rule", "prediction", "probability", "support", "accuracy"]
        head = "".join(f"<th>{html_text(c)}</th>" for c in ["#"] + shown)
        body = []
        for k, row in table[shown].iterrows():
            cells = [str(k)] + [_html_cell(row[c]) for c in shown]
            body.append("<tr>" + "".join(f"<td>{html_text(c)}</td>" for c in cells) + "</tr>")
        return (f"<div><strong>{html_text(repr(self))}</strong><table><thead><tr>{head}</tr></thead>"
                f"<tbody>{''.join(body)}</tbody></table></div>")

    def plot(self, ax=None):
        """One bar per rule, in order: its training support, coloured by the class it predicts and
        labelled with its condition and the probability of that prediction. Returns the figure."""
        import matplotlib.pyplot as plt

        table = self.get_rules()
        if ax is None:
            fig, ax = plt.subplots(figsize=(8, 0.45 * len(table) + 1.2))
        else:
            fig = ax.figure
        colours = {label: plt.cm.tab10(k % 10) for k, label in enumerate(self.classes)}
        support = table["support"].astype(float).fillna(0.0).to_numpy()
        positions = np.arange(len(table))[::-1]
        ax.barh(positions, support, color=[colours[label] for label in table["prediction"]])
        ax.set_yticks(positions, [f"{k}: {text}" for k, text in enumerate(table["rule"])])
        for y, width, label, probability in zip(positions, support, table["prediction"], table["probability"]):
            ax.text(width, y, f" {label} ({probability:.2f})", va="center")
        ax.set_xlabel("training rows decided")
        ax.set_title(repr(self))
        fig.tight_layout()
        return fig

    # -- exports -------------------------------------------------------------------------------------
    def to_sql(self, table: str = "data", dialect: str = "sqlite") -> str:
        """A query over ``table`` (holding the columns the model uses, as in training) returning one row per
        input row, in order, with ``prediction``, ``rule`` (the branch index) and, for two classes,
        ``probability`` (of the second class); see :mod:`optrules.export`."""
        from .export import model_to_sql

        return model_to_sql(self, table, dialect)

    def to_python(self) -> str:
        """The source of a standalone module (standard library only) with ``predict(row)``,
        ``predict_proba(row)`` and ``explain(row)`` for a row given as a dict; see :mod:`optrules.export`."""
        from .export import model_to_python

        return model_to_python(self)

    # -- JSON ----------------------------------------------------------------------------------------
    def to_dict(self) -> dict:  # pragma: no cover - every model defines it
        raise NotImplementedError

    def to_json(self, **kwargs) -> str:
        return json.dumps(self.to_dict(), **kwargs)

    @classmethod
    def from_json(cls, text: str):
        return cls.from_dict(json.loads(text))

    def _common_dict(self) -> dict:
        return {"classes": [_plain(c) for c in self.classes], "feature_names": self.feature_names,
                "binarizer": self.binarizer.to_dict() if self.binarizer is not None else None}

    @staticmethod
    def _binarizer_from(data: dict):
        if not data.get("binarizer"):
            return None
        from .data.binarize import Binarizer

        return Binarizer.from_dict(data["binarizer"])

    def _same_classes(self, other) -> bool:
        return [_plain(c) for c in self.classes] == [_plain(c) for c in other.classes]


def _smoothed(totals, prediction: int, n_classes: int, prior: float, level: float) -> dict:
    """Posterior mean and equal-tailed credible interval of the predicted class's probability under
    a symmetric Dirichlet(prior) prior (see :meth:`Model.get_rules`)."""
    if not prior > 0 or not np.isfinite(prior):
        raise ValueError(f"prior must be a positive number of pseudo-rows per class, got {prior!r}")
    if not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1), got {level!r}")
    if totals is None:
        return {"smoothed": np.nan, "low": np.nan, "high": np.nan}
    from scipy.stats import beta

    hits, n = float(totals[prediction]), float(sum(totals))
    a, b = hits + prior, n - hits + (n_classes - 1) * prior
    low, high = beta.ppf([(1 - level) / 2, (1 + level) / 2], a, b)
    return {"smoothed": a / (a + b), "low": float(low), "high": float(high)}


def _html_cell(value) -> str:
    import pandas as pd

    if isinstance(value, float):
        return "" if np.isnan(value) else f"{value:.3f}"
    return "" if value is None or value is pd.NA else str(value)


def rule_dict(rule: Rule) -> dict:
    data = {"conditions": list(rule.conditions), "prediction": int(rule.prediction),
            "n_captured": int(rule.n_captured), "n_positive": int(rule.n_positive)}
    if rule.class_totals is not None:
        data["class_totals"] = [float(t) for t in rule.class_totals]
    return data


def _whole(value, what: str) -> int:
    """A whole number read from a file: not a float cut down, not a boolean, not an absurd count."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**62:
        raise ValueError(f"{what} must be a whole number from 0, got {printable(repr(value))[:40]}")
    return value


def rule_from(d: dict) -> Rule:
    totals = d.get("class_totals")
    if not isinstance(d["conditions"], list) or not all(isinstance(c, str) for c in d["conditions"]):
        raise ValueError(f"a rule's conditions must be a list of feature names, got {printable(repr(d['conditions']))[:80]}")
    if totals is not None and not all(isinstance(t, (int, float)) and math.isfinite(t) and t >= 0 for t in totals):
        raise ValueError("a rule's class totals must be finite non-negative numbers")
    return Rule(tuple(d["conditions"]), _whole(d["prediction"], "a rule's prediction"),
                _whole(d["n_captured"], "a rule's n_captured"), _whole(d["n_positive"], "a rule's n_positive"),
                tuple(float(t) for t in totals) if totals is not None else None)


def check_format(data: dict, expected: str, name: str) -> None:
    if data.get("format") != expected:
        raise ValueError(f"not a serialised {name} (format {data.get('format')!r})")
    if data.get("version", FORMAT_VERSION) != FORMAT_VERSION:
        raise ValueError(f"unsupported {name} format version {data.get('version')!r}")


class OrderedRules(Model):
    """What a rule list and a falling rule list share: ordered rules (conjunctions of features) and a
    default rule, each with its training counts."""

    def __init__(self, rules: Sequence[Rule], default: Rule, classes=(0, 1), binarizer=None, feature_names=None):
        if default.conditions:
            raise ValueError("the default rule has no conditions")
        super().__init__(classes, binarizer, feature_names)
        self.rules = list(rules)
        self.default = default

    def __len__(self) -> int:
        return len(self.rules)

    def _all_rules(self) -> list[Rule]:
        return self.rules + [self.default]

    def _branch(self, rule: Rule, prediction: int, probabilities) -> Branch:
        totals = rule.class_totals
        if totals is None and len(self.classes) == 2:
            totals = (float(rule.n_captured - rule.n_positive), float(rule.n_positive))
        return Branch(tuple((c, True) for c in rule.conditions), int(prediction),
                      tuple(float(p) for p in probabilities), condition_text((c, True) for c in rule.conditions),
                      int(rule.n_captured), totals)

    def _rules_dict(self) -> dict:
        return {"rules": [rule_dict(r) for r in self.rules], "default": rule_dict(self.default)}


class ModelFileError(ValueError):
    """A model file that cannot be used as it is: what is wrong, in one line."""


#: what reading a malformed model file may raise before :func:`check_loaded` can look at it
_MALFORMED = (KeyError, TypeError, ValueError, AttributeError, IndexError, OverflowError, RecursionError)


def load_model(text: str):
    """A model saved with ``to_json`` by any registered family (rule list, falling rule list, rule set). A file somebody edited
    or sent is checked whole before use (:func:`check_loaded`): :class:`ModelFileError` says what is
    wrong, in one line."""
    try:
        data = json.loads(text.removeprefix("\ufeff"))  # (a byte-order mark some editors write)
    except RecursionError:
        raise ModelFileError("not a saved optrules model (JSON nested too deep)") from None
    except ValueError as error:
        raise ModelFileError(f"not a saved optrules model (invalid JSON: {printable(error)[:200]})") from None
    from .families import families

    formats = {found.model.FORMAT: found.model for found in families().values()}
    if not isinstance(data, dict) or not isinstance(data.get("format"), str) or data["format"] not in formats:
        shown = printable(repr(data.get("format")))[:60] if isinstance(data, dict) else type(data).__name__
        raise ModelFileError(f"not a saved optrules model (format {shown})")
    try:
        model = formats[data["format"]].from_dict(data)
        check_loaded(model)
    except ModelFileError:
        raise
    except _MALFORMED as error:
        detail = f"missing entry {error}" if isinstance(error, KeyError) else f"{type(error).__name__}: {error}"
        raise ModelFileError(f"not a valid optrules model ({printable(detail)[:200]})") from None
    return model


def _plain_scalar(value) -> bool:
    return isinstance(value, (str, bool, int)) or (isinstance(value, float) and math.isfinite(value))


def check_loaded(model: Model) -> None:
    """What prediction and the exports take for granted, checked on a model read from a file: classes
    (two or more distinct plain values), each branch's class index, probabilities and count, each
    condition a feature of the model, and the binarizer's features (known kinds, numbers where a
    comparison needs them, columns it knows)."""
    classes = [_plain(c) for c in model.classes]
    if len(classes) < 2 or not all(_plain_scalar(c) for c in classes) or len(set(map(repr, classes))) < len(classes):
        raise ModelFileError(f"the classes must be two or more distinct numbers or texts, got {printable(repr(classes))[:100]}")
    known = set(model.binarizer.feature_names_ if model.binarizer is not None else model.feature_names or ())
    for k, branch in enumerate(model.branches()):
        if isinstance(branch.prediction, bool) or not isinstance(branch.prediction, (int, np.integer)) \
                or not 0 <= branch.prediction < len(classes):
            raise ModelFileError(f"rule {k} predicts class {printable(repr(branch.prediction))[:40]}; the model has "
                                 f"{len(classes)} classes (0 to {len(classes) - 1})")
        if not all(isinstance(p, (int, float)) and 0.0 <= p <= 1.0 for p in branch.probabilities):
            raise ModelFileError(f"rule {k} has probabilities outside [0, 1]: {printable(repr(branch.probabilities))[:100]}")
        if branch.support is not None and not (isinstance(branch.support, (int, np.integer)) and branch.support >= 0):
            raise ModelFileError(f"rule {k} has a training count that is not a count: {printable(repr(branch.support))[:60]}")
        unknown = [name for name, _ in branch.literals if not isinstance(name, str) or name not in known]
        if unknown:
            raise ModelFileError(f"rule {k} tests {printable(repr(unknown[0]))[:80]}, which is not a feature of the model")
    if model.binarizer is not None:
        from .data.binarize import check_loaded_features

        check_loaded_features(model.binarizer)


# each family's model class, where it was before the families owned them (``from optrules.models import RuleList``)
__getattr__ = lazy_exports(__name__, {
    "RuleList": "optrules.corels.model",
    "FallingRuleList": "optrules.frl.model",
    "RuleSet": "optrules.rulesets.model",
})
