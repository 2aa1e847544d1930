"""Exact pricing by branch-and-bound over conjunctions: the minimum reduced cost, proven.

The pricing problem asks for the clause k (a set of at most D features) minimising

    rc(k) = z_weight * |negatives covered by k| - sum of mu over positives covered by k + u * (1 + |k|)

(with sample weights, the first term is the covered negatives' weight) with u the price of a unit of complexity.
Adding a feature to a clause only shrinks what it covers and
adds u, so every extension k' of k (with |k'| >= |k| + 1) has

    rc(k') >= - (mu covered by k) + u * (2 + |k|)                                  (extension bound)

(the negatives' term is never negative). A depth-first search over clauses, extending a clause only
with the features after its own last one (in its parent's list of candidates, below), visits each
clause once; it skips every subtree whose extension bound cannot beat the best clause found, so when it
finishes the best clause *is* the minimum. Roots (one-feature clauses) are taken most promising first
(by the mu they cover, largest first), which finds good clauses early; when the time runs out the
unexplored part is bounded by the smallest extension bound left, which is still a proven lower bound
on the minimum reduced cost. Only positives with mu > 0 matter. A root's loop over its children stops
at the first feature whose own mu fails the bound; a child is tested on popcount x largest mu before
its mu is summed; two features of one nesting chain (``data.chains``) are never combined; and a clause
that covers what its parent or an already extended sibling covers is not extended.

A node prices all its children first and keeps, in a list, those whose extensions may win; only those
are candidates below it (tail pruning, as in set-enumeration trees for itemset mining: a clause that adds
``r`` to a child covers at most what the child that adds ``r`` covers, at a higher complexity, so if that
one's extension bound fails, so does the clause's). The list is extended smallest mu first, so a child
that covers much has few candidates left (Bayardo's ordering for Max-Miner): a clause is reached through
its subsets of least mu, whose bounds fail first. A feature another one dominates on the duals (covers
every priced positive it covers, no negative it misses) is searched neither as a root
(:func:`undominated_features`) nor, on a node's own rows, as a child to extend
(:func:`_drop_dominated_tails`). On the last duals of an ilpd fold (160 features, up to 5
conditions) the search proves its minimum in 4.6 s instead of 10.5 s; on ionosphere's and wdbc's (540
features) it prices 15-20 million clauses a second instead of 5-7 million. The roots are dealt to two
parts searched in threads (:class:`PricingSearch`), for the two cores.

On many rows, a child's cost is counted only as far as it matters: its negatives a block of words at a
time until they cost more than its mu could win back (:func:`_negative_cost_of`), and its mu a word at a
time where the word's positives share one value (positives sorted by mu, :func:`_covered_mu`): on the
last duals of bank marketing (4,180 positives priced, 36,000 negatives) 2.4 -> 5.1 million clauses a
second, on 700,000 rows of a generated table 0.4 -> 1.1 million.

On the data of the paper's experiments this proves the pricing problem where the HiGHS pricing IP
runs out of time (see docs/rulesets.md), and it needs no solver.

The same search serves two other questions: the largest ratio of a clause's gain to its complexity
(:data:`RAISE_PRICE`: the certificate's bound) and every clause that prices below a threshold
(:data:`COLLECT`: the columns that could be in a better rule set once the master LP is solved).
"""

from __future__ import annotations

import functools
import time
from typing import NamedTuple

import numpy as np
from numba import njit

from .._numba import drop_stale_cache, popcount, trailing_zeros, weighted_count
from ..budget import NodeBudget, StoppableThreads
from ..data import bitset

drop_stale_cache(__file__, ["../_numba"])


class Problem(NamedTuple):
    """The pricing problem as the search reads it: features in search order (``order``, the mu each
    covers, ``order_mu``, and its nesting chain or -1), what each feature covers (packed: the positives
    with mu > 0, in decreasing mu, the negatives), the positives' mu (padded to whole words), each word's
    one mu when its positives share it (``word_mu``, else -1: see :func:`_covered_mu`) and the largest, and the
    negatives' cost (``z_weight`` each, or their own weights: packed, or as bit planes of whole
    multiples; see :func:`_negative_weights`); clauses of at most ``max_degree`` features."""

    order: np.ndarray
    order_mu: np.ndarray
    chain_of: np.ndarray
    positives: np.ndarray
    negatives: np.ndarray
    mu: np.ndarray
    word_mu: np.ndarray
    mu_max: float
    z_weight: float
    z_weights: np.ndarray
    z_planes: np.ndarray
    max_degree: int


class Stack(NamedTuple):
    """The search's state between two calls, by level (a clause of ``d`` features at level ``d``): what
    the clause covers (packed positives and negatives, and their counts), the position of its last
    feature (``chosen``), how far the pricing of its children got (``priced``), the children to extend
    (``tails``: positions, ``tail_mu``: the mu each covers, ``tail_len``) and how many were
    (``cursor``); the depth to resume at (0: a new root), the ratio bound so far and the best clause;
    with :data:`COLLECT`, the clauses met below the threshold (``collected[k, :collected_len[k]]``, as many
    as fit; ``n_collected[0]`` counts them all)."""

    positives: np.ndarray
    negatives: np.ndarray
    counts: np.ndarray
    chosen: np.ndarray
    priced: np.ndarray
    cursor: np.ndarray
    tails: np.ndarray
    tail_mu: np.ndarray
    tail_len: np.ndarray
    depth: np.ndarray
    ratio_low: np.ndarray
    best_clause: np.ndarray
    collected: np.ndarray
    collected_len: np.ndarray
    n_collected: np.ndarray


class Siblings(NamedTuple):
    """By level, a hash table of what the open node's extended children cover (see
    :func:`_covers_as_another`): slots valid while their ``stamp`` is the level's."""

    level: np.ndarray
    stamp: np.ndarray
    hash: np.ndarray
    position: np.ndarray


# what a search does with a clause that prices below ``best``: keeps it as the new best (the minimum),
# raises the unit price until it prices zero (the largest ratio), or collects it, ``best`` staying the
# threshold (every clause below a reduced cost)
MINIMUM, RAISE_PRICE, COLLECT = 0, 1, 2

