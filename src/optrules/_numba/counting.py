"""Counting with bits: the popcount and trailing-zero intrinsics, the counts of a prefix's children
(packed weight sums, bit planes), class sums."""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

from .cache import drop_stale_cache

drop_stale_cache(__file__, ["."])  # (this package's functions inline each other's)


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
