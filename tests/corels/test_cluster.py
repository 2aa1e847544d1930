"""The rule-list search on a Dask cluster: subtrees searched by workers, the incumbent shared, frontiers
given away, lost workers' subtrees searched again; the certificate always the serial search's."""

import contextlib
import itertools
import os
import signal
import time

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")

from searches_alike import default_and_slow  # noqa: E402
from test_corels_search import planted_instance, random_instance  # noqa: E402
from test_parallel import larger_problem  # noqa: E402

from optrules.certificate import INTERRUPTED, OPTIMAL, TIME_BUDGET  # noqa: E402
from optrules.corels import cluster  # noqa: E402
from optrules.corels.bruteforce import brute_force  # noqa: E402
from optrules.corels.problem import Problem  # noqa: E402
from optrules.corels.search import Ablation, search  # noqa: E402


@pytest.fixture(scope="module")
def client():
    """Two workers of one thread each, in this process (monkeypatched constants reach them)."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0") as local, \
            distributed.Client(local) as connected:
        yield connected


@pytest.fixture(autouse=True)
def on_the_workers_at_once(monkeypatch):
    """The coordinator hands the whole search to the workers, unsearched, so that small problems test
    them (the local first stage is tested on its own)."""
    monkeypatch.setattr(cluster, "LOCAL_SECONDS", 0.0)


def split_at_every_slice(patch) -> None:
    """Every subtree gives half its frontier away at every slice of its kernel, as if a worker were
    always idle: tiny problems split into many subtrees."""
    read, numbers = cluster._SharedIncumbent.read, itertools.count(1)

    def read_and_split(self):
        bound = read(self)
        self.split, self.asked = True, -next(numbers)
        return bound

    patch.setattr(cluster._SharedIncumbent, "read", read_and_split)


def random_problem(seed: int):
    rng = np.random.default_rng(9100 + seed)
    captures, y, lam = planted_instance(rng) if seed % 2 else random_instance(rng, m_max=7)
    return captures, y, lam


def check_against_brute_force(client, seed: int) -> None:
    captures, y, lam = random_problem(seed)
    expected = brute_force(captures, y, lam)
    problem = Problem.from_captures(captures, y, lam)
    result = cluster.cluster_search(problem, client, warm_start=bool(seed % 3))
    assert result.certificate.status == OPTIMAL
    assert result.objective == pytest.approx(expected.objective, abs=1e-12)
    assert result.certificate.lower_bound == pytest.approx(expected.objective, abs=1e-12)
    assert problem.cost(result.solution) / len(y) == pytest.approx(result.objective, abs=1e-12)


def _with_eager_splits(check):
    def checked(seed):
        with pytest.MonkeyPatch.context() as patch:
            split_at_every_slice(patch)
            check(_CLIENT["client"], seed)
    return checked


_CLIENT = {}


@pytest.fixture(autouse=True)
def _remember_client(client):
    _CLIENT["client"] = client


# certified objective = brute force, with frontiers given away at every slice
test_cluster_search_matches_brute_force, test_cluster_search_matches_brute_force_many = default_and_slow(
    _with_eager_splits(check_against_brute_force), default=20, slow=330)


@pytest.mark.parametrize("seed, lam", [(0, 0.005), (1, 0.01), (2, 0.005)])
def test_larger_problems_split_among_workers_certify_the_serial_objective(client, seed, lam, monkeypatch):
    monkeypatch.setattr(cluster, "MIN_SPLIT_SECONDS", 0.0)
    captures, y = larger_problem(seed)
    problem = Problem.from_captures(captures, y, lam)
    serial = search(problem, n_jobs=1)
    result = cluster.cluster_search(problem, client)
    assert result.certificate.status == OPTIMAL
    assert result.objective == pytest.approx(serial.objective, abs=1e-12)
    assert problem.cost(result.solution) == pytest.approx(problem.cost(serial.solution))


def test_lists_found_early_are_shared_and_frontiers_given_away(client, monkeypatch):
    monkeypatch.setattr(cluster, "MIN_SPLIT_SECONDS", 0.0)
    captures, y = larger_problem(5)
    problem = Problem.from_captures(captures, y, 0.005)
    serial = search(problem, n_jobs=1)
    result = cluster.cluster_search(problem, client, warm_start=False)
    counters = result.certificate.counters
    assert counters["subtrees_given_away"] > 0 and counters["subtrees"] > 1
    assert result.objective == pytest.approx(serial.objective, abs=1e-12)


def test_weighted_samples_and_a_rule_budget(client, monkeypatch):
    monkeypatch.setattr(cluster, "MIN_SPLIT_SECONDS", 0.0)
    captures, y = larger_problem(6, m=30, n=400)
    weights = np.random.default_rng(6).uniform(0.5, 2.0, len(y))
    problem = Problem.from_captures(captures, y, 0.01, sample_weight=weights)
    for max_length in (None, 2):
        serial = search(problem, n_jobs=1, max_length=max_length)
        result = cluster.cluster_search(problem, client, max_length=max_length)
        assert result.certificate.status == OPTIMAL
        assert result.objective == pytest.approx(serial.objective, rel=1e-12)
        assert max_length is None or len(result.solution) <= max_length


def test_a_subtree_costs_what_its_lists_cost_less_its_prefix(client):
    rng = np.random.default_rng(3)
    captures, y = larger_problem(7, m=10, n=300)
    problem = Problem.from_captures(captures, y, 0.02)
    for _ in range(30):
        prefix = tuple(int(a) for a in rng.permutation(10)[:int(rng.integers(0, 4))])
        rest = tuple(int(a) for a in rng.permutation([a for a in range(10) if a not in prefix])[:3])
        subtree = cluster.subtree_problem(problem, prefix)
        if subtree.problem is None:  # no longer list can beat the prefix alone
            assert problem.cost(prefix + rest) >= problem.cost(prefix) - 1e-9
            continue
        assert subtree.problem.cost(rest) + subtree.offset == pytest.approx(problem.cost(prefix + rest))


def test_a_time_limit_ends_it_with_a_valid_gap(client):
    captures, y = larger_problem(8, m=60, n=2000, noise=0.3)
    problem = Problem.from_captures(captures, y, 0.001)
    serial = search(problem, n_jobs=1, time_limit=2)
    started = time.perf_counter()
    result = cluster.cluster_search(problem, client, time_limit=1.0)
    took = time.perf_counter() - started
    certificate = result.certificate
    assert certificate.status == TIME_BUDGET
    assert certificate.lower_bound <= certificate.objective
    assert certificate.lower_bound <= serial.objective + 1e-12  # (the serial list bounds the optimum from above)
    assert took < 1.0 + cluster.WIND_DOWN_SECONDS + 10.0  # (a margin: unheard, the search runs for minutes)
    assert problem.cost(result.solution) / len(y) == pytest.approx(result.objective)


def test_a_worker_killed_mid_search_still_ends_with_the_serial_certificate():
    """A worker killed at the first record where it holds a subtree (no clock in the test: on a fast
    machine a fixed delay outlasted the search)."""
    captures, y = larger_problem(9, m=40, n=1500, noise=0.25)  # ~1 s on one core
    problem = Problem.from_captures(captures, y, 0.003)
    serial = search(problem, n_jobs=1)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as local, distributed.Client(local) as connected:
        # (each worker loads the search from numba's cache before the clock)
        connected.run(search, problem, max_nodes=1, n_jobs=1)
        pids = connected.run(os.getpid)
        killed = []

        def kill_a_busy_worker(trace, event):
            if not killed:
                busy = [worker for worker, tasks in connected.processing().items() if tasks]
                if busy:
                    killed.append(busy[0])
                    os.kill(pids[busy[0]], signal.SIGKILL)

        result = cluster.cluster_search(problem, connected, progress=kill_a_busy_worker)
    assert killed, "the search ended before a worker could be killed: make the problem harder"
    assert result.certificate.status == OPTIMAL
    assert result.objective == pytest.approx(serial.objective, abs=1e-12)


def test_what_the_cluster_search_does_not_do_is_refused():
    cluster.check_cluster_options()
    for options in ({"policy": "curiosity"}, {"map_type": "prefix"}, {"ablation": Ablation(lookahead=False)},
                    {"max_nodes": 10}, {"required": [[1]]}):
        with pytest.raises(ValueError, match="Dask cluster"):
            cluster.check_cluster_options(**options)


def test_an_estimator_fits_on_the_cluster_in_an_on_cluster_block(client):
    from optrules import RuleListClassifier
    from optrules.data.datasets import load_dataset

    compas = load_dataset("compas")
    X, y = compas.X, compas.y
    here = RuleListClassifier(regularization=0.02, max_card=1).fit(X, y)
    with cluster.on_cluster(client):
        assert cluster.current_client() is client
        there = RuleListClassifier(regularization=0.02, max_card=1).fit(X, y)
        with pytest.raises(ValueError, match="Dask cluster"):
            RuleListClassifier(regularization=0.02, max_card=1, policy="bfs").fit(X, y)
    assert cluster.current_client() is None
    assert there.certificate_.status == OPTIMAL
    assert there.certificate_.objective == pytest.approx(here.certificate_.objective, abs=1e-12)
    assert there.certificate_.counters["threads"] == 2 and there.certificate_.counters["workers"] >= 1


def test_the_command_line_searches_on_a_scheduler(client, capsys, monkeypatch):
    from optrules.cli import main

    monkeypatch.setattr(cluster, "SCHEDULER_TIMEOUT", 1)
    assert main(["fit", "--dataset", "compas", "-r", "0.02", "--max-card", "1",
                 "--scheduler", client.scheduler.address]) == 0
    assert "certified optimal" in capsys.readouterr().out
    with pytest.raises(SystemExit, match="only for --model rulelist"):
        main(["fit", "--dataset", "compas", "--model", "frl", "--scheduler", client.scheduler.address])
    with pytest.raises(SystemExit, match="--scheduler: (cannot reach|no Dask scheduler answered)"):
        main(["fit", "--dataset", "compas", "--scheduler", "tcp://127.0.0.1:1"])


@pytest.fixture
def not_a_scheduler():
    """Two services on loopback that are not Dask: one answers as a web server does, one never answers."""
    import socket
    import threading

    listeners, accepted = [], []

    def serve(listener, answer):
        while True:
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            accepted.append(connection)
            if answer:
                with contextlib.suppress(OSError):
                    connection.recv(65536)
                    connection.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n" * 20)

    addresses = {}
    for name, answer in (("web server", True), ("silent", False)):
        listener = socket.create_server(("127.0.0.1", 0))
        listeners.append(listener)
        threading.Thread(target=serve, args=(listener, answer), daemon=True).start()
        addresses[name] = f"tcp://127.0.0.1:{listener.getsockname()[1]}"
    yield addresses
    for socket_ in listeners + accepted:
        socket_.close()


@pytest.mark.parametrize("case", ["web server", "silent", "no port", "a web address", "port out of range"])
def test_a_bad_scheduler_is_one_clear_line_within_its_timeout(case, not_a_scheduler, monkeypatch):
    """--scheduler pointed at a service that is not Dask (a web server's reply read as Dask frames asked for
    3 EiB), at one that never answers (a 20 s hang), or at a malformed address: one line, no traceback, within
    the scheduler's timeout (a generous margin: the hang was 20-60 s)."""
    import time

    from optrules.cli import main

    monkeypatch.setattr(cluster, "SCHEDULER_TIMEOUT", 1)
    address = {"no port": "127.0.0.1", "a web address": "http://127.0.0.1:8080",
               "port out of range": "tcp://127.0.0.1:99999"}.get(case) or not_a_scheduler[case]
    started = time.monotonic()
    with pytest.raises(SystemExit) as stopped:
        main(["fit", "--dataset", "compas", "-r", "0.02", "--max-card", "1", "--scheduler", address])
    message = str(stopped.value)
    assert message.startswith("error: --scheduler: ") and "\n" not in message, message
    assert ("not a scheduler's address" in message) == (case in ("no port", "a web address", "port out of range"))
    assert time.monotonic() - started < 10


