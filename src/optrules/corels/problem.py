"""A rule-list learning problem: packed antecedents, labels, lambda and the equivalent-points vector."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..data import bitset
from ..data.formats import ReferenceProblem
from ..data.groups import signature_groups
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
    y = np.asarray(y).astype(bool)
    _, group = signature_groups(captures)
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

