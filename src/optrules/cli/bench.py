"""``optrules bench``: fits timed on a table, as a table and JSON rows."""

from __future__ import annotations

import json
import time

from rich.console import Console
from rich.table import Table

from .common import _add_data_arguments, _load_xy, _write_text
from .fit import _add_fit_arguments, _check_fit_arguments, _estimator


# -- bench ----------------------------------------------------------------------------------------------
def cmd_bench(args, console: Console) -> int:
    """Fit the model once per value of the family's --cv parameter (and --repeat times each); time it."""
    from ..families import family as family_named

    family = family_named(args.model)
    _check_fit_arguments(args, family, several_values=True)
    X, y, weights, source = _load_xy(args)
    label = family.cv_label or "setting"
    table = Table(title=f"certified {family.title} on {source} ({len(X)} samples, max_card {args.max_card or 'auto'})")
    for column in (label, "status", "objective", "rules", "search (s)", "expanded", "state MB", "peak RSS MB"):
        table.add_column(column, justify="right")
    rows = []
    for value in family.cv_candidates(args) or [None]:
        for _ in range(args.repeat):
            estimator = _estimator(args, family, y, args.time_limit)
            if value is not None:
                estimator.set_params(**{family.cv_parameter: value})
            start = time.perf_counter()
            model = estimator.fit(X, y, **({} if weights is None else {"sample_weight": weights}))
            rows.append(_bench_row(label, value, model, time.perf_counter() - start))
            row = rows[-1]
            table.add_row(f"{value:g}" if value is not None else "", row["status"], f"{row['objective']:.6f}",
                          str(row["rules"]), f"{row['search_seconds']:.3f}", f"{row['nodes_expanded']:,}",
                          f"{row['state_mb']:.1f}", f"{row['peak_rss_mb']:.0f}")
    console.print(table)
    console.print("[dim]peak RSS is the whole process's so far (Python, numpy, numba included)[/]")
    if args.output:
        _write_text(args.output, json.dumps(rows, indent=2, default=float))
        console.print(f"results written to {args.output}")
    return 0


def _bench_row(label: str, value, model, wall: float) -> dict:
    import resource

    certificate = model.certificate_
    counters = certificate.counters
    return {label: value, "status": certificate.status, "objective": certificate.objective,
            "rules": len(model.rule_list_), "search_seconds": counters.get("total_time", wall), "fit_seconds": wall,
            "nodes_expanded": int(counters.get("nodes_expanded", 0)),
            "state_mb": counters.get("memory_bytes", 0) / 2**20,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def _add_bench_command(commands) -> None:
    bench = commands.add_parser(
        "bench", help="time the certified search for several lambdas (or another family's setting)",
        description="Fit a certified model per value of the family's --cv parameter (lambda for rule lists) and "
                    "report search time, work done and memory.",
    )
    _add_data_arguments(bench)
    _add_fit_arguments(bench, cross_validation=False)
    bench.add_argument("--repeat", type=int, default=1, help="runs per value (default 1)")
    bench.add_argument("--output", "-o", help="write the measurements as JSON to this file")
    bench.set_defaults(handler=cmd_bench)
