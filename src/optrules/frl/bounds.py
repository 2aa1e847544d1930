"""Bounds for falling rule lists (Chen and Rudin 2018), one function per result, compiled with numba.

Units: everything is n times the objective (``w_pos = w * positives`` is a weighted mistake count,
``c_n = C * n``, ``c1_n = C1 * n``). A rule's probability alpha = p / (p + q) is carried as the integer
pair (p, p + q); the empty prefix has alpha_{-1} = 1, i.e. (1, 1).
"""

from __future__ import annotations

import math

from numba import njit


@njit(inline="always", cache=True)
def falls_below(p, count, ref_p, ref_count):
    """alpha = p/count <= ref_p/ref_count, without division (the list keeps falling)."""
    return p * ref_count <= ref_p * count


@njit(inline="always", cache=True)
def corollary45_predicts_positive(p, q, w):
    """An optimal falling list has alpha_j > 1/(1+w), i.e. w p_j > q_j, for every rule (Cor 4.5);
    the else clause is exempt. (With C = 0 the list without such rules is as good, so the filter keeps
    an optimum.)"""
    return w * p > q


@njit(inline="always", cache=True)
def proposition42_feasible(last_p, last_count, rest_p, rest_q):
    """Some compatible falling list begins with the prefix iff what it leaves has a positive rate no
    higher than its last rule's: alpha_last * rest_q >= (1 - alpha_last) * rest_p (Prop 4.2,
    division-free, on the prefix's *last* rule)."""
    return last_p * rest_q >= (last_count - last_p) * rest_p


@njit(inline="always", cache=True)
def theorem46_prefix_bound(value, last_p, last_count, rest_p, rest_q, w, c_n):
    """L*(e) (Thm 4.6, Eq 8): every falling compatible list that begins with e costs at least
    L(e) + min{(1/alpha_last - 1) rest_p + C, w rest_p, rest_q}."""
    more_rules = (last_count - last_p) / last_p * rest_p + c_n
    return value + min(more_rules, w * rest_p, float(rest_q))


@njit(inline="always", cache=True)
def equation9_else_is_best(last_p, last_count, rest_p, rest_q, w, c_n):
    """Stopping condition (Eq 9): when C >= min(w rest_p, rest_q) - (1/alpha_last - 1) rest_p, closing
    the list with the else clause is optimal among all completions of the prefix."""
    return c_n >= min(w * rest_p, float(rest_q)) - (last_count - last_p) / last_p * rest_p


@njit(inline="always", cache=True)
def theorem52_soft_prefix_bound(value, amin, rest_p, rest_q, w, c_n, c1_n):
    """Ltilde*(e) (Thm 5.2, Eq 10): a lower bound on Ltilde over every compatible list beginning with e.

    ``amin`` is the smallest probability in e (1 for the empty prefix). The four cases: more rules
    below amin (T1), more rules at some beta above max(amin, alphat, 1/(1+w)) (inf of g, closed form
    at beta* = sqrt(rest_p / C1 n)), or the else clause predicting negative or positive.
    """
    rest = rest_p + rest_q
    alphat = rest_p / rest
    else_penalty = c1_n * max(0.0, alphat - amin)
    close_negative = w * rest_p + else_penalty
    close_positive = rest_q + else_penalty
    best = min(close_negative, close_positive)
    if rest_p == 0 or rest_q == 0:
        return value + best
    if amin > 0.0:  # with amin = 0 no rule below it captures a positive: T1 is infinite
        t1 = (1.0 / amin - 1.0) * rest_p + c_n + else_penalty + (w * rest_p if alphat >= amin else 0.0)
        best = min(best, t1)
    zeta = max(amin, alphat, 1.0 / (1.0 + w))
    if zeta < 1.0:
        beta_star = math.sqrt(rest_p / c1_n) if c1_n > 0.0 else math.inf
        if zeta < beta_star <= 1.0:
            inf_g = (1.0 / beta_star - 1.0) * rest_p + c_n + c1_n * (beta_star - amin)
        else:
            g_zeta = (1.0 / zeta - 1.0) * rest_p + c_n + c1_n * (zeta - amin)
            g_one = c_n + c1_n * (1.0 - amin)
            inf_g = min(g_zeta, g_one)
        best = min(best, inf_g)
    return value + best
