"""A fitted model where Python and optrules are not: an SQL query, or a standalone Python module.

Both exports read the model as a decision list (:meth:`optrules.models.Model.branches`) and each
feature through the binarizer that made it (:class:`optrules.data.binarize.Feature`), so they agree
with ``model.predict`` on the original columns, row for row (the tests run the output on random tables
in SQLite, DuckDB and Python and compare). They need only the columns the model uses.

How a raw value is read, as the binarizer reads it:

* a column compared with thresholds is a number; text in it is parsed, and the markers of a missing
  value (``?``, ``NA``, ``""``, ...) or text that is no number count as missing;
* a date column is read as days since 1970-01-01; SQL reads ISO dates (``2013-08-14``,
  ``2013-08-14 06:00[:00]``) and gives NULL for other forms (missing); Python also reads ``2013/08/14``
  and ``08/14/2013`` (month first unless the first number exceeds 12, as pandas does);
* a one-hot column is compared with the values seen in training (a value never seen makes every one-hot
  feature of it false); a 0/1 column is true when it equals 1.

Missing values: a binarizer fitted with ``missing="category"`` reads them as their own category (every
other feature of that column false, negated features true). One fitted with ``missing="error"`` refuses
them: the Python module raises ``ValueError`` naming the column and the SQL query returns NULL for that
row's prediction and rule, never a guess.
"""

from __future__ import annotations

import math
from typing import Any

from .data.binarize import MISSING_MARKERS, Feature
from .escape import SQL_FALSE, SQL_TRUE, printable, python_literal, sql_identifier, sql_string
from .escape import plain as _plain

#: what pandas.read_csv reads as missing by default (so a CSV row read as text agrees with a DataFrame)
PANDAS_MISSING_TEXT = ("", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
                       "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null")
#: text that counts as a missing number (compared in lower case, stripped)
MISSING_NUMBER_TEXT = tuple(sorted({m.lower() for m in (*MISSING_MARKERS, *PANDAS_MISSING_TEXT)}))
DIALECTS = ("sqlite", "duckdb")

NUMBER, NUMBER_TEXT, DATE, CATEGORY, FLAG = "number", "number_text", "date", "category", "flag"


# -- what the model needs from the raw columns ------------------------------------------------------
def _readings(model) -> tuple[dict[str, Feature], dict[str, str]]:
    """The features the model uses (by name) and how each column they test is read."""
    used = model.used_features()
    binarizer = model.binarizer
    if binarizer is None:  # the model was learnt on a boolean matrix: each feature is a 0/1 column
        return {name: Feature(name, name, "binary") for name in used}, {name: FLAG for name in used}
    by_name = {f.name: f for f in binarizer.features_}
    features = {name: by_name[name] for name in used}
    readings = {}
    for column in sorted({f.column for f in features.values()}):
        kinds = {f.kind for f in binarizer.features_ if f.column == column}
        if column in binarizer.date_columns_:
            readings[column] = DATE
        elif column in binarizer.numeric_text_columns_:
            readings[column] = NUMBER_TEXT
        elif kinds & {"le", "gt", "interval", "binary"}:
            readings[column] = NUMBER
        else:
            readings[column] = CATEGORY
    return features, readings


def _refuses_missing(model) -> bool:
    return model.binarizer is not None and model.binarizer.missing == "error"


# -- SQL ------------------------------------------------------------------------------------------
def _sql_literal(value: Any, dialect: str = "sqlite") -> str:
    value = _plain(value)
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return SQL_TRUE if value else SQL_FALSE
    if isinstance(value, (int, float)):
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"no SQL literal for {value!r}")
        return repr(value)
    if isinstance(value, str):
        return sql_string(value, dialect)
    raise ValueError(f"cannot write a value of type {type(value).__name__} into SQL: {printable(repr(value))[:80]}")


