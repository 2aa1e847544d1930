"""A fast heuristic incumbent (Algorithm 1's d^0): grow the list one best rule at a time."""

from __future__ import annotations

import numpy as np

from ..data.groups import signature_groups
from .prefix import rule_mistakes
from .problem import Problem


def greedy_prefix(problem: Problem, max_length: int | None = None) -> tuple[int, ...]:
    """Append the antecedent that most lowers mistakes/N + lambda*K until none does.

    A good incumbent only speeds pruning up; optimality never depends on it. Samples that every
    antecedent treats alike are merged first, so each step costs antecedents x groups x classes.
    """
    captures = problem.captures()
    first, group = signature_groups(captures)
    group_captures = captures[:, first]
    group_totals = np.zeros((first.shape[0], problem.n_classes))
    np.add.at(group_totals, group, problem.class_weights())

    uncaptured = np.ones(first.shape[0], dtype=bool)
    available = np.ones(problem.n_antecedents, dtype=bool)
    prefix: list[int] = []
    mistakes_so_far = 0.0
    current = float(rule_mistakes(group_totals.sum(axis=0)))
    limit = problem.n_antecedents if max_length is None else max_length
    while len(prefix) < limit and available.any():
        unc_totals = group_totals[uncaptured].sum(axis=0)
        cap_totals = group_captures[:, uncaptured].astype(np.float64) @ group_totals[uncaptured]
        value = (mistakes_so_far + rule_mistakes(cap_totals) + rule_mistakes(unc_totals - cap_totals)
                 + problem.lambda_n * (len(prefix) + 1))
        value = np.where(available & (cap_totals.sum(axis=1) > 0), value, np.inf)
        a = int(np.argmin(value))
        if not value[a] < current:
            break
        prefix.append(a)
        available[a] = False
        mistakes_so_far += float(rule_mistakes(cap_totals[a]))
        uncaptured &= ~group_captures[a]
        current = float(value[a])  # objective of the list so far, in mistake units
    return tuple(prefix)
