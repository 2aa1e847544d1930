"""Boolean rule sets' column generation (rulesets/colgen.py) against the master MIP over every enumerated
clause: its phases, budgets, stops and certificate (the largest-ratio bound and its rungs)."""

import itertools
import math

import numpy as np
import pytest
from test_pricing import dense_pricing_instance

from optrules.budget import Budget
from optrules.data import bitset
from optrules.rulesets import bounds
from optrules.rulesets.bounds import largest_ratio_bound
from optrules.rulesets.colgen import column_generation
from optrules.rulesets.master import MasterProblem
from optrules.rulesets.pricing import PricingData


def full_mip_optimum(features, y, complexity, max_degree, penalty=0.0, fitting_only=True, weights=None):
    """The master MIP over every clause of up to max_degree features (enumerated) that fits within the
    complexity bound, solved by HiGHS; returns (MIP optimum, LP optimum). (The LP over the clauses that
    fit is the relaxation column generation solves: a longer clause is in no rule set; ``fitting_only``
    False enumerates the longer ones too.) ``weights``: each sample's cost when misclassified."""
    y = y.astype(bool)
    w = np.ones(len(y)) if weights is None else np.asarray(weights, float)
    positives = np.flatnonzero(y)
    master = MasterProblem(len(positives), complexity, w[positives])
    for degree in range(0, max_degree + 1):
        if fitting_only and 1 + degree > complexity:
            break
        for clause in itertools.combinations(range(features.shape[1]), degree):
            covered = features[:, list(clause)].all(axis=1) if clause else np.ones(len(y), bool)
            master.add_clause(float(w[covered & ~y].sum()) + penalty * (1 + degree), 1 + degree,
                              np.flatnonzero(covered[positives]))
    lp_value, _, _ = master.solve_lp()
    value, _, _, proven = master.solve_mip(60)
    assert proven
    return value, lp_value


def planted_instance(seed):
    """Two planted clauses plus noise, so that a tight complexity bound has to trade them off: features,
    labels, a complexity bound, a degree, and the generator to draw more from."""
    rng = np.random.default_rng(seed)
    n, j = int(rng.integers(10, 60)), int(rng.integers(2, 8))
    features = rng.random((n, j)) < 0.5
    planted = features[:, 0] & (features[:, 1] if j > 1 else True)
    if j > 3:
        planted |= features[:, 2] & features[:, 3]
    y = np.where(rng.random(n) < 0.15, ~planted, planted)
    if y.min() == y.max():
        y[0] = ~y[0]
    return features, y, float(rng.choice([2, 3, 4, 5, 6, 8, 30])), int(rng.integers(1, 4)), rng


@pytest.mark.parametrize("seed", range(60))
def test_column_generation_against_the_enumerated_mip(seed):
    features, y, complexity, max_degree, rng = planted_instance(seed)
    n = len(y)
    penalty = float(rng.choice([0.0, 0.0, 0.5]))
    optimum, lp_optimum = full_mip_optimum(features, y, complexity, max_degree, penalty)
    result = column_generation(features, y, complexity, penalty, max_degree, time_limit=30, pricing_time_limit=10)
    cert = result.certificate
    assert cert.lower_bound <= optimum + 1e-6  # the bound never exceeds the true optimum
    assert result.objective >= optimum - 1e-6
    covers = [features[:, list(c)].all(axis=1) if c else np.ones(n, bool) for c in result.solution]
    for k, own in enumerate(covers):  # no clause is redundant: each covers a positive the others miss
        others = np.logical_or.reduce([c for i, c in enumerate(covers) if i != k] + [np.zeros(n, bool)])
        assert (own & y & ~others).any()
    predicted = np.logical_or.reduce(covers + [np.zeros(n, bool)])
    assert cert.counters["training_mistakes"] == int((predicted != y).sum())
    if cert.is_optimal:
        assert result.objective == pytest.approx(optimum)
    if cert.counters["lp_solved"]:  # column generation reached the LP over all clauses
        assert cert.counters["lp_objective"] == pytest.approx(lp_optimum, abs=1e-6)
    if cert.counters["lp_solved"] and cert.counters["lp_objective"] == pytest.approx(result.objective):
        assert result.objective == pytest.approx(optimum)  # LP solved and integral: CG found the optimum


@pytest.mark.parametrize("seed", range(10))
def test_packed_features_fit_as_the_boolean_table(seed):
    """A table given packed by feature (as the estimator's binarizer gives it) is the same problem: the same
    set and certificate, repeated rows and weights included (deterministic: a node budget, no clock)."""
    features, y, complexity, max_degree, rng = planted_instance(seed)
    features, y = np.vstack([features, features[:5]]), np.concatenate([y, y[:5]])  # repeated rows
    weights = rng.choice([0.0, 1.0, 2.5], size=len(y)) if seed % 2 else None
    runs = [column_generation(table, y, complexity, 0.0, max_degree, time_limit=None, pricing_time_limit=None,
                              max_nodes=20_000, sample_weight=weights, packed=packed)
            for table, packed in ((features, False), (bitset.pack_columns(features), True))]
    assert runs[0].solution == runs[1].solution
    for a, b in zip(runs[0].certificate.counters.items(), runs[1].certificate.counters.items()):
        assert a == b or "time" in a[0]
    assert (runs[0].objective, runs[0].certificate.lower_bound) == (runs[1].objective, runs[1].certificate.lower_bound)
    with pytest.raises(ValueError, match="packed features"):
        column_generation(bitset.pack_columns(features)[:, :-1] if len(y) > 64 else features, y, packed=True)
    with pytest.raises(ValueError, match="rows"):
        column_generation(features[:-1], y)


@pytest.mark.parametrize("seed", range(4))
def test_generation_hands_the_neighbour_search_the_clauses_of_reduced_cost_zero(seed, monkeypatch):
    """After a beam that finds nothing, generation searches a condition away from the master's clauses
    of reduced cost 0 under the duals it prices (each such start is one, and the LP's support is among
    them), and adds what that finds before any exact pricing; the bound still holds."""
    from optrules.rulesets import colgen

    handed = []
    real = colgen._neighbour_clauses

    def neighbours(data, mu, unit_price, max_degree, starts, should_stop=None):
        found = real(data, mu, unit_price, max_degree, starts, should_stop)
        handed.append(([data.reduced_cost(c, mu, unit_price) for c in starts], found))
        return found
    monkeypatch.setattr(colgen, "_beam_on_features", lambda *args: [])
    monkeypatch.setattr(colgen, "_neighbour_clauses", neighbours)
    features, y, complexity, max_degree, _ = planted_instance(700 + seed)
    complexity, max_degree = 8.0, 3
    optimum, _ = full_mip_optimum(features, y, complexity, max_degree)
    result = column_generation(features, y, complexity, 0.0, max_degree, time_limit=None, pricing_time_limit=None)
    assert handed and all(np.allclose(costs, 0.0, atol=1e-6) for costs, _ in handed)
    assert any(costs for costs, _ in handed)  # once there are clauses, some are priced at zero
    assert result.certificate.lower_bound <= optimum + 1e-6 <= result.objective + 1e-6


