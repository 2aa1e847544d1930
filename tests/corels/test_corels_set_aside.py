"""A rule-list search whose memory budget is reached takes the queued prefixes of largest bound out of
the queue and frees their nodes (corels.kernel.set_aside, SearchState.compact): in the lower-bound order
their parents make them again in their turn, so nothing is lost and the search still proves the
optimum; in other orders their smallest bound joins the lower bound. Checked against brute force on
problems whose search outgrows a tiny state many times over."""

from functools import lru_cache
from itertools import product

import numpy as np
import pytest

from optrules.bnb import SearchState
from optrules.certificate import OPTIMAL
from optrules.corels import search as search_module
from optrules.corels.bruteforce import brute_force
from optrules.corels.problem import Problem
from optrules.corels.search import Ablation, search

MAX_LENGTH = 4  # 16 antecedents: ~47,000 lists, brute force in under a second
MEMORIES = (20_000, 25_000, 30_000)  # a few hundred prefixes: each search outgrows them many times


@pytest.fixture
def tiny_state(monkeypatch):
    """Arrays that start at 64 entries, and a setting aside accepted however little it frees, so that
    a budget of a few hundred prefixes is reached, and prefixes set aside, many times in one search."""
    monkeypatch.setattr(SearchState, "INITIAL_CAPACITY", 64)
    monkeypatch.setattr(search_module, "SET_ASIDE_MIN_FREED", 0.0)


@lru_cache(maxsize=None)
def _case(seed):
    """A problem whose search queues thousands of prefixes (support and equivalent-points bounds off,
    small lambda, noisy labels), and its optimum by brute force."""
    rng = np.random.default_rng(seed)
    captures = rng.random((16, 200)) < rng.uniform(0.2, 0.6)
    y = (rng.random(200) < 0.5).astype(int)
    regularization = float(rng.choice([0.001, 0.002]))
    ablation = Ablation(minimum_support=False, accurate_support=False, excessive_support=False,
                        equivalent_points=False, lookahead=bool(seed % 2))
    optimum = brute_force(captures, y, regularization, max_length=MAX_LENGTH).objective
    return Problem.from_captures(captures, y, regularization), ablation, optimum


def _check(certificate, optimum, max_memory):
    assert certificate.lower_bound <= optimum + 1e-12 <= certificate.objective + 1e-12
    if certificate.status == OPTIMAL:
        assert certificate.objective == pytest.approx(optimum, abs=1e-12)
    assert certificate.counters["memory_bytes"] <= max_memory


# (each map type searches 36 problems against brute force: one by default, the others in the slow suite)
@pytest.mark.parametrize("map_type", ["none", pytest.param("prefix", marks=pytest.mark.slow),
                                      pytest.param("captured", marks=pytest.mark.slow)])
def test_prefixes_set_aside_are_made_again_and_the_optimum_is_proven(tiny_state, map_type):
    """Lower-bound order: a search that took prefixes out and never had to drop any ends optimal with
    the brute-force optimum (a parent not queued again, or queued above a child it must make again,
    loses that child's lists: a wrong optimum, or a gap). Measured: 4-6 of the 36 searches a map."""
    proven = 0
    for seed, max_memory in product(range(12), MEMORIES):
        problem, ablation, optimum = _case(seed)
        certificate = search(problem, map_type=map_type, ablation=ablation, max_memory=max_memory,
                             max_length=MAX_LENGTH).certificate
        _check(certificate, optimum, max_memory)
        if certificate.counters["prefixes_set_aside"] and not certificate.counters["prefixes_dropped"]:
            assert certificate.status == OPTIMAL
            proven += 1
    assert proven >= 3


@pytest.mark.parametrize("policy", ["curiosity", pytest.param("objective", marks=pytest.mark.slow)])
def test_prefixes_set_aside_in_other_orders_bound_the_certificate(tiny_state, policy):
    """Other orders do not make prefixes again: those taken out are dropped with their smallest bound,
    and the certificate stays valid (a floor left out of the bound would claim wrong optima)."""
    for seed, max_memory in product(range(12), MEMORIES):
        problem, ablation, optimum = _case(seed)
        certificate = search(problem, policy=policy, ablation=ablation, max_memory=max_memory,
                             max_length=MAX_LENGTH).certificate
        _check(certificate, optimum, max_memory)
        assert certificate.counters["prefixes_set_aside"] == 0