def test_a_search_certified_in_its_local_stage_never_waits_for_the_workers(client, monkeypatch):
    monkeypatch.setattr(cluster, "LOCAL_SECONDS", 60.0)
    captures, y = larger_problem(4, m=30, n=600)
    problem = Problem.from_captures(captures, y, 0.01)
    serial = search(problem, n_jobs=1)
    result = cluster.cluster_search(problem, client)
    counters = result.certificate.counters
    assert result.certificate.status == OPTIMAL and counters["subtrees"] == 0 and counters["workers"] == 0
    assert result.solution == serial.solution and result.objective == pytest.approx(serial.objective, abs=1e-12)
    assert counters["local_expanded"] == counters["nodes_expanded"] > 0


def test_ctrl_c_in_the_local_stage_leaves_the_whole_search_open(client, monkeypatch):
    def interrupted(self):
        raise KeyboardInterrupt

    monkeypatch.setattr(cluster, "LOCAL_SECONDS", 60.0)
    monkeypatch.setattr(cluster.SubtreeSearch, "solve", interrupted)
    captures, y = larger_problem(4, m=30, n=600)
    problem = Problem.from_captures(captures, y, 0.01)
    serial = search(problem, n_jobs=1)
    result = cluster.cluster_search(problem, client)
    certificate = result.certificate
    assert certificate.status == INTERRUPTED and certificate.counters["subtrees"] == 0
    assert certificate.lower_bound <= serial.objective + 1e-12 and serial.objective <= result.objective + 1e-12
    assert certificate.lower_bound < result.objective  # the gap the unsearched root leaves


