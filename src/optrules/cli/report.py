"""``optrules report``: a saved model's self-contained HTML report on data."""

from __future__ import annotations

import json
from pathlib import Path

from rich.console import Console

from .common import (
    _add_data_arguments,
    _check_output,
    _group_columns,
    _load_saved,
    _load_xy,
    _read_table,
    _saved_certificate,
    _write_report,
)


def cmd_report(args, console: Console) -> int:
    _check_output(args.output)
    model = _load_saved(args.model_file)
    certificate = _saved_certificate(args.model_file, json.loads(Path(args.model_file).read_text(encoding="utf-8-sig")))
    X = y = groups = weights = None
    source = args.model_file
    if args.data or args.dataset:
        X, y, weights, source = _load_xy(args)
        frame = None if args.dataset else _read_table(args.data, args.sep, args.encoding, not args.no_header)
        if frame is not None:
            frame.columns = [str(c) for c in frame.columns]
        groups = _group_columns(args, X, frame)
        missing = [c for c in model.binarizer.columns_ if c not in X.columns] if model.binarizer is not None else []
        if missing:
            raise SystemExit(f"error: the data lack the model's columns {missing}")
    elif args.group:
        raise SystemExit("error: --group needs data: a file with --target, or --dataset")
    _write_report(args.output, model, certificate, X, y, groups, weights, source, console)
    return 0


def _add_report_command(commands) -> None:
    report = commands.add_parser(
        "report", help="one self-contained HTML page of a saved model: data, rules, certificate, accuracy by group",
        description="Write an HTML page (no scripts, no external files) describing a saved model: the data it is "
                    "scored on, its rules with their training counts, the certificate and its gap, the search's "
                    "trace, and accuracy overall and by the --group columns.",
    )
    report.add_argument("model_file", help="model JSON written by 'optrules fit -o'")
    _add_data_arguments(report, "CSV (or .parquet) file to describe and score the model on (optional)")
    report.add_argument("--weight-column", help="column of per-row weights for the accuracy table")
    report.add_argument("--group", nargs="+", metavar="COLUMN", help="break accuracy down by these columns")
    report.add_argument("--output", "-o", default="report.html", help="the page to write (default report.html)")
    report.set_defaults(handler=cmd_report)
