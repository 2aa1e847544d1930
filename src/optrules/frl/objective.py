"""Falling rule lists (Chen and Rudin, AISTATS 2018): what a list costs.

A list is a prefix of antecedents followed by an else clause; each rule's probability is the empirical
positive rate of what it captures (a *compatible* list). With positive weight ``w``, threshold
tau* = 1/(1+w) is optimal for every compatible list (Thm 2.8), so a rule capturing ``p`` positives and
``q`` negatives costs min(q, w p) weighted mistakes:

    L(d) = (1/n) sum_j min(q_j, w p_j) + C |d|                       (falling lists, Program 2.9)
    Ltilde(d) = L(d) + C1 sum_j max(0, alpha_j - min_{k<j} alpha_k)   (softly falling, Program 5.1)

Counts are compared as integers wherever the paper divides.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..decision_lists import prefix_counts, rule_class_totals


def list_counts(captures, y, prefix: Sequence[int], sample_weight=None) -> list[tuple]:
    """``(positives, negatives)`` of each rule in context, then of the else clause: integers, or the
    weights' sums with ``sample_weight`` (every result below holds for weighted counts: the paper's
    proofs only add counts)."""
    if sample_weight is None:
        return [(p, n - p) for n, p in prefix_counts(captures, y, prefix)]
    totals = rule_class_totals(captures, np.asarray(y).astype(bool), prefix, 2, sample_weight)
    return [(float(t[1]), float(t[0])) for t in totals]


def is_compatible(counts) -> bool:
    """Every rule and the else clause capture something, so every probability is defined."""
    return all(p + q > 0 for p, q in counts)


def is_falling(counts) -> bool:
    """alpha_0 >= alpha_1 >= ... >= alpha_else, compared without division."""
    return all(
        p1 * (p2 + q2) >= p2 * (p1 + q1) for (p1, q1), (p2, q2) in zip(counts[:-1], counts[1:])
    )


def weighted_mistakes(counts, w: float) -> float:
    """n times the weighted risk at tau* = 1/(1+w) (Thm 2.8)."""
    return float(sum(min(q, w * p) for p, q in counts))


def soft_penalty(counts) -> float:
    """S(d) = sum_j max(0, alpha_j - min_{k<j} alpha_k), over the rules and the else clause."""
    penalty, running_min = 0.0, None
    for p, q in counts:
        alpha = p / (p + q)
        if running_min is not None:
            penalty += max(0.0, alpha - running_min)
            running_min = min(running_min, alpha)
        else:
            running_min = alpha
    return penalty


def objective(counts, w: float, C: float, C1: float = 0.0, soft: bool = False) -> float:
    """L(d), or Ltilde(d) when ``soft``; ``counts`` from :func:`list_counts` (else clause last)."""
    n = sum(p + q for p, q in counts)
    value = weighted_mistakes(counts, w) / n + C * (len(counts) - 1)
    if soft:
        value += C1 * soft_penalty(counts)
    return value


def falling_probabilities(counts) -> np.ndarray:
    """The probabilities a softly falling list reports: alpha_j replaced by min_{k<=j} alpha_k."""
    alphas = np.array([p / (p + q) for p, q in counts])
    return np.minimum.accumulate(alphas)


def falling_rule_list(captures, y, prefix, conditions, w: float, soft: bool, classes=(0, 1), binarizer=None,
                      feature_names=None, describes: int = 1, sample_weight=None):
    """The :class:`~optrules.models.FallingRuleList` of a prefix (probabilities = (weighted) positive
    rates, or their running minimum for a softly falling list; threshold 1/(1+w)). ``y`` is 1 for the
    positive class, which is ``classes[describes]``; rules keep their sample counts and weighted totals."""
    from ..models import Rule
    from .model import FallingRuleList

    counts = list_counts(captures, y, prefix, sample_weight)
    sizes = counts if sample_weight is None else list_counts(captures, y, prefix)
    probabilities = falling_probabilities(counts) if soft else [p / (p + q) for p, q in counts]
    threshold = 1.0 / (1.0 + w)

    def rule(names, weighted, size, prob):
        p, q = weighted
        totals = (float(q), float(p)) if describes == 1 else (float(p), float(q))  # in the order of classes
        return Rule(names, describes if prob > threshold else 1 - describes, size[0] + size[1], size[0], totals)

    rules = [rule(tuple(conditions[a]), c, size, prob)
             for a, c, size, prob in zip(prefix, counts, sizes, probabilities)]
    default = rule((), counts[-1], sizes[-1], probabilities[-1])
    return FallingRuleList(rules, default, probabilities, threshold, classes, binarizer, feature_names, describes)
