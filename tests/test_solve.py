"""The solvers' shared vocabulary (optrules.solve): every family's progress callback hears typed events in
the unit of its own work, and every solver returns a SolveResult."""

import math

import numpy as np
import pytest

from optrules.estimators import FallingRuleListClassifier, RuleListClassifier, RuleSetClassifier
from optrules.solve import LP_SOLVES, PREFIXES, STAGES, ProgressEvent, SolveResult


def _table(seed=0, n=400):
    rng = np.random.default_rng(seed)
    X = rng.random((n, 8)) < 0.5
    y = ((X[:, 0] & X[:, 1]) | (X[:, 2] & ~X[:, 3]) ^ (rng.random(n) < 0.1)).astype(int)
    return X.astype(np.int8), y


@pytest.mark.parametrize("make, unit, work", [
    (lambda cb: RuleListClassifier(regularization=0.01, verbose=cb, max_card=2, time_limit=20), PREFIXES, "nodes_expanded"),
    (lambda cb: FallingRuleListClassifier(C=0.001, verbose=cb, max_card=2, time_limit=20), PREFIXES, "nodes_expanded"),
    (lambda cb: RuleSetClassifier(complexity=10, time_limit=20, verbose=cb), LP_SOLVES, "iterations"),
])
def test_every_family_reports_typed_events_in_its_unit(make, unit, work):
    events = []
    model = make(lambda trace, event: events.append((len(trace), event))).fit(*_table())
    assert events and all(isinstance(event, ProgressEvent) for _, event in events)
    assert {event.unit for _, event in events} <= {unit, STAGES}
    stages = [event for points, event in events if event.unit == STAGES]
    assert stages and all(event.work == 0 and event.objective == math.inf for event in stages)
    solving = [event for _, event in events if event.unit == unit]
    assert solving, "no event of the solve itself"
    works = [event.work for event in solving]
    assert works == sorted(works) and works[-1] <= model.certificate_.counters[work]
    for event in solving:
        assert event.lower_bound <= event.objective + 1e-12 and event.gap == max(0.0, event.objective - event.lower_bound)
        assert event["nodes_expanded"] == event.work and event["queue"] == event.queue  # as callbacks first read it
        assert dict(event) == {"nodes_expanded": event.work, "queue": event.queue}
    # the last event's bound is one the certificate's own bound does not fall below
    assert solving[-1].lower_bound <= model.certificate_.lower_bound + 1e-9
    # the certificate names its method, which says where its work is counted and in what unit
    assert model.certificate_.work == (model.certificate_.counters[work], unit)
    assert unit in str(model.certificate_)


def test_every_solver_returns_a_solve_result():
    from optrules.corels.problem import Problem
    from optrules.corels.search import search
    from optrules.frl.search import FRLProblem, certified_search
    from optrules.rulesets.colgen import column_generation

    X, y = _table(1, 300)
    captures = X.T.astype(bool)
    rule_list = search(Problem.from_captures(captures, y, 0.01))
    falling = certified_search(FRLProblem(captures, y, 1.0, 0.01))
    rule_set = column_generation(X.astype(bool), y, 8, 0.0, 2, time_limit=20)
    for result in (rule_list, falling, rule_set):
        assert type(result) is SolveResult and isinstance(result.solution, tuple)
        assert result.counters is result.certificate.counters
        assert result.certificate.objective == pytest.approx(result.objective)
        with pytest.raises(AttributeError):  # frozen: what a solver returned stays what it proved
            result.objective = 0.0
    assert rule_list.mistakes == rule_list.objective * 300 - 0.01 * 300 * len(rule_list.solution)
    assert all(isinstance(clause, tuple) for clause in rule_set.solution)


def test_a_certificate_names_its_method_and_older_files_still_read():
    from optrules.certificate import BRANCH_AND_BOUND, COLUMN_GENERATION, Certificate

    X, y = _table(2, 300)
    for model, method in ((RuleListClassifier(max_card=1).fit(X, y), BRANCH_AND_BOUND),
                          (RuleSetClassifier(complexity=6, time_limit=20).fit(X, y), COLUMN_GENERATION)):
        certificate = model.certificate_
        assert certificate.method == method
        saved = certificate.to_dict()
        assert Certificate.from_dict(saved).method == method and str(Certificate.from_dict(saved)) == str(certificate)
        del saved["method"]  # a file written before certificates named their method: read from its counters
        assert Certificate.from_dict(saved).method == method and str(Certificate.from_dict(saved)) == str(certificate)
        with pytest.raises(ValueError, match="method must be one of"):
            Certificate.from_dict({**saved, "method": "<script>"})
    # a solver of its own (no method): its head only, and no work counted
    own = Certificate("optimal", 0.25, 0.25, {"nodes_expanded": 9})
    assert str(own) == "certified optimal: objective 0.250000000" and own.work == (0, "")
    with pytest.raises(ValueError, match="unknown method"):
        Certificate("optimal", 0.25, 0.25, method="guessing")
