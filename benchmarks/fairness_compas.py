"""Certified fair rule lists on COMPAS (issue 86): bundled COMPAS (CORELS's 6,907 rows, race as
African-American or other, not a feature), single literals, lambda 0.01; for each metric, the frontier over
the bounds (`fairness_frontier`, one call), each point's status, objective, lower bound, achieved
unfairness, whether it was searched, and the whole call's time; with the unconstrained optimum's gaps.

Run by hand: ``python benchmarks/fairness_compas.py [--metrics statistical_parity ...] [--time-limit 60]
[--rows propublica]`` (ProPublica's 6,172 rows); writes ``benchmarks/results/fairness_compas[_propublica].json``
and the block of that name (history file; BENCHMARKS.md
when it has the block).
"""

from __future__ import annotations

import argparse
import time
from fractions import Fraction
from pathlib import Path

import numpy as np
from benchmarks_md import publish

from optrules import RuleListClassifier
from optrules.data.datasets import COMPAS_ROWS, load_dataset
from optrules.fairness.frontier import DEFAULT_BOUNDS, fairness_frontier
from optrules.fairness.metrics import METRICS, exact_unfairness

HERE = Path(__file__).resolve().parent


def measure(metrics, time_limit: float, rows: str = "corels") -> dict:
    data = load_dataset("compas-B" + ("" if rows == "corels" else f"-{rows}"))
    X = data.X.assign(race=data.X["race"].where(data.X["race"] == "African-American", "other"))
    y = np.asarray(data.y)
    group = (X["race"] == "African-American").to_numpy().astype(int)
    plain = RuleListClassifier(regularization=0.01, max_card=1).fit(X.drop(columns="race"), y)
    predicted = plain.predict(X.drop(columns="race")) == 1
    results = {"rows": rows, "n_rows": len(y), "unconstrained": {"objective": plain.certificate_.objective,
                                 **{m: float(exact_unfairness(y, group, None, predicted, m)) for m in METRICS}},
               "frontiers": {}}
    started = time.perf_counter()
    single = RuleListClassifier(regularization=0.01, fairness="statistical_parity", max_unfairness=0.05,
                                time_limit=time_limit).fit(X, y, sensitive="race")
    results["single"] = {"seconds": time.perf_counter() - started, "status": single.certificate_.status,
                         "objective": single.certificate_.objective,
                         "unfairness": float(Fraction(single.certificate_.counters["unfairness"]))}
    print("single", results["single"], flush=True)
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
    single = results["single"]
    lines = [f"{results['n_rows']:,} rows ({results['rows']}'s). One fit, statistical parity <= 0.05: "
             f"{single['status']} in {single['seconds']:.1f} s of whole fit (objective {single['objective']:.6f}, "
             f"gap {single['unfairness']:.4f}).", "",
             f"Unconstrained optimum over the same literals: objective {plain['objective']:.6f}; its gaps: "
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
    parser.add_argument("--rows", choices=COMPAS_ROWS, default="corels",
                        help="CORELS's 6,907 rows (bundled COMPAS's default) or ProPublica's analysis's 6,172")
    args = parser.parse_args()
    results = measure(args.metrics, args.time_limit, args.rows)
    print(table(results))
    command = "python benchmarks/fairness_compas.py" + (
        "" if args.metrics == list(METRICS) else " --metrics " + " ".join(args.metrics)) + (
        "" if args.rows == "corels" else f" --rows {args.rows}")
    name = "fairness_compas" + ("" if args.rows == "corels" else f"_{args.rows}")
    publish(HERE / "results" / f"{name}.json", results, name, command, table(results),
            "Fair rule lists on COMPAS" + ("" if args.rows == "corels" else f" ({args.rows}'s rows)"))


if __name__ == "__main__":
    main()
