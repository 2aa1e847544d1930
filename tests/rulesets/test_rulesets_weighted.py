"""Boolean rule sets with sample weights: pricing and column generation against enumeration of every
clause with weighted costs, and integer weights against replicated rows."""

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from optrules.rulesets.colgen import column_generation
from optrules.rulesets.enumeration import enumeration_pricing
from optrules.rulesets.estimator import RuleSetClassifier
from optrules.rulesets.master import MasterProblem
from optrules.rulesets.pricing import PricingData, beam_search, exact_pricing


def weights_for(rng, n):
    if rng.random() < 0.5:
        return rng.integers(0, 4, size=n).astype(float)
    return np.exp(rng.normal(0.0, 1.0, size=n))


def weighted_mip_optimum(features, y, weights, complexity, max_degree, penalty=0.0):
    """The master MIP over every clause of up to max_degree features, each sample costing its weight."""
    positives = np.flatnonzero(y)
    master = MasterProblem(len(positives), complexity, weights[positives])
    for degree in range(0, max_degree + 1):
        for clause in itertools.combinations(range(features.shape[1]), degree):
            covered = features[:, list(clause)].all(axis=1) if clause else np.ones(len(y), bool)
            master.add_clause(float(weights[covered & ~y].sum()) + penalty * (1 + degree), 1 + degree,
                              np.flatnonzero(covered[positives]))
    value, _, _, proven = master.solve_mip(60)
    assert proven
    return value


@pytest.mark.parametrize("seed", range(30))
def test_weighted_pricing_against_enumeration(seed):
    rng = np.random.default_rng(9000 + seed)
    n, j, degree = int(rng.integers(8, 40)), int(rng.integers(2, 7)), int(rng.integers(1, 4))
    features = rng.random((n, j)) < 0.5
    y = rng.random(n) < 0.5
    data = PricingData.from_features(features, y, float(rng.choice([1.0, 0.5])), sample_weight=weights_for(rng, n))
    mu = rng.random(int(y.sum())) * rng.choice([0.5, 1.0, 3.0])
    price = float(rng.choice([0.0, 0.1, 0.5]))
    every = [c for d in range(degree + 1) for c in itertools.combinations(range(j), d)]
    best = min(data.reduced_cost(c, mu, price) for c in every)
    _, reduced, bound, proven = exact_pricing(data, mu, price, degree, 30)
    assert proven and reduced == pytest.approx(best) and bound <= best + 1e-6
    clauses, value, lower, proven, ratio = enumeration_pricing(data, mu, price, degree, 30)
    assert proven and value == pytest.approx(best) and lower == pytest.approx(best)
    assert ratio <= min((data.reduced_cost(c, mu, price) / (1 + len(c)) for c in every if c), default=np.inf) + 1e-9
    for score, clause in clauses + beam_search(data, mu, price, degree, beam_width=3):
        assert score == pytest.approx(data.reduced_cost(clause, mu, price), rel=1e-5, abs=1e-5)


@pytest.mark.parametrize("seed", range(30))
def test_weighted_column_generation_against_the_enumerated_mip(seed):
    rng = np.random.default_rng(seed)
    n, j = int(rng.integers(10, 50)), int(rng.integers(2, 7))
    features = rng.random((n, j)) < 0.5
    planted = features[:, 0] & features[:, 1]
    y = np.where(rng.random(n) < 0.15, ~planted, planted)
    if y.min() == y.max():
        y[0] = ~y[0]
    weights = weights_for(rng, n)
    complexity = float(rng.choice([2, 3, 4, 6, 30]))
    max_degree = int(rng.integers(1, 4))
    penalty = float(rng.choice([0.0, 0.5]))
    optimum = weighted_mip_optimum(features, y, weights, complexity, max_degree, penalty)
    result = column_generation(features, y, complexity, penalty, max_degree, time_limit=30, pricing_time_limit=10,
                               sample_weight=weights)
    certificate = result.certificate
    assert certificate.lower_bound <= optimum + 1e-6
    assert result.objective >= optimum - 1e-6
    if certificate.is_optimal:
        assert result.objective == pytest.approx(optimum, abs=1e-6)


def test_integer_weights_equal_replicated_rows():
    rng = np.random.default_rng(5)
    n = 200
    X = pd.DataFrame({"a": rng.choice(["p", "q", "r"], n), "b": rng.choice(["x", "y", "z", "t"], n)})
    y = ((X["a"] == "p") & (X["b"] != "x") ^ (rng.random(n) < 0.1)).astype(int).to_numpy()
    weights = rng.integers(1, 4, n)
    settings = dict(complexity=8, max_degree=2, min_support=0.0, time_limit=60)
    weighted = RuleSetClassifier(**settings).fit(X, y, sample_weight=weights)
    rows = np.repeat(np.arange(n), weights)
    replicated = RuleSetClassifier(**settings).fit(X.iloc[rows], y[rows])
    assert weighted.certificate_.is_optimal and replicated.certificate_.is_optimal
    assert weighted.certificate_.objective == pytest.approx(replicated.certificate_.objective)
    # the rates the set reports are the weighted ones: equal to the replicated table's
    assert weighted.rule_set_.rates == pytest.approx(replicated.rule_set_.rates)
    with pytest.raises(ValueError, match="non-negative"):
        RuleSetClassifier(**settings).fit(X, y, sample_weight=-weights)


@pytest.mark.parametrize("seed", range(30))
def test_rows_that_agree_on_every_feature_but_not_the_label_bound_every_rule_set(seed):
    """Without exact pricing the LP proves nothing, so the lower bound is the conflict bound alone: the
    cheaper row of each feature pattern that occurs with both labels, summed by hand here."""
    rng = np.random.default_rng(9700 + seed)
    n, j = int(rng.integers(12, 40)), int(rng.integers(2, 5))
    features = rng.random((n, j)) < 0.5  # few features: many rows share a pattern
    y = rng.random(n) < 0.4
    if y.min() == y.max():
        y[0] = ~y[0]
    weights = weights_for(rng, n) if seed % 2 else None
    costs = np.ones(n) if weights is None else weights
    expected = 0.0
    for pattern in np.unique(features, axis=0):
        same = (features == pattern).all(axis=1)
        expected += min(costs[same & y].sum(), costs[same & ~y].sum())
    complexity, max_degree = float(rng.choice([2, 4, 30])), 2
    optimum = weighted_mip_optimum(features, y, costs, complexity, max_degree)
    assert expected <= optimum + 1e-9  # the bound holds (the brute force agrees)
    result = column_generation(features, y, complexity, 0.0, max_degree, exact=False, time_limit=30,
                               sample_weight=weights)
    certificate = result.certificate
    assert certificate.counters["conflict_bound"] == pytest.approx(expected)
    integral = weights is None or np.allclose(costs, np.round(costs))
    assert certificate.lower_bound == pytest.approx(min(math.ceil(expected - 1e-6) if integral else expected,
                                                        result.objective))
    assert certificate.lower_bound <= optimum + 1e-6
