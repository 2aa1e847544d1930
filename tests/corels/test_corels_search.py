import itertools

import numpy as np
import pytest

from optrules.certificate import NODE_BUDGET, OPTIMAL
from optrules.corels.bruteforce import brute_force
from optrules.corels.prefix import prefix_mistakes
from optrules.corels.problem import Problem, equivalent_points_minority
from optrules.corels.search import Ablation, search
from optrules.data import bitset

POLICIES = ["lower_bound", "objective", "curiosity", "bfs", "dfs"]
MAPS = ["prefix", "captured", "none"]
ABLATIONS = [
    Ablation(),
    Ablation(minimum_support=False, accurate_support=False, excessive_support=False),
    Ablation(lookahead=False),
    Ablation(equivalent_points=False),
    Ablation(False, False, False, False, False),
    Ablation(leaf_resolution=True),
    Ablation(lookahead=False, equivalent_points=False, leaf_resolution=True),
    Ablation(deferred_children=True),
    Ablation(lookahead=False, equivalent_points=False, deferred_children=True),
    Ablation(leaf_resolution=True, deferred_children=True),
]


def random_instance(rng, n_max=40, m_max=6):
    n = int(rng.integers(4, n_max + 1))
    m = int(rng.integers(1, m_max + 1))
    # few distinct base patterns so that equivalent points, duplicates and ties all occur
    captures = rng.random((m, n)) < rng.uniform(0.1, 0.7, size=(m, 1))
    if rng.random() < 0.3:
        half = n // 2
        captures[:, n - half:] = captures[:, :half]
    y = (rng.random(n) < rng.uniform(0.2, 0.8)).astype(int)
    if y.min() == y.max():
        y[0] = 1 - y[0]
    lam = float(rng.choice([0.0, 0.01, 0.025, 0.05, 0.1, 0.2]))
    return captures, y, lam


def planted_instance(rng, n_max=60, m=7):
    """Labels from a random rule list of 3-4 rules plus noise, so that optima are long and permutations
    of their prefixes differ: this exercises the symmetry map and the bounds deep in the tree."""
    n = int(rng.integers(20, n_max + 1))
    captures = rng.random((m, n)) < rng.uniform(0.15, 0.5, size=(m, 1))
    planted = rng.permutation(m)[: int(rng.integers(3, 5))]
    y = np.full(n, int(rng.integers(2)))
    undecided = np.ones(n, bool)
    for a in planted:
        label = int(rng.integers(2))
        y[captures[a] & undecided] = label
        undecided &= ~captures[a]
    y = np.where(rng.random(n) < 0.1, 1 - y, y)
    if y.min() == y.max():
        y[0] = 1 - y[0]
    return captures, y, float(rng.choice([0.0, 0.002, 0.01, 0.02]))


def check_result(result, captures, y, lam, expected):
    n = len(y)
    # the reported list is what it claims to be, recomputed from scratch
    assert result.mistakes == prefix_mistakes(captures, y, result.solution)
    assert result.objective == pytest.approx(result.mistakes / n + lam * len(result.solution), abs=1e-12)
    assert result.objective == pytest.approx(expected.objective, abs=1e-12)
    assert result.certificate.status == OPTIMAL
    assert result.certificate.lower_bound == pytest.approx(result.objective, abs=1e-12)


@pytest.mark.parametrize("seed", range(40))
def test_every_policy_and_map_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    captures, y, lam = random_instance(rng)
    expected = brute_force(captures, y, lam)
    problem = Problem.from_captures(captures, y, lam)
    for policy, map_type in itertools.product(POLICIES, MAPS):
        result = search(problem, policy=policy, map_type=map_type, warm_start=bool(rng.random() < 0.5))
        check_result(result, captures, y, lam, expected)


@pytest.mark.parametrize("seed", range(40))
def test_every_ablation_and_counting_matches_brute_force(seed):
    rng = np.random.default_rng(1000 + seed)
    captures, y, lam = random_instance(rng)
    expected = brute_force(captures, y, lam)
    problem = Problem.from_captures(captures, y, lam)
    for ablation, counting in itertools.product(ABLATIONS, ["packed", "planes", "samples"]):
        map_type = MAPS[int(rng.integers(len(MAPS)))]
        result = search(problem, ablation=ablation, counting=counting, map_type=map_type)
        check_result(result, captures, y, lam, expected)


@pytest.mark.parametrize("seed", range(12))
def test_long_optima_match_brute_force(seed):
    rng = np.random.default_rng(3000 + seed)
    captures, y, lam = planted_instance(rng)
    expected = brute_force(captures, y, lam)
    problem = Problem.from_captures(captures, y, lam)
    for policy, map_type in itertools.product(POLICIES, MAPS):
        result = search(problem, policy=policy, map_type=map_type, warm_start=False)
        check_result(result, captures, y, lam, expected)


