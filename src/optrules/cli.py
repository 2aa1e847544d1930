"""Command line: ``optrules info``, ``optrules mine``, ``optrules fit``."""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
import pandas as pd
from rich.console import Console
from rich.table import Table

from .data.binarize import Binarizer
from .data.datasets import DATASETS, load_dataset
from .data.mine import mine_antecedents
from .data.validation import check_binary_target


def _read_table(path: str, sep: str | None) -> pd.DataFrame:
    if path.endswith(".parquet"):
        return pd.read_parquet(path)
    return pd.read_csv(path, sep=sep, engine="python" if sep is None else "c")


def _load_xy(args) -> tuple[pd.DataFrame, object, str]:
    """Features and target from ``--dataset NAME`` or from a CSV/Parquet file and ``--target``."""
    if args.dataset:
        data = load_dataset(args.dataset)
        return data.X, data.y, data.description
    if not args.data or not args.target:
        raise SystemExit("error: give a data file and --target COLUMN, or --dataset NAME")
    frame = _read_table(args.data, args.sep)
    if args.target not in frame.columns:
        raise SystemExit(f"error: no column {args.target!r} in {args.data}; columns: {list(frame.columns)}")
    return frame.drop(columns=[args.target]), frame[args.target], args.data


def _add_data_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("data", nargs="?", help="CSV (or .parquet) file with features and the target column")
    parser.add_argument("--target", help="name of the target column")
    parser.add_argument("--dataset", help=f"a bundled dataset instead of a file: {', '.join(DATASETS)}")
    parser.add_argument("--sep", default=None, help="CSV separator (default: detected)")
    parser.add_argument("--max-card", type=int, default=2, help="features per antecedent, at most (default 2)")
    parser.add_argument("--negations", action="store_true", help="also use negated features ('not x=v')")
    parser.add_argument(
        "--missing", choices=["error", "category"], default="error",
        help="missing values: reject them (default) or treat them as their own category",
    )


def _binarize_and_mine(args, X, y, min_support: float):
    check_binary_target(y, len(X))
    binarizer = Binarizer(negations=args.negations, missing=args.missing).fit(X)
    features = binarizer.transform(X)
    antecedents = mine_antecedents(
        features, binarizer.feature_names_, binarizer.groups_, max_card=args.max_card, min_support=min_support
    )
    return binarizer, antecedents


def cmd_info(args, console: Console) -> int:
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
    X, y, source = _load_xy(args)
    start = time.perf_counter()
    binarizer, antecedents = _binarize_and_mine(args, X, y, args.min_support)
    elapsed = time.perf_counter() - start
    table = Table(title=f"{len(antecedents)} antecedents from {len(binarizer.feature_names_)} features, {source}")
    table.add_column("#", justify="right")
    table.add_column("antecedent")
    table.add_column("support", justify="right")
    table.add_column("share", justify="right")
    for i, (name, count) in enumerate(zip(antecedents.names, antecedents.support)):
        table.add_row(str(i), name, str(int(count)), f"{count / antecedents.n_samples:.3f}")
    console.print(table)
    console.print(f"binarized and mined in {elapsed:.3f} s")
    return 0


def cmd_fit(args, console: Console) -> int:
    from .corels import fit_reference
    from .estimators import FallingRuleListClassifier, RuleListClassifier

    budgets = dict(policy=args.policy, map_type=args.map_type, max_nodes=args.max_nodes, time_limit=args.time_limit)
    if args.model == "frl":
        X, y, source = _load_xy(args)
        model = FallingRuleListClassifier(
            w=args.w, C=args.C, C1=args.C1, soft=args.soft, method=args.method, iterations=args.iterations,
            random_state=args.seed, max_nodes=args.max_nodes, time_limit=args.time_limit, verbose=args.verbose,
            min_class_support=args.min_class_support, max_card=args.max_card, negations=args.negations,
            missing=args.missing,
        ).fit(X, y)
        console.print(f"[dim]{source}: {len(X)} samples, {len(model.antecedents_)} antecedents, w = {args.w}, "
                      f"C = {args.C}{f', C1 = {args.C1}' if args.soft else ''}[/]")
        console.print(str(model.rule_list_), markup=False, highlight=False, soft_wrap=True)
        console.print()
        if model.certificate_ is not None:
            console.print(str(model.certificate_), markup=False, highlight=False, soft_wrap=True)
        else:
            console.print(f"Monte-Carlo search: objective {model.objective_:.9f} (not certified)")
        console.print(f"training accuracy {model.score(X, y):.4f}")
        return _save(args, model.rule_list_, console)
    if args.model == "ruleset":
        from .estimators import RuleSetClassifier

        X, y, source = _load_xy(args)
        model = RuleSetClassifier(
            complexity=args.complexity, max_degree=args.max_degree, cnf=args.cnf, penalty=args.penalty,
            time_limit=args.time_limit or 120.0, verbose=args.verbose, negations=True, missing=args.missing,
        ).fit(X, y)
        console.print(f"[dim]{source}: {len(X)} samples, {len(model.binarizer_.feature_names_)} features, "
                      f"complexity <= {args.complexity}[/]")
        console.print(str(model.rule_set_), markup=False, highlight=False, soft_wrap=True)
        console.print()
        console.print(str(model.certificate_), markup=False, highlight=False, soft_wrap=True)
        console.print(f"training accuracy {model.score(X, y):.4f}, complexity {model.rule_set_.complexity}")
        return _save(args, model.rule_set_, console)
    if args.reference_out:
        if not args.reference_label:
            raise SystemExit("error: --reference-out needs --reference-label")
        rule_list, certificate = fit_reference(
            args.reference_out, args.reference_label, args.reference_minor, args.regularization, **budgets
        )
        source = args.reference_out
    else:
        X, y, source = _load_xy(args)
        model = RuleListClassifier(
            regularization=args.regularization, max_card=args.max_card, min_support=args.min_support,
            negations=args.negations, missing=args.missing, verbose=args.verbose, **budgets,
        ).fit(X, y)
        rule_list, certificate = model.rule_list_, model.certificate_
        accuracy = model.score(X, y)
        console.print(f"[dim]{source}: {len(X)} samples, {len(model.antecedents_)} antecedents, "
                      f"lambda = {args.regularization}[/]")
    console.print(str(rule_list), markup=False, highlight=False, soft_wrap=True)
    console.print()
    console.print(str(certificate), markup=False, highlight=False, soft_wrap=True)
    if not args.reference_out:
        console.print(f"training accuracy {accuracy:.4f}")
    return _save(args, rule_list, console)


