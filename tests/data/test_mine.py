import itertools
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optrules.data import bitset
from optrules.data.binarize import Binarizer
from optrules.data.datasets import load_compas
from optrules.data.mine import mine_antecedents


def naive_mine(features, groups, max_card, min_support, y=None, min_class_support=0.0):
    n, f = features.shape
    kept, seen = [], set()
    for card in range(1, max_card + 1):
        for combo in itertools.combinations(range(f), card):
            g = [groups[j] for j in combo if groups[j] >= 0]
            if len(g) != len(set(g)):
                continue
            capture = np.all(features[:, combo], axis=1)
            count = capture.sum()
            if count == 0 or count == n or count < min_support * n - 1e-9 or count > (1 - min_support) * n + 1e-9:
                continue
            if min_class_support > 0:
                pos, neg = (capture & (y == 1)).sum(), (capture & (y == 0)).sum()
                if pos < min_class_support * (y == 1).sum() - 1e-9 and neg < min_class_support * (y == 0).sum() - 1e-9:
                    continue
            key = capture.tobytes()
            if key not in seen:
                seen.add(key)
                kept.append((combo, capture))
    return kept


@st.composite
def problems(draw):
    n = draw(st.integers(1, 80))
    f = draw(st.integers(1, 7))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    features = rng.random((n, f)) < rng.uniform(0.1, 0.9)
    groups = rng.integers(-1, 3, size=f)
    return features, groups, draw(st.integers(1, 3)), draw(st.sampled_from([0.0, 0.05, 0.2, 0.5]))


@given(problems())
@settings(max_examples=150, deadline=None)
def test_mining_equals_naive_enumeration(problem):
    features, groups, max_card, min_support = problem
    names = [f"f{j}" for j in range(features.shape[1])]
    mined = mine_antecedents(features, names, groups, max_card=max_card, min_support=min_support)
    expected = naive_mine(features, groups, max_card, min_support)
    assert mined.items == [combo for combo, _ in expected]
    captures = mined.capture_matrix()
    for row, (_, capture) in zip(captures, expected):
        np.testing.assert_array_equal(row, capture)
    np.testing.assert_array_equal(mined.support, [c.sum() for _, c in expected])


@given(problems(), st.sampled_from([0.1, 0.3, 0.6]), st.integers(0, 2**32 - 1))
@settings(max_examples=100, deadline=None)
def test_class_support_mining_equals_naive_enumeration(problem, min_class_support, seed):
    features, groups, max_card, min_support = problem
    y = (np.random.default_rng(seed).random(features.shape[0]) < 0.4).astype(int)
    names = [f"f{j}" for j in range(features.shape[1])]
    mined = mine_antecedents(features, names, groups, max_card, min_support, y=y, min_class_support=min_class_support)
    expected = naive_mine(features, groups, max_card, min_support, y, min_class_support)
    assert mined.items == [combo for combo, _ in expected]


def test_duplicates_keep_the_shortest_first():
    a = np.array([1, 1, 0, 0], bool)
    b = np.array([1, 1, 1, 0], bool)
    mined = mine_antecedents(np.column_stack([b, a]), ["b", "a"], max_card=2)
    # a&b == a: the pair is dropped; 'a' survives as the shorter antecedent
    assert mined.names == ["b", "a"]


def test_condition_names_are_each_antecedents_conditions():
    rng = np.random.default_rng(4)
    features = rng.random((60, 7)) < 0.5
    mined = mine_antecedents(features, [f"f{j}" for j in range(7)], max_card=2)
    names = mined.condition_names
    eager = [mined.conditions(i) for i in range(len(mined))]
    assert len(names) == len(eager) > 7 and list(names) == eager
    assert names[-1] == eager[-1] and names[3:9] == eager[3:9] and names[::5] == eager[::5]
    assert all(len(names[i]) == 2 for i in range(7, len(names)))  # pairs after the single features
    with pytest.raises(IndexError):
        names[len(eager)]


def test_bad_arguments():
    x = np.ones((3, 2), bool)
    with pytest.raises(ValueError, match="max_card"):
        mine_antecedents(x, ["a", "b"], max_card=0)
    with pytest.raises(ValueError, match="min_support"):
        mine_antecedents(x, ["a", "b"], min_support=0.7)
    with pytest.raises(ValueError, match="empty"):
        mine_antecedents(np.ones((0, 2), bool), ["a", "b"])
    with pytest.raises(ValueError, match="feature names"):
        mine_antecedents(x, ["a"])


