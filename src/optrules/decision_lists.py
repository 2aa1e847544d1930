"""What an ordered list of rules does to the data: per-rule class totals, predictions, mistakes.

A list of rules captures each sample at its first rule that holds; the families that learn lists (the
certified rule lists of :mod:`optrules.corels`, the falling rule lists of :mod:`optrules.frl`) count the
same things about one, so it lives below both. Plain boolean arithmetic, independent of the searches'
packed kernels, so that it can check them. Labels are class indices ``0 .. C-1``; samples may carry
weights (cost-sensitive lists): a rule predicts the class of largest captured weight and its mistakes
are the captured weight of the other classes.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np


def class_weight_matrix(y, n_classes: int | None = None, sample_weight=None) -> np.ndarray:
    """``(N, C)`` matrix: sample i's weight (1 without ``sample_weight``) in the column of its class."""
    y = np.asarray(y).astype(np.int64)
    n_classes = int(y.max(initial=1)) + 1 if n_classes is None else int(n_classes)
    n_classes = max(n_classes, 2)
    weights = np.ones(y.shape[0]) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    matrix = np.zeros((y.shape[0], n_classes))
    matrix[np.arange(y.shape[0]), y] = weights
    return matrix


def majority(class_totals) -> int:
    """The class of largest weight among a rule's captured samples (ties: the smallest class index, so a
    binary tie predicts the negative class)."""
    return int(np.argmax(class_totals))


def rule_mistakes(class_totals) -> float:
    """Mistakes (weight of the other classes) of a rule that predicts the majority of what it captures."""
    class_totals = np.asarray(class_totals)
    return class_totals.sum(axis=-1) - class_totals.max(axis=-1)


def prefix_class_totals(captures: np.ndarray, class_weights: np.ndarray, prefix: Sequence[int]) -> np.ndarray:
    """``(K + 1, C)``: the class totals each rule captures in context, then the default rule's."""
    remaining = np.ones(captures.shape[1], dtype=bool)
    totals = []
    for a in prefix:
        captured = captures[a] & remaining
        totals.append(class_weights[captured].sum(axis=0))
        remaining &= ~captured
    totals.append(class_weights[remaining].sum(axis=0))
    return np.asarray(totals)


def prefix_counts(captures: np.ndarray, y: np.ndarray, prefix: Sequence[int]) -> list[tuple[int, int]]:
    """``(n_captured, n_positive)`` of each rule in context, then of the default rule (binary labels)."""
    totals = prefix_class_totals(captures, class_weight_matrix(np.asarray(y).astype(bool), 2), prefix)
    return [(int(round(t.sum())), int(round(t[1]))) for t in totals]


def prefix_mistakes(captures: np.ndarray, y: np.ndarray, prefix: Sequence[int], sample_weight=None,
                    n_classes: int | None = None):
    """Training mistakes (weighted, if ``sample_weight``) of the rule list that the prefix defines; an
    ``int`` for unweighted data."""
    totals = prefix_class_totals(captures, class_weight_matrix(y, n_classes, sample_weight), prefix)
    mistakes = float(rule_mistakes(totals).sum())
    return int(round(mistakes)) if sample_weight is None else mistakes