_NODES_PER_CALL = 200_000
_WORDS_PER_CALL = 50_000_000  # about 50 ms of work between two looks at the clock


@njit(inline="always", cache=True)
def _mu_sum(words, mu):
    total = 0.0
    for w in range(words.shape[0]):
        x = words[w]
        base = w * 64
        while x != 0:
            total += mu[base + np.int64(trailing_zeros(x))]
            x &= x - np.uint64(1)
    return total


@njit(inline="always", cache=True)
def _covered_mu(words, mu, word_mu):
    """The mu of the positives set in ``words``: by popcount in a word whose positives share one mu
    (``word_mu[w] >= 0``), bit by bit in the others. The positives come in decreasing mu, and the duals
    take few values (most positives a set misses have mu 1), so most words share one: on bank marketing's
    last duals (4,180 positives priced, 4,161 of them at 1) a clause's mu cost a step per positive it
    covers, now one a word."""
    total = 0.0
    for w in range(words.shape[0]):
        x = words[w]
        if x == 0:
            continue
        if word_mu[w] >= 0.0:
            total += word_mu[w] * np.float64(popcount(x))
            continue
        base = w * 64
        while x != 0:
            total += mu[base + np.int64(trailing_zeros(x))]
            x &= x - np.uint64(1)
    return total


@njit(inline="always", cache=True)
def _count(words):
    total = 0
    for w in range(words.shape[0]):
        total += np.int64(popcount(words[w]))
    return total


@njit(inline="always", cache=True)
def _negative_cost(words, z_weight, z_weights, z_planes):
    """What the negatives set in ``words`` cost: z_weight x their number; with integer weights (repeated
    rows, frequency weights) z_weight x the sum over the weights' bit planes of 2^b x popcount; with
    other weights (``z_weights`` non-empty) their sum, bit by bit."""
    if z_planes.shape[0] > 0:
        return z_weight * weighted_count(words, z_planes)
    if z_weights.shape[0] > 0:
        return _mu_sum(words, z_weights)
    return z_weight * _count(words)


@njit(inline="always", cache=True)
def _negative_cost_of(parent, feature, out, z_weight, z_weights, z_planes, limit):
    """What the negatives set in both ``parent`` and ``feature`` cost (see :func:`_negative_cost`), or
    +inf once the count, a block of words at a time (``out`` takes them), reaches ``limit``: past it the
    child neither wins nor lowers the ratio bound (a partial count returned instead could tie the best
    but for rounding, and pass for an improvement). A child of a node that covers many negatives usually
    covers more than its mu is worth (bank marketing: 36,000 negatives, 559 words)."""
    n = parent.shape[0]
    if n <= _BLOCK_WORDS:  # one block: counted whole, as in the search's inner loop of small tables
        for w in range(n):
            out[w] = parent[w] & feature[w]
        return _negative_cost(out, z_weight, z_weights, z_planes)
    units = limit / z_weight if z_weight > 0.0 else np.inf  # (the plain and whole weights count units)
    count = 0
    total = 0.0
    for start in range(0, n, _BLOCK_WORDS):
        end = min(start + _BLOCK_WORDS, n)
        for w in range(start, end):
            out[w] = parent[w] & feature[w]
        if z_weights.shape[0] > 0:
            total += _mu_sum(out[start:end], z_weights[start * 64:])
            if total >= limit and end < n:
                return np.inf
        else:
            count += (weighted_count(out[start:end], z_planes[:, start:end]) if z_planes.shape[0] > 0
                      else _count(out[start:end]))
            if count >= units and end < n:
                return np.inf
    return total if z_weights.shape[0] > 0 else z_weight * count


_BLOCK_WORDS = 32  # words counted between two looks at the limit


@njit(inline="always", cache=True)
def _lower_ratio(ratio, bound, complexity):
    """``min(ratio, bound / complexity)`` where that is negative (only negative ratios matter), without
    a division in the common case."""
    if bound < 0.0 and bound < ratio * complexity:
        return bound / complexity
    return ratio


_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


