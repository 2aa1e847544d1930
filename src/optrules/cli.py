"""Command line: ``optrules info | mine | fit | rashomon | predict | export | report | trace | bench | serve``."""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import sys
import time
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

from ._lazy import defer_import

# scikit-learn imports scipy.stats when it starts (0.4-0.7 s with scipy 1.17, parsing docstrings) and uses
# it in none of the functions a command calls: a command waits for it only if something does use it.
defer_import("scipy.stats")

import numpy as np
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:  # (annotations only: pandas is imported where a command reads a table)
    import pandas as pd

from .budget import interrupts_heard
from .data.datasets import DATASETS, load_dataset
from .escape import printable, printable_lines
from .parameters import (
    BINARIZER_PARAMETERS,
    DEFAULT_TIME_LIMIT,
    MAX_ANTECEDENTS,
    MAX_CARD,
    MAX_MEMORY,
    MAX_NODES,
    MAX_RULES,
    MB,
    NOT_GIVEN,
    TIME_LIMIT,
    add_option,
    in_megabytes,
    option_of,
)

# pandas, scikit-learn (through the binarizer) and numba (the miner) are imported by the commands that
# use them, not here: `optrules --help` and a mistyped option answer in ~0.3 s instead of ~1.7 s

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
    from .data.tables import TableError, read_table

    try:
        return read_table(path, sep=sep, encoding=encoding, header=header)
    except TableError as error:
        raise SystemExit(f"error: {error}") from None


def _written(path: str, write) -> None:
    """Call ``write(temporary path)`` and put the file in place of ``path`` (:func:`optrules.files.replacing`:
    a write that fails leaves the previous file as it was), or a one-line error."""
    from .files import replacing

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
            from .data.binarize import looks_numeric

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


def _binarize_and_mine(args, X, y, min_support: float):
    from .data.binarize import Binarizer
    from .data.mine import mine_antecedents
    from .data.validation import check_target
    from .families import default_family

    codes = check_target(y, len(X))[0]
    defaults = default_family().estimator().get_params()  # `mine` shows what the default family would search
    options = {**{key: defaults[key] for key in ("negations", "thresholds")}, **_binarizer_options(args)}
    binarizer = Binarizer(negations=options["negations"], missing=args.missing, identifiers=_identifiers(args),
                          min_category_count=max(1, int(np.ceil(min_support * len(X) - 1e-9))),
                          thresholds=options["thresholds"]).fit(X, codes)
    features = binarizer.transform(X)
    max_card = 2 if args.max_card in (None, "auto") else args.max_card
    antecedents = mine_antecedents(
        features, binarizer.feature_names_, binarizer.groups_, max_card=max_card, min_support=min_support,
        max_antecedents=args.max_antecedents,
    )
    return binarizer, antecedents


def _cell(text) -> Text:
    """A table cell from the data: shown as it is (no markup), control characters escaped."""
    return Text(printable(text))


def _print(console: Console, text) -> None:
    """Text that holds names and values from the data: its control characters shown escaped."""
    console.print(printable_lines(text), markup=False, highlight=False, soft_wrap=True)


# -- info, mine ---------------------------------------------------------------------------------------
def cmd_info(args, console: Console) -> int:
    import pandas as pd

    table = Table(title="Bundled datasets")
    for column in ("name", "rows", "features", "classes", "description", "source"):
        table.add_column(column)
    for name, (loader, _) in DATASETS.items():
        data = loader()
        counts = pd.Series(data.y).map(lambda v: data.classes[v] if isinstance(v, (int, np.integer)) else v).value_counts()
        classes = ", ".join(f"{label} {count:,}" for label, count in counts.sort_index().items())
        table.add_row(name, str(len(data.X)), str(data.X.shape[1]), classes, data.description, data.source)
    console.print(table)
    return 0


def cmd_mine(args, console: Console) -> int:
    X, y, _, source = _load_xy(args)
    start = time.perf_counter()
    binarizer, antecedents = _binarize_and_mine(args, X, y, args.min_support)
    elapsed = time.perf_counter() - start
    table = Table(title=f"{len(antecedents)} antecedents from {len(binarizer.feature_names_)} features, {source}")
    table.add_column("#", justify="right")
    table.add_column("antecedent")
    table.add_column("support", justify="right")
    table.add_column("share", justify="right")
    for i, (name, count) in enumerate(zip(antecedents.names, antecedents.support)):
        table.add_row(str(i), _cell(name), str(int(count)), f"{count / antecedents.n_samples:.3f}")
    console.print(table)
    _print(console, antecedents.report)
    console.print(f"binarized and mined in {elapsed:.3f} s")
    return 0


# -- fit ------------------------------------------------------------------------------------------------
def _show_progress(args) -> bool:
    return bool(args.verbose or (sys.stderr.isatty() and not args.quiet))


