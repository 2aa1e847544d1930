"""The lower bounds of Boolean rule-set learning, one function each (Dash, Guenluek and Wei, NeurIPS 2018,
Section 3: the master LP over every clause bounds every rule set; what follows bounds it from the duals of
a restricted master, by weak duality, and from the data alone).

* :func:`weak_duality_bound`: any duals made feasible for every clause by raising the complexity price
  (LP weak duality; the Lagrangian bound with the complexity row kept).
* :func:`largest_ratio_bound`: the strongest such bound of given duals, the complexity price raised to the
  largest ratio a clause reaches (Dinkelbach's step in the branch-and-bound pricing), proven in rungs.
* :func:`conflict_bound`: rows alike in features and unlike in label (no pricing needed).
"""

from __future__ import annotations

import math
import time

import numpy as np

from .enumeration import PricingSearch


def weak_duality_bound(mu, lam, complexity_bound, p_weight, empty_reduced_cost, reduced_cost_bound,
                       max_degree, n_positive, ratio_bound=None) -> float:
    """A lower bound on the master LP over *every* clause (so on the best rule set) from any duals.

    ``(mu, lam)`` (from the restricted master, say) price the clauses; exact pricing proved that every
    clause has reduced cost >= ``reduced_cost_bound``, and the empty clause (complexity 1) has
    ``empty_reduced_cost``. Raising lambda by t = max(0, -rc(empty), -bound / 2) makes every column
    dual-feasible (the others have complexity >= 2; mu_i is clipped to [0, p_weight_i] for the xi columns;
    ``p_weight`` is one number or one per positive),
    and the dual objective sum(mu) - C (lambda + t) then bounds the LP by weak duality. A column of
    complexity c needs t >= -rc / c only, so ``ratio_bound`` (a proven lower bound on rc / c over the
    non-empty clauses, from the branch-and-bound pricing) gives t = max(0, -rc(empty), -ratio) when it
    is the better of the two; this is the Lagrangian bound with the complexity row kept. Computed from the
    duals themselves, not from the solver's objective, so it holds whatever the LP's tolerances.

    Without a complexity bound (C infinite) an optimal rule set still has at most one clause per
    positive it alone covers (dropping any other clause costs nothing), so the LP with C = (1 +
    max_degree) |P| added still bounds it (not the LP without that row).
    """
    ratio = float(reduced_cost_bound) / 2.0
    if ratio_bound is not None:
        ratio = max(ratio, float(ratio_bound))
    t = max(0.0, -float(empty_reduced_cost), -min(ratio, 0.0))
    if not np.isfinite(t):
        return -np.inf
    dual_sum = float(np.clip(mu, 0.0, p_weight).sum())
    return dual_sum - complexity_or_implied(complexity_bound, max_degree, n_positive) * (lam + t)


def complexity_or_implied(complexity, max_degree: int, n_positive: int) -> float:
    """The complexity bound, or, without one, the bound an optimal set meets anyway (see
    :func:`weak_duality_bound`)."""
    if complexity is None or not np.isfinite(complexity):
        return float((1 + max_degree) * n_positive)
    return float(complexity)


def conflict_bound(groups, y, costs) -> float:
    """A lower bound on every rule set's objective from rows that agree on every feature but not on the
    label: a clause covers both such rows or neither, so each such pair costs at least the cheaper of
    its two rows (the positive missed, or the negative covered at least once). The LP counts this too,
    but only once its pricing is proven; this needs no pricing, so it holds where generation ran out of
    time (transfusion: 114 of its 748 rows). ``groups``, ``y``, ``costs``: each distinct row's group of
    rows alike in features (:func:`distinct_rows`), its label and what it costs misclassified."""
    inverse = np.asarray(groups)
    positive = np.bincount(inverse, weights=np.where(y, costs, 0.0), minlength=inverse.max(initial=-1) + 1)
    negative = np.bincount(inverse, weights=np.where(y, 0.0, costs), minlength=inverse.max(initial=-1) + 1)
    return float(np.minimum(positive, negative).sum())


