"""The best rule set of value at most v over a pool of clauses, by enumeration under the LP's reduced costs.

Once the master LP is solved with duals (mu, lambda) (mu in [0, a positive's weight], lambda >= 0), every
rule set S satisfies (docs/rulesets.md, "closing the gap")

    z(S) = sum(mu) - lambda C + sum over S's clauses of rc(k)
           + sum over positives S misses of (weight - mu) + sum over positives S covers m times of mu (m - 1)
           + lambda (C - complexity of S)                                          (reduced-cost identity)

and every term after the first two is >= 0. So a set worth at most v has

    sum over its clauses of rc(k) + sum over its positives covered m times of mu (m - 1) <= v - (sum(mu) - lambda C)

(the room), and with the LP's duals (every reduced cost >= 0) the left side only grows as clauses join
the set: a depth-first search over sets, clauses taken in increasing reduced cost, each set once (its
clauses in that order), prunes every set whose left side already exceeds the room, and the clauses after
a pruned one at the same depth go with it (their reduced costs are no smaller). (Other duals bound the
sets too: the negative reduced costs still to come are counted against the room.) What it visits
includes every set worth at most v; the best of them is the optimum when it is worth at most v, and when
none is, every set is worth more than v. This is the
enumeration step of Baldacci, Christofides and Mingozzi's exact method for set partitioning (Math.
Program. 115, 2008), with the multiple-coverage term as the extra bound; a new incumbent lowers the room
to the sets that could beat it.

It decides what the MIP over the same pool decides (``MasterProblem.limit_reduced_cost``), by a search
that needs no solver: on the UCI folds at complexity 5 to 15 whose MIP did not finish in 20-28 s (ilpd,
liver, heart, pima) it decides in milliseconds to seconds. The search pauses every slice of candidates,
so a deadline or a cancel stops it within a slice.
"""

from __future__ import annotations

import time
from typing import NamedTuple

import numpy as np
from numba import njit

from .._numba import drop_stale_cache
from .enumeration import _mu_sum  # the sum of weights over a row's set bits

drop_stale_cache(__file__, ["../_numba", "enumeration.py"])

#: candidates a slice of the search examines between looks at the clock and at a cancel (3-5 ms on
#: generated pools of 400 clauses over 200 and 4,600 positives)
_SLICE = 200_000

# the search's scalar state, in an int64 array (resumable between slices)
_DEPTH, _DONE = 0, 1
# and in a float64 array
_BEST, _LIMIT = 0, 1


class _Pool(NamedTuple):
    """The clauses, by increasing reduced cost: positives covered (packed), cost, complexity, reduced cost,
    and from each position on the sum of the negative reduced costs (``below_zero``, one entry more)."""

    cover: np.ndarray
    cost: np.ndarray
    complexity: np.ndarray
    reduced: np.ndarray
    below_zero: np.ndarray


class _Goal(NamedTuple):
    """What the search looks for: the positives' duals and weights (padded to the packed words), their
    total weight, the complexity bound, and the room of a set worth ``value`` (``step``: 1 when values are
    whole numbers, else 0)."""

    mu: np.ndarray
    weight: np.ndarray
    total_weight: float
    complexity_bound: float
    room: float
    value: float
    step: float


class _Stack(NamedTuple):
    """The depth-first search's levels: level ``d`` holds the set of the ``d`` clauses ``chosen[:d]``
    (positives covered, reduced costs, cover counted again, cost, weight covered, complexity used);
    ``position[d]`` is the next clause it may add; ``best_set``: the best set's clauses (-1 after)."""

    covered: np.ndarray
    rc_sum: np.ndarray
    multiple: np.ndarray
    cost_sum: np.ndarray
    weight_covered: np.ndarray
    used: np.ndarray
    position: np.ndarray
    chosen: np.ndarray
    best_set: np.ndarray


@njit(cache=True)
def _search_slice(pool, goal, stack, state, floats, slice_size):
    """Runs the depth-first search for ``slice_size`` candidates more; ``state[_DONE]`` is 1 when it has
    finished. ``floats[_LIMIT]``: the room for the sets still wanted, the smaller of ``room`` (sets worth
    <= ``value``) and the room of the sets worth <= best - ``step``."""
    cover, cost, complexity, reduced, below_zero = pool
    mu, weight, total_weight, complexity_bound, room, value, step = goal
    covered, rc_sum, multiple, cost_sum, weight_covered, used, position, chosen, best_set = stack
    n, n_words = cover.shape
    scratch = np.empty(n_words, np.uint64)
    fresh = np.empty(n_words, np.uint64)
    d = state[_DEPTH]
    examined = 0
    while examined < slice_size:
        if d < 0:
            state[_DONE] = 1
            break
        i = position[d]
        base = rc_sum[d] + multiple[d]
        if i >= n or base + reduced[i] + below_zero[i + 1] > floats[_LIMIT]:
            d -= 1  # the clauses left at this level cost at least this one's reduced cost: none fits
            continue
        position[d] = i + 1
        examined += 1
        if complexity[i] > complexity_bound - used[d]:
            continue
        for w in range(n_words):
            scratch[w] = cover[i, w] & covered[d, w]
            fresh[w] = cover[i, w] & ~covered[d, w]
        again = _mu_sum(scratch, mu)  # the positives it covers a second (third...) time
        if base + reduced[i] + again + below_zero[i + 1] > floats[_LIMIT]:
            continue
        for w in range(n_words):
            covered[d + 1, w] = covered[d, w] | cover[i, w]
        rc_sum[d + 1] = rc_sum[d] + reduced[i]
        multiple[d + 1] = multiple[d] + again
        cost_sum[d + 1] = cost_sum[d] + cost[i]
        weight_covered[d + 1] = weight_covered[d] + _mu_sum(fresh, weight)
        used[d + 1] = used[d] + complexity[i]
        chosen[d] = i
        objective = cost_sum[d + 1] + (total_weight - weight_covered[d + 1])
        if objective < floats[_BEST]:
            floats[_BEST] = objective
            best_set[:] = -1
            best_set[: d + 1] = chosen[: d + 1]
            floats[_LIMIT] = min(room, room - (value - (objective - step)))
        d += 1
        position[d] = i + 1
    state[_DEPTH] = d


