"""The search state's integer and float slots, the kernels' return codes, and the steps every
branch-and-bound kernel takes on a node (queue it, record an incumbent, drop a child)."""

from __future__ import annotations

import numpy as np
from numba import njit

from .cache import drop_stale_cache
from .heap import heap_push, prefix_of

drop_stale_cache(__file__, ["."])  # (this package's functions inline each other's)


# slots of the integer state vector
N_NODES, HEAP_SIZE, MAP_COUNT, BEST_LEN, EXPANDED, LB_EVALS, INSERTIONS, MAX_QUEUE, MAX_LENGTH, IMPROVED = range(10)
KEPT_A_CHILD = 10  # expansions that queued at least one child (what the C++ reference's num_evaluated counts)
# MEMORY_FULL: 1 once the memory budget allows no more growth. The search then goes on with the queue it
# has: each prefix that would have been queued is dropped instead (counted in DROPPED), and the smallest
# bound among them kept in floats[DROPPED_FLOOR]; a dropped prefix's lists are bounded by it as a queued
# one's are by its own bound, so the certificate stays valid while the queue drains: the time budget is
# used to raise the lower bound and improve the incumbent instead of ending the search.
MEMORY_FULL, DROPPED = 11, 12
# MEMORY_TIGHT: 1 once the state takes more than half of what the memory budget allows it (set by the
# driver): a kernel may then trade time for room (the rule-list search finishes leaves instead of queuing
# them, counted in LEAVES_RESOLVED, and queue a prefix's children in steps, counted in REEXPANDED).
MEMORY_TIGHT, LEAVES_RESOLVED, REEXPANDED = 13, 14, 15
DOMINATED = 16  # children not queued: a sibling's subtree holds a list at least as good as each of theirs
# SET_ASIDE: queued prefixes taken out of the queue once the memory budget was reached, to be made again
# by their parents (the rule-list search, corels.kernel.set_aside)
SET_ASIDE = 17
N_INT_STATE = 18
DROPPED_FLOOR = 1
N_FLOAT_STATE = 2
# kernel return codes
QUEUE_EMPTY, POPS_DONE, NEED_ROOM = 0, 1, 2
# the map is grown before its load could pass 0.7
MAP_LOAD_NUMERATOR, MAP_LOAD_DENOMINATOR = 7, 10


@njit(inline="always", cache=True)
def needs_room(ints, n_children, node_parent, heap_key, map_slots):
    """Could expanding one more prefix overflow the node arrays, the heap or the map's load?"""
    return (ints[N_NODES] + n_children > node_parent.shape[0]
            or ints[HEAP_SIZE] + n_children > heap_key.shape[0]
            or MAP_LOAD_DENOMINATOR * (ints[MAP_COUNT] + n_children) > MAP_LOAD_NUMERATOR * map_slots.shape[0])


@njit(inline="always", cache=True)
def free_room(ints, node_parent, heap_key, map_slots):
    """How many nodes (each queued and entered in the map) the arrays take before they must grow."""
    map_free = (MAP_LOAD_NUMERATOR * map_slots.shape[0]) // MAP_LOAD_DENOMINATOR - ints[MAP_COUNT]
    return min(node_parent.shape[0] - ints[N_NODES], heap_key.shape[0] - ints[HEAP_SIZE], map_free)


@njit(inline="always", cache=True)
def drop_child(ints, floats, bound):
    """With the memory budget reached: leave a child unqueued, keeping its bound (see MEMORY_FULL)."""
    ints[DROPPED] += 1
    if bound < floats[DROPPED_FLOOR]:
        floats[DROPPED_FLOOR] = bound


@njit(inline="always", cache=True)
def mark_prefix(node, node_parent, node_last, in_prefix, flag):
    """Set ``in_prefix[a] = flag`` for every antecedent of the prefix ending at ``node``."""
    x = node
    while x > 0:
        in_prefix[node_last[x]] = flag
        x = node_parent[x]


@njit(inline="always", cache=True)
def record_incumbent(value, node, a, floats, ints, best_prefix, node_parent, node_last, node_depth):
    """The list of prefix(``node``) + ``a`` is the best so far, with objective ``value``."""
    floats[0] = value
    length = prefix_of(node, node_parent, node_last, node_depth, best_prefix)
    best_prefix[length] = a
    ints[BEST_LEN] = length + 1
    ints[IMPROVED] = 1


@njit(inline="always", cache=True)
def new_node(node, a, h, slot, node_parent, node_last, node_depth, node_hash, node_dead, map_slots, ints):
    """Create the node of prefix(``node``) + ``a`` and enter it in the map at ``slot`` (if >= 0); the
    caller fills its family-specific fields. Returns its id."""
    child = ints[N_NODES]
    ints[N_NODES] += 1
    node_parent[child] = np.int32(node)
    node_last[child] = a
    node_depth[child] = node_depth[node] + 1
    node_hash[child] = h
    node_dead[child] = False
    if slot >= 0:
        map_slots[slot] = np.int32(child)
    return child


@njit(inline="always", cache=True)
def queue_node(heap_key, heap_node, ints, key, node):
    """Queue ``node`` with priority ``key``."""
    heap_push(heap_key, heap_node, ints[HEAP_SIZE], key, node)
    ints[HEAP_SIZE] += 1
    ints[INSERTIONS] += 1
    if ints[HEAP_SIZE] > ints[MAX_QUEUE]:
        ints[MAX_QUEUE] = ints[HEAP_SIZE]


@njit(inline="always", cache=True)
def add_child(node, a, h, slot, key, node_parent, node_last, node_depth, node_hash, node_dead, map_slots,
              heap_key, heap_node, ints):
    """Create the node of prefix(``node``) + ``a``, enter it in the map at ``slot`` (if >= 0) and queue it
    with priority ``key``; the caller fills its family-specific fields. Returns its id."""
    child = new_node(node, a, h, slot, node_parent, node_last, node_depth, node_hash, node_dead, map_slots, ints)
    queue_node(heap_key, heap_node, ints, key, child)
    return child
