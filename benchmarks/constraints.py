"""Domain constraints on raw tables: what a required column costs the certified rule-list search.

For each table, the rule list with defaults (lambda = 0.01, 30 s budget), then the same fit requiring
the first column the free list does not use (``required=[column]``; among the columns some antecedent
of the free fit uses) and requiring two such columns.
Raw tables as ``raw_data.py`` reads them (``../shared/data``). Run by hand:
``python benchmarks/constraints.py``; writes the table in its history file, benchmarks/history/ (and the summary, BENCHMARKS.md).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchmarks_md import stamp, write_block  # noqa: E402
from raw_data import read  # noqa: E402

from optrules import RuleListClassifier  # noqa: E402

TABLES = ["heart", "ionosphere", "pima", "mushroom", "compas (raw)", "mixed 5000x20", "bank-full"]
BUDGET = 30.0


def fit(X, y, required):
    start = time.perf_counter()
    model = RuleListClassifier(regularization=0.01, time_limit=BUDGET, missing="category", required=required).fit(X, y)
    return model, time.perf_counter() - start


def columns_used(model) -> set[str]:
    column_of = {feature.name: feature.column for feature in model.binarizer_.features_}
    return {column_of[c] for rule in model.rule_list_.rules for c in rule.conditions}


def row(name, X, required, model, seconds) -> str:
    c = model.certificate_
    return (f"| {name} | {len(X):,} | {', '.join(required) if required else '-'} | {len(model.antecedents_):,} | "
            f"{c.status} | {c.objective:.4f} | {c.objective - c.lower_bound:.4f} | {len(model.rule_list_)} | "
            f"{seconds:.1f} |")


def main() -> None:
    lines = ["| table | rows | required | antecedents | status | objective | gap | rules | s |",
             "|---|---|---|---|---|---|---|---|---|"]
    for name in TABLES:
        X, y = read(name)
        free, seconds = fit(X, y, None)
        lines.append(row(name, X, None, free, seconds))
        print(lines[-1], flush=True)
        used = columns_used(free)
        column_of = {feature.name: feature.column for feature in free.binarizer_.features_}
        mined = {column_of[c] for a in range(len(free.antecedents_)) for c in free.antecedents_.conditions(a)}
        unused = [c for c in free.binarizer_.columns_ if c not in used and c in mined]
        for required in (unused[:1], unused[:2]):
            model, seconds = fit(X, y, required)
            assert all(c in columns_used(model) for c in required)
            lines.append(row(name, X, required, model, seconds))
            print(lines[-1], flush=True)
    write_block("constraints", f"{stamp('python benchmarks/constraints.py')}\n\n" + "\n".join(lines),
                f"Required columns on raw tables (lambda = 0.01, {BUDGET:.0f} s)")


if __name__ == "__main__":
    main()
