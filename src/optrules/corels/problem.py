"""A rule-list learning problem: packed antecedents, labels, lambda and the equivalent-points vector."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..data import bitset
from ..data.formats import ReferenceProblem
from ..data.mine import Antecedents

#: below this lambda the bounds prune little and the search space explodes
SMALL_REGULARIZATION = 1e-4


def check_regularization(regularization: float) -> float:
    regularization = float(regularization)
    if not np.isfinite(regularization) or not (0.0 <= regularization < 1.0):
        raise ValueError(f"regularization (lambda) must lie in [0, 1), got {regularization}")
    if regularization < SMALL_REGULARIZATION:
        warnings.warn(
            f"regularization {regularization} is close to 0: the bounds barely prune and the search may "
            "not finish; set max_nodes or time_limit",
            RuntimeWarning,
            stacklevel=3,
        )
    return regularization


def equivalent_points_minority(captures: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Mark the minority-label members of each group of samples with identical antecedent signatures.

    No rule list can separate samples that every antecedent treats alike, so within each group the
    minority label is always misclassified (Thm 20). On a tie one label's members are marked.
    """
    captures = np.asarray(captures, dtype=bool)
    y = np.asarray(y).astype(bool)
    signatures = np.packbits(captures.T, axis=1)
    rows = np.ascontiguousarray(signatures).view(np.dtype((np.void, signatures.shape[1]))).ravel()
    _, group = np.unique(rows, return_inverse=True)
    group = group.ravel()
    positives = np.bincount(group, weights=y, minlength=group.max() + 1)
    sizes = np.bincount(group, minlength=group.max() + 1)
    minority_is_positive = 2 * positives < sizes
    return np.where(minority_is_positive[group], y, ~y)


@dataclass
class Problem:
    """Everything the search needs; ``conditions[a]`` names antecedent ``a`` for the output rule list."""

    bits: np.ndarray  # (M, W) uint64 capture vectors
    y: np.ndarray  # (N,) 0/1
    regularization: float
    conditions: list[tuple[str, ...]]
    minor: np.ndarray  # (N,) bool, minority members of equivalent-point groups

    def __post_init__(self):
        self.regularization = check_regularization(self.regularization)
        self.y = np.asarray(self.y).astype(np.int8)
        n = self.y.shape[0]
        if self.bits.ndim != 2 or self.bits.shape[0] == 0:
            raise ValueError("the antecedent set is empty: mine with a lower min_support or more features")
        if self.bits.shape[1] != bitset.n_words(n):
            raise ValueError(f"antecedent bitsets have {self.bits.shape[1]} words, {n} samples need {bitset.n_words(n)}")
        if len(self.conditions) != self.bits.shape[0]:
            raise ValueError(f"{len(self.conditions)} antecedent names for {self.bits.shape[0]} antecedents")
        if self.minor.shape != (n,):
            raise ValueError(f"the minority vector has {self.minor.shape[0]} entries for {n} samples")
        if n == 0:
            raise ValueError("no samples")
        if self.y.min() == self.y.max():
            raise ValueError(f"all {n} labels are {int(self.y[0])}: two classes are needed")

    @property
    def n_samples(self) -> int:
        return int(self.y.shape[0])

    @property
    def n_antecedents(self) -> int:
        return int(self.bits.shape[0])

    @property
    def lambda_n(self) -> float:
        return self.regularization * self.n_samples

    def captures(self) -> np.ndarray:
        return bitset.unpack(self.bits, self.n_samples)

    @classmethod
    def from_captures(cls, captures, y, regularization: float, conditions: Sequence[tuple[str, ...]] | None = None,
                      minor=None) -> "Problem":
        captures = np.asarray(captures, dtype=bool)
        if captures.ndim != 2:
            raise ValueError(f"captures must be a 2-D (antecedents x samples) matrix, got shape {captures.shape}")
        y = np.asarray(y)
        if captures.shape[1] != y.shape[0]:
            raise ValueError(f"antecedents cover {captures.shape[1]} samples but there are {y.shape[0]} labels")
        if conditions is None:
            conditions = [(f"a{i}",) for i in range(captures.shape[0])]
        if minor is None:
            minor = equivalent_points_minority(captures, y) if captures.shape[0] else np.zeros(y.shape[0], bool)
        return cls(bitset.pack(captures), y, regularization, [tuple(c) for c in conditions], np.asarray(minor, bool))

    @classmethod
    def from_antecedents(cls, antecedents: Antecedents, y, regularization: float, minor=None) -> "Problem":
        conditions = [antecedents.conditions(i) for i in range(len(antecedents))]
        y = np.asarray(y)
        if y.shape[0] != antecedents.n_samples:
            raise ValueError(f"antecedents cover {antecedents.n_samples} samples but there are {y.shape[0]} labels")
        if minor is None:
            minor = equivalent_points_minority(antecedents.capture_matrix(), y) if len(antecedents) else np.zeros(y.shape[0], bool)
        return cls(antecedents.bits, y, regularization, conditions, np.asarray(minor, bool))

    @classmethod
    def from_reference(cls, reference: ReferenceProblem, regularization: float) -> "Problem":
        conditions = [(name,) for name in reference.antecedent_names]
        return cls.from_captures(reference.captures, reference.y, regularization, conditions, reference.minor)


