"""A prefix of antecedents as a rule list: the CORELS objective and the fitted list.

The counting itself (class totals, predictions, mistakes of any list of rules) is shared with the
falling rule lists and lives in :mod:`optrules.decision_lists`; its names are importable from here too.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..decision_lists import class_weight_matrix, majority, prefix_counts, prefix_mistakes, rule_class_totals, rule_mistakes  # noqa: F401 (the counting, importable from here too)


def objective(mistakes: float, n_rules: int, total_weight: float, regularization: float) -> float:
    """The CORELS objective R(d) = mistakes/N + lambda*K (N: the total sample weight)."""
    return mistakes / total_weight + regularization * n_rules


def rule_list_from_prefix(
    captures: np.ndarray,
    y: np.ndarray,
    prefix: Sequence[int],
    conditions: Sequence[tuple[str, ...]],
    classes=(0, 1),
    binarizer=None,
    feature_names=None,
    sample_weight=None,
    labels=None,
):
    """The rule list of a prefix: each rule predicts the (weighted) majority of what it captures in
    context, or ``labels[k]`` (class indices: each rule's, then the default's) when given (a constrained
    list's); rules keep their sample counts and, for weighted or multi-class data, their class totals."""
    from ..models import Rule
    from .model import RuleList  # imported here: the search core does not need pandas

    n_classes = len(classes)
    sizes = rule_class_totals(captures, y, prefix, n_classes)
    totals = sizes if sample_weight is None else rule_class_totals(captures, y, prefix, n_classes, sample_weight)
    plain = n_classes == 2 and sample_weight is None

    def rule(conds, total, size, label=None):
        class_totals = None if plain else tuple(float(t) for t in total)
        n_positive = int(round(size[1])) if n_classes == 2 else 0
        predicted = majority(total) if label is None else int(label)
        return Rule(tuple(conds), predicted, int(round(size.sum())), n_positive, class_totals)

    labels = [None] * (len(prefix) + 1) if labels is None else list(labels)
    rules = [rule(conditions[a], t, s, label) for a, t, s, label in zip(prefix, totals, sizes, labels)]
    return RuleList(rules, rule((), totals[-1], sizes[-1], labels[-1]), classes, binarizer, feature_names)
