"""AIX360's BRCG (``aix360.algorithms.rbm.BooleanRuleCG``) next to optrules' RuleSetClassifier on WDBC.

AIX360 0.3.0 pins pandas<2, numpy<=1.24 and scikit-learn<1.2, so it cannot share optrules' environment:
this script runs twice, once in a throwaway virtual environment that has only AIX360,
    python3 -m venv /tmp/aixv && /tmp/aixv/bin/pip install "aix360[rbm]"
    /tmp/aixv/bin/python benchmarks/aix360_wdbc.py --aix360 > benchmarks/results/aix360_wdbc.json
and once in optrules' own (``python benchmarks/aix360_wdbc.py``), which reads that file, runs optrules
on the same folds at the same complexity and prints both. Data: scikit-learn's copy of WDBC (positive =
malignant), AIX360's FeatureBinarizer with negations for both (decile thresholds, 540 features);
10-fold stratified CV, shuffle seed 0. cvxpy's default ECOS solver no longer ships: AIX360 uses CLARABEL.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import StratifiedKFold

from optrules.files import write_text

HERE = Path(__file__).resolve().parent
RESULT = HERE / "results" / "aix360_wdbc.json"


def data():
    bunch = load_breast_cancer()
    X = pd.DataFrame(bunch.data, columns=bunch.feature_names)
    y = (bunch.target == 0).astype(int)  # 0 = malignant in scikit-learn's copy
    return X, y


def splits(y):
    return list(StratifiedKFold(n_splits=10, shuffle=True, random_state=0).split(np.zeros(len(y)), y))


def run_aix360():
    from aix360.algorithms.rbm import BooleanRuleCG, FeatureBinarizer

    X, y = data()
    rows = []
    for train, test in splits(y):
        binarizer = FeatureBinarizer(negations=True)
        X_train = binarizer.fit_transform(X.iloc[train])
        X_test = binarizer.transform(X.iloc[test])
        start = time.perf_counter()
        model = BooleanRuleCG(solver="CLARABEL", silent=True)
        model.fit(X_train, y[train])
        elapsed = time.perf_counter() - start
        rules = model.explain()["rules"]
        literals = sum(rule.count(" AND ") + 1 for rule in rules)
        rows.append({"accuracy": float(np.mean(model.predict(X_test) == y[test])), "clauses": len(rules),
                     "complexity": len(rules) + literals, "time": elapsed})
    print(json.dumps(rows))


def run_optrules():
    from optrules import RuleSetClassifier

    X, y = data()
    aix = json.loads(RESULT.read_text())
    bound = int(round(np.mean([r["complexity"] for r in aix])))
    variants = {"beam pricing only": dict(exact_pricing=False), "beam + exact pricing (2 s per call)":
                dict(exact_pricing=True, pricing_time_limit=2)}
    results = [("AIX360 BooleanRuleCG", aix)]
    for label, options in variants.items():
        rows = []
        for train, test in splits(y):
            start = time.perf_counter()
            model = RuleSetClassifier(complexity=bound, time_limit=60, **options).fit(X.iloc[train], y[train])
            rows.append({"accuracy": float(np.mean(model.predict(X.iloc[test]) == y[test])),
                         "complexity": model.rule_set_.complexity, "time": time.perf_counter() - start,
                         "status": model.certificate_.status, "gap": model.certificate_.gap,
                         "lower_bound": model.certificate_.lower_bound})
        results.append((f"optrules RuleSetClassifier, complexity <= {bound}, {label}", rows))
    for name, result in results:
        acc = [r["accuracy"] for r in result]
        print(f"{name}: accuracy {np.mean(acc):.3f} (sd {np.std(acc, ddof=1):.3f}), complexity "
              f"{np.mean([r['complexity'] for r in result]):.1f}, {np.mean([r['time'] for r in result]):.2f} s per fold"
              + ("" if "status" not in result[0] else
                 f", certified {sum(r['status'] == 'optimal' for r in result)}/{len(result)}, lower bound > 0 on "
                 f"{sum(r['lower_bound'] > 0 for r in result)}/{len(result)}"))
    write_text(HERE / "results" / "optrules_wdbc.json", json.dumps(results))


if __name__ == "__main__":
    run_aix360() if "--aix360" in sys.argv else run_optrules()
