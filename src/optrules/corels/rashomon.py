"""The Rashomon set of rule lists: every list whose objective is within epsilon of the optimum.

Definition (issue 18). Over a problem's antecedents, a *list* is an ordered sequence of distinct
antecedents in which every rule captures at least one sample no earlier rule captured; each rule and
the default predict the (weighted) majority of what they capture. Its objective is
R(d) = mistakes/N + lambda*K. The Rashomon set is every list with R(d) <= R* + epsilon, R* the optimum.
Lists that differ only in order are different members.

How it is enumerated, and why that is complete
----------------------------------------------
*The suffixes of a prefix depend only on what it leaves uncaptured.* An antecedent already in a prefix
captures nothing the prefix leaves, so it can never be a later rule of a list (each rule must capture
something new); the lists that continue a prefix are therefore the lists of the uncaptured set U alone.
The search is a graph over uncaptured sets: a node is a set U, an edge from U is an antecedent capturing
part of it (cost lambda*N + the mistakes of its rule), and a list is a path from the root (every sample)
followed by the default rule at its last node. Prefixes that are permutations of each other (or of
different antecedents capturing the same samples) meet at one node, whose continuations are searched
once: this is how the set's symmetries are handled.

Nodes are expanded best first on ``reach + b0(U)``: ``reach`` is the cheapest cost of a path to U and
b0(U) the minority weight of the groups of identical samples in U (Theorem 20: no list separates them).
The order is consistent (an edge raises it by at least lambda*N), so a node is expanded once, at its
cheapest reach, with the largest remaining allowance any path has. Two bounds prune, both re-derived for
the set rather than reused from the search for one optimum:

* :func:`equivalent_points_reach_bound`: a path to U' followed by anything costs at least
  ``reach(U') + b0(U')``; beyond ``N (R* + epsilon)`` it leads to no member.
* :func:`rashomon_accurate_support_bound` (Theorem 11 for the set): in a member, every rule classifies
  at least ``N (lambda - epsilon)`` of its captured weight correctly; otherwise removing the rule gives
  a list better than R* (proof in the function). Prunes only when epsilon < lambda.

Neither needs R* itself: with any upper bound UB >= R* as the budget ``N (UB + epsilon)`` the graph
holds every list of objective <= UB + epsilon, among them an optimal one, so R* is the smallest
objective found and the members are then filtered exactly. On a budget (time, nodes, memory, Ctrl-C) the
nodes left unexpanded bound what may be missing: a list not enumerated extends one of them (whose own
list is enumerated) and costs at least its ``reach + b0 + lambda N``, so the set is certified complete
below the smallest of those.

Counting without listing: each node keeps the number of its continuations per (number of rules,
mistakes), computed children first (a child has fewer groups than its parent); the root's table gives
the size of the set for any epsilon, and uniform samples walk down the tables.

The graph and the tables are flat arrays filled by compiled code (:mod:`optrules.corels.rashomon_kernel`):
85 bytes an uncaptured set (besides its heap and map entries) and 20 an edge, its sets never stored but
rebuilt from the chain of
antecedents that first reached them, as the branch-and-bound stores prefixes.
"""

from __future__ import annotations

import bisect
import math
import random
import time
from collections import defaultdict
from dataclasses import dataclass
from typing import Iterator

import numpy as np

from .._numba import EXPANDED, HEAP_SIZE, N_NODES
from ..bnb import (
    SCRATCH,
    STATE,
    Outcome,
    ThreadedKernel,
    batch_memory,
    charge_batch,
    drive,
    expansions_left,
    threads_for,
)
from ..budget import Budget, as_budget, check_budget_values
from ..certificate import ENUMERATION, INTERRUPTED, OPTIMAL, TIME_BUDGET, Certificate, Trace
from ..data.groups import GROUPING, PACK_LIMIT, group_samples, grouping_bytes, pack_weights
from ..solve import Solver, SolveResult
from . import rashomon_kernel as K
from .problem import Problem
from .rashomon_kernel import COUNT_LIMIT, EDGE_FIELDS, NODE_FIELDS, TABLE_FIELDS, RashomonState, count_tables
from .requirements import Requirements