@pytest.mark.parametrize("seed", range(60))
def test_generation_prices_the_shortest_improving_clauses_first(seed):
    """Before the search over every clause, generation searches clauses of at most 1, 2, ... conditions
    and stops at the first size with an improving clause: it returns the best clauses of that size (the
    minimum first), and nothing when no clause shorter than the longest allowed improves."""
    from optrules.rulesets.colgen import _shorter_improving_clauses

    data, mu, price, degree, j = dense_pricing_instance(seed)
    found = _shorter_improving_clauses("enumeration", data, mu, price, degree, 30.0, 0, None)
    smallest = [data.reduced_cost((), mu, price)]  # the minimum over clauses of at most d conditions
    for d in range(1, degree):
        smallest.append(min([smallest[-1]] + [data.reduced_cost(c, mu, price)
                                               for c in itertools.combinations(range(j), d)]))
    improving_sizes = [d for d in range(1, degree) if smallest[d] < -1e-7]
    if not improving_sizes:
        assert found == []
        return
    size = improving_sizes[0]
    assert found and all(len(c) <= size and data.reduced_cost(c, mu, price) < -1e-7 for c in found)
    assert data.reduced_cost(found[0], mu, price) == pytest.approx(smallest[size], abs=1e-9)


class VirtualClockBudget(Budget):
    """A fit's budget whose time passes only when a test says so (``advance``): the exact pricing
    below is faked to take as long as the test needs, on any machine."""

    def __init__(self, time_limit):
        super().__init__(time_limit)
        self.now = 0.0

    def advance(self, seconds):
        self.now += seconds

    def remaining(self):
        return self.time_limit - self.now

    def expired(self):
        return self.remaining() <= 0

    @property
    def time_limit(self):
        return self.deadline - self.start


def certificate_instance():
    rng = np.random.default_rng(11)
    features = rng.random((60, 6)) < 0.5
    y = (features[:, 0] & features[:, 1]) | (features[:, 2] & features[:, 3] & (rng.random(60) < 0.7))
    y ^= rng.random(60) < 0.1
    return features, y, full_mip_optimum(features, y, 5.0, 2)[0]


def test_exact_pricing_that_finds_nothing_in_time_is_retried_longer(monkeypatch):
    """An exact pricing call that neither finds a clause nor proves anything within its limit would end
    the generation: the same duals are priced again with twice the time while the fit has it."""
    import optrules.rulesets.colgen as colgen

    features, y, optimum = certificate_instance()
    real_exact, limits = colgen._exact, []
    budget = VirtualClockBudget(40.0)

    def exact(method, data, mu, unit_price, max_degree, time_limit, seed, should_stop=None, search=None, work=None):
        if max_degree == 2:  # not the searches over shorter clauses first
            limits.append(time_limit)
        if time_limit < 3.9:  # too short for these duals: "out of time", nothing found, nothing proven
            budget.advance(time_limit)
            return [], -np.inf, False, None
        return real_exact(method, data, mu, unit_price, max_degree, time_limit, seed, should_stop, search, work)

    monkeypatch.setattr(colgen, "_exact", exact)
    result = column_generation(features, y, 5.0, 0.0, 2, pricing_time_limit=0.5, beam_width=2, budget=budget)
    # doubling, each call on the same duals (the first has what the shorter searches left of 0.5 s)
    assert limits[:4] == pytest.approx([0.5, 1.0, 2.0, 4.0], rel=1e-2)
    assert result.certificate.counters["lp_solved"]  # the longer call proved the LP solved
    assert 0 < result.certificate.lower_bound <= optimum + 1e-6 <= result.objective + 1e-6


def test_exact_pricing_retried_longer_leaves_the_certificate_its_share(monkeypatch):
    """Retried longer, an exact pricing that never finishes stops at the generation's time (the budget
    less the final MIP's share and the certificate's quarter): the certificate then has its quarter to
    prove a cheaper price (bank marketing at the CLI's defaults: a 30 s pricing call, doubled into the
    certificate's time, left it none and the lower bound was the conflict bound, 17 of 4,290)."""
    import optrules.rulesets.colgen as colgen

    features, y, optimum = certificate_instance()
    limits, ratio_seconds = [], []
    real_ratio = colgen.largest_ratio_bound
    budget = VirtualClockBudget(40.0)

    def exact(method, data, mu, unit_price, max_degree, time_limit, seed, should_stop=None, search=None, work=None):
        if max_degree == 2:  # not the searches over shorter clauses first
            limits.append(time_limit)
        budget.advance(time_limit)  # these duals are too hard: out of time, nothing found, nothing proven
        return [], -np.inf, False, None

    def largest_ratio_bound(*args, **kwargs):
        ratio_seconds.append(args[8])
        return real_ratio(*args, **kwargs)

    monkeypatch.setattr(colgen, "_exact", exact)
    monkeypatch.setattr(colgen, "largest_ratio_bound", largest_ratio_bound)
    monkeypatch.setattr(colgen, "_beam_on_features", lambda *args: [])
    monkeypatch.setattr(colgen, "_neighbour_clauses", lambda *args: [])
    result = column_generation(features, y, 5.0, 0.0, 2, pricing_time_limit=0.5, beam_width=2, budget=budget)
    # 0.5 + 1 + 2 + 4 + 8 s (and 0.25 s over one-condition clauses first), then what is left of
    # 40 - 2 (the MIP) - 10 (the certificate)
    assert limits == pytest.approx([0.5, 1.0, 2.0, 4.0, 8.0, 12.25], rel=1e-2)
    assert ratio_seconds and ratio_seconds[0] >= 10.0
    assert 0 < result.certificate.lower_bound <= optimum + 1e-6 <= result.objective + 1e-6


