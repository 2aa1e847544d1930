"""Mine antecedents: conjunctions of up to ``max_card`` binary features, as packed bitsets.

An antecedent is kept when its support lies in ``[min_support, 1 - min_support]`` of the samples: an
antecedent capturing fewer than lambda*N samples can never be part of an optimal rule list (CORELS paper,
Theorem 10), nor one capturing more than (1 - lambda)*N (Theorem 21). Antecedents that capture nothing or
everything are always dropped. Two values of one categorical column are never conjoined (the conjunction
is empty), and of antecedents with the same capture vector only the first of the shortest is kept: they
are interchangeable in any rule list.

Mining is level-wise and streams: the supports of a level's candidates are counted by a compiled loop
that allocates nothing per candidate (a histogram of supports), and only the antecedents kept are
materialised. ``max_antecedents`` bounds how many are kept: when a level would pass it, that level's
support floor is raised until it fits (the most frequent conjunctions are kept) and longer conjunctions
are not mined; the :class:`MiningReport` says so. A :class:`~optrules.budget.Budget` stops mining
between blocks of candidates (a level cut short is left out) and is charged for what mining holds at
its peak, before allocating it: the levels' rows, then all rows beside the deduplicated copy (about
twice the antecedents' bitsets). Duplicates are found by hashing rows, not by sorting copies of them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import NamedTuple, Sequence

import numpy as np
from numba import njit

from .._numba import FNV_OFFSET, drop_stale_cache, fnv_step, popcount
from . import bitset
from .distinct import representatives

drop_stale_cache(__file__, ["../_numba"])

_SUPPORT_TOLERANCE = 1e-9


@dataclass
class Antecedents:
    """Mined antecedents: ``items[i]`` are the feature indices conjoined by antecedent ``i``."""

    feature_names: list[str]
    items: list[tuple[int, ...]]
    bits: np.ndarray  # (n_antecedents, n_words) uint64
    n_samples: int
    report: "MiningReport | None" = None

    def __len__(self) -> int:
        return len(self.items)

    def __getstate__(self) -> dict:
        # a pickled estimator should weigh what its model weighs: the capture vectors grow with the
        # training rows (tens of MB on a 45k-row table), so only their counts travel
        state = dict(self.__dict__)
        if state["bits"] is not None:
            state["support_counts"] = self.support
        state["bits"] = None
        return state

    def subset(self, positions) -> "Antecedents":
        """These antecedents at ``positions`` (in that order), with a report that counts them."""
        from dataclasses import replace

        positions = np.asarray(positions, dtype=np.int64)
        report = None if self.report is None else replace(self.report, n_antecedents=len(positions),
                                                          notes=list(self.report.notes))
        return Antecedents(self.feature_names, [self.items[i] for i in positions],
                           np.ascontiguousarray(self.bits[positions]), self.n_samples, report)

    def conditions(self, i: int) -> tuple[str, ...]:
        return tuple(self.feature_names[j] for j in self.items[i])

    @property
    def condition_names(self) -> "ConditionNames":
        """Every antecedent's :meth:`conditions`, as a sequence that names one when asked."""
        return ConditionNames(self)

    @property
    def names(self) -> list[str]:
        return [" and ".join(self.conditions(i)) for i in range(len(self))]

    @property
    def support(self) -> np.ndarray:
        """Number of samples each antecedent captures."""
        if self.bits is None:
            return self.__dict__["support_counts"]
        return bitset.popcount(self.bits)

    def capture_matrix(self) -> np.ndarray:
        """Boolean ``(n_antecedents, n_samples)`` capture vectors."""
        if self.bits is None:
            raise ValueError("the capture vectors of the training rows are not kept when antecedents are pickled "
                             "(they grow with the training data): refit, or mine the antecedents again")
        return bitset.unpack(self.bits, self.n_samples)


