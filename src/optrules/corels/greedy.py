"""A fast heuristic incumbent (Algorithm 1's d^0): grow the list one best rule at a time."""

from __future__ import annotations

import time

import numpy as np

from ..data import bitset
from ..data.groups import grouping_bytes
from .prefix import rule_mistakes
from .problem import Problem

#: working memory of one step: antecedents are scored in blocks of about this many bytes
_BLOCK_BYTES = 32 << 20


def greedy_prefix(problem: Problem, max_length: int | None = None, budget=None) -> tuple[int, ...]:
    """Append the antecedent that most lowers mistakes/N + lambda*K until none does.

    A good incumbent only speeds pruning up; optimality never depends on it. Samples that every
    antecedent treats alike are merged first, so each step costs antecedents x groups x classes,
    scored in blocks of antecedents (memory stays small with many antecedents). With a ``budget``, the
    warm start takes at most a tenth of the time left and stops with the list it has.
    """
    deadline = None
    if budget is not None and budget.stopped():
        return ()
    if budget is not None and budget.remaining() is not None:
        deadline = budget.deadline - 0.9 * budget.remaining()
    # the groups' vectors (at most the antecedents'), a block being scored, the scores
    m, n = problem.n_antecedents, problem.n_samples
    need = (grouping_bytes(problem.bits, n) + min(10 * m * n, _BLOCK_BYTES * 5 // 4)
            + 16 * m * problem.n_classes)
    if budget is None:
        return _greedy(problem, max_length, budget, deadline)
    if not budget.fits(need, replacing=WARM_START):
        return ()  # the search goes on without it: a warm start only speeds pruning up
    budget.charge(WARM_START, need)
    try:
        return _greedy(problem, max_length, budget, deadline)
    finally:
        budget.release(WARM_START)


#: the budget's name for the warm start's memory
WARM_START = "warm start"


def _greedy(problem: Problem, max_length, budget, deadline) -> tuple[int, ...]:
    first, group, group_bits = problem.signatures()
    n_groups = first.shape[0]
    group_totals = np.zeros((first.shape[0], problem.n_classes))
    np.add.at(group_totals, group, problem.class_weights())

    uncaptured = np.ones(first.shape[0], dtype=bool)
    available = np.ones(problem.n_antecedents, dtype=bool)
    prefix: list[int] = []
    mistakes_so_far = 0.0
    current = float(rule_mistakes(group_totals.sum(axis=0)))
    limit = problem.n_antecedents if max_length is None else max_length
    block = max(1, _BLOCK_BYTES // (8 * max(1, first.shape[0])))
    while len(prefix) < limit and available.any():
        if budget is not None and (budget.stopped() or (deadline is not None and time.perf_counter() >= deadline)):
            break
        unc_totals = group_totals[uncaptured].sum(axis=0)
        live_totals = group_totals[uncaptured]
        cap_totals = np.vstack([bitset.unpack(group_bits[i:i + block], n_groups)[:, uncaptured].astype(np.float64)
                                @ live_totals
                                for i in range(0, problem.n_antecedents, block)])
        value = (mistakes_so_far + rule_mistakes(cap_totals) + rule_mistakes(unc_totals - cap_totals)
                 + problem.lambda_n * (len(prefix) + 1))
        value = np.where(available & (cap_totals.sum(axis=1) > 0), value, np.inf)
        a = int(np.argmin(value))
        if not value[a] < current:
            break
        prefix.append(a)
        available[a] = False
        mistakes_so_far += float(rule_mistakes(cap_totals[a]))
        uncaptured &= ~bitset.unpack(group_bits[a], n_groups)
        current = float(value[a])  # objective of the list so far, in mistake units
    return tuple(prefix)
