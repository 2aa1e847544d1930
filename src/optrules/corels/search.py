"""Certified best-first branch-and-bound over rule-list prefixes (Algorithm 2 of the CORELS paper).

:func:`search` drives the compiled kernel (:mod:`optrules.corels.kernel`) in short slices so that it can
keep to a node or time budget, record the trace, show progress and stop cleanly on Ctrl-C; whenever it
stops it returns the best list found and a :class:`~optrules.certificate.Certificate` whose lower bound
is the smallest bound of anything left unexplored.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ..certificate import INTERRUPTED, NODE_BUDGET, OPTIMAL, TIME_BUDGET, Certificate, Trace
from . import kernel as K
from .bounds import log10_remaining_space
from .greedy import greedy_prefix
from .prefix import objective, prefix_mistakes
from ..data.groups import group_samples
from .problem import Problem


@dataclass(frozen=True)
class Ablation:
    """Switches for the paper's Tables 4 and 5: each bound and the symmetry map can be turned off."""

    minimum_support: bool = True  # Thm 10
    accurate_support: bool = True  # Thm 11
    excessive_support: bool = True  # Thm 21
    lookahead: bool = True  # Lemma 2
    equivalent_points: bool = True  # Thm 20

    def flags(self) -> int:
        return (
            K.USE_MIN_SUPPORT * self.minimum_support
            | K.USE_ACCURATE_SUPPORT * self.accurate_support
            | K.USE_EXCESSIVE_SUPPORT * self.excessive_support
            | K.USE_LOOKAHEAD * self.lookahead
            | K.USE_EQUIVALENT * self.equivalent_points
        )


@dataclass
class SearchResult:
    prefix: tuple[int, ...]
    mistakes: int
    objective: float
    certificate: Certificate
    extra: dict = field(default_factory=dict)


class _State:
    """The kernel's arrays, grown on demand."""

    def __init__(self, problem: Problem, capacity: int):
        m = problem.n_antecedents
        capacity = max(capacity, 4 * m + 16)
        self.node_parent = np.empty(capacity, np.int32)
        self.node_last = np.empty(capacity, np.int32)
        self.node_depth = np.empty(capacity, np.int32)
        self.node_lb = np.empty(capacity, np.float64)
        self.node_b0 = np.empty(capacity, np.int32)
        self.node_hash = np.empty(capacity, np.uint64)
        self.node_dead = np.zeros(capacity, np.bool_)
        self.heap_key = np.empty(capacity, np.float64)
        self.heap_node = np.empty(capacity, np.int32)
        self.map_slots = np.full(1 << int(np.ceil(np.log2(4 * capacity))), -1, np.int32)
        self.ints = np.zeros(K.N_INT_STATE, np.int64)
        self.floats = np.zeros(1, np.float64)
        self.best_prefix = np.zeros(m + 1, np.int64)

    NODE_ARRAYS = ("node_parent", "node_last", "node_depth", "node_lb", "node_b0", "node_hash", "node_dead")
    HEAP_ARRAYS = ("heap_key", "heap_node")
    GROWTH = 1.5  # rather than doubling: less slack at the peak

    def make_room(self, n_antecedents: int) -> None:
        ints = self.ints
        if ints[K.N_NODES] + n_antecedents > self.node_parent.shape[0]:
            self._grow(self.NODE_ARRAYS, int(ints[K.N_NODES]) + n_antecedents)
        if ints[K.HEAP_SIZE] + n_antecedents > self.heap_key.shape[0]:
            self._grow(self.HEAP_ARRAYS, int(ints[K.HEAP_SIZE]) + n_antecedents)
        if 10 * (ints[K.MAP_COUNT] + n_antecedents) > 7 * self.map_slots.shape[0]:  # load <= 0.7
            new = np.empty(2 * self.map_slots.shape[0], np.int32)
            K.map_rehash(self.map_slots, self.node_hash, new)
            self.map_slots = new

    def _grow(self, names, needed: int) -> None:
        if needed >= np.iinfo(np.int32).max:
            raise MemoryError("more than 2**31 prefixes: set max_nodes or time_limit")
        for name in names:  # one array at a time keeps the transient peak small
            old = getattr(self, name)
            new = np.zeros(max(needed, int(self.GROWTH * old.shape[0])), old.dtype)
            new[: old.shape[0]] = old
            setattr(self, name, new)
            del old

    @property
    def nbytes(self) -> int:
        return sum(getattr(self, n).nbytes for n in self.NODE_ARRAYS + self.HEAP_ARRAYS + ("map_slots",))