#: share of the memory allowance the graph may fill; the rest is kept for the tables counted after it
GRAPH_SHARE = 0.7
#: share of the time left kept for counting the tables after the search (measured: ~11% of the search time
#: on a raw table with 33k antecedents, 10.8M uncaptured sets)
TABLE_TIME_SHARE = 0.15
#: counting a large graph can take ten times its search (COMPAS, epsilon 50%: 25 s for 1.6M nodes found
#: in 3 s): counting that passes the deadline (or a stop request) gives up, and the lists within a
#: quarter of the epsilon are counted instead, and so on, within this grace; epsilon 0 at the end
COUNTING_GRACE = 0.5
#: positions of the counting done between two looks at the clock
COUNTING_STEPS = 2048
#: members drawn between two looks at a sample's budget
SAMPLE_CHECK = 64


def check_epsilon(epsilon) -> float:
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float, np.floating, np.integer)):
        raise ValueError(f"epsilon must be a number >= 0, got {epsilon!r}")
    epsilon = float(epsilon)
    if not math.isfinite(epsilon) or epsilon < 0:
        raise ValueError(f"epsilon must be a finite number >= 0, got {epsilon}")
    return epsilon


def equivalent_points_reach_bound(reach, b0, allowance):
    """Every list through a node of uncaptured minority weight b0 reached at cost ``reach`` costs at least
    reach + b0 (Theorem 20: each group of identical samples is captured whole by one rule or the default,
    so its minority is always misclassified); the node can hold a member only if that is within the
    allowance N (R* + epsilon)."""
    return reach + b0 <= allowance


def lookahead_bound(reach, b0, lambda_n, allowance):
    """Extensions of a node add at least one rule and misclassify its b0 (Lemma 2 with Theorem 20): the
    node is worth expanding only if reach + lambda*N + b0 fits the allowance."""
    return reach + lambda_n + b0 <= allowance


def rashomon_excessive_support_bound(weight_left_correctable, lambda_n, epsilon_n):
    """Theorem 21 for the Rashomon set: after each rule of a member, the samples left uncaptured hold at
    least N (lambda - epsilon) of weight that some list could classify correctly (their weight minus
    b0, the minority of their groups of identical samples).

    Proof: cut member d just before rule j and let the default predict rule j's class: on what j
    captures nothing changes, and only what d classified correctly after j (at most the weight left
    after j minus its b0) can turn into mistakes, while at least one rule is saved. So
    R* <= R(cut) <= R(d) + left_correctable/N - lambda <= R* + epsilon + left_correctable/N - lambda."""
    return weight_left_correctable >= lambda_n - epsilon_n


def rashomon_accurate_support_bound(n_correct, lambda_n, epsilon_n):
    """Theorem 11 for the Rashomon set: a member's every rule classifies at least N (lambda - epsilon)
    of its captured weight correctly.

    Proof: remove rule j from a member d (later rules capture more and re-choose their majority, which
    never adds mistakes); with j's old predictions kept, only j's correct captures can turn into
    mistakes, so R(d without j) <= R(d) + correct_j/N - lambda. As R(d without j) >= R* and
    R(d) <= R* + epsilon, correct_j >= N (lambda - epsilon). The removed list is a list of the same
    antecedents with fewer rules, so the bound holds under a cap on the number of rules too."""
    return n_correct >= lambda_n - epsilon_n


