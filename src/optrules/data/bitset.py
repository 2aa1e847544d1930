"""Packed bitsets: one row of uint64 words per antecedent, one bit per sample.

Bit ``i`` of a row lives in word ``i // 64`` at position ``i % 64`` (little-endian bit order), and
the unused high bits of the last word are always zero, so popcounts never see padding.
All functions are vectorised over rows; a "vector" is a single row of shape ``(n_words,)``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

WORD_BITS = 64
BLOCK_BYTES = 16 << 20  # rows packed at a time from a non-contiguous matrix


def rows_per_block(bytes_per_row: int) -> int:
    """How many rows of ``bytes_per_row`` bytes a block of :data:`BLOCK_BYTES` holds (at least one)."""
    return max(1, BLOCK_BYTES // max(int(bytes_per_row), 1))


def n_words(n_bits: int) -> int:
    """Number of uint64 words needed for ``n_bits`` bits."""
    return (n_bits + WORD_BITS - 1) // WORD_BITS


def pack(bits: np.ndarray) -> np.ndarray:
    """Pack a boolean array of shape ``(..., n)`` into uint64 words of shape ``(..., n_words(n))``."""
    bits = np.asarray(bits, dtype=bool)
    if bits.ndim == 2 and not bits.flags.c_contiguous and bits.size > BLOCK_BYTES:
        # a transposed (samples x features) matrix: packing strided rows is ~4x slower than copying
        # them to a contiguous block first; blocks keep that copy small
        step = rows_per_block(bits.shape[1])
        return np.concatenate([pack(np.ascontiguousarray(bits[start:start + step]))
                               for start in range(0, bits.shape[0], step)])
    n = bits.shape[-1]
    padded_bytes = n_words(n) * 8
    as_bytes = np.packbits(bits, axis=-1, bitorder="little")
    pad = padded_bytes - as_bytes.shape[-1]
    if pad:
        as_bytes = np.concatenate(
            [as_bytes, np.zeros(as_bytes.shape[:-1] + (pad,), dtype=np.uint8)], axis=-1
        )
    return np.ascontiguousarray(as_bytes).view("<u8").astype(np.uint64, copy=False)


def unpack(words: np.ndarray, n_bits: int) -> np.ndarray:
    """Inverse of :func:`pack`: boolean array of shape ``(..., n_bits)``."""
    words = np.ascontiguousarray(words, dtype=np.uint64)
    as_bytes = words.astype("<u8", copy=False).view(np.uint8)
    return np.unpackbits(as_bytes, axis=-1, count=n_bits, bitorder="little").astype(bool)


def ones(n_bits: int) -> np.ndarray:
    """The vector with the first ``n_bits`` bits set (the 'all samples' set)."""
    return pack(np.ones(n_bits, dtype=bool))


def complement(words: np.ndarray, n_bits: int) -> np.ndarray:
    """Each row's bits not set, among the first ``n_bits`` (the padding stays zero)."""
    return np.bitwise_and(np.bitwise_not(words), ones(n_bits))


def intersection(words: np.ndarray, rows, n_bits: int) -> np.ndarray:
    """The bits set in every one of ``words[rows]`` (a clause's samples, from its features' rows); no row:
    all ``n_bits``."""
    rows = list(rows)
    return np.bitwise_and.reduce(words[rows], axis=0) if rows else ones(n_bits)


def popcount(words: np.ndarray) -> np.ndarray:
    """Number of set bits per row (a scalar for a single vector)."""
    return np.bitwise_count(words).sum(axis=-1, dtype=np.int64)


def and_(rows: np.ndarray, vector: np.ndarray) -> np.ndarray:
    """Row-wise ``rows & vector``."""
    return np.bitwise_and(rows, vector)


def andnot(rows: np.ndarray, vector: np.ndarray) -> np.ndarray:
    """Row-wise ``rows & ~vector`` (samples of each row not in ``vector``)."""
    return np.bitwise_and(rows, np.bitwise_not(vector))


def or_(rows: np.ndarray, vector: np.ndarray) -> np.ndarray:
    """Row-wise ``rows | vector``."""
    return np.bitwise_or(rows, vector)


def count_and(rows: np.ndarray, vector: np.ndarray) -> np.ndarray:
    """Popcount of ``rows & vector`` per row, without keeping the intermediate matrix longer than needed."""
    return popcount(np.bitwise_and(rows, vector))