@pytest.mark.parametrize("policy, map_type, min_freed", [
    ("lower_bound", "none", 0.0), pytest.param("lower_bound", "prefix", 0.0, marks=pytest.mark.slow),
    ("lower_bound", "captured", 0.0), pytest.param("curiosity", "prefix", 0.0, marks=pytest.mark.slow),
    # a setting aside that must free half the arrays: the lower-bound order falls back to dropping the
    # top of the whole queue with its floor
    ("lower_bound", "prefix", 0.5)])
def test_every_prefix_taken_out_is_owed_by_its_parent_or_the_floor(tiny_state, monkeypatch, policy, map_type,
                                                                   min_freed):
    """Each time prefixes are taken out of the queue: in the lower-bound order each one's parent (unless
    dead) is queued at a key no larger than the prefix's and above its own by more than lambda*N/2 (so
    that it is popped as a prefix queued again for deferred children, not expanded anew), and a prefix
    queued again for deferred children stays queued, at a key no larger; in other orders the floor is at
    most the bound of each prefix taken out. (A wrong optimum needs the lost prefix to lead to it,
    which the brute-force tests above rarely see: this checks every prefix taken out.)"""
    from optrules._numba import DROPPED_FLOOR, HEAP_SIZE
    from optrules.corels import kernel

    real = kernel.set_aside
    checked = []

    def checked_set_aside(heap_key, heap_node, node_parent, node_dead, node_mistakes, node_b0, node_depth,
                          lambda_n, keys_bound, regenerate, share, ints, floats, *scratch):
        def own(x):
            return kernel.theorem1_hierarchical_lower_bound(node_mistakes[x], node_depth[x], lambda_n) + node_b0[x]

        size = int(ints[HEAP_SIZE])
        before = {int(x): float(k) for k, x in zip(heap_key[:size], heap_node[:size]) if not node_dead[x]}
        taken = real(heap_key, heap_node, node_parent, node_dead, node_mistakes, node_b0, node_depth, lambda_n,
                     keys_bound, regenerate, share, ints, floats, *scratch)
        size = int(ints[HEAP_SIZE])
        after = {int(x): float(k) for k, x in zip(heap_key[:size], heap_node[:size])}
        assert len(after) == size  # one entry a prefix
        assert sum(bool(node_dead[x]) for x in before) == taken
        for x, key in before.items():
            if x in after:
                assert after[x] <= key
                continue
            assert node_dead[x]
            bound = max(own(x), key) if keys_bound else own(x)
            if regenerate:
                parent = int(node_parent[x])
                if not node_dead[parent]:
                    assert after[parent] <= key and after[parent] > own(parent) + 0.5 * lambda_n
            else:
                assert floats[DROPPED_FLOOR] <= bound
        checked.append((regenerate, taken))
        return taken

    checked_set_aside.compile, checked_set_aside.typeof_pyval = real.compile, real.typeof_pyval  # (for compile_for)
    monkeypatch.setattr(kernel, "set_aside", checked_set_aside)
    monkeypatch.setattr(search_module, "SET_ASIDE_MIN_FREED", min_freed)
    for seed, max_memory in product(range(12), MEMORIES):
        problem, ablation, optimum = _case(seed)
        certificate = search(problem, policy=policy, map_type=map_type, ablation=ablation, max_memory=max_memory,
                             max_length=MAX_LENGTH).certificate
        _check(certificate, optimum, max_memory)
    assert sum(taken > 0 for _, taken in checked) >= 3
    if min_freed:
        assert sum(taken > 0 and not regenerate for regenerate, taken in checked) >= 3


