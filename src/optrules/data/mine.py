"""Mine antecedents: conjunctions of up to ``max_card`` binary features, as packed bitsets.

An antecedent is kept when its support lies in ``[min_support, 1 - min_support]`` of the samples: an
antecedent capturing fewer than lambda*N samples can never be part of an optimal rule list (CORELS paper,
Theorem 10), nor one capturing more than (1 - lambda)*N (Theorem 21). Antecedents that capture nothing or
everything are always dropped. Two values of one categorical column are never conjoined (the conjunction
is empty), and of antecedents with the same capture vector only the first of the shortest is kept: they
are interchangeable in any rule list.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from . import bitset

_SUPPORT_TOLERANCE = 1e-9


@dataclass
class Antecedents:
    """Mined antecedents: ``items[i]`` are the feature indices conjoined by antecedent ``i``."""

    feature_names: list[str]
    items: list[tuple[int, ...]]
    bits: np.ndarray  # (n_antecedents, n_words) uint64
    n_samples: int

    def __len__(self) -> int:
        return len(self.items)

    def conditions(self, i: int) -> tuple[str, ...]:
        return tuple(self.feature_names[j] for j in self.items[i])

    @property
    def names(self) -> list[str]:
        return [" and ".join(self.conditions(i)) for i in range(len(self))]

    @property
    def support(self) -> np.ndarray:
        """Number of samples each antecedent captures."""
        return bitset.popcount(self.bits)

    def capture_matrix(self) -> np.ndarray:
        """Boolean ``(n_antecedents, n_samples)`` capture vectors."""
        return bitset.unpack(self.bits, self.n_samples)


def _check_mining_args(features: np.ndarray, feature_names, max_card: int, min_support: float):
    if features.ndim != 2:
        raise ValueError(f"features must be a 2-D boolean matrix, got shape {features.shape}")
    n, f = features.shape
    if n == 0 or f == 0:
        raise ValueError(f"cannot mine antecedents from empty data (shape {features.shape})")
    if len(feature_names) != f:
        raise ValueError(f"{len(feature_names)} feature names for {f} feature columns")
    if int(max_card) != max_card or max_card < 1:
        raise ValueError(f"max_card must be an integer >= 1, got {max_card}")
    if not (0.0 <= min_support <= 0.5):
        raise ValueError(f"min_support must lie in [0, 0.5], got {min_support}")


def mine_antecedents(
    features,
    feature_names: Sequence[str],
    groups: Sequence[int] | None = None,
    max_card: int = 2,
    min_support: float = 0.0,
    y=None,
    min_class_support: float = 0.0,
) -> Antecedents:
    """Mine all conjunctions of up to ``max_card`` features (see the module docstring).

    ``features`` is a boolean ``(n_samples, n_features)`` matrix; ``groups[j] >= 0`` marks features that
    are mutually exclusive values of one column (never conjoined), ``-1`` a feature free to combine.
    With labels ``y`` and ``min_class_support`` > 0, a conjunction must also hold for at least that
    share of the positives or of the negatives (the falling-rule-list paper's mining, 10% there).
    Antecedents come out by length, then in lexicographic order of their feature indices.
    """
    features = np.asarray(features, dtype=bool)
    _check_mining_args(features, feature_names, max_card, min_support)
    n, f = features.shape
    groups = np.full(f, -1, dtype=np.int64) if groups is None else np.asarray(groups, dtype=np.int64)
    if groups.shape != (f,):
        raise ValueError(f"groups must have one entry per feature ({f}), got shape {groups.shape}")
    lowest = min_support * n - _SUPPORT_TOLERANCE
    highest = (1.0 - min_support) * n + _SUPPORT_TOLERANCE
    feature_bits = bitset.pack(features.T)
    if not 0.0 <= min_class_support <= 1.0:
        raise ValueError(f"min_class_support must lie in [0, 1], got {min_class_support}")
    by_class = min_class_support > 0
    if by_class:
        if y is None:
            raise ValueError("min_class_support needs the labels y")
        positive = np.asarray(y).astype(bool)
        if positive.shape != (n,):
            raise ValueError(f"y has {positive.shape[0] if positive.ndim else 0} labels for {n} samples")
        positive_bits = bitset.pack(positive)
        lowest_positive = min_class_support * positive.sum() - _SUPPORT_TOLERANCE
        lowest_negative = min_class_support * (n - positive.sum()) - _SUPPORT_TOLERANCE

    kept_items: list[np.ndarray] = []
    kept_bits: list[np.ndarray] = []
    combos = np.arange(f, dtype=np.int64)[:, None]
    bits = feature_bits
    for card in range(1, int(max_card) + 1):
        counts = bitset.popcount(bits)
        frequent = counts >= lowest
        if by_class:
            positives = bitset.count_and(bits, positive_bits)
            frequent &= (positives >= lowest_positive) | (counts - positives >= lowest_negative)
        valid = frequent & (counts <= highest) & (counts > 0) & (counts < n)
        kept_items.append(combos[valid])
        kept_bits.append(bits[valid])
        if card == max_card:
            break
        # Support only shrinks as features are added, so too-rare conjunctions are not extended.
        extendable = frequent & (counts > 0)
        combos, bits = _extend(combos[extendable], bits[extendable], feature_bits, groups)
        if len(combos) == 0:
            break

    all_bits = np.concatenate(kept_bits) if kept_bits else np.zeros((0, bitset.n_words(n)), np.uint64)
    order_items = [tuple(int(j) for j in row) for block in kept_items for row in block]
    first = _first_of_each_distinct_row(all_bits)
    return Antecedents(
        feature_names=list(feature_names),
        items=[order_items[i] for i in first],
        bits=np.ascontiguousarray(all_bits[first]),
        n_samples=n,
    )


def _extend(combos: np.ndarray, bits: np.ndarray, feature_bits: np.ndarray, groups: np.ndarray):
    """All ``combo + (j,)`` with ``j`` after the combo's last feature and in none of its groups."""
    new_combos, new_bits = [], []
    combo_groups = groups[combos]
    for j in range(feature_bits.shape[0]):
        ok = combos[:, -1] < j
        if groups[j] >= 0:
            ok &= ~np.any(combo_groups == groups[j], axis=1)
        if ok.any():
            new_combos.append(np.column_stack([combos[ok], np.full(int(ok.sum()), j, dtype=np.int64)]))
            new_bits.append(bitset.and_(bits[ok], feature_bits[j]))
    if not new_combos:
        return np.zeros((0, combos.shape[1] + 1), np.int64), np.zeros((0, bits.shape[1]), np.uint64)
    combos, bits = np.concatenate(new_combos), np.concatenate(new_bits)
    order = np.lexsort(combos.T[::-1])
    return combos[order], bits[order]


def _first_of_each_distinct_row(bits: np.ndarray) -> np.ndarray:
    """Indices of the first occurrence of each distinct row, in increasing order."""
    if len(bits) == 0:
        return np.zeros(0, dtype=np.int64)
    rows = np.ascontiguousarray(bits).view(np.dtype((np.void, bits.shape[1] * bits.itemsize))).ravel()
    _, first = np.unique(rows, return_index=True)
    return np.sort(first)
