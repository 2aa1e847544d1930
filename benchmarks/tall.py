"""Millions of rows, exactly (issue 65): every family's defaults on tables of 3-10M rows.

Tables: bank-full replicated 70 times (3,164,770 rows x 16, its balance and duration jittered 2% a copy
so that rows differ; ``raw_data.read``) and a generated table of 3,300,000 rows (6 normal columns
rounded to 2 decimals, a 4-value category, a noisy logistic target). Each fit runs in a fresh process
(kernels compiled before, as after ``optrules compile``) with the family's defaults (time budget 120 s,
memory budget 1 GiB or half the machine's): wall time of the fit, status, gap or bound ratio, and the
process's peak memory before the fit (the table read) and after it.

Run by hand: ``python benchmarks/tall.py [--tables ...] [--families ...]``; writes
``benchmarks/results/tall.json`` and the block in its history file, ``benchmarks/history/`` (and the summary, ``BENCHMARKS.md``).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import textwrap
from pathlib import Path

from benchmarks_md import stamp, write_block

from optrules.files import write_text

HERE = Path(__file__).resolve().parent

FIT = textwrap.dedent("""
    import json, resource, sys, time, warnings
    import numpy as np, pandas as pd
    sys.path.insert(0, sys.argv[3])
    from optrules import FallingRuleListClassifier, RuleListClassifier, RuleSetClassifier
    table, family = sys.argv[1], sys.argv[2]
    if table == "generated 3300000x7":
        rng = np.random.default_rng(0)
        n = 3_300_000
        X = pd.DataFrame({f"x{j}": rng.normal(size=n).round(2) for j in range(6)})
        X["kind"] = rng.choice(["a", "b", "c", "d"], n)
        score = 1.2 * X["x0"] - 0.8 * X["x1"] + 0.5 * (X["kind"] == "b") + rng.logistic(size=n) * 0.8
        y = (score > 0.3).astype(int).to_numpy()
    else:
        import raw_data  # bank-full, replicated: not among raw_data's tables (its benchmarks run each table)
        raw_data.TABLES[table] = dict(raw_data.TABLES["bank-full"], replicate=int(table.rsplit("x", 1)[1]))
        X, y = raw_data.read(table)
    read_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    make = {"rulelist": RuleListClassifier, "frl": FallingRuleListClassifier, "ruleset": RuleSetClassifier}[family]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        started = time.perf_counter()
        model = make().fit(X, y)
        seconds = time.perf_counter() - started
    c = model.certificate_
    print(json.dumps({"rows": len(X), "columns": X.shape[1], "seconds": seconds, "status": c.status,
                      "gap": c.gap, "bound_ratio": c.lower_bound / c.objective if c.objective > 0 else 1.0,
                      "accuracy": float(model.score(X, y)), "features": len(model.binarizer_.features_),
                      "read_peak_mb": read_peak,
                      "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
""")

TABLES = ("bank-full x70", "generated 3300000x7")
FAMILIES = ("rulelist", "frl", "ruleset")


def fit_case(table: str, family: str) -> dict:
    done = subprocess.run([sys.executable, "-c", FIT, table, family, str(HERE)], capture_output=True, text=True,
                          timeout=1800)
    if done.returncode:
        return {"error": (done.stderr.strip().splitlines() or ["failed"])[-1][:200]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def table_text(results: list[dict]) -> str:
    lines = ["| table | rows x cols | family | fit s | status | gap (rule sets: bound / objective) | train acc | "
             "features | peak MB, table read | peak MB, after the fit |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        if "error" in r:
            lines.append(f"| {r['table']} | | {r['family']} | | error: {r['error']} | | | | | |")
            continue
        gap = f"{r['bound_ratio']:.3f}" if r["family"] == "ruleset" else f"{r['gap']:.6f}"
        lines.append(f"| {r['table']} | {r['rows']:,} x {r['columns']} | {r['family']} | {r['seconds']:.1f} | "
                     f"{r['status']} | {gap} | {100 * r['accuracy']:.1f} | {r['features']} | "
                     f"{r['read_peak_mb']:,.0f} | {r['peak_mb']:,.0f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tables", nargs="+", default=list(TABLES))
    parser.add_argument("--families", nargs="+", default=list(FAMILIES))
    args = parser.parse_args()
    results = []
    for table in args.tables:
        for family in args.families:
            row = {"table": table, "family": family, **fit_case(table, family)}
            print(json.dumps(row), flush=True)
            results.append(row)
    (HERE / "results").mkdir(exist_ok=True)
    write_text(HERE / "results" / "tall.json", json.dumps(results, indent=1))
    write_block("tall", stamp("python benchmarks/tall.py") + "\n\n" + table_text(results),
                "Millions of rows: every family's defaults")
    print(table_text(results))


if __name__ == "__main__":
    main()
