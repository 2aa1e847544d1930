"""Compiled building blocks shared by the branch-and-bound searches: bit tricks, the priority queue,
prefixes stored as parent-pointer chains."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import NamedTuple

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic


def drop_stale_cache(module_file: str, dependencies: list[str]) -> None:
    """numba's on-disk cache of a module's functions notices edits to that file only, not to functions
    it inlines from other files: drop the module's cache when one of ``dependencies`` (paths relative
    to the module) changed since the cache was written."""
    try:
        here = Path(module_file).resolve()
        cache_dir = here.parent / "__pycache__"
        digest = hashlib.sha256(b"".join((here.parent / d).resolve().read_bytes() for d in dependencies)).hexdigest()
        stamp = cache_dir / f"{here.stem}.dependencies-sha256"
        if stamp.exists() and stamp.read_text() == digest:
            return
        for stale in cache_dir.glob(f"{here.stem}.*.nb[ic]"):
            stale.unlink(missing_ok=True)  # (another process may be dropping it too)
        cache_dir.mkdir(exist_ok=True)
        from .files import write_text

        write_text(stamp, digest)  # whole or not at all: a process reading it half-written would drop the cache
    except OSError:  # read-only install: the cache cannot be stale relative to files nobody edits
        pass


@intrinsic
def popcount(typingctx, x):
    """Hardware popcount of a uint64 (LLVM ctpop)."""
    sig = types.uint64(types.uint64)

    def codegen(context, builder, signature, args):
        fn = builder.module.declare_intrinsic("llvm.ctpop", [ir.IntType(64)])
        return builder.call(fn, args)

    return sig, codegen


@intrinsic
def trailing_zeros(typingctx, x):
    """Index of the lowest set bit of a non-zero uint64 (LLVM cttz)."""
    sig = types.uint64(types.uint64)

    def codegen(context, builder, signature, args):
        fn = builder.module.declare_intrinsic("llvm.cttz", [ir.IntType(64), ir.IntType(1)])
        return builder.call(fn, [args[0], ir.Constant(ir.IntType(1), 1)])

    return sig, codegen


_PACK_SHIFT = 21  # as optrules.data.groups.PACK_SHIFT
_PACK_MASK = np.int64((1 << _PACK_SHIFT) - 1)


@njit(inline="always", cache=True)
def _planes_total(scratch, n_scan, planes, live_words, dense):
    """Sum over the weights' bit planes of 2^b x popcount(scratch & plane b), ``scratch`` holding the
    captured words: every word (``dense``) or the live ones in ``live_words`` order."""
    total = np.int64(0)
    for b in range(planes.shape[0]):
        part = np.int64(0)
        if dense:
            for w in range(n_scan):
                part += np.int64(popcount(scratch[w] & planes[b, w]))
        else:
            for j in range(n_scan):
                part += np.int64(popcount(scratch[j] & planes[b, live_words[j]]))
        total += part << b
    return total


# Without reference counting (it allocates nothing; see Workspace): its helpers take arrays
@njit(cache=True, _nrt=False)
def count_children(u, bits, live_words, n_live, scratch, count_planes, positive_planes, minority_planes,
                   packed_weights, want_minority, skip, out, first, step):
    """Samples, positives and minority members among the groups in ``u & bits[a]``, for every
    antecedent ``a`` in ``range(first, m, step)`` not in ``skip``, into ``out[a, 0:3]`` (read with
    :func:`counts_of`; one int64 each: a tall table's counts pass the 21 bits of a packed field). Weights come packed per group
    (``packed_weights``, when it has entries) or as bit planes. ``live_words`` lists the ``n_live``
    non-zero words of ``u``; ``scratch`` has a word per word of ``u``.

    All children in one call, each representation's loop chosen once: the same loop as a function
    called (or inlined) per child paid ~20 atomic reference-count updates of its array arguments a
    child, numba's pruning of them failing across its branches (132 ns a child on 2 words, 10 ns
    written out; a monks problem spent two thirds of its search in them).

    Callers pass typed values (``np.int64(0)``, ``np.bool_(False)``), not literals: numba compiles a
    callee once per argument type a call site has during type inference, and a literal ``0`` or
    ``False`` (or a counter still typed by its literal start) is a type of its own, a compilation of
    this function more (1.8 s each; a first fit compiled it four times)."""
    m, n_words = bits.shape
    dense = 4 * n_live >= n_words
    if packed_weights.shape[0] > 0:
        for a in range(first, m, step):
            if skip[a]:
                continue
            acc = np.int64(0)
            for j in range(n_live):
                w = live_words[j]
                x = u[w] & bits[a, w]
                base = w * 64
                while x != 0:
                    acc += packed_weights[base + np.int64(trailing_zeros(x))]
                    x &= x - np.uint64(1)
            out[a, 0] = acc & _PACK_MASK  # (packed weights: fewer than 2^21 samples, data/groups.py)
            out[a, 1] = (acc >> _PACK_SHIFT) & _PACK_MASK
            out[a, 2] = acc >> (2 * _PACK_SHIFT)
        return
    if count_planes.shape[0] == 1 and positive_planes.shape[0] == 1 and minority_planes.shape[0] == 1:
        # weights 0/1 (one sample per group, the usual case at large N): one fused pass, three popcounts
        # a word (4.6x fewer cycles than a pass per plane in the measurement)
        keep_minority = np.int64(1) if want_minority else np.int64(0)
        for a in range(first, m, step):
            if skip[a]:
                continue
            n_cap = np.int64(0)
            n_pos = np.int64(0)
            n_min = np.int64(0)
            if dense:
                # a quarter of the words live or more: a dense pass (zero words add nothing) compiles to
                # vector popcounts, ~4-6x faster per word than following the list of live words, which
                # wins below about a fifth (measured, 707 words)
                for w in range(n_words):
                    x = u[w] & bits[a, w]
                    n_cap += np.int64(popcount(x & count_planes[0, w]))
                    n_pos += np.int64(popcount(x & positive_planes[0, w]))
                    n_min += np.int64(popcount(x & minority_planes[0, w]))
            else:
                for j in range(n_live):
                    w = live_words[j]
                    x = u[w] & bits[a, w]
                    n_cap += np.int64(popcount(x & count_planes[0, w]))
                    n_pos += np.int64(popcount(x & positive_planes[0, w]))
                    n_min += np.int64(popcount(x & minority_planes[0, w]))
            out[a, 0] = n_cap
            out[a, 1] = n_pos
            out[a, 2] = n_min * keep_minority
        return
    # several planes: the captured words once into scratch (dense: every word, then whole-plane passes
    # that compile to vector popcounts; sparse: the live ones, compacted, each plane read through the
    # list). Two loops, not one choosing its index per word: that choice kept the dense passes scalar
    # (bank-full x5, 704 words, 12 planes: a third slower at large N)
    n_scan = n_words if dense else n_live
    for a in range(first, m, step):
        if skip[a]:
            continue
        any_bit = np.uint64(0)
        if dense:
            for w in range(n_words):
                scratch[w] = u[w] & bits[a, w]
                any_bit |= scratch[w]
        else:
            for j in range(n_live):
                scratch[j] = u[live_words[j]] & bits[a, live_words[j]]
                any_bit |= scratch[j]
        n_cap = np.int64(0)
        n_pos = np.int64(0)
        n_min = np.int64(0)
        if any_bit != 0:
            n_cap = _planes_total(scratch, n_scan, count_planes, live_words, dense)
            n_pos = _planes_total(scratch, n_scan, positive_planes, live_words, dense)
            if want_minority:
                n_min = _planes_total(scratch, n_scan, minority_planes, live_words, dense)
        out[a, 0] = n_cap
        out[a, 1] = n_pos
        out[a, 2] = n_min


@njit(inline="always", cache=True)
def class_sums(v, live_words, n_live, class_weights, minority_weights, out):
    """Weighted class totals of the groups set in ``v`` (over its ``live_words``) into ``out``; returns
    the weight of their minority members. For sample weights and several classes (``classes`` mode of
    data/groups.py), where counts are real and per class."""
    out[:] = 0.0
    minority = 0.0
    for j in range(n_live):
        w = live_words[j]
        x = v[w]
        base = w * 64
        while x != 0:
            g = base + np.int64(trailing_zeros(x))
            for c in range(out.shape[0]):
                out[c] += class_weights[g, c]
            minority += minority_weights[g]
            x &= x - np.uint64(1)
    return minority


@njit(inline="always", cache=True)
def unpack_counts(acc):
    """(samples, positives, minority members) of a sum of packed weights (data/groups.py)."""
    return acc & _PACK_MASK, (acc >> _PACK_SHIFT) & _PACK_MASK, acc >> (2 * _PACK_SHIFT)


@njit(inline="always", cache=True)
def counts_of(counts, a):
    """(samples, positives, minority members) of antecedent ``a`` from :func:`count_children`."""
    return counts[a, 0], counts[a, 1], counts[a, 2]


@njit(inline="always", cache=True)
def weighted_count(words, planes):
    """Sum of the weights of the groups set in ``words`` (weights stored as bit planes)."""
    total = 0
    for b in range(planes.shape[0]):
        part = 0
        for w in range(words.shape[0]):
            part += np.int64(popcount(words[w] & planes[b, w]))
        total += part << b
    return total


@njit(inline="always", cache=True)
def live_word_list(u, out):
    """Write the indices of the non-zero words of ``u`` into ``out``; return how many."""
    n_live = np.int64(0)  # typed, not the literal 0: see count_children's note on literal arguments
    for w in range(u.shape[0]):
        if u[w] != 0:
            out[n_live] = w
            n_live += 1
    return n_live


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


# -- batches: one search on several threads ---------------------------------------------------------
# A kernel that runs on threads pops its prefixes in batches, expands a batch's prefixes side by side
# (each on its own slot: its rows of the workspace and its records of the children found) and merges
# what they found on one thread, in the batch's order. What a batch holds depends on the problem and the
# memory allowed, never on the threads: the same search for every n_jobs.

#: a batch holds at most this many prefixes, and fewer when its records (a child an antecedent, each
#: slot) would pass BATCH_RECORDS: enough for two threads to share evenly (a prefix's expansion takes
#: ~1-20 us, a parallel region's start a few; rule lists, monks-3 at lambda 0.005 on two threads against
#: one, the least of two runs each: 1.24x with batches of 16, 1.43x of 32, 1.57x of 64, the one-thread
#: search within its noise), few enough that a batch seldom expands what a list found within it would prune
MAX_BATCH = 32
BATCH_RECORDS = 1 << 17


def batch_slots(n_antecedents: int, slot_bytes: int, max_bytes: int | None, most: int = MAX_BATCH) -> int:
    """Prefixes a batch pops: at most ``most``, its records within BATCH_RECORDS and its slots (of
    ``slot_bytes`` each) within ``max_bytes``; a function of the problem and the memory allowed, never of
    the threads, so that every thread count searches alike."""
    fits = most if max_bytes is None else int(max_bytes) // max(int(slot_bytes), 1)
    return max(1, min(most, BATCH_RECORDS // max(int(n_antecedents), 1), fits))


def two_compilations(function, parallel_name: str):
    """``function`` (a kernel with ``prange`` loops) compiled twice: serially without numba's reference
    counting (see :class:`Workspace`; rule lists, monks-3 lambda 0.01: 13.3 -> 11.7 s), and in parallel
    (which needs it for its threads), compiled only when a search runs on several threads (its parfors
    compile ~2x slower). Both release the GIL: the parallel one compiles in a thread while the serial one
    searches (:class:`optrules.bnb.ThreadedKernel`), and the web app's fits run in threads.

    The parallel one is a copy named ``parallel_name``: numba's disk cache keys a function's machine code
    on its name and signature, not on ``parallel``, so the two compilations of one source need two names."""
    code = function.__code__.replace(co_name=parallel_name, co_qualname=parallel_name)
    copy = type(function)(code, function.__globals__, parallel_name, function.__defaults__, function.__closure__)
    copy.__qualname__ = parallel_name
    return (njit(cache=True, _nrt=False, nogil=True)(function),
            njit(cache=True, parallel=True, nogil=True)(copy))


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
