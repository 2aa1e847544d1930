"""The best Boolean rule set (DNF) under a fairness constraint, by column generation with a certificate.

The master problem is the rule-set one (Dash, Guenluek and Wei 2018: missed positives plus the negatives
each chosen clause covers, the Hamming loss, plus a price per unit of complexity, complexity at most C)
with the constraint of Lawless, Dash, Guenluek and Wei (JMLR 2023, "Interpretable and fair Boolean rule
sets via column generation") on the rates of the two groups. A rate needs each row's prediction exactly:

* a positive's miss xi_i in [0, 1]: xi_i + sum_{k covers i} w_k >= 1 (as in the plain master) and
  xi_i + w_k <= 1 for each chosen clause covering it, so that xi_i = 1 exactly when no chosen clause
  covers it (with w integral);
* a negative's cover zeta_i in [0, 1] (for the metrics that read negatives): zeta_i <= sum_{k covers i} w_k
  and zeta_i >= w_k for each clause covering it;
* each rate the metric reads, rate_g = (weight predicted positive in the cells) / (the cells' weight), is
  linear in them, and -EPS <= rate_0 - rate_1 <= EPS is one ranged row (a group with no weight in the
  cells has rate 0, as :mod:`optrules.fairness.metrics` says).

Pricing a clause not in the master: the rows of its pairs (xi_i + w_k <= 1, zeta_i >= w_k) are not in the
master yet; with the clause at 0 they read xi_i <= 1 and zeta_i >= 0, which the variables' bounds already
say, so their duals may be taken as 0, and the clause's reduced cost is

    (penalty + lambda) (1 + conditions) - sum_{positives covered} mu_i + sum_{negatives covered} (cost_i + rho_i)

(mu_i >= 0 the covering rows' duals, rho_i <= 0 the zeta rows', lambda >= 0 the complexity row's). A
negative whose cost_i + rho_i is below 0 is priced as a positive is (a gain for covering it), so the
branch-and-bound pricing of the plain rule sets finds the clause of least reduced cost and proves it.

(a clause of the master prices lower than its reduced cost, its pair rows left out: when only such clauses
price below 0, every clause pricing below 0 is listed, and any not in the master enters).

Certificate: when pricing proves every clause not in the master has reduced cost >= r (r/2 a unit of
complexity for clauses with a condition, r for the empty one), raising lambda by t = max(0, -r(empty),
-r/2) makes the restricted master's duals feasible for the master over every clause (the missing pair rows
at dual 0), whose value is therefore at least z_RLP - C t (weak duality): a lower bound on every rule set
meeting the constraint. The rule set is the restricted master's integer optimum over the clauses generated
(each row's indicator then exact), checked against the constraint in exact arithmetic; the empty set
(every rate 0) always meets it. Closing the gap: a set better than the incumbent has value at least that
bound plus its clauses' reduced costs (at the raised lambda, each >= 0), so its clauses all price below the
gap; when the branch-and-bound pricing lists every such clause (at most MAX_COLLECTED), the integer program
over them is solved exactly, and its optimum is the optimum. The LP relaxation under a constraint can be
weak (a tenth below the integer optimum on COMPAS under equal opportunity): then the gap stays, stated.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from ..budget import Budget
from ..certificate import COLUMN_GENERATION, INTERRUPTED, TIME_BUDGET, Certificate, Trace
from ..data import bitset
from ..fairness.metrics import RATES, exact_unfairness
from ..fairness.search import STATUS
from ..solve import Solver, SolveResult
from .master import model_bytes

#: a clause priced below this is improving (the LP's tolerances are about 1e-9 of its unit)
IMPROVING = -1e-7
#: a set whose objective is within this of the lower bound (a share of the rows' weight) is optimal
PROVEN = 1e-9
#: closing the gap, at most this many clauses may price below it (more: the gap stays)
MAX_COLLECTED = 2_000
#: ... and their rows (one a row each covers) at most this many: HiGHS's presolve of the integer program
#: hears no interrupt (20,000 clauses, 265,000 rows on COMPAS: 44 s past a 20 s budget)
MAX_CLOSING_ROWS = 100_000
#: the memory budget's name for the master (its HiGHS model and the restricted MIP's copy of it)
MASTER = "fair rule set master"


@dataclass
class FairRuleSetResult:
    """The search's rule set (clauses in feature indices), its objective, a lower bound over every rule set
    meeting the constraint, the status (optimal, gap, time_budget, interrupted) and its counters."""

    clauses: list
    objective: float
    lower_bound: float
    status: str
    counters: dict = field(default_factory=dict)


class FairRuleSetSearch:
    """Column generation for the rule set of least ``objective`` whose ``metric`` gap between the groups of
    ``group`` (0/1 a row) is at most ``eps`` (a Fraction) on the rows; ``features`` a boolean matrix (rows x
    features), ``target`` the rows the set should describe; ``positive_cost`` and ``negative_cost`` the
    objective's weight of missing each positive and of each clause covering each negative; ``weights``
    the rows' sample weights (the rates' weights); ``complexity`` C (finite); ``penalty`` the price of a
    unit of complexity; ``max_degree`` conditions a clause at most.

    The master and the pricing see one row for each distinct (features, target, group), weighing its
    members (they are predicted alike: one xi or zeta stands for all of them); the constraint is checked
    exactly on the rows themselves."""

    def __init__(self, features, target, group, metric: str, eps: Fraction, complexity: float, penalty: float,
                 max_degree: int, positive_cost, negative_cost, weights=None, pricing_time_limit: float | None = None):
        from .master import INF, interrupt_when, new_highs

        features, target = np.asarray(features, dtype=bool), np.asarray(target, dtype=bool)
        self.row_features, self.row_target = features, target
        self.row_group = np.asarray(group, dtype=np.int8)
        self.row_weights = None if weights is None else np.asarray(weights, dtype=np.float64)
        self.metric, self.eps = metric, Fraction(eps)
        if not np.isfinite(complexity):
            raise ValueError("a fairness constraint on a rule set needs a finite complexity bound")
        self.complexity, self.penalty, self.max_degree = float(complexity), float(penalty), int(max_degree)
        costs = np.empty(len(target))
        costs[target], costs[~target] = positive_cost, negative_cost
        self._aggregate(costs)
        self.pricing_time_limit = pricing_time_limit
        labels = {label for cells in RATES[metric] for label in cells}
        self.exact_misses, self.exact_covers = 1 in labels, 0 in labels  # xi, zeta needed exactly
        self.highs = new_highs(0)
        self._inf = INF
        # the LP stops at its own deadline or a cancel (HiGHS's time limit alone can overrun by seconds)
        self._stop_at, self._should_stop = None, None
        interrupt_when(self.highs, lambda: (self._stop_at is not None and time.perf_counter() >= self._stop_at)
                       or (self._should_stop is not None and bool(self._should_stop())))
        self.clauses: list[tuple] = []
        self._build()

    def _aggregate(self, costs) -> None:
        """One row for each distinct (features, target, group): its weight and cost the sums of its members'."""
        n = len(self.row_target)
        key = np.concatenate([np.packbits(self.row_features, axis=1), self.row_target[:, None].astype(np.uint8),
                              self.row_group[:, None].astype(np.uint8)], axis=1)
        _, first, inverse = np.unique(key, axis=0, return_index=True, return_inverse=True)
        inverse = inverse.ravel()
        weights = np.ones(n) if self.row_weights is None else self.row_weights
        self.features, self.target = self.row_features[first], self.row_target[first]
        self.group = self.row_group[first]
        self.weights = np.bincount(inverse, weights=weights, minlength=len(first))
        self.costs = np.bincount(inverse, weights=costs, minlength=len(first))
        self.positives, self.negatives = np.flatnonzero(self.target), np.flatnonzero(~self.target)
        self.positive_cost, self.negative_cost = self.costs[self.positives], self.costs[self.negatives]

    # -- the master ---------------------------------------------------------------------------------
    def _build(self) -> None:
        n_p, n_z = len(self.positives), len(self.negatives) if self.exact_covers else 0
        inf = self._inf
        self.highs.addRow(-inf, self.complexity, 0, np.zeros(0, np.int32), np.zeros(0))  # row 0
        self.highs.addVars(n_p + n_z, np.zeros(n_p + n_z), np.ones(n_p + n_z))  # xi, then zeta
        self.highs.changeColsCost(n_p, np.arange(n_p, dtype=np.int32), self.positive_cost)
        # covering rows 1 .. n_p: xi_i (+ clauses) >= 1; then zeta_i (- clauses) <= 0
        _add_rows(self.highs, np.full(n_p, 1.0), np.full(n_p, inf), np.arange(n_p)[:, None], np.ones((n_p, 1)))
        self.zeta_rows = 1 + n_p
        _add_rows(self.highs, np.full(n_z, -inf), np.zeros(n_z), n_p + np.arange(n_z)[:, None], np.ones((n_z, 1)))
        self.rate_rows = 1 + n_p + n_z
        for cells in RATES[self.metric]:
            self._add_rate_row(cells, n_p)
        self.n_columns = n_p + n_z

    def _add_rate_row(self, cells, n_p: int) -> None:
        """-EPS <= rate_0 - rate_1 <= EPS over the cells ``cells`` (true labels), in xi and zeta."""
        constant, coefficients = 0.0, np.zeros(self.n_indicators)
        for g, sign in ((0, 1.0), (1, -1.0)):
            in_group = self.group == g
            whole = float(self.weights[in_group & np.isin(self.target.astype(int), cells)].sum())
            if whole <= 0:  # rate 0
                continue
            if 1 in cells:  # predicted positive among positives: 1 - xi_i
                share = np.where(in_group[self.positives], self.weights[self.positives] / whole, 0.0)
                constant += sign * share.sum()
                coefficients[:n_p] -= sign * share
            if 0 in cells:  # among negatives: zeta_i
                coefficients[n_p:] += sign * np.where(in_group[self.negatives], self.weights[self.negatives] / whole, 0.0)
        columns = np.flatnonzero(coefficients).astype(np.int32)
        eps = float(self.eps)
        self.highs.addRow(-eps - constant, eps - constant, len(columns), columns, coefficients[columns])

    @property
    def n_indicators(self) -> int:
        """The xi (one a positive) and zeta (one a negative, when the metric reads negatives) columns."""
        return len(self.positives) + (len(self.negatives) if self.exact_covers else 0)

    def _covered(self, clause) -> tuple[np.ndarray, np.ndarray]:
        """The (aggregated) positives and negatives the clause covers, as indices into each."""
        covered = _covering(self.features, [clause])
        return np.flatnonzero(covered[self.positives]), np.flatnonzero(covered[self.negatives])

    def add_clause(self, clause: tuple) -> None:
        """The clause's column: its cost, its rows (complexity, covering, zeta), and the rows that make the
        indicators of the rows it covers exact (xi_i + w <= 1, zeta_i >= w)."""
        p_rows, z_rows = self._covered(clause)
        complexity = 1.0 + len(clause)
        cost = float(self.negative_cost[z_rows].sum()) + self.penalty * complexity
        rows = [np.array([0]), 1 + p_rows] + ([self.zeta_rows + z_rows] if self.exact_covers else [])
        values = [np.array([complexity]), np.ones(len(p_rows))] + ([-np.ones(len(z_rows))] if self.exact_covers else [])
        rows, values = np.concatenate(rows).astype(np.int32), np.concatenate(values)
        column = self.n_columns
        self.highs.addCol(cost, 0.0, self._inf, len(rows), rows, values)
        self.n_columns += 1
        self.clauses.append(tuple(clause))
        n_p = len(self.positives)
        if self.exact_misses:  # xi_i + w <= 1
            _add_rows(self.highs, np.full(len(p_rows), -self._inf), np.ones(len(p_rows)),
                      np.column_stack([p_rows, np.full(len(p_rows), column)]), np.ones((len(p_rows), 2)))
        if self.exact_covers:  # zeta_i - w >= 0
            _add_rows(self.highs, np.zeros(len(z_rows)), np.full(len(z_rows), self._inf),
                      np.column_stack([n_p + z_rows, np.full(len(z_rows), column)]),
                      np.tile([1.0, -1.0], (len(z_rows), 1)))

    def _solve_lp(self, seconds: float | None):
        """``(objective, mu, rho, lambda)`` of the restricted master LP, or None when stopped first."""
        import highspy

        self.highs.setOptionValue("time_limit", self._inf if seconds is None else
                                  self.highs.getRunTime() + max(seconds, 0.01))
        self._stop_at = None if seconds is None else time.perf_counter() + max(seconds, 0.01)
        try:
            self.highs.run()
        finally:
            self._stop_at = None
        status = self.highs.getModelStatus()
        if status != highspy.HighsModelStatus.kOptimal:
            if status in (highspy.HighsModelStatus.kTimeLimit, highspy.HighsModelStatus.kInterrupt):
                return None
            raise RuntimeError(f"the fair master LP: {self.highs.modelStatusToString(status)}")
        duals = np.asarray(self.highs.getSolution().row_dual)
        n_p = len(self.positives)
        mu = np.maximum(duals[1:1 + n_p], 0.0)
        rho = np.minimum(duals[self.zeta_rows:self.zeta_rows + len(self.negatives)], 0.0) if self.exact_covers \
            else np.zeros(len(self.negatives))
        return self.highs.getInfo().objective_function_value, mu, rho, max(0.0, -duals[0])

    # -- pricing ------------------------------------------------------------------------------------
    def _price(self, mu, rho, unit_price: float, seconds: float, should_stop):
        """``(improving clauses, proven lower bound on every clause's reduced cost, the empty clause's,
        ratio bound, whether the search finished)``: the plain rule sets' branch-and-bound pricing, a
        negative with a net gain priced as a positive."""
        from .enumeration import PricingSearch

        data, gains = self._pricing_data(mu, rho)
        empty = float(data.z_weights.sum() - gains.sum() + unit_price)
        search = PricingSearch(data, gains, unit_price, self.max_degree)
        found, _, lower, proven, ratio = search.run(np.inf if seconds is None else seconds, 20, should_stop)
        improving = [tuple(int(j) for j in clause) for value, clause in found if value < IMPROVING]
        return improving, float(lower), empty, float(ratio), bool(proven)

    def _pricing_data(self, mu, rho):
        """The plain rule sets' pricing data for these duals: each row a gain for covering it (positives,
        and negatives whose price is below 0) or a cost (the other negatives)."""
        from .pricing import PricingData

        net = self.negative_cost + rho  # a negative's price for being covered
        gain_rows = np.concatenate([self.positives, self.negatives[net < 0]])
        gains = np.concatenate([mu, -net[net < 0]])
        cost_rows, costs = self.negatives[net >= 0], net[net >= 0]
        return PricingData(self.features[gain_rows], self.features[cost_rows], 1.0, costs), gains

    def _clauses_below(self, duals, gap: float, seconds, should_stop):
        """Every clause that some rule set better than the incumbent can hold: with the duals made feasible
        (lambda raised by t), a set's value is at least the bound plus the sum of its clauses' reduced costs
        (each >= 0), so each of its clauses prices below ``gap`` (the incumbent's value less the bound). None
        when the search did not finish or met more than :data:`MAX_COLLECTED`."""
        from .enumeration import PricingSearch

        mu, rho, unit_price = duals
        data, gains = self._pricing_data(mu, rho)
        search = PricingSearch(data, np.maximum(gains, 1e-15), unit_price, self.max_degree, below=gap,
                               max_collected=MAX_COLLECTED)
        search.run(np.inf if seconds is None else seconds, 0, should_stop)
        return search.collected if search.finished else None

    # -- the search ---------------------------------------------------------------------------------
    def run(self, time_limit: float | None = None, should_stop=None, max_iterations: int = 10_000,
            memory=None) -> FairRuleSetResult:
        """Column generation, the restricted MIP and the gap's closing, within ``time_limit`` seconds,
        ``should_stop`` (a cancel) and ``memory`` (a :class:`~optrules.budget.Budget` the master is charged
        to: no clause enters when the master and its MIP's copy would pass it, status memory_budget)."""
        started = time.perf_counter()
        deadline = None if time_limit is None else started + time_limit
        self._should_stop = should_stop

        def left():
            return None if deadline is None else max(deadline - time.perf_counter(), 0.0)

        best_lower, status, iterations, lp_optimal, last = -np.inf, "optimal", 0, False, None
        while iterations < max_iterations:
            if should_stop is not None and should_stop():
                status = "interrupted"
                break
            if deadline is not None and time.perf_counter() >= deadline:
                status = "time_budget"
                break
            solved = self._solve_lp(left())
            if solved is None:
                status = "time_budget"
                break
            iterations += 1
            value, mu, rho, lam = solved
            seconds = left() if self.pricing_time_limit is None else min(left() or np.inf, self.pricing_time_limit)
            improving, lower, empty, ratio, proven = self._price(mu, rho, self.penalty + lam, seconds, should_stop)
            # weak duality with lambda raised by t (see the module's docstring)
            t = max(0.0, -empty, -min(max(lower / 2.0, ratio), 0.0))
            best_lower = max(best_lower, value - self.complexity * t)
            last = ((mu, rho, self.penalty + lam + t), value - self.complexity * t)
            known = set(self.clauses)
            fresh = [clause for clause in dict.fromkeys(improving) if clause not in known]
            if not fresh and proven and t > 0:
                # pricing leaves out the rows that make a master clause's indicators exact, so a clause of
                # the master may price below 0 and hide the others: the clauses below 0, all of them
                negative = self._clauses_below((mu, rho, self.penalty + lam), IMPROVING, left(), should_stop)
                if negative is not None:
                    fresh = [clause for clause in dict.fromkeys(negative) if clause not in known]
                    if not fresh:  # every clause not in the master prices >= IMPROVING
                        t = -IMPROVING
                        best_lower = max(best_lower, value - self.complexity * t)
                        last = ((mu, rho, self.penalty + lam + t), value - self.complexity * t)
            if not fresh:
                lp_optimal = proven and t <= -IMPROVING
                if not proven:  # (the pricing's time ran out before it proved or found a clause)
                    status = "interrupted" if should_stop is not None and should_stop() else "time_budget"
                break
            if not self._room_for(fresh, memory):
                status = "memory_budget"
                break
            for clause in fresh:
                self.add_clause(clause)
        # (after a cancel the MIP is skipped: its setup hears no interrupt, 2.1 s on a 20,000-row table)
        clauses, objective = self._rounded_set() if status == "interrupted" else self._best_set(left(), should_stop)[:2]
        scale = max(1.0, float(self.weights.sum()))
        closed = False
        if last is not None and objective - last[1] > PROVEN * scale and status == "optimal":
            closed, clauses, objective, best_lower = self._close_gap(last, clauses, objective, best_lower, left,
                                                                     should_stop, memory)
        lower = min(max(best_lower, 0.0), objective)
        if objective - lower <= PROVEN * scale:
            status, lower = "optimal", objective
        elif status == "optimal":
            status = "gap"  # the LP is solved (or priced out); the integer set is above its bound
        counters = {"iterations": iterations, "columns": len(self.clauses), "lp_optimal": lp_optimal,
                    "gap_closed_by_enumeration": closed, "distinct_rows": len(self.target),
                    "search_time": time.perf_counter() - started}
        return FairRuleSetResult(clauses, objective, lower, status, counters)

    def _close_gap(self, last, clauses, objective, best_lower, left, should_stop, memory=None):
        """Adds every clause a better set could hold (:meth:`_clauses_below`, at the last duals) and solves
        the restricted MIP exactly over them: its optimum is then the optimum, and its dual bound a lower
        bound over every set. ``(closed, clauses, objective, lower bound)``."""
        duals, bound = last
        gap = objective - bound + PROVEN
        found = self._clauses_below(duals, gap, left(), should_stop)
        known = set(self.clauses)
        found = None if found is None else [clause for clause in dict.fromkeys(found) if clause not in known]
        if found is None or sum(int(_covering(self.features, [c]).sum()) for c in found) > MAX_CLOSING_ROWS \
                or not self._room_for(found, memory):
            return False, clauses, objective, best_lower
        for clause in found:
            if left() == 0.0:  # (thousands of columns take seconds to add: the budget holds here too)
                return False, clauses, objective, best_lower
            self.add_clause(clause)
        better, value, mip_bound = self._best_set(left(), should_stop)
        if value < objective:
            clauses, objective = better, value
        if np.isfinite(mip_bound):  # every set better than the incumbent is in this MIP's space
            best_lower = max(best_lower, min(objective, mip_bound - PROVEN))
        return True, clauses, objective, best_lower

    def _rounded_set(self) -> tuple[list, float]:
        """The clauses the last restricted LP chose at least halfway, if they meet the constraint exactly and
        beat the empty set (which always meets it): what a cancel returns, at no solver's cost."""
        empty = self.objective([])
        values = np.asarray(self.highs.getSolution().col_value)[self.n_indicators:] if self.clauses else []
        chosen = [clause for clause, value in zip(self.clauses, values) if value >= 0.5]
        if chosen and self.meets(chosen) and self.objective(chosen) < empty:
            return chosen, self.objective(chosen)
        return [], empty

    def _room_for(self, clauses, memory) -> bool:
        """Whether the master with ``clauses`` added (their columns and exactness rows), and the copy of it
        the restricted MIP solves, stay within ``memory``; if so, charged to it (None: no budget)."""
        if memory is None:
            return True
        rows = nnz = 0
        for clause in clauses:
            p_rows, z_rows = self._covered(clause)
            pairs = (len(p_rows) if self.exact_misses else 0) + (len(z_rows) if self.exact_covers else 0)
            rows, nnz = rows + pairs, nnz + 1 + len(p_rows) + (len(z_rows) if self.exact_covers else 0) + 2 * pairs
        need = 2 * model_bytes(self.highs.getNumRow() + rows, self.highs.getNumNz() + nnz,
                               self.highs.getNumCol() + len(clauses))
        if not memory.fits(need, replacing=MASTER):
            return False
        memory.charge(MASTER, need)
        return True

    def objective(self, clauses) -> float:
        """The Hamming objective of a set (missed positives, each clause's covered negatives, complexity)."""
        covered = _covering(self.features, clauses)
        missed = float(self.positive_cost[~covered[self.positives]].sum())
        hamming = sum(float(self.negative_cost[self._covered(c)[1]].sum()) for c in clauses)
        return missed + hamming + self.penalty * sum(1 + len(c) for c in clauses)

    def covers(self, clauses) -> np.ndarray:
        """The rows (as given) some clause of ``clauses`` covers: the set predicts them positive."""
        return _covering(self.row_features, clauses)

    def meets(self, clauses) -> bool:
        """Whether the set meets the constraint on the rows as given, exactly."""
        return exact_unfairness(self.row_target.astype(int), self.row_group, self.row_weights, self.covers(clauses),
                                self.metric) <= self.eps

    def _best_set(self, seconds: float | None, should_stop) -> tuple[list, float, float]:
        """The restricted master's integer optimum over the clauses generated, if it meets the constraint
        exactly and beats the empty set (which always meets it), and the MIP's proven bound over its space
        (-inf unless solved to optimality with the constraint as it is); the constraint's rows tightened by
        a hair and solved again when the solver's tolerance let a set through that misses it exactly."""
        best, best_value, bound = [], self.objective([]), -np.inf
        if not self.clauses:
            return best, best_value, bound
        deadline = None if seconds is None else time.perf_counter() + seconds
        for margin in (0.0, 1e-6):
            chosen, mip_bound = self._restricted_mip(deadline, should_stop, margin)
            if margin == 0.0:
                bound = mip_bound
            if chosen is None:
                break
            if self.meets(chosen):
                value = self.objective(chosen)
                if value < best_value:
                    best, best_value = chosen, value
                break
        return best, best_value, bound

    def _restricted_mip(self, deadline, should_stop, margin: float):
        """The integer program over the clauses generated (with their rows, each indicator exact once the
        clauses are integral), stopped at ``deadline`` (HiGHS's own time limit alone overran it by 25 s on
        COMPAS) or a cancel; ``margin`` tightens the constraint's rows."""
        import highspy

        from .master import interrupt_when, new_highs

        mip = new_highs(0)
        mip.passModel(self.highs.getModel())
        first = self.n_indicators
        columns = np.arange(first, first + len(self.clauses), dtype=np.int32)
        mip.changeColsIntegrality(len(columns), columns, np.array([highspy.HighsVarType.kInteger] * len(columns)))
        if margin:
            lp = self.highs.getLp()
            for r in range(self.rate_rows, self.rate_rows + len(RATES[self.metric])):
                mip.changeRowBounds(r, lp.row_lower_[r] + margin, lp.row_upper_[r] - margin)
        interrupt_when(mip, lambda: (deadline is not None and time.perf_counter() >= deadline)
                       or (should_stop is not None and should_stop()))
        if deadline is not None:
            mip.setOptionValue("time_limit", max(deadline - time.perf_counter(), 0.05))
        mip.setOptionValue("mip_rel_gap", 0.0)  # (its bound proves the optimum: no relative slack)
        mip.setOptionValue("mip_abs_gap", 1e-9)
        mip.run()
        info = mip.getInfo()
        proven = mip.getModelStatus() == highspy.HighsModelStatus.kOptimal
        bound = float(info.mip_dual_bound) if proven else -np.inf
        if mip.getModelStatus() == highspy.HighsModelStatus.kInfeasible:
            return None, np.inf
        if info.primal_solution_status == 0:
            return None, bound
        values = np.asarray(mip.getSolution().col_value)[first:]
        return [clause for clause, value in zip(self.clauses, values) if value > 0.5], bound