def best_set_below(cover, cost, complexity, reduced, mu, weight, complexity_bound, value, room, integral,
                   seconds=None, should_stop=None):
    """The best rule set of value at most ``value`` over a pool of clauses, or the proof that there is none.

    ``cover``: each clause's positives (packed words, one row a clause, a 2-d array, the positives in ``mu``'s order);
    ``cost``: each clause's cost (its negatives' weight plus its penalty); ``complexity``: each one's
    (1 + conditions); ``reduced``: each one's reduced cost under the solved LP's duals (``mu`` clipped to
    [0, ``weight``], its positives' weights); ``room``: the room of a set worth ``value`` under those duals
    (see the module's docstring), tolerance included. ``integral``: every set's value is a whole number,
    so after a set worth b only sets worth b - 1 or less are wanted.

    Returns ``(finished, best value, the best set's clause indices)``: finished, a best value <= ``value``
    is the optimum over every set built from these clauses (and over every clause, when the pool holds
    every clause of reduced cost <= ``room``); a best value above ``value`` (inf, and no set, when no set
    but the empty one was worth trying) proves that no set is worth ``value`` or less. Cut short by
    ``seconds`` or ``should_stop``, it is not finished and the set is only the best met."""
    cover = np.ascontiguousarray(cover, np.uint64)
    reduced = np.asarray(reduced, np.float64)
    order = np.argsort(reduced, kind="stable")
    n = len(order)
    weight = np.broadcast_to(np.asarray(weight, np.float64), (len(mu),)).copy()
    n_words = cover.shape[1]
    padded = n_words * 64
    mu_padded, weight_padded = np.zeros(padded), np.zeros(padded)
    mu_padded[: len(mu)] = np.clip(np.asarray(mu, np.float64), 0.0, weight)
    weight_padded[: len(weight)] = weight
    complexity = np.asarray(complexity, np.int64)
    bound = float(complexity_bound) if np.isfinite(complexity_bound) else float(np.sum(complexity) + 1)
    # a set holds at most bound / (the least complexity) clauses: the levels of the search
    levels = 1 + (min(n, int(bound // max(int(complexity.min()), 1))) if n else 0)
    covered = np.zeros((levels, n_words), np.uint64)
    rc_sum, multiple, cost_sum, weight_covered = (np.zeros(levels) for _ in range(4))
    used = np.zeros(levels, np.int64)
    position = np.zeros(levels, np.int64)
    chosen, best_set = np.zeros(levels, np.int64), np.full(levels, -1, np.int64)
    total = float(weight.sum())
    # the empty set is a set too
    state = np.array([0, 0], np.int64)
    floats = np.array([np.inf, room], np.float64)
    step = 1.0 if integral else 0.0
    if total <= value:
        floats[_BEST] = total
        floats[_LIMIT] = min(room, room - (value - (total - step)))
    # the negative reduced costs from each position on: what the clauses after it can take off at most
    # (none below -tolerance once the LP is solved; duals of an unsolved LP bound the sets all the same)
    below_zero = np.concatenate([np.cumsum(np.minimum(reduced[order], 0.0)[::-1])[::-1], [0.0]])
    deadline = None if seconds is None else time.perf_counter() + seconds
    pool = _Pool(cover[order], np.asarray(cost, np.float64)[order], complexity[order], reduced[order], below_zero)
    goal = _Goal(mu_padded, weight_padded, total, bound, float(room), float(value), float(step))
    stack = _Stack(covered, rc_sum, multiple, cost_sum, weight_covered, used, position, chosen, best_set)
    while not state[_DONE]:
        if (deadline is not None and time.perf_counter() >= deadline) or (should_stop is not None and should_stop()):
            break
        _search_slice(pool, goal, stack, state, floats, _SLICE)
    picked = best_set[best_set >= 0]
    return bool(state[_DONE]), float(floats[_BEST]), sorted(int(k) for k in order[picked])
