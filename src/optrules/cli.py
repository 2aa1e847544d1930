"""Command line: ``optrules info | mine | fit | predict | trace | bench | serve``."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from rich.console import Console
from rich.table import Table

from .data.binarize import Binarizer
from .data.datasets import DATASETS, load_dataset
from .data.mine import mine_antecedents
from .data.validation import check_target

EXAMPLES = """\
examples:
  optrules fit --dataset compas -r 0.005                 certified rule list on bundled COMPAS
  optrules fit data.csv --target label -o model.json     your CSV (or .parquet); save the model
  optrules fit data.csv --target label -r 0.02 0.01 0.005 --cv 5
                                                         choose lambda by 5-fold cross-validation
  optrules predict model.json new.csv -o scored.csv      predictions (+ --proba, --explain)
  optrules trace model.json -o trace.png                 the search's convergence, as in the paper
  optrules bench --dataset compas -r 0.02 0.01           time and memory of the search
  optrules serve                                         the web app on http://127.0.0.1:8000/

Run 'optrules COMMAND --help' for the options of one command.
"""


def _read_table(path: str, sep: str | None = None) -> pd.DataFrame:
    if not Path(path).exists():
        raise SystemExit(f"error: no such file: {path}")
    if path.endswith(".parquet"):
        return pd.read_parquet(path)
    try:
        return pd.read_csv(path, sep=sep, engine="python" if sep is None else "c")
    except (UnicodeDecodeError, pd.errors.ParserError) as error:
        raise SystemExit(f"error: {path} is not a readable CSV file ({error})") from None


def _write_table(frame: pd.DataFrame, path: str) -> None:
    if path.endswith(".parquet"):
        frame.to_parquet(path, index=False)
    else:
        frame.to_csv(path, index=False)


def _load_xy(args):
    """Features, target, sample weights (or None) and a description, from ``--dataset NAME`` or from a
    CSV/Parquet file with ``--target`` (and ``--weight-column``)."""
    if args.dataset:
        data = load_dataset(args.dataset)
        return data.X, data.y, None, data.description
    if not args.data or not args.target:
        raise SystemExit("error: give a data file and --target COLUMN, or --dataset NAME (see 'optrules info')")
    frame = _read_table(args.data, args.sep)
    for column in [args.target, getattr(args, "weight_column", None)]:
        if column is not None and column not in frame.columns:
            raise SystemExit(f"error: no column {column!r} in {args.data}; columns: {list(frame.columns)}")
    weights = None
    drop = [args.target]
    if getattr(args, "weight_column", None):
        weights = frame[args.weight_column].to_numpy(dtype=np.float64)
        drop.append(args.weight_column)
    return frame.drop(columns=drop), frame[args.target], weights, args.data


def _add_data_arguments(parser: argparse.ArgumentParser, data_help: str | None = None) -> None:
    parser.add_argument("data", nargs="?",
                        help=data_help or "CSV (or .parquet) file with the features and the target column")
    parser.add_argument("--target", help="name of the target column (the class to predict)")
    parser.add_argument("--dataset", help=f"a bundled dataset instead of a file: {', '.join(DATASETS)}"
                                          " (compas-B: with race)")
    parser.add_argument("--sep", default=None, help="CSV separator (default: detected)")
    parser.add_argument("--max-card", type=int, default=2, help="features per antecedent, at most (default 2)")
    parser.add_argument("--negations", action="store_true", help="also use negated features ('not x=v')")
    parser.add_argument(
        "--missing", choices=["error", "category"], default="error",
        help="missing values: reject them (default) or treat them as their own category",
    )


def _binarize_and_mine(args, X, y, min_support: float):
    check_target(y, len(X))
    binarizer = Binarizer(negations=args.negations, missing=args.missing).fit(X)
    features = binarizer.transform(X)
    antecedents = mine_antecedents(
        features, binarizer.feature_names_, binarizer.groups_, max_card=args.max_card, min_support=min_support
    )
    return binarizer, antecedents


def _print(console: Console, text) -> None:
    console.print(str(text), markup=False, highlight=False, soft_wrap=True)


# -- info, mine ---------------------------------------------------------------------------------------
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
        table.add_row(str(i), name, str(int(count)), f"{count / antecedents.n_samples:.3f}")
    console.print(table)
    console.print(f"binarized and mined in {elapsed:.3f} s")
    return 0


# -- fit ------------------------------------------------------------------------------------------------
def _show_progress(args) -> bool:
    return bool(args.verbose or (sys.stderr.isatty() and not args.quiet))


def _fit_model(args, console: Console):
    """Fit what the arguments ask for; returns ``(estimator, X, y, weights, source, summary line)``."""
    from .estimators import FallingRuleListClassifier, RuleListClassifier, RuleSetClassifier

    X, y, weights, source = _load_xy(args)
    progress = _show_progress(args)
    lambdas = args.regularization
    if args.model == "frl":
        model = FallingRuleListClassifier(
            w=args.w, C=args.C, C1=args.C1, soft=args.soft, method=args.method, iterations=args.iterations,
            random_state=args.seed, max_nodes=args.max_nodes, time_limit=args.time_limit, verbose=progress,
            min_class_support=args.min_class_support, max_card=args.max_card, negations=args.negations,
            missing=args.missing,
        ).fit(X, y)
        summary = (f"{source}: {len(X)} samples, {len(model.antecedents_)} antecedents, w = {args.w}, C = {args.C}"
                   + (f", C1 = {args.C1}" if args.soft else ""))
        return model, X, y, weights, source, summary
    if args.model == "ruleset":
        model = RuleSetClassifier(
            complexity=args.complexity, max_degree=args.max_degree, cnf=args.cnf, penalty=args.penalty,
            class_weight=args.class_weight, time_limit=args.time_limit or 120.0, verbose=progress, negations=True,
            missing=args.missing,
        ).fit(X, y)
        summary = (f"{source}: {len(X)} samples, {len(model.binarizer_.feature_names_)} features, "
                   f"complexity <= {args.complexity}")
        return model, X, y, weights, source, summary
    estimator = RuleListClassifier(
        regularization=lambdas[0], max_card=args.max_card, min_support=args.min_support, negations=args.negations,
        missing=args.missing, verbose=progress and not args.cv, class_weight=args.class_weight, policy=args.policy,
        map_type=args.map_type, max_nodes=args.max_nodes, time_limit=args.time_limit,
    )
    if args.cv:
        from .model_selection import RuleListCV

        search = RuleListCV(lambdas, estimator, cv=args.cv, n_jobs=args.n_jobs).fit(X, y, sample_weight=weights)
        table = Table(title=f"{args.cv}-fold cross-validation")
        for column in ("lambda", "mean accuracy", "sd", "rules", "folds certified"):
            table.add_column(column, justify="right")
        results = search.cv_results_
        for j, value in enumerate(results["regularization"]):
            mark = " *" if value == search.regularization_ else ""
            table.add_row(f"{value:g}{mark}", f"{results['mean_test_score'][j]:.4f}", f"{results['std_test_score'][j]:.4f}",
                          f"{results['mean_n_rules'][j]:.1f}", f"{results['certified_fraction'][j]:.0%}")
        console.print(table)
        model = search.best_estimator_
        lambdas = [search.regularization_]
    elif len(lambdas) > 1:
        raise SystemExit("error: several --regularization values need --cv K to choose among them")
    else:
        model = estimator.fit(X, y, sample_weight=weights)
    summary = f"{source}: {len(X)} samples, {len(model.antecedents_)} antecedents, lambda = {lambdas[0]:g}"
    return model, X, y, weights, source, summary


def cmd_fit(args, console: Console) -> int:
    if args.reference_out:
        return _fit_reference(args, console)
    model, X, y, weights, _, summary = _fit_model(args, console)
    console.print(f"[dim]{summary}[/]")
    _print(console, model.rule_list_)
    console.print()
    certificate = getattr(model, "certificate_", None)
    if certificate is not None:
        _print(console, certificate)
    else:
        console.print(f"Monte-Carlo search: objective {model.objective_:.9f} (not certified)")
    line = f"training accuracy {model.score(X, y):.4f}"
    if weights is not None:
        line += f", weighted {model.score(X, y, sample_weight=weights):.4f}"
    if args.model == "ruleset":
        line += f", complexity {model.rule_set_.complexity}"
    console.print(line)
    return _save(args, model.rule_list_, certificate, console)


def _fit_reference(args, console: Console) -> int:
    from .corels import fit_reference

    if not args.reference_label:
        raise SystemExit("error: --reference-out needs --reference-label")
    rule_list, certificate = fit_reference(
        args.reference_out, args.reference_label, args.reference_minor, args.regularization[0],
        policy=args.policy, map_type=args.map_type, max_nodes=args.max_nodes, time_limit=args.time_limit,
    )
    _print(console, rule_list)
    console.print()
    _print(console, certificate)
    return _save(args, rule_list, certificate, console)


def _save(args, model, certificate, console: Console) -> int:
    if args.output:
        data = model.to_dict()
        if certificate is not None:
            data["certificate"] = certificate.to_dict()
        Path(args.output).write_text(json.dumps(data, indent=2, default=float))
        console.print(f"model written to {args.output}")
    return 0


# -- predict --------------------------------------------------------------------------------------------
def _load_saved(path: str):
    from .models import load_model

    if not Path(path).exists():
        raise SystemExit(f"error: no such model file: {path}")
    try:
        return load_model(Path(path).read_text())
    except json.JSONDecodeError as error:
        raise SystemExit(f"error: {path} is not a saved optrules model (invalid JSON: {error})") from None


def cmd_predict(args, console: Console) -> int:
    model = _load_saved(args.model_file)
    frame = _read_table(args.data, args.sep)
    target = None
    if args.target:
        if args.target not in frame.columns:
            raise SystemExit(f"error: no column {args.target!r} in {args.data}")
        target = frame.pop(args.target)
    out = pd.DataFrame({"prediction": model.predict(frame)})
    if args.proba:
        proba = model.predict_proba(frame)
        for j, label in enumerate(model.classes):
            out[f"P({label})"] = proba[:, j]
    if args.explain and hasattr(model, "rule_index") and not hasattr(model, "clauses"):
        fired = model.rule_index(frame)
        names = [" and ".join(rule.conditions) for rule in model.rules] + ["(default)"]
        out["rule"] = [names[k] for k in fired]
    if args.output:
        _write_table(out, args.output)
        console.print(f"{len(out)} predictions written to {args.output}")
    else:
        _print(console, out.to_csv(index=False).rstrip("\n"))
    if target is not None:
        accuracy = float(np.mean(out["prediction"].astype(str).to_numpy() == target.astype(str).to_numpy()))
        console.print(f"accuracy against {args.target!r}: {accuracy:.4f}")
    return 0


# -- trace ----------------------------------------------------------------------------------------------
def cmd_trace(args, console: Console) -> int:
    from .certificate import Certificate

    if args.data and args.data.endswith(".json"):
        data = json.loads(Path(args.data).read_text())
        if "certificate" not in data:
            raise SystemExit(f"error: {args.data} has no certificate: save it with 'optrules fit ... -o FILE'")
        certificate = Certificate.from_dict(data["certificate"])
        title = args.data
    else:
        model, *_, summary = _fit_model(args, console)
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
        try:
            from .plots import plot_trace
        except ImportError:  # pragma: no cover
            raise SystemExit("error: plotting needs matplotlib: pip install 'optrules[plot]'") from None
        import matplotlib

        matplotlib.use("Agg")
        figure = plot_trace(certificate, title=title)
        figure.savefig(args.output, dpi=120)
        console.print(f"figure written to {args.output}")
    return 0


# -- bench ----------------------------------------------------------------------------------------------
def cmd_bench(args, console: Console) -> int:
    import resource

    from .estimators import RuleListClassifier

    X, y, weights, source = _load_xy(args)
    table = Table(title=f"certified rule lists on {source} ({len(X)} samples, max_card {args.max_card})")
    for column in ("lambda", "status", "objective", "rules", "search (s)", "expanded", "state MB", "peak RSS MB"):
        table.add_column(column, justify="right")
    rows = []
    for value in args.regularization:
        for _ in range(args.repeat):
            start = time.perf_counter()
            model = RuleListClassifier(regularization=value, max_card=args.max_card, negations=args.negations,
                                       missing=args.missing, time_limit=args.time_limit).fit(X, y, sample_weight=weights)
            wall = time.perf_counter() - start
            counters = model.certificate_.counters
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            row = {"lambda": value, "status": model.certificate_.status, "objective": model.certificate_.objective,
                   "rules": len(model.rule_list_), "search_seconds": counters["total_time"], "fit_seconds": wall,
                   "nodes_expanded": counters["nodes_expanded"], "state_mb": counters["memory_bytes"] / 2**20,
                   "peak_rss_mb": peak}
            rows.append(row)
            table.add_row(f"{value:g}", row["status"], f"{row['objective']:.6f}", str(row["rules"]),
                          f"{row['search_seconds']:.3f}", f"{row['nodes_expanded']:,}", f"{row['state_mb']:.1f}",
                          f"{peak:.0f}")
    console.print(table)
    console.print("[dim]peak RSS is the whole process's so far (Python, numpy, numba included)[/]")
    if args.output:
        Path(args.output).write_text(json.dumps(rows, indent=2, default=float))
        console.print(f"results written to {args.output}")
    return 0


# -- serve ----------------------------------------------------------------------------------------------
def cmd_serve(args, console: Console) -> int:
    from .web.app import serve

    if args.host not in ("127.0.0.1", "localhost", "::1"):
        console.print(f"[bold yellow]warning:[/] serving on {args.host}: anyone who reaches this machine can "
                      "upload data and start searches")
    console.print(f"optrules web app on http://{args.host}:{args.port}/  (Ctrl-C to stop)")
    serve(args.host, args.port, args.workers, args.max_upload_mb)
    return 0


# -- the parser -----------------------------------------------------------------------------------------
def _add_fit_arguments(fit: argparse.ArgumentParser) -> None:
    fit.add_argument("--model", choices=["rulelist", "frl", "ruleset"], default="rulelist",
                     help="rulelist: certifiably optimal rule list (CORELS, default; two or more classes); "
                          "frl: falling rule list; ruleset: Boolean rule set by column generation")
    fit.add_argument("--regularization", "-r", type=float, nargs="+", default=[0.01], metavar="LAMBDA",
                     help="lambda: the price of one rule in training accuracy (default 0.01); several values "
                          "with --cv")
    fit.add_argument("--cv", type=int, default=None, metavar="K",
                     help="choose lambda among the --regularization values by K-fold cross-validation")
    fit.add_argument("--n-jobs", type=int, default=None, help="folds in parallel with --cv (-1: every core)")
    fit.add_argument("--class-weight", choices=["balanced"], default=None,
                     help="weight classes inversely to their frequency (rule lists, rule sets)")
    fit.add_argument("--weight-column", help="column of per-sample weights (cost of misclassifying each row)")
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
    search = fit.add_argument_group("search")
    search.add_argument("--min-support", type=float, default=None, help="antecedent support floor (default: lambda)")
    search.add_argument("--policy", default="lower_bound", choices=["lower_bound", "objective", "curiosity", "bfs", "dfs"],
                        help="queue order (default lower_bound)")
    search.add_argument("--map-type", default="prefix", choices=["prefix", "captured", "none"],
                        help="symmetry-aware map (default prefix)")
    search.add_argument("--max-nodes", type=int, default=None, help="stop after expanding this many prefixes")
    search.add_argument("--time-limit", type=float, default=None,
                        help="stop after this many seconds (the best model found is returned with its gap)")
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
    info = commands.add_parser("info", help="list the bundled datasets")
    info.set_defaults(handler=cmd_info)

    mine = commands.add_parser("mine", help="binarize a table and list the mined antecedents with their support")
    _add_data_arguments(mine)
    mine.add_argument("--min-support", type=float, default=0.01, help="minimum support share (default 0.01)")
    mine.set_defaults(handler=cmd_mine)

    fit = commands.add_parser(
        "fit", help="learn a certifiably optimal model, print it with its certificate, save it as JSON",
        description="Learn the rule list minimising mistakes/N + lambda * rules and prove it optimal (or "
                    "another model family with --model). Numeric columns are cut at quantiles, text columns "
                    "become one feature per value.",
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EXAMPLES,
    )
    _add_data_arguments(fit)
    _add_fit_arguments(fit)
    fit.add_argument("--output", "-o", help="write the model (and its certificate) as JSON to this file")
    fit.add_argument("--reference-out", help="the C++ reference's .out file (instead of a CSV)")
    fit.add_argument("--reference-label", help="the matching .label file")
    fit.add_argument("--reference-minor", help="the matching .minor file (optional)")
    fit.set_defaults(handler=cmd_fit)

    predict = commands.add_parser(
        "predict", help="predict with a saved model (JSON from 'fit -o')",
        description="Apply a saved model to a CSV/Parquet file with the columns it was trained on.",
    )
    predict.add_argument("model_file", help="model JSON written by 'optrules fit -o'")
    predict.add_argument("data", help="CSV (or .parquet) file to predict")
    predict.add_argument("--output", "-o", help="write predictions to this CSV (or .parquet) file (default: print)")
    predict.add_argument("--proba", action="store_true", help="add one probability column per class")
    predict.add_argument("--explain", action="store_true", help="add the rule that decided each row (rule lists)")
    predict.add_argument("--target", help="a column of true labels to drop from the input and score against")
    predict.add_argument("--sep", default=None, help="CSV separator (default: detected)")
    predict.set_defaults(handler=cmd_predict)

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

    bench = commands.add_parser(
        "bench", help="time the certified rule-list search for several lambdas",
        description="Fit a certified rule list per lambda and report search time, prefixes expanded and memory.",
    )
    _add_data_arguments(bench)
    bench.add_argument("--regularization", "-r", type=float, nargs="+", default=[0.02, 0.01], metavar="LAMBDA",
                       help="the lambdas to run (default 0.02 0.01)")
    bench.add_argument("--repeat", type=int, default=1, help="runs per lambda (default 1)")
    bench.add_argument("--time-limit", type=float, default=None, help="budget per run, seconds")
    bench.add_argument("--weight-column", help="column of per-sample weights")
    bench.add_argument("--output", "-o", help="write the measurements as JSON to this file")
    bench.set_defaults(handler=cmd_bench)

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
    serve.set_defaults(handler=cmd_serve)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    console = Console()
    if not console.is_terminal:  # piped or captured: room for the tables rather than 80 columns
        console = Console(width=160)
    try:
        return args.handler(args, console)
    except ValueError as error:
        from rich.markup import escape

        console.print(f"[bold red]error:[/] {escape(str(error))}", highlight=False)
        return 2


if __name__ == "__main__":
    sys.exit(main())
