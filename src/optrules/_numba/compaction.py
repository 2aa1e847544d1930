"""Compaction: freeing the nodes of dead prefixes (the kept ones moved down and renumbered)."""

from __future__ import annotations

import numpy as np
from numba import njit

from .cache import drop_stale_cache
from .counting import popcount
from .heap import _sift_down
from .maps import same_remaining_set

drop_stale_cache(__file__, ["."])  # (this package's functions inline each other's)


# -- compaction: freeing the nodes of dead prefixes ---------------------------------------------------
# Node ids are positions in append-only arrays (a parent before its children), so freeing nodes means
# moving the kept ones down and renumbering. The new id of a kept node is its rank among them, read from
# a bitset of the kept nodes and a count a 64-node word: 1/4 byte a node of scratch, not a table of ids.
@njit(cache=True)
def mark_kept_nodes(node_parent, node_dead, n_nodes, kept, rank, heap_node, heap_size, keep_closed):
    """Mark in the bitset ``kept`` the nodes a compaction keeps: the root, the queued ones, with
    ``keep_closed`` every other node not dead too (prefixes done with, kept for the symmetry map), and
    every ancestor of a kept one (a dead node may be the parent of queued prefixes); ``rank[w]``: the
    kept nodes before word ``w``. Returns how many are kept."""
    for w in range(kept.shape[0]):
        kept[w] = 0
    one = np.uint64(1)
    for i in range(heap_size):
        x = heap_node[i]
        if not node_dead[x]:
            kept[x >> 6] |= one << np.uint64(x & 63)
    for x in range(n_nodes - 1, 0, -1):  # children before their parent: a kept child marks it in time
        bit = one << np.uint64(x & 63)
        if (keep_closed and not node_dead[x]) or (kept[x >> 6] & bit) != 0:
            kept[x >> 6] |= bit
            parent = node_parent[x]
            kept[parent >> 6] |= one << np.uint64(parent & 63)
    kept[0] |= one
    total = np.int64(0)
    for w in range(kept.shape[0]):
        rank[w] = total
        total += np.int64(popcount(kept[w]))
    return total


@njit(inline="always", cache=True)
def _is_kept(x, kept):
    return (kept[x >> 6] >> np.uint64(x & 63)) & np.uint64(1) != 0


@njit(inline="always", cache=True)
def _new_id(x, kept, rank):
    below = kept[x >> 6] & ((np.uint64(1) << np.uint64(x & 63)) - np.uint64(1))
    return rank[x >> 6] + np.int64(popcount(below))


@njit(cache=True)
def renumber_kept(node_parent, node_dead, n_nodes, kept, rank, heap_key, heap_node, heap_size):
    """Before the kept nodes move: their parent pointers in new ids, and the queue without its dead
    entries, in new ids, made a heap again. Returns the queue's new size."""
    for x in range(1, n_nodes):
        if _is_kept(x, kept):
            node_parent[x] = np.int32(_new_id(node_parent[x], kept, rank))
    size = np.int64(0)
    for i in range(heap_size):
        x = heap_node[i]
        if not node_dead[x]:
            heap_key[size] = heap_key[i]
            heap_node[size] = np.int32(_new_id(x, kept, rank))
            size += 1
    # (ids keep their order, so equal keys still come out first in, first out)
    for i in range(size // 2 - 1, -1, -1):
        _sift_down(heap_key, heap_node, i, size)
    return size


@njit(cache=True)
def move_kept(values, kept, n_nodes):
    """Move the kept nodes' entries of one node array to its front, in order (an array viewed as
    unsigned words of its item size: four compilations serve every field)."""
    j = 0
    for x in range(n_nodes):
        if _is_kept(x, kept):
            values[j] = values[x]
            j += 1


@njit(cache=True)
def map_refill(map_slots, node_hash, node_dead, n_nodes):
    """The symmetry map of a compacted tree: every node but the root and the dead (each node enters
    the map when it is made and leaves it only when a better one replaces it, which marks it dead).
    Returns how many it holds."""
    mask = map_slots.shape[0] - 1
    for s in range(map_slots.shape[0]):
        map_slots[s] = -1
    count = np.int64(0)
    for x in range(1, n_nodes):
        if not node_dead[x]:
            i = np.int64(node_hash[x] & np.uint64(mask))
            while map_slots[i] >= 0:
                i = (i + 1) & mask
            map_slots[i] = np.int32(x)
            count += 1
    return count


@njit(inline="always", cache=True)
def find_remaining_set(h, u, a, map_slots, node_hash, node_parent, node_last, bits, all_ones, scratch):
    """Probe the map for a prefix leaving ``u & ~bits[a]`` uncaptured (hash ``h``): ``(slot, found)``,
    the slot holding it or the free slot where it belongs."""
    mask = map_slots.shape[0] - 1
    probe = np.int64(h & np.uint64(mask))
    while map_slots[probe] >= 0:
        other = map_slots[probe]
        if node_hash[other] == h and same_remaining_set(other, u, a, node_parent, node_last, bits, all_ones, scratch):
            return probe, True
        probe = (probe + 1) & mask
    return probe, False
