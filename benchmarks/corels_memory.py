"""CORELS with less memory than its search needs: setting prefixes aside against dropping children.

Each row runs one problem of ``corels_suite`` (same antecedents, the reference's format) in a fresh
process with a memory budget below what its search takes unbounded, twice: the default (once the state
is full, the queued prefixes of largest bound are set aside and made again by their parents; the search
drops children only when that frees too little) and ``Ablation(set_aside=False)`` (it drops children at
once). Reported: status, lower bound, objective, search seconds, prefixes set aside and dropped, the
state's bytes.

Run by hand, one process at a time: ``python benchmarks/corels_memory.py [--time-limit S]``; writes
``benchmarks/results/corels_memory.json`` and the section in its history file, ``benchmarks/history/`` (and the summary, ``BENCHMARKS.md``).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks_md import publish
from corels_suite import HERE, write_problem

RESULTS = HERE / "results" / "corels_memory.json"
# (problem, lambda, memory budgets in MB): monks-3 0.005 certifies in ~18 s with a 367 MB state
# unbounded; monks-2 0.01 does not certify in 300 s with 2 GB
ROWS = [("monks-3", 0.005, (120, 60, 30, 15)), ("monks-2", 0.01, (300,))]


def run(files, regularization: float, time_limit: float, megabytes: int, set_aside: bool) -> dict:
    code = (
        "import json, sys\n"
        "from optrules.corels import fit_reference\n"
        "from optrules.corels.search import Ablation\n"
        f"_, c = fit_reference({str(files[0])!r}, {str(files[1])!r}, {str(files[2])!r}, {regularization},"
        f" time_limit={time_limit}, max_memory={megabytes << 20}, ablation=Ablation(set_aside={set_aside}))\n"
        "k = c.counters\n"
        "print(json.dumps({'status': c.status, 'lower_bound': c.lower_bound, 'objective': c.objective,"
        " 'seconds': k['total_time'], 'set_aside': k['prefixes_set_aside'], 'dropped': k['prefixes_dropped'],"
        " 'state_bytes': k['memory_bytes']}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def table(results) -> str:
    lines = ["| problem | lambda | memory | search | status | lower bound | objective | seconds | set aside | dropped |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        lines.append(f"| {r['problem']} | {r['lambda']} | {r['megabytes']} MB | "
                     f"{'sets aside' if r['set_aside_on'] else 'drops'} | {r['status']} | {r['lower_bound']:.4f} | "
                     f"{r['objective']:.4f} | {r['seconds']:.1f} | {r['set_aside']:,} | {r['dropped']:,} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--time-limit", type=float, default=120.0)
    args = parser.parse_args()
    results = []
    with tempfile.TemporaryDirectory() as folder:
        for name, regularization, budgets in ROWS:
            files = write_problem(name, Path(folder), regularization)
            for megabytes in budgets:
                for set_aside in (True, False):
                    row = run(files, regularization, args.time_limit, megabytes, set_aside)
                    results.append({"problem": name, "lambda": regularization, "megabytes": megabytes,
                                    "set_aside_on": set_aside, **row})
                    print(json.dumps(results[-1]), flush=True)
    publish(RESULTS, results, "corels-memory", f"python benchmarks/corels_memory.py --time-limit {args.time_limit:g}",
            table(results), "CORELS with less memory than its search needs")


if __name__ == "__main__":
    main()