def _save(args, model, console: Console) -> int:
    if args.output:
        with open(args.output, "w") as handle:
            handle.write(model.to_json(indent=2))
        console.print(f"model written to {args.output}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="optrules", description="Provably optimal rule models with certificates.")
    commands = parser.add_subparsers(dest="command", required=True)
    info = commands.add_parser("info", help="list the bundled datasets")
    info.set_defaults(handler=cmd_info)
    mine = commands.add_parser("mine", help="binarize a table and list the mined antecedents with their support")
    _add_data_arguments(mine)
    mine.add_argument("--min-support", type=float, default=0.01, help="minimum support share (default 0.01)")
    mine.set_defaults(handler=cmd_mine)
    fit = commands.add_parser(
        "fit", help="learn a certifiably optimal rule list and print it with its certificate",
        description="Learn the rule list minimising mistakes/N + lambda * rules, and certify it.",
    )
    _add_data_arguments(fit)
    fit.add_argument("--model", choices=["rulelist", "frl", "ruleset"], default="rulelist",
                     help="rulelist: certifiably optimal rule list (CORELS, default); frl: falling rule list; "
                          "ruleset: Boolean rule set by column generation")
    fit.add_argument("--regularization", "-r", type=float, default=0.01,
                     help="lambda: the price of one rule in training accuracy (default 0.01)")
    frl = fit.add_argument_group("falling rule lists (--model frl)")
    frl.add_argument("--w", type=float, default=7.0, help="weight of a positive (default 7)")
    frl.add_argument("--C", type=float, default=1e-6, help="price of a rule (default 1e-6)")
    frl.add_argument("--C1", type=float, default=0.5, help="price of rising probabilities, with --soft (default 0.5)")
    frl.add_argument("--soft", action="store_true", help="softly falling list")
    frl.add_argument("--method", choices=["certified", "montecarlo"], default="certified")
    frl.add_argument("--iterations", type=int, default=3000, help="Monte-Carlo rounds (default 3000)")
    frl.add_argument("--seed", type=int, default=None, help="random seed of the Monte-Carlo search")
    frl.add_argument("--min-class-support", type=float, default=0.1,
                     help="antecedents hold for this share of a class at least (default 0.1)")
    rs = fit.add_argument_group("Boolean rule sets (--model ruleset)")
    rs.add_argument("--complexity", type=float, default=30.0, help="bound on clauses + conditions (default 30)")
    rs.add_argument("--max-degree", type=int, default=5, help="conditions per clause (default 5)")
    rs.add_argument("--cnf", action="store_true", help="learn a CNF (AND of ORs) instead of a DNF")
    rs.add_argument("--penalty", type=float, default=0.0, help="price per unit of complexity (default 0)")
    fit.add_argument("--min-support", type=float, default=None, help="antecedent support floor (default: lambda)")
    fit.add_argument("--policy", default="lower_bound", choices=["lower_bound", "objective", "curiosity", "bfs", "dfs"])
    fit.add_argument("--map-type", default="prefix", choices=["prefix", "captured", "none"])
    fit.add_argument("--max-nodes", type=int, default=None, help="stop after expanding this many prefixes")
    fit.add_argument("--time-limit", type=float, default=None, help="stop after this many seconds")
    fit.add_argument("--verbose", "-v", action="store_true", help="show live progress")
    fit.add_argument("--output", "-o", help="write the rule list as JSON to this file")
    fit.add_argument("--reference-out", help="the C++ reference's .out file (instead of a CSV)")
    fit.add_argument("--reference-label", help="the matching .label file")
    fit.add_argument("--reference-minor", help="the matching .minor file (optional)")
    fit.set_defaults(handler=cmd_fit)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    console = Console()
    try:
        return args.handler(args, console)
    except ValueError as error:
        console.print(f"[bold red]error:[/] {error}")
        return 2


if __name__ == "__main__":
    sys.exit(main())
