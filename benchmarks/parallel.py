"""One certified search on one thread and on two: wall time, speedup, the same search.

Rule lists: the hard problems of ``corels_suite.py`` (the same antecedents, built by its ``write_problem``).
Falling lists: bank marketing as ``frl_bank.py`` builds it (the paper's setting, C = 1e-6, at w = 5 and
7; softly falling lists there do not certify within 40 s). The Rashomon set: bundled COMPAS as
``rashomon.py`` fits it, enumerated within a share of R* (seconds: the enumeration's, the tables counted
on one thread included; "expanded": uncaptured sets expanded; "same search": the same members). Each problem is
searched in fresh processes alternating ``n_jobs=1`` and ``n_jobs=2`` (``--repeat`` of each, the
default settings otherwise: a search takes its threads once it has run ``PARALLEL_AFTER`` = 0.2 s).
Each process first searches the problem with a node budget of one, which loads (or compiles, once) the
kernels, so that the times are the searches'. Reported per problem: status, objective, the median
search seconds of each, the speedup (median over median, and the least and most of the pairs' ratios:
this machine's second core is shared, and a pair run minutes apart can differ by 30%), and the
expansions, which must be the same for both (the search is the same on any number of threads).

Run by hand: ``python benchmarks/parallel.py [--repeat N] [--time-limit S] [--only NAME ...]``; writes
``benchmarks/results/parallel.json``, its history file and its block of ``BENCHMARKS.md``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks_md import publish

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "parallel.json"
sys.path.insert(0, str(HERE))

#: (corels_suite problem, lambda): certified on one core in 10-300 s (corels_suite's table)
HARD = [("compas_train (paper)", 0.005), ("monks-3", 0.005), ("house_votes", 0.01), ("monks-2", 0.01),
        ("car_evaluation (acceptable)", 0.01)]
#: small problems: the search must not be slower on two threads (it stays on one below PARALLEL_AFTER)
SMALL = [("compas_train (paper)", 0.01), ("monks-3", 0.01), ("monks-1", 0.005)]
#: (name, w, soft): falling lists on bank marketing (frl_bank.py's problem); "lambda" in the table is w
FALLING = [("bank marketing, falling", 7.0, False), ("bank marketing, falling", 5.0, False)]
#: (name, lambda, epsilon as a share of R*): Rashomon sets of bundled COMPAS (rashomon.py's cases)
RASHOMON = [("COMPAS Rashomon set, 5% of R*", 0.01, 0.05), ("COMPAS Rashomon set, 1% of R*", 0.005, 0.01)]

CODE = """
import json, sys, time
from optrules.corels.problem import Problem
from optrules.corels.search import search
from optrules.data.formats import read_reference
out, label, minor, regularization, n_jobs, time_limit = sys.argv[1:7]  # (run's order)
problem = Problem.from_reference(read_reference(out, label, minor), float(regularization))
search(problem, max_nodes=1, n_jobs=int(n_jobs))  # the kernels loaded (or compiled) before the clock starts
started = time.perf_counter()
result = search(problem, n_jobs=int(n_jobs), time_limit=float(time_limit), max_memory=2 << 30)
wall = time.perf_counter() - started
c = result.certificate
print(json.dumps({"wall": wall, "status": c.status, "objective": c.objective, "lower_bound": c.lower_bound,
                  "prefix": list(result.solution), **{k: v for k, v in c.counters.items() if isinstance(v, (int, float))}}))
"""


FALLING_CODE = """
import json, sys, time
sys.path.insert(0, %r)
from frl_bank import problem as bank_problem
from optrules.frl.search import certified_search
w, soft, n_jobs, time_limit = float(sys.argv[1]), sys.argv[2] == "True", int(sys.argv[3]), float(sys.argv[4])
problem, _ = bank_problem(w, 1e-6)
certified_search(problem, soft=soft, max_nodes=1, n_jobs=n_jobs)  # the kernels loaded before the clock starts
started = time.perf_counter()
result = certified_search(problem, soft=soft, n_jobs=n_jobs, time_limit=time_limit, max_memory=2 << 30)
wall = time.perf_counter() - started
c = result.certificate
print(json.dumps({"wall": wall, "status": c.status, "objective": c.objective, "lower_bound": c.lower_bound,
                  "prefix": list(result.solution), **{k: v for k, v in c.counters.items() if isinstance(v, (int, float))}}))
""" % str(HERE)


RASHOMON_CODE = """
import json, sys, time
from optrules import RuleListClassifier
from optrules.data.datasets import load_dataset
regularization, share, n_jobs, time_limit = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
data = load_dataset("compas")
fit = RuleListClassifier(regularization=regularization, n_jobs=n_jobs).fit(data.X, data.y)
fit.rashomon_set(share, relative=True, max_nodes=1)  # the kernels loaded before the clock starts
started = time.perf_counter()
rashomon = fit.rashomon_set(share, relative=True, time_limit=time_limit, max_memory=2 << 30)
wall = time.perf_counter() - started
c = rashomon.counters
print(json.dumps({"wall": wall, "status": "optimal" if rashomon.complete else rashomon.status, "objective": rashomon.optimum,
                  "lower_bound": rashomon.optimum, "prefix": [rashomon.size], "total_time": c["time"],
                  "nodes_expanded": c["expansions"], "threads": c["threads"], "nodes": c["nodes"],
                  "antecedents": len(fit.antecedents_)}))
