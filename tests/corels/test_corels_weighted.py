"""Cost-sensitive (sample-weighted) and multi-class rule lists against exhaustive enumeration."""

import numpy as np
import pytest
from test_corels_search import ABLATIONS, MAPS, POLICIES

from optrules.certificate import OPTIMAL
from optrules.corels.bruteforce import brute_force
from optrules.corels.prefix import rule_class_totals, rule_mistakes
from optrules.corels.problem import Problem, equivalent_points_minority
from optrules.corels.search import search
from optrules.data import bitset


def weighted_instance(rng, n_classes, integer_weights):
    n = int(rng.integers(6, 45))
    m = int(rng.integers(2, 7))
    captures = rng.random((m, n)) < rng.uniform(0.1, 0.7, size=(m, 1))
    if rng.random() < 0.3:  # repeated signatures: equivalent points with mixed labels and weights
        half = n // 2
        captures[:, n - half:] = captures[:, :half]
    y = rng.integers(0, n_classes, size=n)
    y[:n_classes] = np.arange(n_classes)  # every class present
    if integer_weights:
        weights = rng.integers(1, 6, size=n).astype(float)
    else:
        weights = rng.gamma(1.0, 1.0, size=n)
        weights[rng.random(n) < 0.1] = 0.0  # zero-weight samples count for nothing
        weights[0] = weights[1] = 1.0
    lam = float(rng.choice([0.0, 0.01, 0.03, 0.06, 0.12]))
    return captures, y, weights, lam


def check(result, problem, expected):
    captures = problem.captures()
    totals = rule_class_totals(captures, problem.y, result.solution, problem.n_classes, problem.sample_weight)
    mistakes = float(rule_mistakes(totals).sum())
    assert result.mistakes == pytest.approx(mistakes, abs=1e-9)
    assert result.objective == pytest.approx(mistakes / problem.total_weight + problem.regularization * len(result.solution),
                                             abs=1e-12)
    assert result.objective == pytest.approx(expected.objective, abs=1e-9)
    assert result.certificate.status == OPTIMAL
    assert result.certificate.lower_bound == pytest.approx(result.objective, abs=1e-9)


@pytest.mark.parametrize("seed", range(30))
def test_weighted_binary_matches_brute_force(seed):
    rng = np.random.default_rng(1000 + seed)
    captures, y, weights, lam = weighted_instance(rng, 2, integer_weights=seed % 2 == 0)
    expected = brute_force(captures, y, lam, sample_weight=weights)
    problem = Problem.from_captures(captures, y, lam, sample_weight=weights)
    for policy in POLICIES:
        for map_type in MAPS:
            check(search(problem, policy=policy, map_type=map_type), problem, expected)


@pytest.mark.parametrize("seed", range(30))
def test_multiclass_matches_brute_force(seed):
    rng = np.random.default_rng(2000 + seed)
    n_classes = int(rng.integers(3, 6))
    captures, y, weights, lam = weighted_instance(rng, n_classes, integer_weights=True)
    weights = weights if seed % 3 == 0 else None
    expected = brute_force(captures, y, lam, sample_weight=weights, n_classes=n_classes)
    problem = Problem.from_captures(captures, y, lam, sample_weight=weights, n_classes=n_classes)
    for ablation in ABLATIONS:
        for map_type in MAPS:
            check(search(problem, map_type=map_type, ablation=ablation), problem, expected)


@pytest.mark.parametrize("seed", range(10))
def test_unit_weights_give_the_unweighted_optimum(seed):
    """The weighted kernel with all weights 1 reaches the integer kernel's optimum and lower bound."""
    rng = np.random.default_rng(3000 + seed)
    captures, y, _, lam = weighted_instance(rng, 2, integer_weights=True)
    plain = search(Problem.from_captures(captures, y, lam))
    weighted = search(Problem.from_captures(captures, y, lam, sample_weight=np.ones(len(y))))
    assert weighted.objective == pytest.approx(plain.objective, abs=1e-12)
    assert weighted.mistakes == pytest.approx(plain.mistakes)


