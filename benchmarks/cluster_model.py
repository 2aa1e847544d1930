"""How far the cluster's certified rule-list search scales: its subtrees searched for real, on W virtual workers.

The cluster (``optrules.corels.cluster``) cuts the search into subtrees, each a search of its own with
its own symmetry map, that workers search against a shared incumbent and split when another worker runs
dry. What it costs at W workers depends on how the subtrees fall, which only searching them shows; so
this model runs the cluster's own pieces (``subtree_problem``, ``SubtreeSearch`` with its splits, the
coordinator's rules: least bound first; idle workers and nothing queued, the subtrees that have run
longest, at least ``MIN_SPLIT_SECONDS``, asked to split, one a poll for each idle worker) in one
process, one virtual worker at a time, each on a clock of its own. A worker's turn ends where a real
worker reads its budget (between its kernel's slices, which keep the length they would have alone), and
the time the turn took joins its clock: one thread runs at a time, so no worker slows another. A
discrete-event loop always runs the worker whose clock is least; a list found at time t reaches the
others at t + ``POLL_SECONDS`` (as the coordinator's channel polls), a subtree handed out or given away
starts ``DISPATCH_SECONDS`` after it is free, a split request is heard at the asked worker's first budget
read after the request's time. The coordinator's first stage (``LOCAL_SECONDS`` on its own) runs first,
as in the cluster (``--local-seconds 0``: the workers start from the root at once).

Two experiments, not in the cluster: ``--one-split-a-poll`` (the coordinator's rule before fcfb89d) and
``--shared-sets prefix|captured`` (:class:`SharedSets`: one symmetry map for every subtree, keyed on the
antecedent set, Cor 16, or on the samples captured, Thm 15, its upkeep off the clock): what removing the
permutations searched again in other subtrees would gain.

Reported per problem and W: the virtual wall time (the last worker's clock when nothing is left), the
speedup over the serial search (run here first) and the efficiency (speedup over W), the prefixes
expanded over every worker and their ratio to the serial search's (the permutations searched again in
other subtrees), the subtrees searched (given away by splits), the prefixes the shared map killed, the
workers' idle share. What the model leaves out, it gains: Dask's messages, the coordinator's and
scheduler's processes beside the workers on the same cores (at W = 2 it is set beside the measured
LocalCluster, ``benchmarks/cluster.py``), memory bandwidth, a worker's trace points (at most 5% of its
time).

Run by hand: ``python benchmarks/cluster_model.py [--workers 1 2 4 ...] [--only NAME ...]
[--local-seconds S] [--shared-sets captured] [--one-split-a-poll]``; writes
``benchmarks/results/cluster_model.json``, its history file and its block of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import heapq
import itertools
import json
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "cluster_model.json"
sys.path.insert(0, str(HERE))

from benchmarks_md import publish  # noqa: E402

WORKERS = (1, 2, 4, 8, 16, 32, 64)
#: (corels_suite problem, lambda): cluster.py's hard problems
CASES = [("compas_train (paper)", 0.005), ("monks-3", 0.005), ("house_votes", 0.01)]
#: the measured 2-worker LocalCluster (BENCHMARKS.md, "Rule lists on a Dask cluster"): speedup, expansions ratio
MEASURED_TWO = {"compas_train (paper) | 0.005": (0.69, 1.97), "monks-3 | 0.005": (0.67, 2.51),
                "house_votes | 0.01": (1.14, 1.64)}
#: a subtree handed out starts this long after it is free (Dask's submit and the task's start)
DISPATCH_SECONDS = 0.005


class VirtualWorker:
    """One worker thread of the model: its clock, and the baton that lets exactly one thread run."""

    def __init__(self, number: int, baton: threading.Semaphore):
        self.number, self.baton = number, baton
        self.go = threading.Semaphore(0)
        self.clock = 0.0
        self.kernel_seconds = 0.0  # of the clock, the time in the kernel's slices
        self.task = None  # the running task: dict(prefix, bound, started, shared, outcome, thread)
        self.resumed = 0.0

    def pause(self, off_clock=None) -> None:
        """The end of a turn: the time it took joins the clock (``off_clock()`` runs after, not counted);
        wait for the next."""
        self.clock += time.perf_counter() - self.resumed
        if off_clock is not None:
            off_clock()
        self.baton.release()
        self.go.acquire()
        self.resumed = time.perf_counter()

    def turn(self) -> None:
        """(the loop's side) let this worker run until it pauses or its task ends."""
        self.go.release()
        self.baton.acquire()


class VirtualChannel:
    """A task's view of the coordinator (as cluster._SharedIncumbent): the incumbent with the channel's
    latency, split requests heard when the worker's clock passes them, lists and gifts timed by its clock."""

    stop = False

    def __init__(self, model: "ClusterModel", worker: VirtualWorker):
        self.model, self.worker = model, worker
        self.split = False
        self.asked_at = None  # the time of a split request not yet answered

    @property
    def bound(self) -> float:
        return self.model.best_at(self.worker.clock)

    def read(self) -> float:
        if self.asked_at is not None and self.worker.clock >= self.asked_at:
            self.split = True
        return self.model.best_at(self.worker.clock)

    def offer(self, prefix, cost: float) -> None:
        self.model.offer(prefix, cost, self.worker.clock)

    def give(self, subtrees: list) -> None:
        self.split, self.asked_at = False, None
        for bound, prefix in subtrees:
            self.model.queue(bound, prefix, self.worker.clock + self.model.poll)
        self.model.given += len(subtrees)


class ClusterModel:
    """The cluster's search of ``problem`` on ``n_workers`` virtual workers (module docstring)."""

    def __init__(self, problem, n_workers: int, poll: float, local_seconds: float, shared_sets: str | None = None,
                 split_all: bool = True):
        from optrules.corels.cluster import MIN_SPLIT_SECONDS, _initial_incumbent

        self.problem, self.poll, self.local_seconds = problem, poll, local_seconds
        self.min_split = MIN_SPLIT_SECONDS
        self.baton = threading.Semaphore(0)
        self.workers = [VirtualWorker(i, self.baton) for i in range(n_workers)]
        self.best = _initial_incumbent(problem, True, None, _no_budget(), None)
        self.incumbents = [(-np.inf, problem.cost(self.best))]  # (time, cost): offers in the order made
        self.pending: list = []
        self.order = itertools.count()
        self.expanded = self.subtrees = self.given = 0
        self.busy = 0.0
        self.last_request = -np.inf
        self.split_all = split_all
        self.shared_sets = (None if not shared_sets else
                            SharedSets(problem.bits if shared_sets == "captured" else None))

    # -- the coordinator's state --------------------------------------------------------------------
    def best_at(self, clock: float) -> float:
        """The incumbent a worker at ``clock`` has heard of: offered at least a poll before."""
        return min(cost for when, cost in self.incumbents if when <= clock - self.poll or when == -np.inf)

    def offer(self, prefix, cost: float, clock: float) -> None:
        cost = self.problem.cost(tuple(prefix))
        if cost < self.best_cost:
            self.incumbents.append((clock, cost))
            self.best = tuple(prefix)

    @property
    def best_cost(self) -> float:
        return min(cost for _, cost in self.incumbents)

    def queue(self, bound: float, prefix, available: float) -> None:
        heapq.heappush(self.pending, (bound, next(self.order), tuple(prefix), available))

    # -- the loop -----------------------------------------------------------------------------------
    def run(self) -> dict:
        started = self._first_stage()
        for worker in self.workers:
            worker.clock = started
        while self.pending or any(w.task for w in self.workers):
            self._hand_out()
            self._ask_for_a_split()
            running = [w for w in self.workers if w.task]
            if not running:
                continue
            worker = min(running, key=lambda w: w.clock)
            worker.turn()
            if worker.task["done"]:
                self._collect(worker)
        end = max(w.clock for w in self.workers)
        return {"seconds": end, "expanded": self.expanded, "subtrees": self.subtrees, "given_away": self.given,
                "idle": 1.0 - self.busy / max(len(self.workers) * (end - started), 1e-12),
                "first_stage": started, "objective": self.best_cost / self.problem.total_weight,
                "killed": self.shared_sets.killed if self.shared_sets else 0,
                "kernel_seconds": sum(w.kernel_seconds for w in self.workers), "busy_seconds": self.busy}

    def _first_stage(self) -> float:
        """The coordinator's search of the whole problem for up to local_seconds (as ClusterSearch's)."""
        from optrules.corels.cluster import SubtreeSearch, _LocalIncumbent, subtree_problem

        root_b0 = self.problem.root_b0()
        if self.local_seconds <= 0:
            self.queue(root_b0, (), 0.0)
            return 0.0
        started = time.perf_counter()
        coordinator = _Coordinator(self)
        from optrules.budget import Budget

        outcome = SubtreeSearch(subtree_problem(self.problem, ()), _LocalIncumbent(coordinator),
                                Budget(self.local_seconds), None).run()
        took = time.perf_counter() - started
        self.expanded += outcome.expanded
        if outcome.best is not None:
            self.offer(outcome.best, outcome.cost, -np.inf)
        if not outcome.finished:
            self.queue(root_b0, (), took)
        return took

    def _hand_out(self) -> None:
        for worker in sorted((w for w in self.workers if not w.task), key=lambda w: w.clock):
            while self.pending:
                bound, _, prefix, available = heapq.heappop(self.pending)
                if bound >= self.best_cost - 1e-12 * self.problem.total_weight:
                    continue
                worker.clock = max(worker.clock, available) + DISPATCH_SECONDS
                self._start(worker, prefix, bound)
                break

    def _start(self, worker: VirtualWorker, prefix, bound: float) -> None:
        channel = VirtualChannel(self, worker)
        task = {"prefix": prefix, "bound": bound, "started": worker.clock, "channel": channel, "done": False}
        worker.task = task
        self.subtrees += 1

        def body() -> None:
            worker.go.acquire()
            worker.resumed = time.perf_counter()
            task["began"] = worker.clock
            try:
                task["outcome"] = _search(self.problem, prefix, channel, worker, self.shared_sets)
            finally:
                worker.clock += time.perf_counter() - worker.resumed
                task["done"] = True
                self.baton.release()

        task["thread"] = threading.Thread(target=body, daemon=True)
        task["thread"].start()

    def _collect(self, worker: VirtualWorker) -> None:
        task = worker.task
        task["thread"].join()
        worker.task = None
        outcome = task["outcome"]
        self.busy += worker.clock - task["began"]
        self.expanded += outcome.expanded
        if outcome.best is not None:
            self.offer(outcome.best, outcome.cost, worker.clock)
        for bound, prefix in outcome.open:
            self.queue(bound, prefix, worker.clock)

    def _ask_for_a_split(self) -> None:
        """Idle workers and nothing free: as the coordinator does, requests for as many subtrees as workers
        are idle, less those open, once a poll (``split_all`` False: one a poll), to the oldest running
        subtrees not asked yet, each heard once it has run min_split."""
        idle = [w for w in self.workers if not w.task]
        if not idle or self.pending:
            return
        running = [w.task for w in self.workers if w.task]
        wanted = len(idle) - sum(t["channel"].asked_at is not None for t in running)
        candidates = sorted((t for t in running if t["channel"].asked_at is None), key=lambda t: t["started"])
        if wanted <= 0 or not candidates:
            return
        when = max(min(w.clock for w in idle), self.last_request + self.poll)
        for task in candidates[:wanted if self.split_all else 1]:
            task["channel"].asked_at = max(when, task["started"] + self.min_split)
        self.last_request = when


class _Coordinator:
    """What cluster._LocalIncumbent reads of the coordinator, for the first stage."""

    def __init__(self, model: ClusterModel):
        self.model = model

    @property
    def best_cost(self) -> float:
        return self.model.best_cost

    def _offer(self, prefix) -> bool:
        self.model.offer(prefix, 0.0, -np.inf)
        return True


def _no_budget():
    from optrules.budget import Budget

    return Budget()


class SharedSets:
    """What a symmetry map shared by every subtree would prune (an experiment: not in the cluster).

    After each of a task's slices (off the clock), every prefix it queued since is looked up by its
    whole antecedent set (the subtree's prefix and its own) among the prefixes every task has queued:
    of the prefixes of one set, all but the least (rule mistakes, then the prefix itself: one strict
    order every task sees alike) are marked dead where they are, as one search's map does (Cor 16). Each
    killed prefix's lists are matched, rule for rule after it, by lists of the least one at least as
    good, and the least one is searched where it lies or pruned by a bound. Two-class counts only
    (mistakes exact), the prefixes' nodes held by (task, epoch: a compaction renumbers them)."""

    def __init__(self, bits=None):
        self.entries: dict = {}  # key -> ((bound, prefix), search, epoch, node)
        self.killed = 0
        self.bits = bits  # the problem's captures: keyed on the samples captured (Thm 15), else the set

    def scan(self, search) -> None:
        from optrules.bnb import N_NODES
        from optrules.corels.cluster import _prefix_of

        if not hasattr(search, "state"):  # (a turn ended before its kernel was loaded)
            return
        state, subtree = search.state, search.subtree
        n_nodes = int(state.ints[N_NODES])
        if n_nodes < search.scanned:  # compacted: nodes renumbered
            search.epoch, search.scanned = search.epoch + 1, 0
        nodes = np.arange(search.scanned, n_nodes)
        search.scanned = n_nodes
        nodes = nodes[~state.node_dead[nodes]]
        if not len(nodes):
            return
        prefix_mistakes = int(round(subtree.offset - search.lambda_n * len(subtree.prefix)))
        for node in nodes.tolist():
            local = _prefix_of(state, node)
            whole = subtree.prefix + local
            mistakes = prefix_mistakes + int(state.node_mistakes[node])
            mine = (mistakes + search.lambda_n * len(whole), whole)
            if self.bits is None:
                key = tuple(sorted(whole))
            else:
                key = np.bitwise_or.reduce(self.bits[list(whole)], axis=0).tobytes() if whole else b""
            entry = self.entries.get(key)
            if entry is None or mine < entry[0]:
                if entry is not None:
                    self._kill(*entry[1:])
                self.entries[key] = (mine, search, search.epoch, node)
            elif mine > entry[0]:
                state.node_dead[node] = True
                self.killed += 1

    def _kill(self, search, epoch: int, node: int) -> None:
        if search.running and search.epoch == epoch and not search.state.node_dead[node]:
            search.state.node_dead[node] = True
            self.killed += 1


def _search(problem, prefix, channel: VirtualChannel, worker: VirtualWorker, shared_sets: SharedSets | None):
    """cluster.search_subtree on a virtual worker: its turn ends at each of its budget's reads."""
    from optrules.budget import Budget
    from optrules.corels.cluster import SubtreeSearch, searched_subtree

    searches = []  # (the search, once made: the shared map scans it)

    class VirtualSubtreeSearch(SubtreeSearch):
        """Its turn ends where the real one reads its budget (between kernel slices, out of the slices'
        timing, so that they keep the length they would have alone); no trace points but the last (a
        real worker's take at most 5% of its time, by wall time, which here runs for every worker)."""

        scanned = epoch = 0
        running = True

        def __init__(self, *args):
            super().__init__(*args)
            self.trace_interval = np.inf
            searches.append(self)

        def _slice(self, max_pops: int) -> int:
            started = time.perf_counter()
            code = super()._slice(max_pops)
            worker.kernel_seconds += time.perf_counter() - started
            return code

        def _certify(self):
            self.running = False
            return super()._certify()

    def end_turn():
        worker.pause(None if shared_sets is None or not searches else lambda: shared_sets.scan(searches[0]))

    return searched_subtree(problem, prefix, channel, Budget(None, None, end_turn), None, VirtualSubtreeSearch)


def measure(name: str, regularization: float, workers, poll: float, local_seconds: float, shared_sets: str | None,
            split_all: bool, folder: Path) -> dict:
    from corels_suite import write_problem

    from optrules.corels.problem import Problem
    from optrules.corels.search import search
    from optrules.data.formats import read_reference

    files = write_problem(name, folder, regularization)
    problem = Problem.from_reference(read_reference(*files[:3]), regularization)
    search(problem, max_nodes=1)  # kernels loaded before any clock
    serial = search(problem, n_jobs=1).certificate
    rows = {"serial": {"seconds": serial.counters["total_time"], "expanded": serial.counters["nodes_expanded"],
                       "objective": serial.objective}}
    for n in workers:
        rows[str(n)] = ClusterModel(problem, n, poll, local_seconds, shared_sets, split_all).run()
        print(name, regularization, n, json.dumps(rows[str(n)]), flush=True)
    return {"problem": name, "lambda": regularization, "antecedents": files[3], "rows": rows,
            "shared_sets": shared_sets, "first_stage": local_seconds, "split_all": split_all}


def _variant(row: dict) -> str:
    from optrules.corels.cluster import LOCAL_SECONDS

    parts = [f"shared map ({row['shared_sets']})"] if row.get("shared_sets") else []
    if row.get("first_stage", LOCAL_SECONDS) != LOCAL_SECONDS:
        parts.append(f"first stage {row['first_stage']:g} s")
    if not row.get("split_all", True):
        parts.append("one split a poll")
    return ", ".join(parts) or "the cluster"


def render(results: dict) -> str:
    """One table, the rows of each problem together under its serial search (the median of its runs: one
    a variant measured)."""
    lines = ["| problem | lambda | variant | W | seconds (virtual) | speedup | efficiency | "
             "expanded (x serial) | subtrees (given away) | killed by the shared map | idle | same objective |",
             "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    notes = []
    problems: dict = {}
    for key, row in results.items():
        problems.setdefault((row["problem"], row["lambda"]), []).append((key, row))
    for (problem, regularization), entries in problems.items():
        serials = [row["rows"]["serial"] for _, row in entries]
        seconds, expanded = statistics.median(r["seconds"] for r in serials), serials[0]["expanded"]
        lines.append(f"| {problem} | {regularization} | serial search ({len(serials)} runs) | 1 | {seconds:.2f} | | | "
                     f"{expanded:,} | | | | |")
        for key, row in entries:
            for n, r in ((k, v) for k, v in row["rows"].items() if k != "serial"):
                speedup = seconds / r["seconds"]
                lines.append(f"| {problem} | {regularization} | {_variant(row)} | {n} | {r['seconds']:.2f} | "
                             f"{speedup:.2f}x | {speedup / int(n):.2f} | "
                             f"{r['expanded']:,} ({r['expanded'] / max(expanded, 1):.2f}x) | "
                             f"{r['subtrees']} ({r['given_away']}) | {r.get('killed', 0):,} | {r['idle']:.0%} | "
                             f"{'yes' if abs(r['objective'] - serials[0]['objective']) <= 1e-9 else 'NO'} |")
            if key in MEASURED_TWO and "2" in row["rows"]:
                speed, ratio = MEASURED_TWO[key]
                two = row["rows"]["2"]
                notes.append(f"{problem} {regularization}: W = 2 models {seconds / two['seconds']:.2f}x with "
                             f"{two['expanded'] / max(expanded, 1):.2f}x the prefixes; the LocalCluster measured "
                             f"{speed:.2f}x with {ratio:.2f}x")
    return "\n".join(lines + [""] + [f"- {n}" for n in notes])


def main() -> None:
    from optrules.corels.cluster import LOCAL_SECONDS, POLL_SECONDS

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, nargs="+", default=list(WORKERS))
    parser.add_argument("--only", nargs="+", help="problems of corels_suite.py (with their lambda here)")
    parser.add_argument("--poll", type=float, default=POLL_SECONDS, help="the channel's latency (seconds)")
    parser.add_argument("--local-seconds", type=float, default=LOCAL_SECONDS, help="the coordinator's first stage")
    parser.add_argument("--shared-sets", choices=["prefix", "captured"],
                        help="the experiment: one symmetry map for all, keyed on the antecedent set or the captures")
    parser.add_argument("--one-split-a-poll", action="store_true",
                        help="the coordinator's rule before fcfb89d: one split request a poll")
    args = parser.parse_args()
    cases = [c for c in CASES if not args.only or c[0] in args.only]
    results = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    command = "python benchmarks/cluster_model.py " + " ".join(sys.argv[1:])
    with tempfile.TemporaryDirectory() as folder:
        for case in cases:
            key = (f"{case[0]} | {case[1]}" + (f" | shared {args.shared_sets}" if args.shared_sets else "")
                   + (f" | first stage {args.local_seconds:g} s" if args.local_seconds != LOCAL_SECONDS else "")
                   + (" | one split a poll" if args.one_split_a_poll else ""))
            results[key] = measure(*case, args.workers, args.poll, args.local_seconds,
                                                        args.shared_sets, not args.one_split_a_poll, Path(folder))
            publish(RESULTS, results, "cluster_model", command, render(results),
                    "Rule lists on a cluster: a model")


if __name__ == "__main__":
    main()
