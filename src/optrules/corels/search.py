"""Certified best-first branch-and-bound over rule-list prefixes (Algorithm 2 of the CORELS paper).

:func:`search` drives the compiled kernel (:mod:`optrules.corels.kernel`) in short slices so that it can
keep to a node or time budget, record the trace, show progress and stop cleanly on Ctrl-C; whenever it
stops it returns the best list found and a :class:`~optrules.certificate.Certificate` whose lower bound
is the smallest bound of anything left unexplored.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from .._numba import workspace
from ..bnb import (
    DROPPED,
    EXPANDED,
    HEAP_SIZE,
    IMPROVED,
    MAX_LENGTH,
    N_NODES,
    SET_ASIDE,
    SearchState,
    ThreadedKernel,
    batch_memory,
    charge_batch,
    compile_for,
    compiled_in_time,
    drive,
    expansions_left,
    proven_status,
    threads_for,
    unsearched_certificate,
    unsearched_counters,
)
from ..budget import STOP, Budget, as_budget, check_budget_values
from ..certificate import BRANCH_AND_BOUND, MEMORY_BUDGET, OPTIMAL, Certificate, Trace
from ..data.groups import GROUPING, group_samples, grouping_bytes
from ..solve import PREFIXES, ProgressEvent, Solver, SolveResult
from . import kernel as K
from .bounds import log10_remaining_space
from .greedy import greedy_prefix
from .prefix import objective
from .problem import Problem
from .requirements import Requirements


@dataclass(frozen=True)
class Ablation:
    """Switches for the paper's Tables 4 and 5: each bound and the symmetry map can be turned off."""

    minimum_support: bool = True  # Thm 10
    accurate_support: bool = True  # Thm 11
    excessive_support: bool = True  # Thm 21
    lookahead: bool = True  # Lemma 2
    equivalent_points: bool = True  # Thm 20
    sibling_dominance: bool = True  # a child dominated by a sibling (Thm 18: kernel._dominated_by_subconjunction, _by_pure_sibling)
    # prefixes none of whose children could be queued (leaves) are finished at once instead of queued: None
    # once the search state takes half its memory allowance (it saves room and may cost time: a leaf the
    # optimum would have pruned by its turn is resolved anyway), True always, False never
    leaf_resolution: bool | None = None
    # a prefix's children queued in steps of their bound, the prefix queued again for the rest (lower-bound
    # policy, no requirements): None once memory is tight (it saves room and costs re-expansions), True
    # always, False never
    deferred_children: bool | None = None
    # once the memory budget is reached, the queued prefixes of largest bound are set aside and their
    # nodes freed (_set_aside) before children start being dropped
    set_aside: bool = True

    def flags(self) -> int:
        return (
            K.USE_MIN_SUPPORT * self.minimum_support
            | K.USE_ACCURATE_SUPPORT * self.accurate_support
            | K.USE_EXCESSIVE_SUPPORT * self.excessive_support
            | K.USE_LOOKAHEAD * self.lookahead
            | K.USE_EQUIVALENT * self.equivalent_points
            | K.USE_SIBLING_DOMINANCE * self.sibling_dominance
            | (K.RESOLVE_LEAVES if self.leaf_resolution else K.RESOLVE_LEAVES_WHEN_TIGHT * (self.leaf_resolution is None))
            | (K.DEFER_CHILDREN if self.deferred_children
               else K.DEFER_CHILDREN_WHEN_TIGHT * (self.deferred_children is None))
        )


#: what a rule-list search returns (:class:`~optrules.solve.SolveResult`: the prefix of antecedent indices
#: in order as its ``solution``, its weighted ``mistakes``); the name the searches' callers know
SearchResult = SolveResult


@dataclass(frozen=True)
class RuleListSearchSettings:
    """What one rule-list search is asked for (:func:`search`'s arguments, checked there)."""

    policy: str = "lower_bound"
    map_type: str = "auto"
    ablation: Ablation = Ablation()
    max_nodes: int | None = None
    warm_start: bool = True
    initial_prefix: object = None  # None, one prefix, or a list of prefixes
    trace_interval: float = 0.05
    counting: str = "auto"
    max_length: int | None = None
    requirements: Requirements | None = None  # None: none
    n_jobs: int | None = None


def check_max_length(value, name: str = "max_length") -> None:
    """A bound on the number of rules: None, or a whole number >= 0."""
    if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or int(value) != value
                              or value < 0):
        raise ValueError(f"{name} must be a whole number >= 0 or None, got {value!r}")


def as_requirements(required, n_antecedents: int) -> Requirements:
    """``required`` as :class:`Requirements`: None (none), or groups of antecedent indices."""
    if required is None:
        return Requirements.none(n_antecedents)
    if isinstance(required, Requirements):
        if required.masks.shape != (n_antecedents,):
            raise ValueError(f"the requirements describe {required.masks.shape[0]} antecedents, the problem has "
                             f"{n_antecedents}")
        return required
    return Requirements.from_groups(required, n_antecedents)