def _check_fit_arguments(args, family, several_values: bool = False) -> None:
    """Refuse combinations that would silently do something else, before any data is read (``several_values``:
    the command fits one model per value of the --cv parameter, as ``bench`` does)."""
    from .families import families, names_where

    def refuse(option: str, capability: str, why: str = "") -> None:
        takers = names_where(lambda other: getattr(other, capability))
        raise SystemExit(f"error: {option}: only for --model {' and '.join(takers)}, not --model {family.name}"
                         + (f": {why}" if why else ""))

    if getattr(args, "reference_out", None) and family.fit_reference_files is None:
        refuse("--reference-out", "fit_reference_files")
    if args.weight_column and not family.sample_weight:
        refuse("--weight-column", "sample_weight")
    fairness = getattr(args, "fairness", None)
    fairness = None if fairness is NOT_GIVEN else fairness  # (an option two families share: not given)
    if getattr(args, "sensitive", None) and not family.fairness:
        refuse("--sensitive", "fairness", "with --fairness")
    if bool(fairness) != bool(getattr(args, "sensitive", None)):
        raise SystemExit("error: --fairness needs --sensitive COLUMN (the column of the two groups it compares), and "
                         "--sensitive needs --fairness METRIC")
    if fairness and args.cv and type(getattr(args, "max_unfairness", None)) is list and len(args.max_unfairness) > 1:
        raise SystemExit("error: --cv chooses among one setting's values: give --max-unfairness one bound with --cv")
    if not fairness and type(getattr(args, "max_unfairness", None)) is list:  # (not its DefaultValues: given)
        raise SystemExit("error: --max-unfairness bounds the gap of --fairness METRIC: give both (and --sensitive)")
    if (args.max_rules is not None or args.forbid or args.require) and not family.constraints:
        refuse("--max-rules, --forbid and --require", "constraints")
    if getattr(args, "refine", False) and "refine" not in family.estimator().get_params():
        raise SystemExit(f"error: --refine: only for the families that take refine=, not --model {family.name}")
    if args.class_weight and not family.class_weight:
        refuse("--class-weight", "class_weight", "see the family's own options in --help")
    if args.pos_label is not None and not family.pos_label:
        refuse("--pos-label", "pos_label", "it predicts every class")
    if args.cv and family.cv_parameter is None:
        takers = [f"{name} ({other.cv_label})" for name, other in families().items() if other.cv_parameter]
        raise SystemExit(f"error: --cv chooses a setting of --model {' and '.join(takers)}, not of --model {family.name}")
    if args.pos_label == "both" and not (family.pos_label and family.cv_parameter and args.cv):
        takers = names_where(lambda other: other.pos_label and other.cv_parameter)
        raise SystemExit("error: --pos-label both needs --cv K and a family that describes one class and "
                         f"cross-validates (--model {' or '.join(takers)})")
    if len(family.cv_candidates(args)) > 1 and not args.cv and not several_values:
        raise SystemExit(f"error: several {option_of(family.cv_parameter)} values need --cv K to choose among them")
    for option in family.options:  # (an option several families share takes several values for one of them)
        given = getattr(args, option.name)
        if option.name not in (family.cv_parameter, "max_unfairness") and isinstance(given, list) and len(given) > 1:
            raise SystemExit(f"error: {family.option_flags(option)[0]} takes one value with --model {family.name}"
                             + (f" (--cv K chooses among {option_of(family.cv_parameter)} values)"
                                if family.cv_parameter else ""))
    if getattr(args, "scheduler", None) is not None:
        if not family.cluster or args.cv or getattr(args, "reference_out", None):
            takers = names_where(lambda other: other.cluster)
            raise SystemExit(f"error: --scheduler: only for --model {' and '.join(takers)}, without --cv or "
                             "--reference-out")
    _check_output(getattr(args, "output", None))
    _check_output(getattr(args, "report", None))


def _class_named(text: str | None, y):
    from .data.validation import class_named

    if text is None:
        return None
    try:
        return class_named(text, y)
    except ValueError as error:
        raise SystemExit(f"error: --pos-label {error}") from None


def _time_left(args, started: float) -> float | None:
    """What is left of --time-limit after reading the data (the budget covers the whole command)."""
    if args.time_limit is None:
        return None
    return max(args.time_limit - (time.perf_counter() - started), 0.01)


def _budget_text(args) -> str:
    if args.time_limit is None:
        return "no time limit"
    default = " (default; --time-limit SECONDS or none to change)" if args.time_limit_default else ""
    return f"time budget {args.time_limit:g} s{default}"


def _estimator(args, family, y, time_limit: float | None):
    """The unfitted estimator of ``family`` that the arguments describe (the family's own options read by
    the registry, :meth:`~optrules.families.Family.estimator_from_cli`, the options every family shares here)."""
    memory = None if args.max_memory is None else int(args.max_memory * MB)
    common = dict(time_limit=time_limit, missing=args.missing, identifiers=_identifiers(args), max_memory=memory,
                  verbose=_show_progress(args) and not args.cv, **_binarizer_options(args))
    if family.class_weight:
        common["class_weight"] = args.class_weight
    if family.constraints:
        common.update(max_rules=args.max_rules, forbidden=args.forbid, required=args.require)
    if getattr(args, "refine", False):
        common["refine"] = True
    pos_label = None if args.pos_label in (None, "both") else _class_named(args.pos_label, y)
    return family.estimator_from_cli(args, common, pos_label)


