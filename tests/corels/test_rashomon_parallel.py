"""The Rashomon set's enumeration on several threads: the same graph, set and counts as on one, every
member equal to brute force, budgets heard."""

import math

import numpy as np
import pytest
from searches_alike import THREADS, default_and_slow, threads_from_the_first_slice  # noqa: F401 (a fixture)
from test_rashomon import _every_list_objective, _random_problem

from optrules import bnb
from optrules.certificate import NODE_BUDGET
from optrules.corels import rashomon_kernel as K
from optrules.corels.problem import Problem
from optrules.corels.rashomon import enumerate_rashomon
from optrules.corels.search import search

pytestmark = pytest.mark.usefixtures("threads_from_the_first_slice")

#: what must be the same on every number of threads
SAME = ("nodes", "expansions", "edges", "table_entries")


def same_enumeration(runs: dict) -> None:
    first = runs[1]
    for n_jobs, enumeration in runs.items():
        assert {k: enumeration.counters[k] for k in SAME} == {k: first.counters[k] for k in SAME}, n_jobs
        assert (enumeration.optimum, enumeration.complete_below, enumeration.status) == (
            first.optimum, first.complete_below, first.status), n_jobs
        assert enumeration.objective_counts() == first.objective_counts(), n_jobs
        assert [m.prefix for m in enumeration.members()] == [m.prefix for m in first.members()], n_jobs
        assert enumeration.counters["threads"] == bnb.threads_for(n_jobs), n_jobs


def check_against_brute_force_and_serial(seed: int) -> None:
    rng = np.random.default_rng(5000 + seed)
    n_classes = 3 if seed % 5 == 4 else 2
    captures, y, weights = _random_problem(rng, weighted=seed % 3 == 0, n_classes=n_classes)
    regularization = float(rng.choice([0.0, 0.01, 0.03, 0.08]))
    epsilon = float(rng.choice([0.0, 0.01, 0.04, 0.2]))
    max_length = None if seed % 4 else int(rng.integers(0, 4))
    lists = _every_list_objective(captures, y, regularization, max_length, weights, n_classes)
    optimum = min(lists.values())
    expected = {p for p, v in lists.items() if v <= optimum + epsilon + 1e-9}
    problem = Problem.from_captures(captures, y, regularization, sample_weight=weights, n_classes=n_classes)
    upper_bound = optimum if seed % 2 else max(lists.values())
    with np.errstate(all="ignore"):
        runs = {n_jobs: enumerate_rashomon(problem, epsilon, upper_bound, max_length=max_length, n_jobs=n_jobs)
                for n_jobs in sorted({1, THREADS, 3})}
    for enumeration in runs.values():
        assert {m.prefix for m in enumeration.members()} == expected
    same_enumeration(runs)


# certified objective = brute force, and the same search on every number of threads
test_parallel_enumeration_matches_brute_force_and_serial, test_parallel_enumeration_matches_brute_force_and_serial_many = (
    default_and_slow(check_against_brute_force_and_serial))


def larger_problem(seed: int, m: int = 30, n: int = 600) -> Problem:
    rng = np.random.default_rng(seed)
    captures = rng.random((m, n)) < rng.uniform(0.1, 0.5, size=(m, 1))
    y = ((captures[0] & ~captures[1]) | (rng.random(n) < 0.2)).astype(int)
    return Problem.from_captures(captures, y, 0.01)


@pytest.mark.parametrize("epsilon, max_nodes", [(0.01, None), (0.03, None), (0.03, 1), (0.03, 33), (0.03, 500)])
def test_every_thread_count_enumerates_alike_on_larger_problems(epsilon, max_nodes):
    """Many full batches (and a node budget ending one exactly where it ends on one thread)."""
    problem = larger_problem(1)
    upper_bound = search(problem).objective
    runs = {n_jobs: enumerate_rashomon(problem, epsilon, upper_bound, max_nodes=max_nodes, n_jobs=n_jobs)
            for n_jobs in (1, THREADS)}
    if max_nodes is None:
        assert runs[1].counters["expansions"] > 3 * K.MAX_BATCH and runs[1].status == "optimal"
    else:
        assert runs[1].status == NODE_BUDGET and runs[1].counters["expansions"] == max_nodes
        assert runs[1].complete_below < math.inf
    assert runs[THREADS].counters["threads"] == THREADS
    same_enumeration(runs)


def test_the_estimators_rashomon_set_takes_its_threads():
    from sklearn.datasets import make_classification

    from optrules import RuleListClassifier

    X, y = make_classification(400, 6, random_state=1)
    sets = {n_jobs: RuleListClassifier(regularization=0.01, max_card=1, n_jobs=n_jobs).fit(X, y).rashomon_set(0.02)
            for n_jobs in (1, THREADS)}
    members = {n_jobs: [m.antecedents for m in rashomon] for n_jobs, rashomon in sets.items()}
    assert members[1] == members[THREADS] and len(members[1]) > 1