def _prefixes(initial_prefix) -> list:
    """``initial_prefix`` (None, one prefix, or a list of prefixes) as a list of prefixes."""
    given = [] if initial_prefix is None else list(initial_prefix)
    if given and not all(isinstance(p, (tuple, list, np.ndarray)) for p in given):
        given = [given]  # one prefix
    return given


#: share of the time left (or of the node budget) a search under requirements first spends without them
FREE_WARM_START_SHARE = 0.1
#: prefixes that warm start may expand when the search has neither a time nor a node budget
FREE_WARM_START_NODES = 200_000


def _inner_budget(budget: Budget, seconds: float | None, name: str, stop_when=None) -> Budget:
    """A budget for a search run inside another one's: ``seconds``, the memory the outer one's charges
    leave (``name``: its charge, if any), and a stop when the outer one is asked to stop (or when
    ``stop_when()`` says so)."""
    def stop_with_the_fit():
        return STOP if budget.cancelled() or (stop_when is not None and stop_when()) else None

    return Budget(seconds, max(1, budget.allowance(name)), stop_with_the_fit)


def _free_warm_start(problem: Problem, budget: Budget, max_nodes, max_length, initial_prefix, **options):
    """A short search without the requirements: the lists it finds, completed, are good first
    incumbents (a list that misses a requirement is usually one rule from a good admissible list, and
    the constrained search, which may not prune rules that meet requirements, is slow to find them).
    Returns its result, or None when the budget is already spent."""
    if budget.stopped():
        return None
    nodes = None if max_nodes is None else max(1, int(FREE_WARM_START_SHARE * max_nodes))
    if budget.deadline is None and nodes is None:
        nodes = FREE_WARM_START_NODES
    own = _inner_budget(budget, budget.share(FREE_WARM_START_SHARE), "free warm start")
    return search(problem, max_nodes=nodes, budget=own, max_length=max_length, initial_prefix=initial_prefix,
                  **options)


#: a lower-bound search not finished when this share of its time is gone spends CURIOSITY_DIVE_SHARE of
#: it on a search in the curiosity order (Section 5.6), whose best list becomes its incumbent: that order
#: finds good lists, the lower-bound order proves bounds (monks-2 at lambda 0.01 in 60 s: list 0.2061
#: and bound 0.1647 in the lower-bound order, 0.1888 and 0.0318 in curiosity's; BENCHMARKS.md)
CURIOSITY_DIVE_AFTER, CURIOSITY_DIVE_SHARE = 0.2, 0.1
#: the least memory (bytes) the outer search must leave for a dive to start
CURIOSITY_DIVE_MIN_MEMORY = 32 << 20
#: a dive ends once it has gone as long without a better list as it took to find its last one, after
#: this share of its time at least: where the incumbent is good already, most of the dive is saved
#: (a curiosity dive finds its best list early on most problems, late on a few: the patience adapts)
CURIOSITY_DIVE_PATIENCE = 0.25


def _curiosity_dive(problem: Problem, budget: Budget, seconds: float, incumbent, **options):
    """The best list of a search in the curiosity order of at most ``seconds``, from ``incumbent``
    (warm start off: it is the incumbent already), within what the outer search leaves of the memory;
    it stops early when it stops finding better lists (:data:`CURIOSITY_DIVE_PATIENCE`). None when too
    little memory is left, or the fit's budget is spent."""
    if budget.allowance("curiosity dive") < CURIOSITY_DIVE_MIN_MEMORY or budget.stopped():
        return None
    started = time.perf_counter()
    seen = {"best": np.inf, "found": 0.0}  # its best objective, and when it last improved

    def watch(trace, event):
        if trace.objective and trace.objective[-1] < seen["best"]:
            if seen["best"] < np.inf:  # (the first point is the incumbent it started from)
                seen["found"] = time.perf_counter() - started
            seen["best"] = trace.objective[-1]

    def stale():
        return time.perf_counter() - started >= max(CURIOSITY_DIVE_PATIENCE * seconds, 2.0 * seen["found"])

    own = _inner_budget(budget, min(seconds, max(0.0, budget.remaining())), "curiosity dive", stale)
    try:
        return search(problem, policy="curiosity", budget=own, warm_start=False, initial_prefix=[incumbent],
                      progress=watch, **options).solution
    except MemoryError:  # its first arrays do not fit: the outer search goes on without it
        return None


