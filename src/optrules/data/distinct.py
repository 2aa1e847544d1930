"""Items grouped by equal content through 64-bit hashes, without sorting copies of the contents.

Mining drops antecedents whose capture vectors repeat an earlier one; the searches group samples whose
antecedent signatures are equal. Both hash each item, take the first item of each hash as its
representative, and check every item against its representative in one compiled pass; the rare items
whose hash met a different content are regrouped by their bytes.
"""

from __future__ import annotations

import numpy as np
from numba import njit


def representatives(hashes: np.ndarray, differs, content) -> np.ndarray:
    """Each item's first item (in index order) of equal content.

    ``hashes``: one uint64 per item, equal for equal contents; ``differs(items, candidates)``: a boolean
    mask of the ``items`` whose content differs from their ``candidates``'; ``content(i)``: item ``i``'s
    bytes. Only the items whose hash an earlier item had are compared (none when every hash is new: a
    raw table's 3,000 rows over 218,284 antecedents were compared bit by bit for 1.5 s, unstoppable)."""
    by_hash = np.argsort(hashes, kind="stable")  # equal hashes in index order
    representative = _first_of_equal_hashes(hashes, by_hash)
    items = np.flatnonzero(representative != np.arange(len(hashes)))
    wrong = items[differs(items, representative[items])] if len(items) else items
    if len(wrong):  # some hash met two contents: regroup its items by their bytes
        for h in np.unique(hashes[wrong]):
            first: dict[bytes, int] = {}
            for i in np.flatnonzero(hashes == h):
                representative[i] = first.setdefault(content(int(i)), int(i))
    return representative


@njit(cache=True)
def _first_of_equal_hashes(hashes, by_hash):
    representative = np.empty(len(hashes), np.int64)
    start = 0
    for k in range(len(by_hash)):
        if hashes[by_hash[k]] != hashes[by_hash[start]]:
            start = k
        representative[by_hash[k]] = by_hash[start]
    return representative


def equal_rows(columns, labels: np.ndarray, most_distinct: float = 1.0, should_stop=None):
    """Rows equal in every one of ``columns`` (pandas Series of one length) and in ``labels``:
    ``(first, group)``, the first row of each set of equal rows (increasing) and each row's index into
    ``first``; None when more than ``most_distinct`` of the rows are distinct (known as soon as the
    columns read so far tell so) or when ``should_stop()`` says stop. Exact, with no hash to trust:
    each column's values are numbered (``pandas.factorize``, missing values one number), and a row's
    key, folded column by column, is renumbered after each, so it stays below the number of rows.
    Text columns mixing types (1, 1.0, True and "1" are equal to Python but not to the binarizer) are
    numbered by each value's type and representation."""
    import pandas as pd

    key, found = pd.factorize(np.asarray(labels, dtype=np.int64))  # (numbered by first appearance, as below)
    limit = most_distinct * len(key)
    for series in columns:
        if should_stop is not None and should_stop():
            return None
        values = series
        if series.dtype == object and pd.api.types.infer_dtype(series, skipna=True) not in ("string", "empty"):
            values = series.map(lambda v: None if v is None or v != v else f"{type(v).__name__}:{v!r}")
        codes, uniques = pd.factorize(values, use_na_sentinel=True)
        key, found = pd.factorize(key * (len(uniques) + 1) + (codes.astype(np.int64) + 1))
        if len(found) > limit:
            return None
    first = np.empty(len(found), np.int64)
    first[key[::-1]] = np.arange(len(key) - 1, -1, -1)  # (the last write of each key: its first row)
    return first, key.astype(np.int64)
