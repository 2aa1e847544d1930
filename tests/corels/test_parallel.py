"""The rule-list search on several threads: the same search as on one (the same prefixes expanded, the
same list, the same certificate), certified optima equal to brute force, budgets and stops heard."""

import os
import subprocess
import sys
import time

import numpy as np
import pytest
from searches_alike import SAME, THREADS, default_and_slow, same_search, threads_from_the_first_slice  # noqa: F401 (a fixture)
from test_corels_search import ABLATIONS, MAPS, POLICIES, check_result, planted_instance, random_instance

from optrules import bnb
from optrules.budget import STOP
from optrules.certificate import INTERRUPTED, NODE_BUDGET, OPTIMAL
from optrules.corels import kernel as K
from optrules.corels.bruteforce import brute_force
from optrules.corels.problem import Problem
from optrules.corels.search import Ablation, search

pytestmark = pytest.mark.usefixtures("threads_from_the_first_slice")


def random_case(seed: int):
    """A random or planted problem, and a random policy, map and ablation to search it with."""
    rng = np.random.default_rng(7000 + seed)
    captures, y, lam = planted_instance(rng) if seed % 2 else random_instance(rng, m_max=7)
    options = dict(policy=POLICIES[seed % len(POLICIES)], map_type=MAPS[int(rng.integers(len(MAPS)))],
                   ablation=ABLATIONS[int(rng.integers(len(ABLATIONS)))], warm_start=bool(rng.random() < 0.5))
    return captures, y, lam, options


def check_against_brute_force_and_serial(seed: int) -> None:
    captures, y, lam, options = random_case(seed)
    expected = brute_force(captures, y, lam)
    problem = Problem.from_captures(captures, y, lam)
    runs = {n_jobs: search(problem, n_jobs=n_jobs, **options) for n_jobs in sorted({1, THREADS, 3})}
    for result in runs.values():
        check_result(result, captures, y, lam, expected)
    same_search(runs)


# certified objective = brute force, and the same search on every number of threads
test_parallel_search_matches_brute_force_and_serial, test_parallel_search_matches_brute_force_and_serial_many = (
    default_and_slow(check_against_brute_force_and_serial))


def larger_problem(seed: int, m: int = 40, n: int = 600, noise: float = 0.15):
    """Too large for brute force, large enough for full batches and many of them."""
    rng = np.random.default_rng(seed)
    captures, y, _ = planted_instance(rng, n_max=n, m=m)
    flip = rng.random(len(y)) < noise
    y = np.where(flip, 1 - y, y)
    return captures, y


@pytest.mark.parametrize("seed, lam, options", [
    (0, 0.005, {}),
    (1, 0.002, {"ablation": Ablation(leaf_resolution=True)}),
    (2, 0.005, {"ablation": Ablation(deferred_children=True)}),
    (3, 0.01, {"map_type": "prefix"}),
    (4, 0.005, {"counting": "samples"}),
])
def test_every_thread_count_searches_alike_on_larger_problems(seed, lam, options):
    captures, y = larger_problem(seed)
    problem = Problem.from_captures(captures, y, lam)
    runs = {n_jobs: search(problem, n_jobs=n_jobs, time_limit=None, **options) for n_jobs in (1, THREADS)}
    assert runs[1].certificate.counters["nodes_expanded"] > 4 * K.batch_size(problem.n_antecedents)
    same_search(runs)


def test_weighted_samples_search_alike_on_threads():
    captures, y = larger_problem(5, m=20, n=300)
    weights = np.random.default_rng(5).uniform(0.2, 3.0, len(y))
    problem = Problem.from_captures(captures, y, 0.005, sample_weight=weights)
    same_search({n_jobs: search(problem, n_jobs=n_jobs) for n_jobs in (1, THREADS)})


@pytest.mark.parametrize("max_nodes", [1, 7, 16, 17, 100, 333])
def test_a_node_budget_ends_every_thread_count_at_the_same_prefix(max_nodes):
    """A batch never runs past the node budget: it ends after exactly max_nodes expansions, wherever the
    batches begin, on every number of threads."""
    captures, y = larger_problem(6)
    problem = Problem.from_captures(captures, y, 0.002)
    runs = {n_jobs: search(problem, n_jobs=n_jobs, max_nodes=max_nodes) for n_jobs in (1, THREADS)}
    assert runs[1].certificate.status == NODE_BUDGET
    assert runs[1].certificate.counters["nodes_expanded"] == max_nodes
    same_search(runs)


