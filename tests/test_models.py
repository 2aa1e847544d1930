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


def test_smoothed_probabilities_and_their_intervals():
    import numpy as np

    rl = RuleList([Rule(("a",), 1, 10, 8), Rule(("b",), 0, 3, 0)], Rule((), 0, 20, 5))
    table = rl.get_rules(prior=1.0, level=0.9)
    # Laplace: (hits + 1) / (n + 2)
    assert table["smoothed"].tolist() == pytest.approx([9 / 12, 4 / 5, 16 / 22])
    for (hits, n), (low, high) in zip([(8, 10), (3, 3), (15, 20)], table[["low", "high"]].to_numpy()):
        # the Beta(hits + 1, n - hits + 1) posterior holds 5% below low and 5% above high (numerical integral)
        grid = np.linspace(0, 1, 200001)
        density = grid ** hits * (1 - grid) ** (n - hits)
        cdf = np.cumsum(density) / density.sum()
        assert np.interp(low, grid, cdf) == pytest.approx(0.05, abs=2e-3)
        assert np.interp(high, grid, cdf) == pytest.approx(0.95, abs=2e-3)
    # three classes: the predicted class against the other two, each with its pseudo-rows
    multi = RuleList([Rule(("a",), 2, 10, 0, (1.0, 2.0, 7.0))], Rule((), 0, 5, 0, (3.0, 1.0, 1.0)), classes=[0, 1, 2])
    assert multi.get_rules(prior=0.5)["smoothed"].tolist() == pytest.approx([7.5 / 11.5, 3.5 / 6.5])
    assert "smoothed" not in rl.get_rules().columns
    for bad in (0.0, -1.0, float("nan")):
        with pytest.raises(ValueError, match="prior"):
            rl.get_rules(prior=bad)
    with pytest.raises(ValueError, match="level"):
        rl.get_rules(prior=1.0, level=1.0)


def test_explain_with_a_prior_reports_the_rule_interval():
    import pandas as pd

    rl = RuleList([Rule(("a",), 1, 10, 8)], Rule((), 0, 20, 5))
    frame = pd.DataFrame({"a": [True, False, True]})
    explained = rl.explain(frame, prior=1.0)
    assert explained["rule"].tolist() == [0, 1, 0]
    assert explained["smoothed"].tolist() == pytest.approx([9 / 12, 16 / 22, 9 / 12])
    assert (explained["low"] < explained["smoothed"]).all() and (explained["smoothed"] < explained["high"]).all()
