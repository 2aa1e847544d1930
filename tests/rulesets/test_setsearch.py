"""The enumeration of rule sets below a value (rulesets.setsearch) against brute force over every set."""

import itertools

import numpy as np
import pytest
from test_colgen import full_mip_optimum, planted_instance

from optrules.data import bitset
from optrules.rulesets.colgen import column_generation
from optrules.rulesets.master import MasterProblem
from optrules.rulesets.setsearch import best_set_below


def random_pool(seed):
    """A pool of clauses over weighted positives, with duals (mu in [0, weight], lambda >= 0) that need
    not be any LP's (some reduced costs negative), and each clause's reduced cost under them."""
    rng = np.random.default_rng(seed)
    n_pos, n_clauses = int(rng.integers(3, 90)), int(rng.integers(1, 10))
    weight = rng.integers(1, 4, n_pos).astype(float) if seed % 2 else np.ones(n_pos)
    covers = rng.random((n_clauses, n_pos)) < rng.uniform(0.1, 0.7)
    cost = rng.integers(0, 6, n_clauses).astype(float)
    complexity = rng.integers(2, 5, n_clauses)
    bound = float(rng.integers(2, 12))
    mu = weight * rng.uniform(0, 1, n_pos) * (rng.random(n_pos) < 0.7)
    lam = float(rng.uniform(0, 1.5))
    reduced = cost - covers.astype(float) @ mu + lam * complexity
    dual_value = mu.sum() - lam * bound
    return covers, weight, cost, complexity, bound, mu, reduced, dual_value, rng


def value_of(subset, covers, weight, cost):
    covered = covers[list(subset)].any(axis=0) if subset else np.zeros(covers.shape[1], bool)
    return cost[list(subset)].sum() + weight[~covered].sum()


@pytest.mark.parametrize("seed", range(120))
def test_the_best_set_below_a_value_is_the_brute_force_optimum_or_none_is(seed):
    covers, weight, cost, complexity, bound, mu, reduced, dual_value, rng = random_pool(seed)
    sets = [s for k in range(len(cost) + 1) for s in itertools.combinations(range(len(cost)), k)
            if complexity[list(s)].sum() <= bound]
    values = [value_of(s, covers, weight, cost) for s in sets]
    optimum = min(values)
    for value in (optimum - 1.0, optimum, optimum + float(rng.integers(0, 4)), max(values)):
        room = value - dual_value + 1e-9
        finished, best, chosen = best_set_below(bitset.pack(covers), cost, complexity, reduced, mu, weight, bound,
                                                value, room, integral=True)
        assert finished
        if optimum <= value:
            assert best == pytest.approx(optimum), (value, optimum, best)
            assert value_of(chosen, covers, weight, cost) == pytest.approx(optimum)
            assert complexity[chosen].sum() <= bound
        else:
            assert best > value


@pytest.mark.parametrize("seed", range(40))
def test_without_an_integral_step_the_best_set_is_found_among_real_values(seed):
    covers, weight, cost, complexity, bound, mu, reduced, dual_value, rng = random_pool(5000 + seed)
    weight = weight * rng.uniform(0.5, 1.5, len(weight))
    cost = cost * rng.uniform(0.5, 1.5, len(cost))
    reduced = cost - covers.astype(float) @ mu + 0.0 * complexity  # (lambda 0: no complexity price)
    dual_value = mu.sum()
    sets = [s for k in range(len(cost) + 1) for s in itertools.combinations(range(len(cost)), k)
            if complexity[list(s)].sum() <= bound]
    optimum = min(value_of(s, covers, weight, cost) for s in sets)
    finished, best, chosen = best_set_below(bitset.pack(covers), cost, complexity, reduced, mu, weight, bound,
                                            optimum + 0.5, optimum + 0.5 - dual_value + 1e-9, integral=False)
    assert finished and best == pytest.approx(optimum)
    assert value_of(chosen, covers, weight, cost) == pytest.approx(optimum)


