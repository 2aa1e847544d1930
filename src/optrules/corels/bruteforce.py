"""Exhaustive search over every prefix up to a length: the oracle the branch-and-bound is tested against."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from .prefix import objective, prefix_mistakes


@dataclass(frozen=True)
class BruteForceResult:
    objective: float
    mistakes: int
    prefix: tuple[int, ...]


def brute_force(captures, y, regularization: float, max_length: int | None = None) -> BruteForceResult:
    """Minimum of mistakes/N + lambda*K over all ordered prefixes of distinct antecedents.

    ``captures`` is a boolean ``(n_antecedents, n_samples)`` matrix. With ``max_length=None`` every
    length up to the number of antecedents is tried, so the result is the true optimum. Among equal
    objectives the first found (shortest, then lexicographically smallest) is returned.
    """
    captures = np.asarray(captures, dtype=bool)
    y = np.asarray(y)
    n_antecedents, n_samples = captures.shape
    longest = n_antecedents if max_length is None else min(int(max_length), n_antecedents)
    best = None
    for length in range(longest + 1):
        for prefix in itertools.permutations(range(n_antecedents), length):
            mistakes = prefix_mistakes(captures, y, prefix)
            value = objective(mistakes, length, n_samples, regularization)
            if best is None or value < best.objective - 1e-12:
                best = BruteForceResult(value, mistakes, prefix)
    return best
