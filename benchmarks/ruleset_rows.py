"""Rule sets on distinct rows: the same fit with the master and pricing problems on every row, and on
the distinct rows weighted by their multiplicity (``rulesets.colgen.distinct_rows``, the default).

Bundled datasets (COMPAS: categorical, many repeated rows; car: every row distinct; bank marketing:
45,211 rows, 14,931 distinct), complexity <= 20, 60 s per fit. Run by hand:
``python benchmarks/ruleset_rows.py``; writes the table in its history file, benchmarks/history/ (and the summary, BENCHMARKS.md).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchmarks_md import stamp, write_block  # noqa: E402

import optrules.rulesets.colgen as colgen  # noqa: E402
from optrules import RuleSetClassifier, load_dataset  # noqa: E402
from optrules.data import bitset  # noqa: E402

DATASETS = ["compas", "car", "bank"]


def fit(name: str, grouped: bool) -> dict:
    data = load_dataset(name)
    y = data.y if len(np.unique(data.y)) == 2 else (np.asarray(data.y) == np.asarray(data.y)[0])
    original = colgen.distinct_rows
    if not grouped:
        def every_row(columns, labels, weights=None, feature_groups=False, packed=False):
            rows = bitset.transpose(columns, len(labels))
            return (columns, labels, weights, *([colgen._distinct(rows)[1]] if feature_groups else []),
                    *([rows] if packed else []))
        colgen.distinct_rows = every_row
    try:
        start = time.perf_counter()
        model = RuleSetClassifier(complexity=20, time_limit=60).fit(data.X, y)
        seconds = time.perf_counter() - start
    finally:
        colgen.distinct_rows = original
    certificate = model.certificate_
    return {"dataset": name, "rows": len(data.X), "grouped": grouped, "solved on": certificate.counters["distinct_rows"],
            "status": certificate.status, "objective": certificate.objective, "lower": certificate.lower_bound,
            "seconds": seconds, "accuracy": model.score(data.X, y)}


def main() -> None:
    lines = ["| dataset | rows | solved on | status | objective | lower bound | s | training accuracy |",
             "|---|---|---|---|---|---|---|---|"]
    for name in DATASETS:
        for grouped in (False, True):
            r = fit(name, grouped)
            lines.append(f"| {name} | {r['rows']:,} | {r['solved on']:,} {'distinct' if grouped else 'rows'} | "
                         f"{r['status']} | {r['objective']:.0f} | {r['lower']:.0f} | {r['seconds']:.1f} | "
                         f"{r['accuracy']:.4f} |")
            print(lines[-1], flush=True)
    write_block("ruleset_rows", f"{stamp('python benchmarks/ruleset_rows.py')}\n\n" + "\n".join(lines),
                "Rule sets on distinct rows (complexity <= 20, 60 s)")


if __name__ == "__main__":
    main()