def test_how_the_driver_slices_a_search_does_not_change_it(monkeypatch):
    """Slices of one pop each (a batch is filled whatever the slice) search as the usual ones do."""
    captures, y = larger_problem(7)
    problem = Problem.from_captures(captures, y, 0.005)
    usual = search(problem, n_jobs=1)
    original = bnb.drive

    def one_pop_slices(run, *args, **kwargs):
        return original(lambda max_pops: run(min(max_pops, 1)), *args, **kwargs)

    monkeypatch.setattr("optrules.corels.search.drive", one_pop_slices)
    same_search({1: usual, THREADS: search(problem, n_jobs=THREADS)})


def test_a_stop_request_ends_a_parallel_search_with_a_valid_certificate():
    captures, y = larger_problem(8, m=60, n=2000, noise=0.3)
    problem = Problem.from_captures(captures, y, 0.0005)
    calls = []

    def stop_soon(trace, event):
        calls.append(time.perf_counter())
        return STOP if len(calls) >= 3 else None

    started = time.perf_counter()
    result = search(problem, n_jobs=THREADS, progress=stop_soon, trace_interval=0.01)
    ended = time.perf_counter()
    assert result.certificate.status == INTERRUPTED
    assert result.certificate.lower_bound <= result.objective
    assert result.objective == pytest.approx(problem.cost(result.solution) / problem.total_weight)
    # the search ends within a slice of the stop (slices are kept near 20 ms)
    assert ended - calls[2] < 1.0, (ended - started, np.diff(calls))


@pytest.mark.parametrize("n_jobs, expected", [
    (None, "all"), (-1, "all"), (1, 1), (2, 2), (10_000, "all"), (-2, "all but one"), (-10_000, 1),
])
def test_threads_follow_scikit_learns_convention(n_jobs, expected):
    available = bnb.threads_for(-1)
    want = {"all": available, "all but one": max(1, available - 1)}.get(expected, expected)
    assert bnb.threads_for(n_jobs) == min(want, available)


def test_the_threads_wait_until_the_search_has_run_a_while(monkeypatch):
    """With the default PARALLEL_AFTER a short search never starts its threads."""
    monkeypatch.setattr(bnb, "PARALLEL_AFTER", 60.0)
    captures, y = larger_problem(9, m=12, n=100)
    result = search(Problem.from_captures(captures, y, 0.01), n_jobs=THREADS)
    assert result.certificate.status == OPTIMAL
    assert result.certificate.counters["threads"] == 1


class _Clock:
    """bnb's clock, moved by the stand-in kernel below: what these tests check does not depend on the load."""

    def __init__(self):
        self.now = 100.0

    def perf_counter(self) -> float:
        return self.now


class _Serial:
    """A stand-in serial kernel: its first slice takes ``first`` seconds (a first fit's compilation), the
    others ``each``; it ends after ``slices``."""

    def __init__(self, clock: _Clock, first: float, each: float, slices: int):
        self.clock, self.first, self.each, self.left = clock, first, each, slices

    def __call__(self, *args):
        self.clock.now += self.first if self.first is not None else self.each
        self.first = None
        self.left -= 1
        return 0 if self.left == 0 else 1


class _AtOnce:
    """threading.Thread, running its target when started."""

    def __init__(self, target, **kwargs):
        self.target = target

    def start(self):
        self.target()


def _parallel_compilations(monkeypatch, first: float, slices: int, cached: bool, each: float = 0.01) -> int:
    """How many times a search of ``slices`` slices starts compiling its parallel kernel (PARALLEL_AFTER
    0.2 s, PARALLEL_COLD_AFTER 3 s)."""
    clock, compilations = _Clock(), []
    monkeypatch.setattr(bnb, "time", clock)
    monkeypatch.setattr(bnb.threading, "Thread", _AtOnce)
    monkeypatch.setattr(bnb, "PARALLEL_AFTER", 0.2)
    monkeypatch.setattr(bnb, "PARALLEL_COLD_AFTER", 3.0)
    monkeypatch.setattr(bnb, "compiled_or_cached", lambda kernel, *args: cached)
    kernel = bnb.ThreadedKernel(_Serial(clock, first, each, slices), None, 2, lambda max_pops, threads: ())
    monkeypatch.setattr(kernel, "_compile_parallel", lambda: compilations.append(clock.now))
    while kernel(1) != 0:
        pass
    return len(compilations)


