"""The certified search for the best rule list under a fairness constraint.

Lists are ordered rules over mined antecedents, each rule *and* the default free to predict either class
(under a constraint the majority label of what a rule captures is no longer always best: predicting its
minority can be what makes a list fair). The objective is CORELS's, mistakes / N + lambda x rules; a list
counts only when its unfairness (:mod:`optrules.fairness.metrics`) is at most ``eps`` on the training
rows, decided exactly. Best-first branch-and-bound over prefixes of (antecedent, label) pairs:

* a prefix's lists cost at least its mistakes, the equivalent points' mistakes left in what it leaves
  uncaptured, and lambda per rule (Angelino et al. 2018, Theorems 1 and 20: both hold for any labels of
  the rules, so under any constraint); a proper extension costs lambda more (Lemma 2);
* a list of K rules costs at least lambda K, so no list longer than the incumbent's objective / lambda is
  searched (Theorem 4, which needs nothing of the labels either);
* feasibility: whatever a prefix's extensions predict, each cell's predicted-positive weight lies between
  what the prefix predicts positive and that plus the cell's uncaptured weight; when even the fairest
  point of that box is more unfair than ``eps``, no extension is feasible (a relaxation: it only prunes
  what no list can make fair);
* the fair completion's mistakes (:meth:`FairListSearch.completion_bound`): every list predicts the rows
  that all antecedents capture alike (a signature) alike, so a prefix's lists predict each uncaptured
  signature 0 or 1; the linear relaxation, each signature predicted positive in a share x in [0, 1],
  mistakes minimized with each rate gap the metric reads within ``eps``, is a fractional knapsack (one
  linear constraint a rate: solved greedily by cost per unit of gap) and bounds the prefix's lists from
  below; for equalized odds the larger of the two single-rate relaxations (each relaxes the pair).
The CORELS bounds that assume majority labels (the support bounds, Theorems 10, 11 and 21) and the
symmetry maps (Theorem 15, Corollary 16: two orders of one antecedent set predict alike only with
majority labels) are not used. The list predicting one class everywhere is fair under every metric, so the
search starts from a feasible incumbent.
"""

from __future__ import annotations

import heapq
import itertools
import time
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from ..budget import Budget
from ..certificate import BRANCH_AND_BOUND, GAP, INTERRUPTED, MEMORY_BUDGET, NODE_BUDGET, OPTIMAL, TIME_BUDGET, Certificate, Trace
from ..solve import Solver, SolveResult
from .metrics import RATES, within

#: the constrained searches' statuses as a certificate's
STATUS = {"optimal": OPTIMAL, "node_budget": NODE_BUDGET, "time_budget": TIME_BUDGET, "interrupted": INTERRUPTED,
          "memory_budget": MEMORY_BUDGET, "gap": GAP}

#: rates closer to the bound than this are decided by the exact test (floats only prune with a margin)
TOLERANCE = 1e-9
#: what a queued prefix costs besides its uncaptured signatures (one bit each): its tuple, bounds, labels
#: and cell weights, as Python holds them (measured ~0.6 KB)
ENTRY_BYTES = 640
#: the name the queue is charged under in the fit's memory budget
QUEUE = "fair search queue"
#: antecedents x signatures read in one product when a prefix's children are counted (its float copy: 8 MB)
SLICE_CELLS = 1 << 20


@dataclass
class FairSearchResult:
    """The best feasible list found: ``prefix`` (antecedent indices), ``labels`` (each rule's class, then
    the default's), its ``objective``, the proven ``lower_bound`` over every feasible list, the search's
    ``status`` (optimal, node_budget, time_budget, interrupted) and counters."""

    prefix: list[int]
    labels: list[int]
    objective: float
    lower_bound: float
    status: str
    counters: dict = field(default_factory=dict)


