"""``optrules info``: the bundled datasets."""

from __future__ import annotations

import numpy as np
from rich.console import Console
from rich.table import Table

from ..data.datasets import DATASETS


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


def _add_info_command(commands) -> None:
    info = commands.add_parser("info", help="list the bundled datasets")
    info.set_defaults(handler=cmd_info)
