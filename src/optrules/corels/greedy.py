"""A fast heuristic incumbent (Algorithm 1's d^0): grow the list one best rule at a time."""

from __future__ import annotations

import numpy as np

from ..data import bitset
from .problem import Problem


def greedy_prefix(problem: Problem, max_length: int | None = None) -> tuple[int, ...]:
    """Append the antecedent that most lowers mistakes/N + lambda*K until none does.

    A good incumbent only speeds pruning up; optimality never depends on it.
    """
    n = problem.n_samples
    positives = bitset.pack(problem.y.astype(bool))
    uncaptured = bitset.ones(n)
    prefix: list[int] = []
    available = np.ones(problem.n_antecedents, dtype=bool)
    mistakes_so_far = 0
    n_unc, pos_unc = n, int(problem.y.sum())
    current = min(pos_unc, n_unc - pos_unc)
    limit = problem.n_antecedents if max_length is None else max_length
    while len(prefix) < limit and available.any():
        captured = bitset.and_(problem.bits, uncaptured)
        n_cap = bitset.popcount(captured)
        n_pos = bitset.popcount(bitset.and_(captured, positives))
        n_rest, pos_rest = n_unc - n_cap, pos_unc - n_pos
        value = (mistakes_so_far + np.minimum(n_pos, n_cap - n_pos) + np.minimum(pos_rest, n_rest - pos_rest)
                 + problem.lambda_n * (len(prefix) + 1))
        value = np.where(available & (n_cap > 0), value, np.inf)
        a = int(np.argmin(value))
        if not value[a] < current:
            break
        prefix.append(a)
        available[a] = False
        mistakes_so_far += int(min(n_pos[a], n_cap[a] - n_pos[a]))
        uncaptured = bitset.andnot(uncaptured[None, :], problem.bits[a])[0]
        n_unc, pos_unc = int(n_rest[a]), int(pos_rest[a])
        current = float(value[a])  # objective of the list so far, in mistake units
    return tuple(prefix)
