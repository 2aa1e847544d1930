"""A table copied k times is the table with weights (issue 84, item 4): the default rule list and falling
list on a generated noisy table (``make_noisy_table``, seed 1, 15 % label noise) and on the same rows
copied 100 times, each fit in a fresh process (kernels compiled before), trained on every row.

Columns: rows, whole-fit seconds, the ratio to the table itself, the objective and what the certificate
proves. The copies should certify what the table certifies, within twice its time. Run by hand:
``python benchmarks/replicated.py``; writes ``benchmarks/results/replicated.json`` and the block in its
history file (and BENCHMARKS.md's block of that name).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from benchmarks_md import publish

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "replicated.json"

#: (rows, columns) of the tables copied
TABLES = [(3_000, 14), (32_000, 14)]
COPIES = 100

FIT = textwrap.dedent("""
    import json, sys, time, warnings
    import numpy as np, pandas as pd
    from optrules import FallingRuleListClassifier, RuleListClassifier
    from optrules.data.synthetic import make_noisy_table
    family, rows, columns, copies = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    frame = make_noisy_table(rows, columns, noise=0.15, seed=1)
    y = frame.pop("outcome").to_numpy()
    X = pd.concat([frame] * copies, ignore_index=True) if copies > 1 else frame
    y = np.tile(y, copies)
    make = {"rulelist": RuleListClassifier, "frl": FallingRuleListClassifier}[family]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        make(time_limit=5).fit(X.iloc[:1000], y[:1000])  # (kernels loaded, as after `optrules compile`)
        started = time.perf_counter(); model = make(time_limit=120).fit(X, y)
        fit = time.perf_counter() - started
    c = model.certificate_
    print(json.dumps({"fit_s": fit, "status": c.status, "statement": c.statement, "objective": c.objective,
                      "lower_bound": c.lower_bound, "rows": len(X)}))
""")


def run(family: str, table: tuple, copies: int) -> dict:
    done = subprocess.run([sys.executable, "-c", FIT, family, *map(str, table), str(copies)], capture_output=True,
                          text=True, timeout=900)
    if done.returncode:
        raise RuntimeError(done.stderr[-2000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    rows = []
    for table in TABLES:
        for family in ("rulelist", "frl"):
            once = dict(run(family, table, 1), family=family, table=list(table), copies=1)
            copied = dict(run(family, table, COPIES), family=family, table=list(table), copies=COPIES)
            copied["ratio"] = copied["fit_s"] / once["fit_s"]
            rows += [once, copied]
            print(json.dumps(once), json.dumps(copied), flush=True)
    publish(RESULTS, rows, "replicated", "python benchmarks/replicated.py", table_text(rows),
            "A table copied 100 times")


def table_text(rows) -> str:
    lines = ["| table | copies | rows | family | fit s | x the table's | objective | proven |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        n, columns = r["table"]
        ratio = f"{r['ratio']:.2f}" if "ratio" in r else ""
        lines.append(f"| {n:,} x {columns} | {r['copies']} | {r['rows']:,} | {r['family']} | {r['fit_s']:.1f} | "
                     f"{ratio} | {r['objective']:.6f} | {r['statement'].split(';')[0]} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