def _sql_reading(column: str, reading: str, dialect: str, table: str) -> str:
    """SQL for the column's value as the binarizer reads it (NULL when missing). The column is named with
    its table: SQLite reads an unqualified ``"name"`` that no column has as the text 'name', silently."""
    raw = f"{sql_identifier(table)}.{sql_identifier(column)}"
    if reading in (NUMBER, CATEGORY):
        return raw
    if reading == FLAG:
        return f"CAST({raw} AS DOUBLE)"
    text = f"TRIM(CAST({raw} AS {'TEXT' if dialect == 'sqlite' else 'VARCHAR'}))"
    if reading == DATE:  # whole seconds / 86400, the same double pandas computes
        if dialect == "sqlite":
            return f"(CAST(strftime('%s', {text}) AS INTEGER) / 86400.0)"
        return f"(epoch(TRY_CAST({text} AS TIMESTAMP)) / 86400.0)"
    markers = ", ".join(_sql_literal(m, dialect) for m in MISSING_NUMBER_TEXT)
    if dialect == "sqlite":  # CAST of text that is no number gives 0 in SQLite: refuse it first
        return (f"(CASE WHEN LOWER({text}) IN ({markers}) OR {text} GLOB '*[^0-9.eE+-]*' THEN NULL "
                f"ELSE CAST({text} AS REAL) END)")
    return f"(CASE WHEN LOWER({text}) IN ({markers}) THEN NULL ELSE TRY_CAST({text} AS DOUBLE) END)"


def model_to_sql(model, table: str = "data", dialect: str = "sqlite") -> str:
    """See :meth:`optrules.models.Model.to_sql`."""
    if dialect not in DIALECTS:
        raise ValueError(f"dialect must be one of {DIALECTS}, got {dialect!r}")
    features, readings = _readings(model)
    values = {column: _sql_reading(column, reading, dialect, table) for column, reading in readings.items()}
    branches = model.branches()
    whens = []
    if _refuses_missing(model):
        for column in readings:
            whens.append(f"    WHEN {values[column]} IS NULL THEN NULL  -- {printable(column)} is missing: no prediction")
    words = _sql_words(dialect)
    for k, branch in enumerate(branches[:-1]):
        tests = [_feature_test(features[name], values[features[name].column], words) for name, truth in branch.literals]
        tests = [t if truth else f"(NOT {t})" for t, (_, truth) in zip(tests, branch.literals)]
        whens.append(f"    WHEN {' AND '.join(tests) or SQL_TRUE} THEN {k}  -- {printable(branch.text)}")
    fired = "  CASE\n" + "\n".join(whens) + f"\n    ELSE {len(branches) - 1}  -- {printable(branches[-1].text)}\n  END"
    if not whens:
        fired = f"  {len(branches) - 1}"
    prediction = " ".join(f"WHEN {k} THEN {_sql_literal(model.classes[b.prediction], dialect)}" for k, b in enumerate(branches))
    columns = [f"  CASE rule {prediction} END AS prediction", "  rule"]
    if len(model.classes) == 2:
        probability = " ".join(f"WHEN {k} THEN {_sql_literal(float(b.probabilities[1]))}" for k, b in enumerate(branches))
        columns.insert(1, f"  CASE rule {probability} END AS probability")
    return (f"-- {printable(repr(model))}, exported by optrules; rule k is row k of model.get_rules()\n"
            f"-- probability: of class {printable(repr(_plain(model.classes[-1])))}\n" * (len(model.classes) == 2)
            + "SELECT\n" + ",\n".join(columns) + "\nFROM (SELECT\n" + fired + f" AS rule\nFROM {sql_identifier(table)}) AS fired")


# -- how each language writes a feature's test (the same reading of every feature kind for both) --------
def _sql_words(dialect: str) -> dict:
    return {"literal": lambda value: _sql_literal(value, dialect), "equals": "=", "one": "1", "and": " AND ",
            "always": SQL_TRUE, "missing": "({v} IS NULL)", "negate": "(NOT {t})",
            # NULL (missing) makes a test false, as in the binarizer
            "guarded": f"COALESCE({{c}}, {SQL_FALSE})"}


