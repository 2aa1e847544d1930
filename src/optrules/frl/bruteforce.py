"""Exhaustive enumeration of falling (or softly falling) compatible lists: the test oracle."""

from __future__ import annotations

import numpy as np

from .objective import is_falling, objective


def brute_force(captures, y, w: float, C: float, C1: float = 0.0, soft: bool = False, max_length: int | None = None,
                sample_weight=None):
    """``(objective, prefix)`` of the best compatible list (falling unless ``soft``) over every ordered
    prefix of distinct antecedents, each closed by the else clause. Every list is evaluated (depth
    first, reusing the parent's uncaptured set); lists with a rule or else clause capturing nothing are
    not compatible, nor are their extensions. Ties go to the first found (shortest, then lexicographic).
    With ``sample_weight`` counts are weight sums, and "capturing nothing" means capturing no weight.
    """
    captures = np.asarray(captures, dtype=bool)
    positive = np.asarray(y).astype(bool)
    weight = np.ones(captures.shape[1]) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)

    def sums(mask):
        return float(weight[mask & positive].sum()), float(weight[mask & ~positive].sum())
    m = captures.shape[0]
    longest = m if max_length is None else min(max_length, m)
    best = (np.inf, ())

    def visit(prefix, rules, remaining):
        nonlocal best
        rest = sums(remaining)
        if sum(rest) == 0:
            return
        counts = rules + [rest]
        if soft or is_falling(counts):
            value = objective(counts, w, C, C1, soft)
            if value < best[0] - 1e-12 or (abs(value - best[0]) <= 1e-12 and len(prefix) < len(best[1])):
                best = (value, prefix)
        if len(prefix) == longest:
            return
        for a in range(m):
            if a in prefix:
                continue
            captured = captures[a] & remaining
            rule = sums(captured)
            if sum(rule) > 0:
                visit(prefix + (a,), rules + [rule], remaining & ~captured)

    visit((), [], np.ones(captures.shape[1], dtype=bool))
    return best
