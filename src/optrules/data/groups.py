"""Samples grouped by identical antecedent signatures, and how to count them fast.

No rule list (nor rule set) can tell apart samples that every antecedent treats alike, so a search may
count groups instead of samples: a group is one bit, with weights (samples, positives, minority
members). Three ways to count the weights of the groups captured by a bit vector ``v``:

* ``packed``: the three weights of a group packed into one int64 (21 bits each), summed over the set
  bits of ``v``: cost ~ number of captured groups;
* ``planes``: weights stored as bit planes, ``sum_b 2^b popcount(v & plane_b)``: cost ~ words x planes;
* ``samples``: no merging, every sample its own group of weight 1, or of its count (planes);
* ``classes``: real-valued weights per class and group (sample weights, or more than two classes),
  summed over the set bits of ``v``: cost ~ captured groups x classes.

On ProPublica (6,489 samples, 155 antecedents) there are 194 groups and ``packed`` wins; on bank
marketing (45,211 samples, 222 antecedents) there are 10,449 and plain ``samples`` wins.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from .._numba import FNV_OFFSET, drop_stale_cache, fnv_step, trailing_zeros
from . import bitset
from .distinct import representatives

drop_stale_cache(__file__, ["../_numba"])

PACK_SHIFT = 21
PACK_LIMIT = 1 << PACK_SHIFT
COUNTING_MODES = ("auto", "packed", "planes", "samples")


@dataclass
class GroupedSamples:
    bits: np.ndarray  # (M, Wg) capture vectors over groups
    count_planes: np.ndarray  # (P, Wg)
    positive_planes: np.ndarray
    minority_planes: np.ndarray
    all_ones: np.ndarray  # (Wg,)
    sizes: np.ndarray  # (G,) samples per group
    positives: np.ndarray
    minority: np.ndarray
    packed_weights: np.ndarray  # (64 * Wg,) packed weights, or empty: count with the planes
    class_weights: np.ndarray | None = None  # (64 * Wg, C) weight per group and class (``classes`` mode)
    minority_weights: np.ndarray | None = None  # (64 * Wg,) weight of each group's minority members

    def counting(self, with_classes: bool = False):
        """The arrays the kernels count with (:class:`optrules._numba.Counting`); the per-class weights
        only ``with_classes`` (else empty, and the kernels count with the planes or packed weights)."""
        from .._numba import Counting

        classes = with_classes and self.class_weights is not None
        return Counting(
            self.bits, self.count_planes, self.positive_planes, self.minority_planes, self.packed_weights,
            self.all_ones, self.class_weights if classes else np.zeros((0, 1)),
            self.minority_weights if classes else np.zeros(0),
        )

    @property
    def n_groups(self) -> int:
        return int(self.sizes.shape[0])

    @property
    def nbytes(self) -> int:
        arrays = [self.bits, self.count_planes, self.positive_planes, self.minority_planes, self.all_ones, self.sizes,
                  self.positives, self.minority, self.packed_weights, self.class_weights, self.minority_weights]
        return sum(a.nbytes for a in arrays if a is not None)


def weight_planes(weights: np.ndarray) -> np.ndarray:
    """Bit planes of non-negative integer weights: plane b holds bit b of every weight."""
    weights = np.asarray(weights, dtype=np.int64)
    n_planes = max(1, int(weights.max(initial=0)).bit_length())
    return np.vstack([bitset.pack(((weights >> b) & 1).astype(bool)) for b in range(n_planes)])


def pack_weights(sizes, positives, minority, n_words: int) -> np.ndarray:
    if int(np.sum(sizes)) >= PACK_LIMIT:
        raise ValueError(f"packed counting needs fewer than {PACK_LIMIT} samples")
    packed = np.zeros(n_words * 64, np.int64)
    packed[: len(sizes)] = sizes + (positives << PACK_SHIFT) + (minority << (2 * PACK_SHIFT))
    return packed


#: what :func:`grouping_bytes` pays for, in a budget's words
GROUPING = "grouping the samples (their hashes, groups, and the vectors over groups)"


def grouping_bytes(bits, n_samples: int) -> int:
    """The most :func:`group_samples` allocates for packed capture vectors ``bits``: vectors over
    groups (at most the size of ``bits``) and ~6 arrays of one 8-byte entry a sample."""
    return int(bits.nbytes) + 48 * int(n_samples)


#: bits of capture vectors (antecedents x samples) grouped between two looks at the budget (~0.1 s)
GROUPING_SLICE = 1 << 27


class GroupingStopped(Exception):
    """The budget ended (or a stop was asked) while grouping: no groups, so no search over them."""


def signature_groups(bits, n_samples: int, should_stop=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Group the samples by their column (signature) of the packed ``(antecedents, words)`` capture
    vectors: ``(first, group, group_bits)``, the first sample of each group (increasing), each sample's
    group, and the vectors over the groups (bit g of row a: antecedent a captures group g).

    Samples are hashed over their antecedent bits, 64 antecedents at a time; samples of one hash form
    a group, which one pass over the vectors checks (two signatures with one hash are compared bit by
    bit then). Memory ~48 bytes a sample, where unpacking the vectors would take antecedents x samples
    bytes. ``should_stop`` (a fit's budget) is asked after each slice of about :data:`GROUPING_SLICE`
    bits (a tall table's grouping took seconds); :class:`GroupingStopped` once it says stop."""
    bits = np.ascontiguousarray(bits, dtype=np.uint64)
    n_samples = int(n_samples)

    def check():
        if should_stop is not None and should_stop():
            raise GroupingStopped

    rows = 64 * max(1, GROUPING_SLICE // (64 * max(1, n_samples)))  # antecedents a slice (64 a hash step)
    hashes = np.full(n_samples, FNV_OFFSET, np.uint64)
    for start in range(0, bits.shape[0], rows):
        _hash_columns(bits, start, min(start + rows, bits.shape[0]), hashes)
        check()
    return _groups_of(bits, hashes, rows, check)


def _groups_of(bits, hashes, rows: int, check):
    items_a_slice = max(1, GROUPING_SLICE // max(1, bits.shape[0]))

    def differs(items, candidates):
        out = np.zeros(len(items), np.bool_)
        for start in range(0, len(items), items_a_slice):
            end = start + items_a_slice
            out[start:end] = _signature_differs(bits, items[start:end], candidates[start:end])
            check()
        return out

    representative = representatives(hashes, differs, lambda sample: _signature(bits, sample).tobytes())
    first = np.flatnonzero(representative == np.arange(len(hashes)))
    if len(first) == len(hashes):  # (no two samples alike)
        group_bits = bits
    else:
        parts = []
        for start in range(0, bits.shape[0], rows):
            parts.append(columns_of(bits[start:start + rows], first))
            check()
        group_bits = np.vstack(parts) if parts else columns_of(bits, first)
    return first, np.searchsorted(first, representative), group_bits


@njit(cache=True)
def _hash_columns(bits, start, end, hashes):
    """Fold antecedents ``start:end`` (``start`` a multiple of 64) into each sample's hash."""
    column = np.zeros(64 * bits.shape[1], np.uint64)  # 64 antecedents' bits of each sample
    for block in range(start, end, 64):
        column[:] = 0
        for k in range(min(64, bits.shape[0] - block)):
            for w in range(bits.shape[1]):
                x = bits[block + k, w]
                while x:
                    low = np.uint64(trailing_zeros(x))
                    column[w * 64 + np.int64(low)] |= np.uint64(1) << np.uint64(k)
                    x &= x - np.uint64(1)
        for i in range(len(hashes)):
            hashes[i] = fnv_step(hashes[i], column[i])


def _signature(bits, sample: int) -> np.ndarray:
    return (bits[:, sample >> 6] >> np.uint64(sample & 63)) & np.uint64(1)


@njit(cache=True)
def _signature_differs(bits, samples, candidates):
    """Which ``samples``' signatures differ from their candidate's? (row by row: the vectors read in order)"""
    differs = np.zeros(len(samples), np.bool_)
    for i in range(bits.shape[0]):
        for k in range(len(samples)):
            s, c = samples[k], candidates[k]
            if ((bits[i, s >> 6] >> np.uint64(s & 63)) ^ (bits[i, c >> 6] >> np.uint64(c & 63))) & np.uint64(1):
                differs[k] = True
    return differs


@njit(cache=True)
def columns_of(bits, samples):
    """The capture vectors restricted to ``samples``, packed: bit g of row i is bit
    ``samples[g]``. Each row's set bits are visited, not each sample: mined conjunctions capture few."""
    position = np.full(64 * bits.shape[1], -1, np.int64)
    for g in range(len(samples)):
        position[samples[g]] = g
    out = np.zeros((bits.shape[0], (len(samples) + 63) // 64), np.uint64)
    for i in range(bits.shape[0]):
        for w in range(bits.shape[1]):
            x = bits[i, w]
            while x:
                g = position[w * 64 + np.int64(trailing_zeros(x))]
                if g >= 0:
                    out[i, g >> 6] |= np.uint64(1) << np.uint64(g & 63)
                x &= x - np.uint64(1)
    return out


#: the largest total of whole-number weights counted as integers: the searches keep mistakes in int32
LARGEST_COUNT_TOTAL = (1 << 31) - 1


def sample_counts(sample_weight) -> np.ndarray | None:
    """Whole-number sample weights as multiplicities (int64), or None (no weights, or some not whole,
    or a total past :data:`LARGEST_COUNT_TOTAL`). A sample of weight k counts as k copies of itself: the
    grouping merges copies into one group of size k, so a count weights exactly as repeating the row
    does, and the searches keep their integer counting (and the bounds that need it) where real-valued
    weights take the ``classes`` mode."""
    if sample_weight is None:
        return None
    weights = np.asarray(sample_weight, dtype=np.float64)
    if not (weights == np.floor(weights)).all() or float(weights.sum()) > LARGEST_COUNT_TOTAL:
        return None
    return weights.astype(np.int64)


def group_samples(bits, y, minor=None, counting: str = "auto", class_weights=None, signatures=None,
                  counts=None) -> GroupedSamples:
    """Group the samples of packed ``(antecedents, words)`` capture vectors (one label in ``y`` per
    sample; ``signatures``: their :func:`signature_groups` if known) and pick a counting mode.

    ``class_weights`` (``(samples, classes)``, each sample's weight in its class's column) selects the
    ``classes`` mode, needed for real-valued sample weights or more than two classes; ``counts``
    (:func:`sample_counts`) counts each sample as that many copies of itself."""
    if counting not in COUNTING_MODES:
        raise ValueError(f"counting must be one of {COUNTING_MODES}, got {counting!r}")
    bits = np.ascontiguousarray(bits, dtype=np.uint64)
    y = np.asarray(y).astype(np.int64)
    n_samples = y.shape[0]
    if bits.shape[1] != bitset.n_words(n_samples):
        raise ValueError(f"capture vectors of {bits.shape[1]} words for {n_samples} samples")
    minor = np.zeros(n_samples, np.int64) if minor is None else np.asarray(minor).astype(np.int64)
    first, group, group_bits = signature_groups(bits, n_samples) if signatures is None else signatures
    if class_weights is not None:
        return _group_class_weights(group_bits, first, group, np.asarray(class_weights, np.float64), minor)
    copies = np.ones(n_samples, np.int64) if counts is None else np.asarray(counts, np.int64)
    if copies.shape != (n_samples,):
        raise ValueError(f"{copies.shape[0]} counts for {n_samples} samples")
    sizes = np.bincount(group, weights=copies, minlength=first.shape[0]).astype(np.int64)
    positives = np.bincount(group, weights=copies * y, minlength=first.shape[0]).astype(np.int64)
    minority = np.bincount(group, weights=copies * minor, minlength=first.shape[0]).astype(np.int64)
    if counting == "auto":
        counting = _cheapest(n_samples, group_bits, sizes, positives, minority, copies)
    if counting == "samples":
        first = np.arange(n_samples)
        group_bits = bits
        sizes, positives, minority = copies, copies * y, copies * minor
    n_words = group_bits.shape[1]
    packed = pack_weights(sizes, positives, minority, n_words) if counting == "packed" else np.zeros(0, np.int64)
    return GroupedSamples(
        bits=group_bits,
        count_planes=weight_planes(sizes),
        positive_planes=weight_planes(positives),
        minority_planes=weight_planes(minority),
        all_ones=bitset.ones(first.shape[0]),
        sizes=sizes,
        positives=positives,
        minority=minority,
        packed_weights=packed,
    )


def _group_class_weights(group_bits, first, group, class_weights, minor) -> GroupedSamples:
    n_padded = 64 * group_bits.shape[1]
    totals = np.zeros((n_padded, class_weights.shape[1]))
    np.add.at(totals, group, class_weights)
    minority = np.zeros(n_padded)
    np.add.at(minority, group, class_weights.sum(axis=1) * minor)
    empty = np.zeros((0, group_bits.shape[1]), np.uint64)
    sizes = np.bincount(group, minlength=first.shape[0]).astype(np.int64)
    return GroupedSamples(
        bits=group_bits, count_planes=empty, positive_planes=empty, minority_planes=empty,
        all_ones=bitset.ones(first.shape[0]), sizes=sizes, positives=np.zeros_like(sizes),
        minority=np.zeros_like(sizes), packed_weights=np.zeros(0, np.int64),
        class_weights=totals, minority_weights=minority,
    )


def _cheapest(n_samples, group_bits, sizes, positives, minority, copies) -> str:
    """Estimated work per evaluated child: captured groups (packed), words x planes, or sample words
    (x the planes of the samples' counts)."""
    n_words = group_bits.shape[1]
    n_planes = sum(max(1, int(w.max(initial=0)).bit_length()) for w in (sizes, positives, minority))
    costs = {
        "planes": n_words * n_planes,
        "samples": bitset.n_words(n_samples) * (2 + bool(minority.any())) * int(copies.max(initial=1)).bit_length(),
    }
    if sizes.sum() < PACK_LIMIT:
        costs["packed"] = 1.5 * float(np.mean(bitset.popcount(group_bits)))
    return min(costs, key=costs.get)
