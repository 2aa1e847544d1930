import numpy as np
import pandas as pd
import pytest

from optrules.corels.prefix import rule_list_from_prefix
from optrules.data.binarize import Binarizer
from optrules.models import Rule, RuleList


@pytest.fixture
def data():
    X = pd.DataFrame(
        {
            "age": ["18-20", "18-20", "26-45", "26-45", ">45", ">45", "18-20", "26-45"],
            "sex": ["Male", "Female", "Male", "Male", "Female", "Male", "Male", "Female"],
        }
    )
    y = np.array([1, 0, 1, 0, 0, 0, 1, 1])
    return X, y


def test_rule_list_from_prefix_counts_predicts_and_prints(data):
    X, y = data
    binarizer = Binarizer().fit(X)
    features = binarizer.transform(X)
    names = binarizer.feature_names_
    # antecedents: (age=18-20 and sex=Male), (sex=Female)
    a0 = features[:, names.index("age=18-20")] & features[:, names.index("sex=Male")]
    a1 = features[:, names.index("sex=Female")]
    captures = np.vstack([a0, a1])
    conditions = [("age=18-20", "sex=Male"), ("sex=Female",)]
    rl = rule_list_from_prefix(captures, y, [0, 1], conditions, classes=(0, 1), binarizer=binarizer)
    assert [(r.n_captured, r.n_positive, r.prediction) for r in rl.rules] == [(2, 2, 1), (3, 1, 0)]
    assert (rl.default.n_captured, rl.default.n_positive, rl.default.prediction) == (3, 1, 0)
    assert str(rl) == (
        "if (age=18-20) and (sex=Male) then predict yes\n"
        "else if (sex=Female) then predict no\n"
        "else predict no"
    )
    np.testing.assert_array_equal(rl.predict(X), [1, 0, 0, 0, 0, 0, 1, 0])
    proba = rl.predict_proba(X)
    np.testing.assert_allclose(proba[:, 1], [1, 1 / 3, 1 / 3, 1 / 3, 1 / 3, 1 / 3, 1, 1 / 3])
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    # through the binary features directly
    np.testing.assert_array_equal(RuleList(rl.rules, rl.default, feature_names=names).predict(features), rl.predict(X))


def test_json_roundtrip_keeps_predictions(data):
    X, y = data
    binarizer = Binarizer().fit(X)
    rl = RuleList([Rule(("sex=Male",), 1, 4, 3)], Rule((), 0, 4, 1), classes=["stay", "reoffend"], binarizer=binarizer)
    back = RuleList.from_json(rl.to_json())
    assert back == rl
    np.testing.assert_array_equal(back.predict(X), rl.predict(X))
    assert set(back.predict(X)) == {"stay", "reoffend"}
    assert str(back).startswith("if (sex=Male) then predict reoffend")


def test_unknown_columns_and_bad_json(data):
    X, _ = data
    rl = RuleList([Rule(("sex=Male",), 1, 4, 3)], Rule((), 0, 4, 1))
    with pytest.raises(ValueError, match=r"\['sex=Male'\] used by the model are missing"):
        rl.predict(X)
    with pytest.raises(ValueError, match="not a serialised RuleList"):
        RuleList.from_json('{"format": "other"}')
    with pytest.raises(ValueError, match="no conditions"):
        RuleList([], Rule(("a",), 0, 1, 0))


def test_empty_rule_list_prints_default():
    assert str(RuleList([], Rule((), 1, 5, 4))) == "predict yes"
