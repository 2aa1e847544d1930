"""The default test suite as CI runs it, beside another CPU-bound process (issue 83): `make test` on a clean
clone of this checkout's HEAD, the kernels' cache cleared before each run (a clean clone has none), a
busy loop on one core, N runs; whether each passed and how long it took.

Run by hand: ``python benchmarks/test_suite.py --runs 10`` (about 7.5 minutes a run on 2 cores); writes
``benchmarks/results/test_suite.json`` and the block in its history file (and BENCHMARKS.md's block of
that name). ``--from-log FILE`` publishes runs measured by the shell loop this script replaces (lines
``run K: exit RC, SECONDS s, SUMMARY``).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks_md import publish

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "test_suite.json"
BUSY = "while True: pass"


def clear_kernel_cache(clone: Path) -> None:
    for pattern in ("*.nbi", "*.nbc", "*.dependencies-sha256"):
        for path in (clone / "src").rglob(pattern):
            path.unlink(missing_ok=True)


def one_run(clone: Path, k: int) -> dict:
    clear_kernel_cache(clone)
    busy = subprocess.Popen([sys.executable, "-c", BUSY])
    started = time.perf_counter()
    try:
        done = subprocess.run(["make", "test"], cwd=clone, capture_output=True, text=True)
    finally:
        busy.kill()
    lines = done.stdout.strip().splitlines()
    return {"run": k, "exit": done.returncode, "seconds": time.perf_counter() - started,
            "summary": lines[-1] if lines else done.stderr[-200:]}


def from_log(path: Path) -> list[dict]:
    runs = []
    for line in path.read_text().splitlines():
        found = re.match(r"run (\d+): exit (\d+), (\d+) s, (.*)", line)
        if found:
            runs.append({"run": int(found[1]), "exit": int(found[2]), "seconds": float(found[3]), "summary": found[4]})
    return runs


def table(runs: list[dict]) -> str:
    seconds = sorted(r["seconds"] for r in runs)
    passed = sum(r["exit"] == 0 for r in runs)
    lines = [f"`make test` on a clean clone, kernels' cache cleared, a busy process beside it: {passed} of {len(runs)} "
             f"runs passed, {seconds[0]:.0f}-{seconds[-1]:.0f} s (median {seconds[len(seconds) // 2]:.0f} s; the "
             "command's own wall time, the install done once before).", "",
             "| run | exit | seconds | pytest's summary |", "|---|---|---|---|"]
    lines += [f"| {r['run']} | {r['exit']} | {r['seconds']:.0f} | {r['summary']} |" for r in runs]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--from-log", type=Path)
    args = parser.parse_args()
    if args.from_log:
        runs = from_log(args.from_log)
    else:
        with tempfile.TemporaryDirectory() as folder:
            clone = Path(folder) / "clone"
            subprocess.run(["git", "clone", "-q", str(HERE.parent), str(clone)], check=True)
            subprocess.run(["make", ".venv/.installed", "browser"], cwd=clone, check=True, capture_output=True)
            runs = []
            for k in range(1, args.runs + 1):
                runs.append(one_run(clone, k))
                print(runs[-1], flush=True)
    publish(RESULTS, runs, "test_suite", f"python benchmarks/test_suite.py --runs {len(runs)}", table(runs),
            "The default test suite beside a busy process")


if __name__ == "__main__":
    main()
