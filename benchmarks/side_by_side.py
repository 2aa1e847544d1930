"""Two versions of optrules side by side in one run: the same fits, each in a fresh process, the versions
alternating, so that a change meant to leave results and speed alone can show it did.

Run by hand: ``python benchmarks/side_by_side.py BEFORE_SRC AFTER_SRC [--repeat 2]`` where each argument is
a ``src`` directory (of a ``git worktree`` of the version). Prints, per fit, each version's certified
objective, status and work (identical when the change keeps results) and its least time over the
repeats; ``--write NAME`` puts the table in ``benchmarks/history/NAME.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from benchmarks_md import stamp, write_block

HERE = Path(__file__).resolve().parent

#: (name, family, table of benchmarks/raw_data.py or "reference <lambda>", estimator settings)
FITS = (
    ("COMPAS train, lambda 0.01 (C++ files)", "reference", 0.01, {}),
    ("COMPAS train, lambda 0.005 (C++ files)", "reference", 0.005, {}),
    ("bank-full, rule list", "rulelist", "bank-full", {}),
    ("compas (raw), rule list", "rulelist", "compas (raw)", {}),
    ("mixed 5000x20, rule list", "rulelist", "mixed 5000x20", {}),
    ("heart, rule list, quantile, max_card 2, 200k prefixes", "rulelist", "heart",
     {"thresholds": "quantile", "max_card": 2, "max_nodes": 200_000, "time_limit": None}),
    ("bank-full, falling list", "frl", "bank-full", {}),
    ("compas (raw), falling list", "frl", "compas (raw)", {}),
    ("heart, rule set", "ruleset", "heart", {}),
    ("pima, rule set", "ruleset", "pima", {}),
)

CHILD = r"""
import json, sys, time, warnings
warnings.simplefilter("ignore")
family, table, options = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
if family == "reference":
    from optrules.corels import fit_reference
    base = sys.argv[4] + "/data/compas/corels_data/compas_train"
    started = time.perf_counter()
    _, certificate = fit_reference(base + ".out", base + ".label", base + ".minor", float(table), time_limit=None)
else:
    sys.path.insert(0, sys.argv[5])
    from raw_data import read
    from optrules.estimators import FallingRuleListClassifier, RuleListClassifier, RuleSetClassifier
    X, y = read(table)
    estimator = {"rulelist": RuleListClassifier, "frl": FallingRuleListClassifier, "ruleset": RuleSetClassifier}[family]
    started = time.perf_counter()
    certificate = estimator(**options).fit(X, y).certificate_
counters = certificate.counters
work = counters.get("nodes_expanded", counters.get("iterations"))
print(json.dumps({"seconds": time.perf_counter() - started, "objective": certificate.objective,
                  "status": certificate.status, "work": work}))
"""


def run(src: str, family: str, table, options: dict) -> dict:
    shared = os.environ.get("OPTRULES_SHARED", str(HERE.parent.parent / "shared"))
    env = {**os.environ, "PYTHONPATH": src}
    done = subprocess.run([sys.executable, "-c", CHILD, family, str(table), json.dumps(options), shared, str(HERE)],
                          capture_output=True, text=True, env=env, timeout=900)
    if done.returncode != 0:
        return {"error": (done.stderr.strip().splitlines() or ["failed"])[-1][:120]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", help="the src directory of the version before")
    parser.add_argument("after", help="the src directory of the version after")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--write", metavar="NAME", help="write the table to benchmarks/history/NAME.md")
    parser.add_argument("--only", nargs="+", metavar="TEXT", help="only the fits whose name holds one of these")
    args = parser.parse_args()
    lines = ["| fit | objective (before / after) | status | work (before / after) | least s, before | least s, after |",
             "|---|---|---|---|---|---|"]
    for name, family, table, options in FITS:
        if args.only and not any(text in name for text in args.only):
            continue
        runs = {side: [] for side in ("before", "after")}
        for _ in range(args.repeat):
            for side in ("before", "after"):
                runs[side].append(run(getattr(args, side), family, table, options))
        first = {side: runs[side][0] for side in runs}
        if any("error" in r for rs in runs.values() for r in rs):
            lines.append(f"| {name} | {first['before'].get('error', '')} / {first['after'].get('error', '')} | | | | |")
            continue
        same = "same" if first["before"]["objective"] == first["after"]["objective"] else "DIFFERENT"
        least = {side: min(r["seconds"] for r in runs[side]) for side in runs}
        lines.append(f"| {name} | {first['before']['objective']:.9f} / {first['after']['objective']:.9f} ({same}) | "
                     f"{first['before']['status']} / {first['after']['status']} | "
                     f"{first['before']['work']:,} / {first['after']['work']:,} | {least['before']:.2f} | "
                     f"{least['after']:.2f} |")
        print(lines[-1], flush=True)
    text = stamp(f"python benchmarks/side_by_side.py BEFORE AFTER --repeat {args.repeat}") + "\n\n" + "\n".join(lines)
    if args.write:
        write_block(args.write, text, f"Side by side: {args.write}")


if __name__ == "__main__":
    main()
