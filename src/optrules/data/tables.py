"""Read a user's table (CSV or Parquet) into a DataFrame: the one reader of the command line and the
web app, so a file that fits in one fits in the other.

Problems the user can fix come back as :class:`TableError` with a one-line message naming the file:
no such file, a folder, an empty file, binary data, text in another encoding, no columns, a broken CSV.
"""

from __future__ import annotations

import codecs
import csv
from collections import Counter
from pathlib import Path

import pandas as pd

from ..notices import warn

#: separators a CSV may use (sniffed from the first bytes; a single column gives nothing to sniff: comma);
#: a space is tried after them (UCI's space-separated tables, e.g. the German credit data)
SEPARATORS = ",;\t|"
_SAMPLE = 65536
#: the longest header line read to check the columns' names before parsing the file
MAX_HEADER_BYTES = 8 * 2**20
#: byte-order marks of encodings whose text holds NUL bytes (checked before the test for binary data)
_WIDE_BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
              (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))


#: cells read as missing values beside pandas' own markers (empty, NA, NaN, null, N/A, ...): the UCI
#: tables' "?" (the census and heart tables write it for an unknown value)
MISSING_MARKERS = ("?",)


class TableError(ValueError):
    """A table that cannot be read, with a message that says why."""


class MissingMarkerWarning(UserWarning):
    """Cells holding a missing-value marker (:data:`MISSING_MARKERS`) were read as missing values."""


def _encoding_of(head: bytes) -> str:
    try:
        head.decode("utf-8-sig")
        return "utf-8-sig"
    except UnicodeDecodeError as error:
        # a multi-byte character cut at the end of the sample is still UTF-8
        return "utf-8-sig" if error.start >= len(head) - 3 else "latin-1"


def sniff_separator(text: str) -> str:
    """The separator (of :data:`SEPARATORS`) that cuts the sample's first lines into the same number of
    fields, the most lines and then the most fields; a comma when none cuts them in two. Each candidate
    is one pass of the C CSV reader over at most 100 lines: linear in the sample, which
    ``csv.Sniffer``'s regular expressions are not (64 KB of ``,"`` kept it busy 13 s)."""
    lines = text.splitlines(keepends=True)
    lines = (lines[:-1] if len(lines) > 1 else lines)[:100]  # the sample's last line may be cut
    best, best_key = ",", (0, 0)
    # spaces last, and only when no other separator cuts the lines: a value may hold a space (New York)
    for candidates in (SEPARATORS, " "):
        for sep in candidates:
            try:
                widths = Counter(len(row) for row in csv.reader(lines, delimiter=sep, skipinitialspace=True))
            except csv.Error:
                continue
            width, count = max(widths.items(), key=lambda item: (item[1], item[0]), default=(0, 0))
            if width >= 2 and (count, width) > best_key:
                best, best_key = sep, (count, width)
        if best_key[0]:
            break
    return best


def _header_problem(file: Path, name: str, sep: str, encoding: str, max_columns: int | None) -> str | None:
    """What is wrong with the header line: a column named twice (pandas would rename the copy, and a
    target named twice would become a feature), or more columns than ``max_columns``."""
    with open(file, encoding=encoding, errors="replace", newline="") as handle:
        line = handle.readline(MAX_HEADER_BYTES)
    if len(line) >= MAX_HEADER_BYTES and not line.endswith(("\n", "\r")):
        return f"{name}'s header line is over {MAX_HEADER_BYTES // 2**20} MB"
    try:
        names = next(csv.reader([line], delimiter=sep, skipinitialspace=True), [])
    except csv.Error:  # e.g. a quoted name across lines: pandas reads it, and says what is wrong
        return None
    if max_columns is not None and len(names) > max_columns:
        return f"{name} has {len(names):,} columns, more than the {max_columns:,} this reader takes"
    twice = [n for n, count in Counter(n.strip() for n in names).items() if count > 1 and n.strip()]
    if twice:
        shown = ", ".join(repr(n) for n in twice[:10]) + (" ..." if len(twice) > 10 else "")
        return f"{name} names a column twice ({shown}): rename one of each pair, so that no column is taken for another"
    return None


