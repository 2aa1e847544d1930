"""Boolean rule sets' master problem (rulesets/master.py): the LP and MIP on HiGHS, their time limits,
the grouped master, the clauses the LP prices at zero."""

import numpy as np
import pytest

from optrules.rulesets.master import MasterProblem


def test_the_master_names_the_clauses_its_lp_prices_at_zero():
    """priced_at_zero: the clauses whose reduced cost under the LP's duals is zero, each one, none other,
    those the LP solution uses first."""
    master, rng = _random_master(60, 40, seed=3)
    covers = [np.flatnonzero(rng.random(60) < 0.3) for _ in range(15)]
    costs, complexities = rng.integers(0, 4, 15).astype(float), rng.integers(2, 5, 15)
    for cost, complexity, covered in zip(costs, complexities, covers):
        master.add_clause(cost, int(complexity), covered)
    _, mu, lam = master.solve_lp(None)
    solution = master.highs.getSolution()
    columns = np.asarray(master.clause_columns)
    reduced = np.asarray(solution.col_dual)[columns]
    zero = master.priced_at_zero(1e-7)
    assert set(zero) == set(np.flatnonzero(reduced <= 1e-7)) and 0 < len(zero) < len(columns)
    for k in zero[len(zero) - 15:]:  # the clauses added last: their reduced cost from the duals, by hand
        if k >= 40:
            assert costs[k - 40] - mu[covers[k - 40]].sum() + lam * complexities[k - 40] == pytest.approx(0, abs=1e-6)
    used = np.asarray(solution.col_value)[columns][zero]
    assert np.all(np.diff(used) <= 0) and used[0] > 0


def test_a_stopped_mip_leaves_the_next_solve_its_time():
    # highspy keeps the callback's interrupt flag between solves: the next MIP stopped at its first look.
    # The first solve is stopped by the fit's hook, not by a short deadline (a fast machine proved a
    # small MIP within 0.05 s)
    def model(should_stop=None):
        rng = np.random.default_rng(1)
        master = MasterProblem(80, 20.0, should_stop=should_stop)
        for _ in range(400):
            master.add_clause(float(rng.integers(0, 4)), int(rng.integers(2, 5)),
                              np.flatnonzero(rng.random(80) < 0.06))
        return master

    stop = [True]
    master = model(lambda: stop[0])
    assert not master.solve_mip(60)[3]  # stopped at its first look
    stop[0] = False
    value, selected, _, proven = master.solve_mip(60)
    expected, _, _, expected_proven = model().solve_mip(60)
    assert expected_proven and proven and selected and value == pytest.approx(expected)


def test_the_mip_is_held_to_its_own_seconds_whatever_the_lps_took(monkeypatch):
    """HiGHS holds a MIP to its own run's time but an LP to the model's summed run time: the MIP must
    not be given the LPs' time on top of its own (its presolve, which looks at no interrupt, probed an
    ilpd fold's MIP for 28 s of 2.8), and it still solves the LP's model."""
    import optrules.rulesets.master as master_module

    master, _ = _random_master(80, 300, seed=2)
    lp_value = master.solve_lp()[0]
    master.highs.getRunTime = lambda: 100.0  # the LPs of a long fit ran 100 s
    solvers = []
    real_new_highs = master_module.new_highs
    monkeypatch.setattr(master_module, "new_highs", lambda seed=0: solvers.append(real_new_highs(seed)) or solvers[-1])
    value, selected, bound, proven = master.solve_mip(2.0)
    mip_solver = solvers[-1] if solvers else master.highs
    limit = mip_solver.getOptionValue("time_limit")
    limit = limit[-1] if isinstance(limit, tuple) else limit  # (status, value) in some highspy versions
    assert limit <= 2.0 + 1e-9
    expected = _random_master(80, 300, seed=2)[0].solve_mip(60)
    assert proven and value == pytest.approx(expected[0]) and selected == expected[1]
    assert value >= lp_value - 1e-9
    # the LP's solver is left continuous: the next LP solves the same relaxation
    assert master.solve_lp()[0] == pytest.approx(lp_value)


