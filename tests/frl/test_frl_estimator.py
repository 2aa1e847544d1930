import numpy as np
import pandas as pd
import pytest

from optrules import FallingRuleListClassifier, load_model
from optrules.frl.bruteforce import brute_force
from optrules.models import FallingRuleList, Rule


@pytest.fixture
def data(rng):
    n = 400
    X = pd.DataFrame({
        "history": rng.choice(["success", "failure", "none"], n, p=[0.15, 0.25, 0.6]),
        "age": rng.integers(18, 80, n),
        "loan": rng.choice(["yes", "no"], n),
    })
    rate = np.where(X["history"] == "success", 0.8, np.where(X["age"] > 60, 0.4, 0.08))
    y = np.where(rng.random(n) < rate, "yes", "no")
    return X, y


def test_certified_matches_brute_force_and_falls(data):
    X, y = data
    model = FallingRuleListClassifier(w=3.0, C=0.001, max_card=1, n_thresholds=3).fit(X, y)
    assert model.certificate_.is_optimal
    captures = model.antecedents_.capture_matrix()
    expected, _ = brute_force(captures, (y == "yes").astype(int), 3.0, 0.001)
    assert model.objective_ == pytest.approx(expected)
    probabilities = model.rule_list_.probabilities
    assert all(a >= b for a, b in zip(probabilities[:-1], probabilities[1:]))
    assert "history=success" in str(model.rule_list_)
    proba = model.predict_proba(X)[:, 1]
    predicted = model.predict(X)
    np.testing.assert_array_equal(predicted == "yes", proba > 1 / 4)
    rows = model.rule_list_.table()
    assert sum(r["positives"] for r in rows) == (y == "yes").sum()
    assert sum(r["positives"] + r["negatives"] for r in rows) == len(y)


def test_montecarlo_and_soft(data):
    X, y = data
    mc = FallingRuleListClassifier(w=3.0, C=0.001, method="montecarlo", iterations=50, random_state=0,
                                   max_card=1, n_thresholds=3).fit(X, y)
    assert mc.certificate_ is None
    certified = FallingRuleListClassifier(w=3.0, C=0.001, max_card=1, n_thresholds=3).fit(X, y)
    assert mc.objective_ >= certified.objective_ - 1e-12
    soft = FallingRuleListClassifier(w=3.0, C=0.001, C1=0.05, soft=True, max_card=1, n_thresholds=3).fit(X, y)
    assert soft.certificate_.is_optimal
    assert soft.objective_ <= certified.objective_ + 1e-12  # a falling list is softly falling with no penalty
    p = soft.rule_list_.probabilities
    assert all(a >= b - 1e-12 for a, b in zip(p[:-1], p[1:]))


def test_json_roundtrip(data):
    X, y = data
    model = FallingRuleListClassifier(w=3.0, C=0.001, max_card=1, n_thresholds=3).fit(X, y)
    again = load_model(model.rule_list_.to_json())
    assert isinstance(again, FallingRuleList) and again == model.rule_list_
    np.testing.assert_allclose(again.predict_proba(X), model.predict_proba(X))


def test_model_rejects_rising_probabilities():
    with pytest.raises(ValueError, match="must not increase"):
        FallingRuleList([Rule(("a",), 1, 10, 2)], Rule((), 0, 10, 5), [0.2, 0.5], 0.125)


def test_bad_input(data):
    X, y = data
    with pytest.raises(ValueError, match="method"):
        FallingRuleListClassifier(method="exhaustive").fit(X, y)
    with pytest.raises(ValueError, match="w must be > 0"):
        FallingRuleListClassifier(w=0).fit(X, y)
    with pytest.raises(ValueError, match="single class"):
        FallingRuleListClassifier().fit(X, np.ones(len(X)))


def test_pos_label_chooses_the_class_whose_probability_falls(data):
    X, y = data
    described = FallingRuleListClassifier(w=3.0, C=0.001, max_card=1, n_thresholds=3, pos_label="no").fit(X, y)
    # the same problem with labels renamed so that "no" is the default (second sorted) class
    renamed = np.where(y == "no", "zz", "aa")
    default = FallingRuleListClassifier(w=3.0, C=0.001, max_card=1, n_thresholds=3).fit(X, renamed)
    assert described.certificate_.is_optimal and default.certificate_.is_optimal
    assert described.objective_ == pytest.approx(default.objective_)
    assert described.rule_list_.probabilities == pytest.approx(default.rule_list_.probabilities)
    assert list(described.classes_) == ["no", "yes"] and described.rule_list_.describes == 0
    back = {"zz": "no", "aa": "yes"}
    assert described.predict(X).tolist() == [back[v] for v in default.predict(X)]
    proba = described.predict_proba(X)  # columns follow classes_: P(no) first, and it is what falls
    assert np.allclose(proba[:, 0], default.predict_proba(X)[:, 1])
    again = FallingRuleList.from_json(described.rule_list_.to_json())
    assert again == described.rule_list_ and again.describes == 0
    with pytest.raises(ValueError, match="pos_label"):
        FallingRuleListClassifier(pos_label="maybe").fit(X, y)


def test_defaults_give_a_short_readable_certified_list():
    from optrules.data.datasets import load_compas

    compas = load_compas()
    model = FallingRuleListClassifier(time_limit=30).fit(compas.X, compas.y)
    assert model.certificate_.is_optimal
    assert 1 <= len(model.rule_list_) <= 5
    assert min(rule.n_captured for rule in model.rule_list_.rules) >= 0.01 * len(compas.y)
    majority = max(np.mean(compas.y == c) for c in model.classes_)
    assert model.score(compas.X, compas.y) > majority + 0.05


def test_capture_vectors_stay_packed_within_a_small_budget():
    """20,100 antecedents x 4,000 rows: 77 MB as a boolean matrix (the fit refused a 60 MB budget), 9.6 MB
    packed; the search, warm start included, works on the packed vectors and certifies."""
    rng = np.random.default_rng(11)
    X = pd.DataFrame(rng.random((4000, 200)) < 0.5, columns=[f"f{j}" for j in range(200)]).astype(int)
    y = (X["f0"] & X["f1"] | (rng.random(4000) < 0.1)).astype(int)
    model = FallingRuleListClassifier(max_antecedents=None, max_memory=60 << 20, time_limit=30).fit(X, y)
    assert len(model.antecedents_) * len(y) > 60 << 20
    assert model.certificate_.status == "optimal"
    assert model.certificate_.counters["memory_bytes"] < 60 << 20
