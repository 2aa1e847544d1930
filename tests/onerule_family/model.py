"""The fitted one-rule model: a list of one rule and a default, saved under its own format."""

from __future__ import annotations

from optrules.escape import printable
from optrules.models import FORMAT_VERSION, Branch, OrderedRules, check_format, display_label, rule_dict, rule_from


class OneRule(OrderedRules):
    FORMAT = "tests.OneRule"

    def branches(self) -> list[Branch]:
        n_classes = len(self.classes)
        return [self._branch(rule, rule.prediction, rule.class_frequencies(n_classes)) for rule in self._all_rules()]

    def __str__(self) -> str:
        default = self.default
        if not self.rules:  # (a fit stopped before it tried a feature)
            return f"always: {display_label(self.classes, default.prediction)}"
        rule = self.rules[0]
        return (f"when {' and '.join(map(printable, rule.conditions))}: {display_label(self.classes, rule.prediction)}; "
                f"otherwise: {display_label(self.classes, default.prediction)}")

    def to_dict(self) -> dict:
        return {"format": self.FORMAT, "version": FORMAT_VERSION, "rule": rule_dict(self.rules[0]) if self.rules else None,
                "default": rule_dict(self.default), **self._common_dict()}

    @classmethod
    def from_dict(cls, data: dict) -> "OneRule":
        check_format(data, cls.FORMAT, "OneRule")
        rules = [rule_from(data["rule"])] if data["rule"] else []
        return cls(rules, rule_from(data["default"]), data["classes"], cls._binarizer_from(data),
                   data.get("feature_names"))