def largest_ratio_bound(data, mu, lam, penalty, complexity, positive_costs, max_degree, n_pos, seconds,
                        should_stop=None, work=None, search=None, outcome: list | None = None,
                        integral: bool = False) -> float:
    """The strongest bound the duals ``mu`` give on the master LP over every clause: the Lagrangian
    sum(mu) - C theta with theta the largest (mu covered - negatives' cost) / complexity - penalty of a
    clause, found by branch-and-bound with Dinkelbach's step (:class:`~optrules.rulesets.enumeration.
    PricingSearch` with ``raise_price``) instead of bounded from the minimum reduced cost.

    The minimum reduced cost bounds the ratio loosely (each subtree the search cut at a bound b counts
    b / its least complexity); here every clause is proven to price >= 0 at the unit price theta +
    penalty, which prunes at 0 instead of at the most negative clause. An ilpd fold at complexity 50
    (the last duals of a fit cut short): bound 19.1 in 9 s where the minimum's search gave -1709 in 10 s
    and -2276 in the fit. The search starts at the price the restricted master puts on complexity,
    ``lam`` (its basic clauses have that ratio), raised to the best ratio of the clauses ``search`` (a
    search on these duals at ``penalty + lam``) met.

    A proof at a higher price is cheaper (it prunes more) and still bounds: first theta is proven at
    the price where the bound is a quarter of the restricted master's (:func:`_first_rung_price`), then
    the largest ratio with the time left. On an ionosphere fold at complexity 10 (538 features, degree
    5) the largest ratio's proof does not finish in 20 s while the quarter's takes 1-6 s: the bound
    is 2.75 where it was 0. The largest ratio's proof costs several times a rung's (bank marketing's
    last duals: the quarter's 12.7 s, half 15.4 s, three quarters 24.6 s, 90 % 38.2 s, the largest ratio
    ~60 s), so after each rung the next price is the lowest whose proof the time (and work) left is
    predicted to pay for (:func:`_next_rung_price`): the largest ratio when it fits, none when no lower
    price does (the certificate ends there, not finished, the time left unspent). Cut short, the part
    left is bounded as :func:`weak_duality_bound` does and the best of the
    proofs returned.
    ``integral``: every set is worth a whole number, so a bound b proves ceil(b), and each rung is moved
    to the cheapest price that proves the whole number it would, and at least one more than proven
    (:func:`_whole_step_price`); the largest ratio's proof stays where it is (it may solve the LP).
    ``outcome``: a list the last search's end is appended to, ``(finished, the unit price proven)``."""
    deadline = time.perf_counter() + seconds
    largest_at_least = float(lam)
    for value, clause in ([] if search is None else search.found):
        if clause and value < 0:
            largest_at_least = max(largest_at_least, lam - value / (1 + len(clause)))
    rung = _first_rung_price(data, mu, lam, complexity, positive_costs, max_degree, n_pos, penalty)
    theta = rung if rung > largest_at_least else largest_at_least
    proven, ended = -np.inf, (False, penalty + largest_at_least)
    rungs: list[tuple[float, float, int]] = []  # each finished rung: its unit price, seconds and work
    pair_mus = None
    for attempt in range(_MAX_PROOFS):
        # the price proven: the rung's, or with whole-number objectives the cheapest proving what it would
        # (the ladder goes on from the rung's: a ladder of the moved prices lost a mistake on ILPD's fold 9)
        at = theta if not integral or theta <= largest_at_least else _whole_step_price(
            data, mu, theta, largest_at_least, proven, penalty, complexity, positive_costs, max_degree, n_pos)
        left = deadline - time.perf_counter()
        if attempt > 0 and (left <= 0 or (should_stop is not None and should_stop())):
            ended = (False, penalty + at)  # the next proof never ran: the certificate did not finish
            break  # (the first search runs a slice at least, as any pricing does)
        started, spent_before = time.perf_counter(), (0 if work is None else work.spent)
        ratio_search = PricingSearch(data, mu, penalty + at, max_degree, raise_price=True, proven_by=search)
        _, _, lower, _, ratio = ratio_search.run(max(left, 0.0), should_stop=should_stop, work=work)
        price = ratio_search.unit_price
        empty = data.reduced_cost((), mu, price)
        proven = max(proven, weak_duality_bound(mu, price - penalty, complexity, positive_costs, empty, lower,
                                                max_degree, n_pos, ratio))
        ended = (ratio_search.finished, price)
        if not ratio_search.finished or at <= largest_at_least or price > penalty + at:
            break  # cut short, or the largest ratio proven
        rungs.append((price, time.perf_counter() - started, 0 if work is None else work.spent - spent_before))
        # (the last proof allowed is the largest ratio's: rungs that finish fast must not end the
        # certificate with time left)
        if pair_mus is None:
            pair_mus = ratio_search.two_feature_mus()  # (the same duals in every rung's search)
        following = penalty + largest_at_least if attempt + 2 >= _MAX_PROOFS else _next_rung_price(
            rungs, penalty + largest_at_least, deadline - time.perf_counter(), None if work is None else work.left(),
            pair_mus)
        if following is None:
            ended = (False, penalty + largest_at_least)  # no proof all that is left pays for: not finished
            break
        theta = following - penalty
    if outcome is not None:
        outcome.append(ended)
    return proven


