"""Every family on raw tables, as a user meets them: the files in ``../shared/data`` read as they are (IDs,
text, numbers with '?' markers, no headers) and generated mixed tables (5,000 x 20; a wide one; a million rows).

For each table and family, two fits in fresh processes: the estimator's defaults, and ``time_limit=30``.
Each reads the raw file with the command line's reader (its time counts against the budget, as in
``optrules fit``), fits on a stratified 70% and scores the other 30%. Reported: wall time of read + fit
against the budget, peak resident memory of the process, antecedents (or binary features for rule
sets), status and gap, test accuracy. Targets (issue 13): every fit within its budget + max(1 s, 5%),
peak memory <= 2 GB, no crash.

Run by hand: ``python benchmarks/raw_data.py [--quick]``; writes ``benchmarks/results/raw_data.json``
and the table in its history file, ``benchmarks/history/`` (and the summary, ``BENCHMARKS.md``). Needs ``../shared``
beside the repository (or ``OPTRULES_SHARED``).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
import warnings
from pathlib import Path

from benchmarks_md import stamp, write_block

from optrules.files import write_text

HERE = Path(__file__).resolve().parent
SHARED = Path(os.environ.get("OPTRULES_SHARED", HERE.parent.parent / "shared"))
RESULTS = HERE / "results" / "raw_data.json"
OUTER_TIMEOUT = 900  # seconds: a run past this is reported as not returning

COMPAS_LEAKS = ["is_recid", "is_violent_recid", "r_case_number", "r_charge_degree", "r_days_from_arrest",
                "r_offense_date", "r_charge_desc", "r_jail_in", "r_jail_out", "violent_recid", "vr_case_number",
                "vr_charge_degree", "vr_offense_date", "vr_charge_desc", "decile_score", "decile_score.1",
                "score_text", "v_decile_score", "v_score_text", "event", "end", "start", "type_of_assessment",
                "v_type_of_assessment"]

TABLES = {
    "bank-full": dict(path="bank_marketing/bank-full.csv", sep=";", target="y"),
    # names decile_score and priors_count twice, which the command line refuses: read by pandas
    "compas (raw)": dict(path="compas/compas-scores-two-years.csv", target="two_year_recid", pandas=True,
                         drop=COMPAS_LEAKS + ["priors_count.1"]),
    "heart": dict(path="heart_cleveland/processed.cleveland.data", header=False, target="x13", positive_above=0),
    "ionosphere": dict(path="ionosphere/ionosphere.csv", header=False, target="x34"),
    "pima": dict(path="pima/diabetes.csv", header=False, target="x8"),
    "mushroom": dict(path="mushroom/agaricus-lepiota.data", header=False, target="x0"),
    # starts with patient numbers (569 distinct integers), which the binarizer leaves out as identifiers
    "wdbc": dict(path="wdbc/wdbc.csv", header=False, target="x1"),
    "banknote": dict(path="banknote/data_banknote_authentication.csv", header=False, target="x4"),
    "ilpd": dict(path="ilpd/ILPD.csv", header=False, target="x10"),
    "liver": dict(path="liver_bupa/bupa.csv", header=False, target="x6"),
    "transfusion": dict(path="transfusion/transfusion.csv",
                        target="whether he/she donated blood in March 2007"),
    "tictactoe": dict(path="tictactoe/tictactoe.csv", header=False, target="x9"),
    "house votes": dict(path="house_votes/house-votes-84.data", header=False, target="x0"),
    "car (4 classes)": dict(path="car_evaluation/car.data", header=False, target="x6"),
    # the whole attribute space of each MONK problem (the .test files), space-separated with a row name
    "monks-1": dict(path="monks/monks-1.test", whitespace=True, target="0"),
    "monks-2": dict(path="monks/monks-2.test", whitespace=True, target="0"),
    "monks-3": dict(path="monks/monks-3.test", whitespace=True, target="0"),
    "mixed 5000x20": dict(generated=True, target="outcome"),
    # every antecedent of a wide table (~218k conjunctions of up to 2 of 660 features) in 200 MB
    "wide 3000x173": dict(generated=dict(n_rows=3000, n_numeric=21, n_text=2, n_binary=150, seed=5), target="outcome",
                          options=dict(rulelist=dict(regularization=0.0005, max_antecedents=None, max_memory=200 << 20),
                                       frl=dict(max_antecedents=None, max_memory=200 << 20),
                                       ruleset=dict(max_memory=200 << 20))),
    "bank-full x5": dict(path="bank_marketing/bank-full.csv", sep=";", target="y", replicate=5),
    # large N as a user's own export: a million rows of identifiers, notes, measurements and categories
    "mixed 1000000x36": dict(generated=dict(n_rows=1_000_000, n_numeric=30, n_text=6, seed=7), target="outcome"),
}
FAMILIES = ("rulelist", "frl", "ruleset")


def read(name: str):
    from optrules.cli import _read_table

    spec = TABLES[name]
    if spec.get("generated"):
        from optrules.data.synthetic import make_mixed_table

        frame = make_mixed_table(**(spec["generated"] if isinstance(spec["generated"], dict) else
                                    dict(n_rows=5000, seed=11)))
    elif spec.get("whitespace") or spec.get("pandas"):  # (pandas names a repeated column name.1)
        import pandas as pd

        whitespace = spec.get("whitespace")
        frame = pd.read_csv(SHARED / "data" / spec["path"], sep=r"\s+" if whitespace else ",",
                            header=None if whitespace else 0)
        frame.columns = [str(c) for c in frame.columns]
    else:
        frame = _read_table(str(SHARED / "data" / spec["path"]), spec.get("sep"), "utf-8", spec.get("header", True))
        frame.columns = [str(c) for c in frame.columns]
    if spec.get("replicate"):  # large N: copies with the continuous columns jittered, so rows differ
        import numpy as np
        import pandas as pd

        rng = np.random.default_rng(0)
        copies = []
        for _ in range(spec["replicate"]):
            copy = frame.copy()
            for column in ("balance", "duration"):
                copy[column] = np.round(copy[column] * rng.normal(1.0, 0.02, len(copy)))
            copies.append(copy)
        frame = pd.concat(copies, ignore_index=True)
    y = frame[spec["target"]]
    if "positive_above" in spec:
        y = (y > spec["positive_above"]).astype(int)
    X = frame.drop(columns=[spec["target"], *[c for c in spec.get("drop", []) if c in frame.columns]])
    return X, y


def run_one(name: str, family: str, time_limit: float | None) -> dict:
    from sklearn.model_selection import train_test_split

    from optrules import FallingRuleListClassifier, RuleListClassifier, RuleSetClassifier

    estimator = {"rulelist": RuleListClassifier, "frl": FallingRuleListClassifier, "ruleset": RuleSetClassifier}[family]
    options = {"missing": "category", **TABLES[name].get("options", {}).get(family, {})}
    if time_limit is not None:
        options["time_limit"] = time_limit
    start = time.perf_counter()
    X, y = read(name)
    read_s = time.perf_counter() - start
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, stratify=y, random_state=0)
    if time_limit is not None:  # the reading counts, as in `optrules fit`
        options["time_limit"] = max(time_limit - (time.perf_counter() - start), 0.01)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = estimator(**options).fit(X_train, y_train)
    wall = time.perf_counter() - start
    certificate = model.certificate_
    antecedents = getattr(model, "antecedents_", None)
    return {
        "table": name, "family": family, "budget_s": time_limit, "rows": len(X), "columns": X.shape[1],
        "read_s": read_s, "wall_s": wall, "status": certificate.status, "objective": certificate.objective,
        "gap": certificate.gap, "antecedents": len(antecedents) if antecedents is not None else None,
        "features": len(model.binarizer_.feature_names_),
        "dropped": sorted(model.binarizer_.dropped_columns_),
        "report": str(antecedents.report) if antecedents is not None else "",
        "test_accuracy": float(model.score(X_test, y_test)), "rules": len(model.rule_list_),
        "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "warnings": sorted({str(w.message)[:120] for w in caught}),
    }


def cancel_one(name: str, family: str, after: float) -> dict:
    """Ctrl-C (SIGINT) ``after`` seconds into a fit with a 300 s budget: how long until it returns."""
    import signal
    import threading

    from optrules import FallingRuleListClassifier, RuleListClassifier, RuleSetClassifier

    estimator = {"rulelist": RuleListClassifier, "frl": FallingRuleListClassifier, "ruleset": RuleSetClassifier}[family]
    X, y = read(name)
    sent = {}

    def interrupt():
        sent["at"] = time.perf_counter()
        os.kill(os.getpid(), signal.SIGINT)

    timer = threading.Timer(after, interrupt)
    start = time.perf_counter()
    timer.start()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = estimator(missing="category", time_limit=300, **TABLES[name].get("options", {}).get(family, {})).fit(X, y)
    end = time.perf_counter()
    timer.cancel()
    return {"table": name, "family": family, "after_s": after, "status": model.certificate_.status,
            "latency_s": end - sent["at"] if "at" in sent else None, "fit_s": end - start,
            "stopped_in": model.certificate_.counters.get("stopped_in", "")}


def effective_budget(row) -> float | None:
    """The run's time limit: the one given, or the family's default (rule sets: 120 s; others: none)."""
    if row["budget_s"] is not None:
        return row["budget_s"]
    from optrules import FallingRuleListClassifier, RuleListClassifier, RuleSetClassifier

    estimator = {"rulelist": RuleListClassifier, "frl": FallingRuleListClassifier, "ruleset": RuleSetClassifier}
    return estimator[row["family"]]().time_limit


def within(row) -> str:
    if row.get("error"):
        return "no"
    budget = effective_budget(row)
    if budget is None:
        return "(none)"
    # a given budget counts the reading (it is what is left of it that the fit gets, as in `optrules
    # fit`); an estimator's default one starts at fit(), after the reading (20 s for a million rows)
    spent = row["wall_s"] - (row.get("read_s", 0.0) if row["budget_s"] is None else 0.0)
    return "yes" if spent <= budget + max(1.0, 0.05 * budget) else "no"


def _budget_text(row) -> str:
    if row["budget_s"] is not None:
        return f"{row['budget_s']:g}"
    budget = effective_budget(row)
    return "default" + (f" ({budget:g})" if budget is not None else "")


def table(results) -> str:
    lines = ["| table | rows x cols | family | budget s | read+fit s | within | peak MB | antecedents (features) | "
             "status | gap (rule sets: mistakes) | test acc | rules |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        if r.get("error"):
            lines.append(f"| {r['table']} |  | {r['family']} | {_budget_text(r)} |  | no |  |  | "
                         f"{r['error']} |  |  |  |")
            continue
        size = f"{r['antecedents']:,} ({r['features']:,})" if r["antecedents"] is not None else f"({r['features']:,})"
        gap = f"{r['gap']:,.0f}" if r["family"] == "ruleset" else f"{r['gap']:.4f}"
        lines.append(
            f"| {r['table']} | {r['rows']:,} x {r['columns']} | {r['family']} | {_budget_text(r)} | "
            f"{r['wall_s']:.1f} | {within(r)} | {r['peak_mb']:.0f} | {size} | {r['status']} | {gap} | "
            f"{r['test_accuracy']:.3f} | {r['rules']} |")
    return "\n".join(lines)


def summary(results) -> str:
    """The headline of :func:`table`: per family and budget, how many fits kept their budget and certified,
    and the median and largest time and peak memory."""
    lines = ["| family | budget | fits | within budget | certified | read+fit s, median (max) | peak MB, max |",
             "|---|---|---|---|---|---|---|"]
    for family in FAMILIES:
        for default in (True, False):
            rows = [r for r in results if r["family"] == family and (r["budget_s"] is None) == default
                    and not r.get("error")]
            if not rows:
                continue
            seconds = sorted(r["wall_s"] for r in rows)
            lines.append(f"| {family} | {'default' if default else '30 s'} | {len(rows)} | "
                         f"{sum(within(r) == 'yes' for r in rows)} | {sum(r['status'] == 'optimal' for r in rows)} | "
                         f"{seconds[len(seconds) // 2]:.1f} ({seconds[-1]:.1f}) | {max(r['peak_mb'] for r in rows):,.0f} |")
    return "\n".join(lines)


def cancel_table(rows) -> str:
    lines = ["| table | family | Ctrl-C after s | status | heard in | returned after s |", "|---|---|---|---|---|---|"]
    for r in rows:
        latency = "" if r.get("latency_s") is None else f"{r['latency_s']:.2f}"
        lines.append(f"| {r['table']} | {r['family']} | {r['after_s']:g} | {r['status']} | {r.get('stopped_in', '')} | "
                     f"{latency} |")
    return "\n".join(lines)


def cancel_summary(rows) -> str:
    """The headline of :func:`cancel_table`: per family, how long a fit took to return after Ctrl-C."""
    lines = ["| family | Ctrl-C sent | stopped by it | finished first | returned after s, median (max) |",
             "|---|---|---|---|---|"]
    for family in FAMILIES:
        mine = [r for r in rows if r["family"] == family]
        latencies = sorted(r["latency_s"] for r in mine if r.get("latency_s") is not None)
        if not mine:
            continue
        spread = f"{latencies[len(latencies) // 2]:.2f} ({latencies[-1]:.2f})" if latencies else ""
        lines.append(f"| {family} | {len(mine)} | {len(latencies)} | {len(mine) - len(latencies)} | {spread} |")
    return "\n".join(lines)


def publish_cancel(rows) -> None:
    stamped = stamp("python benchmarks/raw_data.py --cancel") + "\n\n"
    write_block("raw_data_cancel", stamped + cancel_table(rows),
                "Ctrl-C on raw tables: time from the signal to the returned model",
                summary=stamped + cancel_summary(rows))


def publish(results) -> None:
    stamped = stamp("python benchmarks/raw_data.py") + "\n\n"
    write_block("raw_data", stamped + table(results), "Raw tables, every family, defaults and a 30 s budget",
                summary=stamped + summary(results))


def measure_cancel(tables, families) -> None:
    rows = []
    for name in tables:
        for family in families:
            for after in (0.5, 2.0, 6.0):
                command = [sys.executable, __file__, "--cancel-one", name, family, str(after)]
                done = subprocess.run(command, capture_output=True, text=True, timeout=OUTER_TIMEOUT)
                lines = done.stdout.strip().splitlines()
                row = json.loads(lines[-1]) if done.returncode == 0 and lines else {
                    "table": name, "family": family, "after_s": after, "status": "crashed",
                    "latency_s": None, "error": (done.stderr.strip().splitlines() or [""])[-1][:150]}
                rows.append(row)
                print(json.dumps(row), flush=True)
    (HERE / "results").mkdir(exist_ok=True)
    path = HERE / "results" / "raw_data_cancel.json"
    done = {(r["table"], r["family"], r["after_s"]) for r in rows}
    earlier = json.loads(path.read_text()) if path.exists() else []
    rows = [r for r in earlier if (r["table"], r["family"], r["after_s"]) not in done] + rows
    order = {name: i for i, name in enumerate(TABLES)}
    rows.sort(key=lambda r: (order.get(r["table"], 99), FAMILIES.index(r["family"]), r["after_s"]))
    write_text(path, json.dumps(rows, indent=2))
    publish_cancel(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="time_limit=30 only, no defaults runs")
    parser.add_argument("--tables", nargs="+", default=list(TABLES))
    parser.add_argument("--families", nargs="+", default=list(FAMILIES))
    parser.add_argument("--one", nargs=3, metavar=("TABLE", "FAMILY", "BUDGET"), help=argparse.SUPPRESS)
    parser.add_argument("--cancel", action="store_true", help="measure how fast Ctrl-C stops each family")
    parser.add_argument("--table-only", action="store_true",
                        help="rewrite the tables from the saved results (with --cancel: the Ctrl-C ones)")
    parser.add_argument("--cancel-one", nargs=3, metavar=("TABLE", "FAMILY", "AFTER"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        name, family, budget = args.one
        print(json.dumps(run_one(name, family, None if budget == "default" else float(budget))))
        return
    if args.cancel_one:
        name, family, after = args.cancel_one
        print(json.dumps(cancel_one(name, family, float(after))))
        return
    if args.cancel and args.table_only:
        publish_cancel(json.loads((HERE / "results" / "raw_data_cancel.json").read_text()))
        return
    if args.cancel:
        measure_cancel(args.tables, args.families)
        return
    if args.table_only:
        publish(json.loads(RESULTS.read_text()))
        return
    budgets = [30.0] if args.quick else [None, 30.0]
    results = []
    for name in args.tables:
        for family in args.families:
            for budget in budgets:
                command = [sys.executable, __file__, "--one", name, family, "default" if budget is None else str(budget)]
                try:
                    done = subprocess.run(command, capture_output=True, text=True, timeout=OUTER_TIMEOUT)
                    lines = done.stdout.strip().splitlines()
                    row = json.loads(lines[-1]) if done.returncode == 0 and lines else {
                        "table": name, "family": family, "budget_s": budget,
                        "error": (done.stderr.strip().splitlines() or ["crashed"])[-1][:150]}
                except subprocess.TimeoutExpired:
                    row = {"table": name, "family": family, "budget_s": budget,
                           "error": f"did not return in {OUTER_TIMEOUT} s"}
                results.append(row)
                print(json.dumps({k: v for k, v in row.items() if k not in ("report", "warnings")}), flush=True)
    RESULTS.parent.mkdir(exist_ok=True)
    # a run of some tables replaces their rows and keeps the others
    done = {(r["table"], r["family"], r["budget_s"]) for r in results}
    earlier = json.loads(RESULTS.read_text()) if RESULTS.exists() else []
    results = [r for r in earlier if (r["table"], r["family"], r["budget_s"]) not in done] + results
    order = {name: i for i, name in enumerate(TABLES)}
    results.sort(key=lambda r: (order.get(r["table"], 99), FAMILIES.index(r["family"]), r["budget_s"] is not None))
    write_text(RESULTS, json.dumps(results, indent=2))
    publish(results)


if __name__ == "__main__":
    main()
