import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from optrules.data import bitset
from optrules.data.groups import _groups_of, group_samples, signature_groups


def naive_groups(captures):
    """Groups numbered by first occurrence, from the columns as tuples."""
    seen: dict[tuple, int] = {}
    group = np.array([seen.setdefault(tuple(column), len(seen)) for column in captures.T.tolist()])
    first = np.array([int(np.flatnonzero(group == g)[0]) for g in range(len(seen))])
    return first, group


@st.composite
def capture_matrices(draw):
    m = draw(st.integers(1, 140))  # past 64 antecedents: signatures hashed in several blocks
    n = draw(st.integers(1, 200))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    # few distinct columns, repeated: groups of many samples
    distinct = rng.random((m, draw(st.integers(1, 12)))) < draw(st.floats(0.05, 0.95))
    return distinct[:, rng.integers(0, distinct.shape[1], n)]


@given(capture_matrices())
@settings(max_examples=200, deadline=None)
def test_signature_groups_match_grouping_the_columns(captures):
    bits = bitset.pack(captures)
    first, group, group_bits = signature_groups(bits, captures.shape[1])
    expected_first, expected_group = naive_groups(captures)
    assert first.tolist() == expected_first.tolist()
    assert group.tolist() == expected_group.tolist()
    assert np.array_equal(bitset.unpack(group_bits, len(first)), captures[:, first])


@given(capture_matrices())
@settings(max_examples=100, deadline=None)
def test_equal_hashes_are_told_apart_by_their_bits(captures):
    # every sample with the same hash: only the bit comparison can separate the groups
    bits = bitset.pack(captures)
    first, group, group_bits = _groups_of(bits, np.zeros(captures.shape[1], np.uint64), 64, lambda: None)
    expected_first, expected_group = naive_groups(captures)
    assert first.tolist() == expected_first.tolist()
    assert group.tolist() == expected_group.tolist()
    assert np.array_equal(bitset.unpack(group_bits, len(first)), captures[:, first])


@given(capture_matrices())
@settings(max_examples=50, deadline=None)
def test_grouping_in_slices_groups_alike(captures):
    from optrules.data import groups

    bits = bitset.pack(captures)
    whole = signature_groups(bits, captures.shape[1])
    saved = groups.GROUPING_SLICE
    try:
        groups.GROUPING_SLICE = 1  # a slice of 64 antecedents, and one sample compared at a time
        sliced = signature_groups(bits, captures.shape[1], should_stop=lambda: False)
    finally:
        groups.GROUPING_SLICE = saved
    assert all(np.array_equal(a, b) for a, b in zip(whole, sliced))


def test_grouping_stops_when_asked():
    import pytest

    from optrules.data.groups import GroupingStopped

    captures = np.random.default_rng(0).random((130, 500)) < 0.5
    asked = []
    with pytest.raises(GroupingStopped):
        signature_groups(bitset.pack(captures), 500, should_stop=lambda: asked.append(1) or True)
    assert len(asked) == 1


def test_grouped_counts_add_up_to_the_samples():
    rng = np.random.default_rng(3)
    captures = rng.random((70, 500)) < 0.1
    captures[:, 250:] = captures[:, :250]  # every signature at least twice
    y = rng.integers(0, 2, 500)
    groups = group_samples(bitset.pack(captures), y, counting="packed")
    first, group, _ = signature_groups(bitset.pack(captures), 500)
    assert groups.n_groups == len(first) <= 250
    assert groups.sizes.sum() == 500 and groups.positives.sum() == y.sum()
    assert np.array_equal(groups.sizes, np.bincount(group))
    # the vector of antecedent a over groups holds the groups whose samples a captures
    captured_samples = bitset.unpack(groups.bits, groups.n_groups)[:, group]
    assert np.array_equal(captured_samples, captures)


def test_distinct_rows_with_every_hash_equal(monkeypatch):
    """Mining's duplicates by hash: with one hash for every row, only the bytes can tell rows apart."""
    import optrules.data.mine as mine

    rng = np.random.default_rng(5)
    rows = bitset.pack(rng.random((300, 40)) < 0.5)[rng.integers(0, 30, 300)]
    extra = np.zeros((300, 0), np.uint64)
    order = rng.permutation(300)
    expected = []
    seen = set()
    for position, row in enumerate(order):
        if rows[row].tobytes() not in seen:
            seen.add(rows[row].tobytes())
            expected.append(position)
    assert mine.first_of_distinct_rows(rows, extra, order).tolist() == expected
    monkeypatch.setattr(mine, "_row_hashes", lambda bits, extra: np.zeros(len(bits), np.uint64))
    assert mine.first_of_distinct_rows(rows, extra, order).tolist() == expected
