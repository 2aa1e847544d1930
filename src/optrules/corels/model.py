"""A fitted rule list: ordered if / else-if rules, each predicting its majority class."""

from __future__ import annotations

from typing import Any, Sequence

from ..escape import printable
from ..models import FORMAT_VERSION, Branch, OrderedRules, Rule, check_format, display_label, rule_from


class RuleList(OrderedRules):
    """An ordered if / else-if list of rules and a default rule (``default`` has no conditions); each
    rule predicts its (weighted) majority class, and reports its training class frequencies as
    probabilities."""

    FORMAT = "optrules.RuleList"  # the "format" of its saved files (load_model reads it)

    def __init__(
        self,
        rules: Sequence[Rule],
        default: Rule,
        classes: Sequence[Any] = (0, 1),
        binarizer=None,
        feature_names: Sequence[str] | None = None,
    ):
        if len(classes) < 2:
            raise ValueError(f"a rule list needs at least two classes, got classes {list(classes)}")
        if len(classes) > 2 and any(r.class_totals is None for r in [*rules, default]):
            raise ValueError("a multi-class rule list needs the class totals of every rule")
        super().__init__(rules, default, classes, binarizer, feature_names)

    def branches(self) -> list[Branch]:
        n_classes = len(self.classes)
        return [self._branch(rule, rule.prediction, rule.class_frequencies(n_classes)) for rule in self._all_rules()]

    # -- text ----------------------------------------------------------------------------------------
    def __str__(self) -> str:
        lines = []
        for k, rule in enumerate(self.rules):
            keyword = "if" if k == 0 else "else if"
            condition = " and ".join(f"({printable(c)})" for c in rule.conditions)
            lines.append(f"{keyword} {condition} then predict {display_label(self.classes, rule.prediction)}")
        prefix = "else " if self.rules else ""
        lines.append(f"{prefix}predict {display_label(self.classes, self.default.prediction)}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"RuleList({len(self.rules)} rules + default)"

    def __eq__(self, other) -> bool:
        return (isinstance(other, RuleList) and self.rules == other.rules and self.default == other.default
                and self._same_classes(other))

    # -- JSON ----------------------------------------------------------------------------------------
    def to_dict(self) -> dict:
        return {"format": self.FORMAT, "version": FORMAT_VERSION, **self._rules_dict(), **self._common_dict()}

    @classmethod
    def from_dict(cls, data: dict) -> "RuleList":
        check_format(data, cls.FORMAT, "RuleList")
        return cls([rule_from(r) for r in data["rules"]], rule_from(data["default"]), classes=data["classes"],
                   binarizer=cls._binarizer_from(data), feature_names=data.get("feature_names"))
