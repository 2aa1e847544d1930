"""Rule sets under a fairness constraint (issue 86): on random small problems the certificate holds against
an exhaustive search over every rule set (lower bound <= the optimum <= objective, equal when it says
optimal), the set meets the constraint exactly, with and without weights; the estimator, the command line
and the errors."""

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from optrules import RuleSetClassifier
from optrules.fairness.metrics import METRICS, exact_unfairness
from optrules.rulesets.fair import FairRuleSetSearch, every_fair_rule_set


def _problem(seed: int):
    rng = np.random.default_rng(seed)
    n, n_features = int(rng.integers(20, 60)), 4
    features = rng.random((n, n_features)) < rng.uniform(0.2, 0.7, n_features)
    group = rng.integers(0, 2, n)
    target = (features[:, 0] & (rng.random(n) < 0.8)) | ((group == 1) & (rng.random(n) < 0.4)) | (rng.random(n) < 0.15)
    weights = None if seed % 3 else rng.integers(1, 4, n).astype(float)
    return features, target, group, weights, rng


def _check(seed: int) -> bool:
    features, target, group, weights, rng = _problem(seed)
    metric = METRICS[seed % 4]
    eps = Fraction(int(rng.integers(0, 15)), 100)
    complexity, penalty = float(rng.integers(3, 8)), float(rng.choice([0.0, 0.5, 1.0]))
    rows = np.ones(len(target)) if weights is None else weights
    args = (features, target, group, metric, eps, complexity, penalty, 2, rows[target], rows[~target], weights)
    search = FairRuleSetSearch(*args)
    result = search.run(60)
    optimum = min(value for value, _ in every_fair_rule_set(*args))
    assert result.lower_bound <= optimum + 1e-7 <= result.objective + 2e-7, (seed, result, optimum)
    assert search.meets(result.clauses) and result.objective == pytest.approx(search.objective(result.clauses))
    if result.status == "optimal":
        assert result.objective == pytest.approx(optimum, abs=1e-7), (seed, result, optimum)
    return result.status == "optimal"


def test_the_certificate_holds_against_every_rule_set():
    proven = [_check(seed) for seed in range(50)]
    assert sum(proven) >= 40  # most close their gap (the rest must still bound the optimum)


@pytest.mark.slow
def test_the_certificate_holds_against_every_rule_set_many():
    proven = [_check(seed) for seed in range(50, 550)]
    assert sum(proven) >= 400


def _table(seed: int, n: int = 120):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({f"f{j}": rng.integers(0, 2, n) for j in range(3)})
    X["group"] = rng.choice(["a", "b"], n)
    y = ((X["f0"] == 1) ^ (rng.random(n) < 0.2) | (X["group"] == "b") & (rng.random(n) < 0.3)).astype(int)
    return X, y.to_numpy()


@pytest.mark.parametrize("metric", ["equal_opportunity", "equalized_odds"])
def test_the_estimator_fits_the_best_fair_set_over_its_features(metric):
    X, y = _table(4)
    model = RuleSetClassifier(complexity=5, max_card=2, fairness=metric, max_unfairness=0.03).fit(X, y, sensitive="group")
    features = model.binarizer_.transform(X.drop(columns="group")).astype(bool)
    target, group = y == 1, (X["group"] == "b").to_numpy().astype(int)
    optimum = min(value for value, _ in every_fair_rule_set(features, target, group, metric, Fraction(3, 100), 5.0,
                                                            0.0, 2, np.ones(target.sum()), np.ones((~target).sum())))
    certificate = model.certificate_
    assert certificate.lower_bound <= optimum + 1e-7 <= certificate.objective + 2e-7
    if certificate.is_optimal:
        assert certificate.objective == pytest.approx(optimum)
    predicted = model.predict(X.drop(columns="group")) == 1
    assert exact_unfairness(y, group, None, predicted, metric) <= Fraction(3, 100)
    assert Fraction(certificate.counters["unfairness"]) == exact_unfairness(y, group, None, predicted, metric)
    assert "rule sets (DNF) whose" in str(certificate) and "either class" not in str(certificate)
    assert certificate.counters["training_mistakes"] == int((predicted != target).sum())


@pytest.mark.parametrize("params, fit, message", [
    ({"cnf": True}, {"sensitive": "group"}, "cnf=True is not available"),
    ({"complexity": None}, {"sensitive": "group"}, "finite complexity"),
    ({}, {}, "needs the two groups"),
    ({"max_unfairness": 1.5}, {"sensitive": "group"}, "max_unfairness"),
])
def test_what_a_user_gets_wrong_is_one_clear_error(params, fit, message):
    X, y = _table(1)
    with pytest.raises(ValueError, match=message):
        RuleSetClassifier(**{"fairness": "equal_opportunity", **params}).fit(X, y, **fit)


def test_the_command_line_fits_a_fair_rule_set(tmp_path, capsys):
    from test_fair_estimator import fit_and_predict_on_the_command_line

    X, y = _table(2, 200)
    out = fit_and_predict_on_the_command_line(tmp_path, capsys, X, y, ["--model", "ruleset", "--complexity", "6"],
                                              "equalized_odds", "0.05")
    assert "rule sets (DNF) whose" in out


def test_the_master_stays_within_its_memory_budget():
    """No clause enters when the master and its MIP's copy would pass the budget: status memory budget, the
    empty set's objective, a lower bound still below the exhaustive optimum, and the charge within the budget;
    with room, the same problem is proven."""
    from optrules.budget import Budget
    from optrules.rulesets.fair import MASTER
    from optrules.rulesets.master import model_bytes

    features, target, group, weights, rng = _problem(4)
    rows = np.ones(len(target))
    args = (features, target, group, "equalized_odds", Fraction(5, 100), 6.0, 0.0, 2, rows[target], rows[~target])
    optimum = min(value for value, _ in every_fair_rule_set(*args))
    search = FairRuleSetSearch(*args)
    start = 2 * model_bytes(search.highs.getNumRow(), search.highs.getNumNz(), search.highs.getNumCol())
    tight = Budget(max_memory=start + 64)  # the master as built, no room for a clause
    result = search.run(60, memory=tight)
    assert result.status == "memory_budget" and result.clauses == [] and result.objective == search.objective([])
    assert result.lower_bound <= optimum + 1e-7 and tight.used <= tight.max_memory
    roomy = Budget(max_memory=2**30)
    proven = FairRuleSetSearch(*args).run(60, memory=roomy)
    assert proven.status == "optimal" and proven.objective == pytest.approx(optimum) and 0 < roomy.charges()[MASTER]


def test_a_cancel_returns_a_fair_set_without_the_mip():
    """A cancel heard during generation ends it at once: no MIP (its setup hears no interrupt), the last
    LP's rounded choice if it meets the constraint exactly, else the empty set; the bound stays true."""
    from unittest import mock

    for seed in range(6):
        features, target, group, weights, rng = _problem(seed)
        rows = np.ones(len(target))
        args = (features, target, group, METRICS[seed % 4], Fraction(5, 100), 6.0, 0.0, 2, rows[target], rows[~target])
        optimum = min(value for value, _ in every_fair_rule_set(*args))
        search = FairRuleSetSearch(*args)
        with mock.patch.object(FairRuleSetSearch, "_restricted_mip", side_effect=AssertionError("no MIP after a cancel")):
            result = search.run(60, should_stop=lambda: len(search.clauses) > 0)  # (once the LP has columns)
        assert result.status == "interrupted" and search.meets(result.clauses)
        assert result.lower_bound <= optimum + 1e-7 <= result.objective + 2e-7
        assert result.objective == pytest.approx(search.objective(result.clauses))