@dataclass(frozen=True)
class FairRuleSetSettings:
    """What one constrained rule-set search is asked for (see :class:`FairRuleSetSearch`)."""

    metric: str
    eps: Fraction
    complexity: float
    penalty: float
    max_degree: int
    pricing_time_limit: float | None = None


class FairRuleSetSolver(Solver):
    """:class:`FairRuleSetSearch` as a :class:`~optrules.solve.Solver`: the budget's time, memory and stop
    request hold it, and it returns a :class:`~optrules.solve.SolveResult` (``solution``: the clauses).

    1. :meth:`prepare`: the aggregated rows and the master with the constraint's rows (``engine``).
    3. :meth:`search`: column generation, the restricted MIP and the gap's closing (``found``).
    4. :meth:`certify`: the set and its certificate.
    """

    method = COLUMN_GENERATION

    def __init__(self, features, target, group, positive_cost, negative_cost, weights=None, *,
                 settings: FairRuleSetSettings, budget: Budget, progress=None):
        super().__init__(settings=settings, budget=budget, progress=progress)
        self.data = (features, target, group, positive_cost, negative_cost, weights)

    def prepare(self) -> None:
        features, target, group, positive_cost, negative_cost, weights = self.data
        s = self.settings
        self.engine = FairRuleSetSearch(features, target, group, s.metric, s.eps, s.complexity, s.penalty,
                                        s.max_degree, positive_cost, negative_cost, weights, s.pricing_time_limit)

    def search(self) -> None:
        self.found = self.engine.run(time_limit=self.budget.remaining(), should_stop=self.budget.cancelled,
                                     memory=self.budget)

    def certify(self) -> SolveResult:
        found = self.found
        counters = {"total_time": found.counters["search_time"], "lp_solved": found.counters["lp_optimal"],
                    **found.counters}
        return SolveResult(found.clauses, found.objective,
                           Certificate(STATUS[found.status], found.objective, found.lower_bound, counters, Trace(),
                                       COLUMN_GENERATION))

    def unsearched(self) -> SolveResult:
        """The empty set (it predicts no row positive: fair under every metric), with 0 as its bound."""
        features, target, group, positive_cost, negative_cost, weights = self.data
        objective = float(np.sum(positive_cost))  # (every positive missed)
        status = INTERRUPTED if self.budget.interrupted else TIME_BUDGET
        return SolveResult((), objective, Certificate(status, objective, 0.0, {"iterations": 0}, Trace(),
                                                      COLUMN_GENERATION))


