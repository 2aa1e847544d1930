"""The arrays a kernel takes, in named tuples (``Counting``, ``Tree``, ``Frontier``, ``Progress``,
``Workspace``), and the workspace a search's expansions share."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from .cache import drop_stale_cache

drop_stale_cache(__file__, ["."])  # (this package's functions inline each other's)


# -- steps shared by the branch-and-bound kernels (state layout: optrules.bnb) -------------------------
# The kernels take their arrays in these groups (numba compiles named tuples of arrays as plain arguments).
class Counting(NamedTuple):
    """The grouped samples as the kernels count them (optrules.data.groups): capture vectors, weight
    bit planes or packed weights, and per-class weights (empty unless samples carry weights or there
    are several classes)."""

    bits: np.ndarray
    count_planes: np.ndarray
    positive_planes: np.ndarray
    minority_planes: np.ndarray
    packed_weights: np.ndarray
    all_ones: np.ndarray
    class_weights: np.ndarray
    minority_weights: np.ndarray


class Tree(NamedTuple):
    """The node arrays every search shares: a prefix is a chain of parent pointers."""

    parent: np.ndarray
    last: np.ndarray
    depth: np.ndarray
    hash: np.ndarray
    dead: np.ndarray


class Frontier(NamedTuple):
    """The queue (a binary heap of priorities and nodes) and the symmetry map (node ids, -1 empty)."""

    heap_key: np.ndarray
    heap_node: np.ndarray
    map_slots: np.ndarray


class Progress(NamedTuple):
    """Counters (``ints``, slots below), the incumbent's objective (``floats[0]``), the smallest bound of
    the prefixes dropped since the memory budget was reached (``floats[DROPPED_FLOOR]``) and the
    incumbent's prefix."""

    ints: np.ndarray
    floats: np.ndarray
    best_prefix: np.ndarray


class Workspace(NamedTuple):
    """A kernel's scratch arrays, made once a search (:func:`workspace`) so that the kernels allocate
    nothing and their serial compilations run without numba's reference counting (``_nrt=False``):
    each call of a helper with arrays, inlined or not, and each row view counted references
    atomically, ~20 updates a queued child, a fifth of the time of a hard rule-list search."""

    u: np.ndarray  # what the prefix leaves (words)
    v: np.ndarray
    scratch: np.ndarray
    chunk_scratch: np.ndarray  # a row of words for each parallel chunk
    live_words: np.ndarray
    in_prefix: np.ndarray  # a flag an antecedent, all False between expansions
    child_counts: np.ndarray  # (samples, positives, minority) an antecedent
    totals: np.ndarray  # per-class sums over what the prefix leaves
    captured_totals: np.ndarray  # and over what a child's rule captures
    leaf_u: np.ndarray
    leaf_live_words: np.ndarray
    leaf_counts: np.ndarray
    pure_siblings: np.ndarray  # a prefix's children whose rule errs on none of what it captures, by class and count (rule lists)


def workspace(counting: Counting, max_chunks: int = 1, slots: int = 0) -> Workspace:
    """The scratch arrays of a kernel counting with ``counting``, for up to ``max_chunks`` parallel chunks;
    with ``slots`` > 0, each array but the chunks' a row a slot (prefixes expanded side by side: read
    with :func:`slot_row`)."""
    n_antecedents, n_words = counting.bits.shape
    # per-class sums loop over their output: exactly the classes when the samples carry class weights
    n_classes = counting.class_weights.shape[1] if counting.class_weights.shape[0] > 0 else 2

    def rows(length, dtype, *more):
        """A row a slot, rows apart by a cache line at least: two threads writing one line slow each
        other down (a slot's row is :func:`slot_row`)."""
        if slots <= 0:
            return np.zeros((length, *more), dtype)
        row_bytes = length * np.dtype(dtype).itemsize * int(np.prod(more, dtype=np.int64))
        return np.zeros((slots * -(-64 // max(row_bytes, 1)), length, *more), dtype)

    return Workspace(rows(n_words, np.uint64), rows(n_words, np.uint64), rows(n_words, np.uint64),
                     np.zeros((max(int(max_chunks), 1), n_words), np.uint64), rows(n_words, np.int64),
                     rows(n_antecedents, np.bool_), rows(n_antecedents, np.int64, 3), rows(n_classes, np.float64),
                     rows(n_classes, np.float64), rows(n_words, np.uint64), rows(n_words, np.int64),
                     rows(n_antecedents, np.int64, 3), rows(n_antecedents, np.int64))


@njit(inline="always", cache=True)
def slot_row(rows, s, slots):
    """Slot ``s``'s row of a :func:`workspace` array made for ``slots`` slots."""
    return rows[s * (rows.shape[0] // slots)]
