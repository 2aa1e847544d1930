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

import numpy as np

from ..data import bitset
from .bounds import equation9_else_is_best
from .kernel import score_children
from .search import FRLProblem


@dataclass
class MonteCarloResult:
    prefix: tuple[int, ...]
    objective: float
    iterations: int
    best_iteration: int
    total_time: float


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
    n, m = problem.n_samples, problem.n_antecedents
    w, c_n, c1_n = float(problem.w), problem.C * n, problem.C1 * n
    positive = problem.y.astype(bool)
    pos_bits = bitset.pack(problem.captures & positive)
    neg_bits = bitset.pack(problem.captures & ~positive)
    all_pos, all_neg = bitset.pack(positive), bitset.pack(~positive)
    total_pos, total_neg = int(positive.sum()), int(n - positive.sum())
    child_value, bound, curiosity = np.empty(m), np.empty(m), np.empty(m)
    best_value, best_prefix, best_iteration = min(w * total_pos, float(total_neg)), (), 0
    start = time.perf_counter()
    done = 0
    for t in range(int(iterations)):
        if (done and time_limit is not None and time.perf_counter() - start >= time_limit) or (
                budget is not None and budget.stopped()):
            break
        done += 1
        rest_pos_bits, rest_neg_bits = all_pos.copy(), all_neg.copy()
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
            cp = bitset.count_and(pos_bits, rest_pos_bits)
            cq = bitset.count_and(neg_bits, rest_neg_bits)
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
            rest_pos_bits = bitset.andnot(rest_pos_bits[None, :], pos_bits[r])[0]
            rest_neg_bits = bitset.andnot(rest_neg_bits[None, :], neg_bits[r])[0]
            p, count = int(cp[r]), int(cp[r] + cq[r])
            rest_p, rest_q = rest_p - p, rest_q - (count - p)
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
