"""The priority queue of prefixes (a binary heap of keys and nodes) and prefixes stored as parent-pointer
chains."""

from __future__ import annotations

from numba import njit

from .cache import drop_stale_cache

drop_stale_cache(__file__, ["."])  # (this package's functions inline each other's)


# -- heap -------------------------------------------------------------------------------------------
@njit(inline="always", cache=True)
def _before(key_a, node_a, key_b, node_b):
    # node ids grow with insertion time, so equal priorities come out first-in, first-out
    return key_a < key_b or (key_a == key_b and node_a < node_b)


@njit(cache=True)
def heap_push(heap_key, heap_node, size, key, node):
    i = size
    while i > 0:
        parent = (i - 1) >> 1
        if _before(key, node, heap_key[parent], heap_node[parent]):
            heap_key[i] = heap_key[parent]
            heap_node[i] = heap_node[parent]
            i = parent
        else:
            break
    heap_key[i] = key
    heap_node[i] = node


@njit(cache=True)
def heap_pop(heap_key, heap_node, size):
    """Remove the top of a heap of ``size`` entries; return its node (the heap then has size - 1)."""
    top = heap_node[0]
    size -= 1
    if size > 0:
        heap_key[0] = heap_key[size]
        heap_node[0] = heap_node[size]
        _sift_down(heap_key, heap_node, 0, size)
    return top


@njit(inline="always", cache=True)
def _sift_down(heap_key, heap_node, i, size):
    """Move entry ``i`` down a heap of ``size`` entries to where it belongs."""
    key, node = heap_key[i], heap_node[i]
    while True:
        child = 2 * i + 1
        if child >= size:
            break
        if child + 1 < size and _before(heap_key[child + 1], heap_node[child + 1], heap_key[child], heap_node[child]):
            child += 1
        if _before(heap_key[child], heap_node[child], key, node):
            heap_key[i] = heap_key[child]
            heap_node[i] = heap_node[child]
            i = child
        else:
            break
    heap_key[i] = key
    heap_node[i] = node


@njit(cache=True)
def rebuild_uncaptured(node, node_parent, node_last, bits, all_ones, out):
    """Samples not captured by the prefix ending at ``node``."""
    # a loop, not ``out[:] = all_ones``: numba's array copy compiles a shape-mismatch message (~3 s cold)
    for w in range(out.shape[0]):
        out[w] = all_ones[w]
    x = node
    while x > 0:
        a = node_last[x]
        for w in range(out.shape[0]):
            out[w] &= ~bits[a, w]
        x = node_parent[x]


@njit(cache=True)
def prefix_of(node, node_parent, node_last, node_depth, out):
    """Write the antecedents of the prefix ending at ``node`` into ``out`` (in order); return its length."""
    depth = node_depth[node]
    x = node
    k = depth
    while x > 0:
        k -= 1
        out[k] = node_last[x]
        x = node_parent[x]
    return depth
