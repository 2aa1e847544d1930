"""``optrules export``: a saved model as SQL or a Python module."""

from __future__ import annotations

from rich.console import Console

from .common import _load_saved, _write_text


# -- export ---------------------------------------------------------------------------------------------
def cmd_export(args, console: Console) -> int:
    model = _load_saved(args.model_file)
    text = model.to_sql(args.table, args.dialect) if args.to == "sql" else model.to_python()
    if args.output:
        _write_text(args.output, text + "\n")
        console.print(f"{args.to} written to {args.output}")
    else:
        print(text)  # as is: rich would wrap the lines
    return 0


def _add_export_command(commands) -> None:
    export = commands.add_parser(
        "export", help="a saved model as an SQL query or a standalone Python module",
        description="Write a saved model as an SQL query over a table of the training columns (one row per "
                    "input row: prediction, probability, rule) or as a Python module (standard library "
                    "only) with predict(row), predict_proba(row) and explain(row).",
    )
    export.add_argument("model_file", help="model JSON written by 'optrules fit -o'")
    export.add_argument("--to", choices=["sql", "python"], default="sql", help="what to write (default sql)")
    export.add_argument("--table", default="data", help="the SQL table to read (default data)")
    export.add_argument("--dialect", choices=["sqlite", "duckdb"], default="sqlite", help="SQL dialect (default sqlite)")
    export.add_argument("--output", "-o", help="write to this file (default: print)")
    export.set_defaults(handler=cmd_export)
