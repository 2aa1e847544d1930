"""Fair rule lists side by side with FairCORELS (FairCORELSV2 1.1, its constraint-solver pruning) on the same
problem (issue 86): bundled COMPAS (CORELS's 6,907 rows; race as African-American or other, not a feature),
the same single literals (the 26 distinct ones our fit mines, given to FairCORELS as its binary features),
lambda 0.01, each metric at bound 0.05. For each side: wall time, its list's objective and unfairness
recomputed on the training rows here, and what it says of optimality.

FairCORELS runs in its own environment (``../shared/peers/setup.sh``: ``OPTRULES_PEERS``, default
``~/.cache/optrules-peers``), in its own process, with ``time_limit`` CPU seconds (its unit). Run by hand:
``python benchmarks/fairness_peers.py [--time-limit 120]``; writes ``benchmarks/results/fairness_peers.json``
and the block of that name.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
import time
from fractions import Fraction
from pathlib import Path

import numpy as np
from benchmarks_md import publish

from optrules import RuleListClassifier
from optrules.data import bitset
from optrules.data.datasets import load_dataset
from optrules.fairness.metrics import METRICS, exact_unfairness

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "fairness_peers.json"
PEERS = Path(os.environ.get("OPTRULES_PEERS", Path.home() / ".cache" / "optrules-peers"))
#: FairCORELS's metric codes (its README: 1 statistical parity, 3 predictive equality, 4 equal opportunity,
#: 5 equalized odds)
THEIR_METRIC = {"statistical_parity": 1, "predictive_equality": 3, "equal_opportunity": 4, "equalized_odds": 5}
PEER_SCRIPT = r'''
import json, sys, time
time.clock = time.process_time  # (it still calls the function Python 3.8 removed)
import numpy as np
from faircorelsv2 import FairCorelsClassifierV2
data = np.load(sys.argv[1], allow_pickle=True)
settings = json.loads(sys.argv[2])
X, y, group = data["X"], data["y"], data["group"]
model = FairCorelsClassifierV2(c=settings["lambda"], mode=3, fairness=settings["metric"], epsilon=settings["epsilon"],
                               maj_vect=(group == 0).astype(int), min_vect=(group == 1).astype(int),
                               filteringMode=settings.get("filtering", 2),
                               max_card=1, min_support=0.0, policy="bfs", verbosity=[], n_iter=settings["n_iter"])
started = time.perf_counter()
model.fit(X, y, features=list(data["names"]), time_limit=settings["time_limit"])
seconds = time.perf_counter() - started
print(json.dumps({"seconds": seconds, "predictions": model.predict(X).astype(int).tolist(),
                  "status": str(model.get_solving_status()), "rules": str(model.rl())}))
'''


def their_run(X, y, group, names, metric: str, bound: float, time_limit: float, filtering: int = 2) -> dict:
    python = PEERS / "fair" / "bin" / "python"
    if not python.exists():
        return {"error": f"no FairCORELS environment at {python}: run ../shared/peers/setup.sh"}
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "data.npz"
        np.savez(path, X=X.astype(np.uint8), y=y.astype(int), group=group.astype(int), names=np.array(names))
        settings = {"lambda": 0.01, "metric": THEIR_METRIC[metric], "epsilon": 1.0 - bound, "time_limit": time_limit,
                    "filtering": filtering, "n_iter": 10 ** 7}
        started = time.perf_counter()
        try:
            done = subprocess.run([str(python), "-c", PEER_SCRIPT, str(path), json.dumps(settings)],
                                  capture_output=True, text=True, timeout=time_limit + 60, cwd=folder)
        except subprocess.TimeoutExpired:
            return {"error": f"no answer in {time_limit + 60:.0f} s (its limit: {time_limit:g} CPU s)",
                    "wall_s": time.perf_counter() - started}
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1][:300] if done.stderr.strip() else f"exit {done.returncode}",
                "wall_s": time.perf_counter() - started}
    out = json.loads(done.stdout.strip().splitlines()[-1])
    out["wall_s"] = time.perf_counter() - started
    return out


def measure(metrics, bound: float, time_limit: float) -> list[dict]:
    data = load_dataset("compas-B")
    X = data.X.assign(race=data.X["race"].where(data.X["race"] == "African-American", "other"))
    y = np.asarray(data.y)
    group = (X["race"] == "African-American").to_numpy().astype(int)
    rows = []
    for metric in metrics:
        started = time.perf_counter()
        ours = RuleListClassifier(regularization=0.01, fairness=metric, max_unfairness=bound,
                                  time_limit=time_limit).fit(X, y, sensitive="race")
        our_seconds = time.perf_counter() - started
        literals = bitset.unpack(ours.antecedents_.bits, len(y)).T
        names = [" and ".join(ours.antecedents_.conditions(a)) for a in range(len(ours.antecedents_))]
        row = {"metric": metric, "bound": bound, "ours_s": our_seconds, "ours_status": ours.certificate_.status,
               "ours_objective": ours.certificate_.objective, "ours_lower_bound": ours.certificate_.lower_bound,
               "ours_unfairness": float(Fraction(ours.certificate_.counters["unfairness"])),
               "ours_rules": len(ours.rule_list_.rules)}
        # FairCORELS plain (filteringMode 0), and with its constraint-solver pruning (2) on statistical parity
        for filtering in (0, 2) if metric == "statistical_parity" else (0,):
            theirs = their_run(literals, y, group, names, metric, bound, time_limit, filtering)
            side = dict(row, filtering=filtering)
            if "predictions" in theirs:
                predicted = np.asarray(theirs["predictions"]) == 1
                n_rules = theirs["rules"].count(" if [")  # (its rules read " if [...]" and "else if [...]")
                side.update(theirs_s=theirs["wall_s"], theirs_status=theirs["status"], theirs_rules=n_rules,
                            theirs_objective=float(np.mean(predicted != (y == 1)) + 0.01 * n_rules),
                            theirs_unfairness=float(exact_unfairness(y, group, None, predicted, metric)),
                            theirs_list=theirs["rules"][:500])
            else:
                side.update(theirs_error=theirs["error"], theirs_s=theirs.get("wall_s"))
            rows.append(side)
            print(side, flush=True)
    return rows


def table(rows: list[dict], time_limit: float) -> str:
    lines = [f"Each side's list recomputed on the training rows here (objective = error + 0.01 x rules); FairCORELS "
             f"given {time_limit:g} CPU s, we {time_limit:g} s of wall time.", "",
             "| metric <= 0.05 | ours: s | status | objective | gap | FairCORELS (pruning) | s | its status | objective | gap |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        theirs = (f"{r['theirs_s']:.1f} | {r['theirs_status']} | {r['theirs_objective']:.6f} | {r['theirs_unfairness']:.4f}"
                  if "theirs_objective" in r else f"{(r.get('theirs_s') or 0):.1f} | {r['theirs_error']} | - | -")
        pruning = "constraint solver" if r["filtering"] == 2 else "none"
        lines.append(f"| {r['metric'].replace('_', ' ')} | {r['ours_s']:.1f} | {r['ours_status']} | "
                     f"{r['ours_objective']:.6f} | {r['ours_unfairness']:.4f} | {pruning} | {theirs} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--metrics", nargs="+", default=list(METRICS), choices=METRICS)
    parser.add_argument("--bound", type=float, default=0.05)
    parser.add_argument("--time-limit", type=float, default=120.0)
    args = parser.parse_args()
    rows = measure(args.metrics, args.bound, args.time_limit)
    print(table(rows, args.time_limit))
    publish(RESULTS, rows, "fairness_peers", f"python benchmarks/fairness_peers.py --time-limit {args.time_limit:g}",
            table(rows, args.time_limit), "Fair rule lists beside FairCORELS")


if __name__ == "__main__":
    main()