def _fit_model(args, console: Console):
    """Fit what the arguments ask for; returns ``(estimator, X, y, weights, source, summary line, frontier)``
    (``frontier``: the trade-off curve when --max-unfairness gave several bounds, its tightest bound's
    optimum the estimator; else None)."""
    from .families import family as family_named

    started = args.started
    family = family_named(args.model)
    _check_fit_arguments(args, family)
    X, y, weights, source = _load_xy(args)
    # the estimator's module (and scikit-learn, ~0.5 s) loads here, before the time left is measured:
    # loaded by estimator_from_cli below, after it, its import time was outside the budget (20 s: 21.4 s wall)
    family.estimator
    estimator = _estimator(args, family, y, _time_left(args, started))
    fit_weights = {} if weights is None else {"sample_weight": weights}
    if getattr(args, "sensitive", None):
        fit_weights["sensitive"] = args.sensitive
    bounds = getattr(args, "max_unfairness", None)
    frontier = None
    if args.cv:
        search = family.cv_from_cli(args, estimator).fit(X, y, **fit_weights)
        _print_cv_table(console, args.cv, search, family.cv_parameter, family.cv_label, *family.cv_size)
        model = search.best_estimator_
    elif isinstance(bounds, list) and len(bounds) > 1:
        from .fairness.frontier import fairness_frontier

        # (the time limit covers the whole command: the bounds share what is left)
        frontier = fairness_frontier(estimator, X, y, args.sensitive, bounds, sample_weight=weights,
                                     time_limit=_time_left(args, started))
        _print_frontier(console, frontier)
        model = frontier.points[0].model
    else:
        with _on_scheduler(getattr(args, "scheduler", None), _time_left(args, started)):
            model = estimator.fit(X, y, **fit_weights)
    if getattr(args, "sensitive", None):  # (not a feature: what reads the model's predictions leaves it out)
        args.sensitive_values = X[args.sensitive].to_numpy(dtype=object)  # (the report's groups)
        X = X.drop(columns=[args.sensitive])
    summary = (f"{source}: {len(X)} samples, {family.settings_text(model)}; {_budget_text(args)}"
               + (" per fit" if args.cv else ""))
    return model, X, y, weights, source, summary, frontier


def _print_frontier(console: Console, frontier) -> None:
    """The trade-off curve's table: a row per bound, the tightest first (its list is the one kept)."""
    table = Table(title=f"the certified optimum under each bound ({frontier.metric.replace('_', ' ')}); the first is kept")
    for column in ("bound", "status", "objective", "lower bound", "gap achieved", "rules", "searched"):
        table.add_column(column, justify="right")
    for row in frontier.table():
        table.add_row(f"{row['max_unfairness']:g}", row["status"], f"{row['objective']:.6f}", f"{row['lower_bound']:.6f}",
                      f"{row['unfairness']:.4f}", str(row["rules"]), "yes" if row["searched"] else "no (a looser optimum)")
    console.print(table)


@contextlib.contextmanager
def _on_scheduler(address, seconds: float | None = None):
    """The rule-list search on the Dask cluster at ``address`` (None: on this machine), reached within
    ``seconds`` (what is left of the budget) and :data:`SCHEDULER_TIMEOUT` at most."""
    if address is None:
        yield
        return
    from .corels.cluster import SCHEDULER_TIMEOUT, connect_scheduler, on_cluster

    try:
        client = connect_scheduler(address, timeout=min(SCHEDULER_TIMEOUT, seconds or SCHEDULER_TIMEOUT))
    except ImportError:
        raise SystemExit("error: --scheduler needs Dask's distributed (pip install distributed)") from None
    except ValueError as error:
        raise SystemExit(f"error: --scheduler: {error}") from None
    with client, on_cluster(client):
        yield


def _print_cv_table(console: Console, n_folds, search, parameter: str, label: str, size: str, size_title: str) -> None:
    """The cross-validation table: one row per candidate setting (its space of thresholds and its class
    when several were tried), the chosen one starred."""
    results = search.cv_results_
    labels = results.get("pos_label")
    by_class = labels is not None and any(label is not None for label in labels)
    spaces = results.get("thresholds")
    by_space = spaces is not None and len(set(spaces)) > 1
    table = Table(title=f"{n_folds}-fold cross-validation")
    columns = [label] + (["thresholds"] if by_space else []) + (["class"] if by_class else [])
    gaps = results.get("mean_test_unfairness")  # (under a fairness constraint: the test folds' gap)
    for column in columns + ["mean accuracy", "sd", size_title, "folds certified"] + ([] if gaps is None else ["test gap"]):
        table.add_column(column, justify="right")
    for j, value in enumerate(results[parameter]):
        is_chosen = all(results[key][j] == wanted for key, wanted in search.best_params_.items())
        cells = ([f"{value:g}" + (" *" if is_chosen else "")] + ([_cell(spaces[j])] if by_space else [])
                 + ([_cell(labels[j])] if by_class else []))
        table.add_row(*cells, f"{results['mean_test_score'][j]:.4f}", f"{results['std_test_score'][j]:.4f}",
                      f"{results[size][j]:.1f}", f"{results['certified_fraction'][j]:.0%}",
                      *([] if gaps is None else [f"{gaps[j]:.4f}"]))
    console.print(table)


