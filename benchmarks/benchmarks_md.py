"""Write a benchmark's table into its marked blocks (one helper for every script).

Every script's full table goes to its history file, ``benchmarks/history/<name>.md``, where its dated notes
live; BENCHMARKS.md, the summary a user reads, holds the headline blocks: the same table, or the shorter
``summary`` a script gives, wherever BENCHMARKS.md has a block of that name (which benchmarks make the
summary is chosen there, by hand).
"""

from __future__ import annotations

import json
import os
import platform
import time
from pathlib import Path

from optrules.files import write_text

BENCHMARKS_MD = Path(__file__).resolve().parent.parent / "BENCHMARKS.md"
HISTORY = Path(__file__).resolve().parent / "history"


def stamp(command: str) -> str:
    return (f"Measured {time.strftime('%Y-%m-%d')} on {platform.machine()}, {os.cpu_count()} cores, Python "
            f"{platform.python_version()}; `{command}`.")


def _replace_block(path: Path, name: str, body: str, heading: str | None) -> None:
    """Replace the block between ``<!-- name:begin -->`` and ``<!-- name:end -->`` of ``path``; append it
    under ``heading`` when the file has none (and ``heading`` is given)."""
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    text = path.read_text() if path.exists() else f"# {heading}\n"
    if begin not in text:
        if heading is None:
            return
        text = text.rstrip("\n") + f"\n\n{begin}\n{end}\n"
    before, _, rest = text.partition(begin)
    _, _, after = rest.partition(end)
    write_text(path, f"{before}{begin}\n{body}\n{end}{after}")


def write_block(name: str, body: str, heading: str, summary: str | None = None) -> None:
    """Put ``body`` in the benchmark's history file (created under ``heading``), and ``summary`` (default:
    ``body``) in BENCHMARKS.md's block of that name, if it has one."""
    HISTORY.mkdir(exist_ok=True)
    _replace_block(HISTORY / f"{name}.md", name, body, heading)
    _replace_block(BENCHMARKS_MD, name, body if summary is None else summary, None)


def publish(results_path: Path, results, name: str, command: str, table: str, heading: str) -> None:
    """Save a script's results (JSON) and put its table, stamped with ``command``, in its blocks."""
    results_path.parent.mkdir(exist_ok=True)
    write_text(results_path, json.dumps(results, indent=2))
    write_block(name, f"{stamp(command)}\n\n{table}", heading)