def test_a_search_the_local_stage_leaves_open_goes_on_on_the_workers(client, monkeypatch):
    monkeypatch.setattr(cluster, "LOCAL_SECONDS", 0.05)
    monkeypatch.setattr(cluster, "MIN_SPLIT_SECONDS", 0.0)
    captures, y = larger_problem(9, m=60, n=2000)  # ~0.7 s on one core: well beyond the local stage
    problem = Problem.from_captures(captures, y, 0.003)
    serial = search(problem, n_jobs=1)
    result = cluster.cluster_search(problem, client)
    counters = result.certificate.counters
    assert result.certificate.status == OPTIMAL
    assert result.objective == pytest.approx(serial.objective, abs=1e-12)
    assert counters["local_expanded"] > 0 and counters["subtrees"] > 1 and counters["workers"] >= 1


def test_idle_workers_each_ask_a_subtree_to_split_in_one_poll():
    """Three worker threads idle, nothing queued: the three subtrees that have run longest are asked at
    once, a request open for each idle thread; none more until one answers."""
    captures, y, lam = random_problem(0)
    coordinator = cluster.ClusterSearch(Problem.from_captures(captures, y, lam), None,
                                        settings=cluster.ClusterSettings(warm_start=False), budget=cluster.Budget())
    coordinator.threads, coordinator.requests = 8, itertools.count(1)
    now = time.perf_counter()
    ages = [5.0, 4.0, 3.0, 2.0, 0.0]
    coordinator.running = {object(): (0.0, (i,), now - age, f"t{i}") for i, age in enumerate(ages)}
    assert coordinator._ask_for_a_split()
    assert set(coordinator.split) == {"t0", "t1", "t2"}
    assert coordinator.counters["split_requests"] == 3
    assert not coordinator._ask_for_a_split()  # (three requests open for three idle threads)
    del coordinator.split["t0"]  # answered with nothing to give: asked again, oldest first
    assert coordinator._ask_for_a_split() and set(coordinator.split) == {"t0", "t1", "t2"}
    coordinator.pending = [(0.0, 0, (9,))]  # a subtree queued: no request
    del coordinator.split["t1"]
    assert not coordinator._ask_for_a_split()