def fit_fair_rule_set(estimator, X, y, sample_weight, sensitive, budget: Budget):
    """Fit ``estimator`` (a RuleSetClassifier) under its fairness constraint, within ``budget``: the DNF of
    :class:`FairRuleSetSearch` over every binarized feature, the described class (``pos_label``) the metric's
    positive one."""
    import math

    from ..fairness.fit import checked_constraint, confusion_counters, rows_and_groups
    from ..parameters import value_of
    from .colgen import feasible_degree

    metric, eps = checked_constraint(estimator)
    if estimator.cnf:
        raise ValueError("fairness= with cnf=True is not available yet: a fair rule set is a DNF")
    if estimator.complexity is None or not np.isfinite(estimator.complexity):
        raise ValueError("fairness= needs a finite complexity bound on the rule set (complexity=None has none)")
    frame, y, sample_weight, group, group_labels = rows_and_groups(X, y, sample_weight, sensitive)
    frame, y01, sample_weight = estimator._weighted_rows(*estimator._target(frame, y), sample_weight)
    if len(estimator.classes_) != 2:
        raise ValueError("a fairness constraint compares the rates of one class: the target needs two classes")
    packed = estimator._binarize(frame, y01, math.ceil(estimator.min_support * len(y01) - 1e-9), budget,
                                 sample_weight, packed=True)
    estimator.ladder_ = None
    describes = estimator._described_class()
    target = y01 == describes
    class_weights = estimator._class_weights(y01)
    row_weights = np.ones(len(y01)) if sample_weight is None else sample_weight
    budget.require("fair rule set features", packed.shape[0] * len(y01), "the fair search's copy of the features")
    features = bitset.unpack(packed, len(y01)).T if packed.shape[0] else np.zeros((len(y01), 0), bool)
    # (each pricing copies the rows' features, as bytes and as bits)
    budget.require("fair rule set pricing", packed.shape[0] * len(y01) * 9 // 8, "the fair search's pricing copy")
    budget.enter("search")
    settings = FairRuleSetSettings(
        metric, eps, estimator.complexity,
        estimator._penalty(target, class_weights[describes], class_weights[1 - describes], sample_weight),
        feasible_degree(int(value_of(estimator, "max_card")), estimator.complexity), estimator.pricing_time_limit)
    result = FairRuleSetSolver(features, target, group, class_weights[describes] * row_weights[target],
                               class_weights[1 - describes] * row_weights[~target], sample_weight,
                               settings=settings, budget=budget).solve()
    clauses = list(result.solution)
    predicted = _covering(features, clauses)
    achieved = exact_unfairness(target.astype(int), group, sample_weight, predicted, metric)
    estimator._set_rule_set(packed, y01, clauses, describes, sample_weight)
    estimator.certificate_ = certificate = result.certificate
    certificate.counters.update(fairness=metric, max_unfairness=str(eps), unfairness=str(achieved),
                                **confusion_counters(target.astype(int), group, sample_weight, predicted, group_labels),
                                features=features.shape[1], training_mistakes=int((predicted != target).sum()),
                                fairness_over="rule sets (DNF)", fit_time=budget.elapsed())
    estimator.fairness_ = {"metric": metric, "max_unfairness": float(eps), "groups": group_labels,
                           "unfairness": float(achieved)}
    return estimator


def _covering(features, clauses) -> np.ndarray:
    """The rows of ``features`` some clause of ``clauses`` covers (the empty clause covers every row)."""
    covered = np.zeros(len(features), bool)
    for clause in clauses:
        covered |= features[:, list(clause)].all(axis=1) if clause else True
    return covered


def _add_rows(highs, lower, upper, columns, values) -> None:
    """Rows of the same length at once: row r reads ``values[r] . x[columns[r]]`` between its bounds."""
    n, width = columns.shape
    if n == 0:
        return
    starts = (width * np.arange(n)).astype(np.int32)
    highs.addRows(n, np.asarray(lower, np.float64), np.asarray(upper, np.float64), n * width, starts,
                  columns.ravel().astype(np.int32), np.asarray(values, np.float64).ravel())


def every_fair_rule_set(features, target, group, metric, eps, complexity, penalty, max_degree, positive_cost,
                        negative_cost, weights=None):
    """Every rule set (sets of distinct clauses of at most ``max_degree`` features, the empty clause
    included, complexity at most C) meeting the constraint, as ``(objective, clauses)``: the exhaustive
    reference of the tests (a handful of features)."""
    search = FairRuleSetSearch(features, target, group, metric, eps, complexity, penalty, max_degree,
                               positive_cost, negative_cost, weights)
    n_features = search.features.shape[1]
    clauses = [c for d in range(max_degree + 1) for c in itertools.combinations(range(n_features), d)]
    sets = [()]
    for size in range(1, int(complexity) + 1):
        sets += [s for s in itertools.combinations(clauses, size) if sum(1 + len(c) for c in s) <= complexity]
    return [(search.objective(list(s)), list(s)) for s in sets if search.meets(list(s))]