def cmd_fit(args, console: Console) -> int:
    if args.reference_out:
        return _fit_reference(args, console)
    model, X, y, weights, _, summary, frontier = _fit_model(args, console)
    console.print(f"[dim]{escape(printable_lines(summary))}[/]")
    report = getattr(getattr(model, "antecedents_", None), "report", None)
    if report is not None and report.notes:
        console.print(f"[dim]{escape(printable_lines(report))}[/]")
    _print(console, model.rule_list_)
    console.print()
    certificate = getattr(model, "certificate_", None)
    if certificate is not None:
        _print(console, certificate)
    else:
        console.print(f"Monte-Carlo search: objective {model.objective_:.9f} (not certified)")
    correct = model.predict(X) == np.asarray(y)  # as model.score, without importing sklearn.metrics (0.1 s)
    line = f"training accuracy {correct.mean():.4f}"
    if weights is not None:
        line += f", weighted {np.average(correct, weights=weights):.4f}"
    from .families import family

    extra = family(args.model).fit_text(model)
    console.print(line + (f", {extra}" if extra else ""))
    if args.report:
        _write_report(args.report, model.rule_list_, certificate, X, y, _report_groups(args, X), weights,
                      args.data or args.dataset, console, frontier)
    return _save(args, model.rule_list_, certificate, console)


def cmd_rashomon(args, console: Console) -> int:
    """Fit the optimal rule list, then enumerate every list within --epsilon of it and describe them."""
    import pandas as pd

    from .families import family, with_rashomon_sets

    if not family(args.model).rashomon:
        raise SystemExit("error: the Rashomon set is enumerated for rule lists ("
                         + ", ".join(f"--model {name}" for name in with_rashomon_sets()) + ")")
    if args.cv:
        raise SystemExit("error: rashomon takes one --regularization value, not --cv")
    if args.epsilon < 0:
        raise SystemExit(f"error: --epsilon must be >= 0, got {args.epsilon}")
    _check_output(args.output)
    _check_output(args.plot)
    if args.plot and Path(args.plot).suffix.lower() not in (".png", ".svg", ".pdf"):
        raise SystemExit(f"error: --plot {args.plot}: name a .png, .svg or .pdf file")
    started = args.started
    model, X, y, _, _, summary, _ = _fit_model(args, console)
    console.print(f"[dim]{escape(printable_lines(summary))}[/]")
    for column in args.group or []:
        if column not in X.columns:
            raise SystemExit(f"error: --group {column}: no such feature column; columns: {', '.join(map(str, X.columns))}")
    if not model.certificate_.is_optimal:
        console.print("[yellow]the fit did not certify its optimum: the enumeration finds R* itself[/]")
    from .budget import Budget
    from .corels.rashomon_analysis import ENUMERATION_SHARE

    memory = None if args.max_memory is None else int(args.max_memory * MB)
    left = _time_left(args, started)  # (the enumeration has its share; the analysis, below, what is left)
    rashomon = model.rashomon_set(args.epsilon, relative=args.relative, max_nodes=args.max_nodes,
                                  time_limit=None if left is None else ENUMERATION_SHARE * left, max_memory=memory)
    counters = rashomon.counters
    if not math.isfinite(rashomon.optimum):
        raise SystemExit(f"error: the enumeration stopped ({rashomon.status}) after {counters['nodes']:,} uncaptured sets "
                         f"in {counters['time']:.2f} s before reaching any rule list (complete below objective "
                         f"{rashomon.complete_below:.9f}): raise --time-limit or --max-memory, or fit with fewer "
                         "antecedents (--max-card 1, a higher --min-support)")
    console.print(f"{rashomon.size:,} rule lists with objective <= R* + epsilon = {rashomon.optimum:.9f} + "
                  f"{rashomon.epsilon:.9f} (lambda {model.regularization:g}); {counters['nodes']:,} uncaptured sets "
                  f"searched in {counters['time']:.2f} s")
    if rashomon.complete:
        console.print("certified complete: every list within epsilon of the optimum is counted")
    else:
        console.print(f"[yellow]not complete ({rashomon.status}): every list of objective below "
                      f"{rashomon.complete_below:.9f} is counted, lists above it may be missing[/]")
    if not rashomon.mined_all_rules:
        console.print("[dim]over the mined antecedents; rules rarer than the mining floor are not considered "
                      f"(fit with a lower --min-support, e.g. {max(0.0, model.regularization - rashomon.epsilon):.4g}, "
                      "to include them)[/]")
    counts = Table(title="members by objective")
    for column in ("objective", "members"):
        counts.add_column(column, justify="right")
    for value, count in list(rashomon.objective_counts().items())[:args.rows]:
        counts.add_row(f"{value:.9f}", f"{count:,}")
    console.print(counts)
    members = rashomon.sample(args.show, args.sample_seed) if args.sample else []
    if not args.sample:
        for member in rashomon:
            if len(members) == args.show:
                break
            members.append(member)
    for k, member in enumerate(sorted(members, key=lambda m: m.objective)):
        console.print(f"[bold]{'sampled ' if args.sample else ''}member {k + 1}[/]")
        _print(console, member)
    chosen = None if rashomon.size <= args.max_members else rashomon.sample(args.max_members, args.sample_seed)
    note = "" if chosen is None else f" (a uniform sample of {args.max_members:,} members)"
    budget = Budget(_time_left(args, started))
    with budget.catch_interrupt():
        _describe_rashomon(args, console, rashomon, X, y, chosen, note, budget)
    if args.output:
        listed = chosen if chosen is not None else list(rashomon)
        frame = pd.DataFrame({
            "objective": [m.objective for m in listed],
            "rules": [m.n_rules for m in listed],
            "mistakes": [m.mistakes for m in listed],
            "list": [" ; ".join(" and ".join(r) + f" -> {p}" for r, p in zip(m.rules, m.predictions))
                     + f" ; else -> {m.predictions[-1]}" for m in listed],
        })
        _write_table(frame, args.output)
        console.print(f"wrote {len(frame):,} members to {args.output}{note}")
    if args.plot:
        with budget.catch_interrupt():  # (the figure's analyses within what is left of the time, and Ctrl-C)
            _save_figure("plot_rashomon", args.plot, console, rashomon, X, y, group=(args.group or [None])[0],
                         members=chosen, budget=budget)
    return 0


