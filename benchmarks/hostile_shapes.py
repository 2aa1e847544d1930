"""Tables shaped to hurt (issue 64): very wide, very tall, and a wide CSV through the command line, each
fitted with a short time budget; wall time of the fit and of a predict against the budget.

Each case runs in a fresh process (the numba kernels compiled once before, as after ``optrules
compile``). Run by hand: ``python benchmarks/hostile_shapes.py``; writes
``benchmarks/results/hostile_shapes.json`` and the block in its history file, ``benchmarks/history/`` (and the summary, ``BENCHMARKS.md``).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

from benchmarks_md import stamp, write_block

from optrules.files import write_text

HERE = Path(__file__).resolve().parent

FIT = textwrap.dedent("""
    import json, sys, time, warnings
    import numpy as np, pandas as pd
    from optrules import FallingRuleListClassifier, RuleListClassifier, RuleSetClassifier
    family, rows, columns, limit = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
    rng = np.random.default_rng(0)
    if columns > 10:
        X = pd.DataFrame(rng.integers(0, 5, (rows, columns)).astype(np.int8), columns=[f"c{j}" for j in range(columns)])
        y = (X["c0"] > 2).to_numpy()
    else:
        X = pd.DataFrame({"a": rng.normal(size=rows).round(2), "b": rng.integers(0, 50, rows),
                          "c": rng.choice(["x", "y", "z"], rows)})
        y = ((X["a"] > 0) ^ (X["c"] == "x")).to_numpy()
    make = {"rulelist": lambda: RuleListClassifier(regularization=0.01, time_limit=limit),
            "falling": lambda: FallingRuleListClassifier(time_limit=limit),
            "ruleset": lambda: RuleSetClassifier(time_limit=limit)}[family]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        started = time.perf_counter(); est = make().fit(X, y); fit = time.perf_counter() - started
        started = time.perf_counter(); est.predict(X); predict = time.perf_counter() - started
    print(json.dumps({"fit": fit, "predict": predict, "status": est.certificate_.status}))
""")

CASES = [("wide 200 x 40,000", "rulelist", 200, 40_000, 2.0), ("wide 200 x 40,000", "falling", 200, 40_000, 2.0),
         ("wide 200 x 40,000", "ruleset", 200, 40_000, 2.0), ("tall 4,300,000 x 3", "rulelist", 4_300_000, 3, 5.0)]


def fit_case(family: str, rows: int, columns: int, limit: float) -> dict:
    done = subprocess.run([sys.executable, "-c", FIT, family, str(rows), str(columns), str(limit)],
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def cli_case() -> dict:
    """A 1.9 MB CSV of 40,000 columns: ``optrules fit --time-limit 2``, reading included."""
    import time

    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.integers(0, 10, (20, 40_000)), columns=[f"c{j}" for j in range(40_000)])
    frame["y"] = rng.integers(0, 2, 20)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "wide.csv"
        frame.to_csv(path, index=False)
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "optrules.cli", "fit", str(path), "--target", "y", "--time-limit", "2"],
                       capture_output=True, check=True)
        return {"wall": time.perf_counter() - started, "bytes": path.stat().st_size}


def main() -> None:
    fit_case("rulelist", 100, 20, 5.0)  # compile what the cases need, once
    results = []
    for name, family, rows, columns, limit in CASES:
        results.append({"table": name, "family": family, "time_limit": limit, **fit_case(family, rows, columns, limit)})
        print(results[-1], flush=True)
    cli = cli_case()
    (HERE / "results").mkdir(exist_ok=True)
    write_text(HERE / "results" / "hostile_shapes.json", json.dumps({"fits": results, "cli": cli}, indent=2))
    lines = [stamp("python benchmarks/hostile_shapes.py"), "",
             "| table | family | time limit (s) | fit (s) | predict (s) | status |", "|---|---|---|---|---|---|"]
    lines += [f"| {r['table']} | {r['family']} | {r['time_limit']:g} | {r['fit']:.2f} | {r['predict']:.2f} | {r['status']} |"
              for r in results]
    lines += ["", f"`optrules fit wide.csv --target y --time-limit 2` on a {cli['bytes'] / 2**20:.1f} MB CSV of 40,000 "
              f"columns: {cli['wall']:.1f} s wall, reading the CSV (pandas) and starting the process included.",
              "Before issue 64: the wide fits took 44 s (predict 40 s), the CSV 88 s, the tall fit 8-15 s."]
    write_block("hostile_shapes", "\n".join(lines), "Tables shaped to hurt: very wide, very tall")


if __name__ == "__main__":
    main()
