"""Budgets and Ctrl-C in every phase (issue 83): whole fits of tall and wide generated tables against their
time limits, Ctrl-C on `optrules fit` at several moments (time from the signal to the exit, the status,
the model file, the phase that heard it), and the web app's Rashomon runs (a normal one on COMPAS, and a
cancel during a 600,000-row run's analysis).

Each fit and command runs in a fresh process, with the kernels compiled before (as after `optrules
compile`). Run by hand: ``python benchmarks/phase_budgets.py``; writes ``benchmarks/results/phase_budgets.json``
and the block in its history file (and BENCHMARKS.md's block of that name).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from benchmarks_md import publish

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "phase_budgets.json"

TABLES = textwrap.dedent("""
    import numpy as np, pandas as pd

    def table(shape, rows, columns):
        rng = np.random.default_rng(0)
        if shape == "numeric":
            X = pd.DataFrame(rng.normal(size=(rows, columns)).round(3), columns=[f"x{j}" for j in range(columns)])
            y = ((X["x0"] + 0.5 * X["x1"] + rng.normal(size=rows)) > 0).to_numpy()
        elif shape == "wide":
            X = pd.DataFrame(rng.integers(0, 5, (rows, columns)).astype(np.int8), columns=[f"c{j}" for j in range(columns)])
            y = (X["c0"] > 2).to_numpy()
        else:  # tall and mixed: a measurement, a count, a category, a 300-value group column
            X = pd.DataFrame({"a": rng.normal(size=rows).round(2), "b": rng.integers(0, 50, rows),
                              "c": rng.choice(["x", "y", "z"], rows),
                              "g": rng.choice([f"v{k}" for k in range(300)], rows)}).iloc[:, :columns]
            y = ((X["a"] > 0) ^ (X["c"] == "x") ^ (rng.random(rows) < 0.1)).to_numpy()
        return X, y
""")

FIT = TABLES + textwrap.dedent("""
    import json, sys, time, warnings
    from optrules import FallingRuleListClassifier, RuleListClassifier, RuleSetClassifier
    family, shape, rows, columns, limit = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
    X, y = table(shape, rows, columns)
    make = {"rulelist": RuleListClassifier, "frl": FallingRuleListClassifier, "ruleset": RuleSetClassifier}[family]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        started = time.perf_counter(); est = make(time_limit=limit).fit(X, y); fit = time.perf_counter() - started
    c = est.certificate_
    print(json.dumps({"fit_s": fit, "status": c.status, "stopped_in": c.counters.get("stopped_in", ""),
                      "space": c.counters.get("space", "")}))
""")

FIT_CASES = [("1,000,000 x 50 numeric", "rulelist", "numeric", 1_000_000, 50, 2.0),
             ("4,300,000 x 4 mixed", "rulelist", "mixed", 4_300_000, 4, 5.0),
             ("200 x 40,000", "rulelist", "wide", 200, 40_000, 2.0),
             ("200 x 40,000", "frl", "wide", 200, 40_000, 2.0),
             ("200 x 40,000", "ruleset", "wide", 200, 40_000, 2.0)]


def fit_case(family, shape, rows, columns, limit) -> dict:
    done = subprocess.run([sys.executable, "-c", FIT, family, shape, str(rows), str(columns), str(limit)],
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def ctrl_c_case(arguments: list[str], after: float, folder: Path) -> dict:
    """`optrules fit ARGUMENTS -o model.json` with Ctrl-C ``after`` seconds: from the signal to the exit."""
    output = folder / "model.json"
    if output.exists():
        output.unlink()
    process = subprocess.Popen([sys.executable, "-m", "optrules.cli", "fit", *arguments, "-q", "-o", str(output)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(after)
    sent = time.perf_counter()
    finished_first = process.poll() is not None
    if not finished_first:
        process.send_signal(signal.SIGINT)
    process.communicate(timeout=300)
    latency = time.perf_counter() - sent
    counters = json.loads(output.read_text())["certificate"]["counters"] if output.exists() else {}
    return {"after_s": after, "exit": process.returncode, "latency_s": None if finished_first else latency,
            "written": output.exists(), "stopped_in": counters.get("stopped_in", "")}


WEB = TABLES + textwrap.dedent("""
    import io, json, sys, time
    from starlette.testclient import TestClient
    from optrules.web.app import create_app
    from optrules.web.runs import RunManager
    case = sys.argv[1]
    app = create_app(RunManager(workers=1, max_upload_bytes=1 << 30), allowed_hosts=["testserver"])

    def wait(client, run_id, timeout=600):
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            run = client.get(f"/api/runs/{run_id}").json()
            if run["status"] in ("done", "failed", "cancelled"):
                return run
            time.sleep(0.02)
        return run

    with TestClient(app, headers={"Origin": "http://testserver"}) as client:
        if case == "compas":
            table, target, fit = "dataset:compas", "two_year_recid", {"regularization": 0.0005, "max_card": 3}
            rashomon = {"epsilon_percent": 1, "time_limit": 10, "group": "sex"}
        else:
            X, y = table("mixed", 600_000, 4)
            body = X.assign(y=np.where(y, "yes", "no")).to_csv(index=False).encode()
            table = client.post("/api/uploads", files={"file": ("tall.csv", io.BytesIO(body), "text/csv")}).json()["key"]
            target, fit = "y", {"regularization": 0.001, "max_card": 1}
            rashomon = {"epsilon_percent": 5, "time_limit": 5 if case == "tall" else 120, "group": "g"}
        parent = client.post("/api/runs", json={"table": table, "target": target, "model": "rulelist",
                                                "params": {**fit, "time_limit": 60}}).json()
        parent = wait(client, parent["id"])
        started = time.perf_counter()
        run = client.post(f"/api/runs/{parent['id']}/rashomon", json={"params": rashomon}).json()
        cancelled = None
        if case == "tall-cancel":  # a long time limit, and a cancel while it runs
            time.sleep(2.0)
            cancelled = time.perf_counter()
            client.post(f"/api/runs/{run['id']}/cancel")
        run = wait(client, run["id"])
        ended = time.perf_counter()
        result = run.get("result") or {}
        print(json.dumps({"case": case, "status": run["status"], "run_s": ended - started,
                          "after_cancel_s": None if cancelled is None else ended - cancelled,
                          "size": result.get("size"), "analysis": result.get("analysis", run.get("message"))}))