def test_the_certificate_proves_the_last_duals_when_generation_runs_out(monkeypatch):
    """Generation cut by its time leaves duals nobody priced: the certificate's search proves their
    bound beside the final MIP, until the fit's deadline (the quarter of the budget kept for it, and
    the MIP's time); the bound holds (<= the optimum) and says something."""
    import optrules.rulesets.colgen as colgen

    features, y, optimum = certificate_instance()
    real_exact, certified = colgen._exact, []
    real_ratio, ratio_seconds = colgen.largest_ratio_bound, []
    budget = VirtualClockBudget(40.0)
    calls = []

    def largest_ratio_bound(*args, **kwargs):
        ratio_seconds.append(args[8])
        return real_ratio(*args, **kwargs)

    def exact(method, data, mu, unit_price, max_degree, time_limit, seed, should_stop=None, search=None, work=None):
        if time_limit <= 0.5:  # a call during generation: finds clauses, proves nothing, uses up the time
            improving = real_exact(method, data, mu, unit_price, max_degree, time_limit, seed, should_stop, search, work)[0]
            calls.append(time_limit)
            if len(calls) == 2:  # duals a step on from the first (every positive 1): a bound to prove
                budget.advance(28.5)  # generation has 40 - 10 (certificate) - 2 (final MIP) = 28 s
            return improving, -np.inf, False, None
        certified.append(time_limit)
        return real_exact(method, data, mu, unit_price, max_degree, time_limit, seed, should_stop, search, work)

    monkeypatch.setattr(colgen, "_exact", exact)
    monkeypatch.setattr(colgen, "largest_ratio_bound", largest_ratio_bound)
    monkeypatch.setattr(colgen, "_beam_on_features", lambda *args: [])  # the exact pricing does it all
    monkeypatch.setattr(colgen, "_neighbour_clauses", lambda *args: [])
    result = column_generation(features, y, 5.0, 0.0, 2, pricing_time_limit=0.5, beam_width=2, budget=budget)
    assert certified == [] and ratio_seconds == pytest.approx([11.45])  # what is left of the 40 s
    assert 0 < result.certificate.lower_bound <= optimum + 1e-6 <= result.objective + 1e-6
    assert result.certificate.lower_bound > result.certificate.counters["conflict_bound"]  # its own
    # proven at the restricted master's own price, these duals solve the LP over every clause
    counters = result.certificate.counters
    assert counters["lp_solved"] == (counters["lp_objective"] == pytest.approx(full_mip_optimum(features, y, 5.0, 2)[1]))
    # without a time limit there is no share to keep, and a call that proves nothing is retried longer
    certified.clear()
    result = column_generation(features, y, 5.0, 0.0, 2, time_limit=None, pricing_time_limit=0.5, beam_width=2)
    # twice the first call's time: the call's 0.5 s less what the shorter clauses' search took (a few ms,
    # more on a loaded machine)
    assert certified == pytest.approx([2.0 * calls[-1]]) and 0.8 < certified[0] <= 1.0
    assert result.certificate.counters["lp_solved"]


def test_column_generation_with_the_pricing_ip():
    """The HiGHS pricing IP stays available (exact_pricing="ip") and agrees on small instances."""
    for seed in range(6):
        rng = np.random.default_rng(900 + seed)
        features = rng.random((40, 5)) < 0.5
        y = (features[:, 0] & features[:, 1]) | (rng.random(40) < 0.1)
        optimum, _ = full_mip_optimum(features, y, 6.0, 2)
        for method in ("ip", "enumeration"):
            result = column_generation(features, y, 6.0, 0.0, 2, time_limit=30, pricing_time_limit=10, exact=method)
            assert result.certificate.lower_bound <= optimum + 1e-6 <= result.objective + 2e-6
    with pytest.raises(ValueError, match="exact pricing"):
        column_generation(features, y, 6.0, 0.0, 2, exact="cp-sat")


@pytest.mark.parametrize("seed", range(60))
def test_a_solved_lp_ends_certified_at_the_enumerated_optimum(seed):
    """Where the LP over every clause is above its ceiling (an integrality gap), the restricted MIP alone
    proves nothing; the columns that could be in a better set, and the MIP over them, prove the set."""
    features, y, complexity, max_degree, rng = planted_instance(1000 + seed)
    weights = rng.uniform(0.5, 2.0, len(y)) if seed % 3 == 0 else None  # real weights: no rounding up
    optimum = full_mip_optimum(features, y, complexity, max_degree, weights=weights)[0]
    result = column_generation(features, y, complexity, 0.0, max_degree, time_limit=60, pricing_time_limit=20,
                               sample_weight=weights)
    cert = result.certificate
    assert cert.counters["lp_solved"]
    assert cert.is_optimal, (cert.status, result.objective, cert.lower_bound, optimum)
    assert result.objective == pytest.approx(optimum)


@pytest.mark.parametrize("seed", range(30))
def test_a_poor_first_set_is_improved_to_the_proven_optimum(monkeypatch, seed):
    """The first restricted MIP returns nothing (the greedy choice stands): the sets of value v = lower
    bound, lower bound + 1, ... must still be found among the columns below v, and a bound claimed
    only when no set of value <= v exists."""
    features, y, complexity, max_degree, _ = planted_instance(2000 + seed)
    optimum = full_mip_optimum(features, y, complexity, max_degree)[0]
    solve_mip, calls = MasterProblem.solve_mip, []

    def first_finds_nothing(self, time_limit):
        calls.append(time_limit)
        return (np.inf, [], -np.inf, False) if len(calls) == 1 else solve_mip(self, time_limit)
    monkeypatch.setattr(MasterProblem, "solve_mip", first_finds_nothing)
    result = column_generation(features, y, complexity, 0.0, max_degree, time_limit=60, pricing_time_limit=20)
    cert = result.certificate
    assert cert.lower_bound <= optimum + 1e-9
    if cert.counters["lp_solved"]:
        assert cert.is_optimal and result.objective == pytest.approx(optimum)


@pytest.mark.parametrize("seed", range(30))
def test_a_bound_from_the_columns_below_holds_when_the_next_value_is_not_tried(monkeypatch, seed):
    """Cut after one value v (time, memory): the bound is v + 1 at most, and only if no set is worth v."""
    import optrules.rulesets.colgen as colgen

    features, y, complexity, max_degree, _ = planted_instance(4000 + seed)
    optimum = full_mip_optimum(features, y, complexity, max_degree)[0]
    solve_mip, columns_below, calls = MasterProblem.solve_mip, colgen._columns_below, []
    monkeypatch.setattr(MasterProblem, "solve_mip", lambda self, t: (np.inf, [], -np.inf, False) if not calls
                        else solve_mip(self, t))
    monkeypatch.setattr(colgen, "_columns_below", lambda *a, **k: None if calls.append(1) or len(calls) > 1
                        else columns_below(*a, **k))
    result = column_generation(features, y, complexity, 0.0, max_degree, time_limit=60, pricing_time_limit=20)
    cert = result.certificate
    assert cert.lower_bound <= optimum + 1e-9 <= result.objective + 2e-9
    assert cert.is_optimal == (result.objective == pytest.approx(cert.lower_bound))


def test_ctrl_c_below_the_gap_returns_the_set_as_interrupted(monkeypatch):
    import optrules.rulesets.colgen as colgen

    features, y, complexity, max_degree, _ = planted_instance(4000)  # its first set is not proven
    optimum = full_mip_optimum(features, y, complexity, max_degree)[0]
    budget = Budget(60)
    monkeypatch.setattr(MasterProblem, "solve_mip", lambda self, t: (np.inf, [], -np.inf, False))
    monkeypatch.setattr(colgen, "_columns_below", lambda *a, **k: budget.interrupt())
    result = column_generation(features, y, complexity, 0.0, max_degree, budget=budget, pricing_time_limit=20)
    assert result.certificate.status == "interrupted"
    assert result.certificate.lower_bound <= optimum + 1e-9 <= result.objective + 2e-9


# seeds of planted_instance(4000 + seed) whose gap's search reports a value (a pool, its MIP proven)
CLOSING_REPORTS = [0, 4, 9, 13, 15, 20, 21]


