"""Command line: ``optrules info | mine | fit | rashomon | predict | export | report | trace | bench | serve``."""

from __future__ import annotations

import argparse
import time
import warnings

from .._lazy import defer_import

# scikit-learn imports scipy.stats when it starts (0.4-0.7 s with scipy 1.17, parsing docstrings) and uses
# it in none of the functions a command calls: a command waits for it only if something does use it.
defer_import("scipy.stats")

from rich.console import Console
from rich.markup import escape

from ..budget import interrupts_heard
from ..escape import printable_lines
from ..parameters import DEFAULT_TIME_LIMIT

# pandas, scikit-learn (through the binarizer) and numba (the miner) are imported by the commands that
# use them, not here: `optrules --help` and a mistyped option answer in ~0.3 s instead of ~1.7 s.
# One module per command (pip's commands/ as the model); `common` holds what several share.
from .bench import _add_bench_command
from .common import _UNSET, EXAMPLES, _read_table  # noqa: F401  (_read_table: the table reader, for callers of cli)
from .compile import _add_compile_command
from .export import _add_export_command
from .fit import _add_fit_command
from .info import _add_info_command
from .mine import _add_mine_command
from .predict import _add_predict_command
from .rashomon import _add_rashomon_command
from .report import _add_report_command
from .serve import _add_serve_command
from .trace import _add_trace_command


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="optrules", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Provably optimal, readable rule models with certificates: fit a rule list on a CSV, "
                    "see its proof of optimality, predict with it.",
        epilog=EXAMPLES,
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add_command in (_add_info_command, _add_mine_command, _add_fit_command, _add_rashomon_command,
                        _add_report_command, _add_predict_command, _add_export_command, _add_trace_command,
                        _add_bench_command, _add_compile_command, _add_serve_command):
        add_command(commands)
    return parser


def main(argv=None, started: float | None = None) -> int:
    """Run one command; ``started`` (a ``time.perf_counter()`` value) is when the command began, for its
    time budget: the console script passes the moment before its imports (default: now)."""
    started = time.perf_counter() if started is None else started
    args = build_parser().parse_args(argv)
    args.started = started
    if getattr(args, "time_limit", None) is _UNSET:
        args.time_limit, args.time_limit_default = DEFAULT_TIME_LIMIT, True
    else:
        args.time_limit_default = False
    console = Console()
    if not console.is_terminal:  # piped or captured: room for the tables rather than 80 columns
        console = Console(width=160)
    errors = Console(stderr=True, width=None if console.is_terminal else 160)

    def show_warning(message, category, filename, lineno, file=None, line=None):
        errors.print(f"[bold yellow]warning:[/] {escape(printable_lines(message))}", highlight=False)

    heard = interrupts_heard()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("default")
            warnings.showwarning = show_warning
            status = args.handler(args, console)
        if status == 0 and interrupts_heard() > heard:  # the fit returned its best on Ctrl-C: written, and
            errors.print("interrupted: the best model found before Ctrl-C is shown"  # still an interrupt
                         + (" and written" if getattr(args, "output", None) else ""))
            return 130
        return status
    except (ValueError, MemoryError) as error:
        console.print(f"[bold red]error:[/] {escape(printable_lines(error))}", highlight=False)
        return 2
    except KeyboardInterrupt:
        errors.print("interrupted")
        return 130
