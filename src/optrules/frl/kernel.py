"""Compiled core of the certified search for falling (and softly falling) rule lists.

Best-first on the prefix bound L* (Thm 4.6) or Ltilde* (Thm 5.2). A prefix is a node (parent pointer,
last antecedent) carrying n * L(e) (``node_value``) and a reference probability as a pair of counts
(``node_ref_p / node_ref_count``; weight sums with sample weights): the last rule's alpha for falling lists, the smallest alpha so far for
softly falling ones. Prefixes that leave the same samples uncaptured are compared in a dominance map:
one dominates another only with a value no larger *and* a reference probability no smaller (a larger
reference allows more completions); incomparable prefixes are both kept.

Prefixes are popped in batches and expanded side by side (on several threads in :data:`expand_parallel`),
then merged in their order: the search is the same on any number of threads (see "the search loop").
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit, prange

from .._numba import (
    EXPANDED,
    HEAP_SIZE,
    INSERTIONS,
    KEPT_A_CHILD,
    LB_EVALS,
    MAP_COUNT,
    MAX_BATCH,
    MAX_LENGTH,
    MEMORY_FULL,
    MEMORY_TIGHT,
    NEED_ROOM,
    POPS_DONE,
    QUEUE_EMPTY,
    add_child,
    batch_slots,
    class_sums,
    count_children,
    counts_of,
    drop_child,
    drop_stale_cache,
    find_remaining_set,
    free_room,
    heap_pop,
    live_word_list,
    mark_prefix,
    needs_room,
    popcount,
    rebuild_uncaptured,
    record_incumbent,
    remaining_set_hash,
    slot_row,
    two_compilations,
    weighted_count,
)
from .bounds import (
    corollary45_predicts_positive,
    equation9_else_is_best,
    falls_below,
    proposition42_feasible,
    theorem46_prefix_bound,
    theorem52_soft_prefix_bound,
)

drop_stale_cache(__file__, ["bounds.py", "../_numba"])


class Settings(NamedTuple):
    """What a search keeps fixed: the positive weight w, C*N and C1*N (mistake units), softly falling
    or falling, and whether the prefix map is on."""

    w: float
    c_n: float
    c1_n: float
    soft: bool
    use_map: bool


# -- the search loop --------------------------------------------------------------------------------
# Prefixes are popped in batches (optrules._numba's "batches") and expanded in two parts: each prefix's
# children (counts, values, bounds, the tests against the incumbent as the batch began, the dominance map
# as the batch found it) on its own slot, on as many threads as the search has (_expand_slot); then, in
# the batch's order on one thread, what the children change (the incumbent, the map, the queue:
# _merge_slot), each child tested again against the incumbent of its moment.

# a child's record, from its slot's expansion to the merge: its flags
RECORD_INCUMBENT = 1  # its list (prefix + else) may beat the incumbent
RECORD_QUEUE = 2  # to be queued, unless the incumbent now prunes it or the map now dominates it
# the fields of its values and of its integers
VALUE, REF_P, REF_COUNT, COMPLETE, BOUND = range(5)
RULE, FLAGS, MAP_SLOT, FOUND = range(4)
# a child against the prefix the map holds for its uncaptured set
DOMINATED, DOMINATES, INCOMPARABLE = range(3)


class Batch(NamedTuple):
    """A batch's slots: the prefix each expands (``nodes``, -1 unused) and what its expansion leaves the
    merge: its records (``sizes``; each record's ``values``, ``integers`` and map key in ``hashes``) and
    its bounds computed (``bounds``)."""

    nodes: np.ndarray
    sizes: np.ndarray
    bounds: np.ndarray
    values: np.ndarray
    integers: np.ndarray
    hashes: np.ndarray


#: bytes a batch's slot holds, an antecedent (records: values, integers, hash; scratch: the in-prefix
#: flag, the children's counts), and a word of the samples
SLOT_BYTES_PER_ANTECEDENT, SLOT_BYTES_PER_WORD = 105, 48


def batch_size(n_antecedents: int, n_words: int = 1, max_bytes: int | None = None) -> int:
    """Prefixes a batch pops (:func:`~optrules._numba.batch_slots`)."""
    slot_bytes = SLOT_BYTES_PER_ANTECEDENT * int(n_antecedents) + SLOT_BYTES_PER_WORD * int(n_words)
    return batch_slots(n_antecedents, slot_bytes, max_bytes, MAX_BATCH)


def batch(n_antecedents: int, slots: int) -> Batch:
    return Batch(np.full(slots, -1, np.int64), np.zeros(slots, np.int64), np.zeros(slots, np.int64),
                 np.zeros((slots, n_antecedents, 5)), np.zeros((slots, n_antecedents, 4), np.int64),
                 np.zeros((slots, n_antecedents), np.uint64))


@njit(inline="always", cache=True)
def _against_map(other, child_value, child_ref_p, child_ref_count, node_value, node_ref_p, node_ref_count):
    """A child against ``other``, the prefix the map holds for its uncaptured set: one dominates the other
    only with a value no larger *and* a reference probability no smaller (a larger reference allows more
    completions); the other comparisons keep both."""
    other_ref_at_least = node_ref_p[other] * child_ref_count >= child_ref_p * node_ref_count[other]
    if node_value[other] <= child_value and other_ref_at_least:
        return DOMINATED
    child_ref_at_least = child_ref_p * node_ref_count[other] >= node_ref_p[other] * child_ref_count
    if child_value <= node_value[other] and child_ref_at_least:
        return DOMINATES
    return INCOMPARABLE


def _expand(max_pops, max_expansions, counting, settings, tree, node_value, node_ref_p, node_ref_count, frontier,
            progress, workspace, slots):
    """Pop and expand prefixes in batches (see above and the module docstring) until ``max_pops`` pops
    are done or ``max_expansions`` prefixes are expanded (the node budget's rest). A batch once begun is
    filled, whatever the pops: its prefixes must not depend on how the driver slices the search.

    ``counting``, ``tree``, ``frontier``, ``progress``: see :mod:`optrules._numba`; ``workspace``: a
    :class:`~optrules._numba.Workspace` with a row a slot; ``slots``: a :class:`Batch`; ``settings``: a
    :class:`Settings`; ``node_value``, ``node_ref_p``, ``node_ref_count``: this search's node fields.
    In :data:`expand_parallel`, a batch's slots are expanded on numba's threads (its caller makes sure
    no other thread is in a parallel region: :func:`optrules.bnb.parallel_region`).
    """
    bits = counting[0]
    node_parent, node_last, node_depth, node_hash, node_dead = tree
    heap_key, heap_node, map_slots = frontier
    ints, floats, best_prefix = progress
    n_antecedents = bits.shape[0]
    size = slots.nodes.shape[0]
    for s in range(size):
        in_prefix = slot_row(workspace.in_prefix, s, size)
        for a in range(n_antecedents):
            in_prefix[a] = False
    pops = 0
    expansions = 0
    while pops < max_pops and expansions < max_expansions:
        if ints[HEAP_SIZE] == 0:
            return QUEUE_EMPTY
        # room for a whole batch, or for one expansion once memory is tight (SearchState.batch_room)
        need = n_antecedents if ints[MEMORY_TIGHT] else n_antecedents * size
        if not ints[MEMORY_FULL] and needs_room(ints, need, node_parent, heap_key, map_slots):
            return NEED_ROOM
        # as many prefixes as the arrays have room for the children of (the driver grows them when one
        # expansion no longer fits: a batch is then smaller, at the same places on any number of threads)
        fits = size if ints[MEMORY_FULL] else min(size, free_room(ints, node_parent, heap_key, map_slots)
                                                  // n_antecedents)
        n_slots = 0
        while n_slots < fits and expansions < max_expansions and ints[HEAP_SIZE] > 0:
            bound = heap_key[0]
            node = heap_pop(heap_key, heap_node, ints[HEAP_SIZE])
            ints[HEAP_SIZE] -= 1
            pops += 1
            if node_dead[node] or bound >= floats[0]:
                continue
            slots.nodes[n_slots] = node
            n_slots += 1
            expansions += 1
            ints[EXPANDED] += 1
            if node_depth[node] + 1 > ints[MAX_LENGTH]:
                ints[MAX_LENGTH] = node_depth[node] + 1
        best = floats[0]  # the incumbent as the batch begins: what the slots' tests compare with
        for s in prange(n_slots):
            _expand_slot(s, best, counting, settings, tree, node_value, node_ref_p, node_ref_count, frontier,
                         workspace, slots)
        for s in range(n_slots):
            _merge_slot(s, counting, settings, tree, node_value, node_ref_p, node_ref_count, frontier, progress,
                        workspace, slots)
    return POPS_DONE


@njit(cache=True, _nrt=False)  # it allocates nothing: no reference counting (optrules._numba.Workspace)
def _expand_slot(s, best, counting, settings, tree, node_value, node_ref_p, node_ref_count, frontier, workspace,
                 slots):
    """The expansion of slot ``s``'s prefix: what it leaves uncaptured, every child's counts, value,
    reference, completed list and bound (Thm 4.6 / 5.2) and tests against ``best``, the incumbent as
    the batch began, into the slot's records; a child to queue is looked up in the dominance map as the
    batch found it, and left out when the prefix there dominates it. Writes only the slot's rows: slots
    run on threads side by side, and the map, the queue and the nodes change only in the merge."""
    bits, count_planes, positive_planes, minority_planes, packed_weights, all_ones, class_weights, minority_weights = counting
    w, c_n, c1_n, soft, use_map = settings
    node_parent, node_last, node_depth, node_hash, node_dead = tree
    map_slots = frontier[2]
    n_antecedents = bits.shape[0]
    use_classes = class_weights.shape[0] > 0  # sample weights: counts are the weights' sums (negatives, positives)
    size = slots.nodes.shape[0]
    u, v = slot_row(workspace.u, s, size), slot_row(workspace.v, s, size)
    scratch, live_words = slot_row(workspace.scratch, s, size), slot_row(workspace.live_words, s, size)
    in_prefix, child_counts = slot_row(workspace.in_prefix, s, size), slot_row(workspace.child_counts, s, size)
    totals = slot_row(workspace.totals, s, size)
    values, integers = slots.values[s], slots.integers[s]
    node = slots.nodes[s]
    depth = node_depth[node]
    rebuild_uncaptured(node, node_parent, node_last, bits, all_ones, u)
    mark_prefix(node, node_parent, node_last, in_prefix, True)
    n_live = live_word_list(u, live_words)
    if use_classes:
        class_sums(u, live_words, n_live, class_weights, minority_weights, totals)
        rest_pos, rest_neg = totals[1], totals[0]
    else:
        rest_pos = float(weighted_count(u, positive_planes))
        rest_neg = float(weighted_count(u, count_planes)) - rest_pos
        count_children(u, bits, live_words, n_live, v, count_planes, positive_planes, minority_planes,
                       packed_weights, np.bool_(False), in_prefix, child_counts, np.int64(0), np.int64(1))
    value = node_value[node]
    ref_p = node_ref_p[node]
    ref_count = node_ref_count[node]
    n_bounds = 0
    n_records = 0
    for a in range(n_antecedents):
        if in_prefix[a]:
            continue
        if use_classes:
            for j in range(n_live):
                v[live_words[j]] = u[live_words[j]] & bits[a, live_words[j]]
            class_sums(v, live_words, n_live, class_weights, minority_weights, totals)
            p, q = totals[1], totals[0]
        else:
            n_captured, n_positive, _ = counts_of(child_counts, a)
            p, q = float(n_positive), float(n_captured - n_positive)
        count = p + q
        n_bounds += 1
        rp = rest_pos - p
        rq = rest_neg - q
        if count == 0 or rp + rq == 0:
            continue  # a rule must capture something and leave the else clause something
        if soft:
            child_value = value + min(float(q), w * p) + c_n + c1_n * max(0.0, p / count - ref_p / ref_count)
            if p * ref_count < ref_p * count:
                child_ref_p, child_ref_count = p, count
            else:
                child_ref_p, child_ref_count = ref_p, ref_count
            amin = child_ref_p / child_ref_count
            complete = child_value + min(w * rp, float(rq)) + c1_n * max(0.0, rp / (rp + rq) - amin)
            child_bound = theorem52_soft_prefix_bound(child_value, amin, rp, rq, w, c_n, c1_n)
            else_is_best = child_bound >= complete
        else:
            if not falls_below(p, count, ref_p, ref_count):
                continue
            if not corollary45_predicts_positive(p, q, w):
                continue
            if not proposition42_feasible(p, count, rp, rq):
                continue
            child_value = value + q + c_n  # min(q, w p) = q by Cor 4.5
            child_ref_p, child_ref_count = p, count
            complete = child_value + min(w * rp, float(rq))
            else_is_best = equation9_else_is_best(p, count, rp, rq, w, c_n)
            child_bound = theorem46_prefix_bound(child_value, p, count, rp, rq, w, c_n)
        record = RECORD_INCUMBENT if complete < best else 0
        queue = not (else_is_best or child_bound >= best or depth + 1 >= n_antecedents)
        h = np.uint64(0)
        probe = -1
        found = -1  # the prefix the map holds for the child's uncaptured set, or -1
        if queue and use_map:
            h = remaining_set_hash(u, bits, a)
            probe, in_map = find_remaining_set(h, u, a, map_slots, node_hash, node_parent, node_last, bits, all_ones,
                                               scratch)
            if in_map:
                found = map_slots[probe]
                queue = _against_map(found, child_value, child_ref_p, child_ref_count, node_value, node_ref_p,
                                     node_ref_count) != DOMINATED
        if queue:
            record |= RECORD_QUEUE
        if record == 0:
            continue
        integers[n_records, RULE] = a
        integers[n_records, FLAGS] = record
        integers[n_records, MAP_SLOT] = probe
        integers[n_records, FOUND] = found
        slots.hashes[s, n_records] = h
        values[n_records, VALUE] = child_value
        values[n_records, REF_P] = child_ref_p
        values[n_records, REF_COUNT] = child_ref_count
        values[n_records, COMPLETE] = complete
        values[n_records, BOUND] = child_bound
        n_records += 1
    slots.bounds[s] = n_bounds
    slots.sizes[s] = n_records


@njit(cache=True, _nrt=False)
def _merge_slot(s, counting, settings, tree, node_value, node_ref_p, node_ref_count, frontier, progress, workspace,
                slots):
    """What slot ``s``'s children change, in their order: the incumbent, then each child the incumbent
    still lets through queued (or dropped when memory is full), the map keeping the dominating one of two
    prefixes leaving the same samples (the older one when neither dominates)."""
    bits, all_ones = counting[0], counting[5]
    use_map = settings[4]
    node_parent, node_last, node_depth, node_hash, node_dead = tree
    heap_key, heap_node, map_slots = frontier
    ints, floats, best_prefix = progress
    size = slots.nodes.shape[0]
    u, scratch = slot_row(workspace.u, s, size), slot_row(workspace.scratch, s, size)
    values, integers = slots.values[s], slots.integers[s]
    node = slots.nodes[s]
    ints[LB_EVALS] += slots.bounds[s]
    insertions_before = ints[INSERTIONS]
    for r in range(slots.sizes[s]):
        a = integers[r, RULE]
        record = integers[r, FLAGS]
        if record & RECORD_INCUMBENT and values[r, COMPLETE] < floats[0]:
            record_incumbent(values[r, COMPLETE], node, a, floats, ints, best_prefix, node_parent, node_last,
                             node_depth)
        if not record & RECORD_QUEUE or values[r, BOUND] >= floats[0]:
            continue
        if ints[MEMORY_FULL]:  # no room to queue it: its bound joins the dropped prefixes'
            drop_child(ints, floats, values[r, BOUND])
            continue
        child_value, child_ref_p, child_ref_count = values[r, VALUE], values[r, REF_P], values[r, REF_COUNT]
        h = slots.hashes[s, r]
        probe = integers[r, MAP_SLOT]
        found = integers[r, FOUND]
        if use_map and map_slots[probe] != found:
            # an earlier child of the batch took the slot the lookup ended at: look again
            probe, in_map = find_remaining_set(h, u, a, map_slots, node_hash, node_parent, node_last, bits, all_ones,
                                               scratch)
            found = map_slots[probe] if in_map else -1
        # (the map's slots change in the merge alone, filled or given a dominating prefix: a lookup whose
        # last slot holds what it held then ends there again)
        slot = -1
        if use_map:
            if found < 0:
                slot = probe
                ints[MAP_COUNT] += 1
            else:
                against = _against_map(found, child_value, child_ref_p, child_ref_count, node_value, node_ref_p,
                                       node_ref_count)
                if against == DOMINATED:
                    continue
                if against == DOMINATES:
                    node_dead[found] = True
                    slot = probe
                # otherwise incomparable: keep both, the map keeps the older one
        child = add_child(node, a, h, slot, values[r, BOUND], node_parent, node_last, node_depth, node_hash,
                          node_dead, map_slots, heap_key, heap_node, ints)
        node_value[child] = child_value
        node_ref_p[child] = child_ref_p
        node_ref_count[child] = child_ref_count
    if ints[INSERTIONS] > insertions_before:
        ints[KEPT_A_CHILD] += 1
    mark_prefix(node, node_parent, node_last, slot_row(workspace.in_prefix, s, size), False)


# One source, two compilations (optrules._numba.two_compilations): the serial one, every search on one
# thread, and the parallel one, compiled only when a search runs on several threads.
expand, expand_parallel = two_compilations(_expand, "expand_parallel")


@njit(cache=True)
def queue_summary(heap_key, heap_node, size, node_dead, node_depth, by_length):
    """Smallest bound among live queued prefixes (inf if none); ``by_length[K]`` counts them by length."""
    by_length[:] = 0
    smallest = np.inf
    for i in range(size):
        x = heap_node[i]
        if node_dead[x]:
            continue
        if heap_key[i] < smallest:
            smallest = heap_key[i]
        by_length[node_depth[x]] += 1
    return smallest


@njit(cache=True)
def score_children(cp, cq, available, rest_p, rest_q, value, ref_p, ref_count, w, c_n, c1_n, soft,
                   curiosity_weight, best, child_value, child_bound, curiosity):
    """One step of the Monte-Carlo search: for each antecedent with ``cp``/``cq`` positives/negatives
    in context, its list's value, prefix bound (inf if it is not a candidate) and curiosity (Eq 11 or
    12). Returns the number of candidates."""
    n_candidates = 0
    for j in range(cp.shape[0]):
        child_bound[j] = np.inf
        count = cp[j] + cq[j]
        if not available[j] or count == 0 or count == rest_p + rest_q:
            continue
        p, q = cp[j], cq[j]
        rp, rq = rest_p - p, rest_q - q
        alpha = p / count
        coverage = p / max(rest_p, 1)
        if soft:
            amin_old = ref_p / ref_count
            child_value[j] = value + min(float(q), w * p) + c_n + c1_n * max(0.0, alpha - amin_old)
            bound = theorem52_soft_prefix_bound(child_value[j], min(alpha, amin_old), rp, rq, w, c_n, c1_n)
            curiosity[j] = (curiosity_weight * max(0.0, min(alpha, 101.0 * amin_old - 100.0 * alpha))
                            + (1.0 - curiosity_weight) * coverage)
        else:
            if not (falls_below(p, count, ref_p, ref_count) and corollary45_predicts_positive(p, q, w)
                    and proposition42_feasible(p, count, rp, rq)):
                continue
            child_value[j] = value + q + c_n
            bound = theorem46_prefix_bound(child_value[j], p, count, rp, rq, w, c_n)
            curiosity[j] = curiosity_weight * alpha + (1.0 - curiosity_weight) * coverage
        if bound < best:
            child_bound[j] = bound
            n_candidates += 1
    return n_candidates


@njit(cache=True)
def counts_within(bits, rest_positive, rest_negative, cp, cq):
    """Positives ``cp`` and negatives ``cq`` that each antecedent captures among the samples left
    (the Monte-Carlo search without sample weights; no temporary of the antecedents' size)."""
    for a in range(bits.shape[0]):
        p = 0
        q = 0
        for w in range(bits.shape[1]):
            p += popcount(bits[a, w] & rest_positive[w])
            q += popcount(bits[a, w] & rest_negative[w])
        cp[a], cq[a] = p, q


@njit(cache=True)
def class_counts_within(bits, rest, class_weights, minority_weights, cp, cq):
    """Weighted positives ``cp`` and negatives ``cq`` that each antecedent captures among the groups
    left in ``rest`` (the Monte-Carlo search with sample weights)."""
    n_words = rest.shape[0]
    live_words = np.empty(n_words, dtype=np.int64)
    n_live = live_word_list(rest, live_words)
    v = np.empty(n_words, dtype=np.uint64)
    totals = np.zeros(2)
    for a in range(bits.shape[0]):
        for j in range(n_live):
            v[live_words[j]] = rest[live_words[j]] & bits[a, live_words[j]]
        class_sums(v, live_words, n_live, class_weights, minority_weights, totals)
        cp[a], cq[a] = totals[1], totals[0]