@pytest.mark.parametrize("seed", CLOSING_REPORTS)
def test_a_cancel_reported_while_closing_the_gap_returns_the_set_as_interrupted(monkeypatch, seed):
    """The web app's progress callback raises KeyboardInterrupt for a cancelled run; raised at the report
    after a value of the gap's search, it used to come out of the fit (the run ended with no model)."""
    import optrules.rulesets.colgen as colgen

    features, y, complexity, max_degree, _ = planted_instance(4000 + seed)
    optimum = full_mip_optimum(features, y, complexity, max_degree)[0]
    solve_mip, columns_below, closing, raised = MasterProblem.solve_mip, colgen._columns_below, [], []
    monkeypatch.setattr(MasterProblem, "solve_mip", lambda self, t: (np.inf, [], -np.inf, False) if not closing
                        else solve_mip(self, t))  # (the first set is not proven: the gap's search runs)
    monkeypatch.setattr(colgen, "_columns_below", lambda *a, **k: closing.append(1) or columns_below(*a, **k))

    def progress(trace, counters):
        if closing:
            raised.append(1)
            raise KeyboardInterrupt
    try:
        result = column_generation(features, y, complexity, 0.0, max_degree, time_limit=60, pricing_time_limit=20,
                                   progress=progress)
    except KeyboardInterrupt:
        pytest.fail("the cancel's KeyboardInterrupt came out of the fit")
    cert = result.certificate
    assert cert.lower_bound <= optimum + 1e-9 <= result.objective + 2e-9
    # (the value the report followed may have proven the set: optimal then, the cancel notwithstanding)
    assert cert.status == ("optimal" if result.objective <= cert.lower_bound + 1e-9 else "interrupted")
    assert raised


@pytest.mark.parametrize("seed", range(30))
def test_the_columns_below_a_value_are_every_clause_a_set_of_that_value_may_use(seed):
    """Against every clause: each one priced at most v - (sum(mu) - lambda C) by the LP's duals is
    collected, or one with as few conditions covering the same rows is."""
    from optrules.rulesets.colgen import _columns_below

    features, y, complexity, max_degree, rng = planted_instance(3000 + seed)
    y = y.astype(bool)
    positives = np.flatnonzero(y)
    master = MasterProblem(len(positives), complexity)
    clauses = [c for d in range(max_degree + 1) if 1 + d <= complexity
               for c in itertools.combinations(range(features.shape[1]), d)]
    covers = [features[:, list(c)].all(axis=1) if c else np.ones(len(y), bool) for c in clauses]
    for clause, covered in zip(clauses, covers):
        master.add_clause(int((covered & ~y).sum()), 1 + len(clause), np.flatnonzero(covered[positives]))
    lp_value, mu, lam = master.solve_lp()
    data = PricingData.from_features(features, y)
    dual_value = float(np.clip(mu, 0, 1).sum()) - lam * complexity
    for v in (np.ceil(lp_value - 1e-9), np.ceil(lp_value - 1e-9) + 1, np.ceil(lp_value - 1e-9) + 3):
        pool = _columns_below(data, mu, lam, 0.0, complexity, 1.0, max_degree, len(positives), v, True, 30)
        assert pool is not None
        kept = {(cov.tobytes(), len(c)) for c, cov in zip(clauses, covers) if c in set(pool)}
        for clause, covered in zip(clauses, covers):
            reduced = int((covered & ~y).sum()) + lam * (1 + len(clause)) - np.clip(mu, 0, 1)[covered[positives]].sum()
            if reduced <= v - dual_value + 1e-9:
                assert any((covered.tobytes(), d) in kept for d in range(len(clause) + 1)), (clause, reduced, v)


@pytest.mark.parametrize("seed", range(20))
def test_distinct_rows_by_hashes_are_numpys_unique_rows(seed, monkeypatch):
    from optrules.rulesets.rows import _distinct, distinct_rows

    if seed % 2:  # rows packed in many blocks
        monkeypatch.setattr(bitset, "BLOCK_BYTES", 200)

    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(0, 300)), int(rng.integers(1, 80))
    rows = rng.random((n, m)) < rng.uniform(0.02, 0.5)
    rows = rows[rng.integers(0, max(n, 1), n)] if n else rows  # repeated rows
    first, inverse = _distinct(bitset.pack(rows))
    _, first_np, inverse_np = np.unique(np.packbits(rows, axis=1), axis=0, return_index=True, return_inverse=True)
    np.testing.assert_array_equal(first, first_np)
    np.testing.assert_array_equal(inverse, inverse_np.ravel())
    label = rng.random(n) < 0.5  # rows that differ in features or label, ordered as numpy orders them
    weights = rng.uniform(0.5, 2.0, n)
    if seed % 4 == 3:  # rows of weight 0 are dropped
        weights[rng.random(n) < 0.3] = 0.0
    columns = bitset.pack_columns(rows)
    features, y, totals, groups, packed = distinct_rows(columns, label, weights, feature_groups=True, packed=True)
    kept = weights > 0
    keys = np.column_stack([np.packbits(rows[kept], axis=1), label[kept].astype(np.uint8)])
    _, first_np, inverse_np = np.unique(keys, axis=0, return_index=True, return_inverse=True)
    expected = rows[kept][first_np]
    np.testing.assert_array_equal(bitset.unpack(features, len(y)).T, expected)  # packed by feature
    np.testing.assert_array_equal(packed, bitset.pack(expected))  # and by sample
    np.testing.assert_array_equal(y, label[kept][first_np])
    np.testing.assert_allclose(totals, np.bincount(inverse_np.ravel(), weights[kept], minlength=len(first_np)))
    np.testing.assert_array_equal(groups, _distinct(packed)[1] if len(y) else groups)
    distinct_features, distinct_y = distinct_rows(columns, label)[:2]
    every_row_differs = len(np.unique(np.column_stack([np.packbits(rows, axis=1), label]), axis=0)) == n
    assert distinct_features is columns if every_row_differs else len(distinct_y) < n  # as it came, or fewer


def test_some_tiny_instances_are_certified():
    certified = 0
    for seed in range(10):
        rng = np.random.default_rng(100 + seed)
        features = rng.random((30, 4)) < 0.5
        y = features[:, 0] & features[:, 1]
        result = column_generation(features, y, 10.0, 0.0, 2, time_limit=20, pricing_time_limit=5)
        certified += result.certificate.is_optimal
        assert result.objective == 0  # the planted clause explains y exactly
    assert certified >= 8


def test_greedy_selection_stays_within_the_bound_and_only_improves():
    from optrules.rulesets.selection import _greedy_selection, _objective

    rng = np.random.default_rng(12)
    for _ in range(30):
        features = bitset.pack_columns(rng.random((60, 6)) < 0.5)
        y = rng.random(60) < 0.4
        clauses = [tuple(sorted(rng.choice(6, size=rng.integers(1, 3), replace=False).tolist())) for _ in range(8)]
        clauses = list(dict.fromkeys(clauses))
        complexity = int(rng.integers(2, 9))
        ones = np.ones(len(y))
        chosen = _greedy_selection(features, y, clauses, complexity, ones, 0.0)
        assert sum(1 + len(c) for c in chosen) <= complexity
        assert len(set(chosen)) == len(chosen)
        value = _objective(features, y, chosen, ones, 0.0)
        assert value <= _objective(features, y, [], ones, 0.0)
        # no single remaining clause that fits would lower the objective further (greedy's stopping rule)
        used = sum(1 + len(c) for c in chosen)
        for clause in clauses:
            if clause not in chosen and used + 1 + len(clause) <= complexity:
                assert _objective(features, y, chosen + [clause], ones, 0.0) >= value


