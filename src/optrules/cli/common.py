"""What the commands share: reading a table, writing files, the data options, printing."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from rich.console import Console
from rich.text import Text

if TYPE_CHECKING:  # (annotations only: pandas is imported where a command reads a table)
    import pandas as pd

from ..data.datasets import DATASETS, load_dataset
from ..escape import printable, printable_lines
from ..parameters import (
    BINARIZER_PARAMETERS,
    MAX_CARD,
    add_option,
)

EXAMPLES = """\
examples:
  optrules fit --dataset compas -r 0.005                 certified rule list on bundled COMPAS
  optrules fit data.csv --target label -o model.json     your CSV (or .parquet); save the model
  optrules fit data.csv --target label -r 0.02 0.01 0.005 --cv 5
                                                         choose lambda by 5-fold cross-validation
  optrules predict model.json new.csv -o scored.csv      predictions (+ --proba, --explain)
  optrules export model.json --to sql -o model.sql       the model as an SQL query (or --to python)
  optrules report model.json data.csv --target label --group race sex
                                                         one HTML page: rules, certificate, accuracy by group
  optrules trace model.json -o trace.png                 the search's convergence, as in the paper
  optrules rashomon --dataset compas -r 0.01 --epsilon 0.01 --relative --group sex
                                                         every list within 1% of the optimum, compared
  optrules bench --dataset compas -r 0.02 0.01           time and memory of the search
  optrules serve                                         the web app on http://127.0.0.1:8000/

