"""The falling-list search on several threads: the same search as on one (the same prefixes expanded,
the same list, the same certificate), certified optima equal to brute force, budgets and stops heard."""

import time
from types import SimpleNamespace

import numpy as np
import pytest
from searches_alike import THREADS, default_and_slow, same_search, threads_from_the_first_slice  # noqa: F401 (a fixture)
from test_frl_search import planted_instance, random_instance

from optrules import bnb
from optrules.budget import STOP
from optrules.certificate import INTERRUPTED, MEMORY_BUDGET, NODE_BUDGET
from optrules.frl import kernel as K
from optrules.frl.bruteforce import brute_force
from optrules.frl.search import FRLProblem, certified_search

pytestmark = pytest.mark.usefixtures("threads_from_the_first_slice")


def check_against_brute_force_and_serial(seed: int) -> None:
    rng = np.random.default_rng(8000 + seed)
    captures, y, w, C, C1 = planted_instance(rng) if seed % 2 else random_instance(rng, m_max=7)
    soft, use_map = bool(rng.random() < 0.5), bool(rng.random() < 0.7)
    counting = ("auto", "packed", "samples")[int(rng.integers(3))]
    expected, _ = brute_force(captures, y, w, C, C1, soft)
    problem = FRLProblem(captures, y, w, C, C1)
    runs = {n_jobs: certified_search(problem, soft=soft, use_map=use_map, counting=counting, n_jobs=n_jobs)
            for n_jobs in sorted({1, THREADS, 3})}
    for result in runs.values():
        assert result.certificate.is_optimal
        assert result.objective == pytest.approx(expected, abs=1e-9)
        assert result.objective == pytest.approx(problem.objective(result.solution, soft), abs=1e-12)
    same_search(runs)


# certified objective = brute force, and the same search on every number of threads
test_parallel_search_matches_brute_force_and_serial, test_parallel_search_matches_brute_force_and_serial_many = (
    default_and_slow(check_against_brute_force_and_serial))


def larger_problem(seed: int, m: int = 40, n: int = 800, C: float = 0.005, w: float = 3.0, C1: float = 0.2,
                   weights: bool = False) -> FRLProblem:
    """Too large for brute force, large enough for full batches and many of them (softly falling lists
    expand thousands of prefixes): labels drawn from a planted falling list over overlapping antecedents."""
    rng = np.random.default_rng(seed)
    captures = rng.random((m, n)) < rng.uniform(0.1, 0.4, size=(m, 1))
    rate = np.full(n, 0.05)
    undecided = np.ones(n, bool)
    for a, r in zip(rng.permutation(m)[:5], (0.9, 0.75, 0.6, 0.45, 0.3)):
        rate[captures[a] & undecided] = r
        undecided &= ~captures[a]
    y = (rng.random(n) < rate).astype(int)
    sample_weight = rng.uniform(0.2, 3.0, n) if weights else None
    return FRLProblem(captures, y, w=w, C=C, C1=C1, sample_weight=sample_weight)


@pytest.mark.parametrize("soft, use_map, weights, options", [
    (False, True, False, dict(m=80, C=0.0005, w=7.0)),
    (True, True, False, {}),
    (True, False, False, {}),
    (True, True, True, {}),
])
def test_every_thread_count_searches_alike_on_larger_problems(soft, use_map, weights, options):
    problem = larger_problem(1, weights=weights, **options)
    runs = {n_jobs: certified_search(problem, soft=soft, use_map=use_map, n_jobs=n_jobs) for n_jobs in (1, THREADS)}
    assert runs[1].certificate.counters["nodes_expanded"] > 3 * K.batch_size(problem.n_antecedents)
    same_search(runs)


@pytest.mark.parametrize("max_nodes", [1, 7, 32, 33, 100])
def test_a_node_budget_ends_every_thread_count_at_the_same_prefix(max_nodes):
    """A batch never runs past the node budget: it ends after exactly max_nodes expansions."""
    problem = larger_problem(2)
    runs = {n_jobs: certified_search(problem, soft=True, max_nodes=max_nodes, n_jobs=n_jobs) for n_jobs in (1, THREADS)}
    assert runs[1].certificate.status == NODE_BUDGET
    assert runs[1].certificate.counters["nodes_expanded"] == max_nodes
    same_search(runs)


def test_how_the_driver_slices_a_search_does_not_change_it(monkeypatch):
    """Slices of one pop each (a batch is filled whatever the slice) search as the usual ones do."""
    problem = larger_problem(3)
    usual = certified_search(problem, soft=True, n_jobs=1)
    original = bnb.drive

    def one_pop_slices(run, *args, **kwargs):
        return original(lambda max_pops: run(min(max_pops, 1)), *args, **kwargs)

    monkeypatch.setattr("optrules.frl.search.drive", one_pop_slices)
    same_search({1: usual, THREADS: certified_search(problem, soft=True, n_jobs=THREADS)})


def test_a_search_out_of_memory_drains_alike_on_threads():
    """Past the memory budget the children a batch cannot queue are dropped with their bound, in the
    batch's order on every number of threads."""
    from optrules.budget import Budget

    problem = larger_problem(4, m=30, n=600, C1=0.1)
    unlimited = Budget()
    full = certified_search(problem, soft=True, use_map=False, budget=unlimited)
    max_memory = int(0.6 * unlimited.used)
    runs = {n_jobs: certified_search(problem, soft=True, use_map=False, max_memory=max_memory, n_jobs=n_jobs)
            for n_jobs in (1, THREADS)}
    assert runs[1].certificate.status == MEMORY_BUDGET and runs[1].certificate.counters["prefixes_dropped"] > 0
    assert runs[1].certificate.lower_bound <= full.objective + 1e-12
    same_search(runs)


def test_a_stop_request_ends_a_parallel_search_with_a_valid_certificate():
    problem = larger_problem(5, C=0.001, C1=0.05)
    calls = []

    def stop_soon(trace, event):
        calls.append(time.perf_counter())
        return STOP if len(calls) >= 3 else None

    result = certified_search(problem, soft=True, n_jobs=THREADS, progress=stop_soon, trace_interval=0.01,
                              time_limit=60)
    ended = time.perf_counter()
    assert result.certificate.status == INTERRUPTED
    assert result.certificate.lower_bound <= result.objective
    assert result.objective == pytest.approx(problem.objective(result.solution, True))
    assert ended - calls[2] < 1.0, np.diff(calls)  # within a slice of the stop (slices are kept near 20 ms)


def test_the_estimator_and_the_command_line_take_n_jobs(capsys):
    from sklearn.datasets import make_classification

    from optrules.cli import main
    from optrules.frl.estimator import FallingRuleListClassifier

    X, y = make_classification(300, 5, random_state=0)
    fits = {n_jobs: FallingRuleListClassifier(n_jobs=n_jobs, max_card=1, n_thresholds=3).fit(X, y)
            for n_jobs in (1, THREADS)}
    same_search({n_jobs: SimpleNamespace(solution=fit.antecedent_indices_, objective=fit.objective_,
                                         certificate=fit.certificate_) for n_jobs, fit in fits.items()})
    with pytest.raises(SystemExit):
        main(["fit", "--model", "frl", "--dataset", "compas", "--n-jobs", "0"])
    assert "--n-jobs: takes a whole number other than 0" in capsys.readouterr().err
    assert main(["fit", "--model", "frl", "--dataset", "compas", "--n-jobs", "2", "--max-card", "1"]) == 0
    assert "certified optimal" in capsys.readouterr().out