def _all_clauses(n_features, max_degree):
    return [c for d in range(1, max_degree + 1) for c in itertools.combinations(range(n_features), d)]


@pytest.mark.parametrize("seed", range(40))
def test_the_dual_bound_holds_for_any_duals(seed):
    """weak_duality_bound never passes the best rule set (nor, with a complexity bound, the LP over every
    clause), whatever duals price the clauses: the LP's own (where it is tight), and perturbed ones that
    leave some clauses, the empty clause among them, with negative reduced cost."""
    from optrules.rulesets.bounds import weak_duality_bound

    rng = np.random.default_rng(3000 + seed)
    n, j = int(rng.integers(10, 40)), int(rng.integers(2, 6))
    features = rng.random((n, j)) < 0.5
    y = (features[:, 0] & features[:, 1]) | (rng.random(n) < rng.uniform(0.1, 0.6))  # often mostly positive
    if y.all():
        y[0] = False
    complexity = float(rng.choice([2, 3, 5, 30, np.inf]))
    max_degree, penalty = int(rng.integers(1, 4)), float(rng.choice([0.0, 0.5]))
    optimum, lp_optimum = full_mip_optimum(features, y, complexity, max_degree, penalty)
    data = PricingData.from_features(features, y)
    n_pos = int(y.sum())
    # the LP over every clause, for its optimal duals
    master = MasterProblem(n_pos, complexity)
    positives = np.flatnonzero(y)
    for clause in [()] + _all_clauses(j, max_degree):
        covered = features[:, list(clause)].all(axis=1) if clause else np.ones(n, bool)
        master.add_clause(int((covered & ~y).sum()) + penalty * (1 + len(clause)), 1 + len(clause),
                          np.flatnonzero(covered[positives]))
    lp_value, mu_star, lam_star = master.solve_lp()
    for trial in range(8):
        if trial == 0:
            mu, lam = mu_star, lam_star
        elif trial < 3:  # lambda too low: each column's reduced cost drops by its complexity times the error
            mu, lam = mu_star, max(0.0, lam_star - rng.uniform(0.01, 0.3))
        else:
            mu = np.clip(mu_star + rng.normal(0, 0.4, n_pos), 0, None) * rng.choice([1.0, 1.5])
            lam = max(0.0, lam_star + rng.normal(0, 0.5))
        unit = penalty + lam
        smallest = min(data.reduced_cost(c, mu, unit) for c in _all_clauses(j, max_degree))
        ratio = min(data.reduced_cost(c, mu, unit) / (1 + len(c)) for c in _all_clauses(j, max_degree))
        empty = data.reduced_cost((), mu, unit)
        bound = weak_duality_bound(mu, lam, complexity, 1.0, empty, smallest, max_degree, n_pos)
        with_ratio = weak_duality_bound(mu, lam, complexity, 1.0, empty, smallest, max_degree, n_pos, ratio)
        assert bound <= with_ratio <= optimum + 1e-7
        if np.isfinite(complexity):
            assert with_ratio <= lp_value + 1e-7
        # the certificate's search proves the largest ratio itself: the bound with the exact ratio (no time
        # limit: with one, the ladder predicts each proof's cost from the last one's seconds, and a first proof
        # that compiled the search's kernels on a busy machine stopped it at a rung: 11.5 for 12.0 in CI)
        largest = largest_ratio_bound(data, mu, lam, penalty, complexity, 1.0, max_degree, n_pos, np.inf)
        assert largest == pytest.approx(with_ratio, abs=1e-7)
        if trial == 0:  # at the LP's own duals every clause prices >= 0: the bound is the LP optimum
            assert bound == pytest.approx(lp_value, abs=1e-6)


@pytest.mark.parametrize("seed", range(30))
def test_redundant_clauses_are_dropped_at_no_cost(seed):
    from optrules.rulesets.selection import _objective, _without_redundant_clauses

    rng = np.random.default_rng(6200 + seed)
    n, j = int(rng.integers(10, 40)), int(rng.integers(2, 6))
    table = rng.random((n, j)) < 0.6
    features = bitset.pack_columns(table)
    y = rng.random(n) < 0.5
    every = [c for d in range(0, 3) for c in itertools.combinations(range(j), d)]
    clauses = [every[i] for i in rng.choice(len(every), size=min(len(every), int(rng.integers(1, 6))), replace=False)]
    # each sample's cost (its class weight times a sample weight), and the penalty
    costs = np.where(y, float(rng.choice([1.0, 2.0])), float(rng.choice([1.0, 0.5]))) * rng.uniform(0.2, 3.0, n)
    weights = (costs, float(rng.choice([0.0, 0.3])))
    before = _objective(features, y, clauses, *weights)
    kept, after = _without_redundant_clauses(features, y, clauses, before, *weights)
    assert set(kept) <= set(clauses) and after <= before + 1e-12
    assert after == pytest.approx(_objective(features, y, kept, *weights))

    def covered(cs):
        return np.logical_or.reduce([table[:, list(c)].all(axis=1) for c in cs] + [np.zeros(n, bool)])

    assert (covered(kept) & y).sum() == (covered(clauses) & y).sum()  # no positive is lost
    for k in range(len(kept)):
        assert (covered(kept[k:k + 1]) & y & ~covered(kept[:k] + kept[k + 1:])).any()


def test_clauses_longer_than_the_bound_allows_are_never_priced():
    """With a complexity bound C, no rule set holds a clause of more than C - 1 conditions, so column
    generation solves the LP over the clauses that fit: tighter than the LP over every clause of up to
    max_degree conditions, and its bound still below the optimum."""
    from optrules.rulesets.colgen import feasible_degree

    assert [feasible_degree(5, c) for c in (2, 3, 5.5, 6, 30, np.inf)] == [1, 2, 4, 5, 5, 5]
    tighter = 0
    for seed in range(12):
        rng = np.random.default_rng(seed)
        features = rng.random((40, 6)) < 0.5
        y = (features[:, 0] & features[:, 1] & features[:, 2]) | (rng.random(40) < 0.1)
        optimum, lp_fitting = full_mip_optimum(features, y, 3.0, 2)
        _, lp_every = full_mip_optimum(features, y, 3.0, 4, fitting_only=False)
        result = column_generation(features, y, 3.0, 0.0, 4, time_limit=30, pricing_time_limit=10)
        cert = result.certificate
        assert cert.counters["lp_solved"]
        assert cert.counters["lp_objective"] == pytest.approx(lp_fitting, abs=1e-6)
        assert cert.lower_bound <= optimum + 1e-6
        assert all(len(clause) <= 2 for clause in result.solution)
        tighter += lp_fitting > lp_every + 1e-6
    assert tighter >= 3  # the instances do tell the two relaxations apart