Run 'optrules COMMAND --help' for the options of one command.
"""


_UNSET = object()  # --time-limit not given (argparse converts string defaults, not this)


def _read_table(path: str, sep: str | None = None, encoding: str = "utf-8", header: bool = True) -> pd.DataFrame:
    """A CSV or Parquet file as a DataFrame, or a one-line error saying what is wrong with it."""
    from ..data.tables import TableError, read_table

    try:
        return read_table(path, sep=sep, encoding=encoding, header=header)
    except TableError as error:
        raise SystemExit(f"error: {error}") from None


def _written(path: str, write) -> None:
    """Call ``write(temporary path)`` and put the file in place of ``path`` (:func:`optrules.files.replacing`:
    a write that fails leaves the previous file as it was), or a one-line error."""
    from ..files import replacing

    try:
        with replacing(path) as temporary:
            write(temporary)
    except OSError as error:
        raise SystemExit(f"error: cannot write {printable(path)}: {error.strerror or printable(error)}") from None


def _write_text(path: str, text: str) -> None:
    def write(temporary):
        Path(temporary).write_text(text, encoding="utf-8")
    _written(path, write)


def _write_table(frame: pd.DataFrame, path: str) -> None:
    if path.endswith(".parquet"):
        _written(path, lambda temporary: frame.to_parquet(temporary, index=False))
    else:
        _written(path, lambda temporary: frame.to_csv(temporary, index=False))


def _check_output(path: str | None) -> None:
    """Refuse an output path that cannot be written, before any long work."""
    if not path:
        return
    target = Path(path)
    folder = target.parent if str(target.parent) else Path(".")
    if target.is_dir():
        raise SystemExit(f"error: the output {path} is a folder")
    if not folder.is_dir():
        raise SystemExit(f"error: cannot write {path}: no folder {folder}")
    if not os.access(folder, os.W_OK) or (target.exists() and not os.access(target, os.W_OK)):
        raise SystemExit(f"error: cannot write {path}: permission denied")


def _load_xy(args):
    """Features, target, sample weights (or None) and a description, from ``--dataset NAME`` or from a
    CSV/Parquet file with ``--target`` (and ``--weight-column``, ``--drop``)."""
    if args.dataset:
        data = load_dataset(args.dataset)
        return data.X, data.y, None, data.description
    if not args.data or not args.target:
        raise SystemExit("error: give a data file and --target COLUMN, or --dataset NAME (see 'optrules info')")
    frame = _read_table(args.data, args.sep, args.encoding, not args.no_header)
    frame.columns = [str(c) for c in frame.columns]
    if args.no_header:  # --target 8 names the column x8 (columns are numbered from 0)
        for option in ("target", "weight_column"):
            setattr(args, option, _headerless_column(getattr(args, option, None)))
        args.drop = [_headerless_column(column) for column in args.drop or []] or None
    named = [args.target, getattr(args, "weight_column", None), *(args.drop or [])]
    for column in named:
        if column is not None and column not in frame.columns:
            shown = ", ".join(frame.columns[:30]) + (" ..." if frame.shape[1] > 30 else "")
            from ..data.binarize import looks_numeric

            hint = (" (--no-header: columns are named x0, x1, ...)" if args.no_header else
                    " (its first line reads like data, not names: --no-header names the columns x0, x1, ...)"
                    if column.strip().isdigit() or any(looks_numeric(name) for name in frame.columns) else "")
            raise SystemExit(f"error: no column {column!r} in {args.data}; columns: {shown}{hint}")
    weights = None
    drop = [args.target, *(args.drop or [])]
    if getattr(args, "weight_column", None):
        try:
            weights = frame[args.weight_column].to_numpy(dtype=np.float64)
        except (TypeError, ValueError):
            raise SystemExit(f"error: the weight column {args.weight_column!r} must hold numbers") from None
        drop.append(args.weight_column)
    if frame.shape[1] <= len(set(drop)):
        raise SystemExit(f"error: {args.data} has no feature column besides the target")
    return frame.drop(columns=list(dict.fromkeys(drop))), frame[args.target], weights, args.data


def _headerless_column(column: str | None) -> str | None:
    """A column of a table without a header, given as its number (8) or its name (x8): its name."""
    return f"x{column.strip()}" if column is not None and column.strip().isdigit() else column


def _add_data_arguments(parser: argparse.ArgumentParser, data_help: str | None = None) -> None:
    parser.add_argument("data", nargs="?",
                        help=data_help or "CSV (or .parquet) file with the features and the target column")
    parser.add_argument("--target", help="name of the target column (the class to predict)")
    parser.add_argument("--dataset", help=f"a bundled dataset instead of a file: {', '.join(DATASETS)}"
                                          " (compas-B: with race)")
    parser.add_argument("--sep", default=None, help="CSV separator (default: detected)")
    parser.add_argument("--encoding", default="utf-8", help="text encoding of the CSV (default utf-8; e.g. latin-1)")
    parser.add_argument("--no-header", action="store_true",
                        help="the CSV has no header line: columns are named x0, x1, x2, ... as a numpy array's "
                             "(--target 8 or --target x8: the ninth)")
    parser.add_argument("--drop", nargs="+", metavar="COLUMN", help="columns to leave out of the features")
    parser.add_argument("--keep-identifiers", action="store_true",
                        help="use columns that look like row identifiers (left out by default, with a warning)")
    binarizing = {entry.name: entry for entry in BINARIZER_PARAMETERS}
    add_option(parser, MAX_CARD, default=None, metavar="K",
               help=f"{MAX_CARD.help} (default: the family's)")
    add_option(parser, binarizing["negations"], default=None, help=f"{binarizing['negations'].help} (default: the family's)")
    thresholds = binarizing["thresholds"]
    add_option(parser, thresholds, default=None,
               help=f"{thresholds.help}: the splits of a boosted reference fitted on the target make a small space that "
                    f"certifies on raw tables (default: {thresholds.default})")
    add_option(parser, binarizing["missing"])


def _binarizer_options(args) -> dict:
    """The binarizer's settings the command line was given (the others stay the estimator's defaults)."""
    given = {"negations": args.negations, "thresholds": args.thresholds, "max_card": args.max_card}
    return {key: value for key, value in given.items() if value is not None}


def _identifiers(args) -> str:
    return "keep" if getattr(args, "keep_identifiers", False) else "drop"


def _cell(text) -> Text:
    """A table cell from the data: shown as it is (no markup), control characters escaped."""
    return Text(printable(text))


def _print(console: Console, text) -> None:
    """Text that holds names and values from the data: its control characters shown escaped."""
    console.print(printable_lines(text), markup=False, highlight=False, soft_wrap=True)


# -- fit ------------------------------------------------------------------------------------------------
def _show_progress(args) -> bool:
    return bool(args.verbose or (sys.stderr.isatty() and not args.quiet))


# -- the parser -----------------------------------------------------------------------------------------
def _n_jobs(text: str) -> int:
    from ..parameters import N_JOBS

    value = int(text) if text.lstrip("-").isdigit() else text
    if not N_JOBS.allows(value):
        raise argparse.ArgumentTypeError(f"takes a whole number other than 0, got {printable(text)!r}")
    return value


def _taking(capability: str) -> str:
    """"--model a, b": the families with a capability (that take an option), for its help."""
    from ..families import names_where

    return "--model " + ", ".join(names_where(lambda other: getattr(other, capability)))


# -- predict --------------------------------------------------------------------------------------------
def _load_saved(path: str):
    from ..models import load_model

    if not Path(path).is_file():
        raise SystemExit(f"error: no such model file: {path}")
    try:
        return load_model(Path(path).read_text(encoding="utf-8-sig"))
    except UnicodeDecodeError:
        raise SystemExit(f"error: {path} is not a saved optrules model (not UTF-8 text)") from None
    except ValueError as error:  # load_model checks the whole file: ModelFileError, one line
        raise SystemExit(f"error: {path}: {printable(error)}; save models with 'optrules fit ... -o FILE'") from None


def _saved_certificate(path: str, data):
    """The certificate saved beside a model (None if there is none), or a one-line error."""
    from ..certificate import Certificate

    if not isinstance(data, dict) or "certificate" not in data:
        return None
    try:
        return Certificate.from_dict(data["certificate"])
    except (KeyError, TypeError, ValueError, OverflowError) as error:
        raise SystemExit(f"error: {path} has an invalid certificate ({printable(error)[:200]})") from None


def _saved_target(path: str, columns, model, key: str = "target") -> str | None:
    """The target column a model file names (``optrules fit --target``; ``key="sensitive"``: the column of
    the groups a fairness constraint compared, ``--sensitive``), if ``columns`` hold it and the model does
    not read it as a feature."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8-sig"))
    except ValueError:  # (load_model read the file already: it is JSON)
        return None
    name = data.get(key) if isinstance(data, dict) else None
    features = getattr(model.binarizer, "columns_", None) if model.binarizer is not None else model.feature_names
    if not isinstance(name, str) or name not in columns or name in set(features or ()):
        return None
    return name