def test_weighted_and_multiclass_searches_set_prefixes_aside_exactly(tiny_state):
    """Real sample weights (float node counts) and three classes (per-class sums) set prefixes aside
    alike: the brute-force optimum, proven whenever nothing was dropped."""
    proven = 0
    for seed in range(8):
        rng = np.random.default_rng(100 + seed)
        n_classes = 2 + seed % 2
        captures = rng.random((14, 150)) < rng.uniform(0.2, 0.6)
        y = rng.integers(0, n_classes, 150)
        weights = rng.uniform(0.5, 2.0, 150) if seed % 4 else None
        regularization = float(rng.choice([0.001, 0.002]))
        ablation = Ablation(minimum_support=False, accurate_support=False, excessive_support=False,
                            equivalent_points=bool(seed % 2), lookahead=bool(seed % 2))
        problem = Problem.from_captures(captures, y, regularization, sample_weight=weights, n_classes=n_classes)
        optimum = brute_force(captures, y, regularization, max_length=MAX_LENGTH, sample_weight=weights,
                              n_classes=n_classes).objective
        for map_type, max_memory in product(["none", "prefix"], MEMORIES[::2]):
            certificate = search(problem, map_type=map_type, ablation=ablation, max_memory=max_memory,
                                 max_length=MAX_LENGTH).certificate
            assert certificate.lower_bound <= optimum + 1e-9 and optimum <= certificate.objective + 1e-9
            if certificate.status == OPTIMAL:
                assert certificate.objective == pytest.approx(optimum, abs=1e-9)
            if certificate.counters["prefixes_set_aside"] and not certificate.counters["prefixes_dropped"]:
                assert certificate.status == OPTIMAL
                proven += 1
    assert proven >= 5


def test_with_requirements_prefixes_set_aside_bound_the_certificate(tiny_state):
    """Requirements key the queue on what is still owed, not on bounds: prefixes taken out are dropped
    with their bound, and the certificate of the lists holding a required antecedent stays valid."""
    for seed in range(6):
        problem, ablation, _ = _case(seed)
        required = [[seed], [seed + 5, seed + 6]]
        optimum = brute_force(problem.captures(), problem.y, problem.regularization, max_length=MAX_LENGTH,
                              required=required).objective
        for max_memory in MEMORIES:
            certificate = search(problem, ablation=ablation, max_memory=max_memory, max_length=MAX_LENGTH,
                                 required=required, map_type="prefix").certificate
            _check(certificate, optimum, max_memory)
            assert certificate.counters["prefixes_set_aside"] == 0


def test_compaction_keeps_every_queued_prefix_and_the_queue_order():
    """SearchState.compact on a hand-made tree: the queued prefixes (and their ancestors) survive with
    the same antecedents, renumbered in order, the queue pops in the same order, the map holds exactly
    the kept live nodes; dead nodes and (keep_closed=False) prefixes done with are freed."""
    from optrules._numba import HEAP_SIZE, MAP_COUNT, N_NODES, heap_pop, heap_push, prefix_of

    state = SearchState(5, {"node_mistakes": np.int32, "node_b0": np.int32}, capacity=64)
    #       0 (root)
    #   1 (a0)      2 (a1, dead)     3 (a2, closed)
    #  4 (a1) 5 (a3)   6 (a0)          7 (a4, closed)
    parents = [-1, 0, 0, 0, 1, 1, 2, 3]
    lasts = [0, 0, 1, 2, 1, 3, 0, 4]
    for x, (p, a) in enumerate(zip(parents, lasts)):
        state.node_parent[x], state.node_last[x] = p, a
        state.node_depth[x] = 0 if p < 0 else state.node_depth[p] + 1
        state.node_hash[x] = np.uint64(1000 + 7 * x)
        state.node_mistakes[x] = 10 * x
    state.node_dead[2] = True
    state.ints[N_NODES] = 8
    queued = {4: 3.0, 5: 1.0, 6: 2.0}  # node -> key; 6 descends from the dead node 2
    for size, (x, key) in enumerate(queued.items()):
        heap_push(state.heap_key, state.heap_node, size, key, x)
    state.ints[HEAP_SIZE] = len(queued)

    def prefix(x):
        out = np.zeros(6, np.int64)
        return tuple(out[: prefix_of(x, state.node_parent, state.node_last, state.node_depth, out)])

    def pops():
        keys, nodes = state.heap_key.copy(), state.heap_node.copy()
        order = []
        for size in range(int(state.ints[HEAP_SIZE]), 0, -1):
            key = keys[0]
            order.append((key, prefix(heap_pop(keys, nodes, size))))
        return order

    before = pops()
    assert state.compact(map_in_use=True) == 0  # node 2 is dead but the parent of queued 6
    assert pops() == before
    assert state.compact(map_in_use=True, keep_closed=False) == 2  # 3 and 7: done with
    assert int(state.ints[N_NODES]) == 6 and pops() == before
    assert [prefix(x) for x in range(6)] == [(), (0,), (1,), (0, 1), (0, 3), (1, 0)]
    assert list(state.node_mistakes[:6]) == [0, 10, 20, 40, 50, 60]
    in_map = sorted(int(x) for x in state.map_slots if x >= 0)
    assert in_map == [1, 3, 4, 5] and int(state.ints[MAP_COUNT]) == 4  # live, not the root or dead 2
    for x in in_map:  # each where a probe from its hash finds it
        mask = state.map_slots.shape[0] - 1
        slot = int(state.node_hash[x]) & mask
        while state.map_slots[slot] != x:
            assert state.map_slots[slot] >= 0
            slot = (slot + 1) & mask


