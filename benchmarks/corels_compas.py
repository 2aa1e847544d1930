"""CORELS on the reference's compas_train files: time, peak memory and the paper's counters.

Run by hand (``make bench`` or ``python benchmarks/corels_compas.py``); each configuration runs in its
own process so that peak memory is the whole process's, as for the C++ reference. Results go to
``benchmarks/results/corels_compas.json`` and into the table of its history file, ``benchmarks/history/`` (and the
summary, ``BENCHMARKS.md``).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

from benchmarks_md import stamp, write_block

from optrules.files import write_text

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SHARED = Path(os.environ.get("OPTRULES_SHARED", ROOT.parent / "shared"))
DATA = SHARED / "data" / "compas" / "corels_data"
RESULTS = HERE / "results" / "corels_compas.json"

# lambda -> (mistakes, C++ wall seconds, C++ peak MB) from shared/reference/corels_compas_train.tsv
REFERENCE = {0.02: (2365, "0.51", "4.5"), 0.01: (2258, "19.4-33.8", "49"), 0.005: (2129, "259-411", "606")}

CONFIGS = [
    # (lambda, policy, map_type)
    (0.02, "lower_bound", "prefix"),
    (0.01, "lower_bound", "prefix"),
    (0.005, "lower_bound", "prefix"),
    (0.01, "lower_bound", "captured"),
    (0.01, "lower_bound", "none"),
    (0.01, "bfs", "prefix"),
    (0.01, "curiosity", "prefix"),
    (0.01, "objective", "prefix"),
]


def run_one(regularization: float, policy: str, map_type: str) -> dict:
    """Runs in the child process: one certified search, reported as JSON on stdout."""
    from optrules.corels import fit_reference

    wall = time.perf_counter()
    rule_list, certificate = fit_reference(
        DATA / "compas_train.out", DATA / "compas_train.label", DATA / "compas_train.minor",
        regularization, policy=policy, map_type=map_type,
    )
    wall = time.perf_counter() - wall
    mistakes = sum(min(r.n_positive, r.n_captured - r.n_positive) for r in rule_list.rules + [rule_list.default])
    return {
        "lambda": regularization, "policy": policy, "map_type": map_type, "status": certificate.status,
        "objective": certificate.objective, "mistakes": mistakes, "rules": len(rule_list),
        "process_wall_s": None, "fit_wall_s": wall, "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        **{k: v for k, v in certificate.counters.items() if k not in ("policy", "map_type")},
        "rule_list": str(rule_list).replace("\n", " / "),
    }


def run_in_subprocess(regularization, policy, map_type) -> dict:
    start = time.perf_counter()
    out = subprocess.run(
        [sys.executable, __file__, "--single", str(regularization), policy, map_type],
        check=True, capture_output=True, text=True,
    ).stdout
    result = json.loads(out.strip().splitlines()[-1])
    result["process_wall_s"] = time.perf_counter() - start
    return result


def table(results: list[dict]) -> str:
    lines = [
        "| lambda | policy | map | status | mistakes (ref) | rules | search s | process s | peak MB | C++ s | C++ MB "
        "| expanded | lower bounds | insertions | max queue |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        ref_mistakes, ref_s, ref_mb = REFERENCE[r["lambda"]]
        default = r["policy"] == "lower_bound" and r["map_type"] == "prefix"
        lines.append(
            f"| {r['lambda']} | {r['policy']} | {r['map_type']} | {r['status']} | {r['mistakes']} ({ref_mistakes}) | "
            f"{r['rules']} | {r['total_time']:.2f} | {r['process_wall_s']:.2f} | {r['peak_mb']:.0f} | "
            f"{ref_s if default else ''} | {ref_mb if default else ''} | {r['nodes_expanded']:,} | "
            f"{r['lower_bound_evaluations']:,} | {r['queue_insertions']:,} | {r['max_queue_size']:,} |"
        )
    return "\n".join(lines)


def write_benchmarks_md(results: list[dict]) -> None:
    write_block("corels_compas", f"{stamp('python benchmarks/corels_compas.py')}\n\n{table(results)}",
                "CORELS on compas_train")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--single", nargs=3, metavar=("LAMBDA", "POLICY", "MAP"), help=argparse.SUPPRESS)
    parser.add_argument("--quick", action="store_true", help="only the three default configurations")
    args = parser.parse_args()
    if args.single:
        print(json.dumps(run_one(float(args.single[0]), args.single[1], args.single[2])))
        return
    run_in_subprocess(0.02, "lower_bound", "prefix")  # compile and cache the kernel once, untimed
    results = []
    for regularization, policy, map_type in CONFIGS[:3] if args.quick else CONFIGS:
        result = run_in_subprocess(regularization, policy, map_type)
        print(f"lambda={regularization} {policy}/{map_type}: {result['status']}, {result['mistakes']} mistakes, "
              f"{result['total_time']:.2f} s search, {result['peak_mb']:.0f} MB peak", flush=True)
        results.append(result)
    RESULTS.parent.mkdir(exist_ok=True)
    write_text(RESULTS, json.dumps(results, indent=2))
    write_benchmarks_md(results)


if __name__ == "__main__":
    main()