"""


def run(arguments, n_jobs: int, time_limit: float, code: str = CODE) -> dict:
    done = subprocess.run([sys.executable, "-c", code, *map(str, arguments), str(n_jobs), str(time_limit)],
                          capture_output=True, text=True, timeout=time_limit + 900)
    if done.returncode:
        return {"status": "crashed", "error": done.stderr.strip().splitlines()[-1:]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def measure(name: str, regularization: float, repeat: int, time_limit: float, folder: Path) -> dict:
    from corels_suite import write_problem

    files = write_problem(name, folder, regularization)
    runs = alternating(lambda n_jobs: run([*files[:3], regularization], n_jobs, time_limit), repeat, name)
    return {"problem": name, "lambda": regularization, "antecedents": files[3], "runs": runs}


def measure_falling(name: str, w: float, soft: bool, repeat: int, time_limit: float) -> dict:
    sys.path.insert(0, str(HERE))
    from frl_bank import problem

    runs = alternating(lambda n_jobs: run([w, soft], n_jobs, time_limit, FALLING_CODE), repeat, name)
    return {"problem": name, "lambda": w, "antecedents": problem(w, 1e-6)[0].n_antecedents, "runs": runs}


def measure_rashomon(name: str, regularization: float, share: float, repeat: int, time_limit: float) -> dict:
    runs = alternating(lambda n_jobs: run([regularization, share], n_jobs, time_limit, RASHOMON_CODE), repeat, name)
    return {"problem": name, "lambda": regularization, "antecedents": runs[1][0].get("antecedents", 0), "runs": runs}


def alternating(search, repeat: int, name: str) -> dict:
    """``repeat`` runs of ``search(n_jobs)`` for 1 and 2 threads, alternating."""
    runs = {1: [], 2: []}
    for _ in range(repeat):
        for n_jobs in (1, 2):
            runs[n_jobs].append(search(n_jobs))
            print(name, n_jobs, json.dumps(runs[n_jobs][-1])[:300], flush=True)
    return runs


def summary(row: dict) -> dict:
    one, two = row["runs"]["1"], row["runs"]["2"]
    if any(r.get("status") == "crashed" for r in one + two):
        return {"status": "crashed"}
    t1, t2 = statistics.median(r["total_time"] for r in one), statistics.median(r["total_time"] for r in two)
    ratios = [a["total_time"] / max(b["total_time"], 1e-9) for a, b in zip(one, two)]
    same = all((r["prefix"], r["nodes_expanded"]) == (one[0]["prefix"], one[0]["nodes_expanded"])
               for r in one + two if r["status"] == "optimal")
    return {"status": one[0]["status"], "objective": one[0]["objective"], "t1": t1, "t2": t2, "speedup": t1 / t2,
            "least": min(ratios), "most": max(ratios), "expanded": one[0]["nodes_expanded"], "same": same,
            "threads": max(r["threads"] for r in two), "gap1": one[0]["objective"] - one[0]["lower_bound"]}


def render(results: dict) -> str:
    lines = ["Fresh processes alternating one and two threads, each search after a one-node search that loads "
             "the kernels; seconds: the search's, median of the runs.", "",
             "Rule lists: lambda; falling lists on bank marketing (C = 1e-6): w; Rashomon sets: lambda, objective R*, "
             "expanded: uncaptured sets.", "",
             "| problem | lambda (w) | antecedents | status | objective | expanded | 1 thread s | 2 threads s | speedup "
             "(least-most) | same search |",
             "|---|---:|---:|---|---:|---:|---:|---:|---:|---|"]
    for key, row in results.items():
        s = summary(row)
        if s["status"] == "crashed":
            lines.append(f"| {row['problem']} | {row['lambda']} | {row['antecedents']:,} | crashed |||||||")
            continue
        status = s["status"] if s["status"] == "optimal" else f"{s['status']} (gap {s['gap1']:.4f})"
        lines.append(f"| {row['problem']} | {row['lambda']} | {row['antecedents']:,} | {status} | "
                     f"{s['objective']:.6f} | {s['expanded']:,} | {s['t1']:.2f} | {s['t2']:.2f} | "
                     f"{s['speedup']:.2f}x ({s['least']:.2f}-{s['most']:.2f}) | "
                     f"{'yes' if s['same'] else 'no'} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs of each thread count (default 3)")
    parser.add_argument("--time-limit", type=float, default=300.0, help="seconds per search (default 300)")
    parser.add_argument("--only", nargs="+", help="problems of corels_suite.py (with every lambda listed here), or "
                        "the falling lists' names")
    args = parser.parse_args()
    cases = [c for c in HARD + SMALL + FALLING + RASHOMON if not args.only or c[0] in args.only]
    results = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    command = f"python benchmarks/parallel.py --repeat {args.repeat} --time-limit {args.time_limit:g}"
    with tempfile.TemporaryDirectory() as folder:
        for case in cases:
            if case in RASHOMON:
                row = measure_rashomon(*case, args.repeat, args.time_limit)
            elif case in FALLING:
                row = measure_falling(*case, args.repeat, args.time_limit)
            else:
                row = measure(*case, args.repeat, args.time_limit, Path(folder))
            results[f"{case[0]} | {case[1]}"] = json.loads(json.dumps(row))  # (run counts as string keys)
            publish(RESULTS, results, "parallel", command, render(results), "One search on two threads")


if __name__ == "__main__":
    main()
