"""ROC of falling rule lists on a train/test split of bank marketing, against CART and random forest.

The paper (Chen and Rudin 2018, Figure 2) traces a falling rule list's ROC by varying the positive
weight w: each w gives one list and one (FPR, TPR) point at its threshold 1/(1+w). We do that with the
certified search, and also draw the ROC curve of each list's own probabilities. CART and random forest
(scikit-learn) get the same binary items. Writes docs/figures/frl_bank_roc.png and
docs/results/frl_bank_roc.json. Run: ``python experiments/frl_bank_roc.py`` (a few minutes).
"""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from joblib import Parallel, delayed  # noqa: E402
from sklearn.ensemble import RandomForestClassifier  # noqa: E402
from sklearn.metrics import roc_auc_score, roc_curve  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402
from sklearn.tree import DecisionTreeClassifier  # noqa: E402

from optrules import FallingRuleListClassifier, load_bank_marketing  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
WEIGHTS = [1.0, 2.0, 3.0, 4.0, 5.0, 7.0, 10.0]
TIME_LIMIT = 150.0


def fit_frl(w, X_train, y_train, X_test, y_test):
    model = FallingRuleListClassifier(w=w, regularization=1e-6, time_limit=TIME_LIMIT, random_state=0).fit(X_train, y_train)
    score = model.predict_proba(X_test)[:, 1]
    predicted = model.predict(X_test)
    tpr = float(np.mean(predicted[y_test == 1] == 1))
    fpr = float(np.mean(predicted[y_test == 0] == 1))
    return {"w": w, "status": model.certificate_.status, "objective": model.objective_, "gap": model.certificate_.gap,
            "rules": len(model.rule_list_), "fpr": fpr, "tpr": tpr, "auc": float(roc_auc_score(y_test, score)),
            "score": score.tolist(), "list": str(model.rule_list_)}


def main():
    data = load_bank_marketing()
    X_train, X_test, y_train, y_test = train_test_split(data.X, data.y, test_size=0.3, stratify=data.y, random_state=0)
    frl = Parallel(n_jobs=2)(delayed(fit_frl)(w, X_train, y_train, X_test, y_test) for w in WEIGHTS)
    others = {
        "CART (depth 5)": DecisionTreeClassifier(max_depth=5, min_samples_leaf=50, random_state=0),
        "random forest": RandomForestClassifier(n_estimators=300, min_samples_leaf=5, n_jobs=2, random_state=0),
    }
    curves = {}
    for name, model in others.items():
        score = model.fit(X_train, y_train).predict_proba(X_test)[:, 1]
        fpr, tpr, _ = roc_curve(y_test, score)
        curves[name] = {"fpr": fpr.tolist(), "tpr": tpr.tolist(), "auc": float(roc_auc_score(y_test, score))}

    fig, ax = plt.subplots(figsize=(6.5, 6))
    for name, curve in curves.items():
        ax.plot(curve["fpr"], curve["tpr"], label=f"{name} (AUC {curve['auc']:.3f})")
    seven = next(r for r in frl if r["w"] == 7.0)
    fpr, tpr, _ = roc_curve(y_test, seven["score"])
    ax.plot(fpr, tpr, "k--", label=f"FRL w=7, its probabilities (AUC {seven['auc']:.3f})")
    frl = sorted(frl, key=lambda r: r["fpr"])
    budgeted = [f"{r['w']:g}" for r in frl if r["status"] != "optimal"]
    note = f" (w={','.join(budgeted)}: best found in {TIME_LIMIT:g} s)" if budgeted else ""
    ax.plot([r["fpr"] for r in frl], [r["tpr"] for r in frl], "ko-", label=f"FRL, one certified list per w{note}")
    points = {}
    for r in frl:  # lists with the same test point share one label
        points.setdefault((r["fpr"], r["tpr"]), []).append(f"{r['w']:g}")
    for (fpr_w, tpr_w), names in points.items():
        ax.annotate("w=" + ",".join(names), (fpr_w, tpr_w), textcoords="offset points", xytext=(6, -10), fontsize=8)
    ax.plot([0, 1], [0, 1], color="grey", lw=0.5)
    ax.set_xlabel("false positive rate (test)")
    ax.set_ylabel("true positive rate (test)")
    ax.set_title("Bank marketing, 30% test split")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    (ROOT / "docs" / "figures").mkdir(parents=True, exist_ok=True)
    fig.savefig(ROOT / "docs" / "figures" / "frl_bank_roc.png", dpi=110)
    (ROOT / "docs" / "results").mkdir(parents=True, exist_ok=True)
    for r in frl:
        r.pop("score")
    (ROOT / "docs" / "results" / "frl_bank_roc.json").write_text(json.dumps({"frl": frl, "others": {
        k: {"auc": v["auc"]} for k, v in curves.items()}}, indent=2))
    for r in frl:
        print(f"w={r['w']:g}: {r['status']}, objective {r['objective']:.6f}, {r['rules']} rules, test FPR {r['fpr']:.3f} "
              f"TPR {r['tpr']:.3f}, AUC of its probabilities {r['auc']:.3f}")
    for name, curve in curves.items():
        print(f"{name}: AUC {curve['auc']:.3f}")


if __name__ == "__main__":
    main()