_PYTHON_WORDS = {"literal": python_literal, "equals": "==", "one": "1.0", "and": " and ", "always": "True",
                 "missing": "{v} is None", "negate": "(not {t})", "guarded": "({v} is not None and {c})"}


def _feature_test(feature: Feature, value: str, words: dict) -> str:
    """The truth of ``feature`` (never NULL) in the language of ``words``, ``value`` being the column's
    reading."""
    literal = words["literal"]
    if feature.kind == "missing":
        test = words["missing"].format(v=value)
    else:
        if feature.kind == "equals":
            compare = f"{value} {words['equals']} {literal(feature.value)}"
        elif feature.kind == "binary":
            compare = f"{value} {words['equals']} {words['one']}"
        elif feature.kind == "le":
            compare = f"{value} <= {literal(float(feature.value))}"
        elif feature.kind == "gt":
            compare = f"{value} > {literal(float(feature.value))}"
        else:  # interval: value <= x < upper, either end may be infinite
            parts = ([f"{value} >= {literal(float(feature.value))}"] if math.isfinite(feature.value) else []) + \
                    ([f"{value} < {literal(float(feature.upper))}"] if math.isfinite(feature.upper) else [])
            compare = words["and"].join(parts) or words["always"]
        test = words["guarded"].format(v=value, c=compare)
    return words["negate"].format(t=test) if feature.negated else test


_PY_READERS = '''
MISSING_NUMBER_TEXT = frozenset({markers})
MISSING_TEXT = frozenset({pandas_missing})
_DATE = re.compile(r"^(\\d{{4}})[-/.](\\d{{1,2}})[-/.](\\d{{1,2}})|^(\\d{{1,2}})[-/.](\\d{{1,2}})[-/.](\\d{{4}})")
_TIME = re.compile(r"^[ T](\\d{{1,2}}):(\\d{{2}})(?::(\\d{{2}})(\\.\\d+)?)?$")
_EPOCH = datetime.datetime(1970, 1, 1)


def _missing(value):
    return value is None or (isinstance(value, float) and value != value)


def _finite(number, column):
    if number != number:
        return None
    if math.isinf(number):
        raise ValueError(f"column {{column!r}} holds an infinite value")
    return number


def _number(value, column):
    """A number, or None for a missing value (markers such as ? or NA, or text that is no number)."""
    if _missing(value):
        return None
    if isinstance(value, str):
        text = value.strip()
        if text.lower() in MISSING_NUMBER_TEXT:
            return None
        if text.lower() in ("true", "false"):  # a 0/1 column of booleans written as text
            return float(text.lower() == "true")
        try:
            return _finite(float(text), column)
        except ValueError:
            return None
    return _finite(float(value), column)


def _date(value, column):
    """Days since 1970-01-01, or None for a missing value or text that is no date."""
    if _missing(value):
        return None
    text = str(value).strip()
    found = _DATE.match(text)
    if not found:
        return None
    if found.group(1):
        year, month, day = int(found.group(1)), int(found.group(2)), int(found.group(3))
    else:
        first, second, year = int(found.group(4)), int(found.group(5)), int(found.group(6))
        month, day = (second, first) if first > 12 else (first, second)
    time = _TIME.match(text[found.end():]) if text[found.end():] else None
    if text[found.end():] and not time:
        return None
    hour, minute, second = (int(time.group(1)), int(time.group(2)), int(time.group(3) or 0)) if time else (0, 0, 0)
    try:
        stamp = datetime.datetime(year, month, day, hour, minute, second)
    except ValueError:
        return None
    return (stamp - _EPOCH).total_seconds() / 86400.0


def _category(value, column, seen, text_values):
    """The value as the training column held it (text or number), or None when missing."""
    if _missing(value):
        return None
    if isinstance(value, str):
        if value in seen:
            return value
        if value in MISSING_TEXT:
            return None
        if text_values:
            return value
        number = _number(value, column)
        return value if number is None else number
    if text_values and not isinstance(value, bool):
        number = float(value)
        return str(int(number)) if number.is_integer() else format(number, ".6g")
    return value
'''


