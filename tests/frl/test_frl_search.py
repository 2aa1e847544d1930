import itertools

import numpy as np
import pytest

from optrules.frl.bounds import theorem46_prefix_bound, theorem52_soft_prefix_bound
from optrules.frl.bruteforce import brute_force
from optrules.frl.objective import is_compatible, is_falling, list_counts, objective
from optrules.frl.search import FRLProblem, certified_search


def random_instance(rng, n_max=50, m_max=6):
    n = int(rng.integers(6, n_max + 1))
    m = int(rng.integers(1, m_max + 1))
    captures = rng.random((m, n)) < rng.uniform(0.1, 0.6, size=(m, 1))
    y = (rng.random(n) < rng.uniform(0.15, 0.6)).astype(int)
    if y.min() == y.max():
        y[0] = 1 - y[0]
    w = float(rng.choice([0.5, 1.0, 3.0, 7.0]))
    C = float(rng.choice([0.0, 1e-6, 0.01, 0.05]))
    C1 = float(rng.choice([0.005, 0.05, 0.5]))
    return captures, y, w, C, C1


@pytest.mark.parametrize("seed", range(60))
def test_certified_search_equals_brute_force(seed):
    rng = np.random.default_rng(seed)
    captures, y, w, C, C1 = random_instance(rng)
    problem = FRLProblem(captures, y, w, C, C1)
    for soft in (False, True):
        expected, _ = brute_force(captures, y, w, C, C1, soft)
        for use_map, counting in itertools.product((True, False), ("packed", "samples")):
            result = certified_search(problem, soft=soft, use_map=use_map, counting=counting)
            counts = list_counts(captures, y, result.solution)
            assert is_compatible(counts)
            if not soft:
                assert is_falling(counts)
            assert result.objective == pytest.approx(objective(counts, w, C, C1, soft), abs=1e-12)
            assert result.objective == pytest.approx(expected, abs=1e-9), (soft, use_map, counting)
            assert result.certificate.is_optimal


def planted_instance(rng, m=7):
    """Labels drawn from a planted falling list (rates 0.9, 0.7, 0.5, 0.3, else 0.05) over overlapping
    antecedents: long optima, many prefixes with equal uncaptured sets, and the soft bound's cases."""
    n = int(rng.integers(60, 121))
    captures = rng.random((m, n)) < rng.uniform(0.15, 0.45, size=(m, 1))
    planted = rng.permutation(m)[:4]
    rate = np.full(n, 0.05)
    undecided = np.ones(n, bool)
    for a, r in zip(planted, (0.9, 0.7, 0.5, 0.3)):
        rate[captures[a] & undecided] = r
        undecided &= ~captures[a]
    y = (rng.random(n) < rate).astype(int)
    if y.min() == y.max():
        y[0] = 1 - y[0]
    return captures, y, float(rng.choice([1.0, 3.0, 7.0])), float(rng.choice([0.0, 1e-6, 0.005])), float(rng.choice([0.0005, 0.05, 2.0]))


@pytest.mark.parametrize("seed", range(16))
def test_planted_long_lists_equal_brute_force(seed):
    rng = np.random.default_rng(900 + seed)
    captures, y, w, C, C1 = planted_instance(rng)
    problem = FRLProblem(captures, y, w, C, C1)
    for soft in (False, True):
        expected, _ = brute_force(captures, y, w, C, C1, soft)
        for use_map in (True, False):
            result = certified_search(problem, soft=soft, use_map=use_map)
            assert result.objective == pytest.approx(expected, abs=1e-9), (soft, use_map)


def completions(captures, y, prefix, w, C, C1, soft):
    """Best objective over the compatible (falling unless soft) lists that begin with ``prefix``."""
    m = captures.shape[0]
    rest = [a for a in range(m) if a not in prefix]
    best = np.inf
    for k in range(len(rest) + 1):
        for tail in itertools.permutations(rest, k):
            counts = list_counts(captures, y, prefix + tail)
            if is_compatible(counts) and (soft or is_falling(counts)):
                best = min(best, objective(counts, w, C, C1, soft))
    return best


