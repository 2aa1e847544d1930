"""The frontier: at each bound, the optimum an independent fit certifies; a bound a looser optimum meets is
not searched again, and says whose proof it takes."""

from fractions import Fraction

import numpy as np
import pytest
from test_fair_estimator import _table

from optrules import RuleListClassifier
from optrules.fairness.frontier import fairness_frontier


@pytest.mark.parametrize("metric", ["statistical_parity", "equalized_odds"])
def test_each_point_is_the_independent_fits_optimum(metric):
    X, y = _table(5, 150)
    base = RuleListClassifier(regularization=0.01, fairness=metric)
    bounds = (0.0, 0.02, 0.05, 0.1, 0.3, 1.0)
    frontier = fairness_frontier(base, X, y, "group", bounds)
    assert [p.max_unfairness for p in frontier.points] == list(bounds)
    objectives = [p.objective for p in frontier.points]
    assert all(a >= b - 1e-12 for a, b in zip(objectives, objectives[1:]))  # a looser bound is never worse
    for point in frontier.points:
        alone = RuleListClassifier(regularization=0.01, fairness=metric, max_unfairness=point.max_unfairness).fit(
            X, y, sensitive="group")
        assert point.model.certificate_.is_optimal
        assert point.objective == pytest.approx(alone.certificate_.objective, abs=1e-12)
        assert Fraction(point.model.certificate_.counters["unfairness"]) <= Fraction(str(point.max_unfairness))
    assert frontier.points[-1].searched and not all(p.searched for p in frontier.points)
    reused = next(p for p in frontier.points if not p.searched)
    assert "the optimum under" in reused.model.certificate_.counters["certified_by"]
    rows = frontier.table(X.drop(columns="group"), y)
    assert len(rows) == len(bounds) and all(0 <= r["test_accuracy"] <= 1 for r in rows)
    assert "certified optimal" in repr(frontier)


def test_the_frontier_is_drawn():
    import matplotlib

    matplotlib.use("Agg")
    from optrules.plots import plot_fairness_frontier

    X, y = _table(2, 80)
    frontier = fairness_frontier(RuleListClassifier(fairness="equal_opportunity"), X, y, "group", (0.0, 0.1, 0.5))
    ax = plot_fairness_frontier(frontier, X.drop(columns="group"), y)
    assert len(ax.lines) == 2 and len(ax.lines[0].get_xdata()) == 3


def test_a_frontier_needs_a_metric():
    X, y = _table(0)
    with pytest.raises(ValueError, match="fairness= set"):
        fairness_frontier(RuleListClassifier(), X, y, "group")


def test_bounds_stopped_by_their_budget_share_lists_and_lower_bounds():
    """Searches cut short by a node budget: a looser point takes a tighter point's better list, a tighter
    point the looser one's higher lower bound; each stays a true certificate of its bound (lower bound <=
    the optimum an unbudgeted fit certifies <= objective, the list within its bound), and the curve is
    monotone."""
    shared = 0
    for seed in range(4):
        shared += _check_budgeted_frontier(seed)
    assert shared > 0, "no bound took another's list or bound: the test does not exercise the sharing"


def _check_budgeted_frontier(seed: int) -> int:
    X, y = _table(10 + seed, 150)
    bounds = (0.0, 0.01, 0.03, 0.06, 0.1, 0.2)
    frontier = fairness_frontier(RuleListClassifier(regularization=0.005, fairness="equalized_odds", max_nodes=4),
                                 X, y, "group", bounds)
    objectives = [p.objective for p in frontier.points]
    lower = [p.lower_bound for p in frontier.points]
    assert all(a >= b for a, b in zip(objectives, objectives[1:]))  # looser: never a worse list
    assert all(a >= b for a, b in zip(lower, lower[1:]))  # tighter: never a weaker bound
    shared = 0
    for point in frontier.points:
        truth = RuleListClassifier(regularization=0.005, fairness="equalized_odds",
                                   max_unfairness=point.max_unfairness).fit(X, y, sensitive="group")
        assert truth.certificate_.is_optimal
        assert point.lower_bound <= truth.certificate_.objective + 1e-12 <= point.objective + 2e-12
        assert Fraction(point.model.certificate_.counters["unfairness"]) <= Fraction(str(point.max_unfairness))
        predicted = point.model.predict(X.drop(columns="group"))
        assert point.objective == pytest.approx(np.mean(predicted != y) + 0.005 * len(point.model.rule_list_.rules),
                                                abs=1e-12)
        counters = point.model.certificate_.counters
        shared += "list_found_under" in counters or "lower_bound_from" in counters
        assert point.model.certificate_.is_optimal == (point.lower_bound == point.objective)
    return shared
