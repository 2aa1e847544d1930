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
        ([0, 1, 2], "binary target is required, got 3 classes"),
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