@pytest.mark.parametrize("block_bytes", [50, 16 << 20])
@pytest.mark.parametrize("weighted", [False, True])
def test_packed_rows_cost_is_the_product(block_bytes, weighted, monkeypatch):
    """What packed sets of rows of one class cost: a popcount when that class's rows cost alike, a
    block-wise sum otherwise; the product of the boolean sets with the costs either way."""
    from optrules.rulesets.selection import _rows_cost

    monkeypatch.setattr(bitset, "BLOCK_BYTES", block_bytes)
    rng = np.random.default_rng(3)
    y = rng.random(1000) < 0.5
    costs = np.where(y, 2.0, 0.5) * (rng.uniform(0.5, 2.0, 1000) if weighted else 1.0)
    for within in (y, ~y):
        covers = (rng.random((7, 1000)) < 0.4) & within
        np.testing.assert_allclose(_rows_cost(bitset.pack(covers), 1000, costs, within), covers @ costs, rtol=1e-12)


def test_tailing_off_is_a_flat_lp_over_time_solves_and_exact_calls():
    from optrules.rulesets.colgen import _creeping, _tailing_off

    # 8.5 from 1.5 s to 11.5 s, an exact pricing call every other solve (and a search over shorter clauses)
    flat = [(0.0, 10.0, 0, 0), (1.0, 9.0, 0, 0)] + [(1.0 + 0.5 * k, 8.5, k // 2, k) for k in range(1, 22)]
    assert _tailing_off(flat, 60.0)  # window 6 s: 8.5 at 5.5 s and at 11.5 s, 12 solves, 6 exact calls apart
    assert not _tailing_off(flat, 200.0)  # window 20 s: not that long flat yet
    assert not _tailing_off(flat[:-1] + [(11.5, 8.4, 10, 21)], 60.0)  # the last solve moved it
    assert not _tailing_off([(0.0, 5.0, 0, 0), (10.0, 5.0, 5, 5), (20.0, 5.0, 10, 10)], 60.0)  # two solves only
    beam_only = [(t, v, 3, 3) for t, v, _, _ in flat]  # flat as long, but no exact pricing in between
    assert not _tailing_off(beam_only, 60.0) and not _creeping(beam_only, 60.0)
    assert not _tailing_off([(0.0, 5.0, 0, 0)], 60.0)
    # creeping: bank-full's LP fell by ~1 every 2 s from 4,300, a search over shorter clauses each solve and
    # no search over every clause: not flat, but creeping
    creeping = [(2.0 * k, 4300.0 - k, 0, k) for k in range(8)]
    assert _creeping(creeping, 60.0) and not _tailing_off(creeping, 60.0)  # 6 s: 3 of 4,297 (a thousandth: 4.3)
    assert not _creeping([(t, 4300.0 - 3.0 * k, e, c) for k, (t, _, e, c) in enumerate(creeping)], 60.0)  # 9
    assert not _creeping([(t, 5.0 - 0.01 * k, e, c) for k, (t, _, e, c) in enumerate(creeping)], 60.0)  # 0.03 of 5
    assert _creeping(flat, 60.0)  # flat is creeping too


@pytest.mark.parametrize("seed", range(8))
def test_a_fit_whose_lp_tails_off_spends_the_rest_on_the_bound(seed, monkeypatch):
    """Generation ended on a flat LP: the last duals' bound is proven with the rest of the time (here at
    once, on small problems), it holds against the enumerated optimum, and a finished proof is a gap,
    not a time budget; proven at the master's own price, the LP is solved (its value the LP optimum over
    every clause) and the gap closing below proves these sets optimal."""
    from optrules.certificate import GAP, OPTIMAL
    from optrules.rulesets import colgen

    monkeypatch.setattr(colgen, "_tailing_off", lambda history, limit: len(history) >= 2)
    features, y, complexity, max_degree, _ = planted_instance(100 + seed)
    optimum, lp_optimum = full_mip_optimum(features, y, complexity, max_degree)
    result = column_generation(features, y, complexity, 0.0, max_degree, time_limit=20, pricing_time_limit=5)
    cert = result.certificate
    assert cert.lower_bound <= optimum + 1e-6 <= result.objective + 1e-6
    assert cert.status in (GAP, OPTIMAL)
    assert cert.counters["iterations"] <= 2
    if cert.counters["lp_solved"]:  # the certificate proved the duals at their own price: the LP is solved
        assert cert.counters["lp_objective"] == pytest.approx(lp_optimum, abs=1e-6)


@pytest.mark.parametrize("seed", [1, 2, 3, 5, 6, 7])  # (seeds 0 and 4: the first pricing solves the LP)
def test_a_creeping_lp_whose_search_over_every_clause_finds_nothing_ends_generation(seed, monkeypatch):
    """On a creeping LP the pricing after the beam is one short search over every clause, not retried and
    not preceded by the shorter ones; when it finds nothing, generation ends there and the certificate
    proves the last duals' bound, which holds against the enumerated optimum."""
    from optrules.rulesets import colgen

    creeping: list[bool] = []  # what _creeping said at each solve
    monkeypatch.setattr(colgen, "_creeping", lambda history, limit: creeping.append(len(history) >= 2) or creeping[-1])
    monkeypatch.setattr(colgen, "_beam_on_features", lambda *args: [])
    monkeypatch.setattr(colgen, "_neighbour_clauses", lambda *args: [])
    real_exact, real_shorter, calls, shorter = colgen._exact_with_bound, colgen._shorter_improving_clauses, [], []

    def exact(*args):
        calls.append((creeping[-1], args[9]))  # (creeping, seconds)
        return ([], -np.inf, False, -np.inf) if creeping[-1] else real_exact(*args)

    def shorter_clauses(*args):
        shorter.append(creeping[-1])
        return real_shorter(*args)
    real_certificate, certificate_seconds = colgen.largest_ratio_bound, []

    def certificate(*args, **kwargs):
        certificate_seconds.append(args[8])
        return real_certificate(*args, **kwargs)
    monkeypatch.setattr(colgen, "_exact_with_bound", exact)
    monkeypatch.setattr(colgen, "_shorter_improving_clauses", shorter_clauses)
    monkeypatch.setattr(colgen, "largest_ratio_bound", certificate)
    features, y, complexity, max_degree, _ = planted_instance(300 + seed)
    optimum, _ = full_mip_optimum(features, y, complexity, max_degree)
    result = column_generation(features, y, complexity, 0.0, max_degree, time_limit=20, pricing_time_limit=5)
    cert = result.certificate
    assert not cert.counters["lp_solved"]
    assert creeping == [False, True] and shorter == [False]  # no search over shorter clauses when creeping
    assert [seconds for crept, seconds in calls if crept] == [pytest.approx(colgen._CREEP_SHARE * 20, abs=0.01)]  # once
    assert cert.counters["iterations"] == 2
    assert certificate_seconds and certificate_seconds[0] > 10.0  # all the time left, not the quarter kept for it
    assert cert.lower_bound <= optimum + 1e-6 <= result.objective + 1e-6


def _singleton_duals(seed, n, j, max_degree, complexity, noise):
    """A random table whose label is two planted clauses or noise, and the duals of its master over the
    one-feature clauses (duals a ratio search has more to prove for): ``(data, mu, lam, n_pos,
    bound_at)``, ``bound_at(theta)`` the Lagrangian bound at complexity price theta."""
    from optrules.rulesets.bounds import weak_duality_bound

    rng = np.random.default_rng(7100 + seed)
    features = rng.random((n, j)) < rng.uniform(0.2, 0.8, j)
    y = (features[:, 0] & ~features[:, 1]) | (features[:, 2] & features[:, 3]) | (rng.random(n) < noise)
    data = PricingData.from_features(features, y)
    positives, n_pos = np.flatnonzero(y), int(y.sum())
    master = MasterProblem(n_pos, complexity)
    for f in range(j):
        master.add_clause(int((features[:, f] & ~y).sum()), 2, np.flatnonzero(features[positives, f]))
    _, mu, lam = master.solve_lp()

    def bound_at(theta):
        return weak_duality_bound(mu, theta, complexity, 1.0, data.reduced_cost((), mu, theta), 0.0, max_degree, n_pos)
    return data, mu, lam, n_pos, bound_at


def _ladder_case(seed, n, j, max_degree, complexity, noise):
    """:func:`_singleton_duals`, with the bound at the master's price, the largest ratio of any clause
    (brute force) and the first rung's price (the quarter of that bound)."""
    data, mu, lam, n_pos, bound_at = _singleton_duals(seed, n, j, max_degree, complexity, noise)
    at_master = bound_at(lam)
    largest = max(-data.reduced_cost(c, mu, 0.0) / (1 + len(c)) for c in _all_clauses(j, max_degree))
    return data, mu, lam, n_pos, bound_at, at_master, largest, lam + 0.75 * at_master / complexity


def _two_feature_mus(data, mu, max_degree):
    from optrules.rulesets.enumeration import PricingSearch

    return PricingSearch(data, mu, 1.0, max_degree, raise_price=True).two_feature_mus()


def _proof_work(data, mu, prices, max_degree):
    """The work (clauses searched) of proving each of the unit ``prices`` alone."""
    from optrules.budget import NodeBudget
    from optrules.rulesets.enumeration import PricingSearch

    spent = []
    for price in prices:
        work = NodeBudget()
        PricingSearch(data, mu, price, max_degree, raise_price=True).run(60.0, work=work)
        spent.append(work.spent)
    return spent


def test_the_certificate_proves_a_cheaper_price_first():
    """largest_ratio_bound first proves the price where the bound is a quarter of the restricted
    master's (a proof at a higher price prunes more), then the largest ratio: with work enough for the
    first proof only, the bound is that quarter (where the largest ratio's search cut short bounds
    less), never above the bound at the largest ratio (brute force)."""
    from optrules.budget import NodeBudget

    checked = 0
    for seed in range(6):
        j, max_degree, complexity = 40, 3, 10.0
        data, mu, lam, n_pos, bound_at, at_master, largest, rung = _ladder_case(seed, 400, j, max_degree,
                                                                                complexity, 0.3)
        assert at_master > 0
        exact = bound_at(max(lam, largest))
        # with the time to finish: the largest ratio itself
        outcome = []
        assert largest_ratio_bound(data, mu, lam, 0.0, complexity, 1.0, max_degree, n_pos, 60.0,
                                   outcome=outcome) == pytest.approx(exact)
        assert outcome == [(True, pytest.approx(max(lam, largest)))]
        if largest >= rung:
            continue  # the first proof finds the largest ratio itself
        spent = _proof_work(data, mu, (rung, lam), max_degree)
        if spent[1] < 3 * spent[0]:
            continue
        work = int(1.5 * spent[0])
        outcome = []
        bound = largest_ratio_bound(data, mu, lam, 0.0, complexity, 1.0, max_degree, n_pos, 60.0,
                                    work=NodeBudget(work), outcome=outcome)
        assert 0.25 * at_master - 1e-7 <= bound <= exact + 1e-7
        assert len(outcome) == 1 and not outcome[0][0]  # the largest ratio's search, cut short
        alone = largest_ratio_bound(data, mu, lam, 0.0, complexity, 1.0, max_degree, n_pos, 60.0,
                                    work=NodeBudget(work - spent[0]))
        assert alone < 0.25 * at_master  # what the same work bounds without the cheaper proof
        checked += 1
    assert checked >= 2


def test_the_next_rung_is_the_lowest_price_the_cost_model_says_the_budget_pays_for():
    """_next_rung_price: a proof's cost taken to grow as (1 + the pairs of features its price leaves
    open)^kappa (kappa 4 after one rung, the last two rungs' after two); the lowest price costing at most
    0.8 of what is left, else all of it; the largest ratio known when that fits, None when no price below
    the last rung's does."""
    from optrules.rulesets.bounds import _next_rung_price

    pairs = np.arange(1.0, 1001.0)  # one pair of each mu 1..1000: at the price u, those > 4u are open

    def opened(u):
        return 1 + np.count_nonzero(pairs > 4 * u)

    rung = [(150.0, 1.0, 1000)]  # 401 open (mu 600..1000)
    assert _next_rung_price(rung, 10.0, None, 10**9, pairs) == 10.0
    assert _next_rung_price(rung, 10.0, 1e6, None, pairs) == 10.0
    assert _next_rung_price(rung, 10.0, None, None, pairs) == 10.0
    for left in (2_000, 5_000, 20_000):
        price = _next_rung_price(rung, 10.0, None, left, pairs)
        # what 0.8 of it pays for, and no lower price of a pair does
        assert 10.0 < price < 150.0
        assert 1000 * (opened(price) / opened(150.0)) ** 4 <= 0.8 * left + 1e-6
        assert 1000 * (opened(price - 0.25) / opened(150.0)) ** 4 > 0.8 * left
    # seconds and work both bound it: the dearer wins
    assert _next_rung_price(rung, 10.0, 2.0, 10**9, pairs) == _next_rung_price(rung, 10.0, None, 2_000, pairs)
    # 1,100 left: 0.8 of it pays for no lower price, all of it does
    price = _next_rung_price(rung, 10.0, None, 1_100, pairs)
    assert 10.0 < price < 150.0 and 0.8 * 1_100 < 1000 * (opened(price) / opened(150.0)) ** 4 <= 1_100
    assert _next_rung_price(rung, 10.0, None, 999, pairs) is None
    assert _next_rung_price(rung, 10.0, 0.0, None, pairs) is None
    # two rungs: 8 times the work for twice the pairs open: kappa 3
    rungs = [(150.0, 1.0, 1000), (49.875, 9.0, 8000)]  # 401 -> 801 open
    assert opened(49.875) == 2 * opened(150.0)
    price = _next_rung_price(rungs, 10.0, None, 12_000, pairs)
    assert 10.0 < price < 49.875
    assert 8000 * (opened(price) / opened(49.875)) ** 3 <= 0.8 * 12_000 + 1e-6
    assert 8000 * (opened(price - 0.25) / opened(49.875)) ** 3 > 0.8 * 12_000
    # without work counted, the seconds measure it, alike
    assert _next_rung_price([(150.0, 1.0, 0), (49.875, 8.0, 0)], 10.0, 12.0, None, pairs) == price


def test_two_feature_mus_are_the_mu_each_pair_of_searched_features_covers():
    """PricingSearch.two_feature_mus: the mu (duals of the positives) both features of each pair of the
    search's features cover, brute force over the boolean matrix; capped, a sample of those same
    values, alike on every call."""
    from optrules.rulesets.enumeration import PricingSearch

    data, mu, lam, n_pos, _ = _singleton_duals(3, 400, 60, 3, 10.0, 0.3)
    search = PricingSearch(data, mu, 1.0, 3, raise_price=True)
    order = search._parts[0].problem.order
    assert len(order) * (len(order) - 1) // 2 > 1_000
    positive = data.unpacked().positive
    expected = np.array(sorted(float(mu[positive[:, a] & positive[:, b]].sum())
                               for i, a in enumerate(order) for b in order[i + 1:]))
    assert search.two_feature_mus() == pytest.approx(expected)
    sample = search.two_feature_mus(max_pairs=50)  # (at least 1,000 pairs)
    assert 900 <= len(sample) <= 1_000 and np.all(np.diff(sample) >= 0)
    assert np.array_equal(sample, search.two_feature_mus(max_pairs=50))
    assert all(np.isclose(expected, value).any() for value in sample)


def test_after_a_rung_the_certificate_proves_the_price_the_work_left_pays_for(monkeypatch):
    """After the first rung the certificate proves the price _next_rung_price chooses for the work left
    (the largest ratio's proof would not finish): the bound is at least that price's, above the
    quarter's, never above the bound at the largest ratio (brute force); the largest ratio's proof
    straight after the rung, cut short, proves less. With no lower price that all the work left pays for,
    it stops after the rung, not finished, and spends nothing more."""
    from optrules.budget import NodeBudget

    checked = 0
    for seed in range(12):
        # many rows, few features, noisy labels: duals whose proofs cost more as the price falls, as on
        # bank marketing
        j, max_degree, complexity = 16, 4, 10.0
        data, mu, lam, n_pos, bound_at, at_master, largest, rung = _ladder_case(seed, 3000, j, max_degree,
                                                                                complexity, 0.4)
        if largest >= rung:
            continue  # the first rung finds the largest ratio itself
        first, at_lam = _proof_work(data, mu, (rung, lam), max_degree)
        left = 4 * first
        pairs = _two_feature_mus(data, mu, max_degree)
        following = bounds._next_rung_price([(rung, 1.0, first)], lam, None, left, pairs)
        assert following is not None and lam <= following < rung
        if following <= max(lam, largest) or at_lam <= left:
            continue  # the largest ratio itself, or within the work left
        (then,) = _proof_work(data, mu, (following,), max_degree)
        if then > left:
            continue  # the model's guess too dear here
        bound = largest_ratio_bound(data, mu, lam, 0.0, complexity, 1.0, max_degree, n_pos, 60.0,
                                    work=NodeBudget(first + left + 2))
        assert bound_at(following) - 1e-7 <= bound <= bound_at(max(lam, largest)) + 1e-7
        assert bound > bound_at(rung) + 1e-7
        monkeypatch.setattr(bounds, "_next_rung_price", lambda rungs, known, *_: known)  # the largest ratio next
        without = largest_ratio_bound(data, mu, lam, 0.0, complexity, 1.0, max_degree, n_pos, 60.0,
                                      work=NodeBudget(first + left + 2))
        monkeypatch.undo()
        assert without < bound_at(following) - 1e-7
        # half the rung's work left: no lower price is paid for
        outcome, work = [], NodeBudget(first + first // 2)
        alone = largest_ratio_bound(data, mu, lam, 0.0, complexity, 1.0, max_degree, n_pos, 60.0, work=work,
                                    outcome=outcome)
        assert outcome == [(False, pytest.approx(lam))] and work.spent == first
        assert alone == pytest.approx(bound_at(rung))
        checked += 1
    assert checked >= 2


def test_with_whole_number_objectives_a_rung_proves_its_whole_number_at_a_higher_price():
    """A bound b proves ceil(b) when every set is worth a whole number: _whole_step_price moves a rung to
    the highest price proving the same whole number (and at least one more than proven), never below the
    largest ratio known; its proof costs no more work, and with work for the quarter rung's proof alone
    the certificate (integral) proves at least that rung's whole number, never above the bound at the
    largest ratio (brute force)."""
    from optrules.budget import NodeBudget

    checked = 0
    for seed in range(6):
        j, max_degree, complexity = 40, 3, 10.0
        data, mu, lam, n_pos, bound_at, at_master, largest, rung = _ladder_case(seed, 400, j, max_degree,
                                                                                complexity, 0.3)
        exact = bound_at(max(lam, largest))
        whole = math.ceil(bound_at(rung) - 1e-6)
        assert whole >= 1
        price = bounds._whole_step_price(data, mu, rung, lam, -np.inf, 0.0, complexity, 1.0, max_degree, n_pos)
        assert price > rung
        assert whole - 1 < bound_at(price) - 1e-6 and math.ceil(bound_at(price) - 1e-6) == whole
        # one more than proven: a lower price, its whole number one more (or the largest ratio known)
        more = bounds._whole_step_price(data, mu, rung, lam, float(whole), 0.0, complexity, 1.0, max_degree, n_pos)
        assert more < price
        assert more == lam or math.ceil(bound_at(more) - 1e-6) == whole + 1
        assert bounds._whole_step_price(data, mu, rung, lam, at_master + 5.0, 0.0, complexity, 1.0, max_degree,
                                        n_pos) == lam
        # the certificate, integral: valid, and no weaker than the quarter's proof on the same work
        outcome = []
        assert largest_ratio_bound(data, mu, lam, 0.0, complexity, 1.0, max_degree, n_pos, 60.0, outcome=outcome,
                                   integral=True) == pytest.approx(exact)
        assert outcome[-1][0]
        if largest >= rung:
            continue  # the first proof finds the largest ratio itself
        spent = _proof_work(data, mu, (rung, price), max_degree)
        assert spent[1] <= spent[0]
        bound = largest_ratio_bound(data, mu, lam, 0.0, complexity, 1.0, max_degree, n_pos, 60.0,
                                    work=NodeBudget(spent[0] + 2), integral=True)
        assert whole - 1e-6 <= math.ceil(bound - 1e-6) and bound <= exact + 1e-7
        checked += 1
    assert checked >= 2