""")


def web_case(case: str) -> dict:
    done = subprocess.run([sys.executable, "-c", WEB, case], capture_output=True, text=True, timeout=900)
    lines = done.stdout.strip().splitlines()
    return json.loads(lines[-1]) if done.returncode == 0 and lines else {"case": case, "error": done.stderr[-300:]}


def main() -> None:
    fit_case("rulelist", "numeric", 1000, 5, 10.0)  # compile what the cases need, once
    fits = []
    for name, family, shape, rows, columns, limit in FIT_CASES:
        fits.append({"table": name, "family": family, "time_limit": limit, **fit_case(family, shape, rows, columns, limit)})
        print(json.dumps(fits[-1]), flush=True)
    interrupts = []
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        source = TABLES + "\nX, y = table('mixed', 600_000, 4)\nX.assign(y=y.astype(int)).to_csv(sys.argv[1], index=False)\n"
        subprocess.run([sys.executable, "-c", "import sys\n" + source, str(folder / "tall.csv")], check=True)
        commands = {"600,000-row CSV": [str(folder / "tall.csv"), "--target", "y"],
                    "COMPAS, pairs of 3": ["--dataset", "compas", "-r", "0.0005", "--max-card", "3"]}
        for name, arguments in commands.items():
            for after in (0.5, 1.5, 3.0, 6.0):
                interrupts.append({"command": name, **ctrl_c_case(arguments, after, folder)})
                print(json.dumps(interrupts[-1]), flush=True)
    web = [web_case("compas"), web_case("tall"), web_case("tall-cancel")]
    print(json.dumps(web), flush=True)
    publish(RESULTS, {"fits": fits, "interrupts": interrupts, "web": web}, "phase_budgets",
            "python benchmarks/phase_budgets.py", table(fits, interrupts, web),
            "Budgets and Ctrl-C in every phase")


def table(fits, interrupts, web) -> str:
    lines = ["| table | family | time limit s | fit s | x limit | status | stopped in |", "|---|---|---|---|---|---|---|"]
    lines += [f"| {r['table']} | {r['family']} | {r['time_limit']:g} | {r['fit_s']:.2f} | "
              f"{r['fit_s'] / r['time_limit']:.2f} | {r['status']} | {r['stopped_in']} |" for r in fits]
    lines += ["", "`optrules fit ... -o model.json`, Ctrl-C after a while: seconds from the signal to the exit.", "",
              "| command | Ctrl-C after s | exit status | exit after s | model written | heard in |", "|---|---|---|---|---|---|"]
    for r in interrupts:
        latency = "finished first" if r["latency_s"] is None else f"{r['latency_s']:.2f}"
        heard = r["stopped_in"] or ("reading the file" if not r["written"] else
                                    "after the fit (certified)" if r["exit"] == 130 else "")
        lines.append(f"| {r['command']} | {r['after_s']:g} | {r['exit']} | {latency} | "
                     f"{'yes' if r['written'] else 'no'} | {heard} |")
    lines += ["", "The web app's Rashomon runs (one time limit for the enumeration and its analysis):", ""]
    for r in web:
        if "error" in r:
            lines.append(f"- {r['case']}: error {r['error']}")
        elif r["case"] == "compas":
            lines.append(f"- COMPAS, lambda 0.0005, max_card 3, within 1% of R*, group sex, time limit 10 s: "
                         f"{r['size']:,} lists, the run took {r['run_s']:.1f} s ({r['status']}; "
                         f"analysis {r['analysis'] or 'exact'})")
        elif r["case"] == "tall":
            lines.append(f"- 600,000 rows, a group column of 300 values, within 5% of R* ({r['size']:,} lists), time limit "
                         f"5 s: the run took {r['run_s']:.1f} s ({r['status']}; {r['analysis'] or 'analysis exact'})")
        else:
            lines.append(f"- the same with a time limit of 120 s, cancelled 2 s after it was submitted: ended "
                         f"{r['after_cancel_s']:.2f} s after the cancel ({r['status']}; {r['analysis'] or 'analysis exact'})")
    return "\n".join(lines)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    main()
