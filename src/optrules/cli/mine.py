"""``optrules mine``: binarize a table and list the mined antecedents."""

from __future__ import annotations

import time

import numpy as np
from rich.console import Console
from rich.table import Table

from ..parameters import (
    MAX_ANTECEDENTS,
    add_option,
)
from .common import _add_data_arguments, _binarizer_options, _cell, _identifiers, _load_xy, _print


def _binarize_and_mine(args, X, y, min_support: float):
    from ..data.binarize import Binarizer
    from ..data.mine import mine_antecedents
    from ..data.validation import check_target
    from ..families import default_family

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


def _add_mine_command(commands) -> None:
    mine = commands.add_parser("mine", help="binarize a table and list the mined antecedents with their support")
    _add_data_arguments(mine)
    mine.add_argument("--min-support", type=float, default=0.01, help="minimum support share (default 0.01)")
    add_option(mine, MAX_ANTECEDENTS, metavar="N")
    mine.set_defaults(handler=cmd_mine)