def _initial_incumbent(problem: Problem, warm_start: bool, initial_prefix) -> tuple[int, ...]:
    captures = problem.captures()
    candidates = [()]
    if warm_start:
        candidates.append(greedy_prefix(problem))
    if initial_prefix is not None:
        prefix = tuple(int(a) for a in initial_prefix)
        if len(set(prefix)) != len(prefix) or any(not 0 <= a < problem.n_antecedents for a in prefix):
            raise ValueError(f"initial_prefix must list distinct antecedent indices, got {prefix}")
        candidates.append(prefix)
    return min(candidates, key=lambda p: prefix_mistakes(captures, problem.y, p) + problem.lambda_n * len(p))


def search(
    problem: Problem,
    policy: str = "lower_bound",
    map_type: str = "prefix",
    ablation: Ablation = Ablation(),
    max_nodes: int | None = None,
    time_limit: float | None = None,
    warm_start: bool = True,
    initial_prefix=None,
    trace_interval: float = 0.05,
    progress=None,
    counting: str = "auto",
) -> SearchResult:
    """Find the rule list minimising mistakes/N + lambda*K over ``problem``'s antecedents, and prove it.

    ``max_nodes`` caps the number of prefixes expanded, ``time_limit`` the seconds spent; either stops
    the search with the best list so far and a certified gap, as does Ctrl-C. ``progress``, if given, is
    called with the latest trace point and counters after every slice.
    """
    if policy not in K.POLICIES:
        raise ValueError(f"policy must be one of {sorted(K.POLICIES)}, got {policy!r}")
    if map_type not in K.MAP_TYPES:
        raise ValueError(f"map_type must be one of {sorted(K.MAP_TYPES)}, got {map_type!r}")
    if max_nodes is not None and int(max_nodes) < 0:
        raise ValueError(f"max_nodes must be >= 0, got {max_nodes}")
    if time_limit is not None and not time_limit > 0:
        raise ValueError(f"time_limit must be positive seconds, got {time_limit}")

    n, m = problem.n_samples, problem.n_antecedents
    lambda_n = problem.lambda_n
    groups = group_samples(problem.captures(), problem.y, problem.minor, counting)
    zobrist = np.random.default_rng(0x5EED).integers(0, 2**63, size=m, dtype=np.int64).astype(np.uint64) * np.uint64(2) + np.uint64(1)

    state = _State(problem, capacity=1 << 12)
    incumbent = _initial_incumbent(problem, warm_start, initial_prefix)
    captures = problem.captures()
    state.floats[0] = prefix_mistakes(captures, problem.y, incumbent) + lambda_n * len(incumbent)
    state.best_prefix[: len(incumbent)] = incumbent
    state.ints[K.BEST_LEN] = len(incumbent)

    # the root: the empty prefix
    state.node_parent[0] = -1
    state.node_depth[0] = 0
    state.node_lb[0] = 0.0
    state.node_b0[0] = int(problem.minor.sum()) if ablation.equivalent_points else 0
    state.node_hash[0] = 0  # the root is never looked up in the map
    state.ints[K.N_NODES] = 1
    K.heap_push(state.heap_key, state.heap_node, 0, 0.0, 0)
    state.ints[K.HEAP_SIZE] = 1
    state.ints[K.MAX_QUEUE] = 1

    flags = ablation.flags()
    policy_id, map_id = K.POLICIES[policy], K.MAP_TYPES[map_type]

    def run(max_pops: int) -> int:
        return K.expand(
            max_pops, groups.bits, groups.count_planes, groups.positive_planes, groups.minority_planes,
            groups.packed_weights, groups.all_ones, n, lambda_n, policy_id, map_id, flags, zobrist,
            state.node_parent, state.node_last, state.node_depth, state.node_lb, state.node_b0,
            state.node_hash, state.node_dead, state.heap_key, state.heap_node,
            state.map_slots, state.ints, state.floats, state.best_prefix,
        )

    # compile (or load from numba's cache) outside the clock: a zero-pop call touches nothing
    compile_start = time.perf_counter()
    run(0)
    compile_time = time.perf_counter() - compile_start
    start = time.perf_counter()
    trace = Trace()
    status = OPTIMAL
    time_to_optimum = 0.0
    slice_pops = 64
    last_trace = -np.inf
    record_every = trace_interval
    try:
        while True:
            pops = slice_pops
            if max_nodes is not None:
                left = int(max_nodes) - int(state.ints[K.EXPANDED])
                if left <= 0:
                    status = NODE_BUDGET
                    break
                pops = min(pops, left)
            slice_start = time.perf_counter()
            code = run(pops)
            now = time.perf_counter()
            if state.ints[K.IMPROVED]:
                state.ints[K.IMPROVED] = 0
                time_to_optimum = now - start
            if code == K.NEED_ROOM:
                state.make_room(m)
                continue
            # aim for slices of ~20 ms: short enough for Ctrl-C and budgets, long enough to amortise
            took = now - slice_start
            if took < 0.01:
                slice_pops = min(slice_pops * 2, 1 << 20)
            elif took > 0.04 and slice_pops > 1:
                slice_pops //= 2
            if code == K.QUEUE_EMPTY:
                break
            if now - last_trace >= record_every:
                _record(trace, state, now - start, lambda_n, n, m, progress)
                last_trace = time.perf_counter()
                # a record scans the queue: keep that below ~5% of the search time
                record_every = max(trace_interval, 20.0 * (last_trace - now))
            if time_limit is not None and now - start >= time_limit:
                status = TIME_BUDGET
                break
    except KeyboardInterrupt:
        status = INTERRUPTED
    total_time = time.perf_counter() - start
    try:
        _record(trace, state, total_time, lambda_n, n, m, progress)
    except KeyboardInterrupt:  # during the final report: the search itself is over
        pass

    best_len = int(state.ints[K.BEST_LEN])
    prefix = tuple(int(a) for a in state.best_prefix[:best_len])
    mistakes = prefix_mistakes(captures, problem.y, prefix)
    best_objective = objective(mistakes, len(prefix), n, problem.regularization)
    if status == OPTIMAL:
        lower_bound = best_objective
    else:
        lower_bound = min(best_objective, _queue_lower_bound(state, lambda_n) / n)
    counters = {
        "total_time": total_time,
        "time_to_optimum": time_to_optimum,
        "nodes_expanded": int(state.ints[K.EXPANDED]),
        "lower_bound_evaluations": int(state.ints[K.LB_EVALS]),
        "queue_insertions": int(state.ints[K.INSERTIONS]),
        "max_queue_size": int(state.ints[K.MAX_QUEUE]),
        "max_prefix_length": int(state.ints[K.MAX_LENGTH]),
        "optimal_prefix_length": len(prefix),
        "memory_bytes": int(state.nbytes),
        "compile_time": compile_time,
        "policy": policy,
        "map_type": map_type,
    }
    certificate = Certificate(status, best_objective, lower_bound, counters, trace)
    return SearchResult(prefix, mistakes, best_objective, certificate)


