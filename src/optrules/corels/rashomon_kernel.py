"""The compiled core of the Rashomon set's enumeration (see :mod:`optrules.corels.rashomon`).

Memory layout: the graph of uncaptured sets lives in flat arrays grown by the driver
(:func:`optrules.bnb.drive`), as the branch-and-bound's prefixes do. A node is stored as the chain of
antecedents that first reached it (parent pointer + antecedent: its uncaptured set is rebuilt from the
chain when needed, never stored), its cheapest reach, its b0, the fewest rules of a path to it, its
default rule, and the slice of the edge arrays its expansion wrote. ``node_dead`` marks a node
expanded. The map from uncaptured sets to nodes is the branch-and-bound's open-addressing table keyed on
the set's hash, every hit checked word by word. 85 bytes a node (besides its heap and map entries) and
20 an edge, against ~2 KB a node in Python objects.

With required features (:mod:`optrules.corels.requirements`) a node is an uncaptured set *and* the
requirements its way in covers (the same set reached covering different requirements has different
continuations): both are its key. Its default ends a list only when the coverage is complete, and an
extension needs at least the rules that complete it.

The tables of continuations (per node, the number of continuations per (rules, mistakes)) are counted
children first (by number of groups left: a child's uncaptured set is a strict subset of its parent's;
the expansion order is not one, as a child may be reached more cheaply by another way and expanded
first), into flat arrays too.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit, prange

from .._numba import (
    EXPANDED,
    HEAP_SIZE,
    MAP_COUNT,
    MAX_BATCH,
    NEED_ROOM,
    POPS_DONE,
    QUEUE_EMPTY,
    batch_slots,
    class_sums,
    drop_stale_cache,
    free_room,
    heap_pop,
    live_word_list,
    needs_room,
    new_node,
    popcount,
    queue_node,
    rebuild_uncaptured,
    remaining_set_hash,
    same_remaining_set,
    trailing_zeros,
    two_compilations,
    unpack_counts,
)
from ..bnb import SearchState

drop_stale_cache(__file__, ["../_numba"])

#: per-node arrays beyond the branch-and-bound's (parent, last, depth = length of the chain, hash, dead)
NODE_FIELDS = {"node_reach": np.float64, "node_b0": np.float64, "node_fewest": np.int32,
               "node_default": np.float64, "node_default_class": np.int32, "node_edge_start": np.int64,
               "node_edge_count": np.int32, "node_order": np.int32, "node_groups": np.int32,
               "node_coverage": np.int64}
EDGE_FIELDS = {"edge_antecedent": np.int32, "edge_mistakes": np.float64, "edge_class": np.int32,
               "edge_child": np.int32}
TABLE_FIELDS = {"table_rules": np.int32, "table_mistakes": np.float64, "table_count": np.int64}
#: a table count above this is refused rather than risking an int64 overflow
COUNT_LIMIT = 1 << 62


class RashomonState(SearchState):
    """The graph's node arrays (``node_*``, with :class:`~optrules.bnb.SearchState`'s), heap and map,
    the edges (``edge_*``, ``n_edges[0]`` used), and after counting the tables (``table_*``)."""

    def __init__(self, n_antecedents: int, capacity: int = 1 << 12):
        super().__init__(n_antecedents, NODE_FIELDS, capacity)
        edges = max(capacity, 4 * n_antecedents + 16)
        for name, dtype in EDGE_FIELDS.items():
            setattr(self, name, np.zeros(edges, dtype))
        self.n_edges = np.zeros(1, np.int64)

    @property
    def edge_bytes(self) -> int:
        return sum(getattr(self, name).nbytes for name in EDGE_FIELDS)

    @property
    def nbytes(self) -> int:
        return super().nbytes + self.edge_bytes

    def make_room(self, allowance: int | None = None) -> bool:
        """The edges first (an expansion adds at most one per antecedent), then the nodes, heap and map."""
        capacity = self.edge_child.shape[0]
        if int(self.n_edges[0]) + self.n_antecedents > capacity:
            needed = self._least(int(self.n_edges[0]) + self.n_antecedents, capacity)
            width = sum(np.dtype(d).itemsize for d in EDGE_FIELDS.values())
            size = max(needed, int(self.GROWTH * capacity))
            if allowance is not None:
                spare = allowance - self.nbytes - max(getattr(self, name).nbytes for name in EDGE_FIELDS)
                if spare < (needed - capacity) * width:
                    return False
                size = max(needed, min(size, capacity + spare // (2 * width)))  # half: the nodes may grow too
            self._grow(list(EDGE_FIELDS), size)
        return super().make_room(None if allowance is None else allowance - self.edge_bytes)

    def push_root(self, b0: float, default: float, default_class: int, n_groups: int) -> None:
        super().push_root(b0)
        self.node_groups[0] = n_groups
        self.node_reach[0], self.node_b0[0], self.node_fewest[0] = 0.0, b0, 0
        self.node_default[0], self.node_default_class[0] = default, default_class
        self.node_hash[0] = np.uint64(0)


@njit(cache=True)
def captured_totals(u, bits, class_weights, minority_weights, totals, minority, n_groups):
    """For every antecedent a: the class totals, the minority weight and the number of groups of
    ``u & bits[a]`` (groups of identical samples; one bit each)."""
    n_classes = class_weights.shape[1]
    for a in range(bits.shape[0]):
        for c in range(n_classes):
            totals[a, c] = 0.0
        lost = 0.0
        count = 0
        for w in range(u.shape[0]):
            x = u[w] & bits[a, w]
            base = w * 64
            while x != 0:
                g = base + np.int64(trailing_zeros(x))
                for c in range(n_classes):
                    totals[a, c] += class_weights[g, c]
                lost += minority_weights[g]
                count += 1
                x &= x - np.uint64(1)
        minority[a] = lost
        n_groups[a] = count


@njit(cache=True)
def captured_packed(u, bits, packed_weights, totals, minority, n_groups):
    """:func:`captured_totals` for two classes and whole weights, with each group's (samples,
    positives, minority) packed in one int64 (data/groups.py): one addition per captured group
    instead of one per class (~2.5x faster on COMPAS)."""
    for a in range(bits.shape[0]):
        acc = np.int64(0)
        count = 0
        for w in range(u.shape[0]):
            x = u[w] & bits[a, w]
            count += popcount(x)
            base = w * 64
            while x != 0:
                acc += packed_weights[base + np.int64(trailing_zeros(x))]
                x &= x - np.uint64(1)
        samples, positives, lost = unpack_counts(acc)
        totals[a, 0] = samples - positives
        totals[a, 1] = positives
        minority[a] = lost
        n_groups[a] = count


_COVERAGE_MIX = np.uint64(0x9E3779B97F4A7C15)  # (odd: distinct coverages change the hash differently)


@njit(inline="always", cache=True)
def _find_node(h, coverage, u, a, map_slots, node_hash, node_coverage, parent, last, bits, all_ones, scratch):
    """Probe the map for the node of uncaptured set ``u & ~bits[a]`` and ``coverage`` (hash ``h``):
    ``(slot, found)``, the slot holding it or the free slot where it belongs. Every hit is checked
    word by word."""
    mask = map_slots.shape[0] - 1
    probe = np.int64(h & np.uint64(mask))
    while map_slots[probe] >= 0:
        other = map_slots[probe]
        if node_hash[other] == h and node_coverage[other] == coverage and \
                same_remaining_set(other, u, a, parent, last, bits, all_ones, scratch):
            return probe, True
        probe = (probe + 1) & mask
    return probe, False


@njit(cache=True)
def _majority(totals):
    """(index, weight) of the largest class total, the first on ties."""
    best = 0
    for c in range(1, totals.shape[0]):
        if totals[c] > totals[best]:
            best = c
    return best, totals[best]


# -- the expansion loop -----------------------------------------------------------------------------
# Nodes are popped in batches (optrules._numba's "batches"): what each batch node's rules capture and its
# children's costs are computed side by side (_expand_slot, on as many threads as the enumeration has),
# then what they change (the graph's nodes, the map, the queue, the edges) on one thread in the batch's
# order (_merge_slot). A batch holds only nodes keyed below its first node's key + lambda N: an edge
# raises a key by lambda N at least (the order is consistent), so nothing a batch node adds or makes
# cheaper is keyed below another batch node's key, and no batch node's reach changes within its batch:
# every node is expanded as at its turn in the one-at-a-time order, on any number of threads.

# the fields of a child's record: its values and its integers
REACH, B0, DEFAULT, MISTAKES = range(4)
RULE, RULE_CLASS, CHILD_CLASS, GROUPS, COVERAGE, EXTENSIBLE, MAP_SLOT, FOUND = range(8)


class Batch(NamedTuple):
    """A batch's slots: the node each expands (``nodes``) and what its expansion leaves the merge: its
    records (``sizes``; each record's ``values``, ``integers`` and map key in ``hashes``)."""

    nodes: np.ndarray
    sizes: np.ndarray
    values: np.ndarray
    integers: np.ndarray
    hashes: np.ndarray


class SlotScratch(NamedTuple):
    """A slot's scratch, a row a slot: what its node leaves (``u``, ``live`` words), a child's set
    (``child_u``, for the map's word-by-word checks), the node's class totals and each antecedent's
    captured totals, minority weight and groups."""

    u: np.ndarray
    child_u: np.ndarray
    node_totals: np.ndarray
    totals: np.ndarray
    minority: np.ndarray
    n_groups: np.ndarray
    live: np.ndarray
    child_totals: np.ndarray


#: bytes a slot holds, an antecedent (records and captured totals besides the classes'), a word, a class
SLOT_BYTES_PER_ANTECEDENT, SLOT_BYTES_PER_WORD = 120, 32


def batch_size(n_antecedents: int, n_words: int, n_classes: int, max_bytes: int | None = None) -> int:
    """Nodes a batch pops (:func:`~optrules._numba.batch_slots`)."""
    slot_bytes = ((SLOT_BYTES_PER_ANTECEDENT + 8 * n_classes) * int(n_antecedents) + SLOT_BYTES_PER_WORD * int(n_words))
    return batch_slots(n_antecedents, slot_bytes, max_bytes, MAX_BATCH)


def batch(n_antecedents: int, n_words: int, n_classes: int, slots: int) -> tuple[Batch, SlotScratch]:
    m = n_antecedents
    return (Batch(np.full(slots, -1, np.int64), np.zeros(slots, np.int64), np.zeros((slots, m, 4)),
                  np.zeros((slots, m, 8), np.int64), np.zeros((slots, m), np.uint64)),
            SlotScratch(np.zeros((slots, n_words), np.uint64), np.zeros((slots, n_words), np.uint64),
                        np.zeros((slots, n_classes)), np.zeros((slots, m, n_classes)), np.zeros((slots, m)),
                        np.zeros((slots, m), np.int64), np.zeros((slots, n_words), np.int64),
                        np.zeros((slots, n_classes))))


def _expand(max_pops, max_expansions, counting, limits, longest, requirements, tree, frontier, ints, graph, slots,
            scratch):
    """Expand nodes best first in batches (see above and :func:`optrules.corels.rashomon.enumerate_rashomon`
    for the bounds) until ``max_pops`` are expanded or ``max_expansions`` (the node budget's rest); a batch
    once begun is filled, whatever the pops. ``counting`` = (capture bits, all ones, class weights,
    minority weights, packed weights): ``packed_weights`` are the groups' weights packed (two classes,
    whole weights; else empty: ``class_weights`` and ``minority_weights`` are summed). ``limits`` =
    (lambda N, epsilon N, allowance N (UB + epsilon), tolerance, 1 if the support bounds apply);
    ``requirements`` = (the requirements each antecedent covers, the fewest rules that complete each
    coverage: see :class:`~optrules.corels.requirements.Requirements`); ``graph`` = (nodes, edges, edges
    used): ``nodes`` = (reach, b0, fewest rules, default, default class, edge start, edge count,
    expansion order, groups left, coverage), ``edges`` = (antecedent, mistakes, class, child),
    ``n_edges[0]`` used; ``slots``: a :class:`Batch`; ``scratch``: a :class:`SlotScratch`. In
    :data:`expand_parallel` a batch's slots are expanded on numba's threads (its caller holds them:
    :func:`optrules.bnb.parallel_region`)."""
    bits = counting[0]
    nodes, edges, n_edges = graph
    parent, last, depth, node_hash, expanded = tree
    heap_key, heap_node, map_slots = frontier
    reach, b0, fewest, default, default_class, edge_start, edge_count, order, groups_left, node_coverage = nodes
    lambda_n, tolerance = limits[0], limits[3]
    m = bits.shape[0]
    size = slots.nodes.shape[0]
    edge_child = edges[3]
    pops = 0
    while ints[HEAP_SIZE] > 0:
        if pops >= max_pops or pops >= max_expansions:
            return POPS_DONE
        if needs_room(ints, m, parent, heap_key, map_slots) or n_edges[0] + m > edge_child.shape[0]:
            return NEED_ROOM
        # as many nodes as the arrays have room for the children and edges of, keyed below the first's
        # key + lambda N (see above)
        fits = min(size, free_room(ints, parent, heap_key, map_slots) // m, (edge_child.shape[0] - n_edges[0]) // m)
        n_slots = 0
        first_key = np.inf
        while n_slots < fits and pops < max_expansions and ints[HEAP_SIZE] > 0:
            key = heap_key[0]
            if n_slots > 0 and key >= first_key + lambda_n - tolerance:
                break
            node = heap_pop(heap_key, heap_node, ints[HEAP_SIZE])
            ints[HEAP_SIZE] -= 1
            if expanded[node] or key > reach[node] + b0[node] + tolerance or fewest[node] >= longest:
                continue  # stale entry, or a node no list may extend
            if n_slots == 0:
                first_key = key
            pops += 1
            expanded[node] = True
            order[ints[EXPANDED]] = node
            ints[EXPANDED] += 1
            slots.nodes[n_slots] = node
            n_slots += 1
        for s in prange(n_slots):  # (the node fields it reads as arrays: numba's parallel loops take no nested tuples)
            _expand_slot(s, counting, limits, requirements, tree, frontier, reach, b0, node_coverage, slots, scratch)
        for s in range(n_slots):
            _merge_slot(s, counting, requirements, tree, frontier, ints, graph, slots, scratch)
    return QUEUE_EMPTY


@njit(cache=True, _nrt=False)  # (allocates nothing: see optrules._numba.Workspace)
def _expand_slot(s, counting, limits, requirements, tree, frontier, reach, b0, node_coverage, slots, scratch):
    """Slot ``s``'s node: what each antecedent's rule captures of what it leaves, and each child worth a
    place in the graph (Lemma 2 with Theorem 20, the support bounds) into the slot's records, looked up in
    the map as the batch found it. Writes only the slot's rows: the graph changes in the merge alone."""
    bits, all_ones, class_weights, minority_weights, packed_weights = counting
    parent, last, depth, node_hash, expanded = tree
    map_slots = frontier[2]
    requirement_masks, rules_needed = requirements
    complete = rules_needed.shape[0] - 1
    lambda_n, epsilon_n, allowance, tolerance, use_support = limits[0], limits[1], limits[2], limits[3], limits[4] > 0
    n_classes = class_weights.shape[1]
    u, child_u, node_totals, totals = scratch.u[s], scratch.child_u[s], scratch.node_totals[s], scratch.totals[s]
    minority, n_groups, live, child_totals = scratch.minority[s], scratch.n_groups[s], scratch.live[s], scratch.child_totals[s]
    values, integers, hashes = slots.values[s], slots.integers[s], slots.hashes[s]
    node = slots.nodes[s]
    rebuild_uncaptured(node, parent, last, bits, all_ones, u)
    class_sums(u, live, live_word_list(u, live), class_weights, minority_weights, node_totals)
    if packed_weights.shape[0] > 0:
        captured_packed(u, bits, packed_weights, totals, minority, n_groups)
    else:
        captured_totals(u, bits, class_weights, minority_weights, totals, minority, n_groups)
    covered = node_coverage[node]
    n_records = 0
    for a in range(bits.shape[0]):
        if n_groups[a] == 0:
            continue  # a rule must capture something new
        rule_class, correct = _majority(totals[a])
        captured = 0.0
        for c in range(n_classes):
            captured += totals[a, c]
            child_totals[c] = node_totals[c] - totals[a, c]
        child_class, child_correct = _majority(child_totals)
        child_weight = 0.0
        for c in range(n_classes):
            child_weight += child_totals[c]
        rule_mistakes = captured - correct
        child_reach = reach[node] + lambda_n + rule_mistakes
        child_b0 = b0[node] - minority[a]
        child_default = child_weight - child_correct
        child_covered = covered | requirement_masks[a]
        # Lemma 2 with Theorem 20 (extensions: at least one rule, and those the requirements still
        # need), or the child's own list (the default next, if it meets the requirements)
        extensible = child_reach + lambda_n * max(1, rules_needed[child_covered]) + child_b0 <= allowance
        if not extensible and (child_covered != complete or child_reach + child_default > allowance):
            continue
        if use_support:  # Theorems 11 and 21 for the set (rashomon_accurate/excessive_support_bound)
            # (removing the rule keeps a list admissible only if it covers no new requirement; the
            # cut before it only if what precedes is complete)
            if child_covered == covered and correct + tolerance < lambda_n - epsilon_n:
                continue
            if covered == complete and child_weight - child_b0 + tolerance < lambda_n - epsilon_n:
                continue
        h = remaining_set_hash(u, bits, a) ^ (np.uint64(child_covered) * _COVERAGE_MIX)
        slot, found = _find_node(h, child_covered, u, a, map_slots, node_hash, node_coverage, parent, last, bits,
                                 all_ones, child_u)
        values[n_records, REACH] = child_reach
        values[n_records, B0] = child_b0
        values[n_records, DEFAULT] = child_default
        values[n_records, MISTAKES] = rule_mistakes
        integers[n_records, RULE] = a
        integers[n_records, RULE_CLASS] = rule_class
        integers[n_records, CHILD_CLASS] = child_class
        integers[n_records, GROUPS] = n_groups[a]
        integers[n_records, COVERAGE] = child_covered
        integers[n_records, EXTENSIBLE] = extensible
        integers[n_records, MAP_SLOT] = slot
        integers[n_records, FOUND] = map_slots[slot] if found else -1
        hashes[n_records] = h
        n_records += 1
    slots.sizes[s] = n_records


@njit(cache=True, _nrt=False)
def _merge_slot(s, counting, requirements, tree, frontier, ints, graph, slots, scratch):
    """What slot ``s``'s children change, in their order: a node found again gets the cheaper (or
    shorter) way in, a new one its place in the graph and the map; each extensible one is queued; the
    node's edges are written."""
    bits, all_ones = counting[0], counting[1]
    nodes, edges, n_edges = graph
    parent, last, depth, node_hash, expanded = tree
    heap_key, heap_node, map_slots = frontier
    reach, b0, fewest, default, default_class, edge_start, edge_count, order, groups_left, node_coverage = nodes
    edge_antecedent, edge_mistakes, edge_class, edge_child = edges
    u, child_u = scratch.u[s], scratch.child_u[s]
    values, integers, hashes = slots.values[s], slots.integers[s], slots.hashes[s]
    node = slots.nodes[s]
    edge_start[node] = n_edges[0]
    rules = fewest[node] + 1  # (an earlier node of the batch may have found a shorter way in)
    for r in range(slots.sizes[s]):
        a = integers[r, RULE]
        child_reach = values[r, REACH]
        extensible = integers[r, EXTENSIBLE] != 0
        slot = integers[r, MAP_SLOT]
        child = integers[r, FOUND]
        if child < 0 and map_slots[slot] >= 0:
            # an earlier child of the batch took the free slot the lookup ended at: look again (the map's
            # slots are only ever filled, so a lookup that found its node still holds)
            slot, found = _find_node(hashes[r], integers[r, COVERAGE], u, a, map_slots, node_hash, node_coverage,
                                     parent, last, bits, all_ones, child_u)
            child = map_slots[slot] if found else -1
        if child >= 0:
            if child_reach < reach[child] or (rules < fewest[child] and not expanded[child]):
                # a cheaper (or shorter) way in, before the node's expansion (the order is consistent)
                reach[child] = min(reach[child], child_reach)
                fewest[child] = min(fewest[child], rules)
                if extensible:
                    queue_node(heap_key, heap_node, ints, reach[child] + b0[child], child)
            else:
                fewest[child] = min(fewest[child], rules)
        else:
            child = new_node(node, a, hashes[r], slot, parent, last, depth, node_hash, expanded, map_slots, ints)
            ints[MAP_COUNT] += 1
            reach[child] = child_reach
            b0[child] = values[r, B0]
            fewest[child] = rules
            default[child] = values[r, DEFAULT]
            default_class[child] = integers[r, CHILD_CLASS]
            groups_left[child] = groups_left[node] - integers[r, GROUPS]
            node_coverage[child] = integers[r, COVERAGE]
            edge_count[child] = 0
            if extensible:
                queue_node(heap_key, heap_node, ints, child_reach + values[r, B0], child)
        e = n_edges[0]
        edge_antecedent[e] = a
        edge_mistakes[e] = values[r, MISTAKES]
        edge_class[e] = integers[r, RULE_CLASS]
        edge_child[e] = child
        n_edges[0] = e + 1
    edge_count[node] = np.int32(n_edges[0] - edge_start[node])


# One source, two compilations (optrules._numba.two_compilations): the serial one, every enumeration on one
# thread, and the parallel one, compiled only when an enumeration runs on several threads. (The serial
# one allocates nothing, as the searches' kernels.)
expand, expand_parallel = two_compilations(_expand, "expand_parallel")


@njit(inline="always", cache=True)
def _ranks_before(i, j, rules, mistakes):
    return rules[i] < rules[j] or (rules[i] == rules[j] and mistakes[i] < mistakes[j])


@njit(cache=True)
def _rank_by_rules_then_mistakes(ranked, rules, mistakes):
    """``ranked`` (length n) := the indices 0 .. n-1 ordered by (rules, mistakes), by heapsort: numba's
    stable argsort took 4.3 s to compile in a first Rashomon set, for an order whose ties are merged."""
    n = ranked.shape[0]
    for i in range(n):
        ranked[i] = i
    for root in range(n // 2 - 1, -1, -1):
        _sift_ranks(ranked, root, n, rules, mistakes)
    for end in range(n - 1, 0, -1):
        ranked[0], ranked[end] = ranked[end], ranked[0]
        _sift_ranks(ranked, 0, end, rules, mistakes)


@njit(inline="always", cache=True)
def _sift_ranks(ranked, root, n, rules, mistakes):
    while True:
        child = 2 * root + 1
        if child >= n:
            return
        if child + 1 < n and _ranks_before(ranked[child], ranked[child + 1], rules, mistakes):
            child += 1
        if not _ranks_before(ranked[root], ranked[child], rules, mistakes):
            return
        ranked[root], ranked[child] = ranked[child], ranked[root]
        root = child


@njit(cache=True)
def count_tables(position, max_steps, graph, limits, nodes, edges, tables, index, scratch):
    """Fill the tables from step ``position`` on: steps ``0 .. n_nodes-1`` give every node its default
    entry (unexpanded nodes have no other), steps ``n_nodes ..`` the expanded nodes in the order
    ``children_first``, each from its children's tables. A default ends a list only at a node whose
    coverage is ``complete``. Returns ``(position reached, status)``: status 0 done, 1 the
    table arrays (``used[0]`` entries filled) or the scratch need room, 2 a count passed COUNT_LIMIT,
    3 ``max_steps`` steps done (call again to go on).
    ``graph`` = (nodes, expanded nodes children first, the complete coverage, expanded flags); ``limits`` =
    (allowance, lambda N, longest list); ``index`` = (each node's table start and length, ``cheapest``,
    ``used``); ``scratch`` = (rules, mistakes, count).
    ``cheapest[node]``: the smallest cost of its table's entries (inf for none)."""
    n_nodes, children_first, complete, expanded = graph
    allowance, lambda_n, longest = limits
    table_start, table_length, cheapest, used = index
    scratch_rules, scratch_mistakes, scratch_count = scratch
    reach, fewest, default, edge_start, edge_count, node_coverage = nodes
    edge_antecedent, edge_mistakes, edge_class, edge_child = edges
    table_rules, table_mistakes, table_count = tables
    total_steps = n_nodes + children_first.shape[0]
    end = min(total_steps, position + max_steps)
    while position < end:
        if position < n_nodes:
            node = position
            if expanded[node]:  # counted in the second pass, its default included
                table_start[node] = 0
                table_length[node] = 0
                cheapest[node] = np.inf
                position += 1
                continue
            if used[0] + 1 > table_rules.shape[0]:
                return position, 1
            table_start[node] = used[0]
            left = allowance - reach[node]
            if default[node] <= left and node_coverage[node] == complete:
                table_rules[used[0]] = 0
                table_mistakes[used[0]] = default[node]
                table_count[used[0]] = 1
                used[0] += 1
                table_length[node] = 1
                cheapest[node] = default[node]
            else:
                table_length[node] = 0
                cheapest[node] = np.inf
            position += 1
            continue
        node = children_first[position - n_nodes]
        left = allowance - reach[node]
        rules_left = longest - fewest[node]
        # gather: the default, then each edge's child's entries shifted by one rule
        n = 0
        if default[node] <= left and node_coverage[node] == complete:
            scratch_rules[0] = 0
            scratch_mistakes[0] = default[node]
            scratch_count[0] = 1
            n = 1
        for e in range(edge_start[node], edge_start[node] + edge_count[node]):
            child = edge_child[e]
            for i in range(table_start[child], table_start[child] + table_length[child]):
                k = table_rules[i] + 1
                mistakes = edge_mistakes[e] + table_mistakes[i]
                if k <= rules_left and mistakes + lambda_n * k <= left:
                    if n >= scratch_rules.shape[0]:
                        return position, 1
                    scratch_rules[n] = k
                    scratch_mistakes[n] = mistakes
                    scratch_count[n] = table_count[i]
                    n += 1
        # merge equal (rules, mistakes): rank the entries by rules, then mistakes
        ranked = np.empty(n, np.int64)
        _rank_by_rules_then_mistakes(ranked, scratch_rules, scratch_mistakes)
        if used[0] + n > table_rules.shape[0]:  # (at most n distinct entries)
            return position, 1
        start = used[0]
        best = np.inf
        i = start - 1
        for j in range(n):
            r = ranked[j]
            if j == 0 or scratch_rules[r] != scratch_rules[ranked[j - 1]] or scratch_mistakes[r] != scratch_mistakes[ranked[j - 1]]:
                i += 1
                table_rules[i] = scratch_rules[r]
                table_mistakes[i] = scratch_mistakes[r]
                table_count[i] = 0
                cost = scratch_mistakes[r] + lambda_n * scratch_rules[r]
                if cost < best:
                    best = cost
            if table_count[i] > COUNT_LIMIT - scratch_count[r]:
                return position, 2
            table_count[i] += scratch_count[r]
        distinct = i + 1 - start
        table_start[node] = start
        table_length[node] = distinct
        cheapest[node] = best
        used[0] = start + distinct
        position += 1
    return position, 0 if position >= total_steps else 3
