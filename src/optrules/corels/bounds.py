"""The bounds of Angelino et al., "Learning Certifiably Optimal Rule Lists" (JMLR 2018), one per function.

All quantities are in *mistake units*: an objective R(d) = mistakes/N + lambda*K is handled as
``R * N = mistakes + lambda_n * K`` with ``lambda_n = lambda * N``, so that counts stay integers and every
comparison is made on the same scale. ``best`` is the incumbent's objective in those units.

Every bound holds unchanged for several classes (a rule predicts its majority class; its correct count
is the largest class total) and for weighted samples (counts become weight sums and N the total weight):
the proofs only compare the mistakes of one list with those of a list derived from it, sample by sample.

The functions are compiled with numba and inlined into the search loop; each returns True when the
candidate *survives* the bound (may still lead to a better list), False when it can be pruned.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit


@njit(inline="always", cache=True)
def theorem1_hierarchical_lower_bound(prefix_mistakes, prefix_length, lambda_n):
    """b(d_p) = mistakes of the prefix + lambda*N*K: no extension of d_p has a smaller objective (Thm 1)."""
    return prefix_mistakes + lambda_n * prefix_length


@njit(inline="always", cache=True)
def lemma2_lookahead(lower_bound, lambda_n, best):
    """Extensions of d_p add at least one rule, so they can win only if b(d_p) + lambda < R* (Lemma 2)."""
    return lower_bound + lambda_n < best


@njit(inline="always", cache=True)
def theorem4_max_prefix_length(best, lambda_n, n_antecedents):
    """An optimal list has K <= min(floor(R*/lambda), M) rules (Thm 4 with Cor 5; Thm 6 is the per-prefix form)."""
    if lambda_n <= 0.0:
        return n_antecedents
    return min(int(math.floor(best / lambda_n)), n_antecedents)


@njit(inline="always", cache=True)
def theorem10_minimum_support(n_captured, lambda_n):
    """Each antecedent of an optimal list captures at least lambda*N samples in context (Thm 10)."""
    return n_captured >= lambda_n


@njit(inline="always", cache=True)
def theorem11_minimum_accurate_support(n_correct, lambda_n):
    """Each rule of an optimal list classifies at least lambda*N of its captured samples correctly (Thm 11);
    ``n_correct`` is the captured total of the rule's majority class."""
    return n_correct >= lambda_n


@njit(inline="always", cache=True)
def theorem21_excessive_support(n_uncaptured_before, n_captured, lambda_n):
    """An antecedent that leaves fewer than lambda*N samples uncaptured is never in an optimal list (Thm 21).

    Cutting the list just before such a rule and letting the default rule take its samples loses fewer
    than lambda*N correct classifications and saves at least one rule.
    """
    return n_uncaptured_before - n_captured >= lambda_n


@njit(inline="always", cache=True)
def theorem20_equivalent_points(lower_bound, minority_uncaptured, lambda_n, best, use_lookahead):
    """Samples with identical antecedent signatures are captured together, so the minority label of each
    such group among the uncaptured samples is an unavoidable error b0(d_p): extensions of d_p can win
    only if b(d_p) + b0(d_p) (+ lambda with lookahead) < R* (Thm 20)."""
    extra = lambda_n if use_lookahead else 0.0
    return lower_bound + minority_uncaptured + extra < best


@njit(inline="always", cache=True)
def corollary16_permutation_dominates(lower_bound, stored_lower_bound):
    """Among prefixes with the same antecedent set, only the one with the smallest b(d_p) needs to be
    extended (Cor 16); Thm 15 (equivalent support) extends this to prefixes capturing the same samples."""
    return lower_bound < stored_lower_bound


@njit(inline="always", cache=True)
def pure_sibling_dominates(a, n_captured, b, n_captured_b, uncaptured, bits, live_words, n_live):
    """Child b of prefix p, whose rule errs on none of the samples it captures after p (a *pure*
    sibling), dominates child a when it captures a superset of a's samples there: more samples, or the
    same ones and b < a (so that of two siblings capturing the same set one stays). Then no list in
    p + a's subtree beats the best list in p + b's and the lists already evaluated, and p + a need not
    be queued (its own list p + a + default has been checked against the incumbent).

    Ours, the similar-support idea of Thm 18 with a difference of zero. Take a list p + a + R. If R does
    not hold b, p + b + R is at least as good: b errs nowhere, and every later rule and the default see
    a subset of the samples they saw (with their majority they err no more, sample by sample). If
    R = R1 + b + R2, then p + b + R1 + R2 is better by lambda at least: the default is left the same
    samples, b errs nowhere, R1 and R2 see subsets. ``uncaptured``: the words of what p leaves,
    ``bits`` the antecedents' words, ``live_words[:n_live]`` the words where p leaves something."""
    if b == a or n_captured_b < n_captured or (n_captured_b == n_captured and b > a):
        return False
    for j in range(n_live):
        w = live_words[j]
        if uncaptured[w] & bits[a, w] & ~bits[b, w]:
            return False
    return True


@njit(inline="always", cache=True)
def theorem7_extension_budget(lower_bound, best, lambda_n, free):
    """At most f = min(floor((R* - b(d_p)) / lambda), M - K_p) rules can still be appended to d_p (Thm 7);
    -1 when none can."""
    if lambda_n <= 0.0:
        return free
    return min(int(math.floor((best - lower_bound) / lambda_n)), free)


def log10_remaining_space(histogram: np.ndarray, n_antecedents: int) -> float:
    """log10 of Theorem 7's upper bound on the number of prefixes left to evaluate.

    ``histogram[K, f]`` counts the queued prefixes of length ``K`` (so ``free = M - K`` antecedents left)
    and extension budget ``f`` (:func:`theorem7_extension_budget`); each can grow into at most
    sum_{k=0..f} free!/(free-k)! prefixes. Returns -inf for an empty queue.
    """
    logs = []
    for length, depth in zip(*np.nonzero(histogram)):
        m_free = n_antecedents - length
        log_terms = np.concatenate([[0.0], np.cumsum(np.log10(np.arange(m_free, m_free - depth, -1, dtype=np.float64)))])
        top = log_terms.max()
        logs.append(top + math.log10(np.sum(10.0 ** (log_terms - top))) + math.log10(histogram[length, depth]))
    if not logs:
        return -math.inf
    logs = np.asarray(logs)
    top = logs.max()
    return float(top + math.log10(np.sum(10.0 ** (logs - top))))
