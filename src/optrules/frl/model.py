"""A fitted falling rule list: rules whose positive probabilities never increase down the list."""

from __future__ import annotations

import numpy as np

from ..escape import printable
from ..models import FORMAT_VERSION, Branch, OrderedRules, check_format, rule_from


class FallingRuleList(OrderedRules):
    """A falling rule list: each rule reports a probability of the positive class, and the
    probabilities never increase down the list (the else clause included).

    ``probabilities`` are the rules' empirical positive rates (for a softly falling list, their running
    minimum, so that the list reported is falling); a sample is predicted positive when the probability
    of its rule exceeds ``threshold`` = 1/(1+w). The positive class is ``classes[describes]`` (by
    default the second); rules count its rows as ``n_positive``.
    """

    FORMAT = "optrules.FallingRuleList"  # the "format" of its saved files (load_model reads it)

    def __init__(self, rules, default, probabilities, threshold: float, classes=(0, 1), binarizer=None,
                 feature_names=None, describes: int = 1):
        if describes not in (0, 1):
            raise ValueError(f"describes must be 0 or 1 (an index into classes), got {describes!r}")
        super().__init__(rules, default, classes, binarizer, feature_names)
        self.describes = int(describes)
        probabilities = [float(p) for p in probabilities]
        if len(probabilities) != len(self.rules) + 1:
            raise ValueError(f"{len(probabilities)} probabilities for {len(self.rules)} rules and the else clause")
        if any(b > a + 1e-12 for a, b in zip(probabilities[:-1], probabilities[1:])):
            raise ValueError(f"probabilities must not increase down the list, got {probabilities}")
        self.probabilities = probabilities
        self.threshold = float(threshold)

    def branches(self) -> list[Branch]:
        positive, negative = self.describes, 1 - self.describes
        return [self._branch(rule, positive if p > self.threshold else negative,
                             (1.0 - p, p) if positive == 1 else (p, 1.0 - p))
                for rule, p in zip(self._all_rules(), self.probabilities)]

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
            if k == len(self.rules):  # the else clause (a list of no rule: its probability alone)
                head = "else " if self.rules else ""
            else:
                head = ("if " if k == 0 else "else if ") + " and ".join(f"({printable(c)})" for c in self.rules[k].conditions) + " then "
            lines.append(
                f"{head}probability {row['probability']:.3f}"
                f"  ({row['positives']} positives, {row['negatives']} negatives)"
            )
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"FallingRuleList({len(self.rules)} rules + else, threshold {self.threshold:.3f})"

    def __eq__(self, other) -> bool:
        return (isinstance(other, FallingRuleList) and self.rules == other.rules and self.default == other.default
                and self._same_classes(other) and np.allclose(self.probabilities, other.probabilities)
                and self.threshold == other.threshold and self.describes == other.describes)

    def to_dict(self) -> dict:
        return {"format": self.FORMAT, "version": FORMAT_VERSION, **self._rules_dict(),
                "probabilities": list(self.probabilities), "threshold": self.threshold, "describes": self.describes,
                **self._common_dict()}

    @classmethod
    def from_dict(cls, data: dict) -> "FallingRuleList":
        check_format(data, cls.FORMAT, "FallingRuleList")
        return cls([rule_from(r) for r in data["rules"]], rule_from(data["default"]), data["probabilities"],
                   data["threshold"], data["classes"], cls._binarizer_from(data), data.get("feature_names"),
                   data.get("describes", 1))
