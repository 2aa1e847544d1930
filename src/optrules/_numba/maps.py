"""Dominance maps keyed on what a prefix leaves uncaptured (FNV hashes of the remaining set)."""

from __future__ import annotations

import numpy as np
from numba import njit

from .cache import drop_stale_cache
from .heap import rebuild_uncaptured

drop_stale_cache(__file__, ["."])  # (this package's functions inline each other's)


# -- dominance maps keyed on what a prefix leaves uncaptured ----------------------------------------
FNV_OFFSET = np.uint64(1469598103934665603)
_FNV_PRIME = np.uint64(1099511628211)


@njit(inline="always", cache=True)
def fnv_step(h, word):
    """One step of FNV-1a over 64-bit words (a hash of a word sequence starts at ``FNV_OFFSET``)."""
    return (h ^ word) * _FNV_PRIME


@njit(inline="always", cache=True)
def spread_bits(h):
    """A bijection of uint64 that lets every bit of ``h`` reach the low bits (a map's slot is
    ``h & mask``): in FNV over words, low bits depend only on the words' low bits, so sets that differ
    in high positions pile up in few slots (the Rashomon search on COMPAS ran 6x slower with its groups
    in another order)."""
    h ^= h >> np.uint64(33)
    h *= np.uint64(0xFF51AFD7ED558CCD)
    h ^= h >> np.uint64(29)
    return h


@njit(inline="always", cache=True)
def remaining_set_hash(u, bits, a):
    """Hash of the words of ``u & ~bits[a]`` (what a prefix leaves uncaptured): FNV-1a, spread."""
    h = FNV_OFFSET
    for w in range(u.shape[0]):
        h = fnv_step(h, u[w] & ~bits[a, w])
    return spread_bits(h)


@njit(cache=True)
def same_remaining_set(x, u, a, node_parent, node_last, bits, all_ones, scratch):
    """Does the prefix ending at node ``x`` leave exactly ``u & ~bits[a]`` uncaptured?"""
    rebuild_uncaptured(x, node_parent, node_last, bits, all_ones, scratch)
    for w in range(u.shape[0]):
        if scratch[w] != (u[w] & ~bits[a, w]):
            return False
    return True


@njit(cache=True)
def map_rehash(old_slots, node_hash, new_slots):
    mask = new_slots.shape[0] - 1
    new_slots[:] = -1
    for s in range(old_slots.shape[0]):
        x = old_slots[s]
        if x >= 0:
            i = np.int64(node_hash[x] & np.uint64(mask))
            while new_slots[i] >= 0:
                i = (i + 1) & mask
            new_slots[i] = np.int32(x)
