"""Rule sets under a fairness constraint on COMPAS (issue 86): bundled COMPAS (CORELS's 6,907 rows, race as
African-American or other, not a feature), the rule set family's default features; for each metric and
complexity bound, bound 0.05: status, objective (weighted Hamming loss), lower bound, the gap as a share of
the objective, the achieved unfairness and the whole fit's seconds; the unconstrained set's beside.

Run by hand: ``python benchmarks/fairness_rulesets.py [--time-limit 60]``; writes
``benchmarks/results/fairness_rulesets.json`` and the block of that name (history file; BENCHMARKS.md when
it has the block).
"""

from __future__ import annotations

import argparse
import time
from fractions import Fraction
from pathlib import Path

from benchmarks_md import publish

from optrules import RuleSetClassifier
from optrules.data.datasets import load_dataset
from optrules.fairness.metrics import METRICS

HERE = Path(__file__).resolve().parent
COMPLEXITIES = (5, 10, 20)


def measure(time_limit: float) -> dict:
    data = load_dataset("compas-B")
    X = data.X.assign(race=data.X["race"].where(data.X["race"] == "African-American", "other"))
    rows = []
    for complexity in COMPLEXITIES:
        for metric in (None,) + METRICS:
            started = time.perf_counter()
            model = RuleSetClassifier(complexity=complexity, fairness=metric, max_unfairness=0.05, time_limit=time_limit)
            if metric is None:
                model.fit(X.drop(columns="race"), data.y)
            else:
                model.fit(X, data.y, sensitive="race")
            c = model.certificate_
            rows.append({"complexity": complexity, "metric": metric or "none", "status": c.status,
                         "objective": c.objective, "lower_bound": c.lower_bound,
                         "gap_share": (c.objective - c.lower_bound) / c.objective if c.objective else 0.0,
                         "unfairness": float(Fraction(c.counters["unfairness"])) if metric else None,
                         "clauses": len(model.rule_set_), "seconds": time.perf_counter() - started})
            print(rows[-1], flush=True)
    return {"rows": rows}


def table(results: dict) -> str:
    lines = ["| complexity | constraint (<= 0.05) | status | objective | lower bound | gap | gap achieved | clauses | s |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in results["rows"]:
        lines.append(f"| {r['complexity']} | {r['metric'].replace('_', ' ')} | {r['status']} | {r['objective']:.0f} | "
                     f"{r['lower_bound']:.1f} | {100 * r['gap_share']:.1f}% | "
                     f"{'' if r['unfairness'] is None else format(r['unfairness'], '.4f')} | {r['clauses']} | "
                     f"{r['seconds']:.1f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--time-limit", type=float, default=60.0, help="seconds for each fit")
    args = parser.parse_args()
    results = measure(args.time_limit)
    print(table(results))
    publish(HERE / "results" / "fairness_rulesets.json", results, "fairness_rulesets",
            "python benchmarks/fairness_rulesets.py", table(results), "Fair rule sets on COMPAS")


if __name__ == "__main__":
    main()
