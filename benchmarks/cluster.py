"""One certified rule-list search on a 2-worker Dask ``LocalCluster`` against the serial search.

The problems are ``parallel.py``'s (``corels_suite.py``'s antecedents, written by its ``write_problem``).
Each problem is searched in fresh processes alternating the serial search (``n_jobs=1``) and
:func:`optrules.corels.cluster.cluster_search` on a ``LocalCluster`` of two worker processes of one
thread each, started in that process (``--repeat`` of each). Before the clock starts, the serial
process searches with a node budget of one and each cluster worker does the same, which loads (or
compiles, once) the kernels; the cluster's start (processes, scheduler) is not timed. Reported per
problem: status and objective, the median seconds of each (the searches' own ``total_time``), the
speedup (median over median; the least and most of the pairs' ratios) and the efficiency (speedup over
the 2 workers), the prefixes expanded (the cluster's over every worker, and its ratio to the serial
search's), the subtrees searched (and given away by a split), the workers' idle share, the incumbent's
latency (a worker's better list to the coordinator's publishing it) and each worker's share of the
expansions; whether the objective and the list are the serial search's (the list may differ among
lists of equal objective).

Run by hand: ``python benchmarks/cluster.py [--repeat N] [--time-limit S] [--only NAME ...]``; writes
``benchmarks/results/cluster.json``, its history file and its block of ``BENCHMARKS.md``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

from benchmarks_md import publish
from parallel import run

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "cluster.json"
sys.path.insert(0, str(HERE))

#: (corels_suite problem, lambda): hard ones (10-300 s on one core) and small ones (under a second)
CASES = [("compas_train (paper)", 0.005), ("monks-3", 0.005), ("compas_train (paper)", 0.01), ("monks-3", 0.01),
         ("house_votes", 0.01)]

CODE = """
import json, sys, time
from optrules.corels.problem import Problem
from optrules.corels.search import search
from optrules.data.formats import read_reference
out, label, minor, regularization, mode, time_limit = sys.argv[1:7]  # (parallel.run's order)
problem = Problem.from_reference(read_reference(out, label, minor), float(regularization))


def load_kernels(problem):
    search(problem, max_nodes=1)
    return True


if mode == "cluster":
    from distributed import Client, LocalCluster
    from optrules.corels.cluster import cluster_search

    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0")
    client = Client(cluster)
    client.run(load_kernels, problem)  # the kernels loaded on each worker before the clock starts
    load_kernels(problem)  # and here, where the first stage runs
    result = cluster_search(problem, client, time_limit=float(time_limit), max_memory=2 << 30)
else:
    load_kernels(problem)
    result = search(problem, n_jobs=1, time_limit=float(time_limit), max_memory=2 << 30)
c = result.certificate
print(json.dumps({"status": c.status, "objective": c.objective, "lower_bound": c.lower_bound,
                  "prefix": list(result.solution), "by_worker": result.details.get("by_worker", {}),
                  **{k: v for k, v in c.counters.items() if isinstance(v, (int, float))}}))
