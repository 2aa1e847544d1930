"""Every rule list with free labels, for the tests: the certified search's reference."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np

from .metrics import cell_totals, unfairness, within


def every_fair_list(captures, y, group, regularization: float, metric: str, eps: Fraction, sample_weight=None,
                    max_length: int | None = None):
    """``(objective, prefix, labels)`` of every list of distinct antecedents (up to ``max_length`` rules),
    each rule and the default labelled 0 or 1, that meets the constraint exactly; nothing pruned."""
    captures = np.asarray(captures, dtype=bool)
    y, group = np.asarray(y), np.asarray(group)
    weights = np.ones(y.shape[0]) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    total = float(weights.sum())
    longest = captures.shape[0] if max_length is None else min(max_length, captures.shape[0])
    for k in range(longest + 1):
        for prefix in itertools.permutations(range(captures.shape[0]), k):
            for labels in itertools.product((0, 1), repeat=k + 1):
                predicted = np.full(y.shape[0], bool(labels[-1]))
                left = np.ones(y.shape[0], dtype=bool)
                for a, label in zip(prefix, labels):
                    predicted[left & captures[a]] = bool(label)
                    left &= ~captures[a]
                if _fair(y, group, weights, sample_weight, predicted, metric, eps):
                    mistakes = float(weights[predicted != (y == 1)].sum())
                    yield mistakes / total + regularization * k, list(prefix), list(labels)


def best_fair_list(captures, y, group, regularization: float, metric: str, eps: Fraction, sample_weight=None,
                   max_length: int | None = None) -> float:
    """The smallest objective of a feasible list (exhaustive)."""
    return min(objective for objective, _, _ in every_fair_list(captures, y, group, regularization, metric, eps,
                                                                 sample_weight, max_length))


def _fair(y, group, weights, sample_weight, predicted, metric, eps) -> bool:
    """The constraint, in floats when far from ``eps``, exactly near it."""
    gap = unfairness(cell_totals(y[predicted], group[predicted], weights[predicted]), cell_totals(y, group, weights),
                     metric)
    if abs(gap - float(eps)) > 1e-9:
        return gap < float(eps)
    return within(y, group, sample_weight, predicted, metric, eps)
