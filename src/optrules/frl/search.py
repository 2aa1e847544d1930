"""Certified branch-and-bound for falling and softly falling rule lists (beyond the paper).

Best-first on the prefix bounds of Theorems 4.6 / 5.2 from the empty prefix, every child's completed
list (prefix + else clause) evaluated as a candidate; a dominance map keyed on the uncaptured set.
Stops when no queued prefix can beat the incumbent (certified optimal) or on a node or time budget or
Ctrl-C, with the smallest queued bound as the certified lower bound.
"""

from __future__ import annotations

from dataclasses import InitVar, dataclass

import numpy as np

from .._numba import workspace
from ..bnb import (
    EXPANDED,
    HEAP_SIZE,
    SearchState,
    ThreadedKernel,
    batch_memory,
    charge_batch,
    compile_for,
    drive,
    expansions_left,
    proven_status,
    threads_for,
    unsearched_certificate,
)
from ..budget import Budget, as_budget, check_budget_values
from ..certificate import BRANCH_AND_BOUND, OPTIMAL, Certificate, Trace
from ..data import bitset
from ..data.groups import group_samples, sample_counts
from ..data.weights import check_sample_weight
from ..decision_lists import class_weight_matrix
from ..solve import PREFIXES, ProgressEvent, Solver, SolveResult
from . import kernel as K
from .objective import is_falling, list_counts, objective


@dataclass
class FRLProblem:
    """Antecedent capture vectors, 0/1 labels and the objective's weights. The vectors come as
    ``captures`` (bool, antecedents x samples) or packed as ``bits`` (kept packed: 1 bit a sample)."""

    captures: InitVar[np.ndarray | None]
    y: np.ndarray
    w: float = 7.0
    C: float = 1e-6
    C1: float = 0.5
    conditions: list | None = None
    #: per-sample weights (None: each sample counts once); counts become weight sums, n the total weight
    sample_weight: np.ndarray | None = None
    bits: np.ndarray | None = None  # (antecedents, words) uint64

    def __post_init__(self, captures):
        self.y = np.asarray(self.y).astype(np.int8)
        if captures is not None:
            captures = np.asarray(captures, dtype=bool)
            if captures.ndim != 2 or captures.shape[0] == 0:
                raise ValueError("the antecedent set is empty: mine with a lower support or more features")
            if captures.shape[1] != self.y.shape[0]:
                raise ValueError(f"antecedents cover {captures.shape[1]} samples but there are {self.y.shape[0]} labels")
            self.bits = bitset.pack(captures)
        self.bits = np.ascontiguousarray(self.bits, dtype=np.uint64)
        if self.bits.ndim != 2 or self.bits.shape[0] == 0:
            raise ValueError("the antecedent set is empty: mine with a lower support or more features")
        if self.bits.shape[1] != bitset.n_words(self.y.shape[0]):
            raise ValueError(f"capture vectors of {self.bits.shape[1]} words for {self.y.shape[0]} labels")
        if self.y.shape[0] == 0:
            raise ValueError("no samples")
        if self.y.min() == self.y.max():
            raise ValueError(f"all {self.y.shape[0]} labels are {int(self.y[0])}: two classes are needed")
        for name, value in (("w", self.w), ("C", self.C), ("C1", self.C1)):
            if not np.isfinite(value) or value < 0:
                raise ValueError(f"{name} must be a finite number >= 0, got {value}")
        if self.w <= 0:
            raise ValueError(f"the positive weight w must be > 0, got {self.w}")
        if self.conditions is None:
            self.conditions = [(f"a{i}",) for i in range(self.bits.shape[0])]
        if self.sample_weight is not None:
            self.sample_weight = check_sample_weight(self.sample_weight, self.y.shape[0], self.y)

    @property
    def n_samples(self) -> int:
        return int(self.y.shape[0])

    @property
    def n_antecedents(self) -> int:
        return int(self.bits.shape[0])

    @property
    def total_weight(self) -> float:
        """n of the objective: the number of samples, or their total weight."""
        return float(self.n_samples if self.sample_weight is None else self.sample_weight.sum())

    def class_totals(self) -> tuple:
        """(positives, negatives): counts, or weight sums."""
        return self.counts(())[0]

    def prefix_captures(self, prefix) -> np.ndarray:
        """The capture vectors of the prefix's antecedents, unpacked (bool, rules x samples)."""
        return bitset.unpack(self.bits[np.asarray(prefix, dtype=np.int64)], self.n_samples)

    def counts(self, prefix) -> list[tuple]:
        return list_counts(self.prefix_captures(prefix), self.y, range(len(prefix)), self.sample_weight)

    def objective(self, prefix, soft: bool = False) -> float:
        return objective(self.counts(prefix), self.w, self.C, self.C1, soft)