@dataclass
class MiningReport:
    """How many antecedents were made, and why not more."""

    n_samples: int
    n_features: int
    max_card: int
    min_support: float
    max_antecedents: int | None
    levels: list[dict] = field(default_factory=list)  # per cardinality: candidates, kept, support floor
    notes: list[str] = field(default_factory=list)
    n_antecedents: int = 0
    stopped: bool = False
    # False when the budget ended while mining's kernels compiled: nothing was mined, and the antecedents
    # are at most the required features alone (RuleModelEstimator._mine)
    mined: bool = True

    def __str__(self) -> str:
        lines = [f"{self.n_antecedents:,} antecedents from {self.n_features:,} binary features "
                 f"(conjunctions of up to {self.max_card}, support >= {self.min_support:.4g}"
                 + (f", at most {self.max_antecedents:,}" if self.max_antecedents is not None else "") + ")"]
        return "\n".join(lines + [f"  {note}" for note in self.notes])

    def to_dict(self) -> dict:
        return {"n_antecedents": self.n_antecedents, "n_features": self.n_features, "max_card": self.max_card,
                "min_support": self.min_support, "max_antecedents": self.max_antecedents, "levels": self.levels,
                "notes": list(self.notes), "stopped": self.stopped, "mined": self.mined}


class ConditionNames(Sequence):
    """``names[i]``: antecedent ``i``'s conditions, built when asked. A search names the few antecedents
    of its rule list; building all 218,284 tuples of a raw table's took 0.4-0.8 s before the search,
    where Ctrl-C cannot stop it."""

    def __init__(self, antecedents: Antecedents):
        self._antecedents = antecedents

    def __len__(self) -> int:
        return len(self._antecedents)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self._antecedents.conditions(k) for k in range(len(self))[i]]
        if not -len(self) <= i < len(self):
            raise IndexError(f"antecedent {i} of {len(self)}")
        return self._antecedents.conditions(int(i) % len(self))

    def parts(self) -> list[tuple[int, ...]]:
        """Each antecedent's conditions as feature indices (no names built)."""
        return self._antecedents.items


