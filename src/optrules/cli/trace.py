"""``optrules trace``: a saved fit's search over time, as a table and a figure."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

from ..escape import printable
from .common import _add_data_arguments, _print, _save_figure, _saved_certificate
from .fit import _add_fit_arguments, _fit_model


# -- trace ----------------------------------------------------------------------------------------------
def cmd_trace(args, console: Console) -> int:
    if args.data and args.data.endswith(".json"):
        if not Path(args.data).is_file():
            raise SystemExit(f"error: no such model file: {args.data}")
        try:
            data = json.loads(Path(args.data).read_text(encoding="utf-8-sig"))
        except (ValueError, UnicodeDecodeError, RecursionError) as error:
            raise SystemExit(f"error: {args.data} is not a saved optrules model ({printable(error)[:200]})") from None
        certificate = _saved_certificate(args.data, data)
        if certificate is None:
            raise SystemExit(f"error: {args.data} has no certificate: save it with 'optrules fit ... -o FILE'")
        title = args.data
    else:
        model, *_, summary, _ = _fit_model(args, console)
        certificate, title = model.certificate_, summary
        if certificate is None:
            raise SystemExit("error: a Monte-Carlo search has no certificate to trace")
    trace = certificate.trace
    if not len(trace):
        raise SystemExit("error: the certificate has no trace (column generation records none)")
    table = Table(title=f"search trace ({len(trace)} points)")
    for column in ("time (s)", "best objective", "lower bound", "queue", "log10 remaining"):
        table.add_column(column, justify="right")
    shown = sorted(set(np.linspace(0, len(trace) - 1, min(len(trace), args.rows)).astype(int)))
    for i in shown:
        table.add_row(f"{trace.time[i]:.3f}", f"{trace.objective[i]:.6f}", f"{trace.lower_bound[i]:.6f}",
                      f"{sum(trace.queue_by_length[i]):,}", f"{trace.log10_remaining[i]:.2f}")
    console.print(table)
    _print(console, certificate)
    if args.output:
        _save_figure("plot_trace", args.output, console, certificate, title=title)
    return 0


def _add_trace_command(commands) -> None:
    trace = commands.add_parser(
        "trace", help="show how the search converged (objective, lower bound, queue, remaining space)",
        description="Trace of a certified search: from a model saved by 'fit -o', or by running the search on "
                    "data (same options as 'fit'). With -o, draws the paper's trace figure.",
    )
    _add_data_arguments(trace, "model JSON saved by 'fit -o', or a CSV/.parquet file to fit")
    _add_fit_arguments(trace)
    trace.add_argument("--output", "-o", help="write the trace figure (PNG, SVG or PDF) to this file")
    trace.add_argument("--rows", type=int, default=12, help="trace points shown in the table (default 12)")
    trace.set_defaults(handler=cmd_trace)
