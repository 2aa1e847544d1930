"""Budgets of a Rashomon-set enumeration on a raw generated table with tens of thousands of antecedents.

A 5,000 x 20 table (12 numeric columns, 8 categorical ones of 6 values), mined without a bound on the
number of antecedents (33,456), lambda 0.005, then ``rashomon_set(0.02)`` under a time limit, a memory
budget, or a Ctrl-C (SIGINT) 5 s in. Prints the seconds the enumeration took, how it stopped, and the
process's peak memory before and after it.

Run by hand: ``python benchmarks/rashomon_budgets.py time|interrupt [MAX_MEMORY_MB]``.
"""

from __future__ import annotations

import os
import resource
import signal
import sys
import threading
import time

import numpy as np
import pandas as pd

from optrules import RuleListClassifier


def table(n: int = 5000, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({f"num{j}": rng.normal(size=n).round(3) for j in range(12)})
    for j in range(8):
        X[f"cat{j}"] = rng.choice([f"v{k}" for k in range(6)], n)
    y = ((X["num0"] > 0.3) ^ (X["cat0"] == "v1") ^ (rng.random(n) < 0.2)).astype(int)
    return X, y


def main() -> None:
    mode = sys.argv[1] if len(sys.argv) > 1 else "time"
    memory = int(float(sys.argv[2]) * 2**20) if len(sys.argv) > 2 else None
    X, y = table()
    est = RuleListClassifier(regularization=0.005, max_antecedents=None, time_limit=20, max_memory=1 << 30).fit(X, y)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if mode == "interrupt":
        threading.Timer(5.0, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
    started = time.perf_counter()
    rashomon = est.rashomon_set(0.02, time_limit=20, max_memory=memory)
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{len(est.antecedents_):,} antecedents; {mode}: {time.perf_counter() - started:.2f} s, {rashomon!r}, "
          f"{rashomon.counters['nodes']:,} sets; peak MB before {before:,.0f}, after {after:,.0f}")


if __name__ == "__main__":
    main()
