"""The trade-off between accuracy and fairness, certified: the optimum under each bound of a grid.

The bounds are searched from the loosest down. An optimum whose own unfairness is at most a tighter bound
is that bound's optimum too (the lists meeting the tighter bound are among those meeting the looser one,
and it is one of them), so such a point costs no search: its certificate is the looser search's.
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np
from sklearn.base import clone

from .metrics import check_max_unfairness

#: a lower bound this close to a list's objective proves it optimal (float sums of the same weights)
PROVEN_TOLERANCE = 1e-12
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
                   "unfairness": point.unfairness, "rules": len(point.model.rule_list_),
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
                      should_stop=None, time_limit: float | None = None) -> FairnessFrontier:
    """The certified optimum of ``estimator`` (a ``RuleListClassifier`` with ``fairness=`` set) under each
    bound of ``max_unfairness``, fitted on ``X``, ``y`` with the groups ``sensitive`` (as ``fit`` takes
    them); see the module's docstring for the work saved. ``should_stop``: asked before each bound's fit;
    True ends the frontier with the bounds done so far (the looser ones). ``time_limit``: seconds for the
    whole curve, each bound's fit given an equal share of what is left (and at most the estimator's own
    limit); None: each fit has the estimator's."""
    if getattr(estimator, "fairness", None) is None:
        raise ValueError("fairness_frontier needs an estimator with fairness= set (the metric the bounds are of)")
    bounds = sorted({float(check_max_unfairness(b)) for b in np.atleast_1d(max_unfairness)}, reverse=True)
    points: list[FrontierPoint] = []
    started = time.perf_counter()
    for k, bound in enumerate(bounds):
        if should_stop is not None and points and should_stop():
            break
        looser = points[-1] if points else None
        if looser is not None and looser.model.certificate_.is_optimal and \
                Fraction(looser.model.certificate_.counters["unfairness"]) <= check_max_unfairness(bound):
            model = _moved(looser.model, bound, certified_by=f"the optimum under {looser.max_unfairness:g}, whose "
                                                             f"unfairness is within {bound:g}")
            points.append(FrontierPoint(bound, model, searched=False))
            continue
        model = clone(estimator).set_params(max_unfairness=bound)
        if time_limit is not None:
            share = max(time_limit - (time.perf_counter() - started), 0.0) / (len(bounds) - k)
            own = estimator.time_limit
            model.set_params(time_limit=max(share if own is None else min(share, own), 1e-3))
        model.fit(X, y, sample_weight=sample_weight, sensitive=sensitive)
        points.append(FrontierPoint(bound, model, searched=True))
    return FairnessFrontier(estimator.fairness, share_between_bounds(points[::-1]))


def share_between_bounds(points: list[FrontierPoint]) -> list[FrontierPoint]:
    """Points (tightest bound first) whose searches stopped on a budget, improved by the others': every
    list meeting a tighter bound meets a looser one, so a looser point takes a tighter point's list when it
    is better; and a looser bound's optimum is at most a tighter one's, so a tighter point's lower bound
    rises to a looser one's. A point whose lower bound then meets its objective is proven optimal."""
    for k in range(1, len(points)):
        tighter = min(points[:k], key=lambda point: point.objective)
        if tighter.objective < points[k].objective:
            model = _moved(tighter.model, points[k].max_unfairness, list_found_under=f"{tighter.max_unfairness:g}")
            certificate = model.certificate_
            certificate.lower_bound = points[k].lower_bound
            certificate.status = points[k].model.certificate_.status
            points[k] = FrontierPoint(points[k].max_unfairness, model, points[k].searched)
    for k in range(len(points) - 2, -1, -1):
        certificate, looser = points[k].model.certificate_, points[k + 1].model.certificate_
        if looser.lower_bound > certificate.lower_bound:
            certificate.lower_bound = min(looser.lower_bound, certificate.objective)
            certificate.counters["lower_bound_from"] = f"{points[k + 1].max_unfairness:g}"
    for point in points:
        certificate = point.model.certificate_
        if certificate.status != "optimal" and certificate.lower_bound >= certificate.objective - PROVEN_TOLERANCE:
            certificate.status, certificate.lower_bound = "optimal", certificate.objective
            certificate.counters["certified_by"] = "the lower bound of a looser bound's search"
    return points


def _moved(model, bound: float, **counters):
    """A copy of a fitted ``model`` as the fit under ``bound`` (its list meets it): the bound in its
    parameters, ``fairness_`` and certificate, with ``counters`` saying why."""
    model = copy.deepcopy(model)
    model.set_params(max_unfairness=bound)
    model.fairness_ = dict(model.fairness_, max_unfairness=bound)
    model.certificate_.counters = dict(model.certificate_.counters, max_unfairness=str(check_max_unfairness(bound)),
                                       **counters)
    return model
