"""Choosing and tidying a rule set over generated clauses: what clauses cover, the objective and mistakes of
a set, the greedy choice, and a set without needless clauses and conditions."""

from __future__ import annotations

import numpy as np

from ..data import bitset
from .pricing import PricingBits


def _clause_covers(data: PricingBits, clauses, block: int = 4096) -> tuple[np.ndarray, np.ndarray]:
    """Each clause's positives (packed, a row a clause) and its negatives' weight, the clauses of one
    length a block at a time (a clause at a time took ~0.1 ms on bank marketing's 36,000 negatives)."""
    cover = np.zeros((len(clauses), data.positive.shape[1]), np.uint64)
    negatives = np.zeros(len(clauses), np.float64)
    lengths = np.array([len(c) for c in clauses], np.int64)
    for length in np.unique(lengths):
        rows = np.flatnonzero(lengths == length)
        for start in range(0, len(rows), block):
            part = rows[start:start + block]
            if length == 0:  # the empty clause covers every sample
                cover[part] = bitset.ones(data.n_positive)
                negatives[part] = data.negative_cost(np.ones(data.n_negative, bool))
                continue
            features = np.array([clauses[k] for k in part], np.int64)
            cover[part] = np.bitwise_and.reduce(data.positive[features], axis=1)
            covered = np.bitwise_and.reduce(data.negative[features], axis=1)
            negatives[part] = (data.z_weight * bitset.popcount(covered) if data.z_weights is None
                               else bitset.weighted_sums(covered, data.n_negative, data.z_weights))
    return cover, negatives


def _greedy_selection(columns, y, clauses, complexity, costs, penalty):
    """Clauses added one at a time, each the one that lowers the objective most within the complexity
    bound: a rule set when the restricted MIP found none in its time. On packed covers (on 700,000 rows
    the boolean covers and their products with the costs took 1 s after a MIP that had used its time)."""
    y = np.asarray(y, bool)
    n = len(y)
    covers = _packed_covers(columns, clauses, n)
    positives = bitset.pack(y)
    sizes = np.array([1 + len(c) for c in clauses])
    own_cost = _rows_cost(covers & bitset.complement(positives, n), n, costs, ~y) + penalty * sizes
    uncovered = positives
    available = np.ones(len(clauses), bool)
    chosen, used = [], 0
    while True:
        gain = _rows_cost(covers & uncovered, n, costs, y) - own_cost
        gain[~available | (used + sizes > complexity)] = -np.inf
        k = int(np.argmax(gain))
        if not gain[k] > 0:
            return chosen
        chosen.append(clauses[k])
        available[k] = False
        used += int(sizes[k])
        uncovered = uncovered & ~covers[k]


def _rows_cost(words, n: int, costs, within) -> np.ndarray:
    """What the rows set in each row of ``words`` (packed sets of rows, all among the rows ``within``, a
    boolean mask: one class) cost: by popcount when those rows all cost the same (no sample weights),
    else summed a block of rows at a time."""
    words = np.atleast_2d(words)
    among = costs[within]
    if len(among) and np.all(among == among[0]):
        return float(among[0]) * bitset.popcount(words)
    return bitset.weighted_sums(words, n, costs)


def _packed_covers(columns, clauses, n) -> np.ndarray:
    """What each clause covers, packed (clauses x words; the empty clause: every row)."""
    return np.vstack([bitset.intersection(columns, c, n) for c in clauses]) if clauses else np.zeros(
        (0, bitset.n_words(n)), np.uint64)


def first_covering(columns, clauses, n) -> np.ndarray:
    """Each row's first clause that covers it (``len(clauses)``: none), from the packed feature columns:
    the branch of the rule set that decides it (a CNF's clauses over the negated features)."""
    fired = np.full(n, len(clauses), np.int64)
    for k in range(len(clauses) - 1, -1, -1):
        fired[bitset.unpack(bitset.intersection(columns, clauses[k], n), n)] = k
    return fired


def _mistakes(columns, y, clauses) -> int:
    n = len(y)
    covered = np.bitwise_or.reduce(_packed_covers(columns, clauses, n), axis=0) if clauses else np.zeros(
        bitset.n_words(n), np.uint64)
    return int(bitset.popcount(covered ^ bitset.pack(np.asarray(y, bool))))


def _without_redundant_clauses(columns, y, clauses, objective, costs, penalty):
    """Drop, largest first, every clause that covers no positive the others miss: the objective cannot
    grow (its negatives and complexity go, no positive is lost) and the set reads shorter. A MIP keeps
    such a clause only when it costs nothing (no negatives, no penalty), a tie."""
    n = len(y)
    kept = sorted(clauses, key=len, reverse=True)
    covers = list(_packed_covers(columns, kept, n))
    positives = bitset.pack(np.asarray(y, bool))
    k = 0
    while k < len(kept):
        others = covers[:k] + covers[k + 1:]
        covered_by_others = np.bitwise_or.reduce(others, axis=0) if others else np.zeros_like(positives)
        if not (covers[k] & positives & ~covered_by_others).any():
            del kept[k], covers[k]
        else:
            k += 1
    if len(kept) == len(clauses):
        return clauses, objective
    smaller = _objective(columns, y, kept, costs, penalty)
    if smaller > objective:  # cannot happen (weights and penalty are >= 0); keep the solver's set if it did
        return clauses, objective
    return [c for c in clauses if c in kept], smaller


def _without_needless_conditions(columns, y, clauses, objective, costs, penalty):
    """Drop, one at a time, every condition whose removal leaves the objective no larger (a clause then
    covers more rows, but no costlier ones): among equally good sets the shorter reads better, and
    equally good sets found from weighted and from repeated rows agree."""
    clauses = list(clauses)
    changed = True
    while changed:
        changed = False
        for k, clause in enumerate(clauses):
            for condition in clause:
                shorter = tuple(c for c in clause if c != condition)
                if shorter in clauses:
                    continue
                trial = clauses[:k] + [shorter] + clauses[k + 1:]
                value = _objective(columns, y, trial, costs, penalty)
                if value <= objective + 1e-12:
                    clauses, objective, changed = trial, value, True
                    break
            if changed:
                break
    return clauses, objective


def _objective(columns, y, clauses, costs, penalty) -> float:
    """Weighted Hamming loss of the rule set (missed positives, covered negatives per clause; ``costs``:
    each sample's weight) + penalty."""
    y = np.asarray(y, bool)
    n = len(y)
    covers = _packed_covers(columns, clauses, n)
    positives = bitset.pack(y)
    missed = positives & ~np.bitwise_or.reduce(covers, axis=0) if clauses else positives
    loss = float(_rows_cost(covers & bitset.complement(positives, n), n, costs, ~y).sum()) if clauses else 0.0
    return loss + penalty * sum(1 + len(c) for c in clauses) + float(_rows_cost(missed, n, costs, y)[0])
