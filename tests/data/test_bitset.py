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
# (16, 16, 16): group weights up to 65,535, sums past 2^21, which overflowed the 21-bit fields the counts
# were once packed in (a 3.3M-row table's search crashed on a negative objective)
@pytest.mark.parametrize("planes", [(1, 1, 1), (3, 2, 1), (1, 1, 0), (16, 16, 16), "packed"])
def test_child_counts_on_dense_and_sparse_words(live_fraction, planes):
    """The kernels' child counts (sweeping every word when many are live, following the live words
    otherwise; one fused pass for 0/1 weights; packed weights per group) equal a plain popcount of
    ``u & bits[a]`` per plane, for the antecedents of the chunk asked and not skipped, and leave the
    others alone."""
    from optrules._numba import count_children, live_word_list

    rng = np.random.default_rng(int(live_fraction * 100) + (99 if planes == "packed" else 7 * sum(planes)))
    n_words, m = 40, 9
    bits = rng.integers(0, 2**63, (m, n_words), dtype=np.int64).astype(np.uint64)
    u = rng.integers(0, 2**63, n_words, dtype=np.int64).astype(np.uint64)
    u[rng.random(n_words) >= live_fraction] = 0
    if planes == "packed":  # per group: a count of up to 3 samples, positives and minority among them
        counts = rng.integers(0, 4, 64 * n_words)
        positives = rng.integers(0, counts + 1)
        minority = np.minimum(positives, counts - positives)
        packed = counts + (positives << 21) + (minority << 42)
        count = positive = minority_planes = np.zeros((0, n_words), np.uint64)
    else:
        count, positive, minority_planes = (rng.integers(0, 2**63, (p, n_words), dtype=np.int64).astype(np.uint64)
                                            for p in planes)
        packed = np.zeros(0, np.int64)
    live = np.empty(n_words, np.int64)
    n_live = live_word_list(u, live)

    def expected(a, want_minority):
        v = u & bits[a]
        if planes == "packed":  # (the minority comes with the packed weights, asked for or not)
            members = np.flatnonzero(bitset.unpack(v[None, :], 64 * n_words)[0])
            return int(counts[members].sum()), int(positives[members].sum()), int(minority[members].sum())
        plane_sum = [sum(int(bitset.popcount(v & stack[b])) << b for b in range(stack.shape[0]))
                     for stack in (count, positive, minority_planes)]
        return plane_sum[0], plane_sum[1], plane_sum[2] if want_minority else 0

    skip = rng.random(m) < 0.3
    for want_minority in (True, False):
        for first, step in ((0, 1), (1, 3)):
            out = np.full((m, 3), -1, np.int64)
            count_children(u, bits, live, n_live, np.empty(n_words, np.uint64), count, positive, minority_planes,
                           packed, want_minority, skip, out, first, step)
            for a in range(m):
                if skip[a] or a < first or (a - first) % step:
                    assert (out[a] == -1).all()
                else:
                    got = tuple(int(x) for x in out[a])
                    assert got == expected(a, want_minority), (a, got)


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("block_bytes", [1, 100, 16 << 20])  # many blocks (of 64 samples at least), one block
def test_block_helpers_agree_with_their_dense_definitions(seed, block_bytes, monkeypatch):
    monkeypatch.setattr(bitset, "BLOCK_BYTES", block_bytes)
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(0, 400)), int(rng.integers(1, 40))
    matrix = rng.random((n, m)) < rng.uniform(0.05, 0.95)
    rows = np.sort(rng.choice(n, size=int(rng.integers(0, n + 1)), replace=False)) if n else np.zeros(0, np.int64)
    np.testing.assert_array_equal(bitset.pack_columns(matrix), bitset.pack(matrix.T))
    np.testing.assert_array_equal(bitset.pack_rows(np.asfortranarray(matrix)), bitset.pack(matrix))
    np.testing.assert_array_equal(bitset.transpose(bitset.pack(matrix)[rows], m), bitset.pack(matrix[rows].T))
    words = bitset.pack(matrix.T)
    keep = np.sort(rng.choice(n, size=int(rng.integers(0, n + 1)), replace=False)) if n else np.zeros(0, np.int64)
    np.testing.assert_array_equal(bitset.select_bits(words, n, keep), bitset.pack(matrix.T[:, keep]))
    weights = rng.random(n)
    np.testing.assert_allclose(bitset.weighted_sums(words, n, weights), matrix.T.astype(float) @ weights, rtol=1e-12)
    np.testing.assert_array_equal(bitset.complement(words, n), bitset.pack(~matrix.T))  # padding stays zero
    clause = rng.choice(m, size=int(rng.integers(0, min(m, 4) + 1)), replace=False)
    np.testing.assert_array_equal(bitset.unpack(bitset.intersection(words, clause, n), n),
                                  matrix[:, clause].all(axis=1))  # no feature: every sample


def test_pack_rows_packs_a_fortran_table_without_a_copy(monkeypatch):
    import tracemalloc

    monkeypatch.setattr(bitset, "BLOCK_BYTES", 1 << 20)  # (16 MB: blocks the size of a large table's)
    matrix = np.asfortranarray(np.random.default_rng(0).random((200_000, 64)) < 0.3)  # 12.8 MB; 1.6 MB of bits
    tracemalloc.start()
    try:
        packed = bitset.pack_rows(matrix)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    np.testing.assert_array_equal(packed, bitset.pack(np.ascontiguousarray(matrix)))
    assert peak < 0.4 * matrix.nbytes, peak  # a C-order copy would be 12.8 MB


@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (1, 1), (63, 65), (64, 64), (65, 129), (200, 7), (7, 200), (130, 300)])
def test_transpose_is_the_packed_transpose_and_its_own_inverse(shape):
    matrix = np.random.default_rng(shape[0] * 1000 + shape[1]).random(shape) < 0.4
    words = bitset.pack(matrix)
    transposed = bitset.transpose(words, shape[1])
    np.testing.assert_array_equal(transposed, bitset.pack(matrix.T))
    np.testing.assert_array_equal(bitset.transpose(transposed, shape[0]), words)
