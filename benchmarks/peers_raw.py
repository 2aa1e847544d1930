"""Every family on every raw table of ``../shared/data``, side by side with the peers, on the same splits.

For each table (``raw_data.TABLES``, read as a user's file is) and each of ``--splits`` stratified 70/30
splits (seed = split number):

* ours, rule list, the defaults: ``RuleListClassifier()`` (lambda 0.01; thresholds from a boosted
  reference, ``max_card="auto"``, negations, missing values as a category; 120 s budget);
* ours, rule list, quantile: ``RuleListClassifier(thresholds="quantile", max_card=2, negations=False,
  time_limit=10)`` (the space that was the default before the guided one);
* ours, falling list and rule set, the defaults: ``FallingRuleListClassifier()``, ``RuleSetClassifier()``;
  and the rule set of the quantile space (``thresholds="quantile"``, its default budget) on the first split
  (``--quantile-rule-set-splits``), the accuracy the guided default must keep;
* GOSDT 1.0.4's rule list on its threshold-guessing binarizer (40 boosted stumps), in its own venv
  (``../shared/peers/setup.sh``), ``time_limit=60``;
* imodels' ``GreedyRuleListClassifier(max_depth=5)`` and ruleopt's ``RUGClassifier(max_depth=3)``.

The peers need numbers without missing values: their input is the table one-hot encoded (pandas'
``get_dummies``, a column for missing values; text of more than 50 values left out) with numeric NaN set
to the training median; ours reads the table as it is. Reported per table: certified splits, mean fit
seconds (largest too), mean test accuracy, mean rules; for rule sets the least ratio of lower bound to
objective.

Run by hand: ``python benchmarks/peers_raw.py [--splits 5] [--tables pima heart]``; writes
``benchmarks/results/peers_raw.json`` and the table in its history file, benchmarks/history/ (and the summary,
BENCHMARKS.md). Peers: ``OPTRULES_PEERS`` (default
``~/.cache/optrules-peers``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
from benchmarks_md import stamp, write_block
from raw_data import TABLES, read

from optrules.files import write_text

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "peers_raw.json"
PEERS = Path(os.environ.get("OPTRULES_PEERS", Path.home() / ".cache" / "optrules-peers"))
SKIPPED = {"wide 3000x173", "bank-full x5", "mixed 1000000x36"}  # shapes for budgets, not accuracy

PEER_SCRIPT = r'''
import json, sys, time, warnings
import numpy as np, pandas as pd
warnings.simplefilter("ignore")
train, test, which = pd.read_csv(sys.argv[1]), pd.read_csv(sys.argv[2]), sys.argv[3]
ytr, yte = train.pop("__y"), test.pop("__y")
out = {}
start = time.perf_counter()
if which == "gosdt":
    from gosdt import GOSDTClassifier, ThresholdGuessBinarizer
    binarizer = ThresholdGuessBinarizer(n_estimators=40, max_depth=1, random_state=2021).set_output(transform="pandas")
    Xtr = binarizer.fit_transform(train, ytr)
    model = GOSDTClassifier(regularization=0.01, rule_list=True, time_limit=60, verbose=False).fit(Xtr, ytr)
    out["accuracy"] = float(np.mean(model.predict(binarizer.transform(test)) == yte))
    out["features"] = int(Xtr.shape[1])
    out["status"] = str(getattr(model.result_, "status", ""))
elif which == "greedy":
    from imodels import GreedyRuleListClassifier
    model = GreedyRuleListClassifier(max_depth=5).fit(train.to_numpy(dtype=float), ytr.to_numpy())
    out["accuracy"] = float(np.mean(np.asarray(model.predict(test.to_numpy(dtype=float))).ravel() == yte.to_numpy()))
else:
    from ruleopt import RUGClassifier
    model = RUGClassifier(max_depth=3, random_state=0).fit(train.to_numpy(dtype=float), ytr.to_numpy())
    out["accuracy"] = float(np.mean(model.predict(test.to_numpy(dtype=float)) == yte.to_numpy()))
out["seconds"] = time.perf_counter() - start
print(json.dumps(out))
'''


#: text columns with more distinct values than this are left out of the peers' input
MAX_PEER_VALUES = 50


def numeric_for_peers(X_train, X_test):
    """One-hot (a column for missing values) and training medians for missing numbers, as the peers need;
    text columns of more than :data:`MAX_PEER_VALUES` values left out."""
    import pandas as pd

    both = pd.concat([X_train, X_test], keys=["train", "test"])
    text = [c for c in both.columns if not pd.api.types.is_numeric_dtype(both[c])]
    # text of many values (names, dates, free text) would be thousands of one-hot columns: left out
    many = [c for c in text if both[c].nunique() > MAX_PEER_VALUES]
    text = [c for c in text if c not in many]
    encoded = pd.get_dummies(both.drop(columns=many), columns=text, dummy_na=True, dtype=float)
    train, test = encoded.loc["train"].copy(), encoded.loc["test"].copy()
    medians = train.median(numeric_only=True)
    return train.fillna(medians).fillna(0.0), test.fillna(medians).fillna(0.0)


def run_peer(which: str, train, test, y_train, y_test) -> dict:
    venv = PEERS / ("gosdt" if which == "gosdt" else "rules") / "bin" / "python"
    if not venv.exists():
        return {"error": f"no {venv}: run ../shared/peers/setup.sh"}
    with tempfile.TemporaryDirectory() as folder:
        paths = [Path(folder) / "train.csv", Path(folder) / "test.csv"]
        for frame, y, path in ((train, y_train, paths[0]), (test, y_test, paths[1])):
            frame.assign(__y=np.asarray(y)).to_csv(path, index=False)
        done = subprocess.run([str(venv), "-c", PEER_SCRIPT, str(paths[0]), str(paths[1]), which],
                              capture_output=True, text=True, timeout=600)
    if done.returncode:
        return {"error": done.stderr.strip().splitlines()[-1][:160] if done.stderr.strip() else "failed"}
    return json.loads(done.stdout.strip().splitlines()[-1])


def run_ours(family: str, options: dict, X_train, X_test, y_train, y_test) -> dict:
    from optrules import FallingRuleListClassifier, RuleListClassifier, RuleSetClassifier

    make = {"rulelist": RuleListClassifier, "frl": FallingRuleListClassifier, "ruleset": RuleSetClassifier}[family]
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = make(**options).fit(X_train, y_train)
    certificate = model.certificate_
    row = {"seconds": time.perf_counter() - start, "status": certificate.status, "gap": certificate.gap,
           "bound_ratio": certificate.lower_bound / certificate.objective if certificate.objective > 0 else 1.0,
           "accuracy": float(model.score(X_test, y_test)), "features": len(model.binarizer_.features_)}
    if family == "ruleset":
        row["rules"] = len(model.rule_set_.clauses)
    else:
        row["rules"] = len(model.rule_list_)
        row["antecedents"] = len(model.antecedents_)
        row["max_card"] = model.max_card_
    if model.binarizer_.reference_ is not None:
        row["reference_accuracy"] = model.reference_score(X_test, y_test)
    return row


#: (column, family, options): the defaults of each family, and the quantile space of rule lists
OURS = (("guided", "rulelist", {}),
        ("quantile", "rulelist", dict(thresholds="quantile", max_card=2, negations=False, time_limit=10)),
        ("frl", "frl", {}),
        ("ruleset", "ruleset", {}))
QUANTILE_RULE_SET = ("ruleset_quantile", "ruleset", dict(thresholds="quantile"))


def run_table(name: str, splits: int, peers: bool, quantile_rule_set_splits: int) -> list[dict]:
    from sklearn.model_selection import train_test_split

    X, y = read(name)
    rows = []
    for split in range(splits):
        X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, stratify=y, random_state=split)
        row = {"table": name, "split": split, "rows": len(X), "columns": X.shape[1]}
        binary = np.unique(np.asarray(y)).size == 2  # (falling lists and rule sets learn two classes)
        for column, family, options in OURS + ((QUANTILE_RULE_SET,) if split < quantile_rule_set_splits else ()):
            if family == "rulelist" or binary:
                row[column] = run_ours(family, options, X_train, X_test, y_train, y_test)
        if peers:
            train, test = numeric_for_peers(X_train, X_test)
            classes = np.unique(np.asarray(y))  # the peers take class indices (RUG: integers only)
            codes_train, codes_test = np.searchsorted(classes, y_train), np.searchsorted(classes, y_test)
            for which in ("gosdt", "greedy", "rug"):
                row[which] = run_peer(which, train, test, codes_train, codes_test)
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


def _values(rows, method, key):
    return [r[method][key] for r in rows if key in r.get(method, {})]


def _mean(rows, method, key):
    values = _values(rows, method, key)
    return float(np.mean(values)) if values else float("nan")


def _certified(rows, method) -> str:
    done = [r[method]["status"] == "optimal" for r in rows if method in r]
    return f"{sum(done)}/{len(done)}" if done else "-"


def table(results) -> str:
    lines = ["| table | rows x cols | rule list: certified | s (max) | acc % | rules | reference acc % | "
             "quantile 10 s: certified | acc % | GOSDT rule list: s | acc % | imodels greedy acc % | RUG acc % |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, rows in _by_table(results):
        lines.append(
            f"| {name} | {rows[0]['rows']:,} x {rows[0]['columns']} | {_certified(rows, 'guided')} | "
            f"{_mean(rows, 'guided', 'seconds'):.1f} ({max(_values(rows, 'guided', 'seconds')):.1f}) | "
            f"{100 * _mean(rows, 'guided', 'accuracy'):.1f} | "
            f"{_mean(rows, 'guided', 'rules'):.1f} | {100 * _mean(rows, 'guided', 'reference_accuracy'):.1f} | "
            f"{_certified(rows, 'quantile')} | {100 * _mean(rows, 'quantile', 'accuracy'):.1f} | "
            f"{_mean(rows, 'gosdt', 'seconds'):.1f} | {100 * _mean(rows, 'gosdt', 'accuracy'):.1f} | "
            f"{100 * _mean(rows, 'greedy', 'accuracy'):.1f} | {100 * _mean(rows, 'rug', 'accuracy'):.1f} |")
    return "\n".join(lines)


def families_table(results) -> str:
    lines = ["| table | falling list: certified | s (max) | acc % | rules | rule set: certified | least bound / "
             "objective | s (max) | acc % | clauses | rule set, quantile (split 0): bound / objective | s | acc % |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, rows in _by_table(results):
        if not any("frl" in r for r in rows):
            continue
        ratios = _values(rows, "ruleset", "bound_ratio")
        lines.append(
            f"| {name} | {_certified(rows, 'frl')} | {_mean(rows, 'frl', 'seconds'):.1f} "
            f"({max(_values(rows, 'frl', 'seconds')):.1f}) | {100 * _mean(rows, 'frl', 'accuracy'):.1f} | "
            f"{_mean(rows, 'frl', 'rules'):.1f} | {_certified(rows, 'ruleset')} | {min(ratios):.3f} | "
            f"{_mean(rows, 'ruleset', 'seconds'):.1f} ({max(_values(rows, 'ruleset', 'seconds')):.1f}) | "
            f"{100 * _mean(rows, 'ruleset', 'accuracy'):.1f} | {_mean(rows, 'ruleset', 'rules'):.1f} | "
            f"{_mean(rows, 'ruleset_quantile', 'bound_ratio'):.3f} | {_mean(rows, 'ruleset_quantile', 'seconds'):.1f} | "
            f"{100 * _mean(rows, 'ruleset_quantile', 'accuracy'):.1f} |")
    return "\n".join(lines)


def _by_table(results):
    for name in dict.fromkeys(r["table"] for r in results):
        yield name, [r for r in results if r["table"] == name]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--splits", type=int, default=5)
    parser.add_argument("--tables", nargs="+", default=[t for t in TABLES if t not in SKIPPED])
    parser.add_argument("--no-peers", action="store_true")
    parser.add_argument("--quantile-rule-set-splits", type=int, default=1)
    args = parser.parse_args()
    results = [row for name in args.tables
               for row in run_table(name, args.splits, not args.no_peers, args.quantile_rule_set_splits)]
    RESULTS.parent.mkdir(exist_ok=True)
    write_text(RESULTS, json.dumps(results, indent=1))
    text = table(results) + "\n\n" + families_table(results)
    write_block("peers_raw", stamp(f"python benchmarks/peers_raw.py --splits {args.splits}") + "\n\n" + text,
                "Raw tables side by side with the peers: every family's defaults, and the quantile space")
    print(text)


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    main()