@pytest.fixture
def batches_of_one(monkeypatch):
    """Batches of one prefix, whatever the memory: a search with a small memory budget pops smaller
    batches (theirs take a share of it), and comparing it with one without a budget compares batches
    then, not what memory switches on."""
    from optrules.corels import kernel

    monkeypatch.setattr(kernel, "MAX_BATCH", 1)


@pytest.mark.parametrize("seed", range(12))
def test_leaves_resolved_at_once_keep_long_optima(seed, batches_of_one):
    """Leaves finished instead of queued (always, or once the memory budget is half used), under every
    policy and map, on problems whose optima are long enough to have leaves."""
    rng = np.random.default_rng(3000 + seed)
    captures, y, lam = planted_instance(rng)
    expected = brute_force(captures, y, lam)
    problem = Problem.from_captures(captures, y, lam)
    for policy, map_type in itertools.product(POLICIES, MAPS):
        result = search(problem, policy=policy, map_type=map_type, warm_start=False,
                        ablation=Ablation(leaf_resolution=True))
        check_result(result, captures, y, lam, expected)
    untight = search(problem, warm_start=False)
    # once tight, children are deferred too
    always = search(problem, warm_start=False, ablation=Ablation(leaf_resolution=True, deferred_children=True))
    tight = search(problem, warm_start=False, max_memory=20_000)  # the state takes more than half of it
    check_result(tight, captures, y, lam, expected)
    assert untight.certificate.counters["leaves_resolved"] == 0
    assert tight.certificate.counters["leaves_resolved"] == always.certificate.counters["leaves_resolved"]


@pytest.mark.parametrize("seed", range(12))
def test_deferred_children_keep_long_optima(seed, batches_of_one):
    """Children queued in steps of their bound, the parent queued again for the rest (always, or once the
    memory budget is half used), under every map and with leaves finished or not: the same optimum,
    certified."""
    rng = np.random.default_rng(3000 + seed)
    captures, y, lam = planted_instance(rng)
    lam = max(lam, 0.002)  # deferring needs lambda > 0
    expected = brute_force(captures, y, lam)
    problem = Problem.from_captures(captures, y, lam)
    for map_type, leaves in itertools.product(MAPS, [False, True]):
        deferred = search(problem, map_type=map_type, warm_start=False,
                          ablation=Ablation(leaf_resolution=leaves, deferred_children=True))
        check_result(deferred, captures, y, lam, expected)
    counted = ("nodes_expanded", "reexpansions", "queue_insertions", "max_queue_size")
    untight = search(problem, warm_start=False, ablation=Ablation(leaf_resolution=False))
    always = search(problem, warm_start=False, ablation=Ablation(leaf_resolution=False, deferred_children=True))
    tight = search(problem, warm_start=False, max_memory=20_000, ablation=Ablation(leaf_resolution=False))
    check_result(tight, captures, y, lam, expected)
    assert untight.certificate.counters["reexpansions"] == 0
    assert [tight.certificate.counters[k] for k in counted] == [always.certificate.counters[k] for k in counted]


@pytest.mark.parametrize("seed", range(12))
def test_deferred_children_bound_a_stopped_search(seed):
    """Stopped after any number of expansions, a search that defers children bounds what it has not
    evaluated by the queue's keys (a prefix queued again carries its deferred children's smallest key):
    the lower bound never passes the optimum, and rises to it."""
    rng = np.random.default_rng(3000 + seed)
    captures, y, lam = planted_instance(rng)
    lam = max(lam, 0.002)
    expected = brute_force(captures, y, lam)
    problem = Problem.from_captures(captures, y, lam)
    full = search(problem, warm_start=False, ablation=Ablation(deferred_children=True))
    bounds = []
    for max_nodes in range(full.certificate.counters["nodes_expanded"] + 1):
        result = search(problem, max_nodes=max_nodes, warm_start=False, ablation=Ablation(deferred_children=True))
        bounds.append(result.certificate.lower_bound)
        assert result.certificate.lower_bound <= expected.objective + 1e-12
    assert bounds[-1] == pytest.approx(expected.objective, abs=1e-12)