def _initial_incumbent(problem: Problem, warm_start: bool, initial_prefix, budget: Budget,
                       max_length: int | None = None, requirements: Requirements | None = None) -> tuple[int, ...]:
    """The best of: the empty list, the greedy list (``warm_start``), and the given prefix or prefixes,
    each cut to ``max_length`` rules (the first rules of a list are a list) and completed to meet the
    ``requirements``."""
    requirements = requirements if requirements is not None else Requirements.none(problem.n_antecedents)
    candidates = [()]
    if warm_start:
        candidates.append(greedy_prefix(problem, max_length=max_length, budget=budget))
    for prefix in _prefixes(initial_prefix):
        prefix = tuple(int(a) for a in prefix)
        if len(set(prefix)) != len(prefix) or any(not 0 <= a < problem.n_antecedents for a in prefix):
            raise ValueError(f"initial_prefix must list distinct antecedent indices, got {prefix}")
        candidates.append(prefix[:max_length])
    cost = problem.cost if requirements.count else None
    return min((requirements.completed(p, max_length, cost) for p in candidates), key=problem.cost)


def search(
    problem: Problem,
    policy: str = "lower_bound",
    map_type: str = "auto",
    ablation: Ablation = Ablation(),
    max_nodes: int | None = None,
    time_limit: float | None = None,
    max_memory: int | None = None,
    warm_start: bool = True,
    initial_prefix=None,
    trace_interval: float = 0.05,
    progress=None,
    counting: str = "auto",
    budget: Budget | None = None,
    max_length: int | None = None,
    required=None,
    n_jobs: int | None = None,
    _groups=None,
) -> SearchResult:
    """Find the rule list minimising mistakes/N + lambda*K over ``problem``'s antecedents, and prove it
    (mistakes weighted and N the total weight when the problem has sample weights).

    ``initial_prefix`` (one prefix of antecedent indices, or a list of them) seeds the incumbent with the
    best of them. ``max_nodes`` caps the number of prefixes expanded, ``time_limit`` the seconds spent, ``max_memory``
    the bytes of the search's state (default: :func:`optrules.budget.default_memory_budget`); each stops
    the search with the best list so far and a certified gap, as does Ctrl-C. ``budget`` (a
    :class:`~optrules.budget.Budget`) replaces ``time_limit`` and ``max_memory`` when the search is one
    stage of a fit: its deadline and memory account are the fit's. ``progress``, if given, is called
    with the latest trace point and counters after every slice. ``max_length`` restricts the search (and
    the certificate) to lists of at most that many rules; ``required`` (groups of antecedent indices, or
    :class:`~optrules.corels.requirements.Requirements`) to lists holding an antecedent of every group.
    ``n_jobs``: the threads the search runs on (:func:`~optrules.bnb.threads_for`); the search, its
    list and its certificate are the same for every value.
    """
    if policy not in K.POLICIES:
        raise ValueError(f"policy must be one of {sorted(K.POLICIES)}, got {policy!r}")
    if map_type not in K.MAP_TYPES and map_type != "auto":
        raise ValueError(f"map_type must be one of {sorted([*K.MAP_TYPES, 'auto'])}, got {map_type!r}")
    check_budget_values(time_limit, max_memory, max_nodes)
    check_max_length(max_length)
    requirements = as_requirements(required, problem.n_antecedents)
    requirements.check_length(max_length)
    if requirements.count and map_type == "captured":
        raise ValueError("map_type='captured' cannot be used with requirements: two prefixes that capture the "
                         "same samples may meet different requirements (use 'prefix')")
    settings = RuleListSearchSettings(policy, map_type, ablation, max_nodes, warm_start, initial_prefix,
                                      trace_interval, counting, max_length, requirements, n_jobs)
    return RuleListSearch(problem, settings=settings, budget=as_budget(budget, time_limit, max_memory),
                          progress=progress, groups=_groups).solve()