"""


def measure(name: str, regularization: float, repeat: int, time_limit: float, folder: Path) -> dict:
    from corels_suite import write_problem

    files = write_problem(name, folder, regularization)
    runs = {"serial": [], "cluster": []}
    for _ in range(repeat):
        for mode in runs:
            runs[mode].append(run([*files[:3], regularization], mode, time_limit, CODE))
            print(name, regularization, mode, json.dumps(runs[mode][-1])[:300], flush=True)
    return {"problem": name, "lambda": regularization, "antecedents": files[3], "runs": runs}


def summary(row: dict) -> dict:
    serial, cluster = row["runs"]["serial"], row["runs"]["cluster"]
    if any(r.get("status") == "crashed" for r in serial + cluster):
        return {"status": "crashed"}
    t1 = statistics.median(r["total_time"] for r in serial)
    t2 = statistics.median(r["total_time"] for r in cluster)
    ratios = [a["total_time"] / max(b["total_time"], 1e-9) for a, b in zip(serial, cluster)]
    expanded = statistics.median(r["nodes_expanded"] for r in serial)
    expanded_cluster = statistics.median(r["nodes_expanded"] for r in cluster)
    shares = []
    for r in cluster:
        counts = sorted((v[0] for v in r["by_worker"].values()), reverse=True)
        if counts:  # (none when the first stage certified alone)
            shares.append(counts[0] / max(sum(counts), 1))
    reference = serial[0]
    return {"status": reference["status"], "cluster_status": cluster[0]["status"], "objective": reference["objective"],
            "gap": reference["objective"] - reference["lower_bound"],
            "cluster_gap": max(r["objective"] - r["lower_bound"] for r in cluster),
            "t1": t1, "t2": t2, "speedup": t1 / t2, "least": min(ratios), "most": max(ratios),
            "expanded": expanded, "expanded_cluster": expanded_cluster,
            "subtrees": statistics.median(r["subtrees"] for r in cluster),
            "given_away": statistics.median(r["subtrees_given_away"] for r in cluster),
            "idle": statistics.median(r["idle_share"] for r in cluster),
            "local_seconds": statistics.median(r["local_seconds"] for r in cluster),
            "local_expanded": statistics.median(r["local_expanded"] for r in cluster),
            "latency_mean": statistics.median(r["incumbent_latency_mean"] for r in cluster),
            "latency_max": max(r["incumbent_latency_max"] for r in cluster),
            "top_share": statistics.median(shares) if shares else 0.0,
            "same_objective": all(abs(r["objective"] - reference["objective"]) <= 1e-9 for r in serial + cluster),
            "same_list": all(r["prefix"] == reference["prefix"] for r in serial + cluster)}


def _status(status: str, gap: float) -> str:
    return status if status == "optimal" else f"{status} (gap {gap:.4f})"


def render(results: dict) -> str:
    lines = ["Fresh processes alternating the serial search (one thread) and a 2-worker `LocalCluster` (processes, "
             "one thread each, started and its kernels loaded before the clock); seconds: the search's, median "
             "of the runs. Expanded: prefixes, the cluster's over its first stage and both workers; subtrees: searched (given away "
             "by splits); local: the coordinator's first stage on its own (seconds, prefixes), the workers idle "
             "meanwhile; busiest: the busiest worker's share of the expansions; latency: a worker's better list "
             "to its publishing, mean / max.", "",
             "| problem | lambda | antecedents | serial | cluster | objective | serial s | cluster s | speedup "
             "(least-most) | efficiency | expanded serial | expanded cluster | local | subtrees | idle | busiest | "
             "latency ms | same objective / list |",
             "|---|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for row in results.values():
        s = summary(row)
        if s["status"] == "crashed":
            lines.append(f"| {row['problem']} | {row['lambda']} | {row['antecedents']:,} | crashed |" + " |" * 14)
            continue
        lines.append(
            f"| {row['problem']} | {row['lambda']} | {row['antecedents']:,} | {_status(s['status'], s['gap'])} | "
            f"{_status(s['cluster_status'], s['cluster_gap'])} | {s['objective']:.6f} | {s['t1']:.2f} | "
            f"{s['t2']:.2f} | {s['speedup']:.2f}x ({s['least']:.2f}-{s['most']:.2f}) | {s['speedup'] / 2:.2f} | "
            f"{s['expanded']:,.0f} | {s['expanded_cluster']:,.0f} ({s['expanded_cluster'] / max(s['expanded'], 1):.2f}x) | "
            f"{s['local_seconds']:.2f} s, {s['local_expanded']:,.0f} | "
            f"{s['subtrees']:.0f} ({s['given_away']:.0f}) | {s['idle']:.0%} | {s['top_share']:.0%} | "
            f"{1000 * s['latency_mean']:.0f} / {1000 * s['latency_max']:.0f} | "
            f"{'yes' if s['same_objective'] else 'NO'} / {'yes' if s['same_list'] else 'no'} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2, help="runs of each (default 2)")
    parser.add_argument("--time-limit", type=float, default=300.0, help="seconds per search (default 300)")
    parser.add_argument("--only", nargs="+", help="problems of corels_suite.py (with every lambda listed here)")
    args = parser.parse_args()
    cases = [c for c in CASES if not args.only or c[0] in args.only]
    results = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    command = f"python benchmarks/cluster.py --repeat {args.repeat} --time-limit {args.time_limit:g}"
    with tempfile.TemporaryDirectory() as folder:
        for case in cases:
            results[f"{case[0]} | {case[1]}"] = measure(*case, args.repeat, args.time_limit, Path(folder))
            publish(RESULTS, results, "cluster", command, render(results), "Rule lists on a Dask cluster")


if __name__ == "__main__":
    main()
