"""A rule-list learning problem: packed antecedents, labels, lambda and the equivalent-points vector."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from ..data import bitset
from ..data.formats import ReferenceProblem
from ..data.groups import sample_counts, signature_groups
from ..data.mine import Antecedents
from ..data.weights import check_sample_weight
from ..notices import warn
from .prefix import class_weight_matrix, prefix_mistakes

#: below this lambda the bounds prune little and the search space explodes
SMALL_REGULARIZATION = 1e-4
#: a positive lambda below this is refused (1 / lambda and counts over lambda must stay finite)
SMALLEST_REGULARIZATION = 1e-300


def check_regularization(regularization: float) -> float:
    regularization = float(regularization)
    if not np.isfinite(regularization) or not (0.0 <= regularization < 1.0):
        raise ValueError(f"regularization (lambda) must lie in [0, 1), got {regularization}")
    if 0.0 < regularization < SMALLEST_REGULARIZATION:  # (1 / lambda overflows: the bounds divide by it)
        raise ValueError(f"regularization (lambda) {regularization} is 0 for every purpose but overflows the bounds: "
                         f"pass 0 or at least {SMALLEST_REGULARIZATION:g}")
    if regularization < SMALL_REGULARIZATION:
        warn(f"regularization {regularization} is close to 0: the bounds barely prune and the search may "
             "not finish; set max_nodes or time_limit", RuntimeWarning)
    return regularization


def equivalent_points_minority(bits: np.ndarray, y: np.ndarray, sample_weight=None, group=None) -> np.ndarray:
    """Mark the members of each group of samples with identical antecedent signatures that lie outside
    the group's (weighted) majority class.

    No rule list can separate samples that every antecedent treats alike, so within each group all but
    one class is always misclassified (Thm 20, which holds for several classes and for weighted mistakes
    alike). On a tie the smallest class index counts as the majority. ``bits``: the packed capture vectors
    (or ``group``: each sample's group, when they are grouped already).
    """
    y = np.asarray(y).astype(np.int64)
    if group is None:
        _, group, _ = signature_groups(bits, y.shape[0])
    n_groups, n_classes = group.max() + 1, max(int(y.max(initial=1)) + 1, 2)
    weights = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    totals = np.bincount(group * n_classes + y, weights=weights, minlength=n_groups * n_classes)
    return y != np.argmax(totals.reshape(n_groups, n_classes), axis=1)[group]


@dataclass
class Problem:
    """Everything the search needs; ``conditions[a]`` names antecedent ``a`` for the output rule list."""

    bits: np.ndarray  # (M, W) uint64 capture vectors
    y: np.ndarray  # (N,) class indices 0 .. n_classes-1 (0/1 for binary data)
    regularization: float
    conditions: list[tuple[str, ...]]
    minor: np.ndarray  # (N,) bool, minority members of equivalent-point groups
    sample_weight: np.ndarray | None = None  # (N,) cost of misclassifying each sample; None: all 1
    n_classes: int = 2
    # the samples grouped by signature (signature_groups), computed once for the minority vector, the
    # search's counting and the warm start
    _signatures: tuple | None = field(default=None, init=False, repr=False, compare=False)
    # each antecedent's sub-conjunctions (kernel.antecedent_subsets), found once for the search, its warm
    # start and its dive
    _subconjunctions: tuple | None = field(default=None, init=False, repr=False, compare=False)
    # the whole-number weights as counts (``counts``), found once; False until then
    _counts: object = field(default=False, init=False, repr=False, compare=False)

    def __post_init__(self):
        self.regularization = check_regularization(self.regularization)
        self.y = np.asarray(self.y).astype(np.int64)
        n = self.y.shape[0]
        self.n_classes = int(self.n_classes)
        if n and (self.y.min() < 0 or self.y.max() >= self.n_classes):
            raise ValueError(f"labels must be class indices in [0, {self.n_classes}), got {self.y.min()}..{self.y.max()}")
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
        self.sample_weight = check_sample_weight(self.sample_weight, n, self.y)

    @property
    def n_samples(self) -> int:
        return int(self.y.shape[0])

    @property
    def n_antecedents(self) -> int:
        return int(self.bits.shape[0])

    @property
    def counts(self) -> np.ndarray | None:
        """Whole-number weights of a two-class problem as multiplicities (a sample of weight k counts as
        k copies: :func:`~optrules.data.groups.sample_counts`), else None."""
        if self._counts is False:
            self._counts = sample_counts(self.sample_weight) if self.n_classes == 2 else None
        return self._counts

    @property
    def weighted(self) -> bool:
        """Do mistakes need real-valued class totals (weights not whole numbers, or more than two classes)?
        Whole-number weights are counted as copies of the samples, as unweighted samples are."""
        return self.n_classes > 2 or (self.sample_weight is not None and self.counts is None)

    @property
    def total_weight(self) -> float:
        """N in the objective mistakes/N + lambda*K: the number of samples, or their total weight."""
        return float(self.sample_weight.sum()) if self.sample_weight is not None else float(self.n_samples)

    @property
    def lambda_n(self) -> float:
        return self.regularization * self.total_weight

    def class_weights(self) -> np.ndarray:
        """``(N, C)``: each sample's weight in the column of its class."""
        return class_weight_matrix(self.y, self.n_classes, self.sample_weight)

    def root_b0(self) -> float:
        """b0 of the empty prefix: every list misclassifies at least these (Thm 20)."""
        return float(self.class_weights().sum(axis=1) @ self.minor)

    def mistakes(self, prefix) -> float:
        """Training mistakes (weighted) of the list a prefix defines."""
        rows = bitset.unpack(self.bits[np.asarray(prefix, dtype=np.int64)], self.n_samples)
        return prefix_mistakes(rows, self.y, range(len(prefix)), self.sample_weight, self.n_classes)

    def cost(self, prefix) -> float:
        """The objective of the list a prefix defines, in mistake units: mistakes + lambda*N*K."""
        return self.mistakes(prefix) + self.lambda_n * len(prefix)

    def captures(self) -> np.ndarray:
        return bitset.unpack(self.bits, self.n_samples)

    def signatures(self) -> tuple:
        """``(first, group, group_bits)`` of :func:`~optrules.data.groups.signature_groups`, once."""
        if self._signatures is None:
            self._signatures = signature_groups(self.bits, self.n_samples)
        return self._signatures

    def subconjunctions(self) -> tuple:
        """``(within_first, within)`` of :func:`~optrules.corels.kernel.antecedent_subsets`, once."""
        if self._subconjunctions is None:
            from .kernel import antecedent_subsets  # (the compiled kernels load with the search)

            self._subconjunctions = antecedent_subsets(self.conditions, self.bits)
        return self._subconjunctions

    @classmethod
    def from_captures(cls, captures, y, regularization: float, conditions: Sequence[tuple[str, ...]] | None = None,
                      minor=None, sample_weight=None, n_classes: int | None = None) -> "Problem":
        captures = np.asarray(captures, dtype=bool)
        if captures.ndim != 2:
            raise ValueError(f"captures must be a 2-D (antecedents x samples) matrix, got shape {captures.shape}")
        y = np.asarray(y)
        if captures.shape[1] != y.shape[0]:
            raise ValueError(f"antecedents cover {captures.shape[1]} samples but there are {y.shape[0]} labels")
        if conditions is None:
            conditions = [(f"a{i}",) for i in range(captures.shape[0])]
        return cls._with_minority(bitset.pack(captures), y, regularization, [tuple(c) for c in conditions], minor,
                                  sample_weight, n_classes)

    @classmethod
    def from_antecedents(cls, antecedents: Antecedents, y, regularization: float, minor=None, sample_weight=None,
                         n_classes: int | None = None, should_stop=None) -> "Problem":
        """The problem of mined antecedents; ``should_stop`` (a fit's budget) is heard while the samples
        are grouped, which grows with rows x antecedents (``GroupingStopped`` then)."""
        conditions = antecedents.condition_names
        y = np.asarray(y)
        if y.shape[0] != antecedents.n_samples:
            raise ValueError(f"antecedents cover {antecedents.n_samples} samples but there are {y.shape[0]} labels")
        return cls._with_minority(antecedents.bits, y, regularization, conditions, minor, sample_weight, n_classes,
                                  should_stop)

    @classmethod
    def _with_minority(cls, bits, y, regularization, conditions, minor, sample_weight, n_classes,
                       should_stop=None) -> "Problem":
        """The problem, with the minority vector computed (from the samples' groups, kept) if not given."""
        sample_weight = check_sample_weight(sample_weight, y.shape[0])
        signatures = None
        if minor is None and len(bits):
            signatures = signature_groups(bits, y.shape[0], should_stop)
            minor = equivalent_points_minority(bits, y, sample_weight, group=signatures[1])
        elif minor is None:
            minor = np.zeros(y.shape[0], bool)
        problem = cls(bits, y, regularization, conditions, np.asarray(minor, bool), sample_weight,
                      _n_classes(y, n_classes))
        problem._signatures = signatures
        return problem

    @classmethod
    def from_reference(cls, reference: ReferenceProblem, regularization: float) -> "Problem":
        conditions = [(name,) for name in reference.antecedent_names]
        return cls.from_captures(reference.captures, reference.y, regularization, conditions, reference.minor)



def _n_classes(y, n_classes: int | None) -> int:
    return max(2, int(np.max(np.asarray(y).astype(np.int64), initial=1)) + 1) if n_classes is None else int(n_classes)
