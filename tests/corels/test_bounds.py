import math

import numpy as np
import pytest

from optrules.corels.bounds import log10_remaining_space, theorem7_extension_budget, theorem21_excessive_support


def test_remaining_space_counts_prefixes():
    histogram = np.zeros((6, 3), np.int64)  # 5 antecedents; rows: prefix length, columns: extension budget
    histogram[2, 2] = 1  # 3 antecedents free: 1 + 3 + 3*2 = 10 prefixes
    assert log10_remaining_space(histogram, 5) == pytest.approx(1.0)
    histogram[0, 1] = 2  # 5 free: 2 * (1 + 5) = 12 more
    assert log10_remaining_space(histogram, 5) == pytest.approx(math.log10(22))
    assert log10_remaining_space(np.zeros((3, 3), np.int64), 2) == -math.inf


def test_extension_budget():
    # R* - b = 25 mistakes, lambda*N = 10: at most 2 more rules; never more than the free antecedents
    assert theorem7_extension_budget(75.0, 100.0, 10.0, 5) == 2
    assert theorem7_extension_budget(75.0, 100.0, 10.0, 1) == 1
    assert theorem7_extension_budget(95.0, 90.0, 10.0, 5) == -1
    assert theorem7_extension_budget(0.0, 90.0, 0.0, 4) == 4


def test_excessive_support_is_strict():
    # leaving exactly lambda*N uncaptured is allowed, fewer is not
    assert theorem21_excessive_support(100, 90, 10.0)
    assert not theorem21_excessive_support(100, 91, 10.0)