def test_compas_feature_set_a_mines_quickly():
    data = load_compas("A")
    start = time.perf_counter()
    binarizer = Binarizer().fit(data.X)
    mined = mine_antecedents(binarizer.transform(data.X), binarizer.feature_names_, binarizer.groups_, 2, 0.005)
    elapsed = time.perf_counter() - start
    assert len(binarizer.feature_names_) == 17
    # 17 singles + 116 cross-column pairs = 133 candidates; 13 fall below 0.5% support
    # (e.g. age=18-20 and priors=2-3: 34 < 34.5) and 5 repeat a shorter capture vector
    # (e.g. juvenile-felonies=0 and juvenile-crimes=0 == juvenile-crimes=0). The paper reports 122.
    assert len(mined) == 115
    assert all(" and " not in name or name.split(" and ")[0].split("=")[0] != name.split(" and ")[1].split("=")[0]
               for name in mined.names)
    support = bitset.popcount(mined.bits)
    assert support.min() >= 0.005 * len(data.X) and support.max() <= 0.995 * len(data.X)
    print(f"compas A: {len(mined)} antecedents in {elapsed:.3f} s")


def naive_capped_mine(features, groups, max_card, min_support, cap):
    """Reference for ``max_antecedents``: level by level, the valid conjunctions of support >= the
    smallest floor that keeps the running total within ``cap``; a raised floor ends the mining."""
    n, f = features.shape
    lowest = min_support * n - 1e-9
    kept = []
    for card in range(1, max_card + 1):
        room = cap - len(kept)
        if room <= 0:
            break
        level = []
        for combo in itertools.combinations(range(f), card):
            g = [groups[j] for j in combo if groups[j] >= 0]
            if len(g) != len(set(g)):
                continue
            capture = np.all(features[:, combo], axis=1)
            count = int(capture.sum())
            if 0 < count < n and lowest <= count <= (1 - min_support) * n + 1e-9:
                level.append((combo, capture, count))
        floor = next(t for t in range(n + 2) if sum(c >= t for *_, c in level) <= room)
        kept += [(combo, capture) for combo, capture, count in level if count >= floor]
        if floor > max(lowest, 0) and floor > np.ceil(lowest):
            break
    out, seen = [], set()
    for combo, capture in kept:
        if capture.tobytes() not in seen:
            seen.add(capture.tobytes())
            out.append(combo)
    return out


@given(problems(), st.integers(1, 12))
@settings(max_examples=150, deadline=None)
def test_capped_mining_keeps_the_most_frequent(problem, cap):
    features, groups, max_card, min_support = problem
    names = [f"f{j}" for j in range(features.shape[1])]
    mined = mine_antecedents(features, names, groups, max_card, min_support, max_antecedents=cap)
    assert mined.items == naive_capped_mine(features, groups, max_card, min_support, cap)
    assert len(mined) <= cap
    assert mined.report.n_antecedents == len(mined)


def test_cap_is_reported_and_memory_charged():
    from optrules.budget import Budget

    rng = np.random.default_rng(0)
    features = rng.random((500, 60)) < 0.5
    budget = Budget(max_memory=1 << 30)
    mined = mine_antecedents(features, [f"f{j}" for j in range(60)], max_card=2, min_support=0.01,
                             max_antecedents=300, budget=budget)
    assert len(mined) <= 300
    assert all((j,) in mined.items for j in range(60))  # every single feature fits; the floor rose on pairs
    assert "support floor raised" in str(mined.report)
    bits_and_items = mined.bits.nbytes + 48 * sum(len(items) for items in mined.items)
    assert budget.charges()["antecedents"] == bits_and_items
    with pytest.raises(MemoryError, match="memory budget"):
        mine_antecedents(features, [f"f{j}" for j in range(60)], max_card=2, budget=Budget(max_memory=10_000))


class _PeakBudget:
    """A budget that remembers the most it was charged at once."""

    def __new__(cls, max_memory):
        from optrules.budget import Budget

        class Recording(Budget):
            peak = 0

            def charge(self, name, nbytes):
                super().charge(name, nbytes)
                self.peak = max(self.peak, self.used)

        return Recording(max_memory=max_memory)


