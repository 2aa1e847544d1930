"""The paper's Monte-Carlo searches (supplement, Algorithms FRL and softFRL).

Each of ``iterations`` rounds grows one list from the empty prefix: at every step the antecedents that
keep the list feasible and whose prefix bound can still beat the best list so far are candidates, one
is drawn with probability proportional to its curiosity (Eq 11, or Eq 12 for softFRL), and the round
ends with probability ``prob_terminate`` per step, when no candidate is left, or when the stopping
condition says the else clause is the best completion. Unlike the authors' code, feasibility is tested
on the *new* rule's probability (Prop 4.2), so every list returned is falling.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import cache

import numpy as np

from ..data import bitset
from .bounds import equation9_else_is_best
from .kernel import class_counts_within, counts_within, score_children
from .search import FRLProblem


@dataclass
class MonteCarloResult:
    prefix: tuple[int, ...]
    objective: float
    iterations: int
    best_iteration: int
    total_time: float


class _SampleCounts:
    """Positives and negatives each antecedent captures among the samples left (bit counts)."""

    def __init__(self, problem: FRLProblem):
        positive = problem.y.astype(bool)
        self.bits = problem.bits
        self.all = bitset.pack(positive), bitset.pack(~positive)
        m = problem.n_antecedents
        self.cp, self.cq = np.empty(m, np.int64), np.empty(m, np.int64)

    def everything(self):
        return self.all

    def counts(self, rest):
        counts_within(self.bits, rest[0], rest[1], self.cp, self.cq)
        return self.cp, self.cq

    def without(self, rest, a: int):
        return tuple(bitset.andnot(part[None, :], self.bits[a])[0] for part in rest)

    def left(self, rest, rest_p, rest_q):
        """What ``rest`` holds: counts subtract exactly."""
        return rest_p, rest_q


class _WeightCounts:
    """The same with sample weights: weight sums over groups of samples alike in every antecedent."""

    def __init__(self, problem: FRLProblem):
        from ..data.groups import group_samples
        from ..decision_lists import class_weight_matrix

        weights = class_weight_matrix(problem.y, 2, problem.sample_weight)
        self.groups = group_samples(problem.bits, problem.y, None, "auto", weights)
        m = problem.n_antecedents
        self.cp, self.cq = np.empty(m), np.empty(m)

    def everything(self):
        return self.groups.all_ones.copy()

    def counts(self, rest):
        class_counts_within(self.groups.bits, rest, self.groups.class_weights, self.groups.minority_weights,
                            self.cp, self.cq)
        return self.cp, self.cq

    def without(self, rest, a: int):
        return bitset.andnot(rest[None, :], self.groups.bits[a])[0]

    def left(self, rest, rest_p, rest_q):
        """What ``rest`` holds, summed afresh: weight sums do not subtract exactly, and an else clause
        left with 1e-16 of weight would pass for one that captures something."""
        n_groups = len(self.groups.sizes)
        held = self.groups.class_weights[:n_groups][bitset.unpack(rest[None, :], n_groups)[0]].sum(axis=0)
        return float(held[1]), float(held[0])


def _check(iterations, prob_terminate, curiosity_weight):
    if int(iterations) < 1:
        raise ValueError(f"iterations must be >= 1, got {iterations}")
    if not 0.0 <= prob_terminate < 1.0:
        raise ValueError(f"prob_terminate must lie in [0, 1), got {prob_terminate}")
    if not 0.0 <= curiosity_weight <= 1.0:
        raise ValueError(f"curiosity_weight must lie in [0, 1], got {curiosity_weight}")


def montecarlo_search(
    problem: FRLProblem,
    soft: bool = False,
    iterations: int = 3000,
    prob_terminate: float = 0.01,
    curiosity_weight: float = 0.8,
    random_state=None,
    time_limit: float | None = None,
    budget=None,
) -> MonteCarloResult:
    """Best list found by the paper's randomized search (no optimality certificate); stops after
    ``time_limit`` seconds (at least one round done) or when the fit's ``budget`` says so."""
    _check(iterations, prob_terminate, curiosity_weight)
    rng = np.random.default_rng(random_state)
    n, m = problem.total_weight, problem.n_antecedents
    w, c_n, c1_n = float(problem.w), problem.C * n, problem.C1 * n
    counter = _SampleCounts(problem) if problem.sample_weight is None else _WeightCounts(problem)
    total_pos, total_neg = problem.class_totals()
    child_value, bound, curiosity = np.empty(m), np.empty(m), np.empty(m)
    best_value, best_prefix, best_iteration = min(w * total_pos, float(total_neg)), (), 0
    start = time.perf_counter()
    done = 0
    for t in range(int(iterations)):
        if (done and time_limit is not None and time.perf_counter() - start >= time_limit) or (
                budget is not None and budget.stopped()):
            break
        done += 1
        rest = counter.everything()
        rest_p, rest_q = total_pos, total_neg
        ref_p, ref_count = 1, 1  # alpha_last (falling) or the running minimum (soft); alpha_{-1} = 1
        value = 0.0
        prefix: list[int] = []
        available = np.ones(m, dtype=bool)
        while True:
            if not soft and equation9_else_is_best(ref_p, ref_count, rest_p, rest_q, w, c_n):
                break
            if rng.random() < prob_terminate:
                break
            cp, cq = counter.counts(rest)
            score_children(cp, cq, available, rest_p, rest_q, value, ref_p, ref_count, w, c_n, c1_n, soft,
                           curiosity_weight, best_value, child_value, bound, curiosity)
            candidates = np.flatnonzero(np.isfinite(bound))
            if candidates.size == 0:
                break
            weights = curiosity[candidates]
            if weights.sum() > 0:
                r = int(rng.choice(candidates, p=weights / weights.sum()))
            else:
                r = int(rng.choice(candidates))
            prefix.append(r)
            available[r] = False
            value = float(child_value[r])
            rest = counter.without(rest, r)
            p, count = cp[r], cp[r] + cq[r]
            rest_p, rest_q = counter.left(rest, rest_p - p, rest_q - (count - p))
            if soft:
                if p * ref_count < ref_p * count:
                    ref_p, ref_count = p, count
                complete = (value + min(w * rest_p, float(rest_q))
                            + c1_n * max(0.0, rest_p / (rest_p + rest_q) - ref_p / ref_count))
                if bound[r] >= complete:  # Ltilde*(e) = Ltilde(ebar): the else clause is the best completion
                    break
            else:
                ref_p, ref_count = p, count
        total = problem.objective(tuple(prefix), soft) * n
        if total < best_value:
            best_value, best_prefix, best_iteration = total, tuple(prefix), t
    return MonteCarloResult(best_prefix, problem.objective(best_prefix, soft), done, best_iteration,
                            time.perf_counter() - start)


@cache  # (kernels compiled once stay in memory: later fits in the process skip the tiny table)
def compile_montecarlo_kernels(weighted: bool) -> None:
    """A few rounds on a tiny table, hard and soft (unit weights, or ``weighted``): numba compiles (or
    loads from its cache) every kernel a search with such counts calls. A certified fit runs this within
    its budget before its warm start (a first fit after install compiled them for ~1.2 s past an 8 s
    budget)."""
    from ..data.compiled import tiny_table

    features, y = tiny_table()
    weights = np.linspace(0.5, 2.0, len(y)) if weighted else None
    problem = FRLProblem(features.T, y, sample_weight=weights)
    for soft in (False, True):
        montecarlo_search(problem, soft, iterations=3, random_state=0)
