"""Samples grouped by identical antecedent signatures, and how to count them fast.

No rule list (nor rule set) can tell apart samples that every antecedent treats alike, so a search may
count groups instead of samples: a group is one bit, with weights (samples, positives, minority
members). Three ways to count the weights of the groups captured by a bit vector ``v``:

* ``packed``: the three weights of a group packed into one int64 (21 bits each), summed over the set
  bits of ``v``: cost ~ number of captured groups;
* ``planes``: weights stored as bit planes, ``sum_b 2^b popcount(v & plane_b)``: cost ~ words x planes;
* ``samples``: no merging, every sample its own group of weight 1 (planes of one bit each);
* ``classes``: real-valued weights per class and group (sample weights, or more than two classes),
  summed over the set bits of ``v``: cost ~ captured groups x classes.

On ProPublica (6,489 samples, 155 antecedents) there are 194 groups and ``packed`` wins; on bank
marketing (45,211 samples, 222 antecedents) there are 10,449 and plain ``samples`` wins.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import bitset

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


def signature_groups(captures) -> tuple[np.ndarray, np.ndarray]:
    """Group the samples of a boolean ``(antecedents, samples)`` matrix by their column (signature):
    ``(first, group)``, the first sample of each group and each sample's group index."""
    signatures = np.packbits(np.asarray(captures, dtype=bool).T, axis=1)
    rows = np.ascontiguousarray(signatures).view(np.dtype((np.void, signatures.shape[1]))).ravel()
    _, first, group = np.unique(rows, return_index=True, return_inverse=True)
    return first, group.ravel()


def group_samples(captures, y, minor=None, counting: str = "auto", class_weights=None) -> GroupedSamples:
    """Group the samples of a boolean ``(antecedents, samples)`` capture matrix and pick a counting mode.

    ``class_weights`` (``(samples, classes)``, each sample's weight in its class's column) selects the
    ``classes`` mode, needed for sample weights or more than two classes."""
    if counting not in COUNTING_MODES:
        raise ValueError(f"counting must be one of {COUNTING_MODES}, got {counting!r}")
    captures = np.asarray(captures, dtype=bool)
    y = np.asarray(y).astype(np.int64)
    minor = np.zeros(captures.shape[1], np.int64) if minor is None else np.asarray(minor).astype(np.int64)
    first, group = signature_groups(captures)
    if class_weights is not None:
        return _group_class_weights(captures, first, group, np.asarray(class_weights, np.float64), minor)
    sizes = np.bincount(group, minlength=first.shape[0]).astype(np.int64)
    positives = np.bincount(group, weights=y, minlength=first.shape[0]).astype(np.int64)
    minority = np.bincount(group, weights=minor, minlength=first.shape[0]).astype(np.int64)
    group_bits = bitset.pack(captures[:, first])
    if counting == "auto":
        counting = _cheapest(captures, group_bits, sizes, positives, minority)
    if counting == "samples":
        first = np.arange(captures.shape[1])
        group_bits = bitset.pack(captures)
        sizes, positives, minority = np.ones_like(y), y, minor
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


def _group_class_weights(captures, first, group, class_weights, minor) -> GroupedSamples:
    group_bits = bitset.pack(captures[:, first])
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


def _cheapest(captures, group_bits, sizes, positives, minority) -> str:
    """Estimated work per evaluated child: captured groups (packed), words x planes, or sample words."""
    n_words = group_bits.shape[1]
    n_planes = sum(max(1, int(w.max(initial=0)).bit_length()) for w in (sizes, positives, minority))
    costs = {
        "planes": n_words * n_planes,
        "samples": bitset.n_words(captures.shape[1]) * (2 + bool(minority.any())),
    }
    if sizes.sum() < PACK_LIMIT:
        costs["packed"] = 1.5 * float(np.mean(bitset.popcount(group_bits)))
    return min(costs, key=costs.get)