def _describe_rashomon(args, console: Console, rashomon, X, y, chosen, note: str, budget) -> None:
    """The tables of ``optrules rashomon``: features used, predictive multiplicity, rates by --group, within
    ``budget`` (what is left of --time-limit, and Ctrl-C): an analysis cut short says what it read."""
    from .corels.rashomon_analysis import GROUPS_SHOWN, scope_note

    usage = rashomon.feature_usage(chosen)
    table = Table(title="features used" + note)
    for column in ("feature", "members", "share", "in optimal list"):
        table.add_column(column, justify="right" if column in ("members", "share") else "left")
    for row in usage.head(args.rows).itertuples():
        table.add_row(_cell(row.feature), f"{row.members:,}", f"{row.share:.1%}", "yes" if row.in_optimal_list else "")
    console.print(table)
    multiplicity = rashomon.multiplicity(X, chosen, budget=budget)
    console.print(f"predictive multiplicity on the training rows{note}: ambiguity {multiplicity['ambiguity']:.1%} "
                  f"(rows some member predicts differently from the optimal list), discrepancy "
                  f"{multiplicity['discrepancy']:.1%} (most rows one member changes)")
    scopes = [multiplicity["scope"]]
    for column in args.group or []:
        rates = rashomon.group_rates(X, y, column, chosen, max_groups=GROUPS_SHOWN, budget=budget)
        table = Table(title=f"rates by {column} over the members{note}")
        for name in ("group", "rate", "rows", "min", "optimal", "max"):
            table.add_column(name, justify="left" if name in ("group", "rate") else "right")
        for row in rates.itertuples():
            table.add_row(_cell(row.group), row.rate.replace("_", " "), f"{row.rows:,}", f"{row.min:.3f}",
                          f"{row.optimal:.3f}", f"{row.max:.3f}")
        console.print(table)
        scopes.append(rates.attrs["scope"])
    if scope_note(*scopes):
        console.print(f"[yellow]not exact: {escape(printable(scope_note(*scopes)))}[/]")


def _fit_reference(args, console: Console) -> int:
    from .families import family

    _check_fit_arguments(args, family(args.model))
    if not args.reference_label:
        raise SystemExit("error: --reference-out needs --reference-label")
    rule_list, certificate = family(args.model).fit_reference_files(args)
    _print(console, rule_list)
    console.print()
    _print(console, certificate)
    return _save(args, rule_list, certificate, console)


def _save(args, model, certificate, console: Console) -> int:
    if args.output:
        data = model.to_dict()
        if certificate is not None:
            data["certificate"] = certificate.to_dict()
        if isinstance(getattr(args, "target", None), str):  # (predict reads it as the target, not a feature)
            data["target"] = args.target
        if isinstance(getattr(args, "sensitive", None), str):  # (predict leaves it out: not a feature)
            data["sensitive"] = args.sensitive
        _write_text(args.output, json.dumps(data, indent=2, default=float))
        console.print(f"model written to {args.output}")
    return 0


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


# -- predict --------------------------------------------------------------------------------------------
def _load_saved(path: str):
    from .models import load_model

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
    from .certificate import Certificate

    if not isinstance(data, dict) or "certificate" not in data:
        return None
    try:
        return Certificate.from_dict(data["certificate"])
    except (KeyError, TypeError, ValueError, OverflowError) as error:
        raise SystemExit(f"error: {path} has an invalid certificate ({printable(error)[:200]})") from None


def cmd_predict(args, console: Console) -> int:
    import pandas as pd

    _check_output(args.output)
    model = _load_saved(args.model_file)
    frame = _read_table(args.data, args.sep, args.encoding, not args.no_header)
    frame.columns = [str(c) for c in frame.columns]
    target, target_name = None, args.target
    if target_name is None:  # the training target, when the file has it and the model does not read it
        target_name = _saved_target(args.model_file, frame.columns, model)
        if target_name is not None:
            console.print(f"[dim]{escape(printable(repr(target_name)))}, the training target, is read as the "
                          "target (not a feature); --target names another column[/]")
    if target_name:
        if target_name not in frame.columns:
            raise SystemExit(f"error: no column {target_name!r} in {args.data}")
        target = frame.pop(target_name)
    sensitive = _saved_target(args.model_file, frame.columns, model, key="sensitive")
    if sensitive is not None:  # the groups a fairness constraint compared: not a feature
        frame.pop(sensitive)
    out = pd.DataFrame({"prediction": model.predict(frame)})
    if args.proba:
        proba = model.predict_proba(frame)
        for j, label in enumerate(model.classes):
            out[f"P({label})"] = proba[:, j]
    if args.explain:
        out["rule"] = model.explain(frame)["condition"].to_numpy()
    if args.output:
        _write_table(out, args.output)
        console.print(f"{len(out)} predictions written to {args.output}")
    else:
        _print(console, out.to_csv(index=False).rstrip("\n"))
    if target is not None:
        accuracy = float(np.mean(out["prediction"].astype(str).to_numpy() == target.astype(str).to_numpy()))
        console.print(f"accuracy against {escape(printable(repr(target_name)))}: {accuracy:.4f}")
    return 0


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
    from .report import html_report

    html = html_report(model, certificate, X, y, groups, weights, title=f"optrules: {Path(source).name}", source=source,
                       frontier=frontier)
    _write_text(path, html)
    console.print(f"report written to {path}")


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