@pytest.mark.parametrize("seed", range(60))
def test_prefix_bounds_never_exceed_the_best_completion(seed):
    rng = np.random.default_rng(500 + seed)
    if seed % 2:
        captures, y, w, C, C1 = random_instance(rng, m_max=5)
    else:
        captures, y, w, C, C1 = planted_instance(rng, m=5)
    n = len(y)
    m = captures.shape[0]
    for _ in range(10):
        prefix = tuple(int(a) for a in rng.permutation(m)[: rng.integers(0, m + 1)])
        counts = list_counts(captures, y, prefix)
        if not is_compatible(counts):
            continue
        rest_p, rest_q = counts[-1]
        rules = counts[:-1]
        # soft: Ltilde* <= best compatible completion
        value = sum(min(q, w * p) for p, q in rules) + C * n * len(rules)
        amin, penalty = 1.0, 0.0
        for p, q in rules:
            alpha = p / (p + q)
            penalty += max(0.0, alpha - amin)
            amin = min(amin, alpha)
        soft_bound = theorem52_soft_prefix_bound(value + C1 * n * penalty, amin, rest_p, rest_q, w, C * n, C1 * n) / n
        assert soft_bound <= completions(captures, y, prefix, w, C, C1, True) + 1e-9
        # falling: L* <= best falling completion, for falling prefixes of positive-predicting rules
        if prefix and is_falling(rules) and all(w * p > q for p, q in rules):
            last_p, last_q = rules[-1]
            bound = theorem46_prefix_bound(value, last_p, last_p + last_q, rest_p, rest_q, w, C * n) / n
            assert bound <= completions(captures, y, prefix, w, C, C1, False) + 1e-9


def test_budget_gap_is_valid():
    rng = np.random.default_rng(99)
    captures = rng.random((9, 300)) < 0.3
    y = (rng.random(300) < 0.3).astype(int)
    problem = FRLProblem(captures, y, w=3.0, C=0.001)
    full = certified_search(problem)
    for max_nodes in (0, 1, 2, 5):
        result = certified_search(problem, max_nodes=max_nodes)
        assert result.certificate.lower_bound <= full.objective + 1e-12 <= result.objective + 2e-12


def test_bad_input():
    captures = np.array([[1, 0, 1, 0]], bool)
    with pytest.raises(ValueError, match="two classes"):
        FRLProblem(captures, [1, 1, 1, 1])
    with pytest.raises(ValueError, match="w must be > 0"):
        FRLProblem(captures, [0, 1, 1, 0], w=0)
    with pytest.raises(ValueError, match="C must be"):
        FRLProblem(captures, [0, 1, 1, 0], C=-1)
    with pytest.raises(ValueError, match="4 samples but there are 3 labels"):
        FRLProblem(captures, [0, 1, 1])
    with pytest.raises(ValueError, match="empty"):
        FRLProblem(np.zeros((0, 4), bool), [0, 1, 1, 0])


@pytest.mark.parametrize("share", [0.5, 0.8])
def test_a_search_out_of_memory_drains_its_queue_with_a_valid_bound(share):
    """Past its memory budget the search drains the queue it has, bounding the children it cannot queue
    by their smallest bound. With half the memory it needs, this soft list ends with an incumbent worse
    than the optimum: a bound that forgot the dropped prefixes would certify it."""
    from optrules.budget import Budget

    rng = np.random.default_rng(9)
    captures = rng.random((10, 300)) < 0.3
    y = (rng.random(300) < 0.3).astype(int)
    problem = FRLProblem(captures, y, w=3.0, C=0.0005, C1=0.05)
    unlimited = Budget()
    full = certified_search(problem, soft=True, use_map=False, budget=unlimited)
    assert full.certificate.is_optimal
    max_memory = int(share * unlimited.used)
    certificate = certified_search(problem, soft=True, use_map=False, max_memory=max_memory).certificate
    assert certificate.counters["prefixes_dropped"] > 0 and certificate.counters["memory_bytes"] <= max_memory
    assert certificate.status == "memory budget"
    assert certificate.lower_bound <= full.objective + 1e-12 <= certificate.objective + 1e-12