def read_table(path, name: str | None = None, sep: str | None = None, encoding: str | None = None,
               header: bool = True, max_columns: int | None = None) -> pd.DataFrame:
    """The table in ``path`` (Parquet when the name ends in ``.parquet``, else CSV).

    ``name``: how messages call the file (default: the path). ``sep``: the CSV separator (default:
    sniffed among comma, semicolon, tab and bar). ``encoding``: the text encoding (default: UTF-8,
    falling back to Latin-1 when the bytes are not UTF-8; UTF-16 and UTF-32 by their byte-order mark).
    ``header``: the first line names the columns (a name given twice is refused). ``max_columns``: more
    columns are refused before the file is parsed.
    """
    file = Path(path)
    name = str(path) if name is None else name
    if not file.exists():
        raise TableError(f"no such file: {name}")
    if file.is_dir():
        raise TableError(f"{name} is a folder, not a data file")
    if str(name).endswith(".parquet") or file.suffix == ".parquet":
        try:
            return pd.read_parquet(file)
        except Exception as error:  # pyarrow raises several types for a broken file
            raise TableError(f"{name} is not a readable Parquet file ({type(error).__name__}: {error})") from None
    with open(file, "rb") as handle:
        head = handle.read(_SAMPLE)
    if not head.strip():
        raise TableError(f"{name} is empty ({file.stat().st_size} bytes)")
    wide = next((wide for bom, wide in _WIDE_BOMS if head.startswith(bom)), None)
    if encoding is None and wide is not None:
        encoding = wide
    if b"\x00" in head[:8192] and not (encoding or "").lower().replace("_", "-").startswith(("utf-16", "utf-32")):
        raise TableError(f"{name} is not a CSV file (it holds NUL bytes: binary data, or UTF-16 text without a "
                         "byte-order mark, which --encoding utf-16-le or utf-16-be reads)")
    guessed = encoding is None
    encoding = _encoding_of(head) if guessed else encoding
    if sep is None:
        try:
            sep = sniff_separator(head.decode(encoding, "ignore"))
        except LookupError:
            sep = ","
    try:
        problem = _header_problem(file, name, sep, encoding, max_columns) if header else None
    except LookupError:
        raise TableError(f"unknown encoding {encoding!r}") from None
    if problem:
        raise TableError(problem)

    def read(text_encoding: str) -> pd.DataFrame:
        return pd.read_csv(file, sep=sep, encoding=text_encoding, header=0 if header else None, skipinitialspace=True)

    try:
        try:
            frame = read(encoding)
        except UnicodeDecodeError:
            if not guessed or encoding == "latin-1":
                raise
            frame = read("latin-1")  # not UTF-8 after all, past the sample
    except UnicodeDecodeError as error:
        raise TableError(f"{name} is not {encoding} text (byte {error.object[error.start:error.start + 1]!r} "
                         f"at position {error.start}): pass its encoding (command line: --encoding latin-1)") from None
    except LookupError:
        raise TableError(f"unknown encoding {encoding!r}") from None
    except pd.errors.EmptyDataError:
        raise TableError(f"{name} has no columns (is it empty?)") from None
    except (pd.errors.ParserError, csv.Error, ValueError) as error:
        message = " ".join(str(error).split())
        raise TableError(f"{name} is not a readable CSV file: {message}") from None
    if max_columns is not None and frame.shape[1] > max_columns:
        raise TableError(f"{name} has {frame.shape[1]:,} columns, more than the {max_columns:,} this reader takes")
    if not header:  # named as a numpy array's columns are (rules read x4>10875, not 4>10875)
        frame.columns = headerless_names(frame.shape[1])
    return _markers_as_missing(frame, name)


def headerless_names(n_columns: int) -> list[str]:
    """The names of a table's columns when it has none: x0, x1, ... (a numpy array's, see
    :func:`optrules.data.validation.check_X`)."""
    return [f"x{j}" for j in range(n_columns)]


def _markers_as_missing(frame: pd.DataFrame, name: str) -> pd.DataFrame:
    """The cells that hold one of :data:`MISSING_MARKERS` read as missing values, with a warning naming the
    columns and counts; a text column that then holds only numbers becomes numeric (as pandas reads a
    column whose missing cells are empty)."""
    counts = {}
    for position, column in enumerate(frame.columns):
        series = frame.iloc[:, position]
        if not (pd.api.types.is_object_dtype(series) or pd.api.types.is_string_dtype(series)):
            continue
        marked = series.isin(MISSING_MARKERS)
        if not marked.any():
            continue
        kept = series.mask(marked)
        numbers = pd.to_numeric(kept, errors="coerce")
        frame.iloc[:, position] = kept
        if numbers.notna().sum() == kept.notna().sum():
            frame[column] = numbers
        counts[column] = int(marked.sum())
    if counts:
        shown = ", ".join(f"{str(c)!r} {n:,}" for c, n in list(counts.items())[:10])
        more = f", and {len(counts) - 10:,} more columns" if len(counts) > 10 else ""
        warn(f"{name}: cells {' or '.join(map(repr, MISSING_MARKERS))} read as missing values: {shown}{more}",
             MissingMarkerWarning)
    return frame
