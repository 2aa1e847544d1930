"""RuleListClassifier with several classes, sample weights and class weights."""

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import balanced_accuracy_score

from optrules.corels.bruteforce import brute_force
from optrules.data.datasets import load_car_evaluation
from optrules.estimators import RuleListClassifier
from optrules.models import load_model


def small_frame(rng, n=60):
    X = pd.DataFrame({"colour": rng.choice(["red", "green", "blue"], n), "size": rng.choice(["S", "M", "L"], n),
                      "shape": rng.choice(["round", "square"], n)})
    labels = np.where(X["colour"] == "red", "apple", np.where(X["size"] == "L", "melon", "grape"))
    noise = rng.random(n) < 0.2
    labels[noise] = rng.choice(["apple", "melon", "grape"], int(noise.sum()))
    return X, labels


@pytest.mark.parametrize("seed", range(8))
def test_multiclass_weighted_estimator_is_optimal(seed):
    rng = np.random.default_rng(seed)
    X, y = small_frame(rng)
    weights = rng.integers(1, 4, len(y)).astype(float) if seed % 2 else None
    model = RuleListClassifier(regularization=0.02, max_card=1, min_support=0.0).fit(X, y, sample_weight=weights)
    assert list(model.classes_) == ["apple", "grape", "melon"]
    codes = np.searchsorted(model.classes_, y)
    expected = brute_force(model.antecedents_.capture_matrix(), codes, 0.02, max_length=4, sample_weight=weights,
                           n_classes=3)
    cert = model.certificate_
    assert cert.status == "optimal"
    assert cert.objective <= expected.objective + 1e-12  # brute force is capped at 4 rules
    if len(model.rule_list_) <= 4:  # then the list is among those enumerated
        assert cert.objective == pytest.approx(expected.objective, abs=1e-12)
    # the certified objective is the weighted error of what the model predicts, plus lambda per rule
    w = np.ones(len(y)) if weights is None else weights
    error = float(w @ (model.predict(X) != y)) / w.sum()
    assert cert.objective == pytest.approx(error + 0.02 * len(model.rule_list_), abs=1e-12)
    proba = model.predict_proba(X)
    assert proba.shape == (len(y), 3) and np.allclose(proba.sum(axis=1), 1.0)
    assert (model.classes_[proba.argmax(axis=1)] == model.predict(X)).all()


def test_sample_weight_of_k_equals_k_copies():
    rng = np.random.default_rng(3)
    X, y = small_frame(rng, 40)
    k = rng.integers(1, 4, len(y))
    weighted = RuleListClassifier(regularization=0.03, max_card=1, min_support=0.0).fit(X, y, sample_weight=k)
    copied = RuleListClassifier(regularization=0.03, max_card=1, min_support=0.0).fit(
        X.loc[X.index.repeat(k)], np.repeat(y, k))
    assert weighted.certificate_.objective == pytest.approx(copied.certificate_.objective, abs=1e-12)


def test_zero_weight_samples_are_ignored():
    rng = np.random.default_rng(4)
    X, y = small_frame(rng, 50)
    keep = rng.random(50) < 0.6
    masked = RuleListClassifier(regularization=0.02, max_card=1, min_support=0.0).fit(X, y, sample_weight=keep * 1.0)
    subset = RuleListClassifier(regularization=0.02, max_card=1, min_support=0.0).fit(X[keep], y[keep])
    assert masked.certificate_.objective == pytest.approx(subset.certificate_.objective, abs=1e-12)


def test_car_evaluation_balanced_class_weight():
    """On the 4-class car data, balanced class weights trade plain accuracy for balanced accuracy."""
    data = load_car_evaluation()
    plain = RuleListClassifier(regularization=0.01, max_card=1).fit(data.X, data.y)
    balanced = RuleListClassifier(regularization=0.01, max_card=1, class_weight="balanced").fit(data.X, data.y)
    assert plain.certificate_.status == balanced.certificate_.status == "optimal"
    assert plain.score(data.X, data.y) > 0.85
    assert balanced_accuracy_score(data.y, balanced.predict(data.X)) > balanced_accuracy_score(data.y, plain.predict(data.X)) + 0.2
    assert set(balanced.predict(data.X)) == {"unacc", "acc", "good", "vgood"}
    # multi-class lists survive JSON with their class totals
    again = load_model(balanced.rule_list_.to_json())
    assert again == balanced.rule_list_
    assert np.allclose(again.predict_proba(data.X), balanced.predict_proba(data.X))
    # a dict weight is accepted, an unknown kind is not
    RuleListClassifier(regularization=0.05, max_card=1, class_weight={"vgood": 5.0}).fit(data.X, data.y)
    with pytest.raises(ValueError, match="class_weight"):
        RuleListClassifier(class_weight="heavy").fit(data.X, data.y)


def test_bad_sample_weight():
    rng = np.random.default_rng(5)
    X, y = small_frame(rng, 20)
    with pytest.raises(ValueError, match="20 samples"):
        RuleListClassifier().fit(X, y, sample_weight=np.ones(19))
    with pytest.raises(ValueError, match="non-negative"):
        RuleListClassifier().fit(X, y, sample_weight=-np.ones(20))
