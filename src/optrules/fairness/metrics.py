"""Group fairness metrics of a binary classifier on its training rows, compared exactly.

Rows fall in four cells, (sensitive group g in {0, 1}) x (true label y in {0, 1}); a classifier's
predictions enter every metric only through the weight it predicts positive in each cell, ``positive[g, y]``,
against the cell's whole weight ``total[g, y]``. Each metric is the absolute difference between the two
groups of a rate:

* ``statistical_parity``: predicted positives among all of the group's rows;
* ``equal_opportunity``: predicted positives among its positives (true-positive rate);
* ``predictive_equality``: predicted positives among its negatives (false-positive rate);
* ``equalized_odds``: the larger of the last two.

A constraint ``unfairness <= eps`` is decided in exact rational arithmetic (:func:`within`), never in
floating point: weights are taken at their exact binary values, ``eps`` at its decimal value (0.05 is 1/20).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..parameters import FAIRNESS_METRICS

METRICS = FAIRNESS_METRICS  # (declared with the parameters, which the front ends read without this package)

#: the cells (true labels) each metric's rates read: a rate is positive[g, labels].sum() / total[g, labels].sum()
RATES = {"statistical_parity": ((0, 1),), "equal_opportunity": ((1,),), "predictive_equality": ((0,),),
         "equalized_odds": ((1,), (0,))}


def check_metric(metric: str) -> str:
    if metric not in METRICS:
        raise ValueError(f"unknown fairness metric {metric!r}: one of {', '.join(METRICS)}")
    return metric


def check_max_unfairness(eps) -> Fraction:
    """``eps`` as an exact fraction (its decimal value: 0.05 is 1/20), or a clear error outside [0, 1]."""
    try:
        value = float(eps)
    except (TypeError, ValueError):
        raise ValueError(f"max_unfairness must be a number in [0, 1], got {eps!r}") from None
    if not (0.0 <= value <= 1.0):
        raise ValueError(f"max_unfairness must be in [0, 1] (a difference of two rates), got {eps!r}")
    return Fraction(repr(value))


def check_sensitive(sensitive, n_samples: int) -> tuple[np.ndarray, tuple]:
    """Group indices 0/1 of the rows and the two group labels (sorted), or a clear error: a length that is
    not the rows', missing values, one group, more than two."""
    values = np.asarray(sensitive, dtype=object).ravel()
    if values.shape[0] != n_samples:
        raise ValueError(f"sensitive has {values.shape[0]} values for {n_samples} rows")
    missing = [v is None or (isinstance(v, float) and np.isnan(v)) for v in values]
    if any(missing):
        raise ValueError(f"sensitive has {sum(missing)} missing values: every row needs its group")
    labels = sorted(set(values.tolist()), key=lambda v: (str(type(v)), v))
    if len(labels) != 2:
        raise ValueError(f"sensitive must hold exactly two groups, got {len(labels)}: "
                         f"{labels[:5]}{' ...' if len(labels) > 5 else ''}")
    return (values == labels[1]).astype(np.int8), tuple(labels)


def cell_totals(y: np.ndarray, group: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``total[g, y]``: the weight of each cell (floats)."""
    total = np.zeros((2, 2))
    np.add.at(total, (group, y), weights)
    return total


def rate_gaps(positive: np.ndarray, total: np.ndarray, metric: str) -> list[tuple[float, float]]:
    """For each rate the metric reads, the two groups' rates (a group with no weight in the cells: rate 0)."""
    gaps = []
    for labels in RATES[metric]:
        cells = list(labels)
        rates = [float(positive[g, cells].sum()) / float(total[g, cells].sum()) if total[g, cells].sum() > 0 else 0.0
                 for g in (0, 1)]
        gaps.append((rates[0], rates[1]))
    return gaps


def unfairness(positive: np.ndarray, total: np.ndarray, metric: str) -> float:
    """The metric of a classifier predicting ``positive[g, y]`` of each cell (floats: for reports)."""
    return max(abs(a - b) for a, b in rate_gaps(positive, total, metric))


def exact_cells(y: np.ndarray, group: np.ndarray, weights: np.ndarray | None, predicted: np.ndarray):
    """``(positive, total)``: 2 x 2 nested lists of exact Fractions (weights at their binary values)."""
    positive = [[Fraction(0), Fraction(0)], [Fraction(0), Fraction(0)]]
    total = [[Fraction(0), Fraction(0)], [Fraction(0), Fraction(0)]]
    for g in (0, 1):
        for label in (0, 1):
            rows = (group == g) & (y == label)
            if weights is None:
                total[g][label] = Fraction(int(rows.sum()))
                positive[g][label] = Fraction(int((rows & predicted).sum()))
            else:
                total[g][label] = sum((Fraction(float(w)) for w in weights[rows]), Fraction(0))
                positive[g][label] = sum((Fraction(float(w)) for w in weights[rows & predicted]), Fraction(0))
    return positive, total


def exact_unfairness(y, group, weights, predicted, metric: str) -> Fraction:
    """The metric of the predictions ``predicted`` (bool per row), exactly."""
    positive, total = exact_cells(np.asarray(y), np.asarray(group), weights, np.asarray(predicted, dtype=bool))
    worst = Fraction(0)
    for labels in RATES[metric]:
        rates = []
        for g in (0, 1):
            whole = sum((total[g][label] for label in labels), Fraction(0))
            part = sum((positive[g][label] for label in labels), Fraction(0))
            rates.append(part / whole if whole else Fraction(0))
        worst = max(worst, abs(rates[0] - rates[1]))
    return worst


def within(y, group, weights, predicted, metric: str, eps: Fraction) -> bool:
    """Whether the predictions meet ``unfairness <= eps``, decided exactly."""
    return exact_unfairness(y, group, weights, predicted, metric) <= eps
