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
def theorem18_sibling_dominates(mistakes_a, mistakes_b, n_only_a):
    """Similar support (Thm 18) between two children p + a and p + b of one prefix: when b errs, on what
    it captures after p, at most a's mistakes there minus the samples a captures and b does not
    (``n_only_a``), every list in p + a's subtree is matched by one in p + b's at least as good, so p + a
    need not be queued (its own list p + a + default has been checked against the incumbent).

    Take a list p + a + R, and p + b + R' with R' = R without b (b captures nothing after p + b), each
    rule keeping its label. A sample neither rule captures meets the same rules in both lists, b
    capturing none of it. Of a's samples, those b captures are now b's and those it does not (at most
    ``n_only_a``) may now be misclassified; b's other samples were classified by R, now by b. So p + b
    + R' errs at most mistakes_b + n_only_a - mistakes_a more, with no more rules: the theorem's
    b(p + a) - b(p + b) >= omega, omega the support captured by p + a and not by p + b (within one
    prefix's context the reverse support does not count: b's other samples are b's to classify). With a
    difference of zero and a sibling erring nowhere, this is the pure sibling capturing a superset.

    Of two siblings each dominating the other (the same samples and mistakes) the caller keeps the one
    with the smaller index: otherwise the relation has no cycle (around one, the samples one child
    captures and the next does not would sum to zero, so all would capture the same set)."""
    return mistakes_b + n_only_a <= mistakes_a


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
