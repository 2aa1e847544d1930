"""Rashomon sets of rule lists on bundled COMPAS: size, completeness, time and memory.

Each case runs in a fresh process: fit the certified rule list (defaults, the lambda given; the last two
cases with ``max_rules=3``, the lists CorelsEnum enumerated), then ``rashomon_set(epsilon, relative=True)`` with a
time limit and a memory budget. Reported: R*, the number
of members, whether the set is certified complete (else the objective below which it is), uncaptured
sets searched, enumeration seconds, peak memory of the process.

Run by hand: ``python benchmarks/rashomon.py [--time-limit S] [--max-memory MB]``; writes
``benchmarks/results/rashomon.json`` and the section "Rashomon sets" of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
from pathlib import Path

from optrules.files import write_text

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchmarks_md import stamp, write_block  # noqa: E402

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "rashomon.json"
# (lambda, epsilon as a share of R*, max_rules): the four, and CorelsEnum's setting (length <= 3)
CASES = [(0.01, 0.01, 0), (0.01, 0.05, 0), (0.005, 0.01, 0), (0.005, 0.05, 0), (0.01, 0.05, 3), (0.005, 0.05, 3)]


def one(regularization: float, share: float, max_rules: int, time_limit: float, max_memory_mb: float) -> dict:
    from optrules import RuleListClassifier
    from optrules.data.datasets import load_dataset

    data = load_dataset("compas")
    est = RuleListClassifier(regularization=regularization, max_rules=max_rules or None).fit(data.X, data.y)
    rashomon = est.rashomon_set(share, relative=True, time_limit=time_limit, max_memory=int(max_memory_mb * 2**20))
    counters = rashomon.counters
    return {
        "lambda": regularization, "epsilon_share": share, "max_rules": max_rules, "optimum": rashomon.optimum, "epsilon": rashomon.epsilon,
        "members": rashomon.size, "complete": rashomon.complete, "complete_below": rashomon.complete_below,
        "status": rashomon.status, "nodes": counters["nodes"], "edges": counters["edges"], "seconds": counters["time"],
        "antecedents": len(est.antecedents_), "mined_all_rules": rashomon.mined_all_rules,
        "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--time-limit", type=float, default=120.0)
    parser.add_argument("--max-memory", type=float, default=2048.0, help="MB")
    parser.add_argument("--one", nargs=3, type=float, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(args.one[0], args.one[1], int(args.one[2]), args.time_limit, args.max_memory)))
        return
    rows = []
    for regularization, share, max_rules in CASES:
        out = subprocess.run([sys.executable, __file__, "--one", str(regularization), str(share), str(max_rules), "--time-limit",
                              str(args.time_limit), "--max-memory", str(args.max_memory)],
                             capture_output=True, text=True, check=True)
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
        print(rows[-1], flush=True)
    RESULTS.parent.mkdir(exist_ok=True)
    write_text(RESULTS, json.dumps(rows, indent=1))
    lines = ["| lambda | epsilon | rules | R* | members | complete | uncaptured sets | seconds | peak MB |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        state = "yes" if r["complete"] else f"no ({r['status']}; complete below {r['complete_below']:.4f})"
        lines.append(f"| {r['lambda']:g} | {r['epsilon_share']:.0%} of R* ({r['epsilon']:.4f}) | "
                     f"{'<= %d' % r['max_rules'] if r['max_rules'] else 'any'} | {r['optimum']:.6f} | "
                     f"{r['members']:,} | {state} | {r['nodes']:,} | {r['seconds']:.1f} | {r['peak_mb']:,.0f} |")
    body = (f"{stamp('python benchmarks/rashomon.py')} Bundled COMPAS (6,907 rows, the default fit's "
            f"{rows[0]['antecedents']}-{rows[-1]['antecedents']} antecedents), time limit {args.time_limit:g} s and "
            f"{args.max_memory:g} MB for the enumeration.\n\n" + "\n".join(lines))
    write_block("rashomon", body, "Rashomon sets")


if __name__ == "__main__":
    main()
