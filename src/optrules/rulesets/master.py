"""The master problem of Boolean rule-set learning (Dash, Guenluek, Wei, NeurIPS 2018) on HiGHS.

    min  sum_{i in P} p_weight_i xi_i + sum_k cost_k w_k
    s.t. xi_i + sum_{k in K_i} w_k >= 1     for i in P        (duals mu_i >= 0)
         sum_k c_k w_k <= C                                   (dual -lambda, lambda >= 0)
         w_k in {0, 1} (MIP) or >= 0 (LP), xi_i >= 0

with cost_k = (weight of the negatives clause k covers) + penalty * c_k and c_k = 1 + conditions;
p_weight_i is a positive's weight (class weight x sample weight). Clauses
are added as columns to the live HiGHS model, and each LP re-solve starts from the previous basis.
"""

from __future__ import annotations

import time

import numpy as np

try:
    import highspy
except ImportError as error:  # pragma: no cover - highspy is a declared dependency
    raise ImportError("Boolean rule sets need the highspy package (pip install highspy)") from error

INF = highspy.kHighsInf


class _SilentHighs(highspy.Highs):
    """highspy's solver with its output off from the start. highspy >= 1.12 wires its callbacks when
    constructed, and HiGHS prints its banner to standard output on the first call made while output is
    on: every rule-set fit printed "Running HiGHS ..." above its result. The wrapper's constructor calls
    ``enableCallbacks``, so output is turned off just before."""

    def enableCallbacks(self):
        self.setOptionValue("output_flag", False)
        super().enableCallbacks()


def new_highs(seed: int = 0):
    """A HiGHS instance that prints nothing, seeded for reproducible solves."""
    highs = _SilentHighs()
    highs.setOptionValue("output_flag", False)  # in case a highspy constructs without enableCallbacks
    highs.setOptionValue("random_seed", int(seed))
    return highs


def highs_version() -> str:
    return new_highs().version()


def interrupt_when(highs, should_stop) -> None:
    """Make HiGHS stop its simplex, interior-point and MIP solves when ``should_stop()`` turns true (a
    fit's budget: Ctrl-C, a cancel); HiGHS then returns with an interrupted status and what it has."""
    if should_stop is None:
        return

    def check(event):
        # set either way: HiGHS keeps the flag from one solve to the next, so a MIP stopped at its deadline
        # left every later solve of the model "interrupted by user" at its first look (highspy 1.16.0)
        event.interrupt(bool(should_stop()))

    for callback in (highs.cbSimplexInterrupt, highs.cbIpmInterrupt, highs.cbMipInterrupt):
        callback.subscribe(check)


def model_bytes(rows: int, nnz: int, columns: int) -> int:
    """About what HiGHS holds for a model: ~1.5 KB a row with its variable (measured: 364 MB for a master of
    250,000 rows), and its matrix entries and columns."""
    return 1536 * int(rows) + 48 * int(nnz) + 64 * int(columns)


#: a restricted MIP runs only when its time is at least this many times the slowest restricted LP: its
#: first LP, from scratch, costs several warm ones (a noisy 20,000-row table's 444 features, the
#: ladder's second rung: 2.2-2.8 s allowed after LPs of 1.1 s, the MIP returned after 5.1-6.4 s)
MIP_COLD_START = 3.0


