"""Text from the data on its way into another language: Python source, SQL, a terminal.

Column names and values come from the user's table, or from a model file somebody else wrote; they
end up in generated modules and queries, in comments and on screen. Each function here is the one way
such text enters one place, and what must hold is stated with it:

* a Python or SQL *literal* reads back as the same value, whatever its characters;
* an SQL *identifier* names the same column, and nothing else;
* a *comment* or a *line shown on a terminal* holds no character that any of the Python tokenizer,
  SQLite, DuckDB, PostgreSQL or a terminal treats as a line end, an escape or a control: every
  character that is not printable (``str.isprintable``: controls, NUL, ``\\r``, ``\\x85``, ``\\u2028``,
  bidirectional overrides, surrogates, ...) is written as its Python escape (``\\r``, ``\\x1b``,
  ``\\u2028``), so the text stays readable and can hide nothing.

* *HTML* text (the report page, the notebook views) shows what a terminal shows: :func:`html_text` is
  :func:`printable_lines` then :func:`html.escape`, so a bidirectional override cannot show "evil" as
  "live" and an escape character cannot reach the page raw. The web page sets text through ``textContent``.
"""

from __future__ import annotations

import html
import math
from typing import Any

import numpy as np


def plain(value: Any) -> Any:
    """A numpy scalar as the Python value it holds (other values as they are): what literals, JSON and
    comparisons of class labels read."""
    return value.item() if isinstance(value, np.generic) else value


_SHORT_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escaped_character(character: str) -> str:
    if character in _SHORT_ESCAPES:
        return _SHORT_ESCAPES[character]
    code = ord(character)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def printable(text: Any) -> str:
    """``text`` with every character that is not printable written as its Python escape: safe in a
    ``#`` or ``--`` comment and on a terminal (one line, no control sequence)."""
    text = str(text)
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else _escaped_character(c) for c in text)


def shown(value: Any, most: int = 60) -> str:
    """A value a request or a file sent, for a message: its repr, printable and cut (it may be megabytes
    long; an integer of thousands of digits is described, since Python will not write it out)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**30:
        return f"an integer of about {int(value.bit_length() * 0.30103) + 1} digits"
    text = printable(repr(value))
    return text if len(text) <= most else text[:most] + "..."


def printable_lines(text: Any) -> str:
    """:func:`printable` line by line: the line breaks of our own output stay, nothing else does."""
    return "\n".join(printable(line) for line in str(text).split("\n"))


def html_text(text: Any) -> str:
    """``text`` for an HTML page: every unprintable character escaped as on a terminal
    (:func:`printable_lines`), then ``&``, ``<``, ``>`` and both quotes as entities."""
    return html.escape(printable_lines(text))


# -- Python ---------------------------------------------------------------------------------------
def python_literal(value: Any) -> str:
    """Python source that evaluates to ``value`` (None, bool, int, float, str, or lists and tuples of
    them). Anything else is refused: its ``repr`` need not be code, nor safe code."""
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or isinstance(value, (bool, int, str)):
        return repr(value)  # str's repr escapes quotes, backslashes and every unprintable character
    if isinstance(value, float):
        if math.isnan(value):
            return "math.nan"
        if math.isinf(value):
            return "math.inf" if value > 0 else "-math.inf"
        return repr(value)
    if isinstance(value, (list, tuple)):
        items = ", ".join(python_literal(v) for v in value)
        return f"[{items}]" if isinstance(value, list) else f"({items}{',' if len(value) == 1 else ''})"
    raise ValueError(f"cannot write a value of type {type(value).__name__} into a Python module: {printable(repr(value))[:80]}")


# -- SQL ------------------------------------------------------------------------------------------
#: truth values that no column can stand for: SQLite reads a bare TRUE or FALSE as the column of that
#: name when the table has one (a hostile table's column "FALSE" made every missing value a match)
SQL_TRUE, SQL_FALSE = "(1 = 1)", "(1 = 0)"


def _check_sql_text(text: str, what: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"the {what} {printable(text)!r} holds a lone surrogate, which no SQL text can hold") from None


def sql_identifier(name: Any) -> str:
    """A quoted identifier (SQLite, DuckDB and PostgreSQL quote alike: ``"`` doubled inside ``"``)."""
    name = str(name)
    if not name:
        raise ValueError("a column with an empty name cannot be named in SQL (DuckDB and PostgreSQL refuse \"\"): rename it")
    if "\x00" in name:
        raise ValueError(f"the column name {printable(name)!r} holds a NUL character, which no SQL identifier can hold")
    _check_sql_text(name, "column name")
    return '"' + name.replace('"', '""') + '"'


def sql_string(text: str, dialect: str) -> str:
    """A string literal: ``'`` doubled inside ``'`` (no backslash escapes in these dialects); a NUL,
    which a query's text cannot hold, is joined in as ``char(0)`` (SQLite) or ``chr(0)`` (DuckDB)."""
    _check_sql_text(text, "value")
    quoted = "'" + text.replace("'", "''") + "'"
    if "\x00" not in text:
        return quoted
    nul = "char(0)" if dialect == "sqlite" else "chr(0)"
    return "(" + f" || {nul} || ".join("'" + part.replace("'", "''") + "'" for part in text.split("\x00")) + ")"
