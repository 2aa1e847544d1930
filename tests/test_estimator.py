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
    model = RuleListClassifier(regularization=0.005).fit(data.X, data.y)
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
        model = RuleListClassifier(regularization=0.02, max_card=1).fit(X, y)
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
        RuleListClassifier().fit(pd.DataFrame({"a": ["x", None, "x", "y"]}), [0, 1, 0, 1])
    with pytest.raises(ValueError, match="no antecedent"):
        RuleListClassifier(min_support=0.5).fit(pd.DataFrame({"a": ["x", "y", "y", "y"]}), [0, 1, 0, 1])
    model = RuleListClassifier(regularization=0.1).fit(X, [0, 1, 0, 1])
    with pytest.raises(ValueError, match="unknown columns"):
        model.predict(X.assign(b=1))


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
