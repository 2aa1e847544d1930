"""Packed bitsets: one row of uint64 words per antecedent, one bit per sample.

Bit ``i`` of a row lives in word ``i // 64`` at position ``i % 64`` (little-endian bit order), and
the unused high bits of the last word are always zero, so popcounts never see padding.
All functions are vectorised over rows; a "vector" is a single row of shape ``(n_words,)``.
"""

from __future__ import annotations

import numpy as np

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


def pack_columns(matrix: np.ndarray, rows=None) -> np.ndarray:
    """The columns of a (samples x features) boolean matrix packed, one row of words a feature, over the
    samples ``rows`` (indices; None: every sample): ``pack(matrix[rows].T)`` without a copy of
    ``matrix[rows]`` (700,000 x 640 features: 448 MB for 56 MB of bits), a block of samples at a time."""
    n = len(matrix) if rows is None else len(rows)
    out = np.zeros((matrix.shape[1], n_words(n)), np.uint64)
    step = max(WORD_BITS, rows_per_block(matrix.shape[1]) // WORD_BITS * WORD_BITS)  # whole words a block
    for start in range(0, n, step):
        taken = slice(start, min(start + step, n))
        block = np.asarray(matrix[taken] if rows is None else matrix[rows[taken]], dtype=bool)
        words = pack(np.ascontiguousarray(block.T))
        out[:, start // WORD_BITS: start // WORD_BITS + words.shape[1]] = words
    return out


def select_bits(words: np.ndarray, n_bits: int, keep) -> np.ndarray:
    """Each row's bits at the positions ``keep``, packed: ``pack(unpack(words, n_bits)[:, keep])``, a block
    of rows at a time."""
    keep = np.asarray(keep)
    out = np.zeros((words.shape[0], n_words(len(keep))), np.uint64)
    step = rows_per_block(n_bits)
    for start in range(0, words.shape[0], step):
        out[start:start + step] = pack(unpack(words[start:start + step], n_bits)[:, keep])
    return out


def weighted_sums(words: np.ndarray, n_bits: int, weights: np.ndarray) -> np.ndarray:
    """Each row's sum of ``weights`` (one a bit) over its set bits: ``unpack(words, n_bits) @ weights``,
    a block of rows at a time (the product casts the bits to the weights' type: 8 bytes a bit)."""
    weights = np.asarray(weights)
    out = np.zeros(words.shape[0], np.result_type(weights.dtype, np.float64))
    step = rows_per_block(8 * n_bits)
    for start in range(0, words.shape[0], step):
        out[start:start + step] = unpack(words[start:start + step], n_bits) @ weights
    return out