def test_a_search_out_of_time_says_it_did_not_finish():
    rng = np.random.default_rng(0)
    covers = rng.random((400, 200)) < 0.3
    cost = rng.integers(0, 3, 400).astype(float)
    reduced = np.zeros(400)  # every set fits the room: far too many to enumerate
    finished, best, chosen = best_set_below(bitset.pack(covers), cost, np.full(400, 2), reduced, np.zeros(200),
                                            np.ones(200), 40.0, 1e9, 1e9, integral=True, seconds=0.05)
    assert not finished
    assert best == pytest.approx(value_of(chosen, covers, np.ones(200), cost))
    stopped = best_set_below(bitset.pack(covers), cost, np.full(400, 2), reduced, np.zeros(200), np.ones(200), 40.0,
                             1e9, 1e9, integral=True, should_stop=lambda: True)
    assert not stopped[0]


@pytest.mark.parametrize("seed", range(30))
def test_the_gap_closes_by_enumeration_alone(monkeypatch, seed):
    """Every MIP finds nothing (the greedy set stands): where the LP is solved, the enumeration of the
    sets below each value must still find the optimum and prove it."""
    features, y, complexity, max_degree, _ = planted_instance(2000 + seed)
    optimum = full_mip_optimum(features, y, complexity, max_degree)[0]
    monkeypatch.setattr(MasterProblem, "solve_mip", lambda self, time_limit: (np.inf, [], -np.inf, False))
    result = column_generation(features, y, complexity, 0.0, max_degree, time_limit=60, pricing_time_limit=20)
    cert = result.certificate
    assert cert.lower_bound <= optimum + 1e-9 <= result.objective + 2e-9
    if cert.counters["lp_solved"]:
        assert cert.is_optimal and result.objective == pytest.approx(optimum)


@pytest.mark.parametrize("weighted", [False, True])
def test_the_pools_covers_and_costs_are_each_clauses_own(weighted):
    from optrules.rulesets.pricing import PricingBits
    from optrules.rulesets.selection import _clause_covers

    rng = np.random.default_rng(7)
    features, y = rng.random((300, 12)) < 0.5, rng.random(300) < 0.4
    data = PricingBits.from_features(features, y, 1.5, sample_weight=rng.uniform(0.5, 2, 300) if weighted else None)
    clauses = [()] + [c for k in (1, 2, 3) for c in itertools.combinations(range(12), k)]
    cover, negatives = _clause_covers(data, clauses, block=7)
    for k, clause in enumerate(clauses):
        positives, covered_negatives = data.covered(clause)
        assert (bitset.unpack(cover[k], data.n_positive) == positives).all()
        assert negatives[k] == pytest.approx(data.negative_cost(covered_negatives))


def test_a_value_whose_search_ran_out_of_time_is_searched_again_with_twice_the_time(monkeypatch):
    import optrules.rulesets.colgen as colgen

    features, y, complexity, max_degree, _ = planted_instance(4000)  # its first set is not proven
    optimum = full_mip_optimum(features, y, complexity, max_degree)[0]
    solve_mip, columns_below, calls = MasterProblem.solve_mip, colgen._columns_below, []
    monkeypatch.setattr(MasterProblem, "solve_mip", lambda self, t: (np.inf, [], -np.inf, False) if not calls
                        else solve_mip(self, t))  # (the first set is not proven: the gap's search runs)

    def first_out_of_time(*args, outcome=None, **kwargs):
        calls.append((args[8], args[10]))
        if len(calls) == 1:
            outcome.append("time")
            return None
        return columns_below(*args, outcome=outcome, **kwargs)
    monkeypatch.setattr(colgen, "_columns_below", first_out_of_time)
    result = column_generation(features, y, complexity, 0.0, max_degree, time_limit=60, pricing_time_limit=0.5)
    (value, seconds), (again, more) = calls[:2]
    assert again == value and more == pytest.approx(2 * seconds)
    assert result.certificate.lower_bound <= optimum + 1e-9 <= result.objective + 2e-9
    assert result.certificate.is_optimal
