"""The first hour, as a new user meets it (issue 85): a fresh clone of this checkout's HEAD, then

1. ``make .venv/.installed`` (the README's install: the core, then the optional extras on one core while
   ``optrules compile --first`` compiles what a first session takes on the other), its wall time;
2. ``make run`` right after (the first fit), and again (a warm fit): each whole command's wall time;
3. the README's Rashomon set on COMPAS in a fresh process: the ``rashomon_set`` call alone, and the process;
4. the same fit and Rashomon set with the kernels' cache cleared (what ``pip install`` alone leaves);
5. three tables shaped like those of the issue (generated here: a passenger list with a header, a
   headerless space-separated credit table, a headerless census table whose missing marker is ``?``),
   each fitted from the command line with ``--target`` alone (and ``--no-header``): whether it fit, in
   how long, and what the command said it chose;
6. with ``--suite``: ``make test`` on the clone (the default suite, its kernels as the install left them).

Run by hand: ``python benchmarks/first_hour.py [--suite]`` (~3 min; ``--suite`` ~6 min more); writes
``benchmarks/results/first_hour.json`` and the block of that name in BENCHMARKS.md. pip's own cache makes
the install's time this machine's, not a first download's.
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from benchmarks_md import publish

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "first_hour.json"
RASHOMON = """
import time
started = time.perf_counter()
from optrules import RuleListClassifier, load_compas
data = load_compas("A")
model = RuleListClassifier(regularization=0.005).fit(data.X, data.y)
before = time.perf_counter()
rashomon = model.rashomon_set(0.01, relative=True)
print(f"{time.perf_counter() - before:.3f} {len(rashomon)}")
"""


def timed(command: list[str], cwd: Path) -> tuple[float, subprocess.CompletedProcess]:
    started = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    return time.perf_counter() - started, done


def clear_kernel_cache(clone: Path) -> None:
    for pattern in ("*.nbi", "*.nbc", "*.dependencies-sha256"):
        for path in (clone / "src").rglob(pattern):
            path.unlink(missing_ok=True)


def rashomon_run(clone: Path) -> dict:
    seconds, done = timed([str(clone / ".venv/bin/python"), "-c", RASHOMON], clone)
    assert done.returncode == 0, done.stderr[-2000:]
    call, members = done.stdout.split()[-2:]
    return {"process_s": seconds, "rashomon_set_s": float(call), "members": int(members)}


def passenger_list(rng: np.random.Generator, n: int = 891) -> pd.DataFrame:
    """Shaped like the Titanic passenger list: an identifier, names, a class, sex, ages with gaps, fares,
    a cabin mostly missing, a port, and the target named Survived (not the last column)."""
    pclass = rng.choice([1, 2, 3], n, p=[0.24, 0.21, 0.55])
    sex = rng.choice(["male", "female"], n, p=[0.65, 0.35])
    age = np.where(rng.random(n) < 0.2, np.nan, np.clip(rng.normal(30, 14, n), 0.4, 80).round(1))
    survived = (rng.random(n) < np.where(sex == "female", 0.74, 0.19) * np.where(pclass == 3, 0.7, 1.2)).astype(int)
    return pd.DataFrame({
        "PassengerId": np.arange(1, n + 1), "Survived": survived, "Pclass": pclass,
        "Name": [f"Passenger, Mr. N{k}" for k in range(n)], "Sex": sex, "Age": age,
        "SibSp": rng.integers(0, 4, n), "Parch": rng.integers(0, 3, n),
        "Ticket": [f"T{rng.integers(10000, 99999)}" for _ in range(n)],
        "Fare": (rng.gamma(2.0, 16.0, n) * (4 - pclass)).round(2),
        "Cabin": np.where(rng.random(n) < 0.77, None, [f"C{k}" for k in rng.integers(1, 150, n)]),
        "Embarked": rng.choice(["S", "C", "Q"], n, p=[0.72, 0.19, 0.09]),
    })


def credit_table(rng: np.random.Generator, n: int = 1000) -> list[str]:
    """Shaped like UCI's German credit data: no header, space-separated, coded categories (A11 ...),
    numbers, the class (1 good, 2 bad) last."""
    status = rng.choice(["A11", "A12", "A13", "A14"], n)
    months = rng.integers(4, 72, n)
    history = rng.choice(["A30", "A31", "A32", "A33", "A34"], n)
    amount = rng.integers(250, 18424, n)
    savings = rng.choice(["A61", "A62", "A63", "A64", "A65"], n)
    bad = rng.random(n) < 0.15 + 0.25 * (status == "A11") + 0.2 * (months > 36) - 0.1 * (status == "A14")
    return [f"{s} {m} {h} {a} {v} {2 if b else 1}" for s, m, h, a, v, b in zip(status, months, history, amount, savings, bad)]


def census_table(rng: np.random.Generator, n: int = 5000) -> list[str]:
    """Shaped like UCI's adult census data: no header, comma and space separated, ``?`` for an unknown
    work class or occupation, the income class last."""
    age = rng.integers(17, 90, n)
    work = rng.choice(["Private", "Self-emp-not-inc", "Local-gov", "State-gov", "?"], n, p=[0.7, 0.08, 0.06, 0.1, 0.06])
    education = rng.integers(1, 17, n)
    occupation = rng.choice(["Exec-managerial", "Craft-repair", "Sales", "Adm-clerical", "?"], n)
    hours = rng.integers(1, 99, n)
    rich = rng.random(n) < 0.05 + 0.35 * (education > 12) + 0.15 * (age > 35) + 0.1 * (hours > 45)
    return [f"{a}, {w}, {e}, {o}, {h}, {'>50K' if r else '<=50K'}"
            for a, w, e, o, h, r in zip(age, work, education, occupation, hours, rich)]


def user_tables(clone: Path) -> list[dict]:
    rng = np.random.default_rng(85)
    folder = clone / "first_hour_tables"
    folder.mkdir()
    passenger_list(rng).to_csv(folder / "passengers.csv", index=False)
    (folder / "german.data").write_text("\n".join(credit_table(rng)) + "\n")
    (folder / "adult.data").write_text("\n".join(census_table(rng)) + "\n")
    optrules = str(clone / ".venv/bin/optrules")
    runs = [("passenger list", [optrules, "fit", "first_hour_tables/passengers.csv", "--target", "Survived"]),
            ("credit, no header: --target 5", [optrules, "fit", "first_hour_tables/german.data", "--target", "5"]),
            ("credit, as the message asks", [optrules, "fit", "first_hour_tables/german.data", "--target", "5",
                                             "--no-header"]),
            ("census, no header, '?'", [optrules, "fit", "first_hour_tables/adult.data", "--target", "5",
                                        "--no-header"])]
    results = []
    for label, command in runs:
        seconds, done = timed(command, clone)
        said = " ".join((done.stdout + done.stderr).split())
        results.append({"table": label, "exit": done.returncode, "seconds": seconds,
                        "certified": "certified optimal" in said, "said": said[:2000]})
        print(results[-1]["table"], results[-1]["exit"], f"{seconds:.1f} s", flush=True)
    return results


def measure(suite: bool) -> dict:
    with tempfile.TemporaryDirectory() as folder:
        clone = Path(folder) / "clone"
        subprocess.run(["git", "clone", "-q", str(HERE.parent), str(clone)], check=True)
        results: dict = {"commit": subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=clone,
                                                  capture_output=True, text=True).stdout.strip()}
        results["install_s"], done = timed(["make", ".venv/.installed"], clone)
        assert done.returncode == 0, done.stderr[-3000:]
        compile_log = (clone / ".venv/compile.log").read_text()
        results["compile_first_s"] = float(compile_log.split("cached in ")[1].split()[0])
        for key in ("first_make_run_s", "warm_make_run_s"):
            results[key], done = timed(["make", "run"], clone)
            assert done.returncode == 0 and "certified optimal" in done.stdout, done.stderr[-2000:]
        results["first_rashomon"] = rashomon_run(clone)
        clear_kernel_cache(clone)  # what pip install alone leaves
        results["pip_only_first_fit_s"], _ = timed([str(clone / ".venv/bin/optrules"), "fit", "--dataset", "compas",
                                                    "--regularization", "0.005"], clone)
        results["pip_only_first_rashomon"] = rashomon_run(clone)
        results["tables"] = user_tables(clone)
        if suite:
            results["suite_s"], done = timed(["make", "test"], clone)
            lines = done.stdout.strip().splitlines()
            results["suite_summary"] = lines[-1] if lines else done.stderr[-300:]
        return results


def table(r: dict) -> str:
    lines = [f"A fresh clone of {r['commit']}, on a quiet machine, pip's cache warm:", "",
             "| step | seconds |", "|---|---|",
             f"| `make .venv/.installed` (the install; `optrules compile --first` beside the extras: "
             f"{r['compile_first_s']:.0f} s) | {r['install_s']:.0f} |",
             f"| first `make run` after it (whole command) | {r['first_make_run_s']:.1f} |",
             f"| a second `make run` (warm) | {r['warm_make_run_s']:.1f} |",
             f"| the README's first `rashomon_set` on COMPAS (the call; its process) | "
             f"{r['first_rashomon']['rashomon_set_s']:.2f} ({r['first_rashomon']['process_s']:.1f}) |",
             f"| kernels' cache cleared (pip install alone): first fit (whole command) | {r['pip_only_first_fit_s']:.1f} |",
             f"| ... then the first `rashomon_set` (the call; its process) | "
             f"{r['pip_only_first_rashomon']['rashomon_set_s']:.2f} ({r['pip_only_first_rashomon']['process_s']:.1f}) |"]
    if "suite_s" in r:
        lines.append(f"| `make test` on the clone ({r['suite_summary']}) | {r['suite_s']:.0f} |")
    lines += ["", "Three generated tables shaped like the issue's, from the command line with `--target` alone:", "",
              "| table | exit | seconds | certified |", "|---|---|---|---|"]
    lines += [f"| {t['table']} | {t['exit']} | {t['seconds']:.1f} | {'yes' if t['certified'] else 'no'} |"
              for t in r["tables"]]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", action="store_true", help="also time `make test` on the clone")
    args = parser.parse_args()
    results = measure(args.suite)
    print(table(results))
    command = "python benchmarks/first_hour.py" + (" --suite" if args.suite else "")
    publish(RESULTS, results, "first_hour", command, table(results), "The first hour")


if __name__ == "__main__":
    main()