class RuleListSearch(Solver):
    """One search of :func:`search` (its arguments checked there), in the :class:`~optrules.solve.Solver`'s
    phases, each saying what it sets:

    1. :meth:`prepare`: ``groups`` (the samples alike in every antecedent, a bit each, charged to the
       budget; given when a search runs inside another's) and the ``map_type`` resolved.
    2. :meth:`start`: the ``incumbent`` (the best of the empty list, the greedy list, the given
       prefixes and, with requirements, a free search's list completed) and the search ``state``, its
       root queued.
    3. :meth:`search`: :meth:`_load`: the ``kernel`` (:class:`~optrules.bnb.ThreadedKernel`: one thread,
       then ``n_jobs`` threads once the search has run 0.2 s), its ``settings``, its ``batch`` (records, a
       share of the memory at most), scratch and the children's sub-conjunctions; then :meth:`_expand`:
       the kernel driven in slices to the budget (:func:`~optrules.bnb.drive`), the curiosity dive once
       on the way: ``outcome`` and ``trace``.
    4. :meth:`certify`: the status, the lower bound (the least bound of what is left queued) and the
       counters; a search again from a better list when the queue drained for want of memory.
    """

    method = BRANCH_AND_BOUND

    def __init__(self, problem: Problem, *, settings: RuleListSearchSettings, budget: Budget, progress=None,
                 groups=None):
        super().__init__(settings=settings, budget=budget, progress=progress)
        self.problem, self.policy, self.map_type, self.ablation = (problem, settings.policy, settings.map_type,
                                                                   settings.ablation)
        self.max_nodes, self.warm_start = settings.max_nodes, settings.warm_start
        self.initial_prefix = settings.initial_prefix  # (a free warm start's list joins it)
        self.trace_interval, self.counting_mode = settings.trace_interval, settings.counting
        self.max_length, self.n_jobs = settings.max_length, settings.n_jobs
        self.requirements = (settings.requirements if settings.requirements is not None
                             else Requirements.none(problem.n_antecedents))
        self.groups = groups
        self.n, self.m, self.lambda_n = problem.total_weight, problem.n_antecedents, problem.lambda_n
        # b0 of the empty prefix: every list misclassifies at least these (Thm 20)
        self.root_b0 = (problem.root_b0() if self.ablation.equivalent_points
                        else 0.0)
        self.free = None  # with requirements, the free search that warm-started this one
        self.trace = Trace()
        # the curiosity dive's outcome (see _dive)
        self.dive_at, self.dive_seconds, self.dive_improved = None, 0.0, 0

    def unsearched(self) -> SearchResult:
        """The best of the lists known (the given ones, or the start's incumbent: grouping large data or a
        warm start takes a while, and a stop then skips the kernel) with the root's bound (Thm 20)."""
        prefixes = [self.incumbent] if "start" in self.ran else self.initial_prefix
        return _before_search(self.problem, prefixes, self.budget, self.root_b0, self.policy, self.map_type,
                              self.max_length, self.requirements)

    # -- phase 1 ------------------------------------------------------------------------------------
    def prepare(self) -> None:
        problem, budget = self.problem, self.budget
        if self.groups is None:  # (a free warm start is given its search's groups)
            budget.require("grouping", grouping_bytes(problem.bits, problem.n_samples), GROUPING)
            self.groups = group_samples(problem.bits, problem.y, problem.minor, self.counting_mode,
                                        problem.class_weights() if problem.weighted else None, problem.signatures(),
                                        problem.counts)
            budget.release("grouping")
        budget.charge("problem", problem.bits.nbytes + self.groups.nbytes)
        self.map_type = _resolved_map(self.map_type, self.groups.bits.shape[1], self.requirements)

    # -- phase 2 ------------------------------------------------------------------------------------
    def start(self) -> None:
        problem, budget = self.problem, self.budget
        if self.requirements.count and self.warm_start:
            self.free = _free_warm_start(problem, budget, self.max_nodes, self.max_length, self.initial_prefix,
                                         policy=self.policy, map_type=self.map_type, ablation=self.ablation,
                                         n_jobs=self.n_jobs, _groups=self.groups)
            if self.free is not None:
                self.initial_prefix = _prefixes(self.initial_prefix) + [self.free.solution]
        # mistakes and b0 are counts of samples (int32 is exact and small; whole-number weights count as
        # copies) unless samples carry real weights
        count_type = np.float64 if problem.weighted else np.int32
        self.state = SearchState(self.m, {"node_mistakes": count_type, "node_b0": count_type})
        if self.ablation.set_aside:
            self.state.scratch_per_node = SET_ASIDE_SCRATCH_PER_NODE
        self.incumbent = _initial_incumbent(problem, self.warm_start, self.initial_prefix, budget, self.max_length,
                                            self.requirements)
        self.state.set_incumbent(problem.cost(self.incumbent), self.incumbent)
        self.state.node_b0[0] = self.root_b0  # the root: the empty prefix
        self.state.push_root()

    # -- phase 3 ------------------------------------------------------------------------------------
    def search(self) -> None:
        self._load()
        self._expand()

    def _load(self) -> None:
        problem, groups, m, requirements, ablation = self.problem, self.groups, self.m, self.requirements, self.ablation
        self.zobrist = (np.random.default_rng(0x5EED).integers(0, 2**63, size=m, dtype=np.int64).astype(np.uint64)
                        * np.uint64(2) + np.uint64(1))
        self.policy_id, self.map_id = K.POLICIES[self.policy], K.MAP_TYPES[self.map_type]
        self.threads = threads_for(self.n_jobs)
        self.kernel = ThreadedKernel(K.expand, K.expand_parallel, self.threads, self._arguments)
        self.counting = groups.counting(with_classes=problem.weighted)
        longest = m if self.max_length is None else min(int(self.max_length), m)
        self.settings = K.Settings(float(self.n), float(self.lambda_n), self.policy_id, self.map_id, ablation.flags(),
                                   longest, K.DEFER_WINDOW_LAMBDAS * float(self.lambda_n))
        # the queue's keys are bounds b + b0 (with requirements they add what is owed, which Lemma 2's
        # lambda in _queue_lower_bound would count twice)
        self.keys_bound = self.policy_id == K.LOWER_BOUND and not requirements.count
        # prefixes taken out of a full queue are made again by their parents, as deferred children are
        self.regenerate = self.keys_bound and self.lambda_n > 0 and ablation.deferred_children is not False
        # the best list seen that misses a requirement, and its length: completed into an incumbent
        self.free_best = np.array([np.inf, 0.0])
        self.free_prefix = np.zeros(m + 1, np.int64)
        self.kernel_requirements = (requirements.masks, requirements.rules_needed, self.free_best, self.free_prefix)
        # a batch's records and scratch take at most a share of what the search may hold
        slots = K.batch_size(m, self.counting.bits.shape[1], batch_memory(self.budget))
        self.batch = K.batch(m, slots)
        self.state.room = m + 1  # an expansion's children and its prefix queued again (a batch takes what fits)
        self.scratch = workspace(self.counting, 4 * max(self.threads, 1), slots=self.batch.nodes.shape[0])
        charge_batch(self.budget, self.batch, self.scratch)
        # a child's sub-conjunctions, for the sibling dominance (the kernel uses it on two-class counts
        # without requirements)
        self.subsets = (problem.subconjunctions()
                        if ablation.sibling_dominance and not problem.weighted and not requirements.count
                        else (np.zeros(m + 1, np.int64), np.zeros(0, np.int64)))

    def _arguments(self, max_pops: int, threads: int) -> tuple:
        state = self.state
        return (max_pops, expansions_left(self.max_nodes, state), self.counting, self.settings, self.kernel_requirements,
                self.zobrist, self.subsets,
                state.tree(), state.node_mistakes, state.node_b0, state.frontier(), state.progress(), self.scratch,
                self.batch, threads)

    def _expand(self) -> None:
        state, budget, lambda_n = self.state, self.budget, self.lambda_n
        # the curiosity dive: once, after CURIOSITY_DIVE_AFTER of the time left now, in the lower-bound
        # order with a time limit and no node budget (a search bounded by nodes stays the same on any machine)
        self.time_left = budget.remaining()
        if not (self.policy != "lower_bound" or self.time_left is None or self.time_left <= 0
                or self.max_nodes is not None):
            self.dive_at = time.perf_counter() + CURIOSITY_DIVE_AFTER * self.time_left
        _summary(state, lambda_n, self.keys_bound)  # its kernel compiled (or loaded) before the search's takes numba's lock
        set_aside = (lambda: _set_aside(state, budget, lambda_n, self.keys_bound, self.regenerate,
                                        self.map_id != K.MAP_NONE)) if self.ablation.set_aside else None
        self.outcome = drive(
            self._slice, state,
            lambda elapsed: _record(self.trace, state, elapsed, lambda_n, self.n, self.m, self.progress,
                                    self.keys_bound),
            budget, self.max_nodes, self.trace_interval, self.trace, drop_when_full=True, set_aside=set_aside,
            compile_kernel=lambda: compile_for(K.expand, *self._arguments(0, 0)),
        )

    def _slice(self, max_pops: int) -> int:
        """Up to ``max_pops`` expansions by the kernel (the curiosity dive first when its time has come);
        a list the requirements forbid is offered completed as the incumbent."""
        if max_pops > 0 and self.dive_at is not None and time.perf_counter() >= self.dive_at:
            self._dive()
        code = self.kernel(max_pops)
        if self.free_best[1]:
            # a good list the requirements forbid: its admissible completion may be a better incumbent
            _offer_completion(self.problem, self.state, self.requirements, self.free_prefix[:int(self.free_best[1])],
                              self.max_length)
            self.free_best[1] = 0
        return code

    def _dive(self) -> None:
        self.dive_at = None
        started = time.perf_counter()
        prefix = _curiosity_dive(self.problem, self.budget, CURIOSITY_DIVE_SHARE * self.time_left, self.state.best(),
                                 map_type=self.map_type, ablation=self.ablation, max_length=self.max_length,
                                 required=self.requirements, n_jobs=self.n_jobs, _groups=self.groups)
        if prefix is not None:  # (None: not run)
            self.dive_seconds = time.perf_counter() - started
            value = self.problem.cost(prefix)
            if value < float(self.state.floats[0]):
                self.state.set_incumbent(value, prefix)
                self.state.ints[IMPROVED] = 1
                self.dive_improved = 1

    # -- phase 4 ------------------------------------------------------------------------------------
    def certify(self) -> SearchResult:
        state, problem, n, lambda_n = self.state, self.problem, self.n, self.lambda_n
        status = self.outcome.status
        if status != OPTIMAL:  # one scan of the queue, for the status and the bound
            queue_bound = _queue_lower_bound(state, lambda_n, _summary(state, lambda_n, self.keys_bound))
            status = proven_status(status, queue_bound, float(state.floats[0]))
        prefix = state.best()
        mistakes = problem.mistakes(prefix)
        best_objective = objective(mistakes, len(prefix), n, problem.regularization)
        if status == OPTIMAL:
            lower_bound = best_objective
        else:
            lower_bound = min(best_objective, queue_bound / n)
            if self.free is not None:  # admissible lists are lists: none beats the unconstrained bound
                lower_bound = min(best_objective, max(lower_bound, self.free.certificate.lower_bound))
        counters = {
            "total_time": self.outcome.total_time,
            "time_to_optimum": self.outcome.time_to_optimum,
            **state.counters(),
            "optimal_prefix_length": len(prefix),
            "compile_time": self.outcome.compile_time,
            "curiosity_dive_seconds": self.dive_seconds,
            "curiosity_dive_improved": self.dive_improved,
            "threads": self.kernel.used,
            "policy": self.policy,
            "map_type": self.map_type,
        }
        result = SearchResult(prefix, best_objective,
                              Certificate(status, best_objective, lower_bound, counters, self.trace,
                                          BRANCH_AND_BOUND), mistakes)
        expanded = int(state.ints[EXPANDED])
        if (status == MEMORY_BUDGET and not self.budget.stopped() and not self.requirements.count
                and float(state.floats[0]) < problem.cost(self.incumbent) - 1e-9 * n  # (not a rounding: weighted sums)
                and (self.max_nodes is None or expanded < int(self.max_nodes))):
            # the queue drained for want of memory before the time ran out, with a better list than the
            # search started from: search again from it, which prunes from the first expansion (monks-3
            # 0.005 with 30 MB: drained in 11.7 s with bound 0.0446, list 0.0514; again from that list,
            # certified in 14.7 s)
            self.state = self.scratch = state = None  # (the arrays go before the next search's are made)
            again = search(problem, self.policy, self.map_type, self.ablation,
                           None if self.max_nodes is None else int(self.max_nodes) - expanded, warm_start=False,
                           initial_prefix=[prefix], trace_interval=self.trace_interval, progress=self.progress,
                           budget=self.budget, max_length=self.max_length, n_jobs=self.n_jobs, _groups=self.groups)
            return _searched_again(result, again)
        return result