def test_no_setting_aside_begins_without_the_time_to_finish_it(tiny_state, monkeypatch):
    """A setting aside of a large state takes seconds: with less time left than it would take, the
    search drops children instead (and keeps its time budget); without a time limit it sets aside."""
    problem, ablation, optimum = _case(0)
    options = dict(ablation=ablation, max_memory=MEMORIES[0], max_length=MAX_LENGTH, map_type="none")
    unlimited = search(problem, **options).certificate
    assert unlimited.counters["prefixes_set_aside"] > 0
    monkeypatch.setattr(search_module, "SET_ASIDE_SECONDS_PER_ENTRY", 1e6)
    timed = search(problem, time_limit=60, **options).certificate
    assert timed.counters["prefixes_set_aside"] == 0 and timed.counters["prefixes_dropped"] > 0
    _check(timed, optimum, MEMORIES[0])
    assert timed.counters["total_time"] < 30


def test_a_queue_drained_early_is_searched_again_from_its_better_list(tiny_state):
    """A search whose queue drains for want of memory before its time is up, with a better list than it
    started from, searches again from that list (pruning from the first expansion): the certificate
    stays exact against brute force, the trace runs on in time with its bound below its list."""
    searched_again = 0
    for seed, max_memory in product(range(12), MEMORIES):
        problem, ablation, optimum = _case(seed)
        certificate = search(problem, ablation=ablation, max_memory=max_memory, max_length=MAX_LENGTH,
                             map_type="none", time_limit=60).certificate
        _check(certificate, optimum, max_memory)
        if certificate.counters.get("searches_again"):
            searched_again += 1
            trace = certificate.trace
            assert list(trace.time) == sorted(trace.time)
            assert all(lower <= best + 1e-12 for lower, best in zip(trace.lower_bound, trace.objective))
            assert trace.objective[-1] == pytest.approx(certificate.objective)
            assert "searched again" in str(certificate)
    assert searched_again >= 5
    # a node budget or no better list: never again (a search bounded by nodes would not stop)
    problem, ablation, _ = _case(0)
    bounded = search(problem, ablation=ablation, max_memory=MEMORIES[0], max_length=MAX_LENGTH, map_type="none",
                     max_nodes=50).certificate
    assert not bounded.counters.get("searches_again")


def test_two_searches_make_one_certificate():
    """The bound is the larger of the two (each bounds the same optimum), optimal once it reaches the
    second list; counters add up."""
    from optrules.certificate import MEMORY_BUDGET, Certificate, Trace
    from optrules.corels.search import SearchResult, _searched_again

    def result(objective, lower_bound, status=MEMORY_BUDGET, expanded=10):
        trace = Trace()
        trace.append(1.0, objective, lower_bound, [1], float("nan"))
        counters = {"total_time": 1.0, "time_to_optimum": 0.5, "nodes_expanded": expanded, "max_queue_size": expanded}
        return SearchResult((0,), objective, Certificate(status, objective, lower_bound, counters, trace), 3)

    both = _searched_again(result(0.32, 0.30), result(0.31, 0.25, expanded=7)).certificate
    assert (both.status, both.objective, both.lower_bound) == (MEMORY_BUDGET, 0.31, 0.30)
    assert both.counters["nodes_expanded"] == 17 and both.counters["max_queue_size"] == 10
    assert both.counters["time_to_optimum"] == 1.5 and both.counters["searches_again"] == 1
    assert both.trace.time == [1.0, 2.0] and both.trace.lower_bound == [0.30, 0.30]
    proven = _searched_again(result(0.32, 0.31), result(0.31, 0.2)).certificate
    assert proven.status == OPTIMAL and proven.lower_bound == 0.31