def _save_figure(name: str, path: str, console: Console, *arguments, **options) -> None:
    """Draw with :mod:`optrules.plots`' function ``name`` and write the figure to ``path``."""
    try:
        import matplotlib
    except ImportError:  # pragma: no cover
        raise SystemExit("error: plotting needs matplotlib: pip install 'optrules[plot]'") from None
    matplotlib.use("Agg")
    from . import plots

    figure = getattr(plots, name)(*arguments, **options)
    _written(path, lambda temporary: figure.savefig(temporary, dpi=120, format=Path(path).suffix.lstrip(".") or None))
    console.print(f"figure written to {path}")


# -- bench ----------------------------------------------------------------------------------------------
def cmd_bench(args, console: Console) -> int:
    """Fit the model once per value of the family's --cv parameter (and --repeat times each); time it."""
    from .families import family as family_named

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


# -- compile --------------------------------------------------------------------------------------------
def cmd_compile(args, console: Console) -> int:
    from .warmup import compile_kernels

    def progress(part: str, seconds: float) -> None:
        console.print(f"{part}: {seconds:.1f} s")

    start = time.perf_counter()
    compile_kernels(large=not args.skip_large, progress=progress, first=args.first)
    console.print(f"compiled kernels cached in {time.perf_counter() - start:.1f} s: later fits start without compiling")
    return 0


# -- serve ----------------------------------------------------------------------------------------------
def _token_from_file(path: str | None) -> str | None:
    if not path:
        return None
    try:
        token = Path(path).read_text(encoding="utf-8-sig").strip()
    except (OSError, UnicodeDecodeError) as error:
        raise SystemExit(f"error: cannot read the token file {path}: {error}") from None
    if len(token) < 16 or not token.isprintable():
        raise SystemExit(f"error: the token in {path} must be one line of at least 16 printable characters")
    return token


def cmd_serve(args, console: Console) -> int:
    from urllib.parse import quote

    try:
        from .web.app import bind_socket, new_token, serve
    except ImportError as error:
        raise SystemExit(f"error: the web app needs its extra dependencies ({error.name} is not installed): "
                         "pip install 'optrules[web]'") from None

    if args.max_upload_mb <= 0 or (args.max_upload_total_mb is not None and args.max_upload_total_mb < args.max_upload_mb):
        raise ValueError("--max-upload-mb must be positive and --max-upload-total-mb at least as large")
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        console.print(f"[bold yellow]warning:[/] serving on {args.host}: anyone who reaches this machine "
                      + ("can upload data and start searches" if args.no_token else "and has the link can use the app")
                      + " (plain HTTP: the token and data cross the network unencrypted)")
    if args.token:
        console.print("[bold yellow]warning:[/] --token shows in the process list (ps) to every user of this "
                      "machine: prefer --token-file or the OPTRULES_TOKEN environment variable")
    token = None if args.no_token else (args.token or _token_from_file(args.token_file)
                                        or os.environ.get("OPTRULES_TOKEN") or new_token())
    if args.no_token:
        console.print("[bold yellow]warning:[/] no access token: every user of this machine can use the app")
    host = f"[{args.host}]" if ":" in args.host else args.host
    try:  # the port first: a link printed before a failed start would lead to another server
        sock = bind_socket(args.host, args.port)
    except OSError as error:
        raise SystemExit(f"error: cannot serve on {host}:{args.port}: {printable(error.strerror or str(error))} "
                         "(another server holds the port? --port chooses another)") from None
    address = f"http://{host}:{args.port}/" + (f"?token={quote(token)}" if token else "")
    console.print(f"optrules web app: open {address}  (Ctrl-C to stop)", soft_wrap=True)
    serve(args.host, args.port, args.workers, args.max_upload_mb, token, args.max_upload_total_mb, sock=sock)
    return 0


# -- the parser -----------------------------------------------------------------------------------------
def _n_jobs(text: str) -> int:
    from .parameters import N_JOBS

    value = int(text) if text.lstrip("-").isdigit() else text
    if not N_JOBS.allows(value):
        raise argparse.ArgumentTypeError(f"takes a whole number other than 0, got {printable(text)!r}")
    return value


def _taking(capability: str) -> str:
    """"--model a, b": the families with a capability (that take an option), for its help."""
    from .families import names_where

    return "--model " + ", ".join(names_where(lambda other: getattr(other, capability)))


