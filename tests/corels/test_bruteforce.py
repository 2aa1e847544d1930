import numpy as np

from optrules.corels.bruteforce import brute_force
from optrules.corels.prefix import prefix_mistakes


def test_perfect_separator_found():
    y = np.array([1, 1, 1, 0, 0, 0, 0, 0, 0, 0])
    captures = np.array([y.astype(bool), np.arange(10) < 5, np.arange(10) % 2 == 0])
    result = brute_force(captures, y, regularization=0.01)
    assert result.prefix == (0,) and result.mistakes == 0
    assert np.isclose(result.objective, 0.01)


def test_large_lambda_gives_the_empty_list():
    y = np.array([1, 1, 1, 0, 0, 0, 0, 0, 0, 0])
    captures = np.array([y.astype(bool)])
    result = brute_force(captures, y, regularization=0.5)
    assert result.prefix == () and result.mistakes == 3


def test_order_matters_and_is_found():
    # x0 captures {0,1,2} (labels 1,1,0), x1 captures {2,3} (labels 0,0): x1 must come first
    y = np.array([1, 1, 0, 0, 1, 1, 1, 1])
    captures = np.array([[1, 1, 1, 0, 0, 0, 0, 0], [0, 0, 1, 1, 0, 0, 0, 0]], bool)
    result = brute_force(captures, y, regularization=0.0)
    assert result.prefix[0] == 1 and result.mistakes == 0
    assert prefix_mistakes(captures, y, (0, 1)) == 1


def test_optimum_never_worse_than_any_sampled_prefix(rng):
    for _ in range(20):
        captures = rng.random((5, 30)) < 0.4
        y = (rng.random(30) < 0.5).astype(int)
        lam = rng.choice([0.0, 0.01, 0.05])
        best = brute_force(captures, y, lam)
        for _ in range(30):
            k = rng.integers(0, 6)
            prefix = tuple(rng.permutation(5)[:k])
            assert best.objective <= prefix_mistakes(captures, y, prefix) / 30 + lam * k + 1e-12
