import numpy as np
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
