"""A fitted estimator pickles to the size of its model, not of its training data."""

import pickle

import numpy as np
import pandas as pd
import pytest

from optrules import FallingRuleListClassifier, RuleListClassifier, RuleSetClassifier


@pytest.fixture(scope="module")
def table():
    rng = np.random.default_rng(0)
    n = 12_000
    X = pd.DataFrame({"a": rng.normal(size=n), "b": rng.integers(0, 50, n), "c": rng.choice(list("pqrst"), n)})
    y = np.where((X["a"] > 0.3) ^ (X["c"] == "q") ^ (rng.random(n) < 0.1), "yes", "no")
    return X, y


@pytest.mark.parametrize("make", [lambda: RuleListClassifier(regularization=0.01, time_limit=20),
                                  lambda: RuleSetClassifier(complexity=8, time_limit=3),
                                  lambda: FallingRuleListClassifier(w=2.0, C=0.01, max_card=1, time_limit=20)])
def test_pickle_weighs_what_the_model_weighs(table, make):
    X, y = table
    estimator = make().fit(X, y)
    blob = pickle.dumps(estimator)
    # 12,000 rows: the capture vectors alone are 1.5 kB per antecedent; the model is a few kB
    assert len(blob) < 20 * len(estimator.rule_list_.to_json()) + 20_000
    back = pickle.loads(blob)
    assert (back.predict(X) == estimator.predict(X)).all()
    if hasattr(back, "antecedents_"):
        assert (back.antecedents_.support == estimator.antecedents_.support).all()
        with pytest.raises(ValueError, match="not kept"):
            back.antecedents_.capture_matrix()
    if hasattr(back, "rashomon_set"):  # (its training labels did not travel either)
        with pytest.raises(ValueError, match="fit again to search its Rashomon set"):
            back.rashomon_set(0.01)
        assert estimator.rashomon_set(0.01).size >= 1