@pytest.mark.parametrize("unbounded", [False, True])
def test_mining_memory_stays_within_what_it_charges(unbounded):
    """The budget is a promise: what mining allocates at its peak (the mined rows side by side while
    they are gathered, duplicates removed) is what it charges, not a multiple of it."""
    import tracemalloc

    rng = np.random.default_rng(1)
    features = rng.random((4000, 200)) < rng.random(200)
    features[:, 150:] = features[:, :50]  # duplicate capture vectors to drop
    names = [f"f{j}" for j in range(200)]
    mask = np.zeros(200, bool)
    mask[[3, 77]] = unbounded
    mine_antecedents(features[:50, :20], names[:20], max_card=2, unbounded=mask[:20])  # compiled before tracing
    budget = _PeakBudget(1 << 30)
    features_copies = features.nbytes // 4  # its packed bits, and their reordered copy
    tracemalloc.start()
    try:
        mined = mine_antecedents(features, names, max_card=2, min_support=0.001, budget=budget, unbounded=mask)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(mined) > 10_000 and mined.bits.nbytes > 4 << 20
    assert peak <= budget.peak + features_copies + (1 << 20), (peak, budget.peak)


@pytest.mark.parametrize("unbounded", [False, True])
def test_mining_does_not_copy_the_table(unbounded):
    """The boolean table is packed as it is, 1 bit a cell: neither copied nor reordered at 1 byte a cell
    (a 1,000,000-row table of 588 features: a reordered copy took the fit's peak from 1.4 to 2.1 GB)."""
    import tracemalloc

    rng = np.random.default_rng(2)
    features = np.asfortranarray(rng.random((100_000, 100)) < 0.3)  # as the binarizer returns it
    names = [f"f{j}" for j in range(100)]
    mask = np.zeros(100, bool)
    mask[[5, 60]] = unbounded
    mine_antecedents(features[:50], names, max_card=1, unbounded=mask)  # compiled before tracing
    tracemalloc.start()
    try:
        mined = mine_antecedents(features, names, max_card=1, unbounded=mask)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(mined) == 100
    packed = features.nbytes // 8
    assert peak <= 4 * packed + (1 << 20) < features.nbytes, (peak, features.nbytes)


def test_mining_stops_on_the_budget():
    from optrules.budget import Budget

    features = np.random.default_rng(1).random((200, 30)) < 0.5
    budget = Budget()
    budget.interrupt()
    mined = mine_antecedents(features, [f"f{j}" for j in range(30)], max_card=2, budget=budget)
    assert mined.items == [(j,) for j in range(30)] and mined.report.stopped  # single features only


@pytest.mark.parametrize("seed", range(6))
def test_mining_packed_features_is_mining_the_table(seed):
    """The list families binarize straight into packed features (no boolean table): the same
    antecedents, bits and names, required features and class supports included."""
    import pandas as pd

    from optrules.data import bitset
    from optrules.data.binarize import Binarizer

    rng = np.random.default_rng(seed)
    n = int(rng.integers(50, 400))
    frame = pd.DataFrame({"a": rng.integers(0, 4, n), "b": rng.normal(size=n), "c": rng.choice(["x", "y", "z"], n),
                          "d": rng.integers(0, 2, n)})
    binarizer = Binarizer(negations=bool(seed % 2)).fit(frame)
    dense, packed = binarizer.transform(frame), binarizer.transform(frame, packed=True)
    np.testing.assert_array_equal(packed, bitset.pack(dense.T))
    y = rng.integers(0, 2, n)
    unbounded = np.zeros(dense.shape[1], bool)
    unbounded[int(rng.integers(0, dense.shape[1]))] = seed % 3 == 0
    options = dict(groups=binarizer.groups_, max_card=2, min_support=0.03, y=y,
                   min_class_support=0.05 * (seed % 2), unbounded=unbounded, max_antecedents=None if seed % 2 else 40)
    from_table = mine_antecedents(dense, binarizer.feature_names_, **options)
    from_bits = mine_antecedents(packed, binarizer.feature_names_, n_samples=n, **options)
    np.testing.assert_array_equal(from_bits.bits, from_table.bits)
    assert list(from_bits.condition_names) == list(from_table.condition_names)
    with pytest.raises(ValueError, match="words a feature"):
        mine_antecedents(packed[:, :-1] if packed.shape[1] > 1 else packed, binarizer.feature_names_,
                         n_samples=n + 64, **options)
