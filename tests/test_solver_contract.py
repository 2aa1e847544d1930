"""The solver contract (:class:`optrules.solve.Solver`), over every registered family's solvers (the
registry's ``solver_paths``) and the fourth family the tests register (``tests/onerule_family``):

* each solver is a ``Solver`` whose phase order is the base's (``solve`` not overridden), that names a
  known method, and is built keyword-only from one frozen settings dataclass, a budget and a progress
  callback;
* a budget spent before the start runs no phase and returns a true bound (at most the optimum);
* through each family's estimator, a callback answering STOP between the stages (binarizing, mining) runs
  no phase of any solver, and STOP inside the search ends the fit with the search's best model and a
  bound that still holds (checked against another fit's list and bound over the same space).
"""

import dataclasses
import inspect
import typing

import numpy as np
import pandas as pd
import pytest

from optrules.budget import STOP, Budget
from optrules.certificate import INTERRUPTED, METHODS, OPTIMAL
from optrules.families import FAMILY_MODULES, families
from optrules.solve import STAGES, Solver

TEST_FAMILY = "onerule_family.family"


@pytest.fixture
def every_family(monkeypatch):
    """The registry with the test family in it."""
    import optrules.families

    monkeypatch.setattr(optrules.families, "FAMILY_MODULES", (*FAMILY_MODULES, TEST_FAMILY))
    return families()


FAMILY_NAMES = [*families(), "onerule"]


# -- the solvers themselves --------------------------------------------------------------------------

def test_every_family_declares_solvers_that_keep_the_contract(every_family):
    assert set(every_family) == set(FAMILY_NAMES)
    for family in every_family.values():
        assert family.solvers, f"the {family.name} family declares no solver"
        for solver in family.solvers:
            assert issubclass(solver, Solver) and not inspect.isabstract(solver), solver
            assert solver.solve is Solver.solve, f"{solver.__name__} changes the phase order"
            assert solver.method in METHODS, solver
            parameters = inspect.signature(solver.__init__).parameters
            for name in ("settings", "budget", "progress"):
                assert parameters[name].kind is inspect.Parameter.KEYWORD_ONLY, (solver, name)
            settings = typing.get_type_hints(solver.__init__)["settings"]
            assert dataclasses.is_dataclass(settings) and settings.__dataclass_params__.frozen, (solver, settings)


def _rule_list_problem():
    from optrules.corels.problem import Problem

    rng = np.random.default_rng(11)
    captures = rng.random((7, 80)) < rng.uniform(0.2, 0.6, (7, 1))
    y = ((captures[0] & ~captures[1]) ^ (rng.random(80) < 0.2)).astype(np.int64)
    return Problem.from_captures(captures, y, 0.01)


def _rule_list(budget):
    from optrules.corels.search import RuleListSearch, RuleListSearchSettings

    return RuleListSearch(_rule_list_problem(), settings=RuleListSearchSettings(), budget=budget)


def _cluster(budget):
    from optrules.corels.cluster import ClusterSearch, ClusterSettings

    # (stopped before its start, it never reaches the cluster: the serial search is its optimum)
    return ClusterSearch(_rule_list_problem(), None, settings=ClusterSettings(), budget=budget)


def _rashomon(budget):
    from optrules.corels.rashomon import RashomonEnumeration, RashomonSettings

    return RashomonEnumeration(_rule_list_problem(), settings=RashomonSettings(0.02, 0.5), budget=budget)


def _falling_list(budget):
    from optrules.frl.search import FallingListSearch, FallingListSettings, FRLProblem

    rng = np.random.default_rng(12)
    captures = rng.random((6, 90)) < 0.3
    y = (captures[0] | (rng.random(90) < 0.2)).astype(int)
    return FallingListSearch(FRLProblem(captures, y, 2.0, 0.01), settings=FallingListSettings(), budget=budget)


def _rule_set(budget):
    from optrules.rulesets.colgen import ColumnGeneration, ColumnGenerationSettings

    rng = np.random.default_rng(13)
    features = rng.random((120, 6)) < 0.5
    y = (features[:, 0] & features[:, 1]) ^ (rng.random(120) < 0.1)
    return ColumnGeneration(features, y, settings=ColumnGenerationSettings(complexity=8, max_degree=2,
                                                                           pricing_time_limit=None), budget=budget)


def _fair_list(budget):
    from fractions import Fraction

    from optrules.fairness.search import FairListSettings, FairListSolver

    rng = np.random.default_rng(15)
    captures = rng.random((5, 90)) < 0.35
    y = (captures[0] ^ (rng.random(90) < 0.2)).astype(np.int64)
    group = (rng.random(90) < 0.5).astype(np.int64)
    return FairListSolver(captures, y, group, settings=FairListSettings(0.01, "statistical_parity", Fraction(1, 10)),
                          budget=budget)


def _fair_rule_set(budget):
    from fractions import Fraction

    from optrules.rulesets.fair import FairRuleSetSettings, FairRuleSetSolver

    rng = np.random.default_rng(16)
    features = rng.random((80, 5)) < 0.5
    target = (features[:, 0] & features[:, 1]) ^ (rng.random(80) < 0.1)
    group = (rng.random(80) < 0.5).astype(np.int64)
    settings = FairRuleSetSettings("statistical_parity", Fraction(1, 10), 6.0, 0.0, 2)
    return FairRuleSetSolver(features, target, group, np.ones(int(target.sum())), np.ones(int((~target).sum())),
                             settings=settings, budget=budget)


