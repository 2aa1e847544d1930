"""Certified by default on tables nobody tuned to (issue 84): generated tables shaped like the credit and
census tables users bring (``optrules.data.synthetic.make_noisy_table``: 10-40 columns, about 60 %
categorical with 3-12 skewed levels, 10-30 % label noise, 500-50,000 rows, some with missing values;
every row distinct), the default rule list and falling list (the ladder of ``max_card="auto"``) and rule
set against the quantile space at a 10 s budget, each fit in a fresh process, 70/30 stratified split (seed 0).

Columns: whole-fit seconds, what the certificate proves (the rung it is optimal over, or the gap), test
accuracy; beside them GOSDT 1.0.4's rule list on its guessed thresholds (``../shared/peers/``). Run by hand:
``python benchmarks/noisy_tables.py [--quick] [--families ruleset ...]`` (the families named are run again,
the others' rows kept from the last run); writes
``benchmarks/results/noisy_tables.json`` and the block in its history file (and BENCHMARKS.md's block of
that name).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

from benchmarks_md import publish

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "noisy_tables.json"

#: (rows, columns, noise, missing rate, seed): the suite's shapes
SUITE = [
    (500, 10, 0.10, 0.00, 0), (1_000, 20, 0.20, 0.00, 1), (1_000, 20, 0.30, 0.05, 2), (2_000, 30, 0.20, 0.05, 3),
    (5_000, 14, 0.15, 0.00, 4), (10_000, 40, 0.25, 0.00, 5), (20_000, 20, 0.20, 0.05, 6), (50_000, 14, 0.15, 0.02, 7),
]

FIT = textwrap.dedent("""
    import json, sys, time, warnings
    import numpy as np
    from sklearn.model_selection import train_test_split
    from optrules import FallingRuleListClassifier, RuleListClassifier, RuleSetClassifier
    from optrules.data.synthetic import make_noisy_table
    family, rows, columns, noise, missing, seed, setting = sys.argv[1:8]
    frame = make_noisy_table(int(rows), int(columns), noise=float(noise), missing_rate=float(missing), seed=int(seed))
    X, y = frame.drop(columns="outcome"), frame["outcome"]
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, stratify=y, random_state=0)
    make = {"rulelist": RuleListClassifier, "frl": FallingRuleListClassifier, "ruleset": RuleSetClassifier}[family]
    options = dict(time_limit=60.0) if setting == "default" else dict(time_limit=10.0, thresholds="quantile")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        started = time.perf_counter(); model = make(**options).fit(X_train, y_train)
        fit = time.perf_counter() - started
    c = model.certificate_
    print(json.dumps({"fit_s": fit, "status": c.status, "statement": c.statement, "objective": c.objective,
                      "lower_bound": c.lower_bound, "test": float(model.score(X_test, y_test)),
                      "ladder": [{k: v for k, v in row.items() if k != "positions"} for row in (getattr(model, "ladder_", None) or [])]}))
""")


def run(family: str, shape: tuple, setting: str) -> dict:
    done = subprocess.run([sys.executable, "-c", FIT, family, *map(str, shape), setting], capture_output=True,
                          text=True, timeout=600)
    if done.returncode:
        raise RuntimeError(done.stderr[-2000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def run_gosdt(shape: tuple) -> dict:
    """GOSDT's rule list (lambda 0.01, 60 s) on its own threshold guessing, on the same split (the peers'
    one-hot input of ``peers_raw.numeric_for_peers``)."""
    from peers_raw import numeric_for_peers, run_peer
    from sklearn.model_selection import train_test_split

    from optrules.data.synthetic import make_noisy_table

    rows, columns, noise, missing, seed = shape
    frame = make_noisy_table(rows, columns, noise=noise, missing_rate=missing, seed=seed)
    X, y = frame.drop(columns="outcome"), frame["outcome"]
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, stratify=y, random_state=0)
    train, test = numeric_for_peers(X_train, X_test)
    peer = run_peer("gosdt", train, test, (y_train == "bad").astype(int), (y_test == "bad").astype(int))
    return {"fit_s": peer.get("seconds", float("nan")), "status": peer.get("status", peer.get("error", "")),
            "statement": f"GOSDT {peer.get('status', peer.get('error', ''))} on {peer.get('features', '?')} features",
            "objective": float("nan"), "lower_bound": float("nan"), "test": peer.get("accuracy", float("nan"))}


FAMILIES = ("rulelist", "frl", "ruleset", "gosdt")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="the first three tables only")
    parser.add_argument("--families", nargs="+", choices=FAMILIES, default=list(FAMILIES))
    args = parser.parse_args()
    suite = SUITE[:3] if args.quick else SUITE
    rows = []
    for shape in suite:
        for family in args.families:
            for setting in (("default", "quantile 10 s") if family != "gosdt" else ("rule list, 60 s",)):
                outcome = run_gosdt(shape) if family == "gosdt" else run(family, shape, setting)
                result = dict(outcome, family=family, setting=setting, shape=list(shape))
                rows.append(result)
                print(json.dumps({k: v for k, v in result.items() if k != "ladder"}), flush=True)
    rows = _with_kept_rows(rows)
    publish(RESULTS, rows, "noisy_tables", "python benchmarks/noisy_tables.py", table(rows),
            "Certified by default on generated noisy tables")


def _with_kept_rows(rows: list) -> list:
    """The rows just measured and, for the tables and families not run again, the last run's rows; by table,
    then family."""
    key = lambda row: (tuple(row["shape"]), row["family"])  # noqa: E731
    rerun = {key(row) for row in rows}
    kept = json.loads(RESULTS.read_text()) if RESULTS.exists() else []
    rows = rows + [row for row in kept if key(row) not in rerun]
    order = {tuple(shape): k for k, shape in enumerate(SUITE)}
    return sorted(rows, key=lambda row: (order.get(tuple(row["shape"]), len(order)), FAMILIES.index(row["family"])))


def _proof(row: dict) -> str:
    """The certificate's sentence, short: the rung proven, or the better model's gap over the larger rung
    (a rule set's: also its lower bound over the larger rung as a share of its objective)."""
    statement, number = row["statement"], ".4f" if row["family"] != "ruleset" else ",g"
    if row["family"] == "gosdt":
        return statement.replace("Status.", "").lower().replace("gosdt", "GOSDT")
    if row["status"] == "optimal":
        return statement.replace("certified optimal over ", "optimal over ").split(";")[0].replace(
            "certified optimal", "optimal")
    better = re.match(r"better than every (?:list|rule set) over (.+?) \(whose optimum.*within ([0-9.,]+) of the "
                      r"optimum over (.+?), whose", statement)
    share = row["lower_bound"] / row["objective"] if row["objective"] > 0 else 0.0
    if better:
        text = f"beats the optimum over {better[1]}; gap {float(better[2].replace(',', '')):{number}} over {better[3]}"
        return text + (f" (lower bound {share:.2f} x objective)" if row["family"] == "ruleset" else "")
    if row["family"] == "ruleset":
        return f"lower bound {share:.2f} x objective ({row['status']})"
    return f"{row['status']}, gap {row['objective'] - row['lower_bound']:.4f}"


def table(rows) -> str:
    lines = ["| rows x columns, noise, missing | family | setting | fit s | proven | test accuracy |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        n, columns, noise, missing, _ = r["shape"]
        lines.append(f"| {n:,} x {columns}, {noise:.0%}, {missing:.0%} | {r['family']} | {r['setting']} | "
                     f"{r['fit_s']:.1f} | {_proof(r)} | {r['test']:.3f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