def test_the_first_slice_compiling_is_not_search_time(monkeypatch):
    """A first fit's first slice compiles the serial kernel for seconds: counted as search time, it started
    the parallel compilation in every cold search, whose lock every other first kernel then waited for."""
    assert _parallel_compilations(monkeypatch, first=20.0, slices=10, cached=True) == 0  # 0.09 s searched
    assert _parallel_compilations(monkeypatch, first=20.0, slices=30, cached=True) == 1  # 0.29 s


def test_an_uncached_parallel_compilation_waits_longer(monkeypatch):
    """Neither compiled nor cached, the parallel kernel (6-25 s of compiling under numba's lock) is
    compiled after PARALLEL_COLD_AFTER of search, not PARALLEL_AFTER."""
    assert _parallel_compilations(monkeypatch, first=0.01, slices=30, cached=False) == 0  # 0.29 s
    assert _parallel_compilations(monkeypatch, first=0.01, slices=40, cached=False, each=0.1) == 1  # 3.9 s


def test_compiled_or_cached_reads_numbas_cache_index(tmp_path, monkeypatch):
    """The index says which signatures a kernel's cache holds: none before a first call in a new cache, the
    called one after it, in a new process too (what a search asks before compiling the parallel kernel)."""
    module = tmp_path / "cached_kernel.py"
    module.write_text("from numba import njit\n\n@njit(cache=True)\ndef add_one(x):\n    return x + 1\n")
    script = ("import sys; sys.path.insert(0, sys.argv[1]); import numpy as np; from optrules.bnb import "
              "compiled_or_cached; from cached_kernel import add_one; "
              "before = compiled_or_cached(add_one, np.int64(1)); add_one(np.int64(1)); "
              "print(before, compiled_or_cached(add_one, np.int64(1)), compiled_or_cached(add_one, 1.5))")
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    first = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, env=env)
    again = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, env=env)
    assert first.stdout.split() == ["False", "True", "False"], first.stderr[-2000:]
    assert again.stdout.split() == ["True", "True", "False"], again.stderr[-2000:]


def test_several_searches_side_by_side_share_the_threads():
    """Searches in threads (the web app's): one holds the parallel region, the others run serially, and
    each finds what it finds alone."""
    from concurrent.futures import ThreadPoolExecutor

    problems = [Problem.from_captures(*larger_problem(10 + k, m=30, n=400), 0.005) for k in range(3)]
    alone = [search(problem, n_jobs=1) for problem in problems]
    with ThreadPoolExecutor(3) as pool:
        together = list(pool.map(lambda problem: search(problem, n_jobs=THREADS), problems))
    for a, b in zip(alone, together):
        assert (a.solution, a.objective) == (b.solution, b.objective)
        assert {k: a.certificate.counters[k] for k in SAME} == {k: b.certificate.counters[k] for k in SAME}


def test_folds_side_by_side_share_the_cores():
    """Cross-validation's folds in parallel: each fold's search takes its share of the cores, the refit
    all it was given."""
    from optrules.corels.estimator import RuleListClassifier
    from optrules.model_selection import _sharing_cores

    base = RuleListClassifier(n_jobs=None)
    assert _sharing_cores(base, 1) is base
    shared = _sharing_cores(base, 2)
    assert shared.n_jobs == max(1, bnb.threads_for(None) // 2) and base.n_jobs is None
    assert _sharing_cores(RuleListClassifier(n_jobs=1), 4).n_jobs == 1
    from optrules.rulesets.estimator import RuleSetClassifier

    assert _sharing_cores(RuleSetClassifier(), 2).get_params() == RuleSetClassifier().get_params()


def test_the_command_line_takes_n_jobs(capsys):
    from optrules.cli import main

    with pytest.raises(SystemExit):
        main(["fit", "--dataset", "compas", "--n-jobs", "0"])
    assert "--n-jobs: takes a whole number other than 0" in capsys.readouterr().err
    assert main(["fit", "--dataset", "compas", "-r", "0.02", "--n-jobs", "2", "--max-card", "1"]) == 0
    assert "certified optimal" in capsys.readouterr().out