#: what a falling-list search returns (:class:`~optrules.solve.SolveResult`: the prefix of antecedent indices
#: in order as its ``solution``); the name its callers know
FRLResult = SolveResult


@dataclass(frozen=True)
class FallingListSettings:
    """What one certified falling-list search is asked for (:func:`certified_search`'s arguments)."""

    soft: bool = False
    use_map: bool = True
    max_nodes: int | None = None
    initial_prefix: tuple | None = None
    trace_interval: float = 0.05
    counting: str = "auto"
    n_jobs: int | None = None


def certified_search(
    problem: FRLProblem,
    soft: bool = False,
    use_map: bool = True,
    max_nodes: int | None = None,
    time_limit: float | None = None,
    max_memory: int | None = None,
    initial_prefix=None,
    trace_interval: float = 0.05,
    progress=None,
    counting: str = "auto",
    budget: Budget | None = None,
    n_jobs: int | None = None,
) -> FRLResult:
    """The falling (or, with ``soft``, softly falling) compatible rule list of least objective, certified.

    ``initial_prefix`` (e.g. from the Monte-Carlo search) seeds the incumbent; it must be falling for
    the falling problem. Budgets as for :func:`optrules.corels.search`: ``max_nodes``, ``time_limit``,
    ``max_memory`` (bytes of search state), or a fit's ``budget``. ``n_jobs``: the threads the search
    runs on (:func:`~optrules.bnb.threads_for`); the search, its list and its certificate are the same
    for every ``n_jobs``.
    """
    check_budget_values(time_limit, max_memory, max_nodes)
    if initial_prefix is not None:
        initial_prefix = tuple(int(a) for a in initial_prefix)
        counts = problem.counts(initial_prefix)
        if len(set(initial_prefix)) != len(initial_prefix) or not all(p + q > 0 for p, q in counts):
            raise ValueError("initial_prefix must be distinct antecedents that each capture something")
        if not soft and not is_falling(counts):
            raise ValueError("initial_prefix is not a falling list")
    settings = FallingListSettings(soft, use_map, max_nodes, initial_prefix, trace_interval, counting, n_jobs)
    return FallingListSearch(problem, settings=settings, budget=as_budget(budget, time_limit, max_memory),
                             progress=progress).solve()


