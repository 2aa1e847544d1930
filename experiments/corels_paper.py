"""Reproduce the CORELS paper's ProPublica experiments (Angelino et al., JMLR 2018).

    python experiments/corels_paper.py cv          # 10-fold CV, sets A and B, lambda 0.02/0.01/0.005,
                                                   # comparison panel, fairness by race (Figs 4, 7, 9, 11, 19, 20)
    python experiments/corels_paper.py two         # age and priors only (Fig 13)
    python experiments/corels_paper.py traces      # execution traces on compas_train (Figs 14, 16, 18)
    python experiments/corels_paper.py ablation    # Table 4 at lambda 0.005 on compas_train, budget-capped

Folds run in parallel through joblib (``--n-jobs``); with a Dask or Ray cluster, wrap the call in
``joblib.parallel_backend("dask")`` / ``("ray")`` and the same code runs there. Results go to
``docs/results/corels_*.json``, figures to ``docs/figures/corels_*.png``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from joblib import Parallel, delayed
from sklearn.model_selection import KFold

from optrules import Binarizer, RuleListClassifier, load_compas

ROOT = Path(__file__).resolve().parents[1]
RESULTS, FIGURES = ROOT / "docs" / "results", ROOT / "docs" / "figures"
LAMBDAS = (0.02, 0.01, 0.005)
SHARED = Path(os.environ.get("OPTRULES_SHARED", ROOT.parent / "shared"))


def folds(n, seed=0):
    return list(KFold(n_splits=10, shuffle=True, random_state=seed).split(np.zeros(n)))


def rates(y, predicted, groups):
    out = {}
    for group in ("African-American", "Caucasian"):
        mask = groups == group
        t, p = y[mask] == 1, predicted[mask] == 1
        out[group] = {"TPR": float(np.mean(p[t])), "FPR": float(np.mean(p[~t])),
                      "TNR": float(np.mean(~p[~t])), "FNR": float(np.mean(~p[t]))}
    return out


def corels_fold(feature_set, regularization, k, train, test, columns=None):
    data = load_compas(feature_set)
    X = data.X if columns is None else data.X[columns]
    model = RuleListClassifier(regularization=regularization).fit(X.iloc[train], data.y[train])
    predicted = model.predict(X.iloc[test])
    return {
        "feature_set": feature_set, "lambda": regularization, "fold": k,
        "train_accuracy": float(model.score(X.iloc[train], data.y[train])),
        "test_accuracy": float(np.mean(predicted == data.y[test])), "rules": len(model.rule_list_),
        "status": model.certificate_.status, "time": model.certificate_.counters["total_time"],
        "antecedents": len(model.antecedents_), "list": str(model.rule_list_),
        "uses_race": any("race" in c for r in model.rule_list_.rules for c in r.conditions),
        "fairness": rates(data.y[test], predicted, data.extra["race"][test]),
    }


def panel_fold(k, train, test):
    """The comparison methods on the same folds and binary features (set A)."""
    from sklearn.ensemble import AdaBoostClassifier, RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.svm import LinearSVC
    from sklearn.tree import DecisionTreeClassifier

    data = load_compas("A")
    binarizer = Binarizer().fit(data.X.iloc[train])
    F_train, F_test = binarizer.transform(data.X.iloc[train]), binarizer.transform(data.X.iloc[test])
    y_train, y_test = data.y[train], data.y[test]
    models = {
        "logistic regression": LogisticRegression(max_iter=1000),
        "linear SVM": LinearSVC(),
        "AdaBoost": AdaBoostClassifier(random_state=0),
        "CART": DecisionTreeClassifier(min_samples_leaf=20, random_state=0),
        "C4.5 (entropy tree)": DecisionTreeClassifier(criterion="entropy", min_samples_leaf=20, random_state=0),
        "random forest": RandomForestClassifier(n_estimators=200, min_samples_leaf=5, random_state=0),
    }
    out = {"fold": k}
    for name, model in models.items():
        model.fit(F_train, y_train)
        size = int(model.get_n_leaves()) if hasattr(model, "get_n_leaves") else None
        out[name] = {"accuracy": float(np.mean(model.predict(F_test) == y_test)), "size": size}
    try:
        import pandas as pd
        import wittgenstein as lw

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            columns = [f"f{j}" for j in range(F_train.shape[1])]
            ripper = lw.RIPPER(random_state=0)
            ripper.fit(pd.DataFrame(F_train.astype(int), columns=columns).assign(label=y_train), class_feat="label",
                       pos_class=1)
            predicted = np.asarray(ripper.predict(pd.DataFrame(F_test.astype(int), columns=columns)), dtype=int)
        out["RIPPER"] = {"accuracy": float(np.mean(predicted == y_test)), "size": len(ripper.ruleset_.rules)}
    except ImportError:
        pass
    compas = np.isin(data.extra["score_text"][test], ["Medium", "High"]).astype(int)
    out["COMPAS (medium/high)"] = {"accuracy": float(np.mean(compas == y_test)), "size": None,
                                   "fairness": rates(y_test, compas, data.extra["race"][test])}
    return out


def summary(values):
    values = np.asarray(values, dtype=float)
    return {"mean": float(values.mean()), "sd": float(values.std(ddof=1))}


def run_cv(n_jobs):
    n = len(load_compas("A").y)
    splits = folds(n)
    tasks = [(fs, lam, k, tr, te) for fs in ("A", "B") for lam in LAMBDAS for k, (tr, te) in enumerate(splits)]
    start = time.perf_counter()
    corels = Parallel(n_jobs=n_jobs)(delayed(corels_fold)(*t) for t in tasks)
    panel = Parallel(n_jobs=n_jobs)(delayed(panel_fold)(k, tr, te) for k, (tr, te) in enumerate(splits))
    report = {"elapsed": time.perf_counter() - start, "corels": {}, "panel": {}}
    for fs in ("A", "B"):
        for lam in LAMBDAS:
            rows = [r for r in corels if r["feature_set"] == fs and r["lambda"] == lam]
            report["corels"][f"{fs} {lam}"] = {
                "test_accuracy": summary([r["test_accuracy"] for r in rows]),
                "train_accuracy": summary([r["train_accuracy"] for r in rows]),
                "rules": summary([r["rules"] for r in rows]), "time": summary([r["time"] for r in rows]),
                "certified": sum(r["status"] == "optimal" for r in rows), "uses_race": sum(r["uses_race"] for r in rows),
                "lists": sorted({r["list"] for r in rows}),
            }
    for name in panel[0]:
        if name == "fold":
            continue
        report["panel"][name] = {"accuracy": summary([p[name]["accuracy"] for p in panel]),
                                 "size": None if panel[0][name]["size"] is None else summary([p[name]["size"] for p in panel])}
    fair = {}
    for label, source in (("CORELS (A, 0.005)", [r["fairness"] for r in corels if r["feature_set"] == "A" and r["lambda"] == 0.005]),
                          ("COMPAS (medium/high)", [p["COMPAS (medium/high)"]["fairness"] for p in panel])):
        fair[label] = {g: {m: float(np.mean([f[g][m] for f in source])) for m in ("TPR", "FPR", "TNR", "FNR")}
                       for g in ("African-American", "Caucasian")}
    report["fairness"] = fair
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "corels_cv.json").write_text(json.dumps({"report": report, "folds": corels, "panel": panel}, indent=1, default=float))
    figures(report)
    print(json.dumps({k: v for k, v in report.items() if k != "corels"}, indent=1))
    for key, value in report["corels"].items():
        print(key, {m: round(value[m]["mean"], 4) for m in ("test_accuracy", "train_accuracy", "rules", "time")},
              "certified", value["certified"], "uses race", value["uses_race"])


def figures(report):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    FIGURES.mkdir(parents=True, exist_ok=True)
    # Figure 9: accuracy per method
    names = [f"CORELS {k}" for k in report["corels"]] + list(report["panel"])
    means = [v["test_accuracy"]["mean"] for v in report["corels"].values()] + [v["accuracy"]["mean"] for v in report["panel"].values()]
    sds = [v["test_accuracy"]["sd"] for v in report["corels"].values()] + [v["accuracy"]["sd"] for v in report["panel"].values()]
    fig, ax = plt.subplots(figsize=(9, 5))
    ax.barh(range(len(names)), means, xerr=sds, color=["tab:blue"] * len(report["corels"]) + ["tab:gray"] * len(report["panel"]))
    ax.set_yticks(range(len(names)), names, fontsize=8)
    ax.set_xlim(0.5, 0.72)
    ax.set_xlabel("10-fold test accuracy (mean, sd)")
    ax.set_title("ProPublica COMPAS: CORELS and the comparison panel")
    fig.tight_layout()
    fig.savefig(FIGURES / "corels_accuracy.png", dpi=110)
    # Figure 11: accuracy vs model size
    fig, ax = plt.subplots(figsize=(7, 5))
    for key, v in report["corels"].items():
        ax.errorbar(v["rules"]["mean"] + 1, v["test_accuracy"]["mean"], yerr=v["test_accuracy"]["sd"], fmt="o",
                    label=f"CORELS {key} (rules + default)")
    for name, v in report["panel"].items():
        if v["size"] is not None:
            ax.errorbar(v["size"]["mean"], v["accuracy"]["mean"], yerr=v["accuracy"]["sd"], fmt="s",
                        label=f"{name} ({'rules' if name == 'RIPPER' else 'leaves'})")
    ax.set_xscale("log")
    ax.set_xlabel("model size (rules or leaves)")
    ax.set_ylabel("10-fold test accuracy")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(FIGURES / "corels_size.png", dpi=110)
    # Figure 7: fairness by race
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    for ax, pair in zip(axes, (("TPR", "FPR"), ("TNR", "FNR"))):
        labels, values = [], []
        for method, groups in report["fairness"].items():
            for group, m in groups.items():
                labels.append(f"{method}\n{group}")
                values.append([m[pair[0]], m[pair[1]]])
        values = np.asarray(values)
        x = np.arange(len(labels))
        ax.bar(x - 0.2, values[:, 0], 0.4, label=pair[0])
        ax.bar(x + 0.2, values[:, 1], 0.4, label=pair[1])
        ax.set_xticks(x, labels, fontsize=7)
        ax.legend()
    fig.suptitle("Rates by race (10-fold test sets)")
    fig.tight_layout()
    fig.savefig(FIGURES / "corels_fairness.png", dpi=110)


def run_two(n_jobs):
    n = len(load_compas("A").y)
    rows = Parallel(n_jobs=n_jobs)(delayed(corels_fold)("A", 0.005, k, tr, te, ["age", "priors"])
                                   for k, (tr, te) in enumerate(folds(n)))
    out = {"test_accuracy": summary([r["test_accuracy"] for r in rows]), "rules": summary([r["rules"] for r in rows]),
           "lists": sorted({r["list"] for r in rows})}
    (RESULTS / "corels_two_features.json").write_text(json.dumps(out, indent=1))
    print(json.dumps(out, indent=1))


def reference_fit(regularization, **options):
    from optrules.corels import fit_reference

    base = SHARED / "data" / "compas" / "corels_data"
    return fit_reference(base / "compas_train.out", base / "compas_train.label", base / "compas_train.minor",
                         regularization, **options)


def run_traces():
    import matplotlib

    matplotlib.use("Agg")
    from optrules.plots import plot_trace

    for regularization in LAMBDAS:
        _, certificate = reference_fit(regularization, trace_interval=0.01)
        fig = plot_trace(certificate, title=f"compas_train, lambda = {regularization}")
        fig.savefig(FIGURES / f"corels_trace_{regularization}.png", dpi=90)
        print(regularization, certificate.status, len(certificate.trace), "trace points")


def run_ablation(time_limit):
    variants = {
        "full": {},
        "no priority queue (BFS)": {"policy": "bfs"},
        "no support bounds": {"ablation": "support"},
        "no lookahead": {"ablation": "lookahead"},
        "no symmetry map": {"map_type": "none"},
        "no equivalent points": {"ablation": "equivalent"},
    }
    from optrules.corels.search import Ablation

    switches = {"support": Ablation(minimum_support=False, accurate_support=False, excessive_support=False),
                "lookahead": Ablation(lookahead=False), "equivalent": Ablation(equivalent_points=False)}
    rows = {}
    for name, options in variants.items():
        options = dict(options)
        if "ablation" in options:
            options["ablation"] = switches[options["ablation"]]
        _, cert = reference_fit(0.005, time_limit=time_limit, **options)
        c = cert.counters
        rows[name] = {"status": cert.status, "time": c["total_time"], "objective": cert.objective,
                      "lower_bound": cert.lower_bound, "lower_bound_evaluations": c["lower_bound_evaluations"],
                      "queue_insertions": c["queue_insertions"], "max_queue": c["max_queue_size"],
                      "nodes_expanded": c["nodes_expanded"], "memory_mb": c["memory_bytes"] / 2**20}
        print(name, rows[name], flush=True)
    (RESULTS / "corels_ablation.json").write_text(json.dumps(rows, indent=1))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=["cv", "two", "traces", "ablation"])
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--time-limit", type=float, default=120.0, help="per ablation variant (seconds)")
    args = parser.parse_args()
    RESULTS.mkdir(parents=True, exist_ok=True)
    FIGURES.mkdir(parents=True, exist_ok=True)
    {"cv": lambda: run_cv(args.n_jobs), "two": lambda: run_two(args.n_jobs), "traces": run_traces,
     "ablation": lambda: run_ablation(args.time_limit)}[args.what]()


if __name__ == "__main__":
    sys.exit(main())
