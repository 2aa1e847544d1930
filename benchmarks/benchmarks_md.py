"""Write a benchmark's table into its marked block of BENCHMARKS.md (one helper for every script)."""

from __future__ import annotations

import json
import os
import platform
import time
from pathlib import Path

BENCHMARKS_MD = Path(__file__).resolve().parent.parent / "BENCHMARKS.md"


def stamp(command: str) -> str:
    return (f"Measured {time.strftime('%Y-%m-%d')} on {platform.machine()}, {os.cpu_count()} cores, Python "
            f"{platform.python_version()}; `{command}`.")


def write_block(name: str, body: str, heading: str) -> None:
    """Replace the block between ``<!-- name:begin -->`` and ``<!-- name:end -->``; append it under
    ``heading`` when BENCHMARKS.md has none yet."""
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    text = BENCHMARKS_MD.read_text() if BENCHMARKS_MD.exists() else "# Benchmarks\n"
    if begin not in text:
        text = text.rstrip("\n") + f"\n\n## {heading}\n\n{begin}\n{end}\n"
    before, _, rest = text.partition(begin)
    _, _, after = rest.partition(end)
    BENCHMARKS_MD.write_text(f"{before}{begin}\n{body}\n{end}{after}")


def publish(results_path: Path, results, name: str, command: str, table: str, heading: str) -> None:
    """Save a script's results (JSON) and put its table, stamped with ``command``, in BENCHMARKS.md."""
    results_path.parent.mkdir(exist_ok=True)
    results_path.write_text(json.dumps(results, indent=2))
    write_block(name, f"{stamp(command)}\n\n{table}", heading)
