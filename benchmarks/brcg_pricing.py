"""Exact pricing for Boolean rule sets: the HiGHS pricing IP against branch-and-bound over conjunctions.

Same folds (5-fold stratified, shuffle seed 0), same complexity bound (20), same budgets (60 s per fit,
20 s per exact pricing call) on UCI datasets of the paper; for each method: folds whose master LP was
proven solved, folds certified optimal, the mean lower bound and gap (weighted mistakes), time per fold
and test accuracy. Run by hand: ``python benchmarks/brcg_pricing.py [datasets]``; writes
``benchmarks/results/brcg_pricing.json`` and the table in its history file, benchmarks/history/ (and the summary, BENCHMARKS.md).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
from sklearn.model_selection import StratifiedKFold

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "experiments"))

from benchmarks_md import publish  # noqa: E402
from uci import load  # noqa: E402

from optrules import RuleSetClassifier  # noqa: E402

RESULTS = HERE / "results" / "brcg_pricing.json"
DATASETS = ["heart", "ionosphere", "liver", "pima", "wdbc", "transfusion"]
METHODS = ["ip", "enumeration"]


def run(name: str, method: str) -> dict:
    X, y, categorical = load(name)
    folds = []
    for train, test in StratifiedKFold(5, shuffle=True, random_state=0).split(X, y):
        start = time.perf_counter()
        model = RuleSetClassifier(complexity=20, categorical=categorical, exact_pricing=method, time_limit=60,
                                  pricing_time_limit=20).fit(X.iloc[train], y[train])
        cert = model.certificate_
        folds.append({"status": cert.status, "objective": cert.objective, "lower_bound": cert.lower_bound,
                      "lp_solved": bool(cert.counters["lp_solved"]), "seconds": time.perf_counter() - start,
                      "test_accuracy": float(model.score(X.iloc[test], y[test]))})
    return {"dataset": name, "method": method, "folds": folds}


def table(results: list[dict]) -> str:
    lines = ["| dataset | exact pricing | LP proven solved | certified optimal | mean lower bound | mean gap | "
             "s / fold | test accuracy |", "|---|---|---|---|---|---|---|---|"]
    for r in results:
        f = r["folds"]
        mean = lambda key: float(np.mean([x[key] for x in f]))  # noqa: E731
        gap = float(np.mean([x["objective"] - x["lower_bound"] for x in f]))
        lines.append(f"| {r['dataset']} | {r['method']} | {sum(x['lp_solved'] for x in f)}/{len(f)} | "
                     f"{sum(x['status'] == 'optimal' for x in f)}/{len(f)} | {mean('lower_bound'):.1f} | {gap:.1f} | "
                     f"{mean('seconds'):.1f} | {mean('test_accuracy'):.3f} |")
    return "\n".join(lines)


def main() -> None:
    names = sys.argv[1:] or DATASETS
    results = []
    for name in names:
        for method in METHODS:
            results.append(run(name, method))
            print(table(results[-1:]).splitlines()[-1], flush=True)
    publish(RESULTS, results, "brcg_pricing", "python benchmarks/brcg_pricing.py", table(results),
            "Rule sets: exact pricing, HiGHS IP vs branch-and-bound (complexity <= 20, 5 folds)")


if __name__ == "__main__":
    main()