#: counters that add up over a search and its searches again from a better list (the others: the last's,
#: or the largest for sizes)
_ADDED_COUNTERS = ("total_time", "compile_time", "nodes_expanded", "lower_bound_evaluations", "queue_insertions",
                   "expansions_with_children", "prefixes_dropped", "prefixes_set_aside", "leaves_resolved",
                   "reexpansions", "dominated_children", "curiosity_dive_seconds")
_LARGEST_COUNTERS = ("max_queue_size", "max_prefix_length", "memory_bytes", "threads")


def _searched_again(first: SearchResult, again: SearchResult) -> SearchResult:
    """One result for a search and the search run again from its list: the second's list, the larger
    of the two lower bounds (each bounds the same optimum), optimal when it reaches the list; counters
    added up (``searches_again`` counts the runs after the first), the traces one after the other (the
    second's bound never below the first's final one)."""
    one, two = first.certificate, again.certificate
    lower_bound = max(one.lower_bound, two.lower_bound)
    status = OPTIMAL if two.status == OPTIMAL or lower_bound >= two.objective else two.status
    lower_bound = two.objective if status == OPTIMAL else min(lower_bound, two.objective)
    counters = dict(two.counters)
    for name in _ADDED_COUNTERS:
        counters[name] = one.counters.get(name, 0) + two.counters.get(name, 0)
    for name in _LARGEST_COUNTERS:
        counters[name] = max(one.counters.get(name, 0), two.counters.get(name, 0))
    counters["time_to_optimum"] = (one.counters["total_time"] + two.counters["time_to_optimum"]
                                   if two.objective < one.objective else one.counters["time_to_optimum"])
    counters["searches_again"] = one.counters.get("searches_again", 0) + 1 + two.counters.get("searches_again", 0)
    shift, first_trace, trace = one.counters["total_time"], one.trace, two.trace
    trace = Trace(first_trace.time + [shift + t for t in trace.time], first_trace.objective + trace.objective,
                  first_trace.lower_bound + [min(best, max(lower, one.lower_bound))
                                             for best, lower in zip(trace.objective, trace.lower_bound)],
                  first_trace.queue_by_length + trace.queue_by_length,
                  first_trace.log10_remaining + trace.log10_remaining)
    certificate = Certificate(status, two.objective, lower_bound, counters, trace, BRANCH_AND_BOUND)
    return SearchResult(again.solution, again.objective, certificate, again.mistakes)