def test_deferred_children_shrink_the_queue():
    """On a planted problem with 12 antecedents and 300 samples at lambda 0.002 (measured: 42 -> 24
    queued at the peak, 25 prefixes expanded again), deferring trades re-expansions for room."""
    captures, y, _ = planted_instance(np.random.default_rng(7), n_max=300, m=12)
    problem = Problem.from_captures(captures, y, 0.002)
    plain = search(problem, warm_start=False, ablation=Ablation(leaf_resolution=False, deferred_children=False))
    deferred = search(problem, warm_start=False, ablation=Ablation(leaf_resolution=False, deferred_children=True))
    check_result(deferred, captures, y, 0.002, plain)  # (12 antecedents: too many for brute force)
    assert deferred.certificate.counters["reexpansions"] > 0
    assert deferred.certificate.counters["max_queue_size"] < plain.certificate.counters["max_queue_size"]


def test_auto_map_keys_on_captured_samples_only_where_it_pays():
    """``auto`` (the default) uses Thm 15's captured-set map when the vectors over groups of samples take
    at most CAPTURED_MAP_MAX_WORDS words and nothing is required, else Cor 16's antecedent-set map."""
    from optrules.corels.search import CAPTURED_MAP_MAX_WORDS

    rng = np.random.default_rng(5)
    few = Problem.from_captures(rng.random((6, 300)) < 0.4, rng.random(300) < 0.5, 0.01)
    assert search(few, max_nodes=1).certificate.counters["map_type"] == "captured"
    assert search(few, max_nodes=1, required=[[0]]).certificate.counters["map_type"] == "prefix"
    n = 64 * CAPTURED_MAP_MAX_WORDS + 2000  # distinct samples (20 random antecedents): more words than that
    many = Problem.from_captures(rng.random((20, n)) < 0.5, rng.random(n) < 0.5, 0.01)
    assert len(many.signatures()[0]) > 64 * CAPTURED_MAP_MAX_WORDS
    assert search(many, max_nodes=1).certificate.counters["map_type"] == "prefix"


@pytest.mark.parametrize("seed", range(15))
def test_budgeted_search_reports_a_valid_gap(seed):
    rng = np.random.default_rng(2000 + seed)
    captures, y, lam = random_instance(rng, n_max=60, m_max=7)
    lam = max(lam, 0.005)
    expected = brute_force(captures, y, lam)
    problem = Problem.from_captures(captures, y, lam)
    for max_nodes in (0, 1, 3, 10):
        result = search(problem, max_nodes=max_nodes, warm_start=False, policy=POLICIES[seed % len(POLICIES)],
                        ablation=Ablation(leaf_resolution=seed % 2 == 0, deferred_children=seed % 3 != 1))
        cert = result.certificate
        assert cert.lower_bound <= expected.objective + 1e-12 <= result.objective + 2e-12
        assert cert.gap == pytest.approx(result.objective - cert.lower_bound)
        if cert.status == NODE_BUDGET:
            assert cert.counters["nodes_expanded"] == max_nodes
        assert result.mistakes == prefix_mistakes(captures, y, result.solution)


def test_minority_vector_from_data():
    captures = np.array([[1, 1, 1, 0, 0, 0], [0, 0, 0, 0, 1, 1]], bool)
    y = np.array([1, 1, 0, 0, 1, 0])
    # groups: {0,1,2} (2 pos, 1 neg) -> sample 2; {3} -> none; {4,5} tie -> one label's members
    minor = equivalent_points_minority(bitset.pack(captures), y)
    assert minor[:4].tolist() == [False, False, True, False]
    assert minor[4:].sum() == 1


def test_bad_inputs():
    captures = np.array([[1, 0, 1, 0]], bool)
    with pytest.raises(ValueError, match=r"lambda\) must lie in \[0, 1\)"):
        Problem.from_captures(captures, [0, 1, 1, 0], 1.0)
    with pytest.raises(ValueError, match="lambda"):
        Problem.from_captures(captures, [0, 1, 1, 0], -0.1)
    with pytest.raises(ValueError, match="two classes"):
        Problem.from_captures(captures, [1, 1, 1, 1], 0.01)
    with pytest.raises(ValueError, match="empty"):
        Problem.from_captures(np.zeros((0, 4), bool), [0, 1, 1, 0], 0.01)
    with pytest.raises(ValueError, match="4 samples but there are 3 labels"):
        Problem.from_captures(captures, [0, 1, 1], 0.01)
    with pytest.warns(RuntimeWarning, match="close to 0"):
        Problem.from_captures(captures, [0, 1, 1, 0], 0.0)
    problem = Problem.from_captures(captures, [0, 1, 1, 0], 0.01)
    with pytest.raises(ValueError, match="policy"):
        search(problem, policy="random")
    with pytest.raises(ValueError, match="map_type"):
        search(problem, map_type="trie")