def _queue_lower_bound(state: _State, lambda_n: float, summary=None) -> float:
    """Smallest bound (mistake units) on any list not yet evaluated: every such list extends a queued
    prefix by at least one rule, so it costs at least b(d_p) + b0(d_p) + lambda*N (Lemma 2, Thm 20)."""
    smallest, _, _ = summary if summary is not None else _summary(state, lambda_n)
    return smallest + lambda_n


def _summary(state: _State, lambda_n: float):
    m = state.best_prefix.shape[0] - 1
    by_length = np.zeros(m + 1, np.int64)
    remaining = np.zeros((m + 1, m + 1), np.int64)
    smallest = K.queue_summary(
        state.heap_node, int(state.ints[K.HEAP_SIZE]), state.node_dead, state.node_lb, state.node_b0,
        state.node_depth, lambda_n, float(state.floats[0]), m, by_length, remaining,
    )
    return smallest, by_length, remaining


def _record(trace: Trace, state: _State, elapsed: float, lambda_n: float, n: int, m: int, progress) -> None:
    summary = _summary(state, lambda_n)
    _, by_length, remaining = summary
    best = float(state.floats[0])
    lower = min(best, _queue_lower_bound(state, lambda_n, summary))
    longest = int(np.flatnonzero(by_length).max()) + 1 if by_length.any() else 1
    trace.append(elapsed, best / n, lower / n, by_length[:longest], log10_remaining_space(remaining))
    if progress is not None:
        progress(trace, {"nodes_expanded": int(state.ints[K.EXPANDED]), "queue": int(by_length.sum())})