#: the share of the live queue (largest bounds first) set aside each time the memory budget is reached
SET_ASIDE_SHARE = 0.25
#: the time a setting aside takes, a node and queue entry, with a margin: measured 40-50 ns (2.5-2.9 s for
#: house_votes' 36.5M prefixes at 2 GB, 0.6 s for monks-2's 6M at 300 MB)
SET_ASIDE_SECONDS_PER_ENTRY = 1e-7
#: the most bins of the histogram over the queue's bounds that places the cut of kernel.set_aside
SET_ASIDE_BINS = 1024
#: a setting aside must free at least this share of the node arrays, or the search drops children instead
SET_ASIDE_MIN_FREED = 1 / 16
#: the scratch of _set_aside a node (bytes, rounded up): three bits, for compact's bitset of kept nodes
#: and their counts a word, and for set_aside's bitset of prefixes to queue again
SET_ASIDE_SCRATCH_PER_NODE = 1


def _set_aside(state: SearchState, budget: Budget, lambda_n: float, keys_bound: bool, regenerate: bool,
               map_in_use: bool) -> bool:
    """The memory budget is reached: take the queued prefixes of largest bound (about SET_ASIDE_SHARE
    of the queue) out of it, free their nodes and go on queueing (:func:`kernel.set_aside`: with
    ``regenerate`` their parents make them again in their turn, else their smallest bound joins the
    lower bound; when that frees too little, the top quarter of the whole queue, queued-again prefixes
    included, is dropped with its smallest bound). False when even that frees too little: the search
    then drops the children it would queue (:data:`optrules._numba.MEMORY_FULL`).

    Dropping children from the first time the memory is full bounds them all by about the queue's
    smallest bound at that time, and the lower bound stops there: on monks-2 (lambda 0.01, 300 MB) at
    0.1573 after 25 of 60 s."""
    words = (int(state.ints[N_NODES]) + 63) // 64
    # the cut's histogram: fine enough to cut near SET_ASIDE_SHARE, within the room of a few queue entries
    bins = int(np.clip(state.ints[HEAP_SIZE] // 16, 16, SET_ASIDE_BINS))
    scratch = state.compaction_bytes() + 8 * words + 8 * (bins + 1)
    if not budget.fits(scratch):
        return False

    def arguments(requeue, counts, regenerate):
        return (state.heap_key, state.heap_node, state.node_parent, state.node_dead, state.node_mistakes, state.node_b0,
                state.node_depth, lambda_n, keys_bound, regenerate, SET_ASIDE_SHARE, state.ints, state.floats, requeue,
                counts)

    def compile_all():
        compile_for(K.set_aside, *arguments(np.zeros(1, np.uint64), np.zeros(2, np.int64), regenerate))
        state.compile_compaction()

    # compiled within the budget (~2 s on a cold cache), and not begun without the time to finish
    if not compiled_in_time(compile_all, budget):
        return False
    left = budget.remaining()
    if left is not None and left < SET_ASIDE_SECONDS_PER_ENTRY * int(state.ints[N_NODES] + state.ints[HEAP_SIZE]):
        return False
    budget.charge("setting aside", scratch)
    try:
        requeue, counts = np.zeros(words, np.uint64), np.zeros(bins + 1, np.int64)
        K.set_aside(*arguments(requeue, counts, regenerate))
        # (prefixes replaced in the map are freed too, whether or not any was taken out)
        enough = max(SET_ASIDE_MIN_FREED * state.node_parent.shape[0], 1)
        freed = state.compact(map_in_use)
        if freed < enough:  # the prefixes done with fill the memory: the map forgets them
            freed += state.compact(map_in_use, keep_closed=False)
        if freed < enough and regenerate:
            # the queue itself fills the memory (its prefixes and those queued again for the children they
            # make anew): its top quarter is dropped, bounded by its smallest bound, which is far above
            # what dropping children from now on would leave (about the queue's smallest bound)
            requeue[:] = 0
            K.set_aside(*arguments(requeue, counts, False))
            freed += state.compact(map_in_use, keep_closed=False)
        del requeue, counts
    finally:
        budget.release("setting aside")
    return freed >= enough


def _offer_completion(problem: Problem, state: SearchState, requirements: Requirements, prefix,
                      max_length: int | None) -> None:
    """Make the admissible completion of ``prefix`` the incumbent if it beats it (only the incumbent's
    quality depends on this; the certificate never does)."""
    completed = requirements.completed([int(a) for a in prefix], max_length, problem.cost)
    value = problem.cost(completed)
    if value < float(state.floats[0]):
        state.set_incumbent(value, completed)
        state.ints[IMPROVED] = 1


# Thm 15's map (keyed on the samples a prefix captures) merges more prefixes than Cor 16's (keyed on its
# antecedents) but hashes a vector per queued child and compares vectors on a hit: measured (docs/corels.md,
# "Performance"), it pays up to ~130 words per vector (monks-3 2 words 34 -> 15 s, COMPAS 4 words 20.6 ->
# 16.3 s, car 27 words and mushroom 126 words a little better) and loses at 704 (bank-full: half the
# expansions in the same time).
CAPTURED_MAP_MAX_WORDS = 64


def _resolved_map(map_type: str, n_words: int, requirements) -> str:
    """``auto``: the captured-set map when the capture vectors (over groups of samples) have few words
    and there are no requirements (which it cannot serve), else the antecedent-set map."""
    if map_type != "auto":
        return map_type
    return "captured" if n_words <= CAPTURED_MAP_MAX_WORDS and not requirements.count else "prefix"


def _before_search(problem: Problem, initial_prefix, budget: Budget, root_b0: float, policy, map_type,
                   max_length: int | None = None, requirements: Requirements | None = None):
    """The best of the empty list and the given prefixes, with the root's bound (Thm 20) as the
    certified lower bound: what a fit returns when its budget ran out before the search began."""
    prefix = _initial_incumbent(problem, False, initial_prefix, budget, max_length, requirements)
    mistakes = problem.mistakes(prefix)
    best = objective(mistakes, len(prefix), problem.total_weight, problem.regularization)
    # every admissible list has at least the rules the requirements need
    shortest = 0 if requirements is None else requirements.shortest()
    lower_bound = min(best, (root_b0 + problem.lambda_n * shortest) / problem.total_weight)
    return SearchResult(prefix, best, unsearched_certificate(best, lower_bound, budget, len(prefix), policy=policy,
                                                             map_type=map_type), mistakes)


def unmined_result(y, sample_weight, n_classes: int, regularization: float, budget: Budget,
                   proven: bool = False) -> SearchResult:
    """The list of no rule: with lower bound 0 when the fit's budget ended before it had an antecedent
    (:meth:`optrules.base.RuleModelEstimator._mine`), so that no bound over antecedents applies; certified
    optimal when ``proven``: mining found no antecedent within the supports Theorems 10 and 21 allow an
    optimal list's (so the optimal list has no rule)."""
    class_totals = np.bincount(np.asarray(y, dtype=np.int64), weights=sample_weight, minlength=n_classes)
    mistakes = class_totals.sum() - class_totals.max()
    best = objective(mistakes, 0, float(class_totals.sum()), regularization)
    if proven:
        return SearchResult((), best, Certificate(OPTIMAL, best, best, unsearched_counters(0), Trace(), BRANCH_AND_BOUND),
                            mistakes)
    return SearchResult((), best, unsearched_certificate(best, 0.0, budget, 0), mistakes)


def _queue_lower_bound(state: SearchState, lambda_n: float, summary) -> float:
    """Smallest bound (mistake units) on any list not yet evaluated: every such list extends a queued
    prefix by at least one rule, so it costs at least b(d_p) + b0(d_p) + lambda*N (Lemma 2, Thm 20);
    ``summary``: :func:`_summary`'s."""
    smallest, _, _ = summary
    # prefixes dropped once the memory budget was reached are bounded alike, by their smallest bound
    return min(smallest, state.dropped_floor()) + lambda_n


def _summary(state: SearchState, lambda_n: float, keys_bound: bool):
    """The queue's smallest bound, its prefixes by length, Theorem 7's histogram (``keys_bound``: the
    queue's keys are bounds, see :func:`~optrules.corels.kernel.queue_summary`)."""
    m = state.best_prefix.shape[0] - 1
    by_length = np.zeros(m + 1, np.int64)
    longest = min(int(state.ints[MAX_LENGTH]), m)
    # Theorem 4: no list in the queue can grow beyond floor(R* / lambda) rules
    largest_budget = m if lambda_n <= 0 else min(m, int(float(state.floats[0]) // lambda_n))
    remaining = np.zeros((longest + 1, largest_budget + 1), np.int64)
    smallest = K.queue_summary(
        state.heap_key, state.heap_node, int(state.ints[HEAP_SIZE]), state.node_dead, state.node_mistakes,
        state.node_b0, state.node_depth, lambda_n, float(state.floats[0]), m, keys_bound, by_length, remaining,
    )
    return smallest, by_length, remaining


def _record(trace: Trace, state: SearchState, elapsed: float, lambda_n: float, n: int, m: int, progress,
            keys_bound: bool):
    """Appends a trace point; returns the progress callback's answer (:data:`~optrules.budget.STOP`)."""
    summary = _summary(state, lambda_n, keys_bound)
    _, by_length, remaining = summary
    best = float(state.floats[0])
    lower = min(best, _queue_lower_bound(state, lambda_n, summary))
    longest = int(np.flatnonzero(by_length).max()) + 1 if by_length.any() else 1
    # Theorem 7 counts the queue's remaining space; that of prefixes dropped or set aside is unknown
    space = log10_remaining_space(remaining, m) if not (state.ints[DROPPED] or state.ints[SET_ASIDE]) else float("nan")
    trace.append(elapsed, best / n, lower / n, by_length[:longest], space)
    if progress is not None:
        return progress(trace, ProgressEvent.from_trace(trace, state.ints[EXPANDED], PREFIXES, by_length.sum()))
    return None
