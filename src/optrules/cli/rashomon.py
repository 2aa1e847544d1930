"""``optrules rashomon``: the Rashomon set of a fitted rule list, its size and what its members do."""

from __future__ import annotations

import math
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ..escape import printable, printable_lines
from ..parameters import (
    MB,
)
from .common import _add_data_arguments, _cell, _check_output, _print, _save_figure, _write_table
from .fit import _add_fit_arguments, _fit_model, _time_left


def cmd_rashomon(args, console: Console) -> int:
    """Fit the optimal rule list, then enumerate every list within --epsilon of it and describe them."""
    import pandas as pd

    from ..families import family, with_rashomon_sets

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
    from ..budget import Budget
    from ..corels.rashomon_analysis import ENUMERATION_SHARE

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
    from ..corels.rashomon_analysis import GROUPS_SHOWN, scope_note

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