def count_andnot(rows: np.ndarray, vector: np.ndarray) -> np.ndarray:
    """Popcount of ``rows & ~vector`` per row."""
    return popcount(andnot(rows, vector))


def pack_columns(matrix: np.ndarray) -> np.ndarray:
    """The columns of a (samples x features) boolean matrix packed, one row of words a feature:
    ``pack(matrix.T)`` a block of samples at a time, with no copy of the table (700,000 x 640 features:
    448 MB for 56 MB of bits)."""
    n = len(matrix)
    out = np.zeros((matrix.shape[1], n_words(n)), np.uint64)
    step = max(WORD_BITS, rows_per_block(matrix.shape[1]) // WORD_BITS * WORD_BITS)  # whole words a block
    for start in range(0, n, step):
        block = np.asarray(matrix[start:start + step], dtype=bool)
        words = pack(np.ascontiguousarray(block.T))
        out[:, start // WORD_BITS: start // WORD_BITS + words.shape[1]] = words
    return out


def transpose(words: np.ndarray, n_bits: int) -> np.ndarray:
    """The packed transpose of packed rows: ``pack(unpack(words, n_bits).T)``, 64 x 64 bits at a time
    (a table of samples packed by feature becomes one packed by sample, and back), without the boolean
    matrix between (700,000 samples x 748 features: 0.1 s, where unpacking the table took 0.5 s)."""
    words = np.ascontiguousarray(words, dtype=np.uint64)
    out = np.zeros((n_bits, n_words(words.shape[0])), np.uint64)
    _transpose_blocks(words, out)
    return out


@njit(cache=True)
def _transpose_blocks(words, out):
    block = np.empty(WORD_BITS, np.uint64)
    n_rows, n_cols = words.shape[0], out.shape[0]
    for row_block in range(out.shape[1]):
        first_row = row_block * WORD_BITS
        rows = min(WORD_BITS, n_rows - first_row)
        for word in range(words.shape[1]):
            block[:] = 0
            for k in range(rows):
                block[k] = words[first_row + k, word]
            # bit c of block[r] to bit r of block[c]: swap the off-diagonal halves of ever smaller squares
            # (32 x 32 down to 1 x 1), with bit 0 the lowest (the package's bit order)
            half, mask = 32, np.uint64(0x00000000FFFFFFFF)
            while half:
                shift = np.uint64(half)
                for k in range(WORD_BITS):
                    if k & half == 0:
                        swapped = ((block[k] >> shift) ^ block[k + half]) & mask
                        block[k] ^= swapped << shift
                        block[k + half] ^= swapped
                half >>= 1
                mask ^= mask << np.uint64(half)
            first_col = word * WORD_BITS
            for k in range(min(WORD_BITS, n_cols - first_col)):
                out[first_col + k, row_block] = block[k]


def pack_rows(matrix: np.ndarray) -> np.ndarray:
    """The rows of a (samples x features) boolean matrix packed, one row of words a sample, whatever its
    memory order: a binarized table comes column by column (Fortran order), whose columns pack fast and
    transpose as bits (packing its rows took 0.6 s on 700,000 x 748, this 0.2 s)."""
    matrix = np.asarray(matrix, dtype=bool)
    if matrix.flags.c_contiguous or matrix.ndim != 2:
        return pack(matrix)
    return transpose(pack_columns(matrix), matrix.shape[0])


def select_bits(words: np.ndarray, n_bits: int, keep) -> np.ndarray:
    """Each row's bits at the positions ``keep``, packed: ``pack(unpack(words, n_bits)[:, keep])``, as the
    rows of the transpose (0.23 s on 230,000 positives when unpacked a block at a time)."""
    return transpose(transpose(words, n_bits)[np.asarray(keep, dtype=np.int64)], words.shape[0])


def weighted_sums(words: np.ndarray, n_bits: int, weights: np.ndarray) -> np.ndarray:
    """Each row's sum of ``weights`` (one a bit) over its set bits: ``unpack(words, n_bits) @ weights``,
    a block of rows at a time (the product casts the bits to the weights' type: 8 bytes a bit)."""
    weights = np.asarray(weights)
    out = np.zeros(words.shape[0], np.result_type(weights.dtype, np.float64))
    step = rows_per_block(8 * n_bits)
    for start in range(0, words.shape[0], step):
        out[start:start + step] = unpack(words[start:start + step], n_bits) @ weights
    return out
