"""Column generation for Boolean rule sets (Dash, Guenluek, Wei, NeurIPS 2018), then the restricted MIP.

1. Restricted master LP over the clauses generated so far (none at first: every positive is a mistake).
2. Price with the duals: the beam search first; when it finds nothing, the clauses a condition away
   from the master's clauses of reduced cost 0; when those find nothing, an exact pricing (time limit
   per call): branch-and-bound over conjunctions (rulesets/enumeration.py, the default) or the pricing
   IP on HiGHS, first over clauses of 1, 2, ... conditions (the shortest improving clauses), then over
   every clause. Every negative-reduced-cost clause found is added, unless a column with as few
   conditions covers the same rows.
3. Stop when the exact pricing proves no clause has negative reduced cost (the master LP is solved:
   ceil(z_MLP) bounds the optimum), or on the overall time limit.
4. Solve the restricted MIP over the generated clauses: the rule set.
5. When the LP is solved and the set is not proven optimal, for v = the lower bound, v + 1, ...: every
   clause whose reduced cost could fit a set of value <= v (:func:`_columns_below`), and the MIP over
   them too: it finds the optimum (and proves it) or proves the bound v + 1.

Certificate: after each exact pricing, the dual objective of the restricted master's duals made feasible
for every clause (:func:`~optrules.rulesets.bounds.weak_duality_bound`: sum(mu) - C (lambda + t), t from
the proven lower bound on the minimum reduced cost and the empty clause's own), rounded up when the
weights are integers; when the LP is solved this is ceil(z_MLP). A time-limited fit keeps a quarter of
its time for proving the last duals' bound (:func:`largest_ratio_bound`, in a thread beside the final MIP
and after it; the HiGHS pricing IP after it). The gap is
the rule set's objective minus that bound. The beam search may run on a random subsample of
samples (``max_pricing_samples``) and of features (``max_pricing_features``), as the paper does for large
data; clauses are always re-scored on all samples before they enter the master.

Budgets (a :class:`~optrules.budget.Budget`, or ``time_limit`` alone): the loop stops early enough to
leave the final MIP a share of the time (a twentieth, at least a second, at most a quarter; before its first
clause it may use that share and the certificate's); every HiGHS
solve is interrupted at its own deadline (HiGHS's ``time_limit`` alone overran by 1.5 s on raw COMPAS)
and, like the exact pricing, by Ctrl-C or a cancel; the master's columns and the pricing matrices are
charged to the memory account (generation stops, status ``memory budget``, when more would not fit).
When the MIP is cut short, a greedy choice among the generated clauses is kept if the MIP has no
solution or a worse one; after Ctrl-C or a cancel the MIP is skipped and the greedy choice returned.
``max_nodes`` bounds the exact pricing's work instead of (or beside) its time: the clauses its
branch-and-bound searches (the pricing IP's nodes) over the whole fit, which do not depend on the
machine; spent, generation stops (status ``node budget``) and the final MIP runs.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from ..budget import Budget, NodeBudget, StoppableThreads, as_budget
from ..certificate import COLUMN_GENERATION, GAP, INTERRUPTED, MEMORY_BUDGET, NODE_BUDGET, OPTIMAL, TIME_BUDGET, Certificate, Trace
from ..data import bitset
from ..solve import LP_SOLVES, ProgressEvent, Solver, SolveResult
from .bounds import complexity_or_implied, conflict_bound, largest_ratio_bound, weak_duality_bound
from .enumeration import PricingSearch
from .master import MasterProblem, highs_version
from .pricing import PricingBits, PricingData, beam_search, exact_pricing, neighbour_search
from .rows import _packed_columns, _pricing_sample, distinct_rows
from .selection import _clause_covers, _greedy_selection, _mistakes, _objective, _without_needless_conditions, _without_redundant_clauses
from .setsearch import best_set_below

_TOLERANCE = 1e-7
_CERTIFICATE_SHARE = 0.25  # of a time-limited fit, kept for proving the last duals' bound


#: what a rule set's column generation returns (:class:`~optrules.solve.SolveResult`: each clause's feature
#: indices as its ``solution``); the name its callers know
RuleSetResult = SolveResult


def _integral(*values) -> bool:
    return all(float(v).is_integer() for v in values)


@dataclass(frozen=True)
class ColumnGenerationSettings:
    """What a rule set's column generation is asked for (the estimator's parameters, checked there).

    ``complexity``: the bound on the set's clauses plus conditions; ``penalty``: the price of a clause
    and of each of its conditions, in weighted mistakes; ``max_degree``: conditions per clause, at most;
    ``positive_weight``/``negative_weight``: what a missed positive and a covered negative cost;
    ``pricing_time_limit``: seconds per exact pricing call (None: no limit); ``beam_width``,
    ``max_pricing_samples``, ``max_pricing_features``: the beam search's width and subsamples;
    ``exact``: the exact pricing (``True``/``"enumeration"``, ``"ip"``, or ``False``: none, and no proof
    that the master LP is solved); ``random_state``: the subsamples' and HiGHS's seed; ``max_nodes``:
    the exact pricing's work for the whole fit, in clauses searched (None: no limit)."""

    complexity: float = 30.0
    penalty: float = 0.0
    max_degree: int = 5
    positive_weight: float = 1.0
    negative_weight: float = 1.0
    pricing_time_limit: float | None = 30.0
    beam_width: int = 10
    exact: bool | str = True
    max_pricing_samples: int = 5000
    max_pricing_features: int = 2000
    random_state: int = 0
    max_nodes: int | None = None


def column_generation(
    features,
    y,
    complexity: float = 30.0,
    penalty: float = 0.0,
    max_degree: int = 5,
    positive_weight: float = 1.0,
    negative_weight: float = 1.0,
    time_limit: float = 120.0,
    pricing_time_limit: float = 30.0,
    beam_width: int = 10,
    exact: bool | str = True,
    max_pricing_samples: int = 5000,
    max_pricing_features: int = 2000,
    random_state: int = 0,
    progress=None,
    budget: Budget | None = None,
    sample_weight=None,
    chains=None,
    max_nodes: int | None = None,
    packed: bool = False,
    initial_clauses=(),
) -> RuleSetResult:
    """Learn a DNF rule set over the boolean ``features`` (samples x features) for 0/1 labels ``y``:
    :class:`ColumnGeneration` with these :class:`ColumnGenerationSettings`, and ``budget`` (a fit's) or
    ``time_limit`` alone. With ``time_limit`` and ``pricing_time_limit`` None, a fit bounded by
    ``max_nodes`` alone is deterministic: the same rule set and certificate on any machine, under any load.
    ``initial_clauses``: the master's first columns (feature indices)."""
    settings = ColumnGenerationSettings(complexity, penalty, max_degree, positive_weight, negative_weight,
                                        pricing_time_limit, beam_width, exact, max_pricing_samples,
                                        max_pricing_features, random_state, max_nodes)
    return ColumnGeneration(features, y, settings=settings, budget=as_budget(budget, time_limit),
                            sample_weight=sample_weight, chains=chains, packed=packed, progress=progress,
                            initial_clauses=initial_clauses).solve()


