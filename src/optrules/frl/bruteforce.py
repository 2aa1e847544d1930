"""Exhaustive enumeration of falling (or softly falling) compatible lists: the test oracle."""

from __future__ import annotations

import numpy as np

from .objective import is_falling, objective


def brute_force(captures, y, w: float, C: float, C1: float = 0.0, soft: bool = False, max_length: int | None = None):
    """``(objective, prefix)`` of the best compatible list (falling unless ``soft``) over every ordered
    prefix of distinct antecedents, each closed by the else clause. Every list is evaluated (depth
    first, reusing the parent's uncaptured set); lists with a rule or else clause capturing nothing are
    not compatible, nor are their extensions. Ties go to the first found (shortest, then lexicographic).
    """
    captures = np.asarray(captures, dtype=bool)
    positive = np.asarray(y).astype(bool)
    m = captures.shape[0]
    longest = m if max_length is None else min(max_length, m)
    best = (np.inf, ())

    def visit(prefix, rules, remaining):
        nonlocal best
        rest = (int((remaining & positive).sum()), int((remaining & ~positive).sum()))
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
            if captured.any():
                rule = (int((captured & positive).sum()), int((captured & ~positive).sum()))
                visit(prefix + (a,), rules + [rule], remaining & ~captured)

    visit((), [], np.ones(captures.shape[1], dtype=bool))
    return best
