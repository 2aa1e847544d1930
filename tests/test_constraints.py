"""Domain constraints in the certified search: the certificate is optimal over the constrained lists,
checked against exhaustive enumeration of exactly those lists."""

import numpy as np
import pandas as pd
import pytest

from optrules import RuleListClassifier
from optrules.corels.bruteforce import brute_force
from optrules.corels.problem import Problem
from optrules.corels.search import search


def random_problem(rng, n_antecedents=7, n_samples=60):
    captures = rng.random((n_antecedents, n_samples)) < rng.uniform(0.15, 0.6, (n_antecedents, 1))
    y = ((captures[0] & ~captures[1]) ^ (rng.random(n_samples) < 0.2)).astype(np.int64)
    return captures, y


@pytest.mark.parametrize("seed", range(25))
def test_max_length_is_optimal_over_short_lists(seed):
    rng = np.random.default_rng(seed)
    captures, y = random_problem(rng)
    regularization = float(rng.choice([0.0, 0.005, 0.01, 0.03]))
    problem = Problem.from_captures(captures, y, regularization)
    for max_length in (0, 1, 2, 3):
        expected = brute_force(captures, y, regularization, max_length=max_length)
        result = search(problem, max_length=max_length, warm_start=bool(seed % 2))
        assert result.certificate.is_optimal
        assert len(result.prefix) <= max_length
        assert result.objective == pytest.approx(expected.objective, abs=1e-12), (seed, max_length)


def test_max_length_checks_its_value():
    rng = np.random.default_rng(0)
    problem = Problem.from_captures(*random_problem(rng), 0.01)
    for bad in (-1, 1.5, True):
        with pytest.raises(ValueError, match="max_length"):
            search(problem, max_length=bad)


@pytest.fixture(scope="module")
def table():
    rng = np.random.default_rng(1)
    n = 400
    X = pd.DataFrame({"a": rng.choice(["p", "q", "r"], n), "b": rng.choice(["s", "t"], n),
                      "c": rng.integers(0, 10, n), "race": rng.choice(["u", "v", "w"], n)})
    y = np.where(((X["a"] == "p") & (X["race"] != "u")) | (X["c"] > 7) ^ (rng.random(n) < 0.1), 1, 0)
    return X, y


def test_forbidden_columns_and_features_are_never_used_and_the_rest_is_optimal(table):
    X, y = table
    for forbidden in (["race"], ["a=p", "race=u"], "c"):
        est = RuleListClassifier(regularization=0.01, max_card=1, n_thresholds=3, forbidden=forbidden,
                                 max_rules=3).fit(X, y)
        banned = [forbidden] if isinstance(forbidden, str) else forbidden
        used = {f for rule in est.rule_list_.rules for f in rule.conditions}
        columns = {est.binarizer_.features_[est.binarizer_.feature_names_.index(f)].column for f in used}
        assert not (used & set(banned)) and not (columns & set(banned))
        assert all(f not in banned and not any(f.startswith(b + "=") or f.startswith(b + "<") or f.startswith(b + ">")
                                               for b in banned if b in X.columns) for f in est.antecedents_.feature_names)
        # optimal over the lists of <= 3 rules on the allowed antecedents: exhaustive enumeration of them
        captures = est.antecedents_.capture_matrix()
        expected = brute_force(captures, y, 0.01, max_length=3)
        assert est.certificate_.is_optimal
        assert est.certificate_.objective == pytest.approx(expected.objective, abs=1e-12)
    with pytest.raises(ValueError, match="neither features nor columns"):
        RuleListClassifier(forbidden=["nope"]).fit(X, y)
    for bad in (-1, 2.5, "3"):
        with pytest.raises(ValueError, match="max_rules must be a whole number"):
            RuleListClassifier(max_rules=bad).fit(X, y)


def test_max_rules_on_the_estimator(table):
    X, y = table
    free = RuleListClassifier(regularization=0.0, max_card=1, n_thresholds=3).fit(X, y)
    short = RuleListClassifier(regularization=0.0, max_card=1, n_thresholds=3, max_rules=1).fit(X, y)
    assert len(free.rule_list_) > 1 and len(short.rule_list_) <= 1 and short.certificate_.is_optimal
    expected = brute_force(short.antecedents_.capture_matrix(), y, 0.0, max_length=1)
    assert short.certificate_.objective == pytest.approx(expected.objective)


def test_command_line_constraints(capsys):
    from optrules.cli import main

    assert main(["fit", "--dataset", "compas", "-r", "0.005", "--forbid", "sex", "--max-rules", "2", "-q"]) == 0
    out = capsys.readouterr().out
    assert "certified optimal" in out and "sex=" not in out and "else if" in out and out.count("then predict") <= 2
    with pytest.raises(SystemExit, match="only for --model rulelist"):
        main(["fit", "--dataset", "compas", "--model", "ruleset", "--max-rules", "2"])
