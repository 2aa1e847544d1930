"""The compiled core of the branch-and-bound: expand prefixes, evaluate all children at once.

Memory layout (all flat numpy arrays, grown by the Python driver when the kernel asks):

* nodes: a prefix is a node with a parent pointer, its last antecedent, its mistakes and b0 (int32 for
  unit weights; antecedent and length in 2 bytes each below 65,535 antecedents), so a prefix costs ~25
  bytes however long it is; the uncaptured set of a popped prefix is rebuilt from its chain of
  antecedents;
* queue: a binary heap of (priority, node) pairs, equal priorities first in, first out;
* symmetry map: an open-addressing hash table of node ids keyed on the prefix's antecedent *set*
  (Cor 16) or on the set of samples it captures (Thm 15); a replaced node is marked dead and skipped
  when popped (the paper's lazy "logical queue").

The kernel runs for at most ``max_pops`` pops and returns, so that the driver can keep time, trace the
search and react to Ctrl-C between calls. It pops prefixes in batches and expands a batch's prefixes
side by side (on several threads in :data:`expand_parallel`), then merges what they found in their
order: the search is the same on any number of threads (see "the search loop" below).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit, prange

from .._numba import (
    BEST_LEN,
    DOMINATED,
    DROPPED,
    DROPPED_FLOOR,
    EXPANDED,
    HEAP_SIZE,
    INSERTIONS,
    KEPT_A_CHILD,
    LB_EVALS,
    LEAVES_RESOLVED,
    MAP_COUNT,
    MAX_BATCH,
    MAX_LENGTH,
    MEMORY_FULL,
    MEMORY_TIGHT,
    N_NODES,
    NEED_ROOM,
    POPS_DONE,
    QUEUE_EMPTY,
    REEXPANDED,
    SET_ASIDE,
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
    heap_push,
    live_word_list,
    mark_prefix,
    needs_room,
    popcount,
    prefix_of,
    rebuild_uncaptured,
    record_incumbent,
    remaining_set_hash,
    slot_row,
    trailing_zeros,
    two_compilations,
    unpack_counts,
    weighted_count,
)
from .bounds import (
    corollary16_permutation_dominates,
    lemma2_lookahead,
    theorem1_hierarchical_lower_bound,
    theorem4_max_prefix_length,
    theorem7_extension_budget,
    theorem10_minimum_support,
    theorem11_minimum_accurate_support,
    theorem18_sibling_dominates,
    theorem20_equivalent_points,
    theorem21_excessive_support,
)
from .parameters import MAP_TYPE_NAMES, POLICY_NAMES

# numba caches this module's functions keyed on this file alone: drop them when a dependency changes
drop_stale_cache(__file__, ["bounds.py", "../_numba"])


class Settings(NamedTuple):
    """What a search keeps fixed: N (the total weight), lambda*N, the queue's policy, the map's key,
    the bounds in use (``USE_*`` bits), the longest list searched (at most the number of
    antecedents; fewer when the user bounds the list), and how far above a popped prefix's key its
    children are queued when children are deferred (``DEFER_CHILDREN*``, in mistake units)."""

    n_samples: float
    lambda_n: float
    policy: int
    map_type: int
    flags: int
    max_length: int
    defer_window: float


# policies
LOWER_BOUND, OBJECTIVE, CURIOSITY, BFS, DFS = 0, 1, 2, 3, 4
POLICIES = dict(zip(POLICY_NAMES, (LOWER_BOUND, OBJECTIVE, CURIOSITY, BFS, DFS)))

# symmetry-aware map keys
MAP_NONE, MAP_PREFIX, MAP_CAPTURED = 0, 1, 2
MAP_TYPES = dict(zip(MAP_TYPE_NAMES, (MAP_NONE, MAP_PREFIX, MAP_CAPTURED)))


# bits of the flags argument
USE_MIN_SUPPORT, USE_ACCURATE_SUPPORT, USE_EXCESSIVE_SUPPORT, USE_LOOKAHEAD, USE_EQUIVALENT = 1, 2, 4, 8, 16
# leaves (see _best_one_rule_extension) are resolved instead of queued: always, or once memory is tight
RESOLVE_LEAVES, RESOLVE_LEAVES_WHEN_TIGHT = 32, 64
# children are queued in steps of their bound (see _expand): always, or once memory is tight
DEFER_CHILDREN, DEFER_CHILDREN_WHEN_TIGHT = 128, 256
# children whose subtree a sibling's dominates are not queued (Thm 18: _dominated_by_subconjunction,
# _dominated_by_pure_sibling)
USE_SIBLING_DOMINANCE = 512




# -- helpers ----------------------------------------------------------------------------------------
@njit(cache=True)
def _same_antecedent_set(x, depth, in_prefix, a, node_parent, node_last, node_depth):
    if node_depth[x] != depth:
        return False
    while x > 0:
        b = node_last[x]
        if b != a and not in_prefix[b]:
            return False
        x = node_parent[x]
    return True


@njit(inline="always", cache=True)
def _find_antecedent_set(h, depth, in_prefix, a, map_slots, node_hash, node_parent, node_last, node_depth):
    """Probe the map for a prefix with the antecedents of the current prefix plus ``a`` (Cor 16)."""
    mask = map_slots.shape[0] - 1
    probe = np.int64(h & np.uint64(mask))
    while map_slots[probe] >= 0:
        other = map_slots[probe]
        if node_hash[other] == h and _same_antecedent_set(other, depth, in_prefix, a, node_parent, node_last, node_depth):
            return probe, True
        probe = (probe + 1) & mask
    return probe, False


@njit(inline="always", cache=True)
def _equivalent_in_map(map_type, h, child_lb, depth, a, u, in_prefix, map_slots, node_hash, node_parent, node_last,
                       node_depth, node_mistakes, lambda_n, bits, all_ones, scratch):
    """The symmetry map's slot for the child (prefix + ``a``), the prefix held there for the same antecedent set
    (MAP_PREFIX) or the same samples left (MAP_CAPTURED), -1 if none, and whether the child beats it (Cor 16 with
    the other's Thm 1 bound)."""
    if map_type == MAP_PREFIX:
        slot, found = _find_antecedent_set(h, depth + 1, in_prefix, a, map_slots, node_hash, node_parent, node_last,
                                           node_depth)
    else:
        slot, found = find_remaining_set(h, u, a, map_slots, node_hash, node_parent, node_last, bits, all_ones,
                                         scratch)
    if not found:
        return slot, -1, True
    equivalent = map_slots[slot]
    other_lb = theorem1_hierarchical_lower_bound(node_mistakes[equivalent], node_depth[equivalent], lambda_n)
    return slot, equivalent, corollary16_permutation_dominates(child_lb, other_lb)


@njit(inline="always", cache=True)
def _extensions_may_win(lower_bound, b0, lambda_n, best, use_equivalent, use_lookahead):
    """May some extension of this prefix beat the incumbent? (Thm 20 with Lemma 2, or each alone, or Thm 1.)"""
    if use_equivalent:
        return theorem20_equivalent_points(lower_bound, b0, lambda_n, best, use_lookahead)
    if use_lookahead:
        return lemma2_lookahead(lower_bound, lambda_n, best)
    return lower_bound < best


@njit(inline="always", cache=True)
def _admissible_extensions_may_win(lower_bound, b0, rules_needed, lambda_n, best, use_equivalent, use_lookahead):
    """May an admissible extension of this prefix beat the incumbent? One that must still add
    ``rules_needed`` >= 1 rules to meet the requirements costs at least lambda*N each: Lemma 2's argument
    for that many rules (:mod:`optrules.corels.requirements`)."""
    if rules_needed > 0:
        return _extensions_may_win(lower_bound + lambda_n * rules_needed, b0, lambda_n, best, use_equivalent, False)
    return _extensions_may_win(lower_bound, b0, lambda_n, best, use_equivalent, use_lookahead)


@njit(inline="always", cache=True)
def _prefix_coverage(node, node_parent, node_last, requirement_masks):
    """The requirements the prefix ending at ``node`` meets (the union of its antecedents' masks)."""
    covered = np.int64(0)
    x = node
    while x > 0:
        covered |= requirement_masks[node_last[x]]
        x = node_parent[x]
    return covered


_ORDER_SCALE = float(1 << 31)


@njit(inline="always", cache=True)
def _requeued(pop_key, own_key, lambda_n):
    """Was this pop of a prefix queued again for the children it deferred (lower-bound policy)? Its own
    key is b(d_p) + b0(d_p); queued again, it carries the smallest key of its deferred children, which
    is at least lambda*N more: a child adds a rule, and the rule errs on the minority of every group of
    identical samples it captures, which b0(d_p) counted."""
    return pop_key > own_key + 0.5 * lambda_n


@njit(cache=True)
def _priority(policy, lower_bound, b0, objective, n_captured, length, node):
    if policy == LOWER_BOUND:
        return lower_bound + b0
    if policy == OBJECTIVE:
        return objective
    if policy == CURIOSITY:
        return lower_bound / max(n_captured, 1)
    if policy == BFS:
        return length * _ORDER_SCALE + node  # shallowest first, oldest first
    return -(length * _ORDER_SCALE + node)  # DFS: deepest first, newest first


@njit(inline="always", cache=True)
def _own_key(x, node_mistakes, node_b0, node_depth, lambda_n):
    """b(d_p) + b0(d_p): the key prefix ``x`` was first queued with (lower-bound policy)."""
    return theorem1_hierarchical_lower_bound(node_mistakes[x], node_depth[x], lambda_n) + node_b0[x]


@njit(inline="always", cache=True)
def _queued_bound(key, x, node_mistakes, node_b0, node_depth, lambda_n, keys_bound):
    """b(d_p) + b0(d_p) of the queued prefix ``x`` (Thms 1, 20); with ``keys_bound`` (the lower-bound
    policy) its queue key if larger: a prefix queued again for its deferred children is bounded by
    theirs."""
    bound = _own_key(x, node_mistakes, node_b0, node_depth, lambda_n)
    return key if keys_bound and key > bound else bound


@njit(inline="always", cache=True)
def _deferring(key, x, node_mistakes, node_b0, node_depth, lambda_n):
    """Is the queue entry (``key``, ``x``) a prefix queued again for its deferred children?"""
    return _requeued(key, _own_key(x, node_mistakes, node_b0, node_depth, lambda_n), lambda_n)


@njit(inline="always", cache=True)
def _bin(bound, lowest, width):
    return int((bound - lowest) / width)


@njit(inline="always", cache=True)
def _flag(bits, x):
    bits[x >> 6] |= np.uint64(1) << np.uint64(x & 63)


@njit(cache=True)
def set_aside(heap_key, heap_node, node_parent, node_dead, node_mistakes, node_b0, node_depth, lambda_n, keys_bound,
              regenerate, share, ints, floats, requeue, counts):
    """With the memory budget reached: take the queued prefixes of largest bound, about ``share`` of
    the live queue, out of the queue and mark them dead for :meth:`~optrules.bnb.SearchState.compact`
    to free. The cut falls between two bins of a histogram of the bounds, so that equal bounds stay
    together, and never takes the smallest. Returns how many prefixes were taken out.

    ``regenerate`` (the lower-bound policy with deferred children, see :data:`DEFER_WINDOW_LAMBDAS`):
    nothing is lost. A prefix taken out is a child its parent deferred after all: the parent is queued
    again at a key no larger than that child's (and above its own key by lambda*N, as a deferring
    prefix's is), and popped again it makes its children from that key up anew. A prefix queued again
    for deferred children that falls above the cut is queued again at the cut's key instead. A child
    of a dead parent (a permutation with a smaller bound replaced it in the map, Cor 16 / Thm 15) is
    just freed: each of its lists is matched by a list as good under that permutation.

    Otherwise (other policies, requirements) the prefixes taken out are dropped: their smallest
    bound, which bounds every list they lead to as their own bounds did, joins the lower bound
    (``floats[DROPPED_FLOOR]``, counted in ``ints[DROPPED]``). ``requeue``: a zeroed bitset over the
    nodes, ``counts`` the histogram's bins (scratch)."""
    size = ints[HEAP_SIZE]
    # the cut is placed on the prefixes it can free: not those queued again for deferred children
    lowest, highest, live = np.inf, -np.inf, 0
    for i in range(size):
        x = heap_node[i]
        if not node_dead[x] and not (regenerate and _deferring(heap_key[i], x, node_mistakes, node_b0, node_depth,
                                                               lambda_n)):
            bound = _queued_bound(heap_key[i], x, node_mistakes, node_b0, node_depth, lambda_n, keys_bound)
            lowest, highest, live = min(lowest, bound), max(highest, bound), live + 1
    if live == 0 or not highest > lowest:
        return 0
    bins = counts.shape[0] - 1
    width = (highest - lowest) / bins
    counts[:] = 0
    for i in range(size):
        x = heap_node[i]
        if not node_dead[x] and not (regenerate and _deferring(heap_key[i], x, node_mistakes, node_b0, node_depth,
                                                               lambda_n)):
            bound = _queued_bound(heap_key[i], x, node_mistakes, node_b0, node_depth, lambda_n, keys_bound)
            counts[_bin(bound, lowest, width)] += 1
    cut = bins + 1  # bins >= cut are taken out
    above = 0
    while cut > 1 and above < share * live:
        cut -= 1
        above += counts[cut]
    if above == 0:
        return 0
    # floor: the smallest bound taken out; every list the prefixes taken out lead to costs at least this
    # + lambda*N
    floor = np.inf
    kept, taken = 0, 0
    for i in range(size):
        x = heap_node[i]
        if node_dead[x]:
            continue
        key = heap_key[i]
        deferring = regenerate and _deferring(key, x, node_mistakes, node_b0, node_depth, lambda_n)
        bound = _queued_bound(key, x, node_mistakes, node_b0, node_depth, lambda_n, keys_bound)
        if bound < lowest or _bin(bound, lowest, width) < cut:
            heap_key[kept] = key
            heap_node[kept] = x
            kept += 1
            continue
        floor = min(floor, bound)
        if deferring:
            _flag(requeue, x)
        else:
            node_dead[x] = True
            taken += 1
            if regenerate and not node_dead[node_parent[x]]:
                _flag(requeue, node_parent[x])
    # (a prefix queued again below the cut has no child above it: its key is above every child it queued,
    # and a child left in the queue lies below the cut, so no prefix is queued twice)
    for w in range(requeue.shape[0]):
        pending = requeue[w]
        while pending != 0:
            x = w * 64 + np.int64(trailing_zeros(pending))
            pending &= pending - np.uint64(1)
            heap_key[kept] = max(floor, _own_key(x, node_mistakes, node_b0, node_depth, lambda_n) + lambda_n)
            heap_node[kept] = np.int32(x)
            kept += 1
    ints[HEAP_SIZE] = kept
    if regenerate:
        ints[SET_ASIDE] += taken
    else:
        ints[DROPPED] += taken
        floats[DROPPED_FLOOR] = min(floats[DROPPED_FLOOR], floor)
    return taken


@njit(cache=True)
def queue_summary(heap_key, heap_node, size, node_dead, node_mistakes, node_b0, node_depth, lambda_n, best,
                  n_antecedents, keys_bound, by_length, remaining):
    """One pass over the live queue, no temporaries: returns the smallest b(d_p) + b0(d_p) (inf if
    empty; with ``keys_bound``, the lower-bound policy, a prefix's queue key if larger: a prefix queued
    again for its deferred children is bounded by theirs) and fills ``by_length[K]`` (queued prefixes
    per length) and ``remaining[K, f]`` (Theorem 7's histogram by prefix length K and extension budget
    f; ``remaining`` is sized to the longest queued prefix and the largest budget, never antecedents x
    antecedents)."""
    by_length[:] = 0
    remaining[:, :] = 0
    smallest = np.inf
    for i in range(size):
        x = heap_node[i]
        if node_dead[x]:
            continue
        lower_bound = theorem1_hierarchical_lower_bound(node_mistakes[x], node_depth[x], lambda_n)
        bound = _queued_bound(heap_key[i], x, node_mistakes, node_b0, node_depth, lambda_n, keys_bound)
        if bound < smallest:
            smallest = bound
        by_length[node_depth[x]] += 1
        free = n_antecedents - node_depth[x]
        f = theorem7_extension_budget(lower_bound, best, lambda_n, free)
        if f >= 0 and node_depth[x] < remaining.shape[0]:
            remaining[node_depth[x], min(f, remaining.shape[1] - 1)] += 1
    return smallest


@njit(inline="always", cache=True)
def _two_class_correct(n_cap, n_pos, n_unc, pos_unc):
    """Samples a rule capturing ``n_cap`` (``n_pos`` positive) of ``n_unc`` (``pos_unc``) classifies
    correctly, and those the default after it does: each predicts its majority."""
    rest_pos = pos_unc - n_pos
    return max(n_pos, n_cap - n_pos), max(rest_pos, n_unc - n_cap - rest_pos)


@njit(cache=True)
def _best_one_rule_extension(u, a, bits, live_words, v, scratch, count_planes, positive_planes, minority_planes,
                             packed_weights, in_prefix, counts, n_unc, pos_unc):
    """Of the lists prefix + ``a`` + one more rule b (then the default), the fewest mistakes made after
    the prefix + ``a`` (its rule and default) and that b (-1 if none): ``u`` is what the prefix leaves,
    ``n_unc``/``pos_unc`` the samples and positives prefix + ``a`` leaves, ``in_prefix`` marks the
    prefix. Writes the counts of the children of prefix + ``a`` into ``counts``; uses ``v``,
    ``live_words``, ``scratch``.

    A leaf: when b(d_p) + lambda + b0(d_p) already fails the queue's test (Lemma 2 / Thm 20 applied to
    the children of d_p, whose b + b0 is at least d_p's + lambda: a rule errs on the minority of every
    group it captures), none of d_p's children would be queued, so expanding d_p later only looks for
    an incumbent among its children's lists. Doing that now, instead of queuing d_p, keeps it out of
    the queue (on hard problems most queued prefixes are such leaves, monks-3: ~90%, and the queue is
    what fills the memory budget) for the same work, or more when the incumbent would have pruned d_p
    before its turn: hence only once memory is tight (RESOLVE_LEAVES_WHEN_TIGHT)."""
    m = bits.shape[0]
    for w in range(u.shape[0]):
        v[w] = u[w] & ~bits[a, w]
    n_live = live_word_list(v, live_words)
    in_prefix[a] = True
    count_children(v, bits, live_words, n_live, scratch, count_planes, positive_planes, minority_planes,
                   packed_weights, np.bool_(False), in_prefix, counts, np.int64(0), np.int64(1))
    fewest = np.inf
    best_b = -1
    for b in range(m):
        if in_prefix[b]:
            continue
        n_cap_i, n_pos_i, _ = counts_of(counts, b)
        if n_cap_i == 0:
            continue  # the same list as prefix + a, with a rule more
        n_cap = float(n_cap_i)
        rule_correct, rest_correct = _two_class_correct(n_cap, float(n_pos_i), n_unc, pos_unc)
        mistakes = n_unc - rule_correct - rest_correct
        if mistakes < fewest:
            fewest = mistakes
            best_b = b
    in_prefix[a] = False
    return fewest, best_b


@njit(cache=True)
def _heapsort(values, first, stop):
    """Sorts ``values[first:stop]`` in place, ascending (no allocation: the serial kernel runs without
    numba's reference counting, which its own sort needs)."""
    n = stop - first
    for root in range(n // 2 - 1, -1, -1):
        _sift_down(values, first, root, n)
    for end in range(n - 1, 0, -1):
        values[first], values[first + end] = values[first + end], values[first]
        _sift_down(values, first, 0, end)


@njit(inline="always", cache=True)
def _sift_down(values, first, root, n):
    while 2 * root + 1 < n:
        child = 2 * root + 1
        if child + 1 < n and values[first + child + 1] > values[first + child]:
            child += 1
        if values[first + root] >= values[first + child]:
            return
        values[first + root], values[first + child] = values[first + child], values[first + root]
        root = child


@njit(inline="always", cache=True)
def _weight_only_in_first(a, b, u, bits, live_words, n_live, count_planes, packed_weights, limit):
    """The weight of the samples in ``u`` that ``a`` captures and ``b`` does not, counted until it
    exceeds ``limit`` (then some total above it)."""
    total = np.int64(0)
    for j in range(n_live):
        w = live_words[j]
        x = u[w] & bits[a, w] & ~bits[b, w]
        if x == 0:
            continue
        if packed_weights.shape[0] > 0:
            base = w * 64
            while x != 0:
                total += unpack_counts(packed_weights[base + np.int64(trailing_zeros(x))])[0]
                x &= x - np.uint64(1)
        else:
            for plane in range(count_planes.shape[0]):
                total += np.int64(popcount(x & count_planes[plane, w])) << plane
        if total > limit:
            return total
    return total


# a child that errs somewhere is compared with at most this many pure siblings, those capturing most (the
# likeliest to dominate it): comparing it with every pure sibling of its majority multiplies the cost of a
# child's bound on tables of many pure antecedents for few more children dominated
IMPURE_CHILD_COMPARISONS = 1

# a pure sibling's entry in its class's sorted list: its count above, its index below (shift and mask, no
# division: the lists are read for each child that could be queued)
SIBLING_SHIFT = 32
SIBLING_MASK = (1 << SIBLING_SHIFT) - 1


@njit(inline="always", cache=True)
def _dominated_by_pure_sibling(a, n_cap, n_pos, u, bits, live_words, n_live, count_planes, packed_weights,
                               pure_siblings, first, stop, work_left):
    """Does a pure sibling (one whose rule errs on none of what it captures) dominate child ``a``
    (:func:`~optrules.corels.bounds.theorem18_sibling_dominates` with no mistakes of its own)?
    ``pure_siblings[first:stop]``: those of one class, ascending by count (see ``SIBLING_SHIFT``). Of
    a's majority, one capturing fewer than a leaves some of it out, more than a's mistakes allow; so they
    are read from the largest down to a's majority, each compared word by word (a's samples it does
    not capture, at most a's mistakes). ``work_left``: sibling entries read plus words compared
    allowed. Returns (dominated, work done)."""
    mistakes_a = min(n_pos, n_cap - n_pos)
    majority_a = n_cap - mistakes_a
    work = 0
    compared = 0
    for i in range(stop - 1, first - 1, -1):
        if work >= work_left or (mistakes_a > 0 and compared >= IMPURE_CHILD_COMPARISONS):
            break
        n_cap_b = pure_siblings[i] >> SIBLING_SHIFT
        b = pure_siblings[i] & SIBLING_MASK
        if n_cap_b < majority_a:
            break
        # of two pure siblings capturing the same samples the first stays
        if b == a or (n_cap_b == n_cap and mistakes_a == 0 and b > a):
            continue
        work += 1 + n_live
        compared += 1
        only_a = _weight_only_in_first(a, b, u, bits, live_words, n_live, count_planes, packed_weights, mistakes_a)
        if theorem18_sibling_dominates(mistakes_a, 0, only_a):
            return True, work
    return False, work


@njit(inline="always", cache=True)
def _dominated_by_subconjunction(a, n_cap, n_pos, within_first, within, child_counts):
    """Does a sibling whose conditions are some of a's dominate child ``a``? It captures every sample a
    does (``within[within_first[a]:within_first[a + 1]]``, checked on the bits when the problem was
    built), so it dominates a when it errs no more
    (:func:`~optrules.corels.bounds.theorem18_sibling_dominates` with nothing captured by a alone):
    "A" over "A and X" when X removes none of A's mistakes. Of two capturing the same samples with as
    many mistakes, the first stays. (None of them is in the prefix: a child within a prefix's rule
    captures nothing and is not compared.)"""
    mistakes_a = min(n_pos, n_cap - n_pos)
    for i in range(within_first[a], within_first[a + 1]):
        b = within[i]
        n_cap_b, n_pos_b, _ = counts_of(child_counts, b)
        mistakes_b = min(n_pos_b, n_cap_b - n_pos_b)
        if n_cap_b == n_cap and mistakes_b == mistakes_a and b > a:
            continue
        if theorem18_sibling_dominates(mistakes_a, mistakes_b, 0):
            return True
    return False


# antecedents of more conditions than this are not looked up by their parts (2^k - 2 lookups each)
MAX_PARTS = 6


def _condition_parts(conditions) -> list[tuple[int, ...]]:
    """Each antecedent's conditions as sorted part numbers: the mined feature indices when the names
    come from the data layer (no name built: a raw table has 200,000 antecedents), else the names,
    those with commas split into their parts."""
    if hasattr(conditions, "parts"):
        return [tuple(sorted(items)) for items in conditions.parts()]
    numbers: dict[str, int] = {}
    return [tuple(sorted({numbers.setdefault(part, len(numbers)) for condition in c for part in str(condition).split(",")}))
            for c in conditions]


def antecedent_subsets(conditions, bits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each antecedent a, the others made of some of its conditions (a conjunction's parts mined
    too), which therefore capture every sample it does: ``within[within_first[a]:within_first[a + 1]]``
    (for :func:`_dominated_by_subconjunction`). The names only propose; each pair is kept only where the
    bits agree, so names that do not describe the bits cost pruning, never a wrong answer. Linear in the
    antecedents: 2^k - 2 lookups for one of k conditions, in a sorted array of int64 keys, a subset at a
    time over all antecedents of k conditions (per antecedent in Python, a raw table's 213,337 took 3 s)."""
    parts = _condition_parts(conditions)
    m = len(parts)
    lengths = np.fromiter((len(p) for p in parts), np.int64, count=m)
    base = 2 + max((max(p) for p in parts if p), default=0)
    longest = 1
    while longest < MAX_PARTS and base ** (longest + 1) < 2**62:
        longest += 1
    keys = np.full(m, -1, np.int64)
    owners, wanted = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)]
    for length in range(1, longest + 1):
        rows = np.flatnonzero(lengths == length)
        if rows.size == 0:
            continue
        numbers = np.array([parts[r] for r in rows], np.int64) + 1  # (rows, length), each row sorted
        keys[rows] = _fold(numbers, base)
        for mask in range(1, (1 << length) - 1):  # every proper, non-empty subset of the columns
            columns = [j for j in range(length) if mask >> j & 1]
            owners.append(rows)
            wanted.append(_fold(numbers[:, columns], base))
    order = np.argsort(keys, kind="stable")  # equal keys: the first antecedent first
    sorted_keys = keys[order]
    owner, wanted = np.concatenate(owners), np.concatenate(wanted)
    by_owner = np.argsort(owner, kind="stable")
    owner, wanted = owner[by_owner], wanted[by_owner]
    at = np.minimum(np.searchsorted(sorted_keys, wanted), max(m - 1, 0))
    found = sorted_keys[at] == wanted if m else np.zeros(0, bool)
    owner, within = owner[found], order[at[found]].astype(np.int64)
    firsts = np.zeros(m + 1, np.int64)
    np.cumsum(np.bincount(owner, minlength=m), out=firsts[1:])
    keep = _captures_within(bits, firsts, within)
    kept_firsts = np.zeros_like(firsts)
    np.cumsum(np.bincount(owner[keep], minlength=m), out=kept_firsts[1:])
    return kept_firsts, within[keep]


def _fold(numbers: np.ndarray, base: int) -> np.ndarray:
    """One int64 key a row of part numbers (each 1 .. base - 1): the row's digits in ``base``."""
    key = np.zeros(numbers.shape[0], np.int64)
    for j in range(numbers.shape[1]):
        key = key * base + numbers[:, j]
    return key


@njit(cache=True)
def _captures_within(bits, firsts, within):
    """keep[i]: does antecedent ``within[i]`` capture every sample its owner (the a with firsts[a] <= i <
    firsts[a + 1]) captures?"""
    keep = np.zeros(within.shape[0], np.bool_)
    for a in range(firsts.shape[0] - 1):
        for i in range(firsts[a], firsts[a + 1]):
            b = within[i]
            inside = True
            for w in range(bits.shape[1]):
                if bits[a, w] & ~bits[b, w]:
                    inside = False
                    break
            keep[i] = inside
    return keep


# An expansion looks for a sibling dominating a child (above) until it has read this many sibling entries
# and compared this many words, then queues the rest as usual: with many antecedents the comparisons grow
# with their square, the pruning never has to be complete. Counted in work, not time: deterministic.
SIBLING_CHECKS_PER_EXPANSION = 1 << 20


# An expansion finishes leaves until they have swept this many words (a leaf: every antecedent over what
# its parent leaves), then queues the rest as usual: a pop must stay short for the driver to keep time
# (a raw table's 218k antecedents: a leaf sweeps ~10M words, and one pop finishing its leaves had run
# 7 s past a 30 s budget); counted in work, not time, so that the search stays deterministic.
LEAF_WORDS_PER_EXPANSION = 1 << 24


# Deferred children (DEFER_CHILDREN*). On hard problems the queue, not the work, ends the search: monks-3
# at lambda 0.005 queued 36M prefixes in 60 s and expanded 1.2M. With the lower-bound policy a prefix
# whose key is above the queue's smallest waits anyway; it need not exist yet. So an expansion popped at
# key k queues only the children whose key (b + b0) is at most k + defer_window, and queues the prefix
# again at the smallest key of the rest; popped again at that key k', it handles the children with keys
# in [k', k' + defer_window] (those below k' were handled before: none lies between the last window and
# k'), and so on. Every child is still handled exactly once with the same tests; the incumbent sees
# every child's list at the first pop. A queued-again prefix bounds its deferred children by its key
# (queue_summary); the map may declare it dominated (dead) like any queued prefix, and its deferred
# children then are too (same captured set, larger bound).
DEFER_WINDOW_LAMBDAS = 1.0


# -- the search loop --------------------------------------------------------------------------------
# A search pops its prefixes in batches of up to Batch.size and expands them in two parts: the children
# of every prefix of the batch (counts, bounds, the tests that need only the prefix and the incumbent as
# the batch began) each on its own slot, on as many threads as the search has (_expand_slot); then, in
# the batch's order on one thread, what every child changes (the incumbent, the symmetry map, the queue:
# _merge_slot), each child's tests against the incumbent taken again there. What a batch does depends
# on the batch's size, never on the threads: the same search, counters and list for every n_jobs.

# a child's record, from its slot's expansion to the merge: its flags
RECORD_INCUMBENT = 1  # its list may beat the incumbent
RECORD_FREE = 2  # its list misses a requirement and may beat the free best
RECORD_QUEUE = 4  # to be queued, unless the incumbent now prunes it
RECORD_LEAF = 8  # a leaf resolved: its best one-rule extension may beat the incumbent
# the fields of its values and of its integers
MISTAKES, B0, BOUND, OBJECTIVE, REST, LEAF_OBJECTIVE = range(6)
RULE, FLAGS, NEEDED, LEAF_RULE, MAP_SLOT, EQUIVALENT = range(6)
# a slot's counters, added to the search's at the merge
SLOT_BOUNDS, SLOT_DOMINATED, SLOT_LEAVES = range(3)
# what _expand_slot does
PREPARE, COUNT, CHILDREN = 1, 2, 4

class Batch(NamedTuple):
    """A batch's slots: what the pops leave each (``nodes``: the prefix, or -1; the keys below which
    its children were handled before and above which they wait, ``handled_below``/``defer_above``), and
    what each slot's expansion leaves the merge (``next_key``: the smallest deferred child's key;
    ``sizes``: its records; ``counters``; each record's ``values``, ``integers`` and map key in
    ``hashes``)."""

    nodes: np.ndarray
    handled_below: np.ndarray
    defer_above: np.ndarray
    next_key: np.ndarray
    sizes: np.ndarray
    counters: np.ndarray
    values: np.ndarray
    integers: np.ndarray
    hashes: np.ndarray


#: bytes a batch's slot holds, an antecedent (its records: values, integers, hash; its scratch: the
#: in-prefix flags, children's and leaves' counts, pure siblings), and a word of the samples
SLOT_BYTES_PER_ANTECEDENT, SLOT_BYTES_PER_WORD = 161, 64


def batch_size(n_antecedents: int, n_words: int = 1, max_bytes: int | None = None) -> int:
    """Prefixes a batch pops: a function of the problem and the memory allowed (``max_bytes`` for the
    batch's records and scratch), never of the threads, so that every thread count searches alike."""
    slot_bytes = SLOT_BYTES_PER_ANTECEDENT * int(n_antecedents) + SLOT_BYTES_PER_WORD * int(n_words)
    return batch_slots(n_antecedents, slot_bytes, max_bytes, MAX_BATCH)


def batch(n_antecedents: int, slots: int) -> Batch:
    return Batch(np.full(slots, -1, np.int64), np.zeros(slots), np.zeros(slots), np.zeros(slots),
                 np.zeros(slots, np.int64), np.zeros((slots, 3), np.int64), np.zeros((slots, n_antecedents, 6)),
                 np.zeros((slots, n_antecedents, 6), np.int64), np.zeros((slots, n_antecedents), np.uint64))


# below this many words to sweep per expansion, starting threads costs more than it saves (measured on
# unit weights, three popcounts a word: weights as bit planes count a word once per plane)
PARALLEL_MIN_WORDS = 1 << 16


@njit(cache=True, inline="always")
def sweep_words(n_live, n_antecedents, count_planes, positive_planes, minority_planes, packed_weights):
    """The words one expansion's children sweep, in units of the fused unit-weight pass (three
    popcounts a word): a tall table's groups carry weights of 10-15 bit planes each, so a sweep that
    looks small in words is several times :data:`PARALLEL_MIN_WORDS` in work. (Packed weights are
    summed bit by bit, not by plane: a word each.)"""
    planes = count_planes.shape[0] + positive_planes.shape[0] + minority_planes.shape[0]
    per_word = 1 if packed_weights.shape[0] > 0 else max(1, planes // 3)
    return n_live * n_antecedents * per_word


def _expand(max_pops, max_expansions, counting, settings, requirements, zobrist, subsets, tree, node_mistakes, node_b0,
            frontier, progress, workspace, slots, n_threads):
    """Pop and expand prefixes in batches (see above and the module docstring) until ``max_pops`` pops
    are done, or ``max_expansions`` prefixes are expanded (the node budget's rest). A batch once begun
    is filled, whatever the pops: its prefixes must not depend on how the driver slices the search.

    ``n_threads`` > 1 (in :data:`expand_parallel` only): the slots of a batch are expanded on that many
    threads, and a batch of one prefix whose children sweep :data:`PARALLEL_MIN_WORDS` counts them on
    every thread, in 4 chunks a thread; the caller makes sure no other thread is in a parallel region.
    (A parameter: numba cannot cache a kernel that asks for its thread count.)

    Vectors are over groups of identical samples (:class:`~optrules.data.groups.GroupedSamples`),
    counted by :func:`~optrules._numba.count_children` (two classes, unit weights), or by
    :func:`~optrules._numba.class_sums` when ``class_weights`` has rows
    (sample weights or several classes: a rule's correct weight is its largest class total).

    ``counting``, ``tree``, ``frontier``, ``progress``: see :mod:`optrules._numba`; ``workspace``: a
    :class:`~optrules._numba.Workspace` with a row a slot; ``slots``: a :class:`Batch`;
    ``settings``: a :class:`Settings`; ``requirements``: ``(masks, rules_needed, free_best, free_prefix)``, the first
    two of a :class:`~optrules.corels.requirements.Requirements` (zeros and ``[0]`` when there are
    none): only lists meeting every requirement are incumbents, and Theorems 10, 11 and 21 prune a rule
    only when removing it (or the rules from it on) keeps the list admissible. A list that misses some
    requirement but beats ``free_best[0]`` is written to ``free_prefix`` (its length in
    ``free_best[1]``), for the driver to complete into an admissible incumbent; ``node_mistakes``/``node_b0``: this
    search's node fields; ``zobrist``: a random
    word per antecedent, XORed into the prefix map's keys; ``subsets``: :func:`antecedent_subsets`'
    two arrays (empty lists when sibling dominance is off).
    """
    bits = counting[0]
    n_samples, lambda_n, policy, map_type, flags, max_length, defer_window = settings
    requirement_masks, rules_needed, free_best, free_prefix = requirements
    node_parent, node_last, node_depth, node_hash, node_dead = tree
    heap_key, heap_node, map_slots = frontier
    ints, floats, best_prefix = progress
    n_antecedents = bits.shape[0]
    use_lookahead = (flags & USE_LOOKAHEAD) != 0
    use_equivalent = (flags & USE_EQUIVALENT) != 0
    # children are deferred on their key b + b0: the lower-bound policy's, without requirements (whose
    # keys add what is owed, so a child's need not exceed its parent's) and with lambda > 0 (_requeued)
    may_defer = ((flags & (DEFER_CHILDREN | DEFER_CHILDREN_WHEN_TIGHT)) != 0 and policy == LOWER_BOUND
                 and rules_needed.shape[0] == 1 and lambda_n > 0.0)
    size = slots.nodes.shape[0]
    room = n_antecedents + 1  # a prefix's children, and the prefix queued again for those it deferred
    for s in range(size):
        in_prefix = slot_row(workspace.in_prefix, s, size)
        for a in range(n_antecedents):
            in_prefix[a] = False
    pops = 0
    expansions = 0
    while pops < max_pops and expansions < max_expansions:
        if ints[HEAP_SIZE] == 0:
            return QUEUE_EMPTY
        if not ints[MEMORY_FULL] and needs_room(ints, room, node_parent, heap_key, map_slots):
            return NEED_ROOM
        # the batch: the next prefixes whose extensions may still beat the incumbent, as many as the
        # arrays have room for (the driver grows them when one expansion no longer fits: a batch is then
        # smaller, at the same places on any number of threads)
        fits = size if ints[MEMORY_FULL] else min(size, free_room(ints, node_parent, heap_key, map_slots) // room)
        n_slots = 0
        while n_slots < fits and expansions < max_expansions and ints[HEAP_SIZE] > 0:
            pop_key = heap_key[0]
            node = heap_pop(heap_key, heap_node, ints[HEAP_SIZE])
            ints[HEAP_SIZE] -= 1
            pops += 1
            if node_dead[node]:
                continue
            best = floats[0]
            depth = node_depth[node]
            lb = theorem1_hierarchical_lower_bound(float(node_mistakes[node]), depth, lambda_n)
            b0 = float(node_b0[node])
            needed = rules_needed[_prefix_coverage(node, node_parent, node_last, requirement_masks)]
            # the incumbent may have improved since this prefix was queued
            if not _admissible_extensions_may_win(lb, b0, needed, lambda_n, best, use_equivalent, use_lookahead):
                continue
            # children keyed below handled_below were handled at earlier pops; those above defer_above wait
            handled_below = -np.inf
            defer_above = np.inf
            if may_defer:
                if _requeued(pop_key, lb + b0, lambda_n):
                    # its deferred children are keyed pop_key or more: may any of them still be queued?
                    if not theorem20_equivalent_points(pop_key, 0.0, lambda_n, best, use_lookahead):
                        continue
                    handled_below = pop_key
                    ints[REEXPANDED] += 1
                if (flags & DEFER_CHILDREN) != 0 or ints[MEMORY_TIGHT] != 0:
                    defer_above = pop_key + defer_window
            shortest_extension = depth + max(needed, 1)
            if shortest_extension > theorem4_max_prefix_length(best, lambda_n, n_antecedents) or shortest_extension > max_length:
                continue
            slots.nodes[n_slots] = node
            slots.handled_below[n_slots] = handled_below
            slots.defer_above[n_slots] = defer_above
            n_slots += 1
            expansions += 1
            ints[EXPANDED] += 1
            if depth + 1 > ints[MAX_LENGTH]:
                ints[MAX_LENGTH] = depth + 1
        if n_slots == 0:
            continue
        # what the slots' tests compare with: the incumbent and the free best as the batch begins
        best = floats[0]
        free = free_best[0]
        tight = ints[MEMORY_TIGHT] != 0
        prepared = n_threads > 1 and n_slots == 1  # one prefix: may its children's counts use every thread?
        if prepared:
            _expand_slot(np.int64(0), np.int64(PREPARE), best, free, tight, counting, settings, requirements, zobrist, subsets,
                         tree, node_mistakes, node_b0, frontier, workspace, slots)
        if (prepared and counting[6].shape[0] == 0
                and sweep_words(slots.sizes[0], n_antecedents, counting[1], counting[2], counting[3],
                                counting[4]) >= PARALLEL_MIN_WORDS):
            chunks = 4 * n_threads
            for chunk in prange(chunks):
                count_children(slot_row(workspace.u, 0, size), bits, slot_row(workspace.live_words, 0, size),
                               slots.sizes[0], workspace.chunk_scratch[chunk], counting[1], counting[2], counting[3],
                               counting[4], use_equivalent, slot_row(workspace.in_prefix, 0, size),
                               slot_row(workspace.child_counts, 0, size), np.int64(chunk), np.int64(chunks))
            _expand_slot(np.int64(0), np.int64(CHILDREN), best, free, tight, counting, settings, requirements, zobrist, subsets,
                         tree, node_mistakes, node_b0, frontier, workspace, slots)
        elif prepared:
            _expand_slot(np.int64(0), np.int64(COUNT | CHILDREN), best, free, tight, counting, settings, requirements, zobrist, subsets,
                         tree, node_mistakes, node_b0, frontier, workspace, slots)
        else:
            for s in prange(n_slots):
                _expand_slot(np.int64(s), np.int64(PREPARE | COUNT | CHILDREN), best, free, tight, counting, settings,
                             requirements, zobrist, subsets, tree, node_mistakes, node_b0, frontier, workspace, slots)
        for s in range(n_slots):
            _merge_slot(s, counting, settings, requirements, zobrist, tree, node_mistakes, node_b0, frontier, progress,
                        workspace, slots)
    return POPS_DONE


@njit(cache=True, _nrt=False)  # (allocates nothing: see optrules._numba.Workspace)
def _expand_slot(s, stages, best, free, tight, counting, settings, requirements, zobrist, subsets, tree,
                 node_mistakes, node_b0, frontier, workspace, slots):
    """The ``stages`` (``PREPARE | COUNT | CHILDREN``) of the expansion of slot ``s``'s prefix: what it
    leaves uncaptured (PREPARE; its live words in ``slots.sizes[s]`` until CHILDREN), every child's
    counts (COUNT), then each child's bounds and tests against ``best`` (the incumbent) and ``free``
    (the best list missing a requirement) as the batch began, into the slot's records (CHILDREN); a
    child to queue is looked up in the symmetry map as the batch found it, and left out when an
    equivalent prefix there is at least as good (Cor 16). Writes only the slot's rows: slots run on
    threads side by side, and the map, the queue and the nodes change only in the merge.

    One function for the pure part of an expansion, on purpose: numba compiles a function it calls apart
    and again into each caller, so its steps as functions of their own made the first fit after install
    compile longer for the same search (measured on the serial kernel before batches: plain functions
    +3.5-5.5 s, the small ones inlined +1.5-2 s, all inlined +9 s, over ~20 s). Its stages are typed
    arguments (``np.int64``), not literals: each literal value compiled it once more (48 -> 28 s)."""
    (bits, count_planes, positive_planes, minority_planes, packed_weights, all_ones, class_weights,
     minority_weights) = counting
    n_samples, lambda_n, policy, map_type, flags, max_length, defer_window = settings
    requirement_masks, rules_needed, free_best, free_prefix = requirements
    complete = rules_needed.shape[0] - 1
    node_parent, node_last, node_depth, node_hash, node_dead = tree
    map_slots = frontier[2]
    n_antecedents = bits.shape[0]
    use_min_support = (flags & USE_MIN_SUPPORT) != 0
    use_accurate = (flags & USE_ACCURATE_SUPPORT) != 0
    use_excessive = (flags & USE_EXCESSIVE_SUPPORT) != 0
    use_lookahead = (flags & USE_LOOKAHEAD) != 0
    use_equivalent = (flags & USE_EQUIVALENT) != 0
    use_classes = class_weights.shape[0] > 0
    # leaves are resolved on the two-class counts, without requirements (whose incumbents need checking)
    may_resolve_leaves = ((flags & (RESOLVE_LEAVES | RESOLVE_LEAVES_WHEN_TIGHT)) != 0 and not use_classes
                          and rules_needed.shape[0] == 1)
    # on the two-class counts, without requirements (a sibling that meets none cannot stand in for one)
    use_dominance = (flags & USE_SIBLING_DOMINANCE) != 0 and not use_classes and rules_needed.shape[0] == 1
    n_classes = class_weights.shape[1]
    size = slots.nodes.shape[0]
    u, v = slot_row(workspace.u, s, size), slot_row(workspace.v, s, size)
    scratch, live_words = slot_row(workspace.scratch, s, size), slot_row(workspace.live_words, s, size)
    in_prefix, child_counts = slot_row(workspace.in_prefix, s, size), slot_row(workspace.child_counts, s, size)
    unc_totals, cap_totals = slot_row(workspace.totals, s, size), slot_row(workspace.captured_totals, s, size)
    leaf_u, leaf_live_words = slot_row(workspace.leaf_u, s, size), slot_row(workspace.leaf_live_words, s, size)
    leaf_counts, pure_siblings = slot_row(workspace.leaf_counts, s, size), slot_row(workspace.pure_siblings, s, size)
    within_first, within = subsets
    node = slots.nodes[s]
    if stages & PREPARE:
        rebuild_uncaptured(node, node_parent, node_last, bits, all_ones, u)
        mark_prefix(node, node_parent, node_last, in_prefix, True)
        slots.sizes[s] = live_word_list(u, live_words)
    n_live = slots.sizes[s]
    if stages & COUNT and not use_classes:
        count_children(u, bits, live_words, n_live, scratch, count_planes, positive_planes, minority_planes,
                       packed_weights, use_equivalent, in_prefix, child_counts, np.int64(0), np.int64(1))
    if not stages & CHILDREN:
        return
    depth = node_depth[node]
    prefix_mistakes = float(node_mistakes[node])
    covered = _prefix_coverage(node, node_parent, node_last, requirement_masks)
    if use_classes:
        minor_unc = class_sums(u, live_words, n_live, class_weights, minority_weights, unc_totals)
        n_unc = 0.0
        for c in range(n_classes):  # loops, not .sum()/.max(): numba's reductions compile slowly
            n_unc += unc_totals[c]
        pos_unc = 0.0
    else:
        n_unc = float(weighted_count(u, count_planes))
        pos_unc = float(weighted_count(u, positive_planes))
        minor_unc = float(weighted_count(u, minority_planes)) if use_equivalent else 0.0
    resolve_leaves = may_resolve_leaves and ((flags & RESOLVE_LEAVES) != 0 or tight)
    leaf_words_left = LEAF_WORDS_PER_EXPANSION
    handled_below, defer_above = slots.handled_below[s], slots.defer_above[s]
    values, integers = slots.values[s], slots.integers[s]
    # the pure children, those capturing only positives at the front, only negatives at the back, each
    # part sorted by count (_dominated_by_pure_sibling): only one capturing at least a child's majority
    # can dominate it (mushroom, 1,597 antecedents, many of them pure: comparing every child with every
    # pure sibling took 7/8 of the search)
    n_pure_positive = 0
    n_pure_negative = 0
    if use_dominance:
        for b in range(n_antecedents):
            if not in_prefix[b]:
                n_cap_b, n_pos_b, _ = counts_of(child_counts, b)
                if n_cap_b > 0 and n_pos_b == n_cap_b:
                    pure_siblings[n_pure_positive] = (n_cap_b << SIBLING_SHIFT) | b
                    n_pure_positive += 1
                elif n_cap_b > 0 and n_pos_b == 0:
                    n_pure_negative += 1
                    pure_siblings[n_antecedents - n_pure_negative] = (n_cap_b << SIBLING_SHIFT) | b
        # (typed bounds: a literal 0 made numba compile the sort three times, 0.4 s each in a first fit)
        _heapsort(pure_siblings, np.int64(0), np.int64(n_pure_positive))
        _heapsort(pure_siblings, np.int64(n_antecedents - n_pure_negative), np.int64(n_antecedents))
    sibling_checks_left = SIBLING_CHECKS_PER_EXPANSION
    n_bounds = 0
    n_dominated = 0
    n_leaves = 0
    next_key = np.inf
    n_records = 0
    for a in range(n_antecedents):
        if in_prefix[a]:
            continue
        n_bounds += 1
        if use_classes:
            for j in range(n_live):
                v[live_words[j]] = u[live_words[j]] & bits[a, live_words[j]]
            n_min = class_sums(v, live_words, n_live, class_weights, minority_weights, cap_totals)
            n_cap = 0.0
            rule_correct = 0.0
            rest_correct = 0.0
            for c in range(n_classes):
                n_cap += cap_totals[c]
                rule_correct = max(rule_correct, cap_totals[c])
                rest_correct = max(rest_correct, unc_totals[c] - cap_totals[c])
            n_cap_i = np.int64(0)
            n_pos_i = np.int64(0)
        else:
            n_cap_i, n_pos_i, n_min_i = counts_of(child_counts, a)
            n_cap, n_pos, n_min = float(n_cap_i), float(n_pos_i), float(n_min_i)
            rule_correct, rest_correct = _two_class_correct(n_cap, n_pos, n_unc, pos_unc)
        child_covered = covered | requirement_masks[a]
        # a rule that meets no new requirement can be removed from any list keeping it admissible
        removable = child_covered == covered
        if removable and n_cap <= 0.0:
            continue  # a rule that captures nothing (of weight) only costs lambda
        if removable and use_min_support and not theorem10_minimum_support(n_cap, lambda_n):
            continue
        if removable and use_accurate and not theorem11_minimum_accurate_support(rule_correct, lambda_n):
            continue
        # Thm 21 cuts the list before the rule: admissible only if the prefix already is
        if covered == complete and use_excessive and not theorem21_excessive_support(n_unc, n_cap, lambda_n):
            continue
        child_mistakes = prefix_mistakes + n_cap - rule_correct
        child_lb = theorem1_hierarchical_lower_bound(child_mistakes, depth + 1, lambda_n)
        n_rest = n_unc - n_cap
        child_objective = child_lb + n_rest - rest_correct
        record = 0
        if child_covered == complete:
            if child_objective < best:
                record = RECORD_INCUMBENT
        elif child_objective < free:
            record = RECORD_FREE
        # may the child's extensions still beat the incumbent? (no admissible extension may be too long)
        child_needed = rules_needed[child_covered]
        child_b0 = minor_unc - n_min if use_equivalent else 0.0
        child_key = child_lb + child_b0  # its key in the queue (lower-bound policy, when deferring)
        queue = (depth + 1 + max(child_needed, 1) <= max_length
                 and _admissible_extensions_may_win(child_lb, child_b0, child_needed, lambda_n, best, use_equivalent,
                                                    use_lookahead)
                 and child_key >= handled_below)  # (below: handled, and counted, at an earlier pop)
        if queue and child_key > defer_above:
            next_key = min(next_key, child_key)
            queue = False
        if queue and use_dominance:
            dominated = _dominated_by_subconjunction(a, n_cap_i, n_pos_i, within_first, within, child_counts)
            # a pure sibling of the child's majority class; of either class when its classes tie
            if not dominated and sibling_checks_left > 0 and 2 * n_pos_i >= n_cap_i:
                dominated, work = _dominated_by_pure_sibling(a, n_cap_i, n_pos_i, u, bits, live_words, n_live,
                                                             count_planes, packed_weights, pure_siblings,
                                                             np.int64(0), n_pure_positive, sibling_checks_left)
                sibling_checks_left -= work
            if not dominated and sibling_checks_left > 0 and 2 * n_pos_i <= n_cap_i:
                dominated, work = _dominated_by_pure_sibling(a, n_cap_i, n_pos_i, u, bits, live_words, n_live,
                                                             count_planes, packed_weights, pure_siblings,
                                                             n_antecedents - n_pure_negative,
                                                             np.int64(n_antecedents), sibling_checks_left)
                sibling_checks_left -= work
            if dominated:
                n_dominated += 1
                queue = False
        leaf_objective = np.inf
        leaf_rule = -1
        if (queue and resolve_leaves and leaf_words_left > 0
                and not _extensions_may_win(child_lb + lambda_n, child_b0, lambda_n, best, use_equivalent,
                                            use_lookahead)):
            # a leaf (see _best_one_rule_extension): its children's lists now, not the queue
            queue = False
            if depth + 2 <= theorem4_max_prefix_length(best, lambda_n, n_antecedents):
                n_leaves += 1  # (with its parent's expansion: not one of max_nodes)
                leaf_words_left -= n_antecedents * max(n_live, 1)
                n_bounds += n_antecedents - depth - 1
                fewest, leaf_rule = _best_one_rule_extension(u, a, bits, leaf_live_words, leaf_u, scratch,
                                                             count_planes, positive_planes, minority_planes,
                                                             packed_weights, in_prefix, leaf_counts, n_rest,
                                                             pos_unc - n_pos)
                leaf_objective = child_lb + lambda_n + fewest
                if leaf_objective < best:
                    record |= RECORD_LEAF
        h = np.uint64(0)
        map_slot = -1
        equivalent = -1
        if queue and map_type != MAP_NONE:
            h = node_hash[node] ^ zobrist[a] if map_type == MAP_PREFIX else remaining_set_hash(u, bits, a)
            map_slot, equivalent, queue = _equivalent_in_map(map_type, h, child_lb, depth, a, u, in_prefix, map_slots,
                                                             node_hash, node_parent, node_last, node_depth,
                                                             node_mistakes, lambda_n, bits, all_ones, scratch)
        if queue:
            record |= RECORD_QUEUE
        if record == 0:
            continue
        integers[n_records, MAP_SLOT] = map_slot
        integers[n_records, EQUIVALENT] = equivalent
        slots.hashes[s, n_records] = h
        integers[n_records, RULE] = a
        integers[n_records, FLAGS] = record
        integers[n_records, NEEDED] = child_needed
        integers[n_records, LEAF_RULE] = leaf_rule
        values[n_records, MISTAKES] = child_mistakes
        values[n_records, B0] = child_b0
        values[n_records, BOUND] = child_lb
        values[n_records, OBJECTIVE] = child_objective
        values[n_records, REST] = n_rest
        values[n_records, LEAF_OBJECTIVE] = leaf_objective
        n_records += 1
    slots.counters[s, SLOT_BOUNDS] = n_bounds
    slots.counters[s, SLOT_DOMINATED] = n_dominated
    slots.counters[s, SLOT_LEAVES] = n_leaves
    slots.next_key[s] = next_key
    slots.sizes[s] = n_records


@njit(cache=True, _nrt=False)
def _merge_slot(s, counting, settings, requirements, zobrist, tree, node_mistakes, node_b0, frontier, progress,
                workspace, slots):
    """What slot ``s``'s children change, in their order: the incumbent (and the free best), then
    each child the incumbent still lets through queued (or dropped when memory is full), the symmetry
    map keeping the better of two equivalent prefixes (Cor 16); the prefix queued again for the
    children it deferred."""
    bits, all_ones = counting[0], counting[5]
    n_samples, lambda_n, policy, map_type, flags, max_length, defer_window = settings
    requirement_masks, rules_needed, free_best, free_prefix = requirements
    node_parent, node_last, node_depth, node_hash, node_dead = tree
    heap_key, heap_node, map_slots = frontier
    ints, floats, best_prefix = progress
    use_lookahead = (flags & USE_LOOKAHEAD) != 0
    use_equivalent = (flags & USE_EQUIVALENT) != 0
    size = slots.nodes.shape[0]
    u, scratch = slot_row(workspace.u, s, size), slot_row(workspace.scratch, s, size)
    in_prefix = slot_row(workspace.in_prefix, s, size)
    values, integers = slots.values[s], slots.integers[s]
    node = slots.nodes[s]
    depth = node_depth[node]
    ints[LB_EVALS] += slots.counters[s, SLOT_BOUNDS]
    ints[DOMINATED] += slots.counters[s, SLOT_DOMINATED]
    ints[LEAVES_RESOLVED] += slots.counters[s, SLOT_LEAVES]
    insertions_before = ints[INSERTIONS]
    for r in range(slots.sizes[s]):
        a = integers[r, RULE]
        record = integers[r, FLAGS]
        child_mistakes, child_b0, child_lb = values[r, MISTAKES], values[r, B0], values[r, BOUND]
        child_objective = values[r, OBJECTIVE]
        if record & RECORD_INCUMBENT:
            if child_objective < floats[0]:
                record_incumbent(child_objective, node, a, floats, ints, best_prefix, node_parent, node_last,
                                 node_depth)
        elif record & RECORD_FREE:
            if child_objective < free_best[0]:
                free_best[0] = child_objective
                length = prefix_of(node, node_parent, node_last, node_depth, free_prefix)
                free_prefix[length] = a
                free_best[1] = length + 1
        if record & RECORD_LEAF and values[r, LEAF_OBJECTIVE] < floats[0]:
            record_incumbent(values[r, LEAF_OBJECTIVE], node, a, floats, ints, best_prefix, node_parent, node_last,
                             node_depth)
            best_prefix[depth + 1] = integers[r, LEAF_RULE]
            ints[BEST_LEN] = depth + 2
        if not record & RECORD_QUEUE:
            continue
        child_needed = integers[r, NEEDED]
        if not _admissible_extensions_may_win(child_lb, child_b0, child_needed, lambda_n, floats[0], use_equivalent,
                                              use_lookahead):
            continue
        if ints[MEMORY_FULL]:  # no room to queue it: its bound joins the dropped prefixes'
            drop_child(ints, floats, child_lb + child_b0)
            continue
        h = slots.hashes[s, r]
        slot = integers[r, MAP_SLOT]
        equivalent = integers[r, EQUIVALENT]
        if map_type != MAP_NONE and map_slots[slot] != equivalent:
            # an earlier child of the batch took the slot the lookup ended at: look again
            slot, equivalent, beats = _equivalent_in_map(map_type, h, child_lb, depth, a, u, in_prefix, map_slots,
                                                         node_hash, node_parent, node_last, node_depth, node_mistakes,
                                                         lambda_n, bits, all_ones, scratch)
            if not beats:
                continue
        # (the map's slots change in the merge alone, filled or given a better equivalent: a lookup whose
        # last slot holds what it held then ends there again)
        if equivalent >= 0:
            node_dead[equivalent] = True
        elif map_type != MAP_NONE:
            ints[MAP_COUNT] += 1
        # a prefix that still needs rules is as far from a list as their lambdas (requirements only)
        owed = lambda_n * child_needed
        n_rest = values[r, REST]
        key = _priority(policy, child_lb + owed, child_b0, child_objective + owed, n_samples - n_rest, depth + 1,
                        ints[N_NODES])
        child = add_child(node, a, h, slot, key, node_parent, node_last, node_depth, node_hash, node_dead,
                          map_slots, heap_key, heap_node, ints)
        # the child's mistakes, not its bound: int32 (exact) for unit weights, 4 bytes a prefix fewer
        node_mistakes[child] = child_mistakes
        node_b0[child] = child_b0  # int32 for unit weights (exact), float64 for real weights
    if ints[INSERTIONS] > insertions_before:
        ints[KEPT_A_CHILD] += 1
    if slots.next_key[s] < np.inf:  # queued again for its deferred children
        heap_push(heap_key, heap_node, ints[HEAP_SIZE], slots.next_key[s], np.int64(node))
        ints[HEAP_SIZE] += 1
    mark_prefix(node, node_parent, node_last, in_prefix, False)


# One source, two compilations (optrules._numba.two_compilations): the serial one, every search on one
# thread, and the parallel one, compiled only when a search runs on several threads.
expand, expand_parallel = two_compilations(_expand, "expand_parallel")
