import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

from optrules.corels.bruteforce import brute_force
from optrules.data.datasets import load_compas
from optrules.estimators import RuleListClassifier, RuleSetClassifier
from optrules.models import RuleList


def test_compas_lambda_0005_gives_the_paper_list():
    data = load_compas("A")
    # the paper's space: every category, pairs, no negations
    model = RuleListClassifier(regularization=0.005, thresholds="quantile", max_card=2, negations=False).fit(data.X, data.y)
    assert model.certificate_.is_optimal
    text = str(model.rule_list_)
    # the paper's Figure 4 family: young, young with priors, many priors -> yes; else no
    assert "(age=18-20)" in text and "(priors>3)" in text and text.endswith("else predict no")
    predictions = model.predict(data.X)
    accuracy = np.mean(predictions == data.y)
    assert model.score(data.X, data.y) == pytest.approx(accuracy)
    assert accuracy == pytest.approx(1 - (model.certificate_.objective - 0.005 * len(model.rule_list_)), abs=1e-9)
    proba = model.predict_proba(data.X)
    assert proba.shape == (len(data.X), 2) and np.allclose(proba.sum(axis=1), 1)
    # the saved model predicts the same
    again = RuleList.from_json(model.rule_list_.to_json())
    np.testing.assert_array_equal(again.predict(data.X), predictions)


def test_estimator_matches_brute_force_over_its_own_antecedents(rng):
    for _ in range(5):
        X = pd.DataFrame({"a": rng.choice(["x", "y", "z"], 60), "b": rng.choice(["p", "q"], 60), "c": rng.integers(0, 2, 60)})
        y = rng.choice(["no", "yes"], 60)
        model = RuleListClassifier(regularization=0.02, max_card=1, negations=False).fit(X, y)
        captures = model.antecedents_.capture_matrix()
        y01 = (y == "yes").astype(int)
        expected = brute_force(captures, y01, 0.02)
        assert model.certificate_.objective == pytest.approx(expected.objective, abs=1e-12)
        assert set(model.predict(X)) <= {"no", "yes"}
        assert list(model.classes_) == ["no", "yes"]


def test_arrays_and_clone(rng):
    X = rng.integers(0, 3, size=(50, 3)).astype(float)
    y = (X[:, 0] + rng.random(50) > 1.5).astype(int)
    model = RuleListClassifier(regularization=0.01).fit(X, y)
    assert model.n_features_in_ == 3
    assert model.predict(X).shape == (50,)
    assert clone(model).get_params()["regularization"] == 0.01


def test_bad_input_errors():
    X = pd.DataFrame({"a": ["x", "y", "x", "y"]})
    with pytest.raises(ValueError, match="single class"):
        RuleListClassifier().fit(X, [1, 1, 1, 1])
    with pytest.raises(ValueError, match="lambda"):
        RuleListClassifier(regularization=1.5).fit(X, [0, 1, 0, 1])
    with pytest.raises(ValueError, match="describes one class"):  # rule lists take several classes, rule sets two
        RuleSetClassifier().fit(X, [0, 1, 2, 1])
    with pytest.raises(ValueError, match="Unknown label type"):
        RuleListClassifier().fit(X, [0.5, 1.25, 0.5, 1.0])
    with pytest.raises(ValueError, match="X has 4 samples but y has 3"):
        RuleListClassifier().fit(X, [0, 1, 0])
    with pytest.raises(ValueError, match="max_card"):
        RuleListClassifier(max_card=0).fit(X, [0, 1, 0, 1])
    with pytest.raises(ValueError, match="column 'a' has 1 missing"):
        RuleListClassifier(missing="error").fit(pd.DataFrame({"a": ["x", None, "x", "y"]}), [0, 1, 0, 1])
    with pytest.raises(ValueError, match="no antecedent"):
        RuleListClassifier(min_support=0.5).fit(pd.DataFrame({"a": ["x", "y", "y", "y"]}), [0, 1, 0, 1])
    model = RuleListClassifier(regularization=0.1).fit(X, [0, 1, 0, 1])
    with pytest.raises(ValueError, match="unknown columns"):
        model.predict(X.assign(b=1))