# -- report ---------------------------------------------------------------------------------------------
def _group_columns(args, X, frame=None):
    """The --group columns, from the features or from the file (a column left out with --drop)."""
    if not getattr(args, "group", None):
        return None
    found = {}
    for column in args.group:
        if column in X.columns:
            found[column] = X[column].to_numpy()
        elif frame is not None and column in frame.columns:
            found[column] = frame[column].to_numpy()
        else:
            raise SystemExit(f"error: --group {column!r} is not a column of the data")
    return found


def _report_groups(args, X):
    """The report's groups of a fit: the --group columns, and the sensitive column a constraint compared."""
    groups = _group_columns(args, X) or {}
    if getattr(args, "sensitive", None):
        groups[args.sensitive] = args.sensitive_values
    return groups or None


def _write_report(path: str, model, certificate, X, y, groups, weights, source, console: Console, frontier=None) -> None:
    from ..report import html_report

    html = html_report(model, certificate, X, y, groups, weights, title=f"optrules: {Path(source).name}", source=source,
                       frontier=frontier)
    _write_text(path, html)
    console.print(f"report written to {path}")


def _save_figure(name: str, path: str, console: Console, *arguments, **options) -> None:
    """Draw with :mod:`optrules.plots`' function ``name`` and write the figure to ``path``."""
    try:
        import matplotlib
    except ImportError:  # pragma: no cover
        raise SystemExit("error: plotting needs matplotlib: pip install 'optrules[plot]'") from None
    matplotlib.use("Agg")
    from .. import plots

    figure = getattr(plots, name)(*arguments, **options)
    _written(path, lambda temporary: figure.savefig(temporary, dpi=120, format=Path(path).suffix.lstrip(".") or None))
    console.print(f"figure written to {path}")


def _class_named(text: str | None, y):
    from ..data.validation import class_named

    if text is None:
        return None
    try:
        return class_named(text, y)
    except ValueError as error:
        raise SystemExit(f"error: --pos-label {error}") from None
