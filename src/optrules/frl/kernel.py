"""Compiled core of the certified search for falling (and softly falling) rule lists.

Best-first on the prefix bound L* (Thm 4.6) or Ltilde* (Thm 5.2). A prefix is a node (parent pointer,
last antecedent) carrying n * L(e) (``node_value``) and a reference probability as a pair of counts
(``node_ref_p / node_ref_count``; weight sums with sample weights): the last rule's alpha for falling lists, the smallest alpha so far for
softly falling ones. Prefixes that leave the same samples uncaptured are compared in a dominance map:
one dominates another only with a value no larger *and* a reference probability no smaller (a larger
reference allows more completions); incomparable prefixes are both kept.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from .._numba import (
    EXPANDED,
    INSERTIONS,
    KEPT_A_CHILD,
    MEMORY_FULL,
    HEAP_SIZE,
    LB_EVALS,
    MAP_COUNT,
    MAX_LENGTH,
    NEED_ROOM,
    POPS_DONE,
    QUEUE_EMPTY,
    add_child,
    drop_child,
    class_sums,
    count_children,
    drop_stale_cache,
    find_remaining_set,
    heap_pop,
    live_word_list,
    mark_prefix,
    needs_room,
    popcount,
    rebuild_uncaptured,
    record_incumbent,
    remaining_set_hash,
    counts_of,
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

drop_stale_cache(__file__, ["bounds.py", "../_numba.py"])


class Settings(NamedTuple):
    """What a search keeps fixed: the positive weight w, C*N and C1*N (mistake units), softly falling
    or falling, and whether the prefix map is on."""

    w: float
    c_n: float
    c1_n: float
    soft: bool
    use_map: bool


@njit(cache=True, _nrt=False)  # it allocates nothing: no reference counting (optrules._numba.Workspace)
def expand(max_pops, counting, settings, tree, node_value, node_ref_p, node_ref_count, frontier, progress, workspace):
    """Pop and expand up to ``max_pops`` prefixes (see the module docstring and optrules.bnb).

    ``counting``, ``tree``, ``frontier``, ``progress``, ``workspace``: see :mod:`optrules._numba`; ``settings``: a
    :class:`Settings`; ``node_value``, ``node_ref_p``, ``node_ref_count``: this search's node fields.
    """
    bits, count_planes, positive_planes, minority_planes, packed_weights, all_ones, class_weights, minority_weights = counting
    w, c_n, c1_n, soft, use_map = settings
    node_parent, node_last, node_depth, node_hash, node_dead = tree
    heap_key, heap_node, map_slots = frontier
    ints, floats, best_prefix = progress
    n_antecedents, n_words = bits.shape
    use_classes = class_weights.shape[0] > 0  # sample weights: counts are the weights' sums (negatives, positives)
    u, v, scratch, live_words, in_prefix, child_counts, totals = (
        workspace.u, workspace.v, workspace.scratch, workspace.live_words, workspace.in_prefix, workspace.child_counts,
        workspace.totals)
    for a in range(n_antecedents):
        in_prefix[a] = False
    pops = 0
    while pops < max_pops:
        if ints[HEAP_SIZE] == 0:
            return QUEUE_EMPTY
        if not ints[MEMORY_FULL] and needs_room(ints, n_antecedents, node_parent, heap_key, map_slots):
            return NEED_ROOM
        bound = heap_key[0]
        node = heap_pop(heap_key, heap_node, ints[HEAP_SIZE])
        ints[HEAP_SIZE] -= 1
        pops += 1
        if node_dead[node] or bound >= floats[0]:
            continue
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
        ints[EXPANDED] += 1
        insertions_before = ints[INSERTIONS]
        if depth + 1 > ints[MAX_LENGTH]:
            ints[MAX_LENGTH] = depth + 1
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
            ints[LB_EVALS] += 1
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
            if complete < floats[0]:
                record_incumbent(complete, node, a, floats, ints, best_prefix, node_parent, node_last, node_depth)
            if else_is_best or child_bound >= floats[0] or depth + 1 >= n_antecedents:
                continue
            if ints[MEMORY_FULL]:  # no room to queue it: its bound joins the dropped prefixes'
                drop_child(ints, floats, child_bound)
                continue
            h = np.uint64(0)
            slot = -1
            if use_map:
                h = remaining_set_hash(u, bits, a)
                probe, found = find_remaining_set(h, u, a, map_slots, node_hash, node_parent, node_last, bits,
                                                  all_ones, scratch)
                if found:
                    other = map_slots[probe]
                    other_ref_at_least = node_ref_p[other] * child_ref_count >= child_ref_p * node_ref_count[other]
                    if node_value[other] <= child_value and other_ref_at_least:
                        continue  # dominated
                    child_ref_at_least = child_ref_p * node_ref_count[other] >= node_ref_p[other] * child_ref_count
                    if child_value <= node_value[other] and child_ref_at_least:
                        node_dead[other] = True
                        slot = probe
                    # otherwise incomparable: keep both, the map keeps the older one
                else:
                    slot = probe
                    ints[MAP_COUNT] += 1
            child = add_child(node, a, h, slot, child_bound, node_parent, node_last, node_depth, node_hash, node_dead,
                              map_slots, heap_key, heap_node, ints)
            node_value[child] = child_value
            node_ref_p[child] = child_ref_p
            node_ref_count[child] = child_ref_count
        if ints[INSERTIONS] > insertions_before:
            ints[KEPT_A_CHILD] += 1
        mark_prefix(node, node_parent, node_last, in_prefix, False)
    return POPS_DONE


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