class _Graph:
    """The explored graph of uncaptured sets, read from the kernel's arrays (see
    :mod:`optrules.corels.rashomon_kernel`)."""

    def __init__(self, state: RashomonState, complete: int):
        n = int(state.ints[N_NODES])
        self.n_nodes, self.n_edges = n, int(state.n_edges[0])
        self.reach, self.fewest = state.node_reach[:n], state.node_fewest[:n]  # cheapest cost, fewest rules in
        self.defaults, self.default_classes = state.node_default[:n], state.node_default_class[:n]
        self.expanded = state.node_dead[:n]
        self.edge_start, self.edge_count = state.node_edge_start[:n], state.node_edge_count[:n]
        self.coverage, self.complete = state.node_coverage[:n], complete  # the requirements met on the way in
        order = state.node_order[:int(state.ints[EXPANDED])]  # the expanded nodes, in expansion order
        # children first: a child's uncaptured set is a strict subset of its parent's
        self.children_first = order[np.argsort(state.node_groups[order], kind="stable")]
        e = self.n_edges
        self.edge_arrays = tuple(getattr(state, name)[:e] for name in EDGE_FIELDS)

    def edges(self, node: int) -> list[tuple[int, float, int, int]]:
        """(antecedent, mistakes of its rule, its class, child) of each edge out of ``node``."""
        span = slice(int(self.edge_start[node]), int(self.edge_start[node]) + int(self.edge_count[node]))
        return list(zip(*(array[span].tolist() for array in self.edge_arrays)))

    def default_mistakes(self, node: int) -> float:
        return float(self.defaults[node])

    def ends_lists(self, node: int) -> bool:
        """May a list end at ``node`` (its default next)? Only when its way in met every requirement."""
        return int(self.coverage[node]) == self.complete

    def default_class(self, node: int) -> int:
        return int(self.default_classes[node])