def _add_fit_arguments(fit: argparse.ArgumentParser, cross_validation: bool = True) -> None:
    from .families import add_cli_options, families

    known = families()
    fit.add_argument("--model", choices=list(known), default=next(iter(known)),
                     help="; ".join(f"{name}: {family.title}" for name, family in known.items())
                          + " (default: the first)")
    if cross_validation:
        fit.add_argument("--cv", type=int, default=None, metavar="K",
                         help="choose a setting by K-fold cross-validation among its values: "
                              + "; ".join(f"--model {name}: {option_of(other.cv_parameter)}"
                                          for name, other in known.items() if other.cv_parameter))
    fit.add_argument("--n-jobs", type=_n_jobs, default=None, metavar="N",
                     help=f"cores the fit uses: the certified search's threads ({_taking('n_jobs')}; the same "
                          "list and certificate on any number; the Rashomon set's enumeration too), and with --cv "
                          "the folds side by side "
                          "(-1: every core, -2: all but one; default: every core for a search that runs "
                          "longer than 0.2 s, folds one at a time); never more than this machine's cores: "
                          "folds x threads <= cores")
    if not cross_validation:
        fit.set_defaults(cv=None)
    fit.add_argument("--class-weight", choices=["balanced"], default=None,
                     help=f"weight classes inversely to their frequency ({_taking('class_weight')})")
    fit.add_argument("--weight-column", help="column of per-sample weights (cost of misclassifying each row)")
    fit.add_argument("--sensitive", metavar="COLUMN",
                     help=f"with --fairness: the column of the two groups it compares (not a feature; {_taking('fairness')})")
    fit.add_argument("--pos-label", default=None, metavar="LABEL",
                     help=f"the class the model describes ({_taking('pos_label')}; default: the second of the sorted "
                          "classes); 'both' with --cv K chooses it")
    add_cli_options(fit, known)
    search = fit.add_argument_group("search")
    add_option(search, MAX_NODES, metavar="N")
    add_option(search, TIME_LIMIT, default=_UNSET, metavar="SECONDS",
               help=f"{TIME_LIMIT.help}; the file read included (default {DEFAULT_TIME_LIMIT:g}; 'none': no limit)")
    add_option(search, in_megabytes(MAX_MEMORY), metavar="MB")
    add_option(search, MAX_ANTECEDENTS, metavar="N")
    add_option(search, MAX_RULES, metavar="K",
               help=f"{_taking('constraints')}: at most K rules (the certificate is optimal over those models)")
    search.add_argument("--forbid", nargs="+", default=None, metavar="NAME",
                        help=f"{_taking('constraints')}: features (sex=Male) or columns (race) no rule may use")
    search.add_argument("--require", nargs="+", default=None, metavar="NAME",
                        help=f"{_taking('constraints')}: features or columns each of which some rule must use (the "
                             "certificate is optimal over the models that use them all)")
    search.add_argument("--refine", action="store_true",
                        help="after the certified optimum over the boosted thresholds, search quantile "
                             "and boosted thresholds together from it (the certificate covers that larger space)")
    search.add_argument("--verbose", "-v", action="store_true", help="show live progress (default: on a terminal)")
    search.add_argument("--quiet", "-q", action="store_true", help="no live progress")


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


def _add_info_command(commands) -> None:
    info = commands.add_parser("info", help="list the bundled datasets")
    info.set_defaults(handler=cmd_info)


def _add_mine_command(commands) -> None:
    mine = commands.add_parser("mine", help="binarize a table and list the mined antecedents with their support")
    _add_data_arguments(mine)
    mine.add_argument("--min-support", type=float, default=0.01, help="minimum support share (default 0.01)")
    add_option(mine, MAX_ANTECEDENTS, metavar="N")
    mine.set_defaults(handler=cmd_mine)


def _add_fit_command(commands) -> None:
    fit = commands.add_parser(
        "fit", help="learn a certifiably optimal model, print it with its certificate, save it as JSON",
        description="Learn the rule list minimising mistakes/N + lambda * rules and prove it optimal (or "
                    "another model family with --model). Numeric columns are compared with the thresholds a small "
                    "boosted ensemble splits them at (--thresholds quantile: at quantiles), text columns become "
                    "one feature per value.",
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EXAMPLES,
    )
    _add_data_arguments(fit)
    _add_fit_arguments(fit)
    fit.add_argument("--output", "-o", help="write the model (and its certificate) as JSON to this file")
    fit.add_argument("--report", metavar="FILE", help="also write a self-contained HTML report of the fit")
    fit.add_argument("--group", nargs="+", metavar="COLUMN", help="with --report: accuracy by these columns")
    fit.add_argument("--reference-out", help="the C++ reference's .out file (instead of a CSV)")
    fit.add_argument("--reference-label", help="the matching .label file")
    fit.add_argument("--reference-minor", help="the matching .minor file (optional)")
    fit.add_argument("--scheduler", metavar="ADDRESS",
                     help=f"search on this Dask cluster's workers ({_taking('cluster')}; e.g. tcp://10.0.0.5:8786): the "
                          "same objective and certificate, the search space split among them; the scheduler is "
                          "trusted code (Dask lets it run code here): only your own, over tls:// across machines "
                          "(docs/corels.md)")
    fit.set_defaults(handler=cmd_fit)