def auto_max_antecedents(n_samples: int) -> int:
    """The default bound on mined antecedents: 2,000, fewer when samples are many (a child's bound costs
    about a word per 64 samples, so antecedents x words stays below ~2 million)."""
    return int(min(2000, max(250, (1 << 21) // max(1, bitset.n_words(n_samples)))))


def _check_mining_args(shape: tuple, feature_names, max_card: int, min_support: float):
    if len(shape) != 2:
        raise ValueError(f"features must be a 2-D boolean matrix, got shape {shape}")
    n, f = shape
    if n == 0 or f == 0:
        raise ValueError(f"cannot mine antecedents from empty data (shape {shape})")
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
    max_antecedents: int | str | None = None,
    budget=None,
    unbounded=None,
    n_samples: int | None = None,
) -> Antecedents:
    """Mine all conjunctions of up to ``max_card`` features (see the module docstring).

    ``features`` is a boolean ``(n_samples, n_features)`` matrix; ``groups[j] >= 0`` marks features that
    are mutually exclusive values of one column (never conjoined), ``-1`` a feature free to combine.
    With labels ``y`` and ``min_class_support`` > 0, a conjunction must also hold for at least that
    share of the positives or of the negatives (the falling-rule-list paper's mining, 10% there).
    ``max_antecedents`` (an int, ``"auto"`` for :func:`auto_max_antecedents`, or None for no bound) caps
    how many are kept, raising a level's support floor when needed. Antecedents come out by length, then
    in lexicographic order of their feature indices.

    ``unbounded`` (a boolean mask over the features) marks features whose conjunctions escape the support
    bounds (any that captures a sample is kept, the count bound applies to them apart) and are never
    merged with a conjunction of other such features: a required feature's rules must stay available
    whatever Theorems 10 and 21 say about unconstrained lists.

    With ``n_samples``, ``features`` are the features packed already, one row of words a feature
    (:mod:`.bitset`'s layout, as ``Binarizer.transform(packed=True)`` makes them): no boolean table.
    """
    task = _mining_task(features, feature_names, groups, max_card, min_support, y, min_class_support,
                        max_antecedents, unbounded, n_samples)
    kept_items, kept_bits = _mine_levels(task, budget)
    return _distinct_antecedents(task, kept_items, kept_bits, feature_names, budget)


@dataclass
class _MiningTask:
    """What mining reads, checked and arranged: ``feature_bits`` (packed, a row a feature, the unbounded
    features first in ``order``), their ``groups`` in that order, the support ``limits`` (lowest, highest,
    by class, lowest positive and negative counts), ``positive_bits``, the bound ``cap`` and the ``report``."""

    n: int
    max_card: int
    feature_bits: np.ndarray
    groups: np.ndarray
    order: np.ndarray
    n_unbounded: int
    positive_bits: np.ndarray
    limits: tuple
    lowest: float
    cap: int | None
    report: MiningReport


def _mining_task(features, feature_names, groups, max_card, min_support, y, min_class_support, max_antecedents,
                 unbounded, n_samples) -> _MiningTask:
    """:func:`mine_antecedents`' arguments checked (a clear error for each) and arranged for the levels."""
    if n_samples is None:
        features = np.asarray(features, dtype=bool)
        _check_mining_args(features.shape, feature_names, max_card, min_support)
        n, f = features.shape
    else:
        features = np.asarray(features, dtype=np.uint64)
        n, f = int(n_samples), features.shape[0]
        _check_mining_args((n, f), feature_names, max_card, min_support)
        if features.shape != (f, bitset.n_words(n)):
            raise ValueError(f"packed features must have {bitset.n_words(n)} words a feature, got shape {features.shape}")
    groups = np.full(f, -1, dtype=np.int64) if groups is None else np.asarray(groups, dtype=np.int64)
    if groups.shape != (f,):
        raise ValueError(f"groups must have one entry per feature ({f}), got shape {groups.shape}")
    unbounded = np.zeros(f, dtype=bool) if unbounded is None else np.asarray(unbounded, dtype=bool)
    if unbounded.shape != (f,):
        raise ValueError(f"unbounded must have one entry per feature ({f}), got shape {unbounded.shape}")
    # unbounded features first: a conjunction holds one exactly when its first feature is one, so the
    # conjunctions it grows from are unbounded too and none is lost to the support floor on the way
    order = np.concatenate([np.flatnonzero(unbounded), np.flatnonzero(~unbounded)])
    n_unbounded = int(unbounded.sum())
    cap = auto_max_antecedents(n) if max_antecedents == "auto" else max_antecedents
    if cap is not None and (int(cap) != cap or cap < 1):
        raise ValueError(f"max_antecedents must be a positive integer, 'auto' or None, got {max_antecedents!r}")
    lowest = min_support * n - _SUPPORT_TOLERANCE
    highest = (1.0 - min_support) * n + _SUPPORT_TOLERANCE
    # the packed rows are reordered, not the table: a copy of the table with its columns in that order
    # held another 561 MB on a 1,000,000-row table of 588 features (the fit's peak 1.4 -> 2.1 GB)
    feature_bits = bitset.pack(features.T) if n_samples is None else features
    if n_unbounded:
        feature_bits = feature_bits[order]
    if not 0.0 <= min_class_support <= 1.0:
        raise ValueError(f"min_class_support must lie in [0, 1], got {min_class_support}")
    by_class = min_class_support > 0
    positive_bits = np.zeros(feature_bits.shape[1], np.uint64)
    lowest_positive = lowest_negative = 0.0
    if by_class:
        if y is None:
            raise ValueError("min_class_support needs the labels y")
        positive = np.asarray(y).astype(bool)
        if positive.shape != (n,):
            raise ValueError(f"y has {positive.shape[0] if positive.ndim else 0} labels for {n} samples")
        positive_bits = bitset.pack(positive)
        lowest_positive = min_class_support * positive.sum() - _SUPPORT_TOLERANCE
        lowest_negative = min_class_support * (n - positive.sum()) - _SUPPORT_TOLERANCE
    report = MiningReport(n, f, int(max_card), float(min_support), None if cap is None else int(cap))
    return _MiningTask(n, int(max_card), feature_bits, groups[order], order, n_unbounded, positive_bits,
                       (lowest, highest, by_class, lowest_positive, lowest_negative), lowest,
                       None if cap is None else cap, report)


def _mine_levels(task: _MiningTask, budget) -> tuple[list, list]:
    """The conjunctions of 1, 2, ... features kept at each level (``(items, bits)`` of each), each level
    extending the last one's frontier, until ``max_card``, the bound on antecedents (its floor raised)
    or the budget; what happened goes to ``task.report``."""
    n, cap, max_card, report = task.n, task.cap, task.max_card, task.report
    kept_items: list[np.ndarray] = []
    kept_bits: list[np.ndarray] = []
    n_kept = 0
    # level 1 extends the empty conjunction
    combos = np.zeros((1, 0), np.int64)
    combo_bits = bitset.ones(n)[None, :]
    for card in range(1, max_card + 1):
        room = None if cap is None else int(cap) - n_kept
        if room is not None and room <= 0:
            report.notes.append(f"conjunctions of {card} or more features not mined: the bound of {cap:,} "
                                "antecedents was reached")
            break
        # what the budget is charged while mining: the levels kept and the frontier extended next
        held = sum(b.nbytes + i.nbytes for b, i in zip(kept_bits, kept_items)) + combo_bits.nbytes + combos.nbytes
        # single features are always mined (one popcount each): a fit whose time ran out still has them
        level = _mine_level(combos, combo_bits, task.feature_bits, task.groups, task.positive_bits, n, task.limits,
                            room, extend=card < max_card, budget=budget if card > 1 else None,
                            n_unbounded=task.n_unbounded, held=held)
        if level is None:
            report.stopped = True
            report.notes.append(f"mining stopped by the budget before conjunctions of {card} features were done")
            break
        items, bits, (floor, unbounded_floor), candidates, next_combos, next_bits = level
        kept_items.append(items)
        kept_bits.append(bits)
        n_kept += len(items)
        report.levels.append({"cardinality": card, "candidates": int(candidates), "kept": int(len(items)),
                              "support_floor": int(math.ceil(floor))})
        if floor > task.lowest or unbounded_floor > 0.5:  # the bound raised the floor (to unbounded_floor, for all)
            report.notes.append(
                f"conjunctions of {card} feature{'s' if card > 1 else ''}: support floor raised to "
                f"{unbounded_floor / n:.4g} ({math.ceil(unbounded_floor):,} samples) to keep "
                f"at most {cap:,} antecedents" + ("; longer conjunctions not mined" if card < max_card else ""))
            break
        if next_combos is None or len(next_combos) == 0:
            break
        combos, combo_bits = next_combos, next_bits
    return kept_items, kept_bits


def _distinct_antecedents(task: _MiningTask, kept_items: list, kept_bits: list, feature_names,
                          budget) -> Antecedents:
    """The levels' conjunctions as antecedents, in the caller's feature indices, by length and then
    lexicographic, less those capturing the same samples as a shorter or earlier one."""
    n, report, order, n_unbounded = task.n, task.report, task.order, task.n_unbounded
    row_bytes = bitset.n_words(n) * 8
    # conjunctions as sorted feature indices in the caller's order; by length, then lexicographic
    # (a level is lexicographic already unless unbounded features were moved first)
    mapped = [np.sort(order[block], axis=1) for block in kept_items]
    offsets = np.cumsum([0] + [len(block) for block in mapped])
    ranked = np.concatenate([offsets[k] + (np.lexsort(block.T[::-1]) if n_unbounded and block.shape[1] else
                                           np.arange(len(block))) for k, block in enumerate(mapped)]
                            ) if mapped else np.zeros(0, np.int64)
    if budget is not None:  # the levels, and their rows side by side (then the levels go)
        n_rows = int(offsets[-1])
        budget.require("mining", 2 * n_rows * row_bytes + 16 * n_rows, "the mined conjunctions")
    all_bits = np.concatenate(kept_bits) if kept_bits else np.zeros((0, bitset.n_words(n)), np.uint64)
    kept_bits.clear()  # (the caller's list: its levels go now)
    if budget is not None:
        budget.charge("mining", all_bits.nbytes + 16 * len(all_bits))
    which = np.zeros((len(all_bits), 0), np.uint64)
    if n_unbounded:  # conjunctions of different unbounded features stay apart
        which = bitset.pack(np.concatenate([(block[:, :, None] == np.arange(n_unbounded)).any(axis=1)
                                            for block in kept_items]))
    first = ranked[first_of_distinct_rows(all_bits, which, ranked)]
    report.n_antecedents = len(first)
    if len(first) < len(all_bits):
        report.notes.append(f"{len(all_bits) - len(first):,} conjunctions left out: they capture the same samples "
                            "as a shorter or earlier one")
    level_of = np.searchsorted(offsets, first, side="right") - 1
    kept_by_level = [block[first[level_of == k] - offsets[k]] for k, block in enumerate(mapped)]
    del mapped
    kept_items.clear()
    if budget is not None:
        budget.require("antecedents", len(first) * row_bytes + _ITEM_BYTES * sum(b.size for b in kept_by_level),
                       "the mined antecedents")
    kept = all_bits[first]
    del all_bits
    if budget is not None:
        budget.release("mining")
    return Antecedents(
        feature_names=list(feature_names),
        items=[tuple(row) for block in kept_by_level for row in block.tolist()],
        bits=kept,
        n_samples=n,
        report=report,
    )


#: memory of one feature index of a mined antecedent: a Python int in a tuple, with its share of the tuple
_ITEM_BYTES = 48


#: candidates counted between two looks at the budget: about this many words ANDed and counted
_BLOCK_WORDS = 1 << 26


class _Level(NamedTuple):
    """A block of one level's conjunctions, as the mining kernels read them: their capture vectors, last and
    first features (-1 for the empty conjunction) and the groups of their features."""

    combo_bits: np.ndarray
    last: np.ndarray
    first: np.ndarray
    combo_groups: np.ndarray


class _Features(NamedTuple):
    """The features a level extends its conjunctions by: packed captures, groups (-1: none), and the
    positive samples' bits (for class supports)."""

    feature_bits: np.ndarray
    groups: np.ndarray
    positive_bits: np.ndarray


class _Limits(NamedTuple):
    """The support a kept conjunction needs (one type per field: one compiled signature)."""

    n: int  # samples
    lowest: float
    highest: float
    by_class: bool  # min_class_support > 0: frequent in either class is enough
    lowest_positive: float
    lowest_negative: float
    n_unbounded: int  # conjunctions starting with one of the first n_unbounded features escape the bounds


class _Collected(NamedTuple):
    """Where :func:`_collect_level` writes the conjunctions it keeps: combo, added feature, whether valid
    (not only frequent), capture vector."""

    combo: np.ndarray
    feature: np.ndarray
    valid: np.ndarray
    bits: np.ndarray


def _mine_level(combos, combo_bits, feature_bits, groups, positive_bits, n, limits, room, extend, budget,
                n_unbounded=0, held=0):
    """One level: every ``combo + (j,)`` with ``j`` after the combo's last feature and in none of its
    groups. Returns ``(kept items, their bits, support floors (bounded, unbounded), candidates,
    extendable combos, their bits)``, or None when the budget stopped it. Conjunctions that start with one of the first
    ``n_unbounded`` features escape the support bounds; ``room`` counts them first. The budget is
    charged ``held`` bytes (what mining keeps already) and the level's rows."""
    lowest, highest, by_class, lowest_positive, lowest_negative = limits
    bounds = _Limits(int(n), float(lowest), float(highest), bool(by_class), float(lowest_positive),
                     float(lowest_negative), int(n_unbounded))
    features = _Features(feature_bits, groups, positive_bits)
    n_features, n_words = feature_bits.shape
    combo_groups = groups[combos] if combos.shape[1] else np.zeros((len(combos), 0), np.int64)
    last = combos[:, -1] if combos.shape[1] else np.full(len(combos), -1, np.int64)
    first = combos[:, 0] if combos.shape[1] else np.full(len(combos), -1, np.int64)
    block = max(1, _BLOCK_WORDS // max(1, n_features * n_words))
    histogram = np.zeros((2, n + 2), np.int64)  # valid candidates by support: bounded, unbounded
    tallies = np.zeros(3, np.int64)  # candidates, frequent but not valid, frequent
    for start in range(0, len(combos), block):
        if budget is not None and budget.stopped():
            return None
        stop = min(len(combos), start + block)
        _count_level(_Level(combo_bits[start:stop], last[start:stop], first[start:stop], combo_groups[start:stop]),
                     features, bounds, histogram, tallies)
    raised = -np.inf  # one floor for every conjunction of the level when there are too many: the most frequent stay
    if room is not None:
        above = np.cumsum(histogram.sum(axis=0)[::-1])[::-1]  # valid candidates with support >= s
        raised = float(int(np.argmax(above <= room))) - 0.5  # histogram[:, n+1] is 0, so some s fits
    floors = np.array([max(lowest, raised), max(0.5, raised)])  # bounded, unbounded (from one sample)
    capped = raised > lowest or raised > 0.5
    n_out = (int(histogram[0, _ceil(floors[0]):].sum()) + int(histogram[1, _ceil(floors[1]):].sum())
             + (0 if capped or not extend else int(tallies[1])))
    if budget is not None:  # the rows, their items, and the valid ones apart when the frontier keeps all
        row = n_words * 8 + 8 * (combos.shape[1] + 1)
        budget.require("mining", held + (2 if extend else 1) * n_out * row + 17 * n_out, "the mined conjunctions")
    out_combo = np.empty(n_out, np.int64)
    out_feature = np.empty(n_out, np.int64)
    out_valid = np.empty(n_out, np.bool_)
    bits = np.empty((n_out, n_words), np.uint64)
    written = 0
    for start in range(0, len(combos), block):
        if budget is not None and budget.stopped():
            return None
        stop = min(len(combos), start + block)
        written = _collect_level(_Level(combo_bits[start:stop], last[start:stop], first[start:stop],
                                        combo_groups[start:stop]), features, bounds, floors, extend and not capped,
                                 start, _Collected(out_combo, out_feature, out_valid, bits), written)
    items = np.column_stack([combos[out_combo], out_feature]) if n_out else np.zeros((0, combos.shape[1] + 1), np.int64)
    next_combos = next_bits = None
    if extend and not capped:
        next_combos, next_bits = items, bits
    if not out_valid.all():
        items, bits = items[out_valid], bits[out_valid]
    return items, bits, floors, int(tallies[0]), next_combos, next_bits


def _ceil(floor: float) -> int:
    return int(math.ceil(max(floor, 0.0)))


@njit(cache=True)
def _candidate(combo_bits, c, last, combo_groups, feature_bits, groups, j, positive_bits, by_class):
    """``(allowed, support, positives)`` of combo ``c`` extended by feature ``j``."""
    if j <= last[c]:
        return False, 0, 0
    g = groups[j]
    if g >= 0:
        for k in range(combo_groups.shape[1]):
            if combo_groups[c, k] == g:
                return False, 0, 0
    count = 0
    positives = 0
    for w in range(feature_bits.shape[1]):
        word = combo_bits[c, w] & feature_bits[j, w]
        count += popcount(word)
        if by_class:
            positives += popcount(word & positive_bits[w])
    return True, count, positives


@njit(inline="always", cache=True)
def _frequent(count, positives, lowest, by_class, lowest_positive, lowest_negative):
    if count < lowest or count == 0:
        return False
    return (not by_class) or positives >= lowest_positive or count - positives >= lowest_negative


@njit(inline="always", cache=True)
def _kind(count, positives, unbounded, n, lowest, highest, by_class, lowest_positive, lowest_negative):
    """0: infrequent (neither kept nor extended); 1: frequent but outside the support bounds (only
    extended); 2: valid (kept)."""
    if unbounded:
        return 2 if count > 0 else 0
    if not _frequent(count, positives, lowest, by_class, lowest_positive, lowest_negative):
        return 0
    return 2 if count <= highest and count < n else 1


@njit(cache=True)
def _count_level(level, features, limits, histogram, tallies):
    """Count one block of the level's candidates (``tallies``: candidates, frequent but not valid,
    frequent) and the valid ones by support (``histogram``: bounded, unbounded)."""
    combo_bits, last, first, combo_groups = level
    feature_bits, groups, positive_bits = features
    n, lowest, highest, by_class, lowest_positive, lowest_negative, n_unbounded = limits
    for c in range(combo_bits.shape[0]):
        for j in range(last[c] + 1, feature_bits.shape[0]):
            allowed, count, positives = _candidate(combo_bits, c, last, combo_groups, feature_bits, groups, j,
                                                   positive_bits, by_class)
            if not allowed:
                continue
            tallies[0] += 1
            unbounded = (first[c] if first[c] >= 0 else j) < n_unbounded
            kind = _kind(count, positives, unbounded, n, lowest, highest, by_class, lowest_positive, lowest_negative)
            if kind == 0:
                continue
            tallies[2] += 1
            if kind == 2:
                histogram[1 if unbounded else 0, count] += 1
            else:
                tallies[1] += 1


@njit(cache=True)
def _collect_level(level, features, limits, floors, keep_frequent, offset, out, written):
    """Write to ``out`` (from row ``written``) the candidates kept (valid with support >= their floor) and,
    with ``keep_frequent``, the other frequent ones (extendable at the next level; support only shrinks
    as features are added), with their capture vectors; returns the rows written."""
    combo_bits, last, first, combo_groups = level
    feature_bits, groups, positive_bits = features
    n, lowest, highest, by_class, lowest_positive, lowest_negative, n_unbounded = limits
    out_combo, out_feature, out_valid, out_bits = out
    for c in range(combo_bits.shape[0]):
        for j in range(last[c] + 1, feature_bits.shape[0]):
            allowed, count, positives = _candidate(combo_bits, c, last, combo_groups, feature_bits, groups, j,
                                                   positive_bits, by_class)
            if not allowed:
                continue
            unbounded = (first[c] if first[c] >= 0 else j) < n_unbounded
            kind = _kind(count, positives, unbounded, n, lowest, highest, by_class, lowest_positive, lowest_negative)
            valid = kind == 2
            if (valid and count >= floors[1 if unbounded else 0]) or (keep_frequent and kind == 1):
                out_combo[written] = offset + c
                out_feature[written] = j
                out_valid[written] = valid
                for w in range(feature_bits.shape[1]):
                    out_bits[written, w] = combo_bits[c, w] & feature_bits[j, w]
                written += 1
    return written


def first_of_distinct_rows(bits: np.ndarray, extra: np.ndarray, order: np.ndarray) -> np.ndarray:
    """Positions in ``order`` (a permutation of the rows) of the first occurrence of each distinct row of
    ``bits`` joined with ``extra``, increasing; by hashes (:mod:`.distinct`), with ~24 bytes a row where
    sorting the rows would copy them."""
    representative = row_representatives(bits, extra, order)
    return np.flatnonzero(representative == np.arange(len(order)))


def row_representatives(bits: np.ndarray, extra: np.ndarray, order: np.ndarray) -> np.ndarray:
    """For each position p of ``order``, the first position whose row (``bits`` joined with ``extra``,
    uint64 words) equals row ``order[p]``."""
    if len(bits) == 0:
        return np.zeros(0, dtype=np.int64)
    return representatives(
        _row_hashes(bits, extra)[order], lambda items, candidates: _rows_differ(bits, extra, order, items, candidates),
        lambda p: bits[order[p]].tobytes() + extra[order[p]].tobytes())


@njit(cache=True)
def _row_hashes(bits, extra):
    out = np.empty(bits.shape[0], np.uint64)
    for i in range(bits.shape[0]):
        h = FNV_OFFSET
        for w in range(bits.shape[1]):
            h = fnv_step(h, bits[i, w])
        for w in range(extra.shape[1]):
            h = fnv_step(h, extra[i, w])
        out[i] = h
    return out


@njit(cache=True)
def _rows_differ(bits, extra, order, items, candidates):
    differs = np.zeros(len(items), np.bool_)
    for k in range(len(items)):
        a, b = order[items[k]], order[candidates[k]]
        for w in range(bits.shape[1]):
            if bits[a, w] != bits[b, w]:
                differs[k] = True
        for w in range(extra.shape[1]):
            if extra[a, w] != extra[b, w]:
                differs[k] = True
    return differs