@njit(inline="always", cache=True)
def _mix(x):
    """splitmix64's finaliser: a well-spread 64-bit hash of ``x``."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@njit(inline="always", cache=True)
def _covers_as_another(depth, child, p, problem, stack, siblings):
    """Whether the clause at ``child`` covers what its parent covers, or what an earlier sibling already
    expanded covers (same positives with mu > 0, same negatives); else records it among the siblings.

    Either way its extensions cover what the parent's or that sibling's extensions with the same added
    features cover, at the same or a higher complexity, so they price no lower (and, where negative,
    have no lower ratio): those are searched already (or cut by a bound that holds for them). Clauses
    of a node that narrows the rows to a few often take many thresholds that split none of them.
    A hash finds the sibling, the words confirm it: no collision can cut a subtree."""
    stack_p, stack_z, stack_counts = stack.positives, stack.negatives, stack.counts
    pos_bits, neg_bits, order = problem.positives, problem.negatives, problem.order
    level_stamp, sibling_stamp = siblings.level, siblings.stamp
    sibling_hash, sibling_pos = siblings.hash, siblings.position
    if stack_counts[child, 0] == stack_counts[depth, 0] and stack_counts[child, 1] == stack_counts[depth, 1]:
        return True
    # hashed by what it covers in counts and first words (hashing every word took 15% of a bank marketing
    # search's time, 700 words a node): the words confirm any clause that hashes alike
    h = _mix(_GOLDEN ^ np.uint64(stack_counts[child, 0]))
    h = _mix(h ^ np.uint64(stack_counts[child, 1]))
    h = _mix(h ^ stack_p[child, 0])
    h = _mix(h ^ stack_z[child, 0])
    mask = sibling_stamp.shape[1] - 1
    stamp = level_stamp[depth]
    slot = np.int64(h & np.uint64(mask))
    while sibling_stamp[depth, slot] == stamp:
        if sibling_hash[depth, slot] == h:
            other = order[sibling_pos[depth, slot]]
            same = True
            for w in range(stack_p.shape[1]):
                if (stack_p[depth, w] & pos_bits[other, w]) != stack_p[child, w]:
                    same = False
                    break
            if same:
                for w in range(stack_z.shape[1]):
                    if (stack_z[depth, w] & neg_bits[other, w]) != stack_z[child, w]:
                        same = False
                        break
            if same:
                return True
        slot = (slot + 1) & mask
    sibling_stamp[depth, slot] = stamp
    sibling_hash[depth, slot] = h
    sibling_pos[depth, slot] = p
    return False


@njit(inline="always", cache=True)
def _chain_taken(chain_of, chosen, depth, chain):
    for level in range(1, depth + 1):
        if chain_of[chosen[level]] == chain:
            return True
    return False


@njit(inline="always", cache=True)
def _evaluate_children(depth, first, last, node_cap, problem, stack, unit_price, best, ratio, mode):
    """Prices every child of the clause at ``depth`` (itself and one more feature, taken from its
    candidates) and lists, in ``tails[depth]``, the children whose extensions may still win, with the mu
    they cover. Those are the only candidates of any child's children (tail pruning): a child of the
    child at ``q`` that adds ``r`` covers at most the positives the child at ``r`` covers, at a higher
    complexity, so if the child at ``r`` has an extension bound that fails, so does every clause that
    adds ``r`` below its siblings. A node's candidates: for the root, every later feature; below, the
    entries of its parent's list after its own. Prices candidates ``first`` to ``last`` (indices into
    that list) and stops early after ``node_cap`` clauses, so that a node budget is kept to the clause.
    Returns ``(best, unit_price, ratio, nodes, best_length, next)``: ``best_length`` -1 when no child
    improved, ``next`` the first candidate not priced (``last`` when every one is done)."""
    order, order_mu, chain_of = problem.order, problem.order_mu, problem.chain_of
    mu, word_mu, mu_max = problem.mu, problem.word_mu, problem.mu_max
    pos_bits, neg_bits, max_degree = problem.positives, problem.negatives, problem.max_degree
    z_weight, z_weights, z_planes = problem.z_weight, problem.z_weights, problem.z_planes
    stack_p, stack_z, chosen, best_clause = stack.positives, stack.negatives, stack.chosen, stack.best_clause
    tails, tail_mu, tail_len = stack.tails, stack.tail_mu, stack.tail_len
    child = depth + 1
    nodes = 0
    best_length = -1
    k = first
    while k < last:
        if nodes >= node_cap:
            return best, unit_price, ratio, nodes, best_length, k
        p = k if depth == 1 else tails[depth - 1, k]
        k += 1
        bound = -order_mu[p] + unit_price * (1.0 + child)
        if bound >= best:
            # a child covers at most the positives its feature covers
            ratio = _lower_ratio(ratio, bound, 1.0 + child)
            if depth == 1:  # and the root's candidates come by that mu in decreasing order
                k = last
                break
            continue
        if chain_of[p] >= 0 and _chain_taken(chain_of, chosen, depth, chain_of[p]):
            continue  # with a feature of its own chain it equals a shorter clause, and so do its extensions
        j = order[p]
        covered = 0
        for w in range(stack_p.shape[1]):
            stack_p[child, w] = stack_p[depth, w] & pos_bits[j, w]
            covered += np.int64(popcount(stack_p[child, w]))
        bound = -covered * mu_max + unit_price * (1.0 + child)
        if bound >= best:  # the test below on a cheaper upper bound of the mu covered
            ratio = _lower_ratio(ratio, bound, 1.0 + child)
            continue
        covered_mu = _covered_mu(stack_p[child], mu, word_mu)
        bound = -covered_mu + unit_price * (1.0 + child)
        if bound >= best:  # not even a free pass on the negatives would make it win
            ratio = _lower_ratio(ratio, bound, 1.0 + child)
            continue
        nodes += 1
        # the value matters only below the best and below what lowers the ratio: counting stops past that
        base = -covered_mu + unit_price * (1.0 + child)
        matters = max(best, min(0.0, ratio * (1.0 + child)))
        value = _negative_cost_of(stack_z[depth], neg_bits[j], stack_z[child], z_weight, z_weights, z_planes,
                                  matters - base) + base
        ratio = _lower_ratio(ratio, value, 1.0 + child)
        if value < best and mode == COLLECT:
            _collect(stack, depth, j, order)
        elif value < best:
            if mode == RAISE_PRICE:
                unit_price -= value / (1.0 + child)
            else:
                best = value
            for level in range(1, depth + 1):
                best_clause[level - 1] = order[chosen[level]]
            best_clause[depth] = j
            best_length = child
        if child < max_degree:
            bound = -covered_mu + unit_price * (2.0 + child)  # of the extensions
            if bound < best:
                tails[depth, tail_len[depth]] = p
                tail_mu[depth, tail_len[depth]] = covered_mu
                tail_len[depth] += 1
            else:
                ratio = _lower_ratio(ratio, bound, 2.0 + child)
    if k >= last:
        _sort_by_mu(tails[depth], tail_mu[depth], tail_len[depth])
        if mode != COLLECT:
            _drop_dominated_tails(depth, problem, stack)
    return best, unit_price, ratio, nodes, best_length, k


@njit(inline="always", cache=True)
def _drop_dominated_tails(depth, problem, stack):
    """Leaves out of the clause's list of children to extend (``tails[depth]``) each child that another
    on the list dominates on the clause's own rows: the other adds a feature that covers every positive
    (priced, among the clause's) this one's feature covers and no negative (among the clause's) it
    misses; of two equal ones the earlier on the list stays.

    This is :func:`undominated_features` at a node. Any clause below the node, S + R (R from the
    list), is matched by S + R' where each dominated feature of R is replaced by an undominated one that
    dominates it on S's rows (one exists: domination with the tie rule is transitive and has no cycle):
    R' covers those positives of S's and no more of S's negatives, with no more features (fewer when the
    replacement is in R already). So it is worth at least as much, and, where it prices below 0, has no
    larger ratio; R' is searched (its least-mu feature is extended, the rest are after it on the
    list), or cut by a bound that holds for it, or equals a shorter clause (two features of one nesting
    chain), searched in its turn. Deep in the tree a node's rows are few, and many thresholds split them
    alike: the children left out are mostly of small mu, the ones with the longest lists of candidates."""
    pos_bits, neg_bits, order = problem.positives, problem.negatives, problem.order
    node_p, node_z = stack.positives[depth], stack.negatives[depth]
    tails, tail_mu, n = stack.tails[depth], stack.tail_mu[depth], stack.tail_len[depth]
    for a in range(n):
        r = order[tails[a]]
        # a dominating child covers at least this one's mu (sums of more non-negative terms: no less after
        # rounding; the margin only lets more pairs be tested)
        least_mu = tail_mu[a] * (1.0 - 1e-9) - 1e-12
        first = a  # (the list is sorted by mu: those are the ones from here on, and a few just before)
        while first > 0 and tail_mu[first - 1] >= least_mu:
            first -= 1
        for b in range(first, n):
            if b == a:
                continue
            position = tails[b]
            q = order[position if position >= 0 else -1 - position]
            covers = _within(node_p, pos_bits[r], pos_bits[q])
            if covers == _NOT_WITHIN:
                continue
            misses = _within(node_z, neg_bits[q], neg_bits[r])
            if misses != _NOT_WITHIN and not (b > a and covers == _EQUAL and misses == _EQUAL):
                tails[a] = -1 - tails[a]  # marked: still read as a dominating one by the others
                break
    kept = 0
    for a in range(n):
        if tails[a] >= 0:
            tails[kept] = tails[a]
            tail_mu[kept] = tail_mu[a]
            kept += 1
    stack.tail_len[depth] = kept


@njit(inline="always", cache=True)
def _collect(stack, depth, j, order):
    """Records the clause of the features chosen down to ``depth`` and ``j`` (if the buffer has room)."""
    n = stack.n_collected[0]
    if n < stack.collected.shape[0]:
        for level in range(1, depth + 1):
            stack.collected[n, level - 1] = order[stack.chosen[level]]
        stack.collected[n, depth] = j
        stack.collected_len[n] = depth + 1
    stack.n_collected[0] = n + 1


@njit(inline="always", cache=True)
def _sort_by_mu(positions, mus, n):
    """Sorts the first ``n`` entries by mu, smallest first (insertion sort: short lists, no allocation)."""
    for a in range(1, n):
        p, m = positions[a], mus[a]
        b = a - 1
        while b >= 0 and mus[b] > m:
            positions[b + 1], mus[b + 1] = positions[b], mus[b]
            b -= 1
        positions[b + 1], mus[b + 1] = p, m


# Without numba's reference counting (``_nrt=False``: the search allocates nothing): each call of a
# helper above, inlined or not, counted references to its array arguments, and each row view to its
# matrix, atomically, a few times per node (a sixth of a pricing's time). Without the GIL too: a
# certificate's search runs beside the final MIP (rulesets/colgen.py)
@njit(cache=True, _nrt=False, nogil=True)
def search_root(root, problem, stack, siblings, unit_price, best, node_cap, mode):
    """Depth-first search of the clauses whose first feature (in ``order``) is at position ``root``.

    ``problem`` (a :class:`Problem`) is read only; ``stack`` (a :class:`Stack`) holds the search from
    one call to the next; ``siblings`` (:class:`Siblings`) what each open node's extended children cover.
    A node's children are priced first, all of them (:func:`_evaluate_children`: ``stack.priced`` says
    how far each level got), then the ones whose extensions may win (``stack.tails``) are extended one by
    one (``stack.cursor``). Starts afresh when ``stack.depth[0] == 0``, else resumes where the previous
    call stopped. Stops after ``node_cap`` clauses so that the caller can keep time. Returns ``(best,
    best_length, nodes, finished, unexplored_bound, unit_price)``: the best reduced cost (improving on
    ``best``: its clause is in ``stack.best_clause[:best_length]``; else ``best_length = -1``), and, when
    not finished, a lower bound on every clause left in the subtree. ``stack.ratio_low[0]`` is lowered
    to a lower bound on reduced cost / complexity over the clauses of the subtree, which the certificate
    uses: each clause is met (its own ratio) or lies in a subtree cut at
    a bound b (clauses of complexity >= c: ratio >= min(b, 0) / c); a subtree left open when the caller
    stops is the caller's to bound.

    ``mode`` :data:`RAISE_PRICE` (with ``best`` 0): instead of lowering ``best``, a clause pricing below
    zero raises the unit price until it prices zero (Dinkelbach's step for the largest ratio); the price
    is returned last (``unit_price`` unchanged otherwise). Every value and bound grows with the price, so
    what was proven at a lower price (a clause >= 0, a subtree cut at a bound >= 0) holds at the higher
    one, and when the search is finished every clause prices >= 0 at the price returned. :data:`COLLECT`:
    ``best`` stays, a threshold, and every clause below it is collected in ``stack`` (but those that cover
    what their parent or a sibling covers: the same rows at a higher complexity).
    """
    order, mu, word_mu, max_degree = problem.order, problem.mu, problem.word_mu, problem.max_degree
    z_weight, z_weights, z_planes = problem.z_weight, problem.z_weights, problem.z_planes
    pos_bits, neg_bits = problem.positives, problem.negatives
    stack_p, stack_z, stack_counts, chosen = stack.positives, stack.negatives, stack.counts, stack.chosen
    cursor, priced, tails, tail_mu, tail_len = stack.cursor, stack.priced, stack.tails, stack.tail_mu, stack.tail_len
    depth_state, ratio_low, best_clause, level_stamp = stack.depth, stack.ratio_low, stack.best_clause, siblings.level
    n_features = order.shape[0]
    best_length = -1
    nodes = 0
    depth = depth_state[0]
    ratio = ratio_low[0]
    if depth == 0:  # the root: a one-feature clause
        j = order[root]
        for w in range(stack_p.shape[1]):  # (word loops: a slice copy may allocate, which needs the NRT)
            stack_p[1, w] = pos_bits[j, w]
        for w in range(stack_z.shape[1]):
            stack_z[1, w] = neg_bits[j, w]
        stack_counts[1, 0] = _count(stack_p[1])
        stack_counts[1, 1] = _count(stack_z[1])
        level_stamp[1] += 1
        chosen[1] = root
        covered_mu = _covered_mu(stack_p[1], mu, word_mu)
        value = _negative_cost(stack_z[1], z_weight, z_weights, z_planes) - covered_mu + unit_price * 2.0
        nodes = 1
        ratio = _lower_ratio(ratio, value, 2.0)
        if value < best and mode == COLLECT:
            _collect(stack, 0, j, order)
        elif value < best:
            if mode == RAISE_PRICE:
                unit_price -= value / 2.0
            else:
                best = value
            best_clause[0] = j
            best_length = 1
        depth = 1
        cursor[1] = tail_len[1] = 0
        priced[1] = n_features  # no child to price
        if max_degree >= 2:
            bound = -covered_mu + unit_price * 3.0  # of the extensions
            if bound < best:
                priced[1] = root + 1
            else:
                ratio = _lower_ratio(ratio, bound, 3.0)
    while depth >= 1:
        last = n_features if depth == 1 else tail_len[depth - 1]  # the node's candidates end there
        if nodes >= node_cap:
            depth_state[0] = depth
            unexplored = np.inf
            for level in range(1, depth + 1):
                end = n_features if level == 1 else tail_len[level - 1]
                if priced[level] < end or cursor[level] < tail_len[level]:
                    bound = -_covered_mu(stack_p[level], mu, word_mu) + unit_price * (2.0 + level)
                    unexplored = min(unexplored, bound)
            ratio_low[0] = ratio
            return best, best_length, nodes, False, unexplored, unit_price
        if priced[depth] < last:
            best, unit_price, ratio, found, length, priced[depth] = _evaluate_children(
                depth, priced[depth], last, node_cap - nodes, problem, stack, unit_price, best, ratio, mode)
            nodes += found
            if length > 0:
                best_length = length
            continue
        k = cursor[depth]
        if k >= tail_len[depth]:
            depth -= 1
            continue
        cursor[depth] = k + 1
        child = depth + 1
        bound = -tail_mu[depth, k] + unit_price * (2.0 + child)  # of its extensions, at today's price
        if bound >= best:
            ratio = _lower_ratio(ratio, bound, 2.0 + child)
            continue
        p = tails[depth, k]
        j = order[p]
        covered = 0
        for w in range(stack_p.shape[1]):
            stack_p[child, w] = stack_p[depth, w] & pos_bits[j, w]
            covered += np.int64(popcount(stack_p[child, w]))
        negatives = 0
        for w in range(stack_z.shape[1]):
            stack_z[child, w] = stack_z[depth, w] & neg_bits[j, w]
            negatives += np.int64(popcount(stack_z[child, w]))
        stack_counts[child, 0] = covered
        stack_counts[child, 1] = negatives
        if _covers_as_another(depth, child, p, problem, stack, siblings):
            continue
        chosen[child] = p
        depth = child
        cursor[depth] = tail_len[depth] = 0
        priced[depth] = k + 1  # its candidates: its siblings to extend after it
        level_stamp[depth] += 1
    depth_state[0] = 0
    ratio_low[0] = ratio
    return best, best_length, nodes, True, np.inf, unit_price


def enumeration_pricing(data, mu, unit_price: float, max_degree: int, time_limit: float, max_clauses: int = 20,
                        should_stop=None):
    """Minimum reduced cost over all clauses of at most ``max_degree`` features.

    Returns ``(clauses, best reduced cost, proven lower bound on the minimum, proven, ratio bound)``:
    ``clauses`` the improving clauses met (most negative first, at most ``max_clauses``; the first is the
    minimum when ``proven``); the ratio bound a proven lower bound on min(0, reduced cost / complexity)
    over every clause but the empty one, proven also when the search is cut short. ``data`` is a
    :class:`~optrules.rulesets.pricing.PricingData`. ``should_stop()`` (a fit's budget) ends the search
    between slices, like the time limit. With ``data.chains`` (nested
    features: ``x <= 3`` and ``x <= 5`` together equal ``x <= 3``) no clause takes two features of one
    chain: such a clause covers what a shorter one covers, at a higher price, and so do its extensions.
    """
    return PricingSearch(data, mu, unit_price, max_degree).run(time_limit, max_clauses, should_stop)


# The searches run their roots in this many parts, each in a thread (the kernel releases the GIL): a fixed
# number, not the machine's cores, so that a fit bounded by a node budget searches the same clauses, and
# returns the same rule set, on every machine
_PARTS = 2


class PricingSearch:
    """The branch-and-bound of :func:`enumeration_pricing` on one set of duals, which more time continues:
    each :meth:`run` goes on where the last one stopped, so the retries of a call cut short and the
    certificate's pricing of the last duals add up instead of starting over (an ilpd fold's last duals:
    priced for 1, 2, 4 and 7.5 s from scratch, never proven; their proof takes about 10 s).

    The roots are dealt to ``parts`` searches (the first root to the first part, the second to the
    second, and so on: each part gets its share of the most promising ones), which run in threads,
    each with its own best clause (or price) to prune by: which clauses a part searches does not depend
    on the other's timing, so a node budget, split between the parts that are not done, gives the same
    search on any machine. On two cores the proofs on an ilpd fold's last duals take 2.8 s instead of
    4.5 s (the minimum) and 3.4 s instead of 5.0 s (the largest ratio); at a fixed price, where the
    parts prune exactly as one search does, 1.6-1.8x less time.

    ``raise_price``: instead of the minimum reduced cost, the largest ratio (mu covered - negatives'
    cost) / complexity: the search prunes at 0 and raises ``unit_price`` whenever a clause prices below
    0 (see :func:`search_root`); finished, every clause but the empty one prices >= 0 at the final
    ``unit_price``, which is the largest ratio (or the starting price, if that is higher). Nothing goes
    into ``found`` then.

    ``below`` (a reduced cost): every clause that prices below it instead, in :attr:`collected` (the
    empty clause too), at most ``max_collected`` (past that the search stops: :attr:`overflowed`). A
    clause that covers the same rows as its parent or an earlier sibling (at a higher complexity) is left
    out: positives with mu 0 count as rows here only if their mu is given as a small positive number.
    Each of the ``parts`` keeps at most ``max_collected``.

    ``proven_by`` (raising the price): a search of the same duals and data whose finished roots are
    proven at this search's starting price are not searched again (see :meth:`_skip_proven`)."""

    def __init__(self, data, mu, unit_price: float, max_degree: int, raise_price: bool = False,
                 parts: int = _PARTS, below: float | None = None, max_collected: int = 0,
                 proven_by: "PricingSearch | None" = None):
        mu = np.asarray(mu, dtype=np.float64)
        data = data.packed()
        self.raise_price = bool(raise_price)
        self.mode = RAISE_PRICE if raise_price else MINIMUM if below is None else COLLECT
        self._start_price = float(unit_price)
        active = np.flatnonzero(mu > 1e-12)
        active = active[np.argsort(-mu[active], kind="stable")]  # in decreasing mu (see _covered_mu)
        self.n_features = n_features = data.n_features
        self.empty_value = float(data.negative_cost(np.ones(data.n_negative, bool)) - mu[active].sum()
                                 + unit_price)
        # raising the price, the search proves every clause >= 0 at the price it ends with (the empty
        # clause is the caller's: its complexity, 1, is not the others')
        self._start_best = 0.0 if raise_price else self.empty_value if below is None else float(below)
        self._empty = [] if raise_price or (below is not None and self.empty_value >= below) else [
            (self.empty_value, ())]
        self.max_collected = int(max_collected) if below is not None else 0
        self.trivial = max_degree < 1 or n_features == 0  # the empty clause only
        self._parts: list[_Part] = []
        if self.trivial:
            return
        # the positives the duals price (mu > 0), a block of features at a time: no boolean copy of them
        in_place = len(active) == data.n_positive and np.array_equal(active, np.arange(data.n_positive))
        pos_bits = data.positive if in_place else bitset.select_bits(data.positive, data.n_positive, active)
        if pos_bits.shape[1] == 0:
            pos_bits = np.zeros((n_features, 1), np.uint64)
        neg_bits = data.negative if data.negative.shape[1] else np.zeros((n_features, 1), np.uint64)
        mu_padded = np.zeros(64 * pos_bits.shape[1])
        mu_padded[: len(active)] = mu[active]
        z_padded, z_planes = _negative_weights(data, neg_bits.shape[1])
        # a root's subtree (the feature alone and its extensions) costs at least -(mu it covers) + 2u
        feature_mu = bitset.weighted_sums(pos_bits, len(active), mu[active])
        order = np.argsort(-feature_mu, kind="stable").astype(np.int64)
        if self.mode != COLLECT:  # (collecting, every clause below the threshold is wanted, dominated or not)
            order = order[undominated_features(pos_bits, neg_bits)[order]]
        problem = Problem(
            # the mu each feature covers, in search order (a hair above, against rounding: it only prunes)
            order=order, order_mu=feature_mu[order] * (1.0 + 1e-12) + 1e-12,
            chain_of=np.full(n_features, -1, np.int64) if data.chains is None else data.chains[order],
            positives=pos_bits, negatives=neg_bits, mu=mu_padded, word_mu=_word_mu(mu_padded, len(active)),
            mu_max=float(mu_padded.max(initial=0.0)) * (1.0 + 1e-12), z_weight=float(data.z_weight),
            z_weights=z_padded, z_planes=z_planes, max_degree=int(max_degree))
        parts = max(1, min(int(parts), len(order)))
        self._parts = [_Part(problem, first, parts, self._start_best, self._start_price, self.mode,
                             self.max_collected) for first in range(parts)]
        if proven_by is not None and self.mode == RAISE_PRICE:
            self._skip_proven(proven_by)

    def _skip_proven(self, earlier: "PricingSearch") -> None:
        """Starts each part where the same part of ``earlier`` (a search of the same duals and data, for
        the minimum or the largest ratio) is, when the roots that part finished are proven at this
        search's price already (:meth:`_Part.proven_price`): their clauses price >= 0 here. The root it
        was in the middle of is searched again. The generation's last exact search (at the master's
        price) has often gone through the roots of most mu when time runs out; the certificate's proof
        at a higher price then searches the rest alone (wdbc fold 5 at complexity 15: see
        docs/rulesets.md)."""
        if earlier.trivial or len(earlier._parts) != len(self._parts) or earlier.mode == COLLECT:
            return
        mine, theirs = self._parts[0].problem, earlier._parts[0].problem
        if mine.max_degree != theirs.max_degree or not all(
                np.array_equal(a, b) for a, b in ((mine.order, theirs.order), (mine.mu, theirs.mu),
                                                  (mine.positives, theirs.positives),
                                                  (mine.negatives, theirs.negatives),
                                                  (mine.z_weights, theirs.z_weights),
                                                  (mine.z_planes, theirs.z_planes))):
            return
        for part, before in zip(self._parts, earlier._parts):
            if self._start_price >= before.proven_price():
                part.root = max(part.root, before.root)
                part.finished = part.finished or before.finished

    def two_feature_mus(self, max_pairs: int = 200_000, max_words: int = 50_000_000) -> np.ndarray:
        """The mu each clause of two searched features covers (two of one nesting chain left out), in
        increasing order: of every pair, or of a seeded sample of at most ``max_pairs`` pairs and
        ``max_words`` words ANDed (the same on every call). How many of them an extension bound at a
        price u leaves open (mu > 4u) measures what a proof at u costs (bounds._next_rung_price)."""
        if self.trivial:
            return np.zeros(0)
        problem = self._parts[0].problem
        n = len(problem.order)
        wanted = max(1_000, min(int(max_pairs), int(max_words) // max(problem.positives.shape[1], 1)))
        if n * (n - 1) // 2 <= wanted:
            first, second = np.triu_indices(n, 1)
        else:
            random = np.random.default_rng(0)
            first, second = random.integers(0, n, wanted), random.integers(0, n, wanted)
        chain = problem.chain_of
        keep = (first != second) & ((chain[first] < 0) | (chain[first] != chain[second]))
        return np.sort(_two_feature_mus(problem.positives, problem.mu, problem.word_mu,
                                        problem.order[first[keep]], problem.order[second[keep]]))

    @property
    def finished(self) -> bool:
        return all(part.finished for part in self._parts) and not self.overflowed

    @property
    def overflowed(self) -> bool:
        """Collecting, more clauses priced below the threshold than ``max_collected``."""
        return self.mode == COLLECT and any(part.stack.n_collected[0] > part.stack.collected.shape[0]
                                            for part in self._parts)

    @property
    def collected(self) -> list[tuple[int, ...]]:
        """Collecting: the clauses met so far that price below the threshold (feature indices, sorted)."""
        clauses = [clause for _, clause in self._empty] if self.mode == COLLECT else []
        for part in self._parts:
            stack = part.stack
            for k in range(min(int(stack.n_collected[0]), stack.collected.shape[0])):
                clauses.append(tuple(sorted(int(j) for j in stack.collected[k, :stack.collected_len[k]])))
        return clauses

    @property
    def best(self) -> float:
        """The best reduced cost met (the empty clause's at least); 0 when raising the price."""
        return min([self._start_best] + [part.best for part in self._parts])

    @property
    def unit_price(self) -> float:
        """The price the search has proven every clause at (raising it: the largest a part reached)."""
        return max([self._start_price] + [part.unit_price for part in self._parts])

    @property
    def found(self) -> list:
        """The improving clauses met, ``(reduced cost, features)``, most negative first."""
        return sorted(self._empty + [item for part in self._parts for item in part.found], key=lambda item: item[0])

    @property
    def nodes_per_call(self) -> int:
        return self._parts[0].nodes_per_call if self._parts else 0

    @nodes_per_call.setter
    def nodes_per_call(self, nodes: int) -> None:
        for part in self._parts:
            part.nodes_per_call = int(nodes)

    def run(self, time_limit: float, max_clauses: int = 20, should_stop=None, work: "NodeBudget | None" = None):
        """Search on for at most ``time_limit`` seconds and what ``work`` has left; returns what
        :func:`enumeration_pricing` does. Each part not done searches at least one slice."""
        if self.trivial:
            return self._empty, self._start_best, self._start_best, True, 0.0
        deadline = time.perf_counter() + time_limit
        first_round = True
        while True:
            active = [part for part in self._parts if not part.finished]
            left = None if work is None else work.left()
            if not active or self.overflowed or (not first_round and (
                    left == 0 or time.perf_counter() > deadline or (should_stop is not None and should_stop()))):
                break
            first_round = False
            # the node budget left, split between the parts not done (the first ones get the remainder)
            shares = [None] * len(active) if left is None else [
                left // len(active) + (k < left % len(active)) for k in range(len(active))]
            budgets = [NodeBudget(share) for share in shares]  # (None: no bound, but counted)
            if len(active) == 1:
                active[0].run(deadline, should_stop, budgets[0])
            else:
                _run_in_threads(active, deadline, should_stop, budgets)
            if work is not None:
                work.spend(sum(budget.spent for budget in budgets))
        unexplored = min([part.unexplored for part in self._parts if not part.finished], default=np.inf)
        best = self.best
        lower = min(best, unexplored)
        # each part's ratio bound, with what it left counted at its root's bound
        ratio = min(_lower_ratio(float(part.ratio_low[0]), part.unexplored if not part.finished else np.inf, 2.0)
                    for part in self._parts)
        return self.found[:max_clauses], best, lower, bool(lower >= best), min(ratio, 0.0)


def _run_in_threads(parts, deadline: float, should_stop, budgets) -> None:
    """Runs each part in its own thread until ``deadline``; ``should_stop`` (a fit's hook, maybe a
    progress display's) is asked here, in the caller's thread, every 50 ms, and the parts read a flag."""
    threads = StoppableThreads([functools.partial(_run_part, part, deadline, budget)
                                for part, budget in zip(parts, budgets)], "optrules-pricing")
    threads.wait(should_stop=should_stop)
    if threads.errors:
        raise threads.errors[0]


def _run_part(part, deadline, budget, stop_asked):
    part.run(deadline, stop_asked, budget)


class _Part:
    """One part of a :class:`PricingSearch`: the roots ``first``, ``first + stride``, ... (in search order),
    with its own stack, best clause and price."""

    def __init__(self, problem: Problem, first: int, stride: int, best: float, unit_price: float, mode: int,
                 max_collected: int = 0):
        self.problem, self.root, self.stride = problem, int(first), int(stride)
        self.best, self.unit_price, self.mode = float(best), float(unit_price), int(mode)
        self.found: list = []
        self.ratio_low = np.full(1, np.inf)  # over the clauses searched or cut so far
        self.unexplored = np.inf  # when the last run stopped short: a bound on the clauses left
        n_features = problem.order.shape[0]
        self.finished = self.root >= n_features
        levels = problem.max_degree + 1
        words_p, words_z = problem.positives.shape[1], problem.negatives.shape[1]
        self.stack = Stack(
            positives=np.zeros((levels, words_p), np.uint64), negatives=np.zeros((levels, words_z), np.uint64),
            counts=np.zeros((levels, 2), np.int64), chosen=np.zeros(levels, np.int64),
            priced=np.zeros(levels, np.int64), cursor=np.zeros(levels, np.int64),
            tails=np.zeros((levels, n_features), np.int64), tail_mu=np.zeros((levels, n_features)),
            tail_len=np.zeros(levels, np.int64), depth=np.zeros(1, np.int64), ratio_low=self.ratio_low,
            best_clause=np.zeros(problem.max_degree, np.int64),
            collected=np.zeros((max_collected, problem.max_degree), np.int64),
            collected_len=np.zeros(max_collected, np.int64), n_collected=np.zeros(1, np.int64))
        # open addressing, at most half full; a slot counts while its stamp is its level's, so a new node
        # starts with an empty table at no cost
        slots = 1 << int(2 * n_features).bit_length()
        self.siblings = Siblings(level=np.zeros(levels, np.int64), stamp=np.zeros((levels, slots), np.int64),
                                 hash=np.zeros((levels, slots), np.uint64),
                                 position=np.zeros((levels, slots), np.int64))
        # a slice visits fewer nodes when each costs more words, so the time limit and a stop are seen often
        self.nodes_per_call = int(min(_NODES_PER_CALL, max(1_000, _WORDS_PER_CALL // (words_p + words_z))))

    def run(self, deadline: float, should_stop, budget: "NodeBudget | None") -> None:
        """Searches on until done, ``deadline``, ``should_stop()`` or ``budget`` is spent (one slice at
        least, if the budget allows)."""
        n_features = self.problem.order.shape[0]
        self.unexplored = np.inf
        first_slice = True
        while not self.finished:
            if self.stack.n_collected[0] > self.stack.collected.shape[0]:  # (collecting: no room left)
                break
            left = None if budget is None else budget.left()
            if self.root >= n_features or self._root_bound() >= self.best:
                # its roots are sorted by their bound: none of the rest can win (and they have complexity >= 2)
                if self.root < n_features:
                    self.ratio_low[0] = _lower_ratio(self.ratio_low[0], self._root_bound(), 2.0)
                self.finished = True
                break
            if left == 0 or (not first_slice and (time.perf_counter() > deadline
                                                  or (should_stop is not None and should_stop()))):
                # what is left: the rest of this subtree, and the later roots (sorted by their bound)
                self.unexplored = self._root_bound()
                break
            first_slice = False
            node_cap = self.nodes_per_call if left is None else min(self.nodes_per_call, left)
            self.best, length, nodes, done, _, self.unit_price = search_root(
                self.root, self.problem, self.stack, self.siblings, self.unit_price, self.best, node_cap,
                np.int64(self.mode))
            if budget is not None:
                budget.spend(nodes)
            if length > 0 and self.mode == MINIMUM:
                self.found.append((self.best, tuple(sorted(int(j) for j in self.stack.best_clause[:length]))))
            if done:
                self.root += self.stride

    def proven_price(self) -> float:
        """A unit price at which every clause under the roots this part has finished prices >= 0: each
        was met or cut with reduced cost / complexity >= ``ratio_low`` at a price <= ``unit_price``, and a
        clause's reduced cost grows by its complexity times the price."""
        return self.unit_price - min(float(self.ratio_low[0]), 0.0)

    def _root_bound(self) -> float:
        """What the clauses whose first feature is the part's current root price at least now: -(the mu
        it covers) + 2u (the price may have risen since the search began)."""
        return float(-self.problem.order_mu[self.root] + 2.0 * self.unit_price)


@njit(cache=True, nogil=True)
def _two_feature_mus(positives, mu, word_mu, first, second):
    """The mu of the positives both features ``first[k]`` and ``second[k]`` cover, for each k."""
    out = np.empty(first.shape[0])
    both = np.empty(positives.shape[1], np.uint64)
    for k in range(first.shape[0]):
        for w in range(positives.shape[1]):
            both[w] = positives[first[k], w] & positives[second[k], w]
        out[k] = _covered_mu(both, mu, word_mu)
    return out


@njit(cache=True)
def undominated_features(positives, negatives):
    """Which features a search for the largest value (or ratio, or the least reduced cost) needs: not
    feature j when another, k, covers every positive j covers that the duals price (``positives``: mu >
    0 only) and no negative j does not cover (of two equal features, the first is kept).

    For any clause S, S + k is worth at least S + j: it covers those positives and no more negatives, at
    the same complexity. If S holds k already, S itself covers no more negatives than S + j (they are
    within k's, so within j's), more positives, at less complexity; if S holds a feature of k's nesting
    chain, S + k covers what S or S less that feature plus k covers, with one condition fewer. So every
    clause with j is matched by one without it, of no smaller value and no larger complexity, and the
    search over the others finds the same optimum and proves the same bounds (a dominated feature's
    dominating one is never dropped: domination is transitive, and an equal pair keeps its first). On a
    wdbc fold's last duals (39 positives priced, 540 features) 106 features go and the proof at a fixed
    price takes 5.4 s instead of 18.9 s. Not for collecting every clause below a threshold, which wants
    the dominated ones too (they cover other positives the duals price 0)."""
    n_features = positives.shape[0]
    keep = np.ones(n_features, np.bool_)
    every_positive = np.full(positives.shape[1], ~np.uint64(0))
    every_negative = np.full(negatives.shape[1], ~np.uint64(0))
    for j in range(n_features):
        for k in range(n_features):
            if k == j:
                continue
            covers = _within(every_positive, positives[j], positives[k])
            if covers == _NOT_WITHIN:
                continue
            misses = _within(every_negative, negatives[k], negatives[j])
            if misses != _NOT_WITHIN and not (k > j and covers == _EQUAL and misses == _EQUAL):
                keep[j] = False
                break
    return keep


_NOT_WITHIN, _WITHIN, _EQUAL = 0, 1, 2


@njit(inline="always", cache=True)
def _within(rows, small, large):
    """Whether the bits of ``small`` set in ``rows`` are all set in ``large``: :data:`_EQUAL` when the
    two agree on ``rows``, :data:`_WITHIN` when only within, :data:`_NOT_WITHIN` otherwise."""
    equal = True
    for w in range(small.shape[0]):
        if rows[w] & small[w] & ~large[w]:
            return _NOT_WITHIN
        if rows[w] & large[w] & ~small[w]:
            equal = False
    return _EQUAL if equal else _WITHIN


def _word_mu(mu_padded, n_active: int) -> np.ndarray:
    """Each word's mu when all its positives (of the first ``n_active``) share it, else -1."""
    words = mu_padded.reshape(-1, 64)
    valid = (np.arange(words.size) < n_active).reshape(words.shape)
    first = words[:, 0:1]
    shared = ((words == first) | ~valid).all(axis=1) & valid[:, 0]
    return np.where(shared, first[:, 0], -1.0)


def _negative_weights(data, n_words: int):
    """The negatives' own weights for :func:`search_root`: ``(padded weights, bit planes)``, the planes
    when the weights are whole numbers (each a multiple of ``z_weight``), both empty without weights."""
    none = np.zeros(0), np.zeros((0, n_words), np.uint64)
    if data.z_weights is None or len(data.z_weights) == 0:
        return none
    multiples = data.z_weights / data.z_weight if data.z_weight > 0 else data.z_weights
    whole = multiples.round()
    if np.array_equal(multiples, whole) and whole.max(initial=0) < 2**20:
        counts = whole.astype(np.int64)
        n_planes = max(1, int(counts.max(initial=1)).bit_length())
        planes = np.vstack([bitset.pack(((counts >> b) & 1).astype(bool)[None, :]) for b in range(n_planes)])
        return none[0], planes
    padded = np.zeros(64 * n_words)
    padded[: len(data.z_weights)] = data.z_weights
    return padded, none[1]