def _whole_step_price(data, mu, theta, lowest, proven, penalty, complexity, positive_costs, max_degree,
                      n_pos) -> float:
    """For whole-number objectives: the highest complexity price whose proof bounds the sets by the whole
    number the price ``theta`` would (a bound b proves ceil(b)), and by at least one more than ``proven``,
    no lower than ``lowest`` (the largest ratio known). The bound falls with the price at the rate C
    (:func:`~optrules.rulesets.bounds.weak_duality_bound`), so the price proving (that number - 1) plus
    :data:`_WHOLE_MARGIN` is found in one step, and a higher price is a cheaper proof (it prunes more):
    the quarter of wdbc fold 4's restricted master at complexity 15 (3.51) is a bound of 0.88, which
    proves 1, as a bound of 0.05 does at a price 0.06 higher."""
    def bound_at(price):
        return _bound_if_proven(data, mu, price, penalty, complexity, positive_costs, max_degree, n_pos)
    bound = bound_at(theta)
    if not np.isfinite(bound):
        return theta
    wanted = math.ceil(bound - 1e-6)
    if np.isfinite(proven):
        wanted = max(wanted, math.ceil(proven - 1e-6) + 1)
    if wanted < 1:
        return theta  # nothing above 0 to aim at
    target = wanted - 1 + _WHOLE_MARGIN
    price = theta + (bound - target) / complexity_or_implied(complexity, max_degree, n_pos)
    if price <= lowest:
        return lowest
    # (below the empty clause's price the bound stops falling with the price: the step may then fall short)
    return price if bound_at(price) >= target - 1e-9 else theta


#: how far above a whole number a rung's bound is aimed (a search that raises the price a hair still
#: proves the next whole number)
_WHOLE_MARGIN = 0.05

