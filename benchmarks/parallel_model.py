"""How far one certified search scales with threads: a model built from the batches of recorded searches.

Each search runs once on one thread, one batch a kernel call, recording for every batch its prefixes
(slots), each slot's children evaluated (its ``bounds``: counting and bounding the children is what an
expansion does) and the records its merge handled, with the call's time. A non-negative least-squares fit
over the batches splits the one-thread time into unit costs: a prefix expanded and a child evaluated (the
parallel part) and a record merged (the serial part), each call's own cost (Python's: a call that expands
nothing, timed) taken off first. A batch
on W threads then takes

    merges (one thread)  +  the slots dealt in order to the first free of W threads (numba's
    dynamic schedule with chunks of one: the longest thread's share)  +  a parallel region's start and
    join (measured here on this machine's threads: an empty parallel loop over the batch's slots;
    assumed to grow with W beyond the cores measured)

and the model's speedup at 2 threads is set beside the measured one (benchmarks/parallel.py, fresh
processes: not fitted to it). What the model leaves out, it gains: memory bandwidth shared by the threads
(the expansions themselves ran 1.5-1.65x faster on two threads, not 2x, in rdtsc counts) and the pops'
serial cost (6-7% of a one-thread rule-list search in those counts, here counted with the prefixes'
parallel work, as a batch's pops always number about its slots): it bounds the speedup from above.

Run by hand: ``python benchmarks/parallel_model.py``; writes ``benchmarks/results/parallel_model.json``
and its block of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "parallel_model.json"
sys.path.insert(0, str(HERE))

from benchmarks_md import publish  # noqa: E402

WORKERS = (1, 2, 4, 8, 16, 32, 64)
#: the measured two-thread speedups (BENCHMARKS.md, "One search on two threads"): medians of fresh processes
MEASURED_TWO = {"compas_train (paper) 0.005": 1.56, "monks-3 0.005": 1.41, "bank marketing, falling, w = 7": 1.79}


def record_batches(search_once) -> dict:
    """Run ``search_once(drive)`` with a drive that calls the kernel one batch at a time and records each."""
    from optrules import bnb
    from optrules.bnb import EXPANDED, POPS_DONE

    rows = []
    call_cost = []

    def drive(run, state, *args, **kwargs):
        batch = run.__self__.batch if hasattr(run, "__self__") else run.arguments(0, 0)[-1]
        per_slot_bounds = batch.counters[:, 0] if hasattr(batch, "counters") else batch.bounds

        def one_batch_at_a_time(max_pops: int) -> int:
            if max_pops == 0:  # (the first call, which compiles: then a call's own cost, measured empty)
                run(0)
                calls = []
                for _ in range(2000):
                    started = time.perf_counter()
                    run(0)
                    calls.append(time.perf_counter() - started)
                call_cost.append(float(np.median(calls)))
                return POPS_DONE
            code = POPS_DONE
            for _ in range(max_pops):
                before = int(state.ints[EXPANDED])
                started = time.perf_counter()
                code = run(1)
                took = time.perf_counter() - started
                slots = int(state.ints[EXPANDED]) - before
                if slots:
                    rows.append((took - call_cost[0], slots, per_slot_bounds[:slots].copy(),
                                 int(batch.sizes[:slots].sum())))
                if code != POPS_DONE:
                    break
            return code

        return bnb.drive(one_batch_at_a_time, state, *args, **kwargs)

    search_once(drive)
    return rows


def rule_list_batches(name: str, regularization: float):
    from corels_suite import write_problem

    from optrules.corels import search as S
    from optrules.corels.problem import Problem
    from optrules.data.formats import read_reference

    with tempfile.TemporaryDirectory() as folder:
        files = write_problem(name, Path(folder), regularization)
        problem = Problem.from_reference(read_reference(*files[:3]), regularization)

    def once(drive):
        original, S.drive = S.drive, drive
        try:
            S.search(problem, n_jobs=1, time_limit=None, max_memory=2 << 30)
        finally:
            S.drive = original

    S.search(problem, n_jobs=1, max_nodes=1)  # (compiled or loaded before any timing)
    return record_batches(once)


def falling_list_batches(w: float):
    from frl_bank import problem as bank_problem

    from optrules.frl import search as S

    problem, _ = bank_problem(w, 1e-6)

    def once(drive):
        original, S.drive = S.drive, drive
        try:
            S.certified_search(problem, n_jobs=1, max_memory=2 << 30)
        finally:
            S.drive = original

    S.certified_search(problem, n_jobs=1, max_nodes=1)
    return record_batches(once)


def region_cost(threads: int, slots: int = 32, calls: int = 20000) -> float:
    """Seconds an empty parallel loop over ``slots`` iterations takes on ``threads`` threads."""
    from numba import njit, prange, set_num_threads

    @njit(parallel=True)
    def empty(n, out):
        for s in prange(n):
            out[s] += 1.0

    out = np.zeros(slots)
    set_num_threads(threads)
    empty(slots, out)
    started = time.perf_counter()
    for _ in range(calls):
        empty(slots, out)
    return (time.perf_counter() - started) / calls


def unit_costs(rows) -> dict:
    """Non-negative least squares of each batch's time (its call's own cost, measured empty, taken off) on
    (prefixes expanded, children evaluated, records merged): a prefix's own cost (rebuilding what it
    leaves, its children's counts: on its thread), a child's bound (on its thread), a record's merge (one
    thread)."""
    from scipy.optimize import nnls

    X = np.array([(slots, bounds.sum(), records) for _, slots, bounds, records in rows], dtype=float)
    t = np.array([took for took, *_ in rows])
    scale = X.max(axis=0)
    coef, _ = nnls(X / scale, t)
    coef = coef / scale
    fitted = X @ coef
    r2 = 1 - ((t - fitted) ** 2).sum() / ((t - t.mean()) ** 2).sum()
    return {"prefix": float(coef[0]), "child": float(coef[1]), "record": float(coef[2]), "r2": float(r2),
            "total": float(t.sum())}


def longest_thread(works: np.ndarray, threads: int) -> float:
    """The slots dealt in order, each to the thread that frees first: when the last thread ends."""
    free = np.zeros(threads)
    for work in works:
        k = int(np.argmin(free))
        free[k] += work
    return float(free.max())


def predict(rows, costs: dict, region: dict) -> dict:
    """Seconds of the search's kernel work (the calls' fixed cost left out) on each number of threads."""
    serial = sum(costs["record"] * records for *_, records in rows)
    out = {}
    for threads in WORKERS:
        parallel = 0.0
        for _, slots, bounds, _ in rows:
            parallel += longest_thread(costs["prefix"] + costs["child"] * bounds, threads)
        overhead = 0.0 if threads == 1 else len(rows) * region_at(region, threads)
        out[threads] = {"seconds": serial + parallel + overhead, "serial": serial, "parallel": parallel,
                        "overhead": overhead}
    base = out[1]["seconds"]
    for threads, row in out.items():
        row["speedup"] = base / row["seconds"]
        row["efficiency"] = row["speedup"] / threads
    return out


def region_at(region: dict, threads: int) -> float:
    """A region's cost on ``threads`` threads: measured up to the cores here, then growing with the threads."""
    measured = max(region)
    if threads <= measured:
        return region[min(threads, measured)]
    return region[measured] * threads / measured