class MasterProblem:
    """The master problem on HiGHS, one covering row for each group of positives that every clause so far
    covers alike (not one a positive): such rows are the same constraint, and with each group's xi
    weighing its members' weights the LP and the MIP are the problem above (in an optimal solution the
    members' xi are equal, max(0, 1 - their cover)). A new clause covering part of a group splits it: the
    part gets its own row, with the clauses of the group, and its own xi. A 250,000-positive master of 20
    clauses took HiGHS 60 s and 364 MB to solve one row a positive; groups are at most one a distinct
    pattern of the clauses. Duals come back a positive: a group's goes to its first members, each up to
    its weight (the same dual objective, and feasible for every clause, which covers whole groups; a
    vertex, as the LP with a row a positive returns: shared in proportion, the certificate's bound on a
    test instance came out weaker)."""

    def __init__(self, n_positive: int, complexity_bound: float, p_weight: float = 1.0, seed: int = 0,
                 should_stop=None):
        self.highs = new_highs(seed)
        self._seed = seed
        self._stop_at = None  # a solve's own deadline: HiGHS's time_limit alone can overrun by seconds
        self._should_interrupt = lambda: ((self._stop_at is not None and time.perf_counter() >= self._stop_at)
                                          or (should_stop is not None and should_stop()))
        interrupt_when(self.highs, self._should_interrupt)
        self.n_positive = n_positive
        # one, or one a positive
        self._p_weight = np.broadcast_to(np.asarray(p_weight, np.float64), (n_positive,)).copy()
        bound = INF if complexity_bound is None or not np.isfinite(complexity_bound) else float(complexity_bound)
        self.highs.addRow(-INF, bound, 0, np.zeros(0, np.int32), np.zeros(0))  # row 0: the complexity
        self.n_rows, self.n_columns, self.nnz = 1, 0, 0
        self._group_of = np.zeros(n_positive, np.int64)  # each positive's group
        self._group_row: list[int] = []
        self._group_xi: list[int] = []  # the column of each group's xi
        self._group_clauses: list[list[int]] = []  # the clause columns covering each group
        self._cut_row = None  # the reduced-cost row, once added (limit_reduced_cost)
        self._cut_stale = False  # a group made since: its xi is not in the cut yet
        if n_positive:
            self._new_group([], float(self._p_weight.sum()))
        self.clause_columns: list[int] = []
        self.slowest_lp = 0.0  # seconds of the longest LP solve so far (see solve_mip)

    @property
    def n_groups(self) -> int:
        return len(self._group_row)

    def _new_group(self, clause_columns, weight: float) -> None:
        """A covering row over ``clause_columns`` and its xi (cost ``weight``)."""
        columns = np.asarray(clause_columns, np.int32)
        self.highs.addRow(1.0, INF, len(columns), columns, np.ones(len(columns)))
        self.highs.addCol(float(weight), 0.0, INF, 1, np.array([self.n_rows], np.int32), np.array([1.0]))
        self._group_row.append(self.n_rows)
        self._group_xi.append(self.n_columns)
        self._group_clauses.append(list(clause_columns))
        self.n_rows += 1
        self.n_columns += 1
        self.nnz += len(columns) + 1
        if self._cut_row is not None:  # its xi's coefficient in the cut is set by limit_reduced_cost
            self._cut_stale = True

    def add_clause(self, cost: float, complexity: int, covered_positive_rows) -> int:
        covered = np.asarray(covered_positive_rows, np.int64)
        groups = self._group_of[covered]
        hits = np.bincount(groups, minlength=self.n_groups)
        sizes = np.bincount(self._group_of, minlength=self.n_groups)
        partial = np.flatnonzero((hits > 0) & (hits < sizes))
        if len(partial):  # the covered part of each such group becomes a group of its own
            target = np.full(self.n_groups, -1, np.int64)
            target[partial] = np.arange(self.n_groups, self.n_groups + len(partial))
            moved = target[groups] >= 0
            self._group_of[covered[moved]] = target[groups[moved]]
            weights = np.bincount(self._group_of, weights=self._p_weight, minlength=self.n_groups + len(partial))
            for g in partial:
                self.highs.changeColCost(self._group_xi[g], float(weights[g]))
                self._new_group(self._group_clauses[g], float(weights[target[g]]))
        whole = np.unique(self._group_of[covered])
        rows = np.concatenate([np.asarray(self._group_row, np.int64)[whole], [0]]).astype(np.int32)
        values = np.concatenate([np.ones(len(whole)), [float(complexity)]])
        self.highs.addCol(float(cost), 0.0, INF, len(rows), rows, values)
        for g in whole:
            self._group_clauses[g].append(self.n_columns)
        self.nnz += len(rows)
        self.clause_columns.append(self.n_columns)
        self.n_columns += 1
        return len(self.clause_columns) - 1

    def limit_reduced_cost(self, reduced_costs, upper: float) -> None:
        """Adds (or updates) the row sum over every column (the xi first, one a positive, then the
        clauses) of ``reduced_costs`` x column <= ``upper``: each set of value <= v satisfies it when the
        reduced costs are those of the LP's duals and ``upper`` is v less their dual objective (see
        :func:`~optrules.rulesets.colgen._columns_below`), so the MIP searches those sets only. A group's
        xi counts its members' reduced costs; call it again after adding clauses."""
        reduced_costs = np.asarray(reduced_costs, np.float64)
        xi, clause_costs = reduced_costs[: self.n_positive], reduced_costs[self.n_positive:]
        if self._cut_row is None:
            self._cut_row = self.n_rows
            self.highs.addRow(-INF, float(upper), 0, np.zeros(0, np.int32), np.zeros(0))
            self.n_rows += 1
            self._cut_clauses = 0
        else:
            self.highs.changeRowBounds(self._cut_row, -INF, float(upper))
        for g, value in enumerate(np.bincount(self._group_of, weights=xi, minlength=self.n_groups)):
            self.highs.changeCoeff(self._cut_row, self._group_xi[g], float(value))
        for k in range(self._cut_clauses, len(clause_costs)):  # the clauses added since
            self.highs.changeCoeff(self._cut_row, self.clause_columns[k], float(clause_costs[k]))
        self._cut_clauses = len(clause_costs)
        self._cut_stale = False

    @property
    def nbytes(self) -> int:
        """About what HiGHS holds for the model (:func:`model_bytes`)."""
        return model_bytes(self.n_rows, self.nnz, self.n_columns)

    def solve_lp(self, time_limit: float | None = None):
        """``(objective, mu, lambda)`` of the restricted master LP; None when the time limit or an
        interrupt stopped the solve first."""
        started = time.perf_counter()
        self._run(self.highs, time_limit, 0.01)
        self.slowest_lp = max(self.slowest_lp, time.perf_counter() - started)
        status = self.highs.getModelStatus()
        if status in (highspy.HighsModelStatus.kTimeLimit, highspy.HighsModelStatus.kInterrupt):
            return None
        if status != highspy.HighsModelStatus.kOptimal:
            raise RuntimeError(f"restricted master LP not solved: {self.highs.modelStatusToString(status)}")
        duals = np.asarray(self.highs.getSolution().row_dual)
        group_mu = np.maximum(duals[np.asarray(self._group_row, np.int64)], 0.0)
        # a group's dual to its first members, each up to its weight (a vertex of the split)
        order = np.argsort(self._group_of, kind="stable")  # by group, members in their order
        groups, weights = self._group_of[order], self._p_weight[order]
        before = np.cumsum(weights) - weights  # the weight ahead of each member, from the first group on
        before -= before[np.searchsorted(groups, groups)]  # ... within its own group
        mu = np.empty(self.n_positive)
        mu[order] = np.clip(group_mu[groups] - before, 0.0, weights)
        return self.highs.getInfo().objective_function_value, mu, max(0.0, -duals[0])

    def priced_at_zero(self, tolerance: float) -> np.ndarray:
        """The clauses (their indices, in the order added) that the last LP solution prices at reduced
        cost at most ``tolerance``, those it uses most first."""
        solution = self.highs.getSolution()
        columns = np.asarray(self.clause_columns, np.int64)
        values, reduced = np.asarray(solution.col_value)[columns], np.asarray(solution.col_dual)[columns]
        zero = np.flatnonzero(reduced <= tolerance)
        return zero[np.argsort(-values[zero], kind="stable")]

    def solve_mip(self, time_limit: float):
        """``(objective, selected clause indices, dual bound, proven optimal)`` of the restricted MIP;
        ``(inf, [], inf, True)`` when it is proven infeasible (only a :meth:`limit_reduced_cost` row can
        make it so). Not run, as if it found nothing in time, when an LP of this model took longer than
        ``time_limit`` / :data:`MIP_COLD_START`: HiGHS's MIP solves its first LP from scratch and looks at
        its deadline and at interrupts only between LP solves (a 200,000-row table's MIP, 5 s allowed after
        LPs of 6.7 and 9.9 s, returned after 19.7 s).

        The MIP is solved on a copy of the model in a HiGHS of its own, whose clock starts at 0: HiGHS
        1.16 holds an LP to its run time summed over the model's runs but a MIP to this run's alone, and
        its presolve's probing looks at that time limit and not at interrupts, so a MIP given the summed
        time (24 s of LPs and MIPs before it on an ilpd fold) probed for 28 s where 2.8 s were left: the
        30 s fit took 55 s. The LP's instance is never switched to integers, so it keeps its basis."""
        if self._cut_stale:
            raise RuntimeError("clauses were added since limit_reduced_cost: call it again first")
        if time_limit is not None and np.isfinite(time_limit) and MIP_COLD_START * self.slowest_lp > time_limit:
            return np.inf, [], -np.inf, False
        mip = new_highs(self._seed)
        mip.passModel(self.highs.getModel())
        if self.clause_columns:
            columns = np.asarray(self.clause_columns, np.int32)
            mip.changeColsIntegrality(len(columns), columns,
                                      np.array([highspy.HighsVarType.kInteger] * len(columns)))
        interrupt_when(mip, self._should_interrupt)
        self._run(mip, time_limit, 0.05)
        status = mip.getModelStatus()
        if status == highspy.HighsModelStatus.kInfeasible:
            return np.inf, [], np.inf, True
        info = mip.getInfo()
        values = np.asarray(mip.getSolution().col_value)
        if info.primal_solution_status == 0 or len(values) == 0:  # no feasible solution in time
            return np.inf, [], -np.inf, False
        selected = [k for k, col in enumerate(self.clause_columns) if values[col] > 0.5]
        return info.objective_function_value, selected, info.mip_dual_bound, status == highspy.HighsModelStatus.kOptimal

    def _run(self, highs, time_limit: float | None, at_least: float) -> None:
        seconds = None if time_limit is None or not np.isfinite(time_limit) else max(float(time_limit), at_least)
        # HiGHS compares an LP's time limit with its run time summed over every run of the model (HiGHS
        # issues 1331, 1477), not this run's: after a 200,000-row fit's LPs had run 9.4 s, one asked for
        # 9.4 s stopped after 2.5 s, and generation ended there
        highs.setOptionValue("time_limit", INF if seconds is None else highs.getRunTime() + seconds)
        self._stop_at = None if seconds is None else time.perf_counter() + seconds
        try:
            highs.run()
        finally:
            self._stop_at = None
