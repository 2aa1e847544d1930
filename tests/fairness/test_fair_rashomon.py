"""How fair the near-optimal lists are: the range of a metric over a Rashomon set, and its fairest member,
equal to each member's gap computed from its own predictions."""

import numpy as np
import pytest
from test_fair_estimator import _table

from optrules import RuleListClassifier
from optrules.fairness.metrics import METRICS, exact_unfairness


@pytest.mark.parametrize("metric", METRICS)
def test_the_range_and_the_fairest_member_are_the_members_own(metric):
    X, y = _table(4, 150)
    features = X.drop(columns="group")
    model = RuleListClassifier(regularization=0.01).fit(features, y)
    rashomon = model.rashomon_set(0.01)
    result = rashomon.fairness(X, y, "group", metric)
    group = (X["group"] == "b").to_numpy().astype(int)
    gaps = [exact_unfairness(y, group, None, member.predict(features) == 1, metric) for member in rashomon]
    assert len(gaps) == len(rashomon) > 3
    assert result["min"] == pytest.approx(float(min(gaps))) and result["max"] == pytest.approx(float(max(gaps)))
    assert result["fairest_gap"] == min(gaps) and result["groups"] == ("a", "b")
    assert result["scope"].members == len(rashomon)
    best = min(m.objective for m, g in zip(rashomon, gaps) if g == min(gaps))
    assert result["fairest"].objective == pytest.approx(best)
    optimal = rashomon.optimal_member()
    assert result["optimal"] == pytest.approx(float(exact_unfairness(y, group, None, optimal.predict(features) == 1,
                                                                     metric)))


def test_the_groups_are_checked():
    X, y = _table(4, 150)
    rashomon = RuleListClassifier(regularization=0.01).fit(X.drop(columns="group"), y).rashomon_set(0.02)
    with pytest.raises(ValueError, match="exactly two groups"):
        rashomon.fairness(X, y, np.arange(150) % 3)
