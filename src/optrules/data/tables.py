"""Read a user's table (CSV or Parquet) into a DataFrame: the one reader of the command line and the
web app, so a file that fits in one fits in the other.

Problems the user can fix come back as :class:`TableError` with a one-line message naming the file:
no such file, a folder, an empty file, binary data, text in another encoding, no columns, a broken CSV.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pandas as pd

#: separators a CSV may use (sniffed from the first bytes; a single column gives nothing to sniff: comma)
SEPARATORS = ",;\t|"
_SAMPLE = 65536


class TableError(ValueError):
    """A table that cannot be read, with a message that says why."""


def _encoding_of(head: bytes) -> str:
    try:
        head.decode("utf-8-sig")
        return "utf-8-sig"
    except UnicodeDecodeError as error:
        # a multi-byte character cut at the end of the sample is still UTF-8
        return "utf-8-sig" if error.start >= len(head) - 3 else "latin-1"


def read_table(path, name: str | None = None, sep: str | None = None, encoding: str | None = None,
               header: bool = True) -> pd.DataFrame:
    """The table in ``path`` (Parquet when the name ends in ``.parquet``, else CSV).

    ``name``: how messages call the file (default: the path). ``sep``: the CSV separator (default:
    sniffed among comma, semicolon, tab and bar). ``encoding``: the text encoding (default: UTF-8,
    falling back to Latin-1 when the bytes are not UTF-8). ``header``: the first line names the columns.
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
    if b"\x00" in head[:8192]:
        raise TableError(f"{name} is not a CSV file (it holds binary data)")
    guessed = encoding is None
    encoding = _encoding_of(head) if guessed else encoding
    if sep is None:
        try:
            sep = csv.Sniffer().sniff(head.decode(encoding, "ignore"), delimiters=SEPARATORS).delimiter
        except (csv.Error, LookupError):
            sep = ","

    def read(text_encoding: str) -> pd.DataFrame:
        return pd.read_csv(file, sep=sep, encoding=text_encoding, header=0 if header else None, skipinitialspace=True)

    try:
        try:
            return read(encoding)
        except UnicodeDecodeError:
            if not guessed or encoding == "latin-1":
                raise
            return read("latin-1")  # not UTF-8 after all, past the sample
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