def _next_rung_price(rungs, largest, seconds_left, work_left, pair_mus) -> float | None:
    """The unit price of the certificate's next proof after the finished ``rungs`` ((unit price, seconds,
    work) each, in order, prices falling): the lowest, no lower than ``largest`` (the largest ratio
    known), whose proof is predicted to cost at most :data:`_RUNG_SHARE` of the seconds and the work
    left (``None``: no bound); if none below the last rung's is, the lowest all that is left pays for,
    and ``None`` when not even that is below the last rung's.

    The prediction: a proof at the price u costs about (1 + the two-feature clauses its extension bound
    leaves open, ``pair_mus`` > 4u) to the power kappa, kappa the last two rungs' (their work, else their
    seconds) or :data:`_FIRST_STEEPNESS` after the first. A proof prunes each clause whose mu is below u
    times its complexity, and the clauses it opens below grow with the pairs it opens. On the last duals
    of 30-120 s fits (proofs from the quarter rung to the largest ratio, six prices each) the pairs
    opened grew 1.08-1.55 times and the clauses searched 1.4-6.3 times: kappa 4.2-4.5 (ionosphere, wdbc,
    ILPD), about 3 (bank marketing), where the price alone predicts nothing alike (the work grew as
    price^-0.9 on ILPD and bank marketing, price^-6 on ionosphere). Replayed on those costs with budgets
    of 1.3-10 times the first rung, the ladder ends on average 48 % of the way from the quarter rung's
    bound to the largest ratio's, where halfway rungs got 40 % (docs/rulesets.md)."""
    price, seconds, nodes = rungs[-1]
    ascending = np.asarray(pair_mus, dtype=np.float64)

    def opened(unit_price):  # (plus one: a proof with no pair open still costs)
        return 1 + len(ascending) - np.searchsorted(ascending, 4.0 * unit_price, side="right")

    kappa = _FIRST_STEEPNESS
    if len(rungs) >= 2:
        earlier_price, earlier_seconds, earlier_nodes = rungs[-2]
        grew = nodes / earlier_nodes if earlier_nodes > 0 and nodes > 0 else seconds / max(earlier_seconds, 1e-9)
        more_open = opened(price) / opened(earlier_price)
        if more_open > 1 and grew > 1:
            kappa = min(max(math.log(grew) / math.log(more_open), _STEEPNESS_RANGE[0]), _STEEPNESS_RANGE[1])
    descending = ascending[::-1]
    for share in (_RUNG_SHARE, 1.0):
        # the most pairs open that the share pays for: cost x (open / open now)^kappa <= share x left
        affordable = np.inf
        for cost, left in ((seconds, seconds_left), (nodes, work_left)):
            if left is not None and cost > 0:
                paid = -np.inf if left <= 0 else opened(price) * (share * left / cost) ** (1 / kappa)
                affordable = min(affordable, paid)
        if affordable == np.inf:
            return largest
        if not affordable >= 1.0:
            continue  # (what is left pays for no proof at all)
        most = math.floor(affordable) - 1  # pairs open at the price descending[most] / 4 (ties: fewer)
        lowest = largest if most >= len(descending) else max(largest, descending[most] / 4.0)
        if lowest < price * (1.0 - 1e-9):
            return lowest
    return None


#: the growth of a proof's cost with the pairs it leaves open assumed after the first rung (ionosphere's,
#: wdbc's and ILPD's, above bank marketing's: too dear a rung is a proof lost, too cheap one a smaller
#: step), and the range of it measured between two rungs; the share of what is left a rung is aimed at
#: (the prediction is rough); at most _MAX_PROOFS proofs in all, the last the largest ratio's
_FIRST_STEEPNESS, _STEEPNESS_RANGE, _RUNG_SHARE, _MAX_PROOFS = 4.0, (1.0, 8.0), 0.8, 8


def _bound_if_proven(data, mu, theta, penalty, complexity, positive_costs, max_degree, n_pos) -> float:
    """The Lagrangian bound the duals ``mu`` give once every clause is proven to price >= 0 at the
    complexity price ``theta`` (plus the penalty)."""
    return weak_duality_bound(mu, theta, complexity, positive_costs, data.reduced_cost((), mu, penalty + theta), 0.0,
                              max_degree, n_pos)


def _first_rung_price(data, mu, lam, complexity, positive_costs, max_degree, n_pos, penalty) -> float:
    """The complexity price theta whose Lagrangian bound sum(mu) - C theta is a quarter of the one at
    the restricted master's own price ``lam`` (-inf when that is <= 0: nothing to take a share of)."""
    at_master = _bound_if_proven(data, mu, lam, penalty, complexity, positive_costs, max_degree, n_pos)
    if not at_master > 0:
        return -np.inf
    return float(lam) + 0.75 * at_master / complexity_or_implied(complexity, max_degree, n_pos)
