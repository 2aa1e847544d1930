"""Certified fair rule lists on COMPAS (issue 86): bundled COMPAS (CORELS's 6,907 rows, race as
African-American or other, not a feature), single literals, lambda 0.01; for each metric, the frontier over
the bounds (`fairness_frontier`, one call), each point's status, objective, lower bound, achieved
unfairness, whether it was searched, and the whole call's time; with the unconstrained optimum's gaps.

Run by hand: ``python benchmarks/fairness_compas.py [--metrics statistical_parity ...] [--time-limit 60]``;
writes ``benchmarks/results/fairness_compas.json`` and the block of that name (history file; BENCHMARKS.md
when it has the block).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from benchmarks_md import publish
from optrules import RuleListClassifier
from optrules.data.datasets import load_dataset
from optrules.fairness.frontier import DEFAULT_BOUNDS, fairness_frontier
from optrules.fairness.metrics import METRICS, exact_unfairness

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "fairness_compas.json"


def measure(metrics, time_limit: float) -> dict:
    data = load_dataset("compas-B")
    X = data.X.assign(race=data.X["race"].where(data.X["race"] == "African-American", "other"))
    y = np.asarray(data.y)
    group = (X["race"] == "African-American").to_numpy().astype(int)
    plain = RuleListClassifier(regularization=0.01, max_card=1).fit(X.drop(columns="race"), y)
    predicted = plain.predict(X.drop(columns="race")) == 1
    results = {"unconstrained": {"objective": plain.certificate_.objective,
                                 **{m: float(exact_unfairness(y, group, None, predicted, m)) for m in METRICS}},
               "frontiers": {}}
    for metric in metrics:
        started = time.perf_counter()
        frontier = fairness_frontier(RuleListClassifier(regularization=0.01, fairness=metric, time_limit=time_limit),
                                     X, y, "race", DEFAULT_BOUNDS)
        seconds = time.perf_counter() - started
        rows = [dict(row, fit_time=p.model.certificate_.counters.get("fit_time") if p.searched else 0.0)
                for row, p in zip(frontier.table(), frontier.points)]
        results["frontiers"][metric] = {"seconds": seconds, "points": rows}
        print(metric, f"{seconds:.1f} s", [(r["max_unfairness"], r["status"], round(r["objective"], 6)) for r in rows],
              flush=True)
    return results


def table(results: dict) -> str:
    plain = results["unconstrained"]
    lines = [f"Unconstrained optimum over the same literals: objective {plain['objective']:.6f}; its gaps: "
             + ", ".join(f"{m.replace('_', ' ')} {plain[m]:.3f}" for m in METRICS) + ".", ""]
    for metric, frontier in results["frontiers"].items():
        lines += [f"**{metric.replace('_', ' ')}**: the frontier of {len(frontier['points'])} bounds in one call, "
                  f"{frontier['seconds']:.1f} s.", "",
                  "| bound | status | objective | lower bound | gap achieved | rules | searched | fit s |",
                  "|---|---|---|---|---|---|---|---|"]
        lines += [f"| {r['max_unfairness']:g} | {r['status']} | {r['objective']:.6f} | {r['lower_bound']:.6f} | "
                  f"{r['unfairness']:.4f} | {r['rules']} | {'yes' if r['searched'] else 'no'} | "
                  f"{r['fit_time']:.1f} |" for r in frontier["points"]]
        lines.append("")
    return "\n".join(lines).rstrip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--metrics", nargs="+", default=list(METRICS), choices=METRICS)
    parser.add_argument("--time-limit", type=float, default=60.0, help="seconds for each searched bound's fit")
    args = parser.parse_args()
    results = measure(args.metrics, args.time_limit)
    print(table(results))
    command = "python benchmarks/fairness_compas.py" + (
        "" if args.metrics == list(METRICS) else " --metrics " + " ".join(args.metrics))
    publish(RESULTS, results, "fairness_compas", command, table(results), "Fair rule lists on COMPAS")


if __name__ == "__main__":
    main()
