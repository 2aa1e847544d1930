"""Turn a DataFrame into named binary features.

* categorical columns are one-hot encoded: ``sex=Male``; a value that already starts with a comparison
  reads as one: ``priors>3``;
* numeric columns are cut into user-given bins (``age=18-20``, ``age>45``), or compared with quantile
  thresholds in both directions (``x<=2.5``, ``x>2.5``);
* columns whose values are all 0/1 (or booleans) become one feature named after the column;
* optional negations of every one-hot, bin and 0/1 feature: ``not sex=Male``.

The binarizer is fitted on training data and applied unchanged to new data: a category never seen at fit
time makes every one-hot feature of its column false (never an error, never a shift to another value), and
a warning names the column.

A raw table needs three more decisions, each announced by a warning or kept in ``dropped_columns_``:

* a text column whose values are all numbers (``"12.5"``, or numbers with missing markers such as ``?``)
  is numeric; one whose values are all dates (``2013-08-14``, ``2013-08-14 06:00``, ``14/08/2013``) is
  compared with thresholds too, named as dates (``c_offense_date<=2013-05-02``);
* a column that identifies rows (a text column with a distinct value in at least half of its rows, or
  an integer column unique per row that numbers the rows of a table of 100 rows or more, is the first
  column of such a table read without a header (column ``0`` or ``x0``), or is named like an identifier: ``id``,
  ``customer_id``, ``PassengerId``) is left out, unless ``identifiers="keep"``: a rule ``Ticket=1601``
  describes one passenger, not a pattern;
* categories seen in fewer than ``min_category_count`` training rows get no feature (an antecedent
  needs at least its minimum support, so the miner would drop them anyway).
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Hashable
from dataclasses import asdict, dataclass
from typing import Any, Iterable, Mapping

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, TransformerMixin

from ..notices import warn
from ..parameters import BINARIZER_PARAMETERS, Declared, Interval, check_parameters, with_defaults
from .distinct import equal_rows
from .validation import as_frame, check_no_infinite

MISSING_LABEL = "missing"
#: why a column has no feature when the fit was stopped before the binarizer read it
UNREAD_REASON = "not read: the fit was stopped (time budget or Ctrl-C) before this column"
_COMPARISON_PREFIXES = ("<", ">", "=", "!")
#: text that marks a missing value in a column of numbers (pandas already reads "", "NA", "null", ... as NaN)
MISSING_MARKERS = ("?", "-", "--", ".", "na", "n/a", "nan", "null", "none", "missing", "unknown")
#: a text column with distinct values in at least this share of its rows identifies rows
IDENTIFIER_SHARE = 0.5
#: ... and at least this many distinct values (a small table's text column is not an identifier)
IDENTIFIER_MIN_VALUES = 20
_DATE = re.compile(r"^(\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}[-/.]\d{1,2}[-/.]\d{4})([ T]\d{1,2}:\d{2}(:\d{2}(\.\d+)?)?)?$")
_EPOCH = pd.Timestamp("1970-01-01")
_IDENTIFIER_WORD = re.compile(r"(^|[^a-z])(id|ids|key|uuid|guid)$", re.IGNORECASE)  # id, customer_id, Key
_IDENTIFIER_CAMEL = re.compile(r"[a-z](Id|ID)$")  # PassengerId, userID (but not "paid")
#: the names of the first column of a file read without a header: pandas's (0) and ours (x0, as a numpy
#: array's: :func:`optrules.data.tables.headerless_names`)
HEADERLESS_FIRST_COLUMNS = ("0", "x0")


@dataclass(frozen=True)
class Feature:
    """One binary feature: a test on one column.

    ``kind`` is one of ``equals`` (column == value), ``binary`` (column is 1/True), ``le`` (column <= value),
    ``gt`` (column > value), ``interval`` (value <= column < upper), ``missing`` (column is NaN).
    Features of one column that share ``group`` are mutually exclusive values of that column: a
    conjunction never needs two of them. ``group`` is -1 for features free to combine.
    """

    name: str
    column: str
    kind: str
    value: Any = None
    upper: Any = None
    negated: bool = False
    group: int = -1

    def __post_init__(self):
        # JSON cannot hold infinities: interval bounds are stored as "inf"/"-inf" and restored here.
        for key in ("value", "upper"):
            if self.kind == "interval" and isinstance(getattr(self, key), str):
                object.__setattr__(self, key, float(getattr(self, key)))

    def evaluate(self, column: "pd.Series | ColumnValues") -> np.ndarray:
        """Truth value of this feature on each entry of ``column`` (a Series, or the :class:`ColumnValues`
        its column's features share)."""
        values = column if isinstance(column, ColumnValues) else ColumnValues(column)
        if self.kind == "missing":
            result = values.missing
        elif self.kind == "equals":
            result = values.equal_to(self.value)
        elif self.kind == "binary":
            result = values.numbers == 1.0
        else:
            numbers = values.numbers
            with np.errstate(invalid="ignore"):
                if self.kind == "le":
                    result = numbers <= self.value
                elif self.kind == "gt":
                    result = numbers > self.value
                elif self.kind == "interval":
                    result = (numbers >= self.value) & (numbers < self.upper)
                else:  # pragma: no cover - guarded by construction
                    raise ValueError(f"unknown feature kind {self.kind!r}")
            result = result & ~values.missing
        result = np.asarray(result, dtype=bool)
        return ~result if self.negated else result


class ColumnValues:
    """One column's values in the forms its features test, each computed once and shared by them: a
    one-hot column of 7,000 values compared its text 7,000 times (6.3 s on 7,214 rows), a measurement
    was converted to floats once for each of its 18 thresholds."""

    def __init__(self, series: pd.Series):
        self.series = series
        self._missing = self._numbers = self._codes = self._code_of = None

    @property
    def missing(self) -> np.ndarray:
        if self._missing is None:
            self._missing = self.series.isna().to_numpy(dtype=bool)
        return self._missing

    @property
    def numbers(self) -> np.ndarray:
        """As float64, NaN where missing."""
        if self._numbers is None:
            self._numbers = self.series.to_numpy(dtype="float64", na_value=np.nan)
        return self._numbers

    def equal_to(self, value) -> np.ndarray:
        """``column == value``, missing entries false: each row's code among the distinct values, and the
        code of ``value`` found by a dict lookup, which equates what ``==`` does (pandas' factorize gives
        1, 1.0 and True one code, as ``==`` finds them equal)."""
        if self._codes is None:
            try:
                self._codes, distinct = pd.factorize(self.series, use_na_sentinel=True)
            except TypeError:  # unhashable values: compared one by one
                return (self.series == value).to_numpy(dtype=bool, na_value=False)
            self._code_of = {seen: code for code, seen in enumerate(distinct)}
        try:
            code = self._code_of.get(value)
        except TypeError:  # an unhashable value equals none of them
            code = None
        return np.zeros(len(self._codes), dtype=bool) if code is None else self._codes == code


#: values of a numeric column looked at before all of them are hashed for their number (``_guided_thresholds``)
DISTINCT_SAMPLE = 20_000


def design_block(values: ColumnValues, design_column) -> np.ndarray:
    """One input column of the reference (a :class:`~.guide.DesignColumn`) from its column's ``values``:
    the numbers, NaN where missing; 1/0 (NaN where missing) for a 0/1 column; 1/0 for one value; 1/0 for
    missing."""
    if design_column.kind == "number":
        return values.numbers
    if design_column.kind == "binary":
        return np.where(values.missing, np.nan, values.numbers == 1.0)
    if design_column.kind == "equals":
        return values.equal_to(design_column.value).astype(np.float64)
    return values.missing.astype(np.float64)


def value_name(column: str, label: str) -> str:
    """Readable name of ``column == label``: ``sex=Male``, but ``priors>3`` when the label is a comparison."""
    label = str(label)
    if label.startswith(_COMPARISON_PREFIXES):
        return f"{column}{label}"
    return f"{column}={label}"


def looks_numeric(text: str) -> bool:
    """Whether ``float`` reads the text as a number."""
    try:
        float(text)
    except ValueError:
        return False
    return True


def _format_number(x: float) -> str:
    if float(x).is_integer():
        return str(int(x))
    return f"{x:.6g}"


def _integer_range(first: int, last: int) -> str:
    return str(first) if first == last else f"{first}-{last}"


def interval_labels(edges: Iterable[float], integer: bool, lowest: float | None = None) -> list[str]:
    """Labels of the intervals ``(-inf, e0), [e0, e1), ..., [ek, inf)`` cut by increasing ``edges``.

    For integer-valued data the labels use inclusive integer ranges as the CORELS paper does
    (``18-20``, ``2-3``, ``1``, ``>45``); the first bin reads ``<e0``, or as a range from the smallest
    training value ``lowest`` when that lies below ``e0`` (``0`` rather than ``<1``). Other data get
    half-open intervals (``<1.5``, ``[1.5,2.5)``, ``>=2.5``).
    """
    edges = [float(e) for e in edges]
    labels = []
    if integer:
        if lowest is not None and np.isfinite(lowest) and lowest < edges[0]:
            labels.append(_integer_range(math.ceil(lowest), math.ceil(edges[0]) - 1))
        else:
            labels.append(f"<{_format_number(edges[0])}")
        for lo, hi in zip(edges[:-1], edges[1:]):
            labels.append(_integer_range(math.ceil(lo), math.ceil(hi) - 1))
        labels.append(f">{_format_number(math.ceil(edges[-1]) - 1)}")
    else:
        labels.append(f"<{_format_number(edges[0])}")
        for lo, hi in zip(edges[:-1], edges[1:]):
            labels.append(f"[{_format_number(lo)},{_format_number(hi)})")
        labels.append(f">={_format_number(edges[-1])}")
    return labels


def _check_edges(column: str, edges) -> list[float]:
    edges = [float(e) for e in edges]
    if not edges:
        raise ValueError(f"bins for column {column!r} must list at least one edge")
    if any(not math.isfinite(e) for e in edges) or any(b <= a for a, b in zip(edges[:-1], edges[1:])):
        raise ValueError(f"bins for column {column!r} must be finite and strictly increasing, got {edges}")
    return edges


def _is_integer_valued(values: np.ndarray) -> bool:
    # floor, not np.mod (7 ms against 1 on 700,000 values); inf and NaN are not integers
    return bool(np.all(np.floor(values) == values) and np.isfinite(values).all())


def cut(series: pd.Series, edges: Iterable[float]) -> pd.Series:
    """Label each value of a numeric series with its bin (see :func:`interval_labels`); NaN stays NaN."""
    edges = _check_edges(str(series.name), edges)
    values = series.to_numpy(dtype="float64", na_value=np.nan)
    finite = values[~np.isnan(values)]
    lowest = finite.min() if finite.size else None
    labels = np.array(interval_labels(edges, _is_integer_valued(finite), lowest), dtype=object)
    index = np.searchsorted(np.asarray(edges), values, side="right")
    out = labels[np.minimum(index, len(labels) - 1)]
    out[np.isnan(values)] = np.nan
    return pd.Series(out, index=series.index, name=series.name, dtype=object)


def _python_value(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def _is_zero_one(values: pd.Series) -> bool:
    if pd.api.types.is_bool_dtype(values):
        return True
    if not pd.api.types.is_numeric_dtype(values):
        return False
    # compared in place: the distinct values of a 700,000-row measurement, as a set of Python floats, took 55 ms
    numbers = values.dropna().to_numpy()
    if numbers.dtype == object:  # (nullable integers and floats)
        numbers = numbers.astype(np.float64)
    return numbers.size > 0 and bool(((numbers == 0) | (numbers == 1)).all())


def _is_text(series: pd.Series) -> bool:
    return not (pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series))


def _check_comparable(column: str, series: pd.Series) -> None:
    """Refuse a column holding values a rule cannot compare (unhashable: lists, dicts, sets), which pandas
    would reject deep inside with "unhashable type"."""
    if not pd.api.types.is_object_dtype(series):
        return
    try:
        pd.unique(series.dropna())
    except TypeError:
        odd = next(v for v in series.dropna() if not isinstance(v, Hashable))
        raise ValueError(f"column {column!r} holds {type(odd).__name__} values (e.g. {repr(odd)[:40]}): a rule compares "
                         "a column with a number or a text; give each part its own column, or convert the column to "
                         "text") from None


def _distinct_values(series: pd.Series):
    """The distinct non-missing values of a text column (None for any other column): what the checks
    below read, which a raw column repeats many times."""
    if not _is_text(series) or isinstance(series.dtype, pd.CategoricalDtype):
        return None
    return pd.unique(series.dropna())


def _distinct_text(distinct) -> pd.Series | None:
    """The distinct values, stripped (None if some value is not text or a number)."""
    if distinct is None or len(distinct) == 0:
        return None
    distinct = pd.Series(distinct)
    if not all(isinstance(v, (str, int, float, np.number)) and not isinstance(v, bool) for v in distinct.iloc[:1000]):
        return None
    return distinct.astype(str).str.strip()


def _all_numbers(distinct) -> bool:
    """Whether each of a text column's distinct values is a number or a marker of a missing value (and
    one at least a number)."""
    text = _distinct_text(distinct)
    if text is None:
        return False
    text = text[~(text.str.lower().isin(MISSING_MARKERS) | (text == ""))]
    if text.empty or pd.to_numeric(text.iloc[:100], errors="coerce").isna().any():  # most text fails here, fast
        return False
    return not pd.to_numeric(text, errors="coerce").isna().any()


def _all_dates(distinct, series: pd.Series) -> bool:
    text = _distinct_text(distinct)
    # the distinct values first (a yes/no column has two): reading a thousand rows of each of a wide
    # table's text columns took 0.5 s
    if text is None or not text.str.match(_DATE).all():
        return False
    return all(isinstance(v, str) for v in series.dropna().iloc[:1000])


def numbers_in_text(series: pd.Series) -> pd.Series | None:
    """The column as float numbers if every non-missing value of a text column is a number (markers of
    missing values such as ``?`` become NaN), else None."""
    return _coerce_numbers(series) if _all_numbers(_distinct_values(series)) else None


def dates_in_text(series: pd.Series) -> pd.Series | None:
    """The column as days since 1970-01-01 (float) if every non-missing value of a text column is a
    date, else None."""
    return _days(series) if _all_dates(_distinct_values(series), series) else None


def _days(series: pd.Series) -> pd.Series:
    """Days since 1970-01-01 of each date (NaN where a value is not a date)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pandas' format inference notes
        stamps = pd.to_datetime(series.astype("string").str.strip(), errors="coerce", format="mixed", dayfirst=False)
    return ((stamps - _EPOCH) / pd.Timedelta(days=1)).astype("float64").rename(series.name)


def _format_date(days: float) -> str:
    stamp = _EPOCH + pd.Timedelta(days=float(days))
    return stamp.strftime("%Y-%m-%d") if stamp == stamp.normalize() else stamp.strftime("%Y-%m-%d %H:%M")


def identifier_reason(column: str, series: pd.Series, n_distinct: int | None = None) -> str | None:
    """Why ``series`` looks like a row identifier, or None (see the module docstring); ``n_distinct``:
    its number of distinct values, if known."""
    present = series.dropna()
    n = len(present)
    if _is_text(series):
        distinct = int(present.nunique()) if n_distinct is None else n_distinct
        if distinct >= IDENTIFIER_MIN_VALUES and distinct >= IDENTIFIER_SHARE * n:
            return f"{distinct:,} distinct values in {n:,} rows"
        return None
    if pd.api.types.is_bool_dtype(series) or n < IDENTIFIER_MIN_VALUES:
        return None
    values = present.to_numpy(dtype="float64")
    # the cheap tests first: a measurement is seldom integer-valued, and integers within a range narrower
    # than the rows repeat (counting the distinct values of 26 columns of 700,000 rows took 0.7 s)
    if not _is_integer_valued(values) or values.max() - values.min() + 1 < n or present.nunique() < n:
        return None
    # distinct integers say little in a small table (ages of 30 people may be all distinct)
    many_rows = n >= 5 * IDENTIFIER_MIN_VALUES
    if many_rows and values.max() - values.min() + 1 <= 1.05 * n:
        return f"{n:,} distinct integers in {n:,} rows, numbering the rows"
    if _IDENTIFIER_WORD.search(str(column)) or _IDENTIFIER_CAMEL.search(str(column)):
        return f"{n:,} distinct integers in {n:,} rows and an identifier's name"
    # a file without a header names nothing, and its first column is where records keep their number
    # (UCI's wdbc.csv: 569 patient numbers from 8,670 to 911,320,502 made 18 threshold features)
    if many_rows and str(column) in HEADERLESS_FIRST_COLUMNS:
        return f"{n:,} distinct integers in {n:,} rows, first column of a table without a header"
    return None


def _sort_key(value: Any) -> tuple:
    return (0, value, "") if isinstance(value, (int, float, np.number)) else (1, 0, str(value))


class Binarizer(TransformerMixin, BaseEstimator):
    """Fit named binary features on a DataFrame; apply them unchanged to new data.

    Parameters
    ----------
    categorical : columns to one-hot encode even if numeric (non-numeric columns always are).
    bins : ``{column: increasing edges}``; the column is cut into ``(-inf, e0), [e0, e1), ..., [ek, inf)``,
        keeping the bins that hold training data.
    thresholds : how the other numeric columns get their thresholds (features ``x<=t`` and ``x>t`` for
        each): ``"quantile"`` (default here), ``n_thresholds`` quantiles of the training values;
        ``"boosted"``, the split points of a small boosted ensemble of stumps
        fitted on the training rows and ``y`` (:mod:`optrules.data.guide`), on every column (categorical
        values as 0/1 columns); ``"both"``, the two together (the space a refined search covers, which
        holds the boosted one); categorical columns keep all their values either way.
        ``reference_`` says what it learned.
    n_thresholds : number of quantile thresholds (``thresholds="quantile"``).
    negations : also add ``not <feature>`` for every one-hot, bin, 0/1 and missing feature.
    missing : ``"category"`` (default, as scikit-learn's trees take missing values) adds a
        ``column=missing`` feature and makes every other feature of that column false on missing values,
        with a :class:`MissingValuesWarning` saying how many; ``"error"`` rejects NaN with the column named.
    identifiers : ``"drop"`` (default) leaves out columns that identify rows, with a warning;
        ``"keep"`` uses them like any other column.
    min_category_count : categories seen in fewer training rows get no feature.

    Attributes
    ----------
    features_, feature_names_ : the binary features.
    columns_ : every column seen at fit time (all are needed at predict time).
    dropped_columns_ : ``{column: reason}`` of the columns left out as identifiers (or unread).
    unread_columns_ : the columns a stopped fit gave no feature: not read, or read but not yet made (see
        :meth:`fit`'s ``should_stop``).
    numeric_text_columns_, date_columns_ : text columns read as numbers, and as dates.
    categories_ : ``{column: values seen at fit time}`` of the one-hot encoded columns.
    missing_counts_ : ``{column: missing values}`` at fit time.
    reference_ : with ``thresholds="boosted"``, the :class:`~optrules.data.guide.Reference` (trees,
        rows, training accuracy); ``reference_model_`` is the fitted ensemble (not saved in model files);
        ``reference_features_`` marks the features it chose (None without a reference; not saved): the
        first rung of a certified fit's ladder (:mod:`optrules.ladder`).
    """

    _parameter_table = with_defaults(BINARIZER_PARAMETERS, thresholds="quantile", negations=False) + (
        Declared("min_category_count", "categories seen in fewer training rows get no feature", 1,
                 Interval(1, None, whole=True)),
    )

    def __init__(
        self,
        categorical: Iterable[str] | None = None,
        bins: Mapping[str, Iterable[float]] | None = None,
        n_thresholds: int = 9,
        negations: bool = False,
        missing: str = "category",
        identifiers: str = "drop",
        min_category_count: int = 1,
        thresholds: str = "quantile",
    ):
        self.categorical = categorical
        self.bins = bins
        self.n_thresholds = n_thresholds
        self.negations = negations
        self.missing = missing
        self.identifiers = identifiers
        self.min_category_count = min_category_count
        self.thresholds = thresholds

    # -- fitting -----------------------------------------------------------------------------------
    def fit(self, X, y=None, sample_weight=None, should_stop=None, reference_weight=None, keep_columns=(),
            time_left=None):
        """Learn the features of ``X``. With ``sample_weight``, rows of weight 0 are left out and the
        quantile thresholds are those of the weighted rows (a row of weight 2 counts as two rows, as in
        the weighted fit that follows). ``should_stop`` (a fit's budget: time up, or Ctrl-C) is asked
        before each column; once it says yes, the columns left get no feature and are listed in
        ``dropped_columns_`` and ``unread_columns_`` (it is heard once a column has been read).

        ``thresholds="boosted"`` needs ``y``: the reference ensemble (:mod:`.guide`) learns from it, with
        ``reference_weight`` (default ``sample_weight``; an estimator adds its class weights) and chooses
        the thresholds of numeric columns and the values of categorical ones. ``keep_columns``: columns
        that keep every feature they would have with quantile thresholds (a rule must be able to use a
        required column). ``time_left()``: the seconds the fit has left (None: no limit), which size the
        reference's sample (:func:`~optrules.data.guide.reference_size`). The stop is also heard between
        the columns' features, after the reference: the columns left then get none either."""
        self._fit(X, y, sample_weight, should_stop, reference_weight, keep_columns, time_left)
        return self

    def fit_transform(self, X, y=None, packed: bool = False, charge=None, **fit_options) -> np.ndarray:
        """:meth:`fit`, then :meth:`transform` of the same ``X``, in one pass: each column's features are
        evaluated as soon as they are made, within the stop requests :meth:`fit` hears (a stop leaves the
        columns not yet made unread, and the table holds the features of the others). ``charge(nbytes)``
        is told the table's size as it grows (a budget's memory account, which may refuse it)."""
        if fit_options.get("sample_weight") is not None and not (np.asarray(fit_options["sample_weight"]) > 0).all():
            self.fit(X, y, **fit_options)  # (the fit leaves rows of weight 0 out; the table has every row)
            return self.transform(X, packed=packed)
        blocks = []
        if packed:
            from . import bitset  # (numba's import, for the models that search)

        def evaluate(series, made):
            values = ColumnValues(series)
            for feature in made:
                truth = feature.evaluate(values)
                blocks.append(bitset.pack(truth) if packed else truth)
            if charge is not None and blocks:
                charge(len(blocks) * blocks[0].nbytes)

        self._fit(X, y, evaluate=evaluate, **fit_options)
        n_rows = as_frame(X).shape[0]
        if packed:
            from . import bitset

            return np.vstack(blocks) if blocks else np.empty((0, bitset.n_words(n_rows)), np.uint64)
        return np.column_stack(blocks) if blocks else np.empty((n_rows, 0), dtype=bool)

    def _fit(self, X, y=None, sample_weight=None, should_stop=None, reference_weight=None, keep_columns=(),
             time_left=None, evaluate=None):
        """What :meth:`fit` does; ``evaluate(series, features)`` is called with each column (as read) and
        its features once they are made."""
        self._check_params()
        frame = as_frame(X)
        if frame.shape[0] == 0:
            raise ValueError(f"cannot fit on empty data: found 0 sample(s) (shape={frame.shape}) while a minimum of 1 is required.")
        if frame.shape[1] == 0:
            raise ValueError(f"cannot fit on empty data: found 0 feature(s) (shape={frame.shape}) while a minimum of 1 is required.")
        if self.thresholds != "quantile" and y is None:
            raise ValueError(f"thresholds={self.thresholds!r} chooses thresholds from the target: pass y, or use "
                             "thresholds='quantile'")
        self._weights = None
        self._reference_cuts = {}
        kept_rows = None
        if sample_weight is not None:
            weights = np.asarray(sample_weight, dtype=np.float64).ravel()
            if weights.shape[0] != frame.shape[0]:
                raise ValueError(f"sample_weight has {weights.shape[0]} entries for {frame.shape[0]} rows")
            if (weights > 0).any():
                if not (weights > 0).all():
                    kept_rows = weights > 0
                    frame = frame[kept_rows]
                self._weights = weights if kept_rows is None else weights[kept_rows]
        categorical = set(self.categorical or ())
        bins = dict(self.bins or {})
        unknown = (categorical | set(bins)) - set(frame.columns)
        if unknown:
            raise ValueError(f"columns named in categorical/bins are not in the data: {sorted(unknown)}")
        self.categories_ = {}
        self.numeric_text_columns_, self.date_columns_ = [], []
        self.dropped_columns_ = {}
        self.missing_counts_ = {}
        self.reference_ = None
        columns = list(frame.columns)
        read, read_until = self._read_columns(frame, categorical, bins, should_stop)
        guide = None
        if self.thresholds != "quantile":
            guide = self._fit_reference(read, frame.shape[0], y, sample_weight if reference_weight is None
                                        else reference_weight, kept_rows, should_stop, set(keep_columns), time_left)
        features: list[Feature] = []
        picked: list[bool] = []
        made_until = len(read)
        for group, (column, series, kind) in enumerate(read):
            if features and should_stop is not None and should_stop():
                made_until = group
                break
            made = self._column_features(column, series, kind, group, bins, categorical, guide)
            if evaluate is not None:
                evaluate(series, made)
            features += made
            picked += self._reference_picks(column, series, made, guide)
        self._warn_dropped_and_missing(columns)
        del self._weights, self._reference_cuts
        self.unread_columns_ = [column for column, _, _ in read[made_until:]] + columns[read_until:]
        if self.unread_columns_:
            for column in self.unread_columns_:
                self.dropped_columns_[column] = UNREAD_REASON
            warn(f"the fit was stopped (time budget or Ctrl-C) while binarizing: {len(self.unread_columns_)} "
                 f"of {len(columns)} columns get no feature ({self.unread_columns_[:5]}"
                 f"{', ...' if len(self.unread_columns_) > 5 else ''})")
        self.columns_ = list(frame.columns)
        self.features_ = features
        self.reference_features_ = None if guide is None else np.asarray(picked, dtype=bool)
        self.feature_names_ = [f.name for f in features]
        self.n_features_in_ = len(self.columns_)
        self.feature_names_in_ = np.asarray(self.columns_, dtype=object)
        duplicated = pd.Index(self.feature_names_)[pd.Index(self.feature_names_).duplicated()]
        if len(duplicated):
            raise ValueError(f"feature names collide: {list(duplicated)}; rename the columns or values")

    def _check_params(self) -> None:
        check_parameters(self)

    def _read_columns(self, frame: pd.DataFrame, categorical: set, bins: dict, should_stop):
        """Each column as the fit reads it, with the kind of its features (``bins``, ``categorical`` or
        ``thresholds``), but identifiers; and the position of the first column not read (a stop was
        asked). One pass, a column at a time, so that a stop is heard between any two columns of a wide
        table; it is heard once a column was read (a model needs a feature)."""
        read = []
        for position, column in enumerate(frame.columns):
            if read and should_stop is not None and should_stop():
                return read, position
            series, n_distinct = self._read_at_fit(column, frame[column], categorical)
            if self.identifiers == "drop" and column not in categorical and column not in bins:
                reason = identifier_reason(column, series, n_distinct)
                if reason:
                    self.dropped_columns_[column] = reason
                    continue
            n_missing = self._check_missing(column, series)
            if n_missing:
                self.missing_counts_[column] = n_missing
            if column in bins:
                kind = "bins"
            elif column in categorical or _is_text(series) or _is_zero_one(series):
                kind = "categorical"
            else:
                kind = "thresholds"
            read.append((column, series, kind))
        return read, frame.shape[1]

    def _column_features(self, column, series, kind: str, group: int, bins, categorical, guide) -> list[Feature]:
        """A column's features: its bins, its values (those the reference split on, under ``guide``) or
        its thresholds (the reference's, or quantiles); its missing feature; the negations asked for."""
        chosen = None if guide is None else guide.get(column)
        if kind == "bins":
            features = self._bin_features(column, series, bins[column], group)
        elif kind == "categorical":
            # every value seen min_category_count times, whatever the reference chose: stumps are additive,
            # and values that matter only together (monks-1: a1 = a2; tic-tac-toe's lines) have no split
            # of their own (keeping only the values split on lost 24 points of test accuracy on monks-1)
            features = self._categorical_features(column, series, group, column in categorical)
            chosen = None
        else:
            features = self._threshold_features(column, series, None if chosen is None else
                                                [t for kind_, t in chosen if kind_ == "le"])
        if self.missing_counts_.get(column) and (chosen is None or features or ("missing", None) in chosen):
            features.append(Feature(value_name(column, MISSING_LABEL), column, "missing", group=group))
        if self.negations:
            features += [Feature(f"not {f.name}", f.column, f.kind, f.value, f.upper, True, -1)
                         for f in features if f.kind != "le" and f.kind != "gt"]
        return features

    def _reference_picks(self, column, series: pd.Series, made: list, guide) -> list[bool]:
        """Which of a column's features ``made`` the reference chose (``reference_features_``): the
        thresholds it split at (moved to the values the column takes: ``_reference_cuts``), the values and
        the missing values it split on, and their negations; every feature of a column it did not see
        (bins, required columns)."""
        if guide is None:
            return []
        chosen = guide.get(column)
        if chosen is None:
            return [True] * len(made)
        cuts = set(self._reference_cuts.get(column, ()))
        return [(feature.kind in ("le", "gt") and feature.value in cuts)
                or (feature.kind == "equals" and ("equals", feature.value) in chosen)
                or (feature.kind in ("binary", "missing") and (feature.kind, None) in chosen)
                for feature in made]

    def _warn_dropped_and_missing(self, columns: list) -> None:
        if self.dropped_columns_:
            if len(self.dropped_columns_) == len(columns):
                raise ValueError(f"every column looks like a row identifier ({self._dropped_text()}): "
                                 "pass identifiers='keep' to use them")
            warn(f"left out as row identifiers: {self._dropped_text()}; pass identifiers='keep' "
                 "(command line: --keep-identifiers) to use them")
        if self.missing_counts_:
            shown = list(self.missing_counts_.items())
            text = ", ".join(f"{c!r} {n:,}" for c, n in shown[:10]) + (f", and {len(shown) - 10:,} more columns"
                                                                          if len(shown) > 10 else "")
            warn(f"missing values, each read as its own value (a 'column=missing' feature; every other "
                 f"feature of the column is false there): {text}; missing='error' refuses them", MissingValuesWarning)

    def _fit_reference(self, read, n_rows: int, y, weights, kept_rows, should_stop, keep_columns: set, time_left=None):
        """Fit the reference ensemble on the columns read, on as many rows as the time left pays for;
        return ``{column: {(kind, value), ...}}`` of the features it chose (``("le", t)`` for a threshold
        t, ``("equals", v)``, ``("binary", None)``, ``("missing", None)``), the columns of ``keep_columns``
        and of bins left out (they keep all); None when it was skipped or stopped before its first fit
        (quantile thresholds: ``reference_`` says why)."""
        from . import guide as reference

        self.reference_classes_, codes = np.unique(np.asarray(y).ravel(), return_inverse=True)
        codes = codes.astype(np.int64).ravel()
        if kept_rows is not None:
            codes = codes[kept_rows]
            weights = None if weights is None else np.asarray(weights, dtype=np.float64).ravel()[kept_rows]
        if codes.shape[0] != n_rows:
            raise ValueError(f"y has {codes.shape[0]} entries for {n_rows} rows")
        if np.unique(codes).size < 2:
            raise ValueError("thresholds='boosted' needs two classes or more in y (rows of positive weight)")
        seen = [(series, self._design_columns(column, series, kind)) for column, series, kind in read
                if kind != "bins" and column not in keep_columns]
        design_columns = [design_column for _, columns in seen for design_column in columns]
        if not design_columns:
            return {}
        # rows equal in every column it reads and in the label are one row to the reference, weighted by
        # their copies: a table copied 100 times is fitted (and sampled) as the table itself
        pool = equal_rows([series for series, _ in seen], codes, reference.DISTINCT_ROWS_SHARE, should_stop)
        if pool is not None:
            first, group = pool
            weights = np.bincount(group, weights=weights, minlength=len(first))
            codes = codes[first]
        n_pool = n_rows if pool is None else len(first)
        size = reference.reference_size(n_pool, len(design_columns), None if time_left is None else time_left())
        if size == 0:
            self.reference_ = reference.skipped_reference(
                f"no boosted reference: {max(0.0, time_left()):.2f} s left could not pay for one on {n_rows:,} rows of "
                f"{len(design_columns):,} columns")
            return None
        sampled = reference.reference_rows(n_pool, size)  # (positions among the distinct rows, if pooled)
        rows = sampled if pool is None else first if sampled is None else first[sampled]
        blocks = []
        for series, columns in seen:  # (a column's forms at a time: the sample, not the table, is kept)
            values = ColumnValues(series)
            blocks += [design_block(values, design_column) if rows is None else design_block(values, design_column)[rows]
                       for design_column in columns]
        design = np.column_stack(blocks)
        del blocks
        sampled_codes = codes if sampled is None else codes[sampled]
        sampled_weights = None if weights is None else (weights if sampled is None else weights[sampled])
        # the leaf floor is a share of the table's rows: on a sample or the distinct rows, that share of
        # them (a floor past the sample's size left a 3.3M-row table's falling list with no threshold)
        min_leaf = int(self.min_category_count)
        if rows is not None:
            min_leaf = math.ceil(min_leaf * rows.size / n_rows)
        model, self.reference_ = reference.fit_reference(design, sampled_codes, sampled_weights, min_leaf,
                                                         should_stop, time_left)
        if pool is not None:
            self.reference_.rows = n_rows if sampled is None else size  # (the distinct rows stand for them all)
        if sampled is not None and size < reference.REFERENCE_ROWS:
            self.reference_.sampled_from = n_rows  # (a sample the budget chose: the certificate names it)
        if model is None:
            return None
        self.reference_model_ = model
        self.reference_columns_ = design_columns
        chosen = {column: set() for column, series, kind in read if kind != "bins" and column not in keep_columns}
        for j, thresholds in self.reference_.splits.items():
            design_column = design_columns[j]
            if design_column.kind == "number":
                chosen[design_column.column].update(("le", t) for t in thresholds)
            else:
                chosen[design_column.column].add((design_column.kind, design_column.value))
        return chosen

    def _design_columns(self, column, series: pd.Series, kind: str) -> list:
        """The reference's input columns for one column (:class:`~.guide.DesignColumn`, their values made by
        :func:`design_block`): its numbers; or one 0/1 column for each of its
        :data:`~.guide.REFERENCE_VALUES` most frequent values seen ``min_category_count`` times (or for
        itself, a 0/1 column); and whether it is missing, where it can be."""
        from .guide import REFERENCE_VALUES, DesignColumn

        if kind == "thresholds":
            out = [DesignColumn(column, "number")]
        elif _is_zero_one(series) and column not in set(self.categorical or ()):
            out = [DesignColumn(column, "binary")]
        else:
            counts = series.value_counts(dropna=True)
            counts = counts[counts >= int(self.min_category_count)].iloc[:REFERENCE_VALUES]
            out = [DesignColumn(column, "equals", _python_value(value)) for value in counts.index]
        if series.hasnans:
            out.append(DesignColumn(column, "missing"))
        return out

    def _dropped_text(self) -> str:
        shown = list(self.dropped_columns_.items())
        more = f"; and {len(shown) - 20:,} more" if len(shown) > 20 else ""
        return "; ".join(f"{c!r} ({reason})" for c, reason in shown[:20]) + more

    def _read_at_fit(self, column: str, series: pd.Series, categorical) -> tuple[pd.Series, int | None]:
        """The column as the fit reads it (text holding numbers or dates read as numbers or days, the
        column noted as such), and a text column's number of distinct values (for the identifier check);
        a column of values no rule compares (lists, dicts, sets) is refused with a message naming it."""
        if column in categorical:
            _check_comparable(column, series)
            return series, None
        try:
            distinct = _distinct_values(series)
        except TypeError:
            _check_comparable(column, series)
            raise
        if distinct is None:
            return series, None
        if _all_numbers(distinct):
            self.numeric_text_columns_.append(column)
            return _coerce_numbers(series), None
        if _all_dates(distinct, series):
            self.date_columns_.append(column)
            return _days(series), None
        return series, len(distinct)

    def _numbers_from_text(self, frame: pd.DataFrame) -> pd.DataFrame:
        """``frame`` with the text columns that hold numbers read as numbers, and one-hot columns in the
        type they had at fit time (a CSV of a few rows may read the text ``"0"`` as the number 0)."""
        converted = {}
        for column, seen in getattr(self, "categories_", {}).items():
            if column not in frame.columns or not seen:
                continue
            values = frame[column]
            if all(isinstance(v, str) for v in seen) and not _is_text(values) and not pd.api.types.is_bool_dtype(values):
                converted[column] = values.map(lambda v: v if pd.isna(v) else _format_number(float(v)))
            elif all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in seen) and _is_text(values):
                converted[column] = _coerce_numbers(values)
        for column in getattr(self, "numeric_text_columns_", []):
            if column in frame.columns and _is_text(frame[column]):
                numbers = numbers_in_text(frame[column])
                if numbers is None:  # new data with text where fit saw numbers: unparseable values are NaN
                    numbers = _coerce_numbers(frame[column])
                converted[column] = numbers
        for column in getattr(self, "date_columns_", []):
            if column in frame.columns and _is_text(frame[column]):
                converted[column] = _days(frame[column])
        return frame.assign(**converted) if converted else frame

    def _check_missing(self, column: str, series: pd.Series) -> int:
        """The column's number of missing values (an error with ``missing="error"``); infinite values
        are an error."""
        if isinstance(series.dtype, np.dtype) and series.dtype.kind in "iub":  # numpy's hold neither NaN nor inf
            return 0
        n_missing = int(series.isna().sum())
        if n_missing and self.missing == "error":
            raise ValueError(
                f"column {column!r} has {n_missing} missing value(s) (NaN/None); drop or impute them, "
                "or pass missing='category' (command line: --missing category) to treat missing as its own category"
            )
        check_no_infinite(column, series)
        return n_missing

    def _categorical_features(self, column: str, series: pd.Series, group: int, categorical: bool) -> list[Feature]:
        if _is_zero_one(series) and not categorical:
            # named by its column ("smoker"), but "7=1" for a headerless file's column 7: a rule "if (7)"
            # reads as the number
            name = value_name(column, 1) if looks_numeric(str(column)) else str(column)
            return [Feature(name, column, "binary", group=-1)]
        counts = series.value_counts(dropna=True)
        self.categories_[column] = sorted((_python_value(v) for v in counts.index), key=_sort_key)
        frequent = counts[counts >= int(self.min_category_count)]
        values = sorted((_python_value(v) for v in frequent.index), key=_sort_key)
        return [Feature(value_name(column, v), column, "equals", v, group=group) for v in values]

    def _bin_features(self, column: str, series: pd.Series, edges, group: int) -> list[Feature]:
        if not pd.api.types.is_numeric_dtype(series):
            raise ValueError(f"bins given for column {column!r}, which is not numeric ({series.dtype})")
        edges = _check_edges(column, edges)
        values = series.to_numpy(dtype="float64", na_value=np.nan)
        values = values[~np.isnan(values)]
        labels = interval_labels(edges, _is_integer_valued(values), values.min() if values.size else None)
        bounds = [-np.inf] + edges + [np.inf]
        features = []
        for label, lo, hi in zip(labels, bounds[:-1], bounds[1:]):
            if np.any((values >= lo) & (values < hi)):
                features.append(Feature(value_name(column, label), column, "interval", lo, hi, group=group))
        return features

    _weights = None  # the fit's positive sample weights, while it runs

    def _threshold_features(self, column: str, series: pd.Series, chosen=None) -> list[Feature]:
        """A numeric column's threshold features: at quantiles, at the reference's ``chosen`` thresholds
        (not None: the reference saw the column), or at both (``thresholds="both"``)."""
        values = series.to_numpy(dtype="float64", na_value=np.nan)
        present = ~np.isnan(values)
        values = values[present]
        if values.size == 0:  # every value missing: nothing to compare (the missing feature says it all)
            return []
        thresholds = []
        if chosen is None or self.thresholds == "both":
            weights = None if self._weights is None else self._weights[present]
            thresholds.append(self._quantile_thresholds(values, weights))
        if chosen is not None:
            thresholds.append(self._guided_thresholds(column, values, chosen))
        return self._both_ways(column, np.unique(np.concatenate(thresholds)))

    def _quantile_thresholds(self, values: np.ndarray, weights) -> np.ndarray:
        """``n_thresholds`` (weighted) lower quantiles of the present values, below the largest."""
        quantiles = np.arange(1, int(self.n_thresholds) + 1) / (int(self.n_thresholds) + 1)
        if weights is None:
            thresholds = np.unique(np.quantile(values, quantiles, method="lower"))
        else:
            thresholds = np.unique(weighted_lower_quantiles(values, weights, quantiles))
        return thresholds[thresholds < values.max()]

    def _guided_thresholds(self, column, values: np.ndarray, thresholds) -> np.ndarray:
        """The reference's thresholds of a column's present values, each moved down to the largest
        training value at or below it (the same split of the training rows, read as a value the column
        takes: ``age<=25`` rather than ``age<=25.5``), kept in ``_reference_cuts`` (the ladder's first
        rung: ``reference_features_``); a column of at most ``n_thresholds + 1`` distinct values keeps a
        threshold between every two."""
        few = int(self.n_thresholds) + 1
        # a spread sample with more distinct values than that answers for the column without hashing all of
        # it (every column of a 1,000,000-row table hashed took 0.8 s of a 2 s budget)
        if pd.unique(values[::max(1, values.size // DISTINCT_SAMPLE)]).size <= few:
            distinct = pd.unique(values)  # hashed: linear in the rows, no sort of the whole column
            if distinct.size <= few:
                # quantiles would cut between every two values of such a column: no near-copies to choose
                # among, and codes that matter only together (monks-1's a1 = a2) have no split of their own
                self._reference_cuts[column] = _snapped_below(distinct, thresholds)  # (the same cuts: same values)
                return np.sort(distinct)[:-1].astype(np.float64)
        self._reference_cuts[column] = _snapped_below(values, thresholds)
        return self._reference_cuts[column]

    def _both_ways(self, column: str, thresholds) -> list[Feature]:
        """``column<=t`` and ``column>t`` for each increasing threshold, named with the digits that tell
        them apart."""
        dates = column in getattr(self, "date_columns_", ())
        texts = [_format_date(t) if dates else _format_number(t) for t in thresholds]
        if not dates and len(set(texts)) < len(texts):  # thresholds closer than 6 significant digits
            texts = [repr(float(t)) for t in thresholds]
        features = []
        for t, text in zip(thresholds, texts):
            t = float(t)
            features.append(Feature(f"{column}<={text}", column, "le", t))
            features.append(Feature(f"{column}>{text}", column, "gt", t))
        return features

    # -- applying ----------------------------------------------------------------------------------
    def _check_columns(self, frame: pd.DataFrame) -> None:
        seen = set(self.columns_)
        missing = [c for c in self.columns_ if c not in frame.columns]
        extra = [c for c in frame.columns if c not in seen]
        if missing or extra:
            parts = []
            if missing:
                parts.append(f"missing columns seen at fit time: {_listed(missing)}")
            if extra:
                parts.append(f"unknown columns not seen at fit time: {_listed(extra)}")
            raise ValueError("; ".join(parts))

    def reference_score(self, X, y, sample_weight=None) -> float:
        """Accuracy of the reference ensemble (``thresholds="boosted"``) on ``X`` and ``y`` (labels as
        given to ``fit``)."""
        return float(np.average(self.reference_predict(X) == np.asarray(y).ravel(), weights=sample_weight))

    def reference_predict(self, X) -> np.ndarray:
        """The reference ensemble's prediction of each row of ``X`` (labels as given to ``fit``)."""
        model = getattr(self, "reference_model_", None)
        if model is None:
            raise ValueError("this binarizer has no reference ensemble (thresholds='quantile', or read from a "
                             "model file, which does not keep it)")
        frame = as_frame(X, columns=getattr(self, "columns_", None))
        self._check_columns(frame)
        frame = self._numbers_from_text(frame[list(dict.fromkeys(c.column for c in self.reference_columns_))])
        forms = {}
        blocks = [design_block(forms.setdefault(design_column.column, ColumnValues(frame[design_column.column])),
                               design_column) for design_column in self.reference_columns_]
        return self.reference_classes_[model.predict(np.column_stack(blocks))]

    def transform(self, X, features=None, packed: bool = False) -> np.ndarray:
        """Boolean matrix ``(n_samples, n_features)``, columns in the order of ``feature_names_``; warns
        when a one-hot column holds values not seen at fit time (none of its features holds for them).
        ``features``: only these feature names, in this order (a model evaluates only what its rules use;
        every column must be there, and only the columns of these features are read). ``packed``: the
        features packed instead, one row of uint64 words a feature (:mod:`.bitset`), with no boolean table
        (700,000 rows x 748 features: 65 MB instead of 524)."""
        frame = as_frame(X, columns=getattr(self, "columns_", None))
        self._check_columns(frame)
        self._check_every_column(frame)
        chosen = self.features_ if features is None else self._features_named(features)
        read = list(dict.fromkeys(feature.column for feature in chosen))  # a wide table's other columns: untouched
        frame = self._numbers_from_text(frame[read])
        for column in read:  # (the others were checked as they are; text read as numbers may say "inf" or "?")
            if column in getattr(self, "numeric_text_columns_", ()) or column in getattr(self, "date_columns_", ()):
                self._check_missing(column, frame[column])
        self._warn_unseen(frame)
        if packed:
            from . import bitset  # (numba's import, for the models that search)

            out = np.empty((len(chosen), bitset.n_words(frame.shape[0])), dtype=np.uint64)
        else:
            out = np.empty((frame.shape[0], len(chosen)), dtype=bool, order="F")  # written a feature at a time
        by_column: dict = {}
        for j, feature in enumerate(chosen):
            by_column.setdefault(feature.column, []).append(j)
        for column, positions in by_column.items():  # a column's forms are dropped once its features are done
            values = ColumnValues(frame[column])
            for j in positions:
                if packed:
                    out[j] = bitset.pack(chosen[j].evaluate(values))
                else:
                    out[:, j] = chosen[j].evaluate(values)
        return out

    def _check_every_column(self, frame: pd.DataFrame) -> None:
        """Missing (with ``missing="error"``) and infinite values in any column the binarizer reads, also
        where the model does not look (scikit-learn's convention: predict refuses them): whole-frame
        passes over slices of at most :data:`CHECK_CELLS` cells, not one pass a column."""
        dropped = getattr(self, "dropped_columns_", {})
        # numpy's integers and booleans hold neither NaN nor infinity: only the other columns are read
        can_hold = [j for j, dtype in enumerate(frame.dtypes) if not (isinstance(dtype, np.dtype) and dtype.kind in "iub")]
        step = max(1, CHECK_CELLS // max(1, frame.shape[0]))
        for start in range(0, len(can_hold), step):
            part = frame.iloc[:, can_hold[start:start + step]]
            if part.shape[1] > 64:  # a CSV's frame holds a block a column: one copy makes one a type
                part = part.copy()
            found = []
            if self.missing == "error":
                holes = part.isna().any()
                found += [(c, self._check_missing) for c in holes.index[holes.to_numpy(dtype=bool)]]
            numeric = part.select_dtypes("number")
            if numeric.shape[1]:
                infinite = numeric.isin([np.inf, -np.inf]).any()
                found += [(c, check_no_infinite) for c in infinite.index[infinite.to_numpy(dtype=bool)]]
            for column, check in found:
                if column not in dropped:
                    check(column, frame[column])

    def _features_named(self, names) -> list:
        by_name = {feature.name: feature for feature in self.features_}
        unknown = [name for name in names if name not in by_name]
        if unknown:
            raise ValueError(f"features {unknown} are not made by this binarizer")
        return [by_name[name] for name in names]

    def _warn_unseen(self, frame: pd.DataFrame) -> None:
        unseen = {}
        for column, seen in getattr(self, "categories_", {}).items():
            if column not in frame.columns:
                continue
            values = frame[column]
            new = values.notna() & ~values.isin(seen)
            if new.any():
                unseen[column] = (int(new.sum()), values[new].iloc[0])
        if unseen:
            shown = "; ".join(f"{c!r}: {n} row(s), e.g. {v!r}" for c, (n, v) in list(unseen.items())[:5])
            warn(f"values not seen at fit time (no category feature holds for them): {shown}")

    def transform_frame(self, X, features=None) -> pd.DataFrame:
        """Like :meth:`transform`, as a DataFrame whose columns are the feature names."""
        frame = as_frame(X, columns=getattr(self, "columns_", None))
        names = self.feature_names_ if features is None else list(features)
        return pd.DataFrame(self.transform(frame, None if features is None else names), columns=names,
                            index=frame.index)

    def get_feature_names_out(self, input_features=None) -> np.ndarray:
        return np.asarray(self.feature_names_, dtype=object)

    @property
    def groups_(self) -> np.ndarray:
        """Exclusivity group of each feature (-1: combines freely), for the antecedent miner."""
        return np.asarray([f.group for f in self.features_], dtype=np.int64)

    @property
    def chains_(self) -> np.ndarray:
        """Nesting chain of each feature (-1: none): the thresholds of one column in one direction
        (``x <= 3``, ``x <= 5``; or all ``x > t``, or their negations) are nested, so a conjunction of two
        of them equals one of them. The rule-set pricing uses it to skip such conjunctions."""
        chains: dict = {}
        return np.asarray([chains.setdefault((f.column, f.kind, f.negated), len(chains)) if f.kind in ("le", "gt")
                           else -1 for f in self.features_], dtype=np.int64)

    # -- persistence -------------------------------------------------------------------------------
    def to_dict(self) -> dict:
        return {
            "params": {
                "categorical": list(self.categorical) if self.categorical is not None else None,
                "bins": {k: list(v) for k, v in self.bins.items()} if self.bins is not None else None,
                "n_thresholds": int(self.n_thresholds),
                "negations": bool(self.negations),
                "missing": self.missing,
                "identifiers": self.identifiers,
                "min_category_count": int(self.min_category_count),
                "thresholds": self.thresholds,
            },
            "reference": None if getattr(self, "reference_", None) is None else self.reference_.to_dict(),
            "missing_counts": {c: int(n) for c, n in getattr(self, "missing_counts_", {}).items()},
            "columns": list(self.columns_),
            "features": [_feature_to_dict(f) for f in self.features_],
            "dropped_columns": dict(self.dropped_columns_),
            "numeric_text_columns": list(self.numeric_text_columns_),
            "date_columns": list(self.date_columns_),
            "categories": {c: [_plain_value(v) for v in values] for c, values in self.categories_.items()},
        }

    @classmethod
    def from_dict(cls, data: dict) -> "Binarizer":
        binarizer = cls(**data["params"])
        binarizer.columns_ = list(data["columns"])
        binarizer.features_ = [Feature(**f) for f in data["features"]]
        binarizer.feature_names_ = [f.name for f in binarizer.features_]
        binarizer.n_features_in_ = len(binarizer.columns_)
        binarizer.feature_names_in_ = np.asarray(binarizer.columns_, dtype=object)
        binarizer.dropped_columns_ = dict(data.get("dropped_columns", {}))
        binarizer.unread_columns_ = [c for c, reason in binarizer.dropped_columns_.items() if reason == UNREAD_REASON]
        binarizer.numeric_text_columns_ = list(data.get("numeric_text_columns", []))
        binarizer.date_columns_ = list(data.get("date_columns", []))
        binarizer.categories_ = {c: list(v) for c, v in data.get("categories", {}).items()}
        binarizer.missing_counts_ = dict(data.get("missing_counts") or {})
        binarizer.reference_ = _reference_from(data.get("reference"))
        return binarizer


FEATURE_KINDS = ("equals", "binary", "le", "gt", "interval", "missing")


class MissingValuesWarning(UserWarning):
    """Missing values were read as their own value (``missing="category"``)."""
#: cells checked for missing and infinite values in one pass at predict time (a copy of that many at most)
CHECK_CELLS = 1 << 22


def check_loaded_features(binarizer: "Binarizer") -> None:
    """A binarizer read from a file: every feature of a known kind, on a column it knows, with a number
    where it compares (a threshold of text would compare text with numbers at predict time)."""
    columns = set(binarizer.columns_)
    if not all(isinstance(c, str) for c in columns):
        raise ValueError("the binarizer's columns must be names (text)")
    for feature in binarizer.features_:
        where = f"feature {feature.name!r}"[:100]
        if not isinstance(feature.name, str) or feature.kind not in FEATURE_KINDS or not isinstance(feature.negated, bool):
            raise ValueError(f"{where} has kind {feature.kind!r}; kinds are {FEATURE_KINDS}"[:200])
        if feature.column not in columns:
            raise ValueError(f"{where} reads column {feature.column!r}, which the binarizer does not list"[:200])
        numbers = {"le": ("value",), "gt": ("value",), "interval": ("value", "upper")}.get(feature.kind, ())
        for key in numbers:
            value = getattr(feature, key)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value) or (
                    feature.kind != "interval" and math.isinf(value)):
                raise ValueError(f"{where} compares with {value!r}, which is not a number"[:200])
        if feature.kind == "equals" and not (isinstance(feature.value, (str, bool, int)) or (
                isinstance(feature.value, float) and math.isfinite(feature.value))):
            raise ValueError(f"{where} compares with {feature.value!r}, which is not a plain value"[:200])
    for column, values in binarizer.categories_.items():
        if not all(isinstance(v, (str, bool, int, float)) for v in values):
            raise ValueError(f"the categories of column {column!r} must be plain values"[:200])


def _snapped_below(values: np.ndarray, thresholds) -> np.ndarray:
    """Each threshold moved down to the largest of ``values`` at or below it, below the largest value,
    sorted and distinct."""
    snapped = set()
    for t in thresholds:
        below = values[values <= t]
        if below.size:
            snapped.add(float(below.max()))
    top = values.max()
    return np.array(sorted(t for t in snapped if t < top), dtype=np.float64)


def _listed(columns: list, shown: int = 20) -> str:
    """The first columns of a list that may be very long, and how many more."""
    return repr(columns[:shown])[:-1] + (f", ... {len(columns) - shown:,} more]" if len(columns) > shown else "]")


def _reference_from(saved):
    """The reference's description from a model file (its splits are in the features)."""
    if saved is None:
        return None
    from .guide import Reference

    keys = {"trees", "depth", "rows", "train_accuracy", "stopped", "sampled_from", "skipped"}
    if not isinstance(saved, dict) or not set(saved) <= keys:
        raise ValueError("the binarizer's reference must be a JSON object of trees, depth, rows, train_accuracy")
    try:
        return Reference(int(saved["trees"]), int(saved["depth"]), int(saved["rows"]),
                         float(saved["train_accuracy"]), {}, bool(saved.get("stopped", False)),
                         int(saved.get("sampled_from", 0)), str(saved.get("skipped", "")))
    except (KeyError, TypeError, ValueError):
        raise ValueError("the binarizer's reference must give trees, depth, rows and train_accuracy as numbers") from None


def _coerce_numbers(series: pd.Series) -> pd.Series:
    """Numbers of a text column; markers of missing values and anything else that is no number: NaN."""
    text = series.astype("string").str.strip()
    return pd.to_numeric(text, errors="coerce").astype("float64").rename(series.name)


def _plain_value(value):
    value = _python_value(value)
    return value if not (isinstance(value, float) and math.isinf(value)) else str(value)


def _feature_to_dict(feature: Feature) -> dict:
    data = asdict(feature)
    for key in ("value", "upper"):
        value = _python_value(data[key])
        if isinstance(value, float) and math.isinf(value):
            value = "inf" if value > 0 else "-inf"
        data[key] = value
    return data


def weighted_lower_quantiles(values, weights, quantiles) -> np.ndarray:
    """``np.quantile(repeated, quantiles, method="lower")`` of the values each repeated by its weight,
    without repeating them: the value at position floor((W - 1) q) of the weighted sorted values, W the
    total weight (for integer weights exactly the quantiles of the repeated rows)."""
    order = np.argsort(values, kind="stable")
    cumulative = np.cumsum(weights[order])
    positions = np.floor((cumulative[-1] - 1.0) * np.asarray(quantiles))
    first_past = np.searchsorted(cumulative, positions, side="right")
    return values[order][np.minimum(first_past, len(values) - 1)]
