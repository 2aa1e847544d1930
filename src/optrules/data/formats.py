"""Read and write the C++ CORELS reference's text formats.

* ``.out``: one antecedent per line, ``{name}`` then N space-separated 0/1 capture bits;
* ``.label``: two lines, ``{label=0}`` and ``{label=1}`` (e.g. ``{recidivate:No}``/``{recidivate:Yes}``),
  each followed by N bits; they must be complements of each other;
* ``.minor``: one line, a name then N bits marking the minority-label members of equivalent-point
  groups (CORELS paper, Theorem 20).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np


@dataclass
class BitLines:
    names: list[str]
    bits: np.ndarray  # (n_lines, n_samples) bool


def _parse_line(line: str, path: Path, lineno: int) -> tuple[str, np.ndarray]:
    line = line.strip()
    if line.startswith("{"):
        end = line.find("}")
        if end < 0:
            raise ValueError(f"{path}:{lineno}: unterminated name (no closing '}}')")
        name, rest = line[1:end], line[end + 1 :]
    else:
        name, _, rest = line.partition(" ")
    digits = rest.replace(" ", "").replace("\t", "")
    bits = np.frombuffer(digits.encode("ascii"), dtype=np.uint8) - ord("0")
    if bits.size == 0 or bits.max(initial=0) > 1:
        bad = sorted(set(digits) - {"0", "1"})
        raise ValueError(f"{path}:{lineno}: expected 0/1 bits after the name, found {bad or 'nothing'}")
    return name, bits.astype(bool)


def read_bit_lines(path) -> BitLines:
    """Read any of the three formats: names and a boolean matrix, one row per line."""
    path = Path(path)
    names, rows = [], []
    with path.open() as handle:
        for lineno, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            name, bits = _parse_line(line, path, lineno)
            if rows and bits.size != rows[0].size:
                raise ValueError(f"{path}:{lineno}: {bits.size} bits, but line 1 has {rows[0].size}")
            names.append(name)
            rows.append(bits)
    if not rows:
        raise ValueError(f"{path}: no lines")
    return BitLines(names, np.vstack(rows))


def write_bit_lines(path, names, bits) -> None:
    bits = np.asarray(bits, dtype=bool)
    if bits.ndim != 2 or len(names) != bits.shape[0]:
        raise ValueError(f"need one name per row: {len(names)} names, bits of shape {bits.shape}")
    from ..files import replacing

    with replacing(path) as temporary, open(temporary, "w") as handle:
        for name, row in zip(names, bits):
            handle.write("{" + name + "} " + " ".join("1" if b else "0" for b in row) + "\n")


def read_out(path) -> BitLines:
    """Antecedent names and capture vectors ``(n_antecedents, n_samples)``."""
    return read_bit_lines(path)


def read_label(path) -> tuple[np.ndarray, list[str]]:
    """Labels (0/1 per sample, 1 = the second line's label) and the two label names."""
    lines = read_bit_lines(path)
    if lines.bits.shape[0] != 2:
        raise ValueError(f"{path}: a .label file has exactly two lines, found {lines.bits.shape[0]}")
    if np.any(lines.bits[0] == lines.bits[1]):
        raise ValueError(f"{path}: the two label lines must be complements of each other")
    return lines.bits[1].astype(np.int8), lines.names


def read_minor(path) -> np.ndarray:
    """The minority bit vector of equivalent-point groups."""
    lines = read_bit_lines(path)
    if lines.bits.shape[0] != 1:
        raise ValueError(f"{path}: a .minor file has exactly one line, found {lines.bits.shape[0]}")
    return lines.bits[0]


def write_label(path, y, names=("label=0", "label=1")) -> None:
    y = np.asarray(y).astype(bool)
    write_bit_lines(path, list(names), np.vstack([~y, y]))


def write_minor(path, minor, name="group_minority") -> None:
    write_bit_lines(path, [name], np.asarray(minor, dtype=bool)[None, :])


@dataclass
class ReferenceProblem:
    """A problem in the reference's format: antecedents, labels, and optionally the minority vector."""

    antecedent_names: list[str]
    captures: np.ndarray  # (n_antecedents, n_samples) bool
    y: np.ndarray  # (n_samples,) 0/1
    label_names: list[str]
    minor: np.ndarray | None = None


def read_reference(out_path, label_path, minor_path=None) -> ReferenceProblem:
    """Read ``.out`` + ``.label`` (+ ``.minor``) and check that their lengths agree."""
    out = read_out(out_path)
    y, label_names = read_label(label_path)
    n = out.bits.shape[1]
    if y.size != n:
        raise ValueError(f"{out_path} has {n} samples per antecedent but {label_path} has {y.size} labels")
    minor = None
    if minor_path is not None:
        minor = read_minor(minor_path)
        if minor.size != n:
            raise ValueError(f"{minor_path} has {minor.size} bits but {out_path} has {n} samples")
    return ReferenceProblem(out.names, out.bits, y, label_names, minor)