def model_to_python(model) -> str:
    """See :meth:`optrules.models.Model.to_python`."""
    features, readings = _readings(model)
    branches = model.branches()
    seen = {} if model.binarizer is None else model.binarizer.categories_
    # the docstring holds only our own text: names and values enter as literals (COLUMNS, RULES) and comments
    lines = [f'"""{printable(repr(model))}, exported by optrules: a standalone module (standard library only).',
             "",
             "    predict(row)        the predicted class of one row, a dict from column name to value",
             "    predict_proba(row)  {class: probability}",
             "    explain(row)        the rule that decided the row, with its training counts",
             "",
             "The columns it reads are listed in COLUMNS, its rules in RULES.",
             "Values may be numbers or text as read from a CSV file; None, NaN or a missing marker is missing.",
             '"""',
             "",
             "import datetime",
             "import math",
             "import re",
             "",
             f"CLASSES = {python_literal([_plain(c) for c in model.classes])}",
             f"RULES = {python_literal([b.text for b in branches])}",
             f"PREDICTIONS = {python_literal([int(b.prediction) for b in branches])}",
             f"PROBABILITIES = {python_literal([[float(p) for p in b.probabilities] for b in branches])}",
             f"SUPPORT = {python_literal([b.support for b in branches])}",
             f"COLUMNS = {python_literal(list(readings))}",
             _PY_READERS.format(markers=python_literal(list(MISSING_NUMBER_TEXT)),
                                pandas_missing=python_literal(list(PANDAS_MISSING_TEXT))),
             "",
             "def _read(row):",
             '    """The used columns of ``row``, read as the model was trained to read them."""',
             "    absent = [c for c in COLUMNS if c not in row]",
             "    if absent:",
             '        raise ValueError(f"the row has no column(s) {absent}")',
             "    return ["]
    for column, reading in readings.items():
        key = python_literal(column)
        if reading in (NUMBER, NUMBER_TEXT, FLAG):  # numbers given as text are parsed either way
            lines.append(f"        _number(row[{key}], {key}),")
        elif reading == DATE:
            lines.append(f"        _date(row[{key}], {key}),")
        else:
            values = [_plain(v) for v in seen.get(column, [])]
            text_values = bool(values) and all(isinstance(v, str) for v in values)
            lines.append(f"        _category(row[{key}], {key}, frozenset({python_literal(values)}), {text_values!r}),")
    lines += ["    ]", "", "", "def rule_index(row):",
              '    """Index of the rule that decides ``row`` (into RULES; the last is the default)."""',
              "    v = _read(row)"]
    position = {column: j for j, column in enumerate(readings)}
    if _refuses_missing(model):
        lines += ["    for column, value in zip(COLUMNS, v):",
                  "        if value is None:",
                  '            raise ValueError(f"column {column!r} is missing; the model was trained without '
                  'missing values")']
    for k, branch in enumerate(branches[:-1]):
        tests = []
        for name, truth in branch.literals:
            test = _feature_test(features[name], f"v[{position[features[name].column]}]", _PYTHON_WORDS)
            tests.append(test if truth else f"(not {test})")
        lines += [f"    if {' and '.join(tests) or 'True'}:  # {printable(branch.text)}", f"        return {k}"]
    lines += [f"    return {len(branches) - 1}", "", "",
              "def predict(row):",
              "    return CLASSES[PREDICTIONS[rule_index(row)]]", "", "",
              "def predict_proba(row):",
              "    return dict(zip(CLASSES, PROBABILITIES[rule_index(row)]))", "", "",
              "def explain(row):",
              "    k = rule_index(row)",
              '    return {"rule": k, "condition": RULES[k], "prediction": CLASSES[PREDICTIONS[k]],',
              '            "probability": PROBABILITIES[k][PREDICTIONS[k]], "support": SUPPORT[k]}', ""]
    return "\n".join(lines)
