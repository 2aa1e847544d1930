"""The trade-off between accuracy and fairness, certified: the optimum under each bound of a grid.

The bounds are searched from the loosest down. An optimum whose own unfairness is at most a tighter bound
is that bound's optimum too (the lists meeting the tighter bound are among those meeting the looser one,
and it is one of them), so such a point costs no search: its certificate is the looser search's.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np
from sklearn.base import clone

from .metrics import check_max_unfairness

#: the bounds :func:`fairness_frontier` searches unless told: 0.01 to 0.10
DEFAULT_BOUNDS = tuple(round(0.01 * k, 2) for k in range(1, 11))


@dataclass
class FrontierPoint:
    """The certified optimum under ``max_unfairness``: its fitted ``model`` (a RuleListClassifier), and
    ``searched`` False when a looser bound's optimum met this one (no search of its own)."""

    max_unfairness: float
    model: object
    searched: bool

    @property
    def objective(self) -> float:
        return self.model.certificate_.objective

    @property
    def lower_bound(self) -> float:
        return self.model.certificate_.lower_bound

    @property
    def unfairness(self) -> float:
        return float(Fraction(self.model.certificate_.counters["unfairness"]))


@dataclass
class FairnessFrontier:
    """The points of :func:`fairness_frontier`, tightest bound first."""

    metric: str
    points: list[FrontierPoint] = field(default_factory=list)

    def table(self, X_test=None, y_test=None) -> list[dict]:
        """A row per bound: its objective, lower bound, status, the achieved unfairness, the rules, and
        with test data its test accuracy."""
        rows = []
        for point in self.points:
            row = {"max_unfairness": point.max_unfairness, "objective": point.objective,
                   "lower_bound": point.lower_bound, "status": point.model.certificate_.status,
                   "unfairness": point.unfairness, "rules": len(point.model.rule_list_.rules),
                   "searched": point.searched}
            if X_test is not None:
                row["test_accuracy"] = float(np.mean(point.model.predict(X_test) == np.asarray(y_test)))
            rows.append(row)
        return rows

    def __repr__(self) -> str:
        proven = sum(p.model.certificate_.is_optimal for p in self.points)
        return (f"FairnessFrontier({self.metric}: {len(self.points)} bounds, {proven} certified optimal, "
                f"objective {self.points[-1].objective:.6f} to {self.points[0].objective:.6f})")


def fairness_frontier(estimator, X, y, sensitive, max_unfairness=DEFAULT_BOUNDS, sample_weight=None,
                      should_stop=None) -> FairnessFrontier:
    """The certified optimum of ``estimator`` (a ``RuleListClassifier`` with ``fairness=`` set) under each
    bound of ``max_unfairness``, fitted on ``X``, ``y`` with the groups ``sensitive`` (as ``fit`` takes
    them); see the module's docstring for the work saved. ``should_stop``: asked before each bound's fit;
    True ends the frontier with the bounds done so far (the looser ones)."""
    if getattr(estimator, "fairness", None) is None:
        raise ValueError("fairness_frontier needs an estimator with fairness= set (the metric the bounds are of)")
    bounds = sorted({float(check_max_unfairness(b)) for b in np.atleast_1d(max_unfairness)}, reverse=True)
    points: list[FrontierPoint] = []
    for bound in bounds:
        if should_stop is not None and points and should_stop():
            break
        looser = points[-1] if points else None
        if looser is not None and looser.model.certificate_.is_optimal and \
                Fraction(looser.model.certificate_.counters["unfairness"]) <= check_max_unfairness(bound):
            model = copy.deepcopy(looser.model)
            model.set_params(max_unfairness=bound)
            model.certificate_.counters["max_unfairness"] = str(check_max_unfairness(bound))
            model.certificate_.counters["certified_by"] = (f"the optimum under {looser.max_unfairness:g}, whose "
                                                            f"unfairness is within {bound:g}")
            model.fairness_ = dict(model.fairness_, max_unfairness=bound)
            points.append(FrontierPoint(bound, model, searched=False))
            continue
        model = clone(estimator).set_params(max_unfairness=bound)
        model.fit(X, y, sample_weight=sample_weight, sensitive=sensitive)
        points.append(FrontierPoint(bound, model, searched=True))
    return FairnessFrontier(estimator.fairness, points[::-1])