def _random_master(n_positive, n_clauses, seed=0):
    rng = np.random.default_rng(seed)
    master = MasterProblem(n_positive, 20.0)
    for _ in range(n_clauses):
        master.add_clause(float(rng.integers(0, 30)), int(rng.integers(2, 5)),
                          np.flatnonzero(rng.random(n_positive) < 0.02))
    return master, rng


@pytest.mark.parametrize("seed", range(15))
def test_grouped_master_is_the_master_with_a_row_a_positive(seed):
    """Rows of positives every clause covers alike are merged (their xi weighing the members' weights):
    the LP's and the MIP's values are those of the problem with one row a positive (scipy), the duals
    come back one a positive and price every clause as the LP's do, and there are no more rows than
    patterns."""
    from scipy.optimize import Bounds, LinearConstraint, linprog, milp

    rng = np.random.default_rng(seed)
    n, k, bound = int(rng.integers(5, 40)), int(rng.integers(1, 25)), float(rng.integers(3, 15))
    weights = rng.uniform(0.5, 2.0, n) if seed % 3 == 0 else 1.0
    master = MasterProblem(n, bound, weights)
    covers = rng.random((k, n)) < rng.uniform(0.1, 0.6)
    costs, complexity = rng.integers(0, 6, k).astype(float), rng.integers(2, 5, k)
    for j in range(k):
        master.add_clause(costs[j], int(complexity[j]), np.flatnonzero(covers[j]))
    # x = (xi_1..xi_n, w_1..w_k): xi_i + sum_{j covers i} w_j >= 1, sum c_j w_j <= bound
    c = np.concatenate([np.broadcast_to(weights, (n,)), costs])
    A = np.vstack([np.hstack([-np.eye(n), -covers.T.astype(float)]),
                   np.concatenate([np.zeros(n), complexity])[None, :]])
    b = np.concatenate([-np.ones(n), [bound]])
    lp = linprog(c, A_ub=A, b_ub=b, bounds=(0, None), method="highs")
    value, mu, lam = master.solve_lp(None)
    assert value == pytest.approx(lp.fun, abs=1e-7)
    assert master.n_groups <= len({tuple(col) for col in covers.T})
    assert np.all(mu >= 0) and np.all(mu <= np.broadcast_to(weights, (n,)) + 1e-9)
    assert mu.sum() - lam * bound == pytest.approx(lp.fun, abs=1e-6)  # the dual objective
    assert np.all(costs + lam * complexity - covers.astype(float) @ mu >= -1e-7)  # every clause priced >= 0
    integrality = np.concatenate([np.zeros(n), np.ones(k)])
    exact = milp(c, constraints=LinearConstraint(A, -np.inf, b), integrality=integrality,
                 bounds=Bounds(0, np.concatenate([np.full(n, np.inf), np.ones(k)])))
    mip_value, _, _, proven = master.solve_mip(60)
    assert proven and mip_value == pytest.approx(exact.fun, abs=1e-7)


def test_each_solve_has_its_own_time_limit():
    # HiGHS compares its time limit with its run time summed over the model's runs: a solve given less
    # than the runs before it had stopped at once, and column generation ended there
    master, rng = _random_master(5000, 400)
    for _ in range(4):
        master.highs.clearSolver()  # solved from scratch: run time adds up
        assert master.solve_lp(None) is not None
    limit = master.highs.getRunTime() / 3
    master.add_clause(1.0, 2, np.flatnonzero(rng.random(5000) < 0.02))  # a quick re-solve from the basis
    assert master.solve_lp(limit) is not None


def test_a_mip_slower_than_its_time_is_not_started():
    # HiGHS's MIP solves its first LP from scratch, deaf to its deadline: an LP that took longer than the
    # MIP's time says the MIP would overrun it
    master, _ = _random_master(2000, 200)
    assert master.solve_lp(None) is not None and master.slowest_lp > 0
    assert master.solve_mip(master.slowest_lp / 2) == (np.inf, [], -np.inf, False)
    value, selected, _, proven = master.solve_mip(60)
    assert proven and selected and np.isfinite(value)