CASES = [("rule list", "compas_train (paper)", 0.005), ("rule list", "monks-3", 0.005),
         ("falling list", "bank marketing, falling", 7.0)]
#: batch sizes recorded: the kernels' (32) and a larger one, which a search on many threads would need
#: (what a batch holds must not depend on the threads: a larger batch is the same for every n_jobs, and
#: expands what a list found within it would have pruned, counted here in the batches recorded)
BATCH_SIZES = (32, 256)


def render(results: dict) -> str:
    head = "| search | expanded | batches | slots a batch | fit r2 | serial share (1 thread) | " + " | ".join(
        f"{w} threads" for w in WORKERS[1:]) + " | measured at 2 |"
    lines = ["Model speedup (efficiency) from each search's recorded batches; the one-thread time split by a least-"
             "squares fit of each batch's time on its prefixes, children evaluated and records merged (r2: the fit's).", "",
             head, "|---|---:|---:|---:|---:|---:|" + "---:|" * (len(WORKERS) - 1) + "---:|"]
    for key, row in results.items():
        p = {int(k): v for k, v in row["predicted"].items()}
        # against the one-thread search in the kernels' own batches: a larger batch's extra work counts
        base = {int(k): v for k, v in results[key.split(", batches of")[0]]["predicted"].items()}[1]["seconds"]
        cells = " | ".join(f"{base / p[w]['seconds']:.2f}x ({base / p[w]['seconds'] / w:.2f})" for w in WORKERS[1:])
        measured = MEASURED_TWO.get(key)
        lines.append(f"| {key} | {row['expanded']:,} | {row['batches']:,} | {row['mean_slots']:.1f} | {row['costs']['r2']:.2f} | "
                     f"{p[1]['serial'] / p[1]['seconds']:.1%} | "
                     f"{cells} | {f'{measured:.2f}x' if measured else ''} |")
    region = next(iter(results.values()))["region"]
    lines += ["", "Speedups against the one-thread search in the kernels' own batches (32 prefixes): larger batches "
              "count the prefixes they expand beyond. A parallel region's start and join, measured: " + ", ".join(
                  f"{int(k)} threads {v * 1e6:.1f} us" for k, v in region.items())
              + "; beyond, taken to grow with the threads."]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--render", action="store_true", help="only render the results saved")
    args = parser.parse_args()
    if args.render:
        results = json.loads(RESULTS.read_text())
        publish(RESULTS, results, "parallel_model", "python benchmarks/parallel_model.py", render(results),
                "One search on many threads: a model")
        return
    from optrules.bnb import threads_for

    region = {threads: region_cost(threads) for threads in range(2, threads_for(None) + 1)}
    from optrules.corels import kernel as rule_list_kernel
    from optrules.frl import kernel as falling_list_kernel

    results = {}
    for family, name, setting in CASES:
        costs = None
        for size in BATCH_SIZES:
            rule_list_kernel.MAX_BATCH = falling_list_kernel.MAX_BATCH = size
            rows = rule_list_batches(name, setting) if family == "rule list" else falling_list_batches(setting)
            costs = costs or unit_costs(rows)  # (the unit costs of the kernels' own batches)
            key = (f"{name} {setting}" if family == "rule list" else f"{name}, w = {setting:g}") + (
                "" if size == BATCH_SIZES[0] else f", batches of {size}")
            results[key] = {"batches": len(rows), "mean_slots": float(np.mean([r[1] for r in rows])), "costs": costs,
                            "expanded": int(sum(r[1] for r in rows)), "region": region,
                            "predicted": predict(rows, costs, region)}
            print(key, json.dumps(results[key]["costs"]), results[key]["expanded"], flush=True)
    publish(RESULTS, results, "parallel_model", "python benchmarks/parallel_model.py", render(results),
            "One search on many threads: a model")


if __name__ == "__main__":
    main()
