"""Falling rule lists with sample weights: the certified search and the Monte-Carlo search against
exhaustive enumeration of weighted lists, and integer weights against replicated rows."""

import numpy as np
import pandas as pd
import pytest
from test_frl_search import random_instance

from optrules.frl.bruteforce import brute_force
from optrules.frl.estimator import FallingRuleListClassifier
from optrules.frl.montecarlo import montecarlo_search
from optrules.frl.objective import is_compatible, is_falling
from optrules.frl.search import FRLProblem, certified_search


def random_weights(rng, n):
    kind = rng.integers(3)
    if kind == 0:  # frequency weights, zeros included (a zero-weight row counts for nothing)
        return rng.integers(0, 4, size=n).astype(float)
    if kind == 1:
        return rng.uniform(0.05, 5.0, size=n)
    return np.exp(rng.normal(0.0, 1.5, size=n))  # heavy-tailed, as inverse propensities are


@pytest.mark.parametrize("seed", range(50))
def test_weighted_certified_search_equals_brute_force(seed):
    rng = np.random.default_rng(1000 + seed)
    captures, y, w, C, C1 = random_instance(rng)
    weights = random_weights(rng, len(y))
    weights[np.flatnonzero(y == 1)[0]] = weights[np.flatnonzero(y == 0)[0]] = 1.0  # both classes weigh
    problem = FRLProblem(captures, y, w, C, C1, sample_weight=weights)
    for soft in (False, True):
        expected, _ = brute_force(captures, y, w, C, C1, soft, sample_weight=weights)
        for use_map in (True, False):
            result = certified_search(problem, soft=soft, use_map=use_map)
            counts = problem.counts(result.solution)
            assert is_compatible(counts) and (soft or is_falling(counts))
            assert result.certificate.is_optimal
            assert result.objective == pytest.approx(expected, rel=1e-9, abs=1e-9), (soft, use_map)
        heuristic = montecarlo_search(problem, soft, iterations=30, random_state=seed)
        assert heuristic.objective >= expected - 1e-9
        assert soft or is_falling(problem.counts(heuristic.prefix))


def test_unit_weights_change_nothing():
    rng = np.random.default_rng(7)
    for _ in range(40):
        captures, y, w, C, C1 = random_instance(rng)
        plain = certified_search(FRLProblem(captures, y, w, C, C1))
        ones = certified_search(FRLProblem(captures, y, w, C, C1, sample_weight=np.ones(len(y))))
        assert ones.objective == pytest.approx(plain.objective, abs=1e-12)


@pytest.mark.parametrize("seed", range(10))
def test_whole_number_weights_search_as_copies_of_the_samples(seed):
    """Whole-number weights are counted as copies (integer counting): the certified search is the
    copied data's, prefix for prefix."""
    rng = np.random.default_rng(5000 + seed)
    captures, y, w, C, C1 = random_instance(rng)
    reps = rng.integers(1, 5, size=len(y)) * np.where(rng.random(len(y)) < 0.2, 30, 1)
    weighted_problem = FRLProblem(captures, y, w, C, C1, sample_weight=reps.astype(float))
    copied_problem = FRLProblem(np.repeat(captures, reps, axis=1), np.repeat(y, reps), w, C, C1)
    for soft in (False, True):
        weighted, copied = certified_search(weighted_problem, soft=soft), certified_search(copied_problem, soft=soft)
        assert weighted.solution == copied.solution
        assert weighted.objective == pytest.approx(copied.objective, abs=1e-12)
        assert weighted.certificate.counters["nodes_expanded"] == copied.certificate.counters["nodes_expanded"]


def test_integer_weights_equal_replicated_rows():
    rng = np.random.default_rng(3)
    n = 300
    X = pd.DataFrame({"a": rng.choice(["p", "q", "r", "s"], n), "b": rng.choice(["x", "y", "z"], n)})
    y = (X["a"].isin(["p", "q"]) ^ (rng.random(n) < 0.2)).astype(int).to_numpy()
    weights = rng.integers(1, 4, n)
    # text columns and no support floor: both fits mine the same antecedents
    settings = dict(C=0.002, max_card=2, min_class_support=0.0, time_limit=None)
    weighted = FallingRuleListClassifier(**settings).fit(X, y, sample_weight=weights)
    rows = np.repeat(np.arange(n), weights)
    replicated = FallingRuleListClassifier(**settings).fit(X.iloc[rows], y[rows])
    assert list(weighted.antecedents_.names) == list(replicated.antecedents_.names)
    assert weighted.certificate_.is_optimal and replicated.certificate_.is_optimal
    assert weighted.objective_ == pytest.approx(replicated.objective_, abs=1e-12)
    assert [r.conditions for r in weighted.rule_list_.rules] == [r.conditions for r in replicated.rule_list_.rules]
    np.testing.assert_allclose(weighted.predict_proba(X), replicated.predict_proba(X))
    # rules keep their row counts beside their weighted totals
    rule = weighted.rule_list_.rules[0]
    assert sum(rule.class_totals) == replicated.rule_list_.rules[0].n_captured > rule.n_captured


def test_bad_weights_are_refused():
    X = pd.DataFrame({"a": [0, 1] * 10})
    y = [0, 1] * 10
    with pytest.raises(ValueError, match="non-negative"):
        FallingRuleListClassifier().fit(X, y, sample_weight=[-1.0] + [1.0] * 19)
    with pytest.raises(ValueError, match="entries for 20 samples"):
        FallingRuleListClassifier().fit(X, y, sample_weight=[1.0] * 3)
    with pytest.raises(ValueError, match="same label: two classes are needed"):
        FallingRuleListClassifier().fit(X, y, sample_weight=[1.0, 0.0] * 10)
