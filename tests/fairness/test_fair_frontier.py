"""The frontier: at each bound, the optimum an independent fit certifies; a bound a looser optimum meets is
not searched again, and says whose proof it takes."""

from fractions import Fraction

import pytest

from optrules import RuleListClassifier
from optrules.fairness.frontier import fairness_frontier

from test_fair_estimator import _table


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
