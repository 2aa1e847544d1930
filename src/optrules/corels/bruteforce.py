"""Exhaustive search over every prefix up to a length: the oracle the branch-and-bound is tested against."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .prefix import objective, rule_mistakes


@dataclass(frozen=True)
class BruteForceResult:
    objective: float
    mistakes: int
    prefix: tuple[int, ...]


def brute_force(captures, y, regularization: float, max_length: int | None = None) -> BruteForceResult:
    """Minimum of mistakes/N + lambda*K over all ordered prefixes of distinct antecedents.

    ``captures`` is a boolean ``(n_antecedents, n_samples)`` matrix. With ``max_length=None`` every
    length up to the number of antecedents is tried, so the result is the true optimum. Every prefix is
    evaluated (depth-first, reusing the parent's uncaptured set), none is pruned. Among equal objectives
    the shortest, then lexicographically smallest prefix is returned.
    """
    captures = np.asarray(captures, dtype=bool)
    positive = np.asarray(y).astype(bool)
    n_antecedents, n_samples = captures.shape
    longest = n_antecedents if max_length is None else min(int(max_length), n_antecedents)
    found: list[tuple[float, int, int, tuple[int, ...]]] = []

    def visit(prefix: tuple[int, ...], remaining: np.ndarray, mistakes_so_far: int) -> None:
        n_rest, pos_rest = int(remaining.sum()), int((remaining & positive).sum())
        mistakes = mistakes_so_far + rule_mistakes(n_rest, pos_rest)
        value = objective(mistakes, len(prefix), n_samples, regularization)
        found.append((round(value, 12), len(prefix), mistakes, prefix))
        if len(prefix) == longest:
            return
        for a in range(n_antecedents):
            if a in prefix:
                continue
            captured = captures[a] & remaining
            n_cap, pos_cap = int(captured.sum()), int((captured & positive).sum())
            visit(prefix + (a,), remaining & ~captured, mistakes_so_far + rule_mistakes(n_cap, pos_cap))

    visit((), np.ones(n_samples, dtype=bool), 0)
    value, _, mistakes, prefix = min(found)
    return BruteForceResult(objective(mistakes, len(prefix), n_samples, regularization), mistakes, prefix)
