import numpy as np
import pytest

from optrules.data.validation import check_binary_target


def test_binary_target_mapping():
    y01, classes = check_binary_target(["no", "yes", "yes"])
    assert list(y01) == [0, 1, 1] and list(classes) == ["no", "yes"]


@pytest.mark.parametrize(
    "y, message",
    [
        ([1, 1, 1], "single class"),
        ([0, 1, 2], r"the target has 3 classes \(0, 1, 2\)"),
        ([], "empty"),
        ([0.0, np.nan, 1.0], "missing"),
        ([0.0, np.inf, 1.0], "infinite"),
    ],
)
def test_bad_targets(y, message):
    with pytest.raises(ValueError, match=message):
        check_binary_target(y)


def test_length_mismatch():
    with pytest.raises(ValueError, match="X has 4 samples but y has 3"):
        check_binary_target([0, 1, 0], n_samples=4)


def test_binary_families_say_why_and_what_to_do():
    import pandas as pd

    from optrules.estimators import FallingRuleListClassifier, RuleSetClassifier

    X, y = pd.DataFrame({"a": [0, 1, 2] * 10}), ["low", "mid", "high"] * 10
    for estimator, why in ((FallingRuleListClassifier(), "probability of one class"),
                           (RuleSetClassifier(), "describes one class")):
        with pytest.raises(ValueError, match=why) as error:
            estimator.fit(X, y)
        assert "'high', 'low', 'mid'" in str(error.value) and "RuleListClassifier" in str(error.value)
