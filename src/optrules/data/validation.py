"""Input checks shared by every stage: clear errors that name the offending column or value."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from .tables import headerless_names
from .weights import MAX_TOTAL_WEIGHT, check_sample_weight  # noqa: F401  (their home before weights.py)


def as_frame(X, columns: Sequence[str] | None = None) -> pd.DataFrame:
    """A DataFrame view of ``X``; arrays get the given column names (or ``x0, x1, ...``)."""
    if hasattr(X, "toarray") and not isinstance(X, pd.DataFrame):
        raise TypeError("sparse input is not supported: pass a dense array or a DataFrame (X.toarray())")
    if isinstance(X, pd.DataFrame):
        frame = X
        if any(pd.api.types.is_complex_dtype(dtype) for dtype in set(frame.dtypes)):  # (a wide table has few)
            raise ValueError("Complex data not supported: columns must be numbers, booleans or categories")
    else:
        array = np.asarray(X)
        if array.ndim != 2:
            raise ValueError(
                f"expected 2-D data (samples x columns), got an array of shape {array.shape}. Reshape your data: "
                "X.reshape(-1, 1) if it has a single feature, X.reshape(1, -1) if it is a single sample"
            )
        if np.iscomplexobj(array):
            raise ValueError("Complex data not supported: columns must be numbers, booleans or categories")
        if columns is None or len(columns) != array.shape[1]:
            columns = headerless_names(array.shape[1])
        frame = pd.DataFrame(array, columns=list(columns))
    if frame.columns.inferred_type not in ("string", "empty"):  # (not a loop over a wide table's names)
        frame = frame.rename(columns=str)
    if frame.columns.duplicated().any():
        raise ValueError(f"duplicate column names: {list(frame.columns[frame.columns.duplicated()])}")
    return frame


def class_named(text: str, y):
    """The class of ``y`` whose text is ``text``: labels read from a file or a form may be numbers
    while the user types text. ValueError, listing the classes, when none matches."""
    labels = pd.Series(np.asarray(y, dtype=object)).dropna().unique()
    for label in labels:
        if str(label) == str(text):
            return label.item() if isinstance(label, np.generic) else label
    raise ValueError(f"{text!r} is not one of the classes {sorted(map(str, labels))}")


def check_no_infinite(column: str, series: pd.Series) -> None:
    if pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series):
        values = series.to_numpy(dtype="float64", na_value=np.nan)
        n_inf = int(np.isinf(values).sum())
        if n_inf:
            raise ValueError(f"column {column!r} has {n_inf} infinite value(s); replace or drop them")


def check_binary_target(y, n_samples: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Validate a binary target; return ``(y01, classes)`` with ``classes[y01]`` the original labels.

    The positive class is the larger of the two sorted labels (1 for 0/1, True for booleans, 'yes'
    for 'no'/'yes').
    """
    codes, classes = check_target(y, n_samples, binary=True)
    return codes.astype(np.int8), classes


def check_target(y, n_samples: int | None = None, binary: bool = False,
                 why_binary: str = "this model learns two classes") -> tuple[np.ndarray, np.ndarray]:
    """Validate a classification target; return ``(codes, classes)``: sorted distinct labels and each
    sample's index into them. At least two classes; exactly two when ``binary`` (``why_binary`` says why
    in the error)."""
    if y is None:
        raise ValueError("requires y to be passed, but the target y is None")
    if not isinstance(y, pd.Series):
        from sklearn.utils.validation import column_or_1d

        y = column_or_1d(np.asarray(y, dtype=object) if _mixed(y) else y, warn=True)  # warns on a column vector
    labels = pd.Series(y if not isinstance(y, pd.Series) else y.to_numpy())
    if n_samples is not None and len(labels) != n_samples:
        raise ValueError(f"X has {n_samples} samples but y has {len(labels)}: lengths must match")
    if len(labels) == 0:
        raise ValueError("the target is empty")
    if labels.isna().any():
        raise ValueError(f"the target has {int(labels.isna().sum())} missing value(s)")
    if pd.api.types.is_numeric_dtype(labels) and not pd.api.types.is_bool_dtype(labels):
        if np.isinf(labels.to_numpy(dtype="float64")).any():
            raise ValueError("the target has infinite values")
    if pd.api.types.is_float_dtype(labels):
        from sklearn.utils.multiclass import check_classification_targets

        check_classification_targets(labels.to_numpy())  # "Unknown label type: continuous" for real numbers
    classes = np.asarray(sorted(pd.unique(labels), key=lambda v: (str(type(v)), v)))
    if len(classes) == 1:
        raise ValueError(f"the target has one class only ({classes[0]!r}): a single class cannot be learnt, "
                         "two classes are needed")
    if binary and len(classes) > 2:
        shown = ", ".join(repr(_plain_label(c)) for c in classes[:6]) + (" ..." if len(classes) > 6 else "")
        raise ValueError(f"Only binary classification is supported: {why_binary}, and the target has "
                         f"{len(classes)} classes ({shown}). Learn a rule list (RuleListClassifier, --model "
                         f"rulelist), which predicts every class, or make the target one class against the "
                         f"rest (y == {_plain_label(classes[0])!r}, say)")
    codes = np.searchsorted(classes, labels.to_numpy()) if _sortable(classes) else _codes(labels, classes)
    return codes.astype(np.int64), classes


def _mixed(y) -> bool:
    """A list mixing strings and numbers (numpy would turn the numbers into strings)."""
    return isinstance(y, (list, tuple)) and len({type(v) for v in y}) > 1


def _sortable(classes) -> bool:
    return len({type(c) for c in classes}) == 1


def _codes(labels: pd.Series, classes) -> np.ndarray:
    index = {c: i for i, c in enumerate(classes)}
    return np.array([index[v] for v in labels.to_numpy()], dtype=np.int64)


def _plain_label(label):
    """A numpy scalar as the Python value it holds (errors show 1, not np.int64(1))."""
    return label.item() if isinstance(label, np.generic) else label



