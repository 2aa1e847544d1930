"""The fairness metrics and the checks of what a user passes for them: one clear error each."""

from fractions import Fraction

import numpy as np
import pytest

from optrules.fairness.metrics import check_max_unfairness, check_metric, check_sensitive, exact_unfairness, unfairness


@pytest.mark.parametrize("sensitive, message", [
    (["a"] * 10, "exactly two groups, got 1"),
    (["a", "b", "c"] * 3 + ["a"], "exactly two groups, got 3"),
    (["a", "b"] * 4, "8 values for 10 rows"),
    (["a", None] * 5, "5 missing values"),
    ([1.0, float("nan")] * 5, "5 missing values"),
])
def test_a_sensitive_attribute_that_cannot_be_two_groups_is_refused(sensitive, message):
    with pytest.raises(ValueError, match=message):
        check_sensitive(sensitive, 10)


def test_two_groups_are_numbered_in_sorted_order():
    group, labels = check_sensitive(["women", "men", "women"], 3)
    assert labels == ("men", "women") and group.tolist() == [1, 0, 1]


@pytest.mark.parametrize("eps", [-0.01, 1.5, "x", None, float("nan")])
def test_max_unfairness_outside_zero_one_is_refused(eps):
    with pytest.raises(ValueError, match="max_unfairness must be"):
        check_max_unfairness(eps)


def test_max_unfairness_is_its_decimal_value():
    assert check_max_unfairness(0.05) == Fraction(1, 20) and check_max_unfairness(1) == 1


def test_an_unknown_metric_is_refused_with_the_known_ones():
    with pytest.raises(ValueError, match="statistical_parity, equal_opportunity"):
        check_metric("demographic parity")


def test_each_metric_reads_its_rates():
    y = np.array([1, 1, 0, 0, 1, 1, 0, 0])
    group = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    predicted = np.array([1, 0, 0, 0, 1, 1, 1, 0], dtype=bool)
    # group 0: 1 of 4 positive, TPR 1/2, FPR 0; group 1: 3 of 4, TPR 1, FPR 1/2
    expected = {"statistical_parity": Fraction(1, 2), "equal_opportunity": Fraction(1, 2),
                "predictive_equality": Fraction(1, 2), "equalized_odds": Fraction(1, 2)}
    for metric, value in expected.items():
        assert exact_unfairness(y, group, None, predicted, metric) == value
    weights = np.array([3.0, 1, 1, 1, 1, 1, 1, 1])  # group 0's TPR 3/4: the gap 1/4
    assert exact_unfairness(y, group, weights, predicted, "equal_opportunity") == Fraction(1, 4)
    positive = np.array([[1.0, 0.0], [1.0, 2.0]])  # positive[g, y]: FPRs 1/2 and 1/2, TPRs 0 and 1
    total = np.array([[2.0, 2.0], [2.0, 2.0]])
    assert unfairness(positive, total, "predictive_equality") == 0.0
    assert unfairness(positive, total, "equalized_odds") == unfairness(positive, total, "equal_opportunity") == 1.0
