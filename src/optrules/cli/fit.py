"""``optrules fit``: learn a model, print it with its certificate, save it (and the options every fit takes)."""

from __future__ import annotations

import argparse
import contextlib
import json
import time

import numpy as np
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ..escape import printable_lines
from ..parameters import (
    DEFAULT_TIME_LIMIT,
    MAX_ANTECEDENTS,
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
from .common import (
    _UNSET,
    EXAMPLES,
    _add_data_arguments,
    _binarizer_options,
    _cell,
    _check_output,
    _class_named,
    _identifiers,
    _load_xy,
    _n_jobs,
    _print,
    _report_groups,
    _show_progress,
    _taking,
    _write_report,
    _write_text,
)


def _check_fit_arguments(args, family, several_values: bool = False) -> None:
    """Refuse combinations that would silently do something else, before any data is read (``several_values``:
    the command fits one model per value of the --cv parameter, as ``bench`` does)."""
    from ..families import families, names_where

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
    from ..families import family as family_named

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
        from ..fairness.frontier import fairness_frontier

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
    from ..corels.cluster import SCHEDULER_TIMEOUT, connect_scheduler, on_cluster

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
    from ..families import family

    extra = family(args.model).fit_text(model)
    console.print(line + (f", {extra}" if extra else ""))
    if args.report:
        _write_report(args.report, model.rule_list_, certificate, X, y, _report_groups(args, X), weights,
                      args.data or args.dataset, console, frontier)
    return _save(args, model.rule_list_, certificate, console)


def _fit_reference(args, console: Console) -> int:
    from ..families import family

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


def _add_fit_arguments(fit: argparse.ArgumentParser, cross_validation: bool = True) -> None:
    from ..families import add_cli_options, families

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