class FairListSearch:
    """One constrained search: set up from the captures (``(A, n)`` bool), labels ``y`` (0/1), the
    ``group`` of each row (0/1), weights (None: 1 each), lambda, the metric and ``eps`` (a Fraction); then
    :meth:`run` within ``max_nodes`` (prefixes expanded) and ``time_limit`` seconds.

    The search reads the rows through their signatures (the rows every antecedent captures alike, which
    every list predicts alike): each signature's weight in each cell (group x true label) is all it needs,
    and a prefix's uncaptured rows are a set of signatures."""

    def __init__(self, captures, y, group, regularization: float, metric: str, eps: Fraction,
                 sample_weight=None, max_length: int | None = None):
        self.row_captures = np.asarray(captures, dtype=bool)
        self.y = np.asarray(y).astype(np.int64)
        self.group = np.asarray(group).astype(np.int64)
        self.sample_weight = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
        weights = np.ones(self.y.shape[0]) if self.sample_weight is None else self.sample_weight
        self.regularization, self.metric, self.eps = float(regularization), metric, eps
        self.n_antecedents = self.row_captures.shape[0]
        self.max_length = self.n_antecedents if max_length is None else min(int(max_length), self.n_antecedents)
        self.total_weight = float(weights.sum())
        n = self.y.shape[0]
        keys = np.packbits(self.row_captures.T, axis=1) if self.n_antecedents else np.zeros((n, 1), np.uint8)
        first, signature = np.unique(keys, axis=0, return_index=True, return_inverse=True)[1:]
        signature = signature.ravel()
        # cells: (S, 4), each signature's weight in cell 2 g + y; captures: (A, S)
        self.cells = np.zeros((first.shape[0], 4))
        np.add.at(self.cells, (signature, 2 * self.group + self.y), weights)
        self.captures = self.row_captures[:, first]
        self.total = self.cells.sum(axis=0).reshape(2, 2)
        self.wrong_if_0 = self.cells[:, 1] + self.cells[:, 3]  # its positives
        self.wrong_if_1 = self.cells[:, 0] + self.cells[:, 2]  # its negatives
        self.minor = np.minimum(self.wrong_if_0, self.wrong_if_1)  # Theorem 20: wrong in every list
        # per rate the metric reads: the signature's share of the gap (group 1's rate minus group 0's) when
        # predicted positive, and each group's scale (1 / the weight the rate divides by)
        self.scales, self.effects = [], []
        for labels in RATES[metric]:
            cells = list(labels)
            whole = self.total[:, cells].sum(axis=1)
            scale = np.where(whole > 0, 1.0 / np.where(whole > 0, whole, 1.0), 0.0)
            self.scales.append((cells, scale))
            self.effects.append(self.cells[:, [2 + c for c in cells]].sum(axis=1) * scale[1]
                                - self.cells[:, cells].sum(axis=1) * scale[0])

    # -- a node: (prefix, labels, uncaptured signatures, mistakes, predicted-positive weight of each cell) --
    def _gaps(self, positive: np.ndarray) -> list[float]:
        """Each rate's gap (group 1's minus group 0's) of the predicted-positive weights ``positive`` (2 x 2)."""
        return [float(positive[1, cells].sum() * scale[1] - positive[0, cells].sum() * scale[0])
                for cells, scale in self.scales]

    def _feasible_close(self, prefix, labels, uncaptured, positive, mistakes, default):
        """The objective of the prefix closed by ``default`` when it is fair (exactly), else None."""
        left = self.cells[uncaptured].sum(axis=0).reshape(2, 2)
        closed = positive + (left if default == 1 else 0.0)
        mistakes = mistakes + float(left[:, 1 - default].sum())
        objective = mistakes / self.total_weight + self.regularization * len(prefix)
        gap = max(abs(g) for g in self._gaps(closed))
        if gap > float(self.eps) + TOLERANCE:
            return None
        if gap >= float(self.eps) - TOLERANCE and not self._exactly_within(prefix, labels + [default]):
            return None
        return objective

    def predictions(self, prefix, labels) -> np.ndarray:
        """The list's prediction (bool) for each training row."""
        return list_predictions(self.row_captures, prefix, labels)

    def _exactly_within(self, prefix, labels) -> bool:
        return within(self.y, self.group, self.sample_weight, self.predictions(prefix, labels), self.metric, self.eps)

    def completion_bound(self, uncaptured: np.ndarray, positive: np.ndarray) -> float:
        """The least mistakes (weight) on the ``uncaptured`` signatures of any prediction, each signature
        predicted positive in a share x in [0, 1] (the relaxation), whose rate gaps, with what the prefix
        predicts positive (``positive``, 2 x 2), are each within ``eps``; inf when none is."""
        best = 0.0
        for gap, effect in zip(self._gaps(positive), self.effects):
            best = max(best, _fractional_knapsack(self.wrong_if_0[uncaptured], self.wrong_if_1[uncaptured],
                                                  effect[uncaptured], gap, float(self.eps) + TOLERANCE))
            if best == np.inf:
                break
        return best

    def run(self, max_nodes: int | None = None, time_limit: float | None = None, should_stop=None,
            memory=None) -> FairSearchResult:
        """Search within ``max_nodes`` prefixes expanded, ``time_limit`` seconds, until ``should_stop()``,
        and with the queue charged to ``memory`` (a :class:`~optrules.budget.Budget`): a prefix whose
        children would pass it is queued again and the search ends (``memory_budget``), its bound kept."""
        started = time.perf_counter()
        deadline = None if time_limit is None else started + float(time_limit)
        everyone = np.ones(self.cells.shape[0], dtype=bool)
        # the incumbent: one class everywhere (fair under every metric)
        best_objective, best = np.inf, ([], [0])
        for default in (0, 1):
            objective = self._feasible_close([], [], everyone, np.zeros((2, 2)), 0.0, default)
            if objective is not None and objective < best_objective:
                best_objective, best = objective, ([], [default])
        tie = itertools.count()
        root_bound = float(self.minor.sum()) / self.total_weight
        # entries: (bound, tie, tight, prefix, labels, uncaptured, mistakes, positive); a node is queued on
        # its cheap bound, and when it comes first its completion bound is worked out and it is queued again
        # on that (tight): the queue stays ordered by the best bound known of each node
        queue = [(root_bound, next(tie), False, (), (), np.packbits(everyone), 0.0, np.zeros((2, 2)))]
        self._memory, self._entry_bytes = memory, ENTRY_BYTES + (everyone.shape[0] + 7) // 8
        expanded = evaluated = pruned = 0
        status = "optimal"
        while queue:
            entry = heapq.heappop(queue)
            bound, _, tight, prefix, labels, packed, mistakes, positive = entry
            uncaptured = np.unpackbits(packed, count=everyone.shape[0]).astype(bool)
            if bound >= best_objective - TOLERANCE / self.total_weight:
                continue
            if max_nodes is not None and expanded >= max_nodes:
                status = "node_budget"
            elif deadline is not None and time.perf_counter() > deadline:
                status = "time_budget"
            elif should_stop is not None and should_stop():
                status = "interrupted"
            if status != "optimal":
                heapq.heappush(queue, entry)
                break
            if not tight:
                completion = self.completion_bound(uncaptured, positive)
                tightened = (mistakes + completion) / self.total_weight + self.regularization * len(prefix)
                if tightened >= best_objective - TOLERANCE / self.total_weight:
                    pruned += 1
                else:
                    heapq.heappush(queue, (max(bound, tightened), next(tie), True) + entry[3:])
                continue
            expanded += 1
            for default in (0, 1):
                objective = self._feasible_close(list(prefix), list(labels), uncaptured, positive, mistakes, default)
                if objective is not None and objective < best_objective:
                    best_objective, best = objective, (list(prefix), list(labels) + [default])
            if len(prefix) >= self.max_length or self.regularization * (len(prefix) + 1) >= best_objective:
                continue
            pushed = self._push_children(queue, tie, prefix, labels, uncaptured, mistakes, positive, best_objective)
            if pushed is None:  # its children would pass the memory budget: it waits in the queue, unexpanded
                heapq.heappush(queue, entry)
                status = "memory_budget"
                break
            evaluated += pushed
        lower_bound = min([best_objective] + [entry[0] for entry in queue if entry[0] < best_objective])
        if status == "optimal":
            lower_bound = best_objective
        if memory is not None:
            memory.release(QUEUE)
        counters = {"nodes_expanded": expanded, "children_evaluated": evaluated, "pruned_by_completion": pruned,
                    "time": time.perf_counter() - started, "queue_left": len(queue) if status != "optimal" else 0}
        return FairSearchResult(best[0], best[1], float(best_objective), float(lower_bound), status, counters)

    def _push_children(self, queue, tie, prefix, labels, uncaptured, mistakes, positive, best_objective) -> int | None:
        """Queue each child (prefix + (a, label)) whose bound may beat ``best_objective`` and whose
        extensions may still be fair; returns how many children were evaluated, or None (nothing queued)
        when the queue with them would pass the memory budget."""
        in_prefix = np.zeros(self.n_antecedents, dtype=bool)
        in_prefix[list(prefix)] = True
        left = np.flatnonzero(uncaptured)
        weights = np.column_stack([self.cells[left], self.minor[left]])  # (S left, 4 cells + equivalent points)
        # what each antecedent captures of them, in slices of antecedents: the product casts its booleans
        # to floats, which for every antecedent at once took 8 bytes an antecedent and a signature
        step = max(1, SLICE_CELLS // max(1, left.size))
        captured_weights = np.concatenate([self.captures[a:a + step][:, left] @ weights
                                           for a in range(0, self.n_antecedents, step)])
        # (no signature weighs 0: rows of zero weight are left out of the fit)
        candidates = np.flatnonzero(~in_prefix & (captured_weights[:, :4].sum(axis=1) > 0))
        if candidates.size == 0:
            return 0
        rule_cells = captured_weights[candidates, :4].reshape(-1, 2, 2)  # (C, group, label) the rule captures
        rest = self.cells[uncaptured].sum(axis=0).reshape(2, 2) - rule_cells  # left after it
        minor_left = float(self.minor[uncaptured].sum()) - captured_weights[candidates, 4]
        k = len(prefix) + 1
        margin = TOLERANCE / self.total_weight
        children = []
        for label in (0, 1):
            child_mistakes = mistakes + rule_cells[:, :, 1 - label].sum(axis=1)
            bound = (child_mistakes + minor_left) / self.total_weight + self.regularization * k
            child_positive = positive + (rule_cells if label == 1 else np.zeros_like(rule_cells))
            unfair = self._least_unfairness(child_positive, child_positive + rest)
            keep = (bound < best_objective - margin) & (unfair <= float(self.eps) + TOLERANCE)
            children += [(label, c, bound, child_mistakes, child_positive) for c in np.flatnonzero(keep)]
        if self._memory is not None:
            need = (len(queue) + len(children)) * self._entry_bytes
            if not self._memory.fits(need, replacing=QUEUE):
                return None
            self._memory.charge(QUEUE, need)
        for label, c, bound, child_mistakes, child_positive in children:
            heapq.heappush(queue, (float(bound[c]), next(tie), False, prefix + (int(candidates[c]),), labels + (label,),
                                   np.packbits(uncaptured & ~self.captures[candidates[c]]), float(child_mistakes[c]),
                                   child_positive[c]))
        return 2 * candidates.size

    def _least_unfairness(self, low: np.ndarray, high: np.ndarray) -> np.ndarray:
        """The smallest unfairness of any predicted-positive weights between ``low`` and ``high`` ((C, 2, 2):
        group x true label), each cell chosen freely, for C boxes at once: each rate's two intervals as close
        as they come; the rates of equalized odds read disjoint cells, so their closest points are apart."""
        worst = np.zeros(low.shape[0])
        for cells, scale in self.scales:
            lo = low[:, :, cells].sum(axis=2) * scale
            hi = high[:, :, cells].sum(axis=2) * scale
            worst = np.maximum(worst, np.maximum(lo[:, 0] - hi[:, 1], lo[:, 1] - hi[:, 0]))
        return worst

@dataclass(frozen=True)
class FairListSettings:
    """What one constrained list search is asked for: lambda, the metric and its bound ``eps`` (a Fraction),
    the longest list, and the prefixes it may expand."""

    regularization: float
    metric: str
    eps: Fraction
    max_length: int | None = None
    max_nodes: int | None = None


class FairListSolver(Solver):
    """:class:`FairListSearch` as a :class:`~optrules.solve.Solver`: the budget's time, memory and stop
    request hold it, and it returns a :class:`~optrules.solve.SolveResult` (``solution``: the antecedent
    indices; ``details["labels"]``: each rule's class, then the default's).

    1. :meth:`prepare`: the search over the rows' signatures (``engine``).
    3. :meth:`search`: its best-first search within the budget (``found``).
    4. :meth:`certify`: the list and its certificate.
    """

    method = BRANCH_AND_BOUND

    def __init__(self, captures, y, group, sample_weight=None, *, settings: FairListSettings, budget: Budget,
                 progress=None):
        super().__init__(settings=settings, budget=budget, progress=progress)
        self.captures, self.y, self.group, self.sample_weight = captures, y, group, sample_weight

    def prepare(self) -> None:
        s = self.settings
        self.engine = FairListSearch(self.captures, self.y, self.group, s.regularization, s.metric, s.eps,
                                     self.sample_weight, s.max_length)

    def search(self) -> None:
        # (the time limit is the search's own: should_stop hears only a cancel, or a budget's time running out
        # would end the search as "interrupted" when it reads the clock first)
        self.found = self.engine.run(max_nodes=self.settings.max_nodes, time_limit=self.budget.remaining(),
                                     should_stop=self.budget.cancelled, memory=self.budget)

    def certify(self) -> SolveResult:
        found = self.found
        counters = {"total_time": found.counters["time"], **found.counters}
        return SolveResult(tuple(found.prefix), found.objective,
                           Certificate(STATUS[found.status], found.objective, found.lower_bound, counters, Trace(),
                                       BRANCH_AND_BOUND), details={"labels": tuple(found.labels)})

    def unsearched(self) -> SolveResult:
        """One class everywhere, the one of fewer mistakes that meets the constraint (both do when no group is
        empty of a rate's rows), with 0 as its bound."""
        y = np.asarray(self.y).astype(np.int64)
        weights = np.ones(len(y)) if self.sample_weight is None else np.asarray(self.sample_weight, dtype=np.float64)
        s = self.settings
        fair = [label for label in (0, 1)
                if within(y, np.asarray(self.group), self.sample_weight, np.full(len(y), bool(label)), s.metric, s.eps)]
        default = min(fair or [0], key=lambda label: float(weights[y != label].sum()))
        objective = float(weights[y != default].sum() / weights.sum())
        status = INTERRUPTED if self.budget.interrupted else TIME_BUDGET
        return SolveResult((), objective, Certificate(status, objective, 0.0, {"nodes_expanded": 0}, Trace(),
                                                      BRANCH_AND_BOUND), details={"labels": (default,)})


def list_predictions(captures, prefix, labels) -> np.ndarray:
    """A list's prediction (bool) for each row of ``captures`` (antecedents x rows): each rule's label for
    the rows it captures first, the default's (``labels[-1]``) for the rest."""
    predicted = np.full(captures.shape[1], bool(labels[-1]))
    left = np.ones(captures.shape[1], dtype=bool)
    for a, label in zip(prefix, labels):
        captured = left & captures[a]
        predicted[captured] = bool(label)
        left &= ~captured
    return predicted


def _fractional_knapsack(wrong_if_0: np.ndarray, wrong_if_1: np.ndarray, effect: np.ndarray, start: float,
                         eps: float) -> float:
    """min sum_s wrong_if_0[s] + x_s (wrong_if_1[s] - wrong_if_0[s]) over x in [0, 1]^S with
    |start + sum_s x_s effect[s]| <= eps (inf when no x meets it): from each item's cheaper side, the gap
    is moved back within eps by the moves of least cost per unit of gap, the last one in part."""
    cheaper_1 = wrong_if_1 < wrong_if_0
    value = float(np.minimum(wrong_if_0, wrong_if_1).sum())
    gap = start + float(effect[cheaper_1].sum())
    if abs(gap) <= eps:
        return value
    need = abs(gap) - eps
    sign = 1.0 if gap > 0 else -1.0
    # a move lowers sign * gap: an item at 1 with sign * effect > 0 goes to 0, one at 0 with sign * effect < 0
    # goes to 1; its cost per unit is |wrong_if_0 - wrong_if_1| / |effect|
    signed = sign * effect
    movable = np.where(cheaper_1, signed > 0, signed < 0)
    capacity = np.abs(effect[movable])
    cost = np.abs(wrong_if_0 - wrong_if_1)[movable]
    if capacity.sum() < need:
        return np.inf
    order = np.argsort(cost / capacity, kind="stable")
    taken = np.cumsum(capacity[order])
    whole = int(np.searchsorted(taken, need))  # items order[:whole] moved whole, order[whole] in part
    moved = float(cost[order[:whole]].sum())
    before = float(taken[whole - 1]) if whole > 0 else 0.0
    moved += cost[order[whole]] * (need - before) / capacity[order[whole]]
    return value + moved