class ColumnGeneration(Solver):
    """One rule set's column generation, in the :class:`~optrules.solve.Solver`'s phases.

    ``features``: the boolean features (samples x features), or packed, one row of words a feature
    (``packed``; :func:`~optrules.data.bitset.pack_columns`), which the fit reads as they are; ``y``: 0/1
    labels; ``sample_weight`` multiplies each sample's class weight (a missed positive costs its weight,
    a covered negative its weight per covering clause); ``chains``: each feature's nesting chain (-1:
    none), e.g. :attr:`~optrules.data.Binarizer.chains_`, with which the exact pricing skips clauses with
    two features of one chain (they equal a shorter clause); ``progress(trace, event)`` (:mod:`optrules.solve`) hears each
    restricted LP (its ``KeyboardInterrupt`` stops the fit as Ctrl-C does); ``initial_clauses`` (feature
    indices) are the master's first columns (a smaller space's rule set: the MIP over them can return it).

    The phases and what each leaves on the instance:

    1. :meth:`prepare`: the distinct rows, their costs, the pricing data and the empty master.
    2. :meth:`start`: the given first columns (``initial_clauses``) in the master.
    3. :meth:`search` (:meth:`_generate`): restricted LPs priced until no clause improves, or the budget
       ends: ``clauses``, ``lp_value``, ``lp_bound`` (a proven lower bound), ``lp_solved``, ``last_duals``
       (``(mu, lam, unit price)`` of the last LP), ``to_certify`` (whether their bound is still to prove)
       and ``certificate_seconds``, ``status`` when a budget ended it.
    4. :meth:`certify`: :meth:`_solve_restricted_mip`: the MIP over the clauses (the certificate's search
       beside it, :meth:`_start_certificate`), then a greedy choice if better and needless clauses and
       conditions removed: ``chosen``, ``objective``, ``mip_bound``, ``mip_proven``; :meth:`_prove_bound`:
       the last duals' bound proven in the time kept for it: ``lp_bound``, and ``lp_solved`` when it
       proves them optimal; :meth:`_close_gap`: with the LP solved and the set not proven, the sets of
       value <= v over every clause that could be in one: ``chosen``, ``objective``, ``lp_bound``,
       ``gap_columns``; then the result.
    """

    method = COLUMN_GENERATION

    def __init__(self, features, y, *, settings: ColumnGenerationSettings, budget: Budget, sample_weight=None,
                 chains=None, packed: bool = False, progress=None, initial_clauses=()):
        super().__init__(settings=settings, budget=budget, progress=progress)
        self.exact_method = _exact_method(settings.exact)
        self.max_degree = feasible_degree(settings.max_degree, settings.complexity)
        self.pricing_time_limit = np.inf if settings.pricing_time_limit is None else settings.pricing_time_limit
        self.work = NodeBudget(settings.max_nodes)
        self.started = time.perf_counter()
        self.limit = budget.remaining()  # the time this stage has, or None
        # kept for the final MIP, and for proving the last duals' bound when generation runs out of time
        self.reserve = 0.0 if self.limit is None else min(0.25 * self.limit, max(1.0, 0.05 * self.limit))
        self.certificate_time = 0.0 if self.limit is None or not self.exact_method else _CERTIFICATE_SHARE * self.limit
        self.y = np.asarray(y).astype(bool)
        self.features = _packed_columns(features, len(self.y), packed)
        self.sample_weight = sample_weight
        self.chains = chains
        self.every_row = self.features, self.y
        self.trace = Trace()
        self.clauses: list[tuple[int, ...]] = []
        self.shortest: dict[bytes, int] = {}  # the fewest conditions of a column covering these rows (packed)
        self.status, self.stopped_by = TIME_BUDGET, None
        self.lp_solved, self.lp_bound = False, -np.inf
        self.iterations = self.exact_calls = self.searches = 0  # searches: exact ones, over shorter clauses too
        self.last_duals = self.last_search = None  # last_search: the branch-and-bound on the last duals
        self.priced_last_duals = 0.0  # the time an exact pricing of the last duals already had (the IP's)
        self.to_certify, self.certificate_seconds = False, 0.0
        self.out_of_time = False
        self.stalled = False  # generation ended as the LP tailed off (see _tailing_off)
        # (seconds, restricted LP value, exact pricing calls, exact searches over shorter clauses too) a solve
        self.lp_history: list[tuple[float, float, int, int]] = []
        self.certificate_outcome: list[tuple[bool, float]] = []  # the certificate's search: (finished, its price)
        self.gap_columns = None
        self.initial_clauses = [tuple(int(j) for j in clause) for clause in initial_clauses
                                if len(clause) <= self.max_degree]

    def unsearched(self) -> RuleSetResult:
        """The empty set, with the conflicting rows' bound when the rows were prepared (else 0)."""
        s, y, budget = self.settings, self.y, self.budget
        objective = float(s.positive_weight * (y.sum() if self.sample_weight is None else self.sample_weight[y].sum()))
        lower = min(max(self._proven_lower(), 0.0), objective) if "prepare" in self.ran else 0.0
        trace = Trace()
        trace.append(budget.elapsed(), objective, lower, [0], float("nan"))
        return RuleSetResult([], objective, Certificate(
            INTERRUPTED if budget.interrupted else TIME_BUDGET, objective, lower,
            _counters(time.perf_counter() - self.started, 0, 0, 0, 0, objective, False, 0.0, False, None, -np.inf, 0,
                      int(y.sum()), len(y)), trace, COLUMN_GENERATION))

    # -- phase 1 ------------------------------------------------------------------------------------
    def prepare(self) -> None:
        """Sets the distinct rows (``features``, ``y``, ``sample_weight``), each row's ``costs``,
        ``integral``, ``conflicts``, the pricing data (``full``: every row, packed; ``priced``: the
        beam's sample), ``positives`` and the empty ``master``."""
        s, budget = self.settings, self.budget
        features, y, sample_weight, groups, packed_rows = distinct_rows(self.features, self.y, self.sample_weight,
                                                                        feature_groups=True, packed=True)
        n_features = len(features)
        budget.require("distinct rows", packed_rows.nbytes + (0 if features is self.every_row[0] else features.nbytes),
                       "the distinct rows (samples x features, a bit each, by sample and by feature)")
        # what each sample costs when misclassified: its class's weight, times its own
        costs = np.where(y, float(s.positive_weight), float(s.negative_weight))
        if sample_weight is not None:
            costs = costs * sample_weight
        self.integral = _integral(s.penalty, *np.unique(costs))  # every set is worth a whole number
        # before generation, not after the MIP: on 700,000 rows it takes 1.6 s, which ran past the deadline
        self.conflicts = conflict_bound(groups, y, costs)
        self.rng = np.random.default_rng(s.random_state)
        self.sample = _pricing_sample(y, s.max_pricing_samples, self.rng)
        n_priced = len(y) if self.sample is None else len(self.sample)
        budget.require("pricing", n_features * (len(y) // 8 + 4 * n_priced),
                       "the pricing data (samples x features: a bit each, 4 bytes for the beam's samples)")
        self.full = PricingBits.from_rows(packed_rows, n_features, y, s.negative_weight, sample_weight=sample_weight,
                                          chains=self.chains)
        self.positives = np.flatnonzero(y)
        self.n_pos = len(self.positives)
        self.positive_costs = costs[self.positives] if sample_weight is not None else s.positive_weight
        self.master = MasterProblem(self.n_pos, s.complexity, self.positive_costs, seed=s.random_state,
                                    should_stop=budget.cancelled)
        priced = (self.full.unpacked() if self.sample is None else PricingData.from_features(
            bitset.unpack(packed_rows[self.sample], n_features), y[self.sample], s.negative_weight,
            sample_weight=None if sample_weight is None else sample_weight[self.sample]))
        self.priced = priced.as_floats()
        self.features, self.y, self.sample_weight, self.costs = features, y, sample_weight, costs
        self.lp_value = float(costs[y].sum())

    def _time_left(self, certificate: bool = False, everything: bool = False) -> float:
        """What generation has left: the budget's time less the MIP's share and (unless ``certificate``)
        the certificate's; ``everything``: all of it."""
        left = self.budget.remaining()
        if left is None:
            return np.inf
        return left if everything else left - self.reserve - (0.0 if certificate else self.certificate_time)

    def _coverage(self, clause):
        covered = bitset.intersection(self.features, clause, len(self.y))
        return bitset.unpack(covered, len(self.y)), covered.tobytes()

    def _fresh(self, candidates):
        """The candidates no column covers yet with as few conditions: a column may come back from
        pricing when the LP leaves it a hair below zero, within HiGHS's tolerances."""
        return [c for c in candidates if len(c) < self.shortest.get(self._coverage(c)[1], len(c) + 1)]

    def _add_columns(self, candidates) -> tuple[int, bool]:
        """Adds the candidates that no column covers with as few conditions: ``(how many, all fitted in
        memory)``."""
        added = 0
        master, budget = self.master, self.budget
        for clause in candidates:
            covered, key = self._coverage(clause)
            if len(clause) >= self.shortest.get(key, len(clause) + 1):
                continue
            covered_positives = np.flatnonzero(covered[self.positives])
            if not budget.fits(master.nbytes + 48 * (len(covered_positives) + 1) + len(key), replacing="master"):
                return added, False
            self.shortest[key] = len(clause)
            master.add_clause(float(self.costs[covered & ~self.y].sum()) + self.settings.penalty * (1 + len(clause)),
                              1 + len(clause), covered_positives)
            budget.charge("master", master.nbytes + len(self.shortest) * len(key))
            self.clauses.append(clause)
            added += 1
        return added, True

    def _report(self) -> bool:
        """Progress to the callback; whether it asked to stop (:data:`~optrules.budget.STOP`)."""
        if self.progress is None:
            return False
        return self.budget.hear(self.progress(
            self.trace, ProgressEvent.from_trace(self.trace, self.iterations, LP_SOLVES, len(self.clauses))))

    # -- phase 2 ------------------------------------------------------------------------------------
    def start(self) -> None:
        if self.initial_clauses and self.settings.complexity >= 2:
            self._add_columns(self.initial_clauses)

    # -- phase 3 ------------------------------------------------------------------------------------
    def search(self) -> None:
        self._generate()

    def _generate(self) -> None:
        """Restricted LPs, each priced (:meth:`_price`), until none improves or a budget ends; then
        whether the last duals' bound is still to prove (``certify``) and in how long."""
        budget = self.budget
        try:
            self._generation_loop()
            self.out_of_time = budget.expired() or self._time_left() <= 0
            # generation cut short leaves duals whose pricing was never finished (each call has
            # pricing_time_limit, and the next LP moves the duals on): beside and after the MIP, the time
            # kept for the certificate proves their bound
            self.to_certify = bool(self.exact_method) and not self.lp_solved and self.last_duals is not None
            self.certificate_seconds = (max(min(self._time_left(certificate=True), self.certificate_time), 0.0)
                                        if self.to_certify else 0.0)
        except KeyboardInterrupt:
            budget.interrupt()
        if budget.interrupted:
            self.status = INTERRUPTED
        elif self.stopped_by:
            self.status = self.stopped_by

    def _generation_loop(self) -> None:
        s, budget, limit = self.settings, self.budget, self.limit
        while True:
            if s.complexity < 2:
                self._without_conditions()
                break
            self.iterations += 1
            solved = self.master.solve_lp(None if limit is None else max(self._time_left(), 0.01))
            if solved is None:  # the LP itself ran out of time or was interrupted: keep the last bound
                self.iterations -= 1
                break
            self.lp_value, mu, lam = solved
            unit_price = s.penalty + lam
            self.last_duals, self.priced_last_duals, self.last_search = (mu, lam, unit_price), 0.0, None
            elapsed = time.perf_counter() - self.started
            self.lp_history.append((elapsed, self.lp_value, self.exact_calls, self.searches))
            self.trace.append(elapsed, self.lp_value, max(self.lp_bound, 0.0), [len(self.clauses)], float("nan"))
            self._report()
            # a fit left little time by its preparation (a million rows read in a 30 s budget: ~1 s) prices
            # once with the beam (0.1 s on its sample) while it has no clause, in the time kept for the MIP
            # and the certificate: without a clause there is no MIP, and a rule set comes before a certificate
            if self._time_left(everything=not self.clauses) <= 0 or budget.stopped():
                break
            if self.exact_method and limit is not None and _tailing_off(self.lp_history, limit):
                self.stalled = True  # the rest of the time proves these duals' bound (beside the MIP)
                break
            # creeping: one short search over every clause decides whether generation goes on (see _creeping)
            creeping = bool(self.exact_method) and limit is not None and _creeping(self.lp_history, limit)
            found = self._price(mu, unit_price, creeping)
            if not found:
                if self.lp_solved:
                    break
                if self.exact_method and self.work.exhausted:
                    self.stopped_by = NODE_BUDGET
                elif creeping and not budget.stopped():
                    self.stalled = True  # the rest of the time proves these duals' bound, as on a flat LP
                break  # heuristic pricing only, or the exact pricing ran out of time with nothing better
            added, fitted = self._add_columns(found)
            if not fitted:
                self.stopped_by = MEMORY_BUDGET
            if not added or self.stopped_by:
                break

    def _without_conditions(self) -> None:
        """No clause with a condition fits (complexity 1 + conditions): the empty set, or, within a bound
        of at least 1, the empty clause (complexity 1: the set that always holds); the LP over these two is
        the better of them (the empty clause covers every negative once)."""
        costs, y = self.costs, self.y
        self.lp_value = float(costs[y].sum())
        always = float(costs[~y].sum()) + self.settings.penalty
        if self.settings.complexity >= 1 and always < self.lp_value:
            self._add_columns([()])
            self.lp_value = always
        self.lp_solved, self.lp_bound = True, self.lp_value

    def _price(self, mu, unit_price: float, creeping: bool) -> list:
        """The improving clauses for the duals ``mu`` (and ``unit_price``): the beam search's, else the
        neighbours of the master's clauses of reduced cost 0, else the exact pricing's
        (:meth:`_price_exactly`). Sets ``lp_solved`` when the exact pricing proves there is none."""
        s, full, priced = self.settings, self.full, self.priced
        sample, positives, budget = self.sample, self.positives, self.budget
        mu_priced = mu if sample is None else mu[np.searchsorted(positives, sample[self.y[sample]])]
        beam = _WideningBeam(
            lambda width: self._fresh([c for c in _beam_on_features(priced, mu_priced, unit_price, self.max_degree,
                                                                    width, s.max_pricing_features, self.rng,
                                                                    budget.cancelled)
                                       if full.reduced_cost(c, mu, unit_price) < -_TOLERANCE]),
            s.beam_width, min(priced.n_features, s.max_pricing_features or priced.n_features)
            * (len(priced.positive) + len(priced.negative)))
        found = beam.first(None if self.limit is None else min(self.pricing_time_limit, max(self._time_left(), 0.0)))
        if not found and self.clauses:
            # near the LP's optimum the improving clauses are often a condition away from the master's
            # own (see neighbour_search): a fraction of a beam's time, where an exact search takes seconds
            starts = [self.clauses[k] for k in self.master.priced_at_zero(_TOLERANCE)]
            found = self._fresh([c for c in _neighbour_clauses(priced, mu_priced, unit_price, self.max_degree,
                                                               starts, budget.cancelled)
                                 if full.reduced_cost(c, mu, unit_price) < -_TOLERANCE])
        if found or not self.exact_method or self.work.exhausted:  # (spent: the beam alone, then the MIP)
            return found
        if creeping:
            seconds = max(min(self.pricing_time_limit, _CREEP_SHARE * self.limit, self._time_left()), 0.01)
        else:
            seconds = max(min(self.pricing_time_limit, self._time_left()), 0.01)
            shorter_start = time.perf_counter()
            self.searches += 1
            found = self._fresh(_shorter_improving_clauses(self.exact_method, full, mu, unit_price, self.max_degree,
                                                           0.5 * seconds, s.random_state, budget.cancelled,
                                                           self.work))
            seconds = max(seconds - (time.perf_counter() - shorter_start), 0.01)
        return found or self._price_exactly(seconds, creeping, beam)

    def _price_exactly(self, seconds: float, creeping: bool, beam) -> list:
        """The exact pricing of the last duals for ``seconds``, and twice as long while it neither finds
        nor proves and generation has the time (the beam, wider, between); its proven bound raises
        ``lp_bound``, and a proof that no clause improves sets ``lp_solved``."""
        s, budget = self.settings, self.budget
        if self.exact_method == "enumeration":  # more time on these duals continues this search
            self.last_search = PricingSearch(self.full, self.last_duals[0], self.last_duals[2], self.max_degree)
        while True:
            improving, bound, proven, dual_bound = _exact_with_bound(
                self.exact_method, self.full, *self.last_duals, s.complexity, self.positive_costs, self.max_degree,
                self.n_pos, seconds, s.random_state, budget.cancelled, self.last_search, self.work)
            self.exact_calls += 1
            self.searches += 1
            self.priced_last_duals = seconds
            self.lp_bound = max(self.lp_bound, dual_bound)
            longer = min(2.0 * seconds, self._time_left())
            if improving or proven or creeping or longer <= seconds or budget.stopped() or self.work.exhausted:
                break
            improving = beam.wider(longer)
            if improving:
                break
            # nothing found and nothing proven in time: without a new clause the generation is over, so
            # the search on the same duals goes on for twice the time while generation has it; not into
            # the certificate's quarter, which proves a cheaper price first (a search at the master's own
            # price that never finished left it nothing on bank marketing)
            seconds = longer
        found = self._fresh(improving)
        if not found and proven:
            # every clause prices at least the tolerance below zero, or at a column's own reduced cost (a
            # hair below zero): solved within the tolerances; the bound above counts it
            self.lp_solved = True
        return found

    # -- phase 4 ------------------------------------------------------------------------------------
    def certify(self) -> RuleSetResult:
        beside = self._start_certificate()
        self._solve_restricted_mip(beside)
        self._prove_bound(beside)
        self._close_gap()
        return self._result()

    def _start_certificate(self):
        """The branch-and-bound certificate of the last duals, started beside the MIP on the other core
        (HiGHS and the search's kernel both release the GIL): its threads, or None."""
        budget, left = self.budget, self.budget.remaining()
        if not (self.to_certify and self.exact_method == "enumeration" and self.certificate_seconds > 0 and left is not None
                and not budget.stopped()):
            return None
        # it has the MIP's time and at least its share; all that is left when generation ended near the
        # time kept for the MIP and the certificate (out of time, or its last pricing used the time up: an
        # ilpd fold left 11.5 s of 30 so), not when it ended early (a memory budget: the share alone)
        kept = self.out_of_time or self.stalled or left <= self.reserve + 2.0 * self.certificate_time
        seconds = left - 0.05 if kept else self.certificate_seconds
        self.beside_end = time.perf_counter() + seconds
        s, (mu, lam, _) = self.settings, self.last_duals
        return StoppableThreads([lambda stop_asked: largest_ratio_bound(
            self.full, mu, lam, s.penalty, s.complexity, self.positive_costs, self.max_degree, self.n_pos,
            seconds, work=self.work, search=self.last_search,
            should_stop=lambda: stop_asked() or budget.interrupted, outcome=self.certificate_outcome,
            integral=self.integral)], "optrules-certificate")

    def _solve_restricted_mip(self, beside) -> None:
        """The MIP over the generated clauses (none after a stop request: the greedy choice), the greedy
        choice when the MIP is cut short with a worse set, then without needless clauses and conditions."""
        budget, left = self.budget, self.budget.remaining()
        try:
            if budget.interrupted:  # asked to stop: no MIP, the greedy choice (HiGHS can take a while to stop)
                mip_value, selected, mip_bound, mip_proven = np.inf, [], -np.inf, False
            else:
                # the MIP has the time but for half the certificate's share, which the certificate gets
                # after it, with what the MIP leaves (a wdbc fold: the pricing first left the MIP 1.5 s, not
                # enough to prove 6 mistakes optimal; it returned 8); the enumeration's certificate runs beside
                mip_time = np.inf if left is None else max(left - 0.5 * self.certificate_seconds, 0.05)
                mip_value, selected, mip_bound, mip_proven = self.master.solve_mip(mip_time)
        except BaseException:
            if beside is not None:
                beside.stop()
            raise
        self.mip_bound, self.mip_proven = mip_bound, mip_proven
        s = self.settings
        chosen = [self.clauses[k] for k in selected]
        objective = self._objective(chosen)
        if not mip_proven and self.clauses:  # a MIP cut short may have no solution (none chosen), or a poor one
            greedy = _greedy_selection(self.features, self.y, self.clauses, s.complexity, self.costs, s.penalty)
            greedy_objective = self._objective(greedy)
            if greedy_objective < objective:
                chosen, objective = greedy, greedy_objective
        self.chosen, self.objective = self._simplified(chosen, objective)

    def _objective(self, clauses) -> float:
        return _objective(self.features, self.y, clauses, self.costs, self.settings.penalty)

    def _simplified(self, clauses, objective: float):
        """``clauses`` without the clauses, then the conditions, that leave the objective no worse."""
        s = self.settings
        clauses, objective = _without_redundant_clauses(self.features, self.y, clauses, objective, self.costs,
                                                        s.penalty)
        return _without_needless_conditions(self.features, self.y, clauses, objective, self.costs, s.penalty)

    def _proven_lower(self) -> float:
        """The best lower bound proven so far: the LP's, or the conflicting rows' (rounded up when every
        set is worth a whole number)."""
        lower = max(self.lp_bound, self.conflicts)
        return math.ceil(lower - 1e-6) if self.integral and np.isfinite(lower) else lower

    def _prove_bound(self, beside) -> None:
        """The last duals' bound: the certificate's search beside the MIP, waited for until its end (or
        stopped once the set is proven), or the pricing IP given the time kept for it."""
        s, budget = self.settings, self.budget
        left = budget.remaining()
        seconds = self.certificate_seconds if left is None else min(self.certificate_seconds, left - 0.01)
        if beside is not None:
            try:
                if self.objective <= self._proven_lower() + 1e-9:  # proven already: nothing to add
                    beside.stop()
                self.lp_bound = max(self.lp_bound, _bound_beside(beside, self.beside_end, budget.cancelled))
                outcome = self.certificate_outcome
                if outcome and outcome[0][0] and (
                        outcome[0][1] - self.last_duals[2] <= _TOLERANCE / (1 + self.max_degree)):
                    # proven at the restricted master's own price: no clause prices below it (within the
                    # tolerance), so these duals solve the LP over every clause, and the gap can be closed
                    self.lp_solved = True
            except KeyboardInterrupt:
                beside.stop()
                budget.interrupt()
        elif (self.to_certify and self.exact_method == "ip" and seconds > self.priced_last_duals and not budget.stopped()
              and self.objective > self._proven_lower() + 1e-9):
            try:
                self.lp_bound = max(self.lp_bound, _exact_with_bound(
                    self.exact_method, self.full, *self.last_duals, s.complexity, self.positive_costs, self.max_degree,
                    self.n_pos, seconds, s.random_state, budget.cancelled, None, self.work)[3])
            except KeyboardInterrupt:
                budget.interrupt()
        if budget.interrupted:  # before, during or after the MIP
            self.status = INTERRUPTED

    # -- closing the gap------------------------------------------------------------------------
    def _close_gap(self) -> None:
        """The LP solved and the set not proven: the columns that could be in a set of value <= v, and the
        sets over them (:meth:`_decide_value`): an optimum <= v is the optimum, none proves the bound v + 1.
        First v = the set's value less one (one search decides); when that fails (too many columns, or out
        of time), v = the lower bound, then up, a mistake at a time (pima, a fold's values from the bound
        up: MIPs of 0.5, 0.6, 1.2, 1.7, 5.0 and 13.3 s; the last alone decides)."""
        budget = self.budget
        if not (self.lp_solved and self.exact_method == "enumeration" and self.objective > self._proven_lower() + 1e-9
                and not budget.stopped() and self.last_duals is not None):
            return
        deadline = None if budget.remaining() is None else time.perf_counter() + budget.remaining()
        value_below = self.objective - 1.0 if self.integral else self.objective
        from_the_top = self.integral and value_below > self._proven_lower() + 1e-9
        longer = 1.0  # a value whose search ran out of its time is searched again with twice the time
        while self.objective > self._proven_lower() + 1e-9 and not budget.stopped():
            left = None if deadline is None else deadline - time.perf_counter()
            if left is not None and left < 0.1:
                break
            seconds = (longer * self.pricing_time_limit if left is None
                       else min(longer * self.pricing_time_limit, 0.5 * left))
            ended: list[str] = []
            try:
                pool = _columns_below(self.full, self.last_duals[0], self.last_duals[1], self.settings.penalty,
                                      self.settings.complexity, self.positive_costs, self.max_degree, self.n_pos,
                                      value_below, self.integral, seconds, budget.cancelled, self.work,
                                      max_collected=_enumerated_columns(budget, self.n_pos), outcome=ended)
            except KeyboardInterrupt:
                budget.interrupt()
                break
            if (pool is None and ended == ["time"] and deadline is not None
                    and min(2.0 * longer * self.pricing_time_limit, 0.5 * (deadline - time.perf_counter())) > seconds):
                # (a proof of the next bound often needs a little more than one call's seconds: doubling
                # them while the fit has time to spare lets it finish instead of starting over)
                longer *= 2.0
                continue
            longer = 1.0
            if pool is None:
                if from_the_top:  # too many: from the bound up, with fewer
                    from_the_top, value_below = False, self._proven_lower()
                    continue
                break
            self.gap_columns = len(pool)
            decided = self._decide_value(pool, value_below, deadline, from_the_top)
            if decided is None:  # interrupted
                break
            proven, value = decided
            if not proven and from_the_top:
                from_the_top, value_below = False, self._proven_lower()
                continue
            if not proven:
                break
            from_the_top = False
            # no set of value <= value_below but among these columns: the search's optimum is the optimum if
            # it is one of them, else every set is worth more than value_below
            self.lp_bound = max(self.lp_bound, min(value, self.objective) if value <= value_below + 1e-9 else
                                value_below + (1.0 if self.integral else 0.0))
            self.trace.append(time.perf_counter() - self.started, self.objective, self._proven_lower(),
                              [len(self.clauses)], float("nan"))
            try:  # (a cancel asked by the callback: the set and the bound so far stand)
                if self._report():
                    break
            except KeyboardInterrupt:
                budget.interrupt()
                break
            if not self.integral:
                break
            value_below = self._proven_lower()
        if budget.interrupted:  # Ctrl-C or a cancel during it: the set and bound so far, said so
            self.status = INTERRUPTED

    def _decide_value(self, pool, value_below: float, deadline, from_the_top: bool):
        """Whether a set of value <= ``value_below`` exists among the clauses and ``pool``: the
        enumeration first (it decides in milliseconds to seconds what the MIP over the same clauses did
        not in 20-28 s: ilpd, liver, heart, pima folds at complexity 5-15, and holds pools the MIP cannot),
        the MIP with what it leaves on a pool it can hold. Keeps a better set found; returns ``(proven,
        value)``, or None when interrupted."""
        s, budget, (mu, lam, _) = self.settings, self.budget, self.last_duals
        # the sets of value <= v, and no other: sum of the columns' reduced costs <= v - dual objective
        room = _room(mu, lam, s.complexity, self.positive_costs, self.max_degree, self.n_pos, value_below)
        left = None if deadline is None else deadline - time.perf_counter()
        if left is not None and from_the_top:
            left *= 2.0 / 3.0  # the rest for the values from the bound up, should this search not finish
        started = time.perf_counter()
        try:
            proven, value, better = _best_set_below(
                self.full, self.clauses + pool, mu, lam, self.positive_costs, self.n_pos, s.penalty, s.complexity,
                value_below, room, self.integral, None if left is None else 0.5 * left, budget.cancelled)
            if not proven and not budget.stopped() and len(pool) <= GAP_COLUMNS and self._add_columns(pool)[1]:
                self.master.limit_reduced_cost(_column_reduced_costs(self.full, mu, lam, s.penalty,
                                                                     self.positive_costs, self.n_pos, self.clauses),
                                               room)
                if left is not None:
                    left -= time.perf_counter() - started
                value, selected, _, proven = self.master.solve_mip(np.inf if left is None else max(left - 0.05, 0.05))
                better = [self.clauses[k] for k in selected]
        except KeyboardInterrupt:
            budget.interrupt()
            return None
        if better:
            better_objective = self._objective(better)
            if better_objective < self.objective:
                self.chosen, self.objective = self._simplified(better, better_objective)
        return proven, value

    # -- the result ---------------------------------------------------------------------------------
    def _result(self) -> RuleSetResult:
        lower = min(max(self._proven_lower(), 0.0), self.objective)
        status = self.status
        if self.objective <= lower + 1e-9:
            status = OPTIMAL
        elif status not in (INTERRUPTED, MEMORY_BUDGET, NODE_BUDGET):
            # tailing off, the time went to the certificate: "time budget" unless its proof finished
            outcome = self.certificate_outcome
            used_up = self.out_of_time or (self.stalled and not (outcome and outcome[0][0]))
            status = GAP if self.lp_solved or not used_up else TIME_BUDGET
        total = time.perf_counter() - self.started
        self.trace.append(total, self.objective, lower, [len(self.clauses)], float("nan"))
        counters = _counters(total, self.iterations, len(self.clauses), self.exact_calls, self.work.spent,
                             self.lp_value, self.lp_solved, self.conflicts, self.mip_proven, self.gap_columns,
                             self.mip_bound, len(self.y) if self.sample is None else len(self.sample),
                             _mistakes(*self.every_row, self.chosen), len(self.y))
        return RuleSetResult(self.chosen, self.objective, Certificate(status, self.objective, lower, counters,
                                                                      self.trace, COLUMN_GENERATION))


def _counters(total_time, iterations, columns, exact_calls, pricing_nodes, lp_objective, lp_solved, conflicts,
              mip_optimal, gap_columns, mip_bound, pricing_samples, training_mistakes, distinct_rows) -> dict:
    return {
        "total_time": total_time,
        "iterations": iterations,
        "columns": columns,
        "exact_pricing_calls": exact_calls,
        "pricing_nodes": pricing_nodes,  # clauses the exact pricing searched (its IP's nodes)
        "lp_objective": lp_objective,
        "lp_solved": lp_solved,
        "conflict_bound": conflicts,
        "restricted_mip_optimal": mip_optimal,
        # the LP solved, the set not proven: the clauses that could be in a set of the last value tried
        "gap_columns": gap_columns,
        "restricted_mip_bound": mip_bound,
        "pricing_samples": pricing_samples,
        # what users count: training samples the set misclassifies (the objective counts a negative once
        # per clause covering it, and weighs the classes)
        "training_mistakes": training_mistakes,
        "distinct_rows": distinct_rows,
        "solver": f"HiGHS {highs_version()}",
    }


def feasible_degree(max_degree: int, complexity: float) -> int:
    """The most conditions a clause of a rule set within the complexity bound can have.

    A clause of d conditions has complexity 1 + d, so one above the bound is in no rule set: the master
    problem over the clauses that fit is the same integer problem, its LP a tighter relaxation, and
    neither pricing has to search the longer clauses (with the default 5 conditions, this cuts a level
    for bounds below 6)."""
    if complexity is None or not np.isfinite(complexity):
        return int(max_degree)
    return max(1, min(int(max_degree), int(math.floor(complexity + 1e-9)) - 1))


EXACT_METHODS = ("enumeration", "ip")


def _exact_method(exact) -> str | None:
    if exact is True:
        return "enumeration"
    if exact is False or exact is None:
        return None
    if exact not in EXACT_METHODS:
        raise ValueError(f"exact pricing must be True, False or one of {EXACT_METHODS}, got {exact!r}")
    return exact


def _exact_with_bound(method, data, mu, lam, unit_price, complexity, positive_costs, max_degree, n_pos, seconds,
                      seed, should_stop, search=None, work=None):
    """Exact pricing of the duals ``(mu, lam)`` and the weak-duality bound it proves: ``(improving
    clauses, lower bound on the minimum reduced cost, proven, bound on the rule set)``; ``search``: a
    :class:`~optrules.rulesets.enumeration.PricingSearch` of these duals to continue."""
    improving, bound, proven, ratio = _exact(method, data, mu, unit_price, max_degree, seconds, seed, should_stop,
                                             search, work)
    empty = data.reduced_cost((), mu, unit_price)
    return improving, bound, proven, weak_duality_bound(mu, lam, complexity, positive_costs, empty, bound, max_degree,
                                                        n_pos, ratio)


def _bound_beside(threads: StoppableThreads, until: float, should_stop) -> float:
    """The bound the certificate's thread proved by ``until`` (asked to stop then, or when ``should_stop``
    says so, it returns what it has proven so far); -inf if it returned nothing."""
    threads.wait(until, should_stop, poll=0.1)
    threads.stop()
    errors = [error for error in threads.errors if not isinstance(error, KeyboardInterrupt)]
    if errors:
        raise errors[0]
    return -np.inf if threads.results[0] is None else float(threads.results[0])


#: generation tails off when the restricted LP has not moved for this share of the time limit (at least
#: _STALL_SECONDS), _STALL_SOLVES solves and _STALL_EXACT exact pricing calls
_STALL_SHARE, _STALL_SECONDS, _STALL_SOLVES, _STALL_EXACT = 0.1, 5.0, 4, 2
#: the LP creeps when it moved by at most this share of its value over the same window and _STALL_EXACT
#: exact searches (over shorter clauses too); then one search over every clause, of at most this share of
#: the time limit (and pricing_time_limit), decides whether generation goes on
_CREEP_MOVE, _CREEP_SHARE = 1e-3, 0.1


def _flat_since(history, time_limit: float, move: float, counted: int) -> bool:
    """Whether the restricted master's LP value (``history``: seconds, value, exact pricing calls and
    exact searches so far at each solve; the value never increases as columns come) has moved by at most
    ``move`` times itself in the last max(_STALL_SECONDS, _STALL_SHARE x ``time_limit``) seconds, over
    _STALL_SOLVES solves and _STALL_EXACT of the pricings counted in ``history``'s column ``counted``."""
    now, value = history[-1][:2]
    window = max(_STALL_SECONDS, _STALL_SHARE * time_limit)
    before = [entry for entry in history[:-_STALL_SOLVES] if entry[0] <= now - window]
    return (bool(before) and before[-1][1] - value <= move * max(1.0, abs(value))
            and history[-1][counted] - before[-1][counted] >= _STALL_EXACT)


def _tailing_off(history, time_limit: float) -> bool:
    """Whether column generation has tailed off: the restricted master's LP value has not moved in the
    window of :func:`_flat_since` over _STALL_EXACT exact pricing calls (the exact pricing keeps finding
    clauses that do not move it: a window of 2 s and beam rounds alone ended ionosphere folds at
    complexity 5 after 4 s with a gap, where generation goes on to solve the LP and the set is proven
    optimal). Degenerate pivots can add columns for a long time without moving it: bank marketing's LP
    stood at 3,873.25 from 2 s to the end of a 60 s fit, its exact pricing finding clause after clause,
    while the bound of its duals needs ~57 s of proof, which the quarter kept for the certificate never
    gave (lower bound 12). Then the rest of the time proves that bound instead."""
    return _flat_since(history, time_limit, 1e-9, 2)


def _creeping(history, time_limit: float) -> bool:
    """Whether the LP creeps: it moved by at most _CREEP_MOVE of its value in the window of
    :func:`_flat_since`, over _STALL_EXACT exact searches, those over shorter clauses first counted. Then
    the next pricing (after the beam) is one search over every clause, short and not retried, and
    generation ends when it finds nothing: bank-full at the command line's defaults (60 s, 30 s pricing
    calls) crept from 4,296.75 at 4.6 s to 4,290 at 25 s, a clause or two a search over shorter clauses
    (~4 s each), and the search over every clause that followed found nothing in 8.4 s: the certificate
    had 17.7 s (lower bound 1,073). Where that search finds clauses (small tables, whose LP it solves
    soon after), generation goes on as before."""
    return _flat_since(history, time_limit, _CREEP_MOVE, 3)


def _room(mu, lam, complexity, positive_costs, max_degree, n_pos, value) -> float:
    """How much reduced cost a set of value ``value`` has room for: ``value`` less the dual objective
    sum(mu) - lambda C (mu clipped to its range), plus the LP's tolerance, -1e-6 at worst a clause for
    the C / 2 + 1 clauses a set holds at most."""
    c = complexity_or_implied(complexity, max_degree, n_pos)
    mu = np.clip(np.asarray(mu, np.float64), 0.0, positive_costs)
    return float(value) - (float(mu.sum()) - float(lam) * c) + (c / 2.0 + 1.0) * 1e-6


def _column_reduced_costs(data, mu, lam, penalty, positive_costs, n_pos, clauses) -> np.ndarray:
    """The master's columns' reduced costs under the duals: each positive's xi (its weight less its mu),
    then each clause's."""
    mu = np.clip(np.asarray(mu, np.float64), 0.0, positive_costs)
    xi = np.broadcast_to(np.asarray(positive_costs, np.float64), (n_pos,)) - mu
    return np.concatenate([xi, _clause_prices(data, clauses, mu, lam, penalty, n_pos)[3]])


def _clause_prices(data: PricingBits, clauses, mu, lam, penalty, n_pos):
    """Each clause's positives (packed), cost (its negatives' weight plus its penalty), complexity and
    reduced cost under the duals ``(mu, lam)`` (``mu`` clipped to its range)."""
    cover, negatives = _clause_covers(data, clauses)
    complexities = np.array([1 + len(c) for c in clauses], np.int64)
    cost = negatives + penalty * complexities
    return cover, cost, complexities, cost + lam * complexities - bitset.weighted_sums(cover, n_pos, mu)


#: clauses each part of the search below the gap collects at most for the MIP (a MIP over 11,552 clauses of
#: tic-tac-toe did not finish in 13 s, and HiGHS held 1 GB for it); the enumeration of the sets
#: (:func:`~optrules.rulesets.setsearch.best_set_below`) takes up to ENUMERATED_COLUMNS a part, as the
#: memory budget allows; more, and that value is given up
GAP_COLUMNS, ENUMERATED_COLUMNS = 2_500, 50_000


def _enumerated_columns(budget: Budget, n_pos: int) -> int:
    """How many clauses a part of the search below the gap may collect for the enumeration: at most
    ENUMERATED_COLUMNS, and what the memory budget has room for (a clause's tuple and list entry, ~200
    bytes, and its positives' words, twice: collected, then packed for the enumeration, both parts)."""
    each = 200 + 16 * bitset.n_words(n_pos)
    return int(max(GAP_COLUMNS, min(ENUMERATED_COLUMNS, budget.allowance("gap pool") // (2 * each))))


def _columns_below(data, mu, lam, penalty, complexity, positive_costs, max_degree, n_pos, value, integral,
                   seconds, should_stop=None, work=None, max_collected: int = GAP_COLUMNS, outcome=None):
    """Every clause that could be in a rule set of value at most ``value`` (integer weights; below it,
    otherwise), given duals ``(mu, lam)`` that price every clause at reduced cost >= -tolerance (the master
    LP solved); None when the search does not finish in ``seconds`` or finds more than ``max_collected``
    (a part), which ``outcome`` (a list) is told: ``"time"`` or ``"overflow"``.

    For any rule set S and duals with mu in [0, positive weight], lam >= 0, the master's objective is
    z(S) >= sum(mu) - lam C + sum over S's clauses of rc(k) (the slack of each covering row and of the
    complexity row only adds), so a set of value <= v keeps only clauses with rc(k) <= v - sum(mu) +
    lam C: those the branch-and-bound collects. The MIP over them (and the columns generated) then
    decides: its optimum, if <= v, is the optimum over every clause (a better set would be one of its
    solutions); above v, no set is worth v or less. A clause covering the same rows as a shorter one is
    left out (the shorter one does what it does, for less); so that "the same rows" counts every
    positive, those the duals price 0 get a hair of mu, which only lowers reduced costs (more clauses
    collected). This is branch-and-price's reduced-cost argument without the branching, and it pays
    where the gap is small: a fold whose LP bound is a mistake or two below its set."""
    threshold = _room(mu, lam, complexity, positive_costs, max_degree, n_pos, value) + (1e-9 if integral else 0.0)
    mu = np.clip(np.asarray(mu, np.float64), 0.0, positive_costs)
    search = PricingSearch(data, np.maximum(mu, 1e-9), penalty + lam, max_degree, below=threshold,
                           max_collected=max_collected)
    search.run(seconds, should_stop=should_stop, work=work)
    if outcome is not None and not search.finished:
        outcome.append("overflow" if search.overflowed else "time")
    return search.collected if search.finished else None


def _shorter_improving_clauses(method, data, mu, unit_price, max_degree, seconds, seed, should_stop, work=None):
    """The improving clauses of the fewest conditions: exact pricing over clauses of at most 1, 2, ...
    conditions (below ``max_degree``) until a search finds some, or is cut short by ``seconds``.

    A search over every clause that runs out of time has explored only the subtrees of its first few
    features, so the clauses it returns are alike; the shorter searches finish and return the best
    clauses of their size, from all over the table. In 30 s at complexity 15, the master LP of an
    ionosphere fold got to 6.8 in 77 iterations instead of 7.5 in 43 (rule set: 10 mistakes, not 12);
    three wdbc folds to 3.0, 3.9, 3.9 instead of 4.5, 6.6, 6.9. Each search is a part of the next, so
    when the last proves that no short clause improves, the full search costs little more than alone;
    they get half of the call's time at most."""
    start = time.perf_counter()
    for degree in range(1, max_degree):
        left = seconds - (time.perf_counter() - start)
        if left <= 0:
            break
        improving, _, proven, _ = _exact(method, data, mu, unit_price, degree, left, seed, should_stop, work=work)
        if improving or not proven:
            return improving
    return []


def _exact(method, data, mu, unit_price, max_degree, time_limit, seed, should_stop=None, search=None, work=None):
    """Exact pricing: ``(clauses with negative reduced cost, proven lower bound on the minimum reduced
    cost, proven, proven lower bound on reduced cost / complexity or None)`` by branch-and-bound over
    conjunctions (``enumeration``; ``search`` continues one on these duals) or the HiGHS pricing IP
    (which has no ratio bound)."""
    if method == "enumeration":
        search = search or PricingSearch(data, mu, unit_price, max_degree)
        clauses, _, bound, proven, ratio = search.run(time_limit, should_stop=should_stop, work=work)
        return [c for value, c in clauses if value < -_TOLERANCE], bound, proven, ratio
    clause, reduced, bound, proven = exact_pricing(data, mu, unit_price, max_degree, time_limit, seed, should_stop,
                                                   work)
    return ([clause] if clause is not None and reduced < -_TOLERANCE else []), bound, proven, None


#: a beam that finds nothing is tried again this many times wider, up to _WIDEST_BEAM times the
#: estimator's width, while a level's products stay below _BEAM_CELLS (beam x samples x features) and,
#: with time limits, the wider beam's expected time below _BEAM_SHARE of a pricing call's
_WIDEN, _WIDEST_BEAM, _BEAM_CELLS, _BEAM_SHARE = 10, 100, 3e9, 0.25


class _WideningBeam:
    """The beam pricing of one set of duals, widened while it finds nothing (see :data:`_WIDEN`).

    A narrow beam misses what the exact search then takes seconds to find: on the last duals of a wdbc
    fold (30 s, complexity 15) a beam of 10 found nothing, 100 a clause of reduced cost -0.23, 1,000 one
    of -2.58 (in 0.06 s), where 2 s of exact pricing had found none. ``beam(width)``: the improving
    clauses a beam of that width finds; ``cells_per_width``: a level's products for a beam of width 1."""

    def __init__(self, beam, beam_width: int, cells_per_width: float):
        self.beam, self.cells_per_width = beam, cells_per_width
        self.width = self.narrowest = max(int(beam_width), 1)
        self.took = 0.0

    def _try(self, width: int) -> list:
        started = time.perf_counter()
        found = self.beam(width)
        self.width, self.took = width, time.perf_counter() - started
        return found

    def _can_widen(self, seconds: float | None) -> bool:
        wider = self.width * _WIDEN
        return (seconds is not None and wider * self.cells_per_width <= _BEAM_CELLS
                and self.took * _WIDEN <= _BEAM_SHARE * seconds)

    def first(self, seconds: float | None) -> list:
        """The clauses of the narrowest beam that finds any, up to :data:`_WIDEST_BEAM` times the width
        asked for, only as wide as ``seconds`` (a pricing call's time) allows. Without time limits
        (``seconds`` None: a fit bounded by its exact pricing's nodes alone) the beam keeps its width:
        wider beams keep finding clauses the node budget does not count, and generation then ran on and
        left the final MIP, which has no time limit there, hundreds more columns (ilpd fold 4 at
        complexity 50 and 20 million nodes: 1,225 columns at 5.5 s and unfinished after 300 s, against
        907 columns and 181 s at the beam's width; 867 and 124 s before these changes, at 296ba9b)."""
        found = self._try(self.narrowest)
        while not found and self.width * _WIDEN <= _WIDEST_BEAM * self.narrowest and self._can_widen(seconds):
            found = self._try(self.width * _WIDEN)
        return found

    def wider(self, seconds: float) -> list:
        """One beam wider than the last, when a level stays small enough and it is expected to take a
        small share of ``seconds`` (the time the exact search on these duals is about to get again):
        an exact search that found nothing and proved nothing is about to have twice its time."""
        return self._try(self.width * _WIDEN) if self._can_widen(seconds) else []


def _beam_on_features(data: PricingData, mu, unit_price, max_degree, beam_width, max_features, rng,
                      should_stop=None):
    """Beam-search pricing, on a random subset of ``max_features`` features when there are more."""
    n_features = data.positive.shape[1]
    if max_features is None or n_features <= max_features:
        return [c for _, c in beam_search(data, mu, unit_price, max_degree, beam_width, should_stop=should_stop)]
    subset = np.sort(rng.choice(n_features, size=max_features, replace=False))
    sub = data.features(subset)
    return [tuple(int(subset[j]) for j in c)
            for _, c in beam_search(sub, mu, unit_price, max_degree, beam_width, should_stop=should_stop)]


def _neighbour_clauses(data: PricingData, mu, unit_price, max_degree, starts, should_stop=None) -> list:
    """The improving clauses :func:`~optrules.rulesets.pricing.neighbour_search` finds a condition away from
    ``starts``, most negative first."""
    return [c for _, c in neighbour_search(data, mu, unit_price, max_degree, starts, should_stop=should_stop)]


def _best_set_below(data, clauses, mu, lam, positive_costs, n_pos, penalty, complexity, value, room, integral,
                    seconds, should_stop):
    """:func:`~optrules.rulesets.setsearch.best_set_below` over the ``clauses`` that fit in ``room`` under the
    duals ``(mu, lam)``: ``(finished, best value, the best set's clauses)``. Clauses alike for every set (the
    same positives, cost and complexity: the master's own and the pool's copy of it, or two thresholds
    cutting the same rows) go in once, or the search would visit each set they make once a copy."""
    mu = np.clip(np.asarray(mu, np.float64), 0.0, positive_costs)
    cover, cost, complexities, reduced = _clause_prices(data, clauses, mu, lam, penalty, n_pos)
    fits = np.flatnonzero(reduced <= room)
    keys = np.concatenate([cover[fits].view(np.uint8), cost[fits, None].view(np.uint8),
                           complexities[fits, None].view(np.uint8)], axis=1)
    kept = fits[np.sort(np.unique(keys, axis=0, return_index=True)[1])] if len(fits) else fits
    finished, best, chosen = best_set_below(cover[kept], cost[kept], complexities[kept], reduced[kept], mu,
                                            positive_costs, complexity, value, room, integral, seconds, should_stop)
    return finished, best, [clauses[kept[j]] for j in chosen]