def test_weights_equal_to_duplication():
    """A sample of weight k is k copies of it: the optimum is the duplicated data's optimum."""
    rng = np.random.default_rng(7)
    for _ in range(10):
        captures, y, weights, lam = weighted_instance(rng, 3, integer_weights=True)
        reps = weights.astype(int)
        weighted = search(Problem.from_captures(captures, y, lam, sample_weight=weights, n_classes=3))
        copied = search(Problem.from_captures(np.repeat(captures, reps, axis=1), np.repeat(y, reps), lam, n_classes=3))
        assert weighted.objective == pytest.approx(copied.objective, abs=1e-12)


@pytest.mark.parametrize("seed", range(12))
def test_whole_number_weights_search_as_copies_of_the_samples(seed):
    """Two classes, whole-number weights: counted as copies (the integer counting, sibling dominance and
    all), so the search is the copied data's, prefix for prefix: same list, bound and work."""
    rng = np.random.default_rng(4000 + seed)
    captures, y, weights, lam = weighted_instance(rng, 2, integer_weights=True)
    weights[rng.random(len(y)) < 0.2] *= 40  # counts past a packed word's planes
    reps = weights.astype(int)
    problem = Problem.from_captures(captures, y, lam, sample_weight=weights)
    assert not problem.weighted and problem.counts.tolist() == reps.tolist()
    copied_problem = Problem.from_captures(np.repeat(captures, reps, axis=1), np.repeat(y, reps), lam)
    for ablation in ABLATIONS:
        weighted, copied = search(problem, ablation=ablation), search(copied_problem, ablation=ablation)
        assert weighted.solution == copied.solution
        assert weighted.objective == pytest.approx(copied.objective, abs=1e-12)
        assert weighted.certificate.lower_bound == pytest.approx(copied.certificate.lower_bound, abs=1e-12)
        assert weighted.certificate.counters["nodes_expanded"] == copied.certificate.counters["nodes_expanded"]
    half = weights.copy()
    half[0] += 0.5  # one weight not whole: real-valued class totals
    assert Problem.from_captures(captures, y, lam, sample_weight=half).weighted


def test_weights_change_the_optimal_list():
    """Making the positives expensive turns a 'predict no' list into one that catches them."""
    captures = np.array([[1, 1, 1, 1, 0, 0, 0, 0, 0, 0]], dtype=bool)
    y = np.array([1, 0, 0, 0, 0, 0, 0, 0, 0, 0])
    plain = search(Problem.from_captures(captures, y, 0.01))
    assert plain.solution == () and plain.mistakes == 1
    weights = np.where(y == 1, 10.0, 1.0)
    costly = search(Problem.from_captures(captures, y, 0.01, sample_weight=weights))
    assert costly.solution == (0,) and costly.mistakes == 3.0


def test_multiclass_minority_marks_everything_outside_the_majority_class():
    captures = np.array([[1, 1, 1, 1, 0, 0]], dtype=bool)
    y = np.array([0, 1, 1, 2, 2, 0])
    minor = equivalent_points_minority(bitset.pack(captures), y)
    assert minor.tolist() == [True, False, False, True, True, False]  # group 1 majority 1; group 2 tie -> 0
    weighted = equivalent_points_minority(bitset.pack(captures), y, sample_weight=[5, 1, 1, 1, 1, 1])
    assert weighted.tolist() == [False, True, True, True, True, False]


def test_bad_weights_and_labels():
    captures = np.array([[1, 0, 1, 0]], dtype=bool)
    y = np.array([0, 1, 0, 1])
    for bad, message in [([1, 1, 1], "entries"), ([1, np.nan, 1, 1], "NaN"), ([1, -1, 1, 1], "non-negative"),
                         ([0, 0, 0, 0], "sums to zero"), ([1, 0, 1, 0], "same label")]:
        with pytest.raises(ValueError, match=message):
            Problem.from_captures(captures, y, 0.01, sample_weight=bad)
    with pytest.raises(ValueError, match="class indices"):
        Problem.from_captures(captures, np.array([0, 1, 2, 3]), 0.01, n_classes=3)