def _one_rule(budget):
    from onerule_family.solver import OneRuleSearch, OneRuleSettings

    rng = np.random.default_rng(14)
    features = rng.random((100, 20)) < 0.4
    codes = (features[:, 3] ^ (rng.random(100) < 0.2)).astype(np.int64)
    return OneRuleSearch(features, codes, np.ones(100), 2, settings=OneRuleSettings(), budget=budget)


#: a small instance of each solver, built with the given budget (a new family's solver adds one here)
INSTANCES = {"RuleListSearch": _rule_list, "ClusterSearch": _cluster, "RashomonEnumeration": _rashomon,
             "FallingListSearch": _falling_list, "ColumnGeneration": _rule_set, "FairListSolver": _fair_list,
             "FairRuleSetSolver": _fair_rule_set, "OneRuleSearch": _one_rule}


def _optimum(name: str) -> float:
    """The instance's optimum, solved without a budget (the cluster's: the serial search's)."""
    result = INSTANCES["RuleListSearch" if name == "ClusterSearch" else name](Budget()).solve()
    assert result.certificate.status == OPTIMAL, name
    return result.objective


def test_a_budget_spent_before_the_start_runs_no_phase_and_returns_a_true_bound(every_family):
    solvers = {solver.__name__ for family in every_family.values() for solver in family.solvers}
    assert solvers <= set(INSTANCES), f"no small instance of {solvers - set(INSTANCES)}"
    for name in sorted(solvers):
        budget = Budget()
        budget.hear(STOP)
        solver = INSTANCES[name](budget)
        result = solver.solve()
        assert solver.ran == [], name
        certificate = result.certificate
        assert certificate.status == INTERRUPTED and certificate.method == solver.method, name
        assert certificate.lower_bound <= result.objective + 1e-12, name
        assert certificate.lower_bound <= _optimum(name) + 1e-12, name
        with pytest.raises(dataclasses.FrozenInstanceError):
            result.objective = 0.0


# -- through each family's estimator -----------------------------------------------------------------

def _table(n=900, seed=5):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, 8)), columns=[f"f{j}" for j in range(8)])
    signal = (X["f0"] > 0) & (X["f1"] < 0.5) | (X["f2"] > 1)
    y = np.where(signal ^ (rng.random(n) < 0.3), "yes", "no")
    return X, y


def _estimator(family, callback):
    """The family's estimator on quantile thresholds (one space, no ladder), with small rules and little
    regularization (a search that takes a while), hearing ``callback``: settings it declares only."""
    wanted = {"thresholds": "quantile", "n_thresholds": 9, "max_card": 2, "regularization": 0.001, "C": 0.0005,
              "complexity": 40, "time_limit": 60, "verbose": callback or False}
    declared = {entry.name for entry in family.parameters}
    return family.estimator(**{name: value for name, value in wanted.items() if name in declared})


class Spy:
    """Every solver a fit builds, and the events its callback heard."""

    def __init__(self, monkeypatch, answer):
        self.solvers, self.events, self.answer = [], [], answer
        solve = Solver.solve
        spy = self

        def watched(solver):
            spy.solvers.append(solver)
            return solve(solver)

        monkeypatch.setattr(Solver, "solve", watched)

    def __call__(self, trace, event):
        self.events.append(event)
        return STOP if self.answer(event) else None


@pytest.mark.parametrize("name", FAMILY_NAMES)
def test_stop_between_the_stages_runs_no_phase_of_a_solver(name, every_family, monkeypatch):
    family = every_family[name]
    X, y = _table()
    reference = _estimator(family, None).set_params(time_limit=20).fit(X, y).certificate_
    spy = Spy(monkeypatch, lambda event: event.unit == STAGES)
    model = _estimator(family, spy).fit(X, y)
    assert spy.events and spy.events[0].unit == STAGES
    assert all(solver.ran == [] for solver in spy.solvers), [solver.ran for solver in spy.solvers]
    certificate = model.certificate_
    assert certificate.status == INTERRUPTED and certificate.counters.get("stopped_in") != "search"
    assert certificate.lower_bound <= reference.objective + 1e-12  # (a list of the same space: >= the optimum)
    assert len(model.predict(X)) == len(y)


@pytest.mark.parametrize("name", FAMILY_NAMES)
def test_stop_inside_the_search_keeps_its_best_model_and_a_true_bound(name, every_family, monkeypatch):
    family = every_family[name]
    X, y = _table()
    reference = _estimator(family, None).set_params(time_limit=20).fit(X, y).certificate_
    spy = Spy(monkeypatch, lambda event: event.unit != STAGES)
    model = _estimator(family, spy).fit(X, y)
    searching = [event for event in spy.events if event.unit != STAGES]
    assert {event.work for event in searching} == {searching[0].work}, "the search went on after it heard STOP"
    assert spy.solvers and "search" in spy.solvers[-1].ran
    certificate = model.certificate_
    assert certificate.status == INTERRUPTED and certificate.counters.get("stopped_in", "search") == "search"
    assert certificate.lower_bound <= reference.objective + 1e-12
    assert certificate.objective >= reference.lower_bound - 1e-12
    if certificate.method != "column generation":  # (its events' objective is the LP's, not a set's)
        assert certificate.objective <= searching[0].objective + 1e-12
    assert len(model.predict(X)) == len(y)