@pytest.mark.parametrize("regularization", [0.3, 0.5, 0.9, *(pytest.param(r, marks=pytest.mark.slow) for r in (0.45, 0.6))])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_a_lambda_no_antecedent_is_supported_enough_for_certifies_the_list_of_no_rule(regularization, n_classes):
    """With the default supports (Thms 10 and 21, from lambda; at most 1/2, where the window closes), a
    table none of whose antecedents is supported enough has the list of no rule as its optimum: certified
    so, as brute force over every list of its conjunctions finds (it used to be the error "no antecedent
    has support in [0.45, 0.55]", and a lambda above 1/2 the error "min_support must lie in [0, 0.5]")."""
    import itertools

    from optrules.corels.bruteforce import brute_force

    rng = np.random.default_rng(n_classes)
    X = pd.DataFrame({"a": rng.choice(["x", "y", "z"], 40, p=[0.2, 0.6, 0.2]), "b": rng.integers(0, 3, 40)})
    y = rng.integers(0, n_classes, 40)
    model = RuleListClassifier(regularization=regularization, max_card=2).fit(X, y)
    features = np.asarray(model.binarizer_.transform(X)).astype(bool)
    conjunctions = [c for d in (1, 2) for c in itertools.combinations(range(features.shape[1]), d)]
    captures = np.array([features[:, list(c)].all(axis=1) for c in conjunctions])
    optimum = brute_force(captures, y, regularization, max_length=int(1 / regularization) + 1, n_classes=n_classes)
    assert model.certificate_.is_optimal
    assert model.certificate_.objective == pytest.approx(optimum.objective)
    if regularization > 0.5:  # a rule corrects at most the smaller of the majority's share and the rest
        assert model.rule_list_.rules == [] and optimum.prefix == ()
    # a table whose every antecedent captures 2 or 3 rows of 5: none within [0.45, 0.55] of them
    few = RuleListClassifier(regularization=0.45).fit(pd.DataFrame({"a": list("xyyyx")}), [0, 1, 0, 1, 1])
    assert len(few.antecedents_) == 0 and few.rule_list_.rules == [] and few.certificate_.is_optimal
    assert few.certificate_.objective == pytest.approx(0.4)


def test_mining_cut_short_with_no_antecedent_proves_nothing(monkeypatch):
    """No antecedent because the budget stopped mining is no proof: the list of no rule with lower bound
    0, not certified (only a finished mining that found none within the supports is)."""
    import optrules.base as base
    from optrules.data.mine import Antecedents, MiningReport

    def stopped(features, names, groups, n_samples, **_):
        report = MiningReport(n_samples, len(names), 2, 0.01, None, stopped=True)
        return Antecedents(list(names), [], np.zeros((0, (n_samples + 63) // 64), np.uint64), n_samples, report)

    monkeypatch.setattr(base, "mine_antecedents", stopped)
    X = pd.DataFrame({"a": ["x", "y", "y", "y", "x", "y"]})
    model = RuleListClassifier(regularization=0.01).fit(X, [0, 1, 0, 1, 1, 1])
    assert model.rule_list_.rules == [] and not model.certificate_.is_optimal
    assert model.certificate_.lower_bound == 0


def test_a_table_without_a_feature_to_mine():
    """A table whose columns give no rule (a single value, all forbidden) leaves the list of no rule,
    the only list there is: certified optimal for rule lists, a clear error where thresholds were the
    user's (falling lists); a class left no weight by sample_weight is a clear error in every family
    (a rule set's LP used to fail with "restricted master LP not solved: Empty")."""
    from optrules import FallingRuleListClassifier

    y = np.array(["a", "b", "b", "a", "a", "a"])
    constant, forbidden = pd.DataFrame({"k": [1] * 6}), pd.DataFrame({"x": [2, 0, 1, 3, 0, 2]})
    for model, X in ((RuleListClassifier(), constant), (RuleListClassifier(forbidden=["x"]), forbidden)):
        model.fit(X, y)
        assert model.rule_list_.rules == [] and model.certificate_.is_optimal
        assert model.certificate_.objective == pytest.approx(2 / 6) and (model.predict(X) == "a").all()
    with pytest.raises(ValueError, match="no antecedent|no feature"):
        FallingRuleListClassifier().fit(constant, y)
    X = pd.DataFrame({"x": [2, 0, 1, 3, 0, 2], "c": list("pqpqpq")})
    for weights in ([1, 0, 0, 1, 1, 2.0], [0, 1, 1, 0, 0, 0.0]):
        for estimator in (RuleListClassifier(), RuleSetClassifier(), RuleSetClassifier(cnf=True),
                          FallingRuleListClassifier()):
            with pytest.raises(ValueError, match="same label: two classes are needed"):
                estimator.fit(X, y, sample_weight=weights)


def test_verbose_progress_is_shown(capsys, rng):
    X = pd.DataFrame({"a": rng.choice(["x", "y", "z"], 200), "b": rng.integers(0, 5, 200)})
    y = (rng.random(200) < 0.4).astype(int)
    RuleListClassifier(regularization=0.005, verbose=True).fit(X, y)
    err = capsys.readouterr().err
    assert "best" in err and "lower bound" in err and "queue" in err


def test_greedy_start_changes_the_path_not_the_certificate():
    from optrules import RuleListClassifier
    from optrules.data.datasets import load_compas

    compas = load_compas()
    X, y = compas.X.iloc[:2000], compas.y[:2000]
    seeded = RuleListClassifier(regularization=0.01).fit(X, y)
    cold = RuleListClassifier(regularization=0.01, greedy_start=False).fit(X, y)
    assert seeded.certificate_.is_optimal and cold.certificate_.is_optimal
    assert seeded.certificate_.objective == pytest.approx(cold.certificate_.objective)
    assert "warm_start" not in RuleListClassifier().get_params()  # scikit-learn's name means something else
