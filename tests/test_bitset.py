import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optrules.data import bitset


@st.composite
def bool_matrices(draw):
    rows = draw(st.integers(1, 6))
    n = draw(st.integers(1, 300))
    seed = draw(st.integers(0, 2**32 - 1))
    density = draw(st.sampled_from([0.0, 0.1, 0.5, 0.9, 1.0]))
    rng = np.random.default_rng(seed)
    return rng.random((rows, n)) < density


@given(bool_matrices())
@settings(max_examples=80, deadline=None)
def test_pack_roundtrip_and_padding_is_zero(bits):
    packed = bitset.pack(bits)
    n = bits.shape[1]
    assert packed.dtype == np.uint64 and packed.shape == (bits.shape[0], bitset.n_words(n))
    np.testing.assert_array_equal(bitset.unpack(packed, n), bits)
    # unused high bits of the last word stay zero, so popcounts are exact
    full = bitset.unpack(packed, packed.shape[1] * 64)
    assert not full[:, n:].any()


@given(bool_matrices(), st.integers(0, 2**32 - 1))
@settings(max_examples=80, deadline=None)
def test_operations_agree_with_numpy_booleans(bits, seed):
    n = bits.shape[1]
    vector = np.random.default_rng(seed).random(n) < 0.5
    rows, v = bitset.pack(bits), bitset.pack(vector)
    np.testing.assert_array_equal(bitset.popcount(rows), bits.sum(axis=1))
    np.testing.assert_array_equal(bitset.unpack(bitset.and_(rows, v), n), bits & vector)
    np.testing.assert_array_equal(bitset.unpack(bitset.andnot(rows, v), n), bits & ~vector)
    np.testing.assert_array_equal(bitset.unpack(bitset.or_(rows, v), n), bits | vector)
    np.testing.assert_array_equal(bitset.count_and(rows, v), (bits & vector).sum(axis=1))
    np.testing.assert_array_equal(bitset.count_andnot(rows, v), (bits & ~vector).sum(axis=1))


def test_ones_has_exactly_n_bits():
    for n in (1, 63, 64, 65, 200):
        assert bitset.popcount(bitset.ones(n)) == n


def test_packing_a_transposed_matrix_in_blocks_is_exact(monkeypatch):
    rng = np.random.default_rng(3)
    samples_by_features = rng.random((530, 37)) < 0.4
    expected = bitset.pack(np.ascontiguousarray(samples_by_features.T))
    monkeypatch.setattr(bitset, "BLOCK_BYTES", 100)  # several blocks of features, the last one short
    assert np.array_equal(bitset.pack(samples_by_features.T), expected)
    assert np.array_equal(bitset.unpack(expected, 530), samples_by_features.T)


@pytest.mark.parametrize("live_fraction", [0.0, 0.05, 0.2, 0.3, 0.7, 1.0])
@pytest.mark.parametrize("planes", [(1, 1, 1), (3, 2, 1), (1, 1, 0)])
def test_plane_counts_on_dense_and_sparse_words(live_fraction, planes):
    """The kernel's child counts (sweeping every word when many are live, following the live words
    otherwise; one fused pass for 0/1 weights) equal a plain popcount of ``u & bits[a]`` per plane."""
    from optrules._numba import live_word_list, plane_counts, unpack_counts

    rng = np.random.default_rng(int(live_fraction * 100) + 7 * sum(planes))
    n_words = 40
    bits = rng.integers(0, 2**63, (5, n_words), dtype=np.int64).astype(np.uint64)
    u = rng.integers(0, 2**63, n_words, dtype=np.int64).astype(np.uint64)
    u[rng.random(n_words) >= live_fraction] = 0
    count, positive, minority = (rng.integers(0, 2**63, (p, n_words), dtype=np.int64).astype(np.uint64)
                                 for p in planes)
    live = np.empty(n_words, np.int64)
    n_live = live_word_list(u, live)

    def expected(v, stack):
        return sum(int(bitset.popcount(v & stack[b])) << b for b in range(stack.shape[0]))

    for a in range(bits.shape[0]):
        v = u & bits[a]
        for want_minority in (True, False):
            got = unpack_counts(plane_counts(u, bits, a, live, n_live, np.empty(n_words, np.uint64), count, positive,
                                             minority, want_minority))
            assert tuple(int(x) for x in got) == (expected(v, count), expected(v, positive),
                                                  expected(v, minority) if want_minority else 0)