@dataclass
class _Tables:
    """Per node, its continuations counted per (rules, mistakes): entries ``start[node] ..
    start[node] + length[node]`` of ``rules``, ``mistakes``, ``count``; ``cheapest[node]`` the smallest
    cost among them."""

    start: np.ndarray
    length: np.ndarray
    rules: np.ndarray
    mistakes: np.ndarray
    count: np.ndarray
    cheapest: np.ndarray

    def entries(self, node: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        span = slice(int(self.start[node]), int(self.start[node]) + int(self.length[node]))
        return self.rules[span], self.mistakes[span], self.count[span]

    @property
    def n_entries(self) -> int:
        return int(self.length.sum())


def _exact_sum(counts: np.ndarray) -> int:
    """The sum of int64 counts as a Python integer (no overflow however many there are)."""
    if counts.size == 0:
        return 0
    if int(counts.max()) <= COUNT_LIMIT // counts.size:
        return int(counts.sum())
    return sum(int(c) for c in counts)


@dataclass(frozen=True)
class Member:
    """One list of a Rashomon set: its antecedents (indices), the class each rule and the default
    predict, mistakes and objective."""

    prefix: tuple[int, ...]
    predictions: tuple[int, ...]  # class index of each rule, then of the default
    mistakes: float
    objective: float

    @property
    def n_rules(self) -> int:
        return len(self.prefix)


@dataclass
class Enumeration:
    """The explored graph with every node's table of continuations: the raw form of a Rashomon set."""

    graph: _Graph
    tables: _Tables
    total_weight: float
    lambda_n: float
    epsilon: float
    longest: int
    optimum: float  # smallest objective found (R* when ``complete_below`` exceeds it)
    complete_below: float  # every list of smaller objective is in the graph (inf: every list)
    status: str
    counters: dict

    @property
    def tolerance(self) -> float:
        return 1e-9 * max(1.0, self.total_weight)

    @property
    def allowance(self) -> float:
        """N (R* + epsilon) in mistake units."""
        return (self.optimum + self.epsilon) * self.total_weight + self.tolerance

    def cost(self, rules: int, mistakes: float) -> float:
        return mistakes + self.lambda_n * rules

    def _limit(self, epsilon: float | None) -> float:
        epsilon = self.epsilon if epsilon is None else min(check_epsilon(epsilon), self.epsilon)
        return (self.optimum + epsilon) * self.total_weight + self.tolerance

    def count(self, epsilon: float | None = None) -> int:
        """How many lists have objective <= R* + epsilon (default: the enumeration's epsilon)."""
        return self._continuations(0, self.longest, self._limit(epsilon))

    def objective_counts(self) -> dict[float, int]:
        """Number of members at each objective value (rounded to 12 decimals)."""
        counts: dict[float, int] = defaultdict(int)
        for k, m, n in zip(*(array.tolist() for array in self.tables.entries(0))):
            if k <= self.longest and self.cost(k, m) <= self.allowance:
                counts[round(self.cost(k, m) / self.total_weight, 12)] += n
        return dict(sorted(counts.items()))

    def members(self, epsilon: float | None = None) -> Iterator[Member]:
        """Every member (within ``epsilon``, at most the set's, of R*), depth first (each prefix before
        its extensions)."""
        graph, cheapest = self.graph, self.tables.cheapest
        allowance = self._limit(epsilon)

        def visit(node: int, prefix: tuple, classes: tuple, mistakes: float):
            default = graph.default_mistakes(node)
            if graph.ends_lists(node) and self.cost(len(prefix), mistakes + default) <= allowance:
                yield self._ending(node, prefix, classes, mistakes)
            if len(prefix) >= self.longest:
                return
            for antecedent, rule_mistakes, rule_class, child in graph.edges(node):
                if self.cost(len(prefix) + 1, mistakes + rule_mistakes) + cheapest[child] <= allowance:
                    yield from visit(child, prefix + (antecedent,), classes + (rule_class,), mistakes + rule_mistakes)

        yield from visit(0, (), (), 0.0)

    def _ending(self, node: int, prefix: tuple, classes: tuple, mistakes: float) -> Member:
        """The member of ``prefix`` (reaching ``node`` with ``mistakes``) followed by the node's default."""
        total = mistakes + self.graph.default_mistakes(node)
        return Member(prefix, classes + (self.graph.default_class(node),), total,
                      self.cost(len(prefix), total) / self.total_weight)

    def _continuations(self, node: int, rules_left: int, allowance_left: float) -> int:
        rules, mistakes, count = self.tables.entries(node)
        return _exact_sum(count[(rules <= rules_left) & (mistakes + self.lambda_n * rules <= allowance_left)])

    def sample(self, n_samples: int, rng: np.random.Generator, budget: Budget | None = None) -> list[Member]:
        """``n_samples`` members drawn uniformly at random (with replacement): each step down the graph
        chooses the default or an edge in proportion to the members below it (exact integers: a set may
        hold more than 2^63 members). The choices at a (node, rules, mistakes) are counted once. A
        ``budget`` that ends (asked every :data:`SAMPLE_CHECK` draws) leaves fewer, as uniform."""
        if self.count() == 0:
            return []
        graph, choices = self.graph, {}
        draw = random.Random(int(rng.integers(2**63))).randrange

        def options(node: int, rules: int, mistakes: float) -> tuple[list, list]:
            key = (node, rules, mistakes)
            if key not in choices:
                left = self.allowance - self.cost(rules, mistakes)
                edges, cumulative = [None], [1 if graph.ends_lists(node) and graph.default_mistakes(node) <= left else 0]
                if rules < self.longest:
                    for edge in graph.edges(node):
                        below = self._continuations(edge[3], self.longest - rules - 1, left - self.lambda_n - edge[1])
                        if below:
                            edges.append(edge)
                            cumulative.append(cumulative[-1] + below)
                choices[key] = (edges, cumulative)
            return choices[key]

        drawn = []
        for k in range(int(n_samples)):
            if k and k % SAMPLE_CHECK == 0 and budget is not None and budget.stopped():
                break
            node, prefix, classes, mistakes = 0, (), (), 0.0
            while True:
                edges, cumulative = options(node, len(prefix), mistakes)
                edge = edges[bisect.bisect_right(cumulative, draw(cumulative[-1]))]
                if edge is None:
                    drawn.append(self._ending(node, prefix, classes, mistakes))
                    break
                antecedent, rule_mistakes, rule_class, node = edge
                prefix, classes, mistakes = prefix + (antecedent,), classes + (rule_class,), mistakes + rule_mistakes
        return drawn


def enumerate_rashomon(problem: Problem, epsilon: float, upper_bound: float, max_length: int | None = None,
                       max_nodes: int | None = None, time_limit: float | None = None, max_memory: int | None = None,
                       budget: Budget | None = None, requirements: Requirements | None = None,
                       n_jobs: int | None = None) -> Enumeration:
    """Every list of ``problem`` with objective <= R* + ``epsilon``, as an :class:`Enumeration`
    (:class:`RashomonEnumeration`'s solution).

    ``upper_bound`` is the objective of any list (e.g. the certified optimum of a fit): the smaller, the
    less is explored; R* is found by the enumeration itself. ``max_length`` restricts the set to lists
    of at most that many rules, ``requirements`` to lists holding an antecedent of each required group
    (R* is then the best such list's objective). Budgets as for :func:`optrules.corels.search.search`; when one stops the
    enumeration, ``complete_below`` says below which objective the set is certified complete. ``n_jobs``:
    the threads the enumeration runs on (:func:`~optrules.bnb.threads_for`); the graph, the set and its
    counts are the same for every ``n_jobs``.
    """
    epsilon = check_epsilon(epsilon)
    upper_bound = float(upper_bound)
    if not math.isfinite(upper_bound):
        raise ValueError(f"upper_bound must be the objective of a list, got {upper_bound}")
    check_budget_values(max_nodes=max_nodes)
    settings = RashomonSettings(epsilon, upper_bound, max_length, max_nodes, requirements, n_jobs)
    return RashomonEnumeration(problem, settings=settings, budget=as_budget(budget, time_limit, max_memory)).solve().solution


@dataclass(frozen=True)
class RashomonSettings:
    """What one enumeration is asked for (:func:`enumerate_rashomon`'s arguments, checked there)."""

    epsilon: float
    upper_bound: float
    max_length: int | None = None
    max_nodes: int | None = None
    requirements: Requirements | None = None
    n_jobs: int | None = None


class RashomonEnumeration(Solver):
    """One enumeration of :func:`enumerate_rashomon`, in the :class:`~optrules.solve.Solver`'s phases; its
    result's ``solution`` is the :class:`Enumeration`, its certificate's bound the smaller of the best
    objective found and the objective below which the set is complete (no list outside it costs less).

    1. :meth:`prepare`: the samples grouped (``groups``), their weights packed when whole, charged.
    2. :meth:`start`: the graph's ``state``, its root (every sample) queued, the pruning ``limits``.
    3. :meth:`search`: the kernel driven in slices to the budget, a share of the time and memory kept for
       the tables: ``outcome``.
    4. :meth:`certify`: the bound on every list left out (``unexplored``), the graph, its tables counted
       (a smaller epsilon when counting them passes the budget) and the :class:`Enumeration`.

    A stop before the search counts the root alone (its own list, the empty one): the set is then
    complete below no list but the root's bound.
    """

    method = ENUMERATION

    def __init__(self, problem: Problem, *, settings: RashomonSettings, budget: Budget, progress=None):
        super().__init__(settings=settings, budget=budget, progress=progress)
        self.problem = problem
        self.started = time.perf_counter()
        self.n, self.lambda_n = problem.total_weight, problem.lambda_n
        self.tolerance = 1e-9 * max(1.0, self.n)
        self.allowance = (settings.upper_bound + settings.epsilon) * self.n + self.tolerance
        self.longest = (problem.n_antecedents if settings.max_length is None
                        else min(int(settings.max_length), problem.n_antecedents))
        self.requirements = settings.requirements or Requirements.none(problem.n_antecedents)

    # -- phase 1 ------------------------------------------------------------------------------------
    def prepare(self) -> None:
        problem, budget = self.problem, self.budget
        budget.require("grouping", grouping_bytes(problem.bits, problem.n_samples), GROUPING)
        self.groups = groups = group_samples(problem.bits, problem.y, problem.minor,
                                             class_weights=problem.class_weights(), signatures=problem.signatures())
        budget.release("grouping")
        bits, class_weights, minority_weights = groups.bits, groups.class_weights, groups.minority_weights
        budget.charge("rashomon problem", bits.nbytes + class_weights.nbytes + minority_weights.nbytes)
        packed = np.zeros(0, np.int64)
        if problem.sample_weight is None and class_weights.shape[1] == 2 and self.n < PACK_LIMIT:  # whole weights
            sizes, positives = class_weights.sum(axis=1), class_weights[:, 1]
            packed = pack_weights(sizes.astype(np.int64), positives.astype(np.int64),
                                  minority_weights.astype(np.int64), bits.shape[1])
        self.counting = (bits, groups.all_ones, class_weights, minority_weights, packed)

    # -- phase 2 ------------------------------------------------------------------------------------
    def start(self) -> None:
        groups, problem = self.groups, self.problem
        self.state = RashomonState(groups.bits.shape[0])
        totals = groups.class_weights.sum(axis=0)
        majority = int(np.argmax(totals))
        self.state.push_root(float(groups.minority_weights.sum()), float(totals.sum() - totals[majority]), majority,
                             groups.n_groups)
        # the support bounds (Theorems 11 and 21 for the set) prune only when epsilon < lambda
        self.limits = np.array([self.lambda_n, self.settings.epsilon * self.n, self.allowance, self.tolerance,
                                1.0 if self.settings.epsilon < problem.regularization else 0.0])

    # -- phase 3 ------------------------------------------------------------------------------------
    def search(self) -> None:
        budget, bits = self.budget, self.groups.bits
        n_antecedents, n_classes = bits.shape[0], self.groups.class_weights.shape[1]
        # a batch's records and scratch take at most a share of what the enumeration may hold
        slots = K.batch_size(n_antecedents, bits.shape[1], n_classes, batch_memory(budget))
        self.batch, self.scratch = K.batch(n_antecedents, bits.shape[1], n_classes, slots)
        charge_batch(budget, self.batch, self.scratch)
        self.kernel = ThreadedKernel(K.expand, K.expand_parallel, threads_for(self.settings.n_jobs), self._arguments)
        # what the graph may fill leaves room for the tables; and time for counting them
        budget.charge("rashomon tables", int((1 - GRAPH_SHARE) * budget.allowance("rashomon tables")))
        with budget.holding_back(TABLE_TIME_SHARE):
            self.outcome = drive(self.kernel, self.state, lambda elapsed: None, budget, self.settings.max_nodes)
        budget.release("rashomon tables")

    def _arguments(self, max_pops: int, threads: int) -> tuple:
        state, requirements = self.state, self.requirements
        nodes = tuple(getattr(state, name) for name in NODE_FIELDS)
        edges = tuple(getattr(state, name) for name in EDGE_FIELDS)
        return (max_pops, expansions_left(self.settings.max_nodes, state), self.counting, self.limits, self.longest,
                (requirements.masks, requirements.rules_needed), state.tree(), state.frontier(), state.ints,
                (nodes, edges, state.n_edges), self.batch, self.scratch)

    def unsearched(self) -> SolveResult:
        """The root alone (the phases before the search are what a set needs to say anything), counted."""
        for phase in ("prepare", "start"):
            if phase not in self.ran:
                getattr(self, phase)()
        self.kernel = None
        self.outcome = Outcome(INTERRUPTED if self.budget.interrupted else TIME_BUDGET, 0.0, 0.0, 0.0)
        return self.certify()

    # -- phase 4 ------------------------------------------------------------------------------------
    def certify(self) -> SolveResult:
        state, budget, outcome, n, lambda_n = self.state, self.budget, self.outcome, self.n, self.lambda_n
        settings, longest, tolerance = self.settings, self.longest, self.tolerance
        # every list not in the graph extends a node left unexpanded by the budget (the node's own list, its
        # default next, is in the graph): it costs at least the node's reach + b0 (its key in the queue), plus
        # lambda N for each rule it adds, at least one and those that complete the requirements
        unexplored = math.inf
        if outcome.status != OPTIMAL:
            size = int(state.ints[HEAP_SIZE])
            keys, nodes = state.heap_key[:size], state.heap_node[:size]
            live = (~state.node_dead[nodes] & (keys <= state.node_reach[nodes] + state.node_b0[nodes] + tolerance)
                    & (state.node_fewest[nodes] < longest))
            rules_added = np.maximum(1, self.requirements.rules_needed[state.node_coverage[nodes]])
            unexplored = float((keys + lambda_n * rules_added)[live].min(initial=math.inf))
        # the heap and the map are not needed any more
        state.heap_key, state.heap_node, state.map_slots = np.empty(0), np.empty(0, np.int32), np.empty(0, np.int32)
        budget.charge(STATE, state.nbytes)
        graph = _Graph(state, self.requirements.complete)
        tables, counted_epsilon = _count_in_time(graph, settings.upper_bound, settings.epsilon, n, tolerance, lambda_n,
                                                 longest, budget)
        status = outcome.status
        if counted_epsilon < settings.epsilon:  # the set counted is the smaller one: complete below its allowance
            status = INTERRUPTED if budget.interrupted else TIME_BUDGET
            unexplored = min(unexplored, (settings.upper_bound + counted_epsilon) * n)
        rules, mistakes, _ = tables.entries(0)
        best = float((mistakes + lambda_n * rules).min(initial=math.inf))
        counters = {"nodes": graph.n_nodes, "expansions": int(state.ints[EXPANDED]), "edges": graph.n_edges,
                    "table_entries": tables.n_entries, "graph_bytes": int(state.nbytes),
                    "compile_time": outcome.compile_time, "time": time.perf_counter() - self.started,
                    "threads": 0 if self.kernel is None else self.kernel.used}
        enumeration = Enumeration(graph=graph, tables=tables, total_weight=n, lambda_n=lambda_n,
                                  epsilon=counted_epsilon, longest=longest, optimum=best / n,
                                  complete_below=unexplored / n, status=status, counters=counters)
        for name in ("rashomon problem", STATE, "rashomon tables", SCRATCH):
            budget.release(name)
        lower = min(enumeration.optimum, enumeration.complete_below)
        return SolveResult(enumeration, enumeration.optimum,
                           Certificate(status, enumeration.optimum, lower, counters, Trace(), ENUMERATION))


class _OutOfTime(Exception):
    """Counting the tables passed its deadline."""


def _count_in_time(graph, upper_bound, epsilon, n, tolerance, lambda_n, longest, budget):
    """``(tables, epsilon counted)``: the tables of the lists within ``epsilon`` of ``upper_bound``, or,
    when counting them passes the budget's deadline or its memory (or a stop request comes), of a
    smaller epsilon (a quarter, and so on, within :data:`COUNTING_GRACE`; at last 0, the best lists
    only, whose tables are small)."""
    if budget.interrupted:  # stopped before counting: a short time for the whole set
        deadline = time.perf_counter() + 0.5 * COUNTING_GRACE
    else:
        deadline = budget.deadline
    was_interrupted = budget.interrupted
    while True:
        def out_of_time(deadline=deadline) -> bool:
            return ((deadline is not None and time.perf_counter() > deadline)
                    or (not was_interrupted and budget.cancelled()))
        try:
            allowance = (upper_bound + epsilon) * n + tolerance
            return _count_tables(graph, allowance, lambda_n, longest, budget, out_of_time if epsilon > 0 else None), epsilon
        except (_OutOfTime, MemoryError):  # (memory: the tables' arrays would pass the budget)
            budget.release("rashomon tables")
            was_interrupted = budget.interrupted
            if deadline is None or deadline > time.perf_counter():  # a stop request: the grace starts now
                deadline = time.perf_counter()
            deadline = min(deadline + COUNTING_GRACE, time.perf_counter() + COUNTING_GRACE)
            epsilon = epsilon / 4 if epsilon * n / 4 > max(tolerance, 0.5 * lambda_n) else 0.0


def _count_tables(graph: _Graph, allowance: float, lambda_n: float, longest: int, budget: Budget,
                  out_of_time=None) -> _Tables:
    """Each node's continuations (the default, or an edge then a continuation of its child) that fit the
    allowance left after the node's cheapest reach, counted per (rules, mistakes); children first. The
    arrays grow within the memory budget (a clear MemoryError past it); :class:`_OutOfTime` when
    ``out_of_time()`` says so between steps."""
    n = graph.n_nodes
    start, length = np.zeros(n, np.int64), np.zeros(n, np.int64)
    cheapest = np.full(n, math.inf)
    capacity = max(1024, 2 * n)
    tables = tuple(np.zeros(capacity, dtype) for dtype in TABLE_FIELDS.values())
    scratch = tuple(np.zeros(1024, dtype) for dtype in TABLE_FIELDS.values())
    used = np.zeros(1, np.int64)
    nodes = (graph.reach, graph.fewest, graph.defaults, graph.edge_start, graph.edge_count, graph.coverage)
    position = 0
    width = sum(np.dtype(d).itemsize for d in TABLE_FIELDS.values())

    def charge():
        total = sum(a.nbytes for a in tables + scratch) + start.nbytes + length.nbytes + cheapest.nbytes
        if not budget.fits(total, replacing="rashomon tables"):
            raise MemoryError(f"counting the Rashomon set needs more than {total / 2**20:,.0f} MB, past the memory "
                              f"budget of {budget.max_memory / 2**20:,.0f} MB ({budget.used / 2**20:,.0f} MB in use): "
                              "raise max_memory, or lower epsilon")
        budget.charge("rashomon tables", total)

    charge()
    while True:
        if out_of_time is not None and out_of_time():
            raise _OutOfTime
        position, status = count_tables(position, COUNTING_STEPS,
                                        (n, graph.children_first, graph.complete, graph.expanded),
                                        (allowance, lambda_n, longest), nodes, graph.edge_arrays, tables,
                                        (start, length, cheapest, used), scratch)
        if status == 0:
            break
        if status == 3:
            continue
        if status == 2:
            raise OverflowError("a Rashomon set this large has continuations past 2^62 at one node, too many to count "
                                "exactly here: lower epsilon or set max_rules")
        node = position if position < n else int(graph.children_first[position - n])
        children = graph.edge_arrays[3][graph.edge_start[node]:graph.edge_start[node] + graph.edge_count[node]]
        need = 1 + int(length[children].sum())
        if need > scratch[0].shape[0]:
            scratch = tuple(np.zeros(max(need, 2 * a.shape[0]), a.dtype) for a in scratch)
        if int(used[0]) + need > tables[0].shape[0]:
            size = max(int(used[0]) + need, int(1.5 * tables[0].shape[0]))
            if not budget.fits(sum(a.nbytes for a in tables) + size * width, replacing="rashomon tables"):
                size = int(used[0]) + need  # the least that goes on
            grown = []
            for old in tables:
                new = np.zeros(size, old.dtype)
                new[:old.shape[0]] = old
                grown.append(new)
            tables = tuple(grown)
        charge()
    e = int(used[0])
    return _Tables(start, length, *(array[:e] for array in tables), cheapest)