class FallingListSearch(Solver):
    """One search of :func:`certified_search` (its arguments checked there), in the
    :class:`~optrules.solve.Solver`'s phases:

    1. :meth:`prepare`: ``groups`` (the samples alike in every antecedent; whole-number weights counted
       as copies, others as real class totals), charged to the budget.
    2. :meth:`start`: the ``incumbent`` (the else clause alone, or the given prefix when better) and the
       search ``state``, its root queued.
    3. :meth:`search`: the kernel, its batch and scratch, driven in slices to the budget: ``outcome``,
       ``trace``.
    4. :meth:`certify`: the status, the lower bound (the least bound of what is left queued), counters.
    """

    method = BRANCH_AND_BOUND

    def __init__(self, problem: FRLProblem, *, settings: FallingListSettings, budget: Budget, progress=None):
        super().__init__(settings=settings, budget=budget, progress=progress)
        self.problem = problem
        self.n, self.m = problem.total_weight, problem.n_antecedents
        self.groups = None
        self.trace = Trace()
        self.incumbent, self.incumbent_value = self._initial_incumbent()

    def _initial_incumbent(self) -> tuple[tuple, float]:
        problem, settings = self.problem, self.settings
        positives, negatives = problem.class_totals()
        incumbent, value = (), min(float(problem.w) * positives, float(negatives))  # the else clause alone
        if settings.initial_prefix is not None:
            given = problem.objective(settings.initial_prefix, settings.soft) * self.n
            if given < value:
                incumbent, value = settings.initial_prefix, given
        return incumbent, value

    def unsearched(self) -> FRLResult:
        """The incumbent, with 0 as its bound (0 bounds every objective)."""
        best = self.problem.objective(self.incumbent, self.settings.soft)
        return FRLResult(self.incumbent, best, unsearched_certificate(best, 0.0, self.budget, len(self.incumbent),
                                                                      groups=0))

    # -- phase 1 ------------------------------------------------------------------------------------
    def prepare(self) -> None:
        problem = self.problem
        # whole-number weights count as copies of the samples (integer counting); others as real class totals
        copies = sample_counts(problem.sample_weight)
        self.class_weights = (None if problem.sample_weight is None or copies is not None
                              else class_weight_matrix(problem.y, 2, problem.sample_weight))
        self.groups = group_samples(problem.bits, problem.y, None, self.settings.counting, self.class_weights,
                                    counts=copies)
        self.budget.charge("groups", self.groups.nbytes)

    # -- phase 2 ------------------------------------------------------------------------------------
    def start(self) -> None:
        state = SearchState(self.m, {"node_value": np.float64, "node_ref_p": np.float64, "node_ref_count": np.float64})
        state.set_incumbent(self.incumbent_value, self.incumbent)
        state.node_ref_p[0] = 1  # alpha_{-1} = 1
        state.node_ref_count[0] = 1
        state.push_root()
        self.state = state

    # -- phase 3 ------------------------------------------------------------------------------------
    def search(self) -> None:
        problem, settings, budget, state, m = self.problem, self.settings, self.budget, self.state, self.m
        self.counting = self.groups.counting(with_classes=self.class_weights is not None)
        self.kernel_settings = K.Settings(float(problem.w), float(problem.C * self.n), float(problem.C1 * self.n),
                                          bool(settings.soft), bool(settings.use_map))
        # a batch's records and scratch take at most a share of what the search may hold
        self.slots = K.batch(m, K.batch_size(m, self.counting.bits.shape[1], batch_memory(budget)))
        self.scratch = workspace(self.counting, slots=self.slots.nodes.shape[0])
        state.batch_room = m * self.slots.nodes.shape[0]  # room for a batch's children while memory is not tight
        charge_batch(budget, self.slots, self.scratch)
        self.kernel = ThreadedKernel(K.expand, K.expand_parallel, threads_for(settings.n_jobs), self._arguments)
        _queue_bound(state)  # its kernel compiled (or loaded) before the search's takes numba's lock
        self.outcome = drive(self.kernel, state, lambda elapsed: _record(self.trace, state, elapsed, self.n,
                                                                        self.progress),
                             budget, settings.max_nodes, settings.trace_interval, self.trace, drop_when_full=True,
                             compile_kernel=lambda: compile_for(K.expand, *self._arguments(0, 0)))

    def _arguments(self, max_pops: int, threads: int) -> tuple:
        state = self.state
        return (max_pops, expansions_left(self.settings.max_nodes, state), self.counting, self.kernel_settings,
                state.tree(), state.node_value, state.node_ref_p, state.node_ref_count, state.frontier(),
                state.progress(), self.scratch, self.slots)

    # -- phase 4 ------------------------------------------------------------------------------------
    def certify(self) -> FRLResult:
        state, outcome, n = self.state, self.outcome, self.n
        prefix = state.best()
        best = self.problem.objective(prefix, self.settings.soft)
        status = outcome.status
        if status != OPTIMAL:  # one scan of the queue, for the status and the bound
            queue_bound = _queue_bound(state)[0]
            status = proven_status(status, queue_bound, float(state.floats[0]))
        lower_bound = best if status == OPTIMAL else min(best, queue_bound / n)
        counters = {
            "total_time": outcome.total_time,
            "time_to_optimum": outcome.time_to_optimum,
            **state.counters(),
            "optimal_prefix_length": len(prefix),
            "compile_time": outcome.compile_time,
            "groups": self.groups.n_groups,
            "threads": self.kernel.used,
        }
        return FRLResult(prefix, best, Certificate(status, best, lower_bound, counters, self.trace, BRANCH_AND_BOUND))


def _queue_bound(state: SearchState):
    by_length = np.zeros(state.n_antecedents + 1, np.int64)
    smallest = K.queue_summary(state.heap_key, state.heap_node, int(state.ints[HEAP_SIZE]), state.node_dead,
                               state.node_depth, by_length)
    # prefixes dropped once the memory budget was reached are bounded alike, by their smallest bound
    return min(smallest, state.dropped_floor()), by_length


def _record(trace: Trace, state: SearchState, elapsed: float, n: int, progress):
    """Appends a trace point; returns the progress callback's answer (:data:`~optrules.budget.STOP`)."""
    smallest, by_length = _queue_bound(state)
    best = float(state.floats[0])
    longest = int(np.flatnonzero(by_length).max()) + 1 if by_length.any() else 1
    trace.append(elapsed, best / n, min(best, smallest) / n, by_length[:longest], float("nan"))
    if progress is not None:
        return progress(trace, ProgressEvent.from_trace(trace, state.ints[EXPANDED], PREFIXES, by_length.sum()))
    return None


__all__ = ["FRLProblem", "FRLResult", "FallingListSearch", "FallingListSettings", "certified_search"]
