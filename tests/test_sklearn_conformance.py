"""scikit-learn conformance: check_estimator, Pipeline, GridSearchCV, clone, pickling, labels, names."""

import pickle

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.compose import ColumnTransformer
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.utils.estimator_checks import parametrize_with_checks

from optrules.data.datasets import load_compas
from optrules.estimators import FallingRuleListClassifier, RuleListClassifier, RuleSetClassifier
from optrules.model_selection import RuleListCV

#: checks that cannot apply, and why (every other check of scikit-learn's suite passes)
NOT_APPLICABLE = {
    "RuleSetClassifier": {
        "check_class_weight_classifiers": (
            "the check wants >87% of test predictions in class 0 when class 0 weighs 10^7 times class 1; "
            "the rule set is optimal for that weighted training loss, which still covers the positives of "
            "pure regions (no negative covered, so no weighted cost): optimal on training, not on the "
            "check's noisy test split"
        ),
    },
}

ESTIMATORS = [
    # (a node budget, not time, ends the search for lists of pairs: one fit gives one list however busy the machine)
    RuleListClassifier(regularization=0.02, time_limit=10, max_nodes=2000),
    FallingRuleListClassifier(w=3, time_limit=5, iterations=50),
    RuleSetClassifier(complexity=10, time_limit=5, pricing_time_limit=1),
]
CHECKED = ESTIMATORS + [RuleListCV([0.1, 0.05], RuleListClassifier(max_card=1, time_limit=10, max_nodes=2000), cv=2)]


def test_every_registered_family_is_checked():
    """A family added to the registry (optrules.families) cannot skip scikit-learn's checks: its estimator
    must be in ESTIMATORS."""
    from optrules.families import families

    registered = {family.estimator for family in families().values()}
    assert registered == {type(estimator) for estimator in ESTIMATORS}, "add the new family's estimator to ESTIMATORS"


@parametrize_with_checks(CHECKED, expected_failed_checks=lambda est: NOT_APPLICABLE.get(type(est).__name__, {}))
def test_scikit_learn_estimator_checks(estimator, check):
    check(estimator)


@pytest.fixture(scope="module")
def compas():
    data = load_compas()
    return data.X.iloc[:1500], np.where(data.y[:1500] == 1, "yes", "no")


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda e: type(e).__name__)
def test_pipeline_clone_and_pickle(estimator, compas):
    X, y = compas
    # a pipeline step before the estimator: keep only some columns, as a user would
    keep = ColumnTransformer([("keep", "passthrough", ["age", "priors", "sex"])], verbose_feature_names_out=False)
    keep.set_output(transform="pandas")
    estimator = clone(estimator)
    if isinstance(estimator, FallingRuleListClassifier):
        estimator.set_params(w=1.0)  # accuracy is the objective when both errors cost the same
    pipeline = make_pipeline(keep, estimator).fit(X, y)
    predicted = pipeline.predict(X)
    assert set(predicted) <= {"no", "yes"}
    assert pipeline.score(X, y) > 0.6
    restored = pickle.loads(pickle.dumps(pipeline))
    assert (restored.predict(X) == predicted).all()
    assert np.allclose(restored.predict_proba(X), pipeline.predict_proba(X))
    model = pipeline[-1]
    assert list(model.feature_names_in_) == ["age", "priors", "sex"] and model.n_features_in_ == 3
    assert clone(model).get_params() == model.get_params()


def test_grid_search_over_regularization(compas):
    X, y = compas
    search = GridSearchCV(RuleListClassifier(max_card=1), {"regularization": [0.005, 0.02, 0.05]}, cv=3).fit(X, y)
    assert search.best_params_["regularization"] in (0.005, 0.02, 0.05)
    scores = search.cv_results_["mean_test_score"]
    assert np.isfinite(scores).all() and scores.max() > 0.6
    assert search.best_estimator_.certificate_.status == "optimal"


def test_integer_labels_and_arrays(compas):
    X, y = compas
    y_int = np.where(y == "yes", 7, 3)
    model = RuleListClassifier(regularization=0.02).fit(X, y_int)
    assert list(model.classes_) == [3, 7]
    assert set(model.predict(X)) <= {3, 7}
    scores = cross_val_score(RuleListClassifier(regularization=0.02), X, y_int, cv=3)
    assert scores.mean() > 0.6
    # numpy arrays in, positional columns; the wrong width is refused
    numeric = X[["age", "priors"]].to_numpy()
    fitted = RuleListClassifier(regularization=0.02).fit(numeric, y_int)
    assert not hasattr(fitted, "feature_names_in_") or list(fitted.feature_names_in_) == ["x0", "x1"]
    with pytest.raises(ValueError, match="expecting 2 features"):
        fitted.predict(np.zeros((3, 3)))
    with pytest.raises(ValueError, match="columns"):
        model.predict(pd.DataFrame({"age": [30]}))