@dataclass
class GroupedSamples:
    """The problem over groups of samples with identical antecedent signatures.

    No rule list can tell such samples apart, so the search counts groups instead of samples: a group
    is one bit, and its weights (samples, positives, minority members) are stored as bit planes, so a
    weighted count is ``sum_b 2^b * popcount(v & plane_b)``. On ProPublica (6,489 samples, 155
    antecedents) there are 194 groups: 4 words per vector instead of 102. With all weights 1 (no two
    samples alike) it reduces to plain popcounts.
    """

    bits: np.ndarray  # (M, Wg) capture vectors over groups
    count_planes: np.ndarray  # (P, Wg)
    positive_planes: np.ndarray
    minority_planes: np.ndarray
    all_ones: np.ndarray  # (Wg,)
    n_groups: int
    sizes: np.ndarray  # (G,) samples per group
    positives: np.ndarray
    minority: np.ndarray

    def packed_weights(self) -> np.ndarray:
        """Samples, positives and minority members of each group packed into one int64 (see kernel)."""
        from .kernel import PACK_LIMIT, PACK_SHIFT

        if self.sizes.sum() >= PACK_LIMIT:
            raise ValueError("too many samples to pack group weights")
        packed = self.sizes + (self.positives << PACK_SHIFT) + (self.minority << (2 * PACK_SHIFT))
        out = np.zeros(self.all_ones.shape[0] * 64, np.int64)
        out[: self.n_groups] = packed
        return out


def weight_planes(weights: np.ndarray) -> np.ndarray:
    """Bit planes of non-negative integer weights: plane b holds bit b of every weight."""
    weights = np.asarray(weights, dtype=np.int64)
    n_planes = max(1, int(weights.max(initial=0)).bit_length())
    return np.vstack([bitset.pack(((weights >> b) & 1).astype(bool)) for b in range(n_planes)])


def group_samples(problem: Problem) -> GroupedSamples:
    captures = problem.captures()
    signatures = np.packbits(captures.T, axis=1)
    rows = np.ascontiguousarray(signatures).view(np.dtype((np.void, signatures.shape[1]))).ravel()
    _, first, group = np.unique(rows, return_index=True, return_inverse=True)
    group = group.ravel()
    n_groups = first.shape[0]
    sizes = np.bincount(group, minlength=n_groups)
    positives = np.bincount(group, weights=problem.y, minlength=n_groups).astype(np.int64)
    minority = np.bincount(group, weights=problem.minor, minlength=n_groups).astype(np.int64)
    return GroupedSamples(
        bits=bitset.pack(captures[:, first]),
        count_planes=weight_planes(sizes),
        positive_planes=weight_planes(positives),
        minority_planes=weight_planes(minority),
        all_ones=bitset.ones(n_groups),
        n_groups=n_groups,
        sizes=sizes.astype(np.int64),
        positives=positives,
        minority=minority,
    )