def _add_rashomon_command(commands) -> None:
    rashomon = commands.add_parser(
        "rashomon", help="every rule list within epsilon of the optimal one: count, list, sample, compare",
        description="Fit the certified rule list, then enumerate the Rashomon set: every rule list whose "
                    "objective is at most R* + epsilon, certified complete (or, on a budget, complete below a "
                    "stated objective). Prints its size by objective, some members, the features they use, "
                    "predictive multiplicity and, with --group, the range of group rates over the set.",
    )
    _add_data_arguments(rashomon)
    _add_fit_arguments(rashomon)
    rashomon.add_argument("--epsilon", type=float, default=0.01,
                          help="members are within this of the optimum's objective (default 0.01)")
    rashomon.add_argument("--relative", action="store_true", help="--epsilon is a share of R* (0.05: 5%% of R*)")
    rashomon.add_argument("--show", type=int, default=5, help="members printed (default 5)")
    rashomon.add_argument("--sample", action="store_true", help="print members drawn uniformly at random")
    rashomon.add_argument("--sample-seed", type=int, default=0, help="random seed of --sample (default 0)")
    rashomon.add_argument("--rows", type=int, default=15, help="rows of the tables (default 15)")
    rashomon.add_argument("--max-members", type=int, default=100_000,
                          help="above this many members, the analysis uses a uniform sample of this size")
    rashomon.add_argument("--group", nargs="+", metavar="COLUMN", help="ranges of group rates by these columns")
    rashomon.add_argument("--output", "-o", help="write the members (or the sample) as CSV")
    rashomon.add_argument("--plot", metavar="FILE",
                          help="draw the set (members by objective, features used, multiplicity, reliance ranges "
                               "and, with --group, the first group column's rate ranges) to this PNG, SVG or PDF file")
    rashomon.set_defaults(handler=cmd_rashomon)


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


def _add_predict_command(commands) -> None:
    predict = commands.add_parser(
        "predict", help="predict with a saved model (JSON from 'fit -o')",
        description="Apply a saved model to a CSV/Parquet file with the columns it was trained on.",
    )
    predict.add_argument("model_file", help="model JSON written by 'optrules fit -o'")
    predict.add_argument("data", help="CSV (or .parquet) file to predict")
    predict.add_argument("--output", "-o", help="write predictions to this CSV (or .parquet) file (default: print)")
    predict.add_argument("--proba", action="store_true", help="add one probability column per class")
    predict.add_argument("--explain", action="store_true", help="add the rule that decided each row")
    predict.add_argument("--target", help="a column of true labels to drop from the input and score against "
                         "(default: the training target column named in the model file, when the table has it)")
    predict.add_argument("--sep", default=None, help="CSV separator (default: detected)")
    predict.add_argument("--encoding", default="utf-8", help="text encoding of the CSV (default utf-8)")
    predict.add_argument("--no-header", action="store_true", help="the CSV has no header line (columns x0, x1, ...)")
    predict.set_defaults(handler=cmd_predict)


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


def _add_compile_command(commands) -> None:
    compile_ = commands.add_parser(
        "compile", help="compile and cache the search kernels now, so that no later fit waits for it",
        description="Run small fits of every model family so that numba compiles each kernel and caches it "
                    "(beside the installed package, or in NUMBA_CACHE_DIR). A fresh install otherwise compiles "
                    "in its first fits: 10-40 s each. Run it once in an install script or a Docker build, "
                    "on the kind of CPU that will run the fits (the cache is kept per CPU).",
    )
    compile_.add_argument("--skip-large", action="store_true",
                          help="leave out the kernels only large problems take: the two-core kernel of large tables "
                               "and the searches over 65,535+ antecedents (about half the time)")
    compile_.add_argument("--first", action="store_true",
                          help="only what a first session takes: the default rule list on a bundled table and its "
                               "Rashomon set (what `make`'s install runs while the optional extras install)")
    compile_.set_defaults(handler=cmd_compile)


def _add_serve_command(commands) -> None:
    serve = commands.add_parser(
        "serve", help="start the local web app: upload a CSV, watch the search converge, download the model",
        description="A small web app on this machine (127.0.0.1 by default): upload a CSV or pick a bundled "
                    "dataset, choose the target and the model, start runs (they queue), watch the best "
                    "objective and the lower bound meet, read and download the certified model.",
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)")
    serve.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    serve.add_argument("--workers", type=int, default=1, help="runs fitted at the same time (default 1; others queue)")
    serve.add_argument("--max-upload-mb", type=float, default=50.0, help="largest CSV accepted, MB (default 50)")
    serve.add_argument("--max-upload-total-mb", type=float, default=None,
                       help="uploads kept on disk at most, MB (default 10 x --max-upload-mb); the oldest go first")
    access = serve.add_mutually_exclusive_group()
    access.add_argument("--token", default=None,
                        help="the access token the page and API need (default: $OPTRULES_TOKEN, or a new random one "
                             "at each start); it shows in the process list: prefer --token-file")
    access.add_argument("--token-file", default=None,
                        help="read the access token from this file (one line), out of sight of the process list")
    access.add_argument("--no-token", action="store_true",
                        help="no access token: anyone who can reach the port (other users of this machine "
                             "included) can use the app")
    serve.set_defaults(handler=cmd_serve)


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


if __name__ == "__main__":  # (python -m optrules.cli: as the console script, optrules._entry)
    from ._entry import INTERRUPTED_STATUS, leave_at_once

    status = main()
    if status == INTERRUPTED_STATUS:
        leave_at_once(status)
    sys.exit(status)
