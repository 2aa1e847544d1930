"""The rows a rule set's master and pricing read: distinct rows weighted by their multiplicity, the features
packed a row of words each, the beam's sample of rows."""

from __future__ import annotations

import numpy as np

from ..data import bitset
from ..data.mine import row_representatives

#: each byte with its bits in reverse order
_BITS_REVERSED = np.packbits(np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1, bitorder="little"),
                             axis=1).ravel()


def _packed_columns(features, n_samples: int, packed: bool) -> np.ndarray:
    """The features as packed columns (one row of words a feature), checked against the samples."""
    if not packed:
        features = np.asarray(features, dtype=bool)
        if features.ndim != 2 or len(features) != n_samples:
            raise ValueError(f"features must be a (samples x features) table of {n_samples} rows, "
                             f"got shape {features.shape}")
        return bitset.pack_columns(features)
    features = np.asarray(features)
    if features.dtype != np.uint64 or features.ndim != 2 or features.shape[1] != bitset.n_words(n_samples):
        raise ValueError(f"packed features must be uint64 words, {bitset.n_words(n_samples)} a feature for "
                         f"{n_samples} samples, got {features.dtype} of shape {features.shape}")
    return features


def distinct_rows(columns, y, sample_weight=None, feature_groups: bool = False, packed: bool = False):
    """The rows that differ (in features or label) and their total weights, dropping rows of weight 0.

    Identical rows cost the same in every rule set, so the problem on distinct rows weighted by their
    multiplicity is the same problem, smaller (categorical tables repeat many rows), and the same
    whether the data came repeated or weighted. ``columns``: the features packed, one row of words a
    feature (:func:`~optrules.data.bitset.pack_columns`), and so are those returned. Rows are ordered by
    content (features, then label), not by input order, so a shuffled table gives the same problem too.
    Without sample weights and without repeated rows the data come back as they were (weights None: the
    unweighted counting is faster). With ``feature_groups``, also each row's group of rows alike in
    features (numbered in content order; when every row differs, each its own), which
    :func:`conflict_bound` needs: the rows are hashed once (twice took 1.5 s more on 700,000 rows). With
    ``packed``, also the rows returned packed, one row of words a sample (the pricing bits are made from
    them)."""
    y = np.asarray(y)
    n_features = len(columns)
    words = bitset.transpose(columns, len(y))  # the rows, packed
    weights = None if sample_weight is None else np.asarray(sample_weight, np.float64)
    if weights is not None and not (weights > 0).all():
        words, y, weights = words[weights > 0], y[weights > 0], weights[weights > 0]
        columns = bitset.transpose(words, n_features)
    first, groups = _distinct(words, ordered=False)
    if weights is None and len(first) == len(y):  # every row differs (a table of measurements): as it came
        rows = columns, y, None
    else:
        groups = _in_content_order(words, first, groups)[1]
        # rows alike in features and label: within a group of rows alike in features, by label (content order)
        _, first, inverse = np.unique(2 * groups + y.astype(np.int64), return_index=True, return_inverse=True)
        if weights is None and len(first) == len(y):
            rows = columns, y, None
        else:
            groups, words = groups[first], words[first]
            rows = (bitset.transpose(words, n_features), y[first],
                    np.bincount(inverse, weights=weights, minlength=len(first)))
    return rows + ((groups,) if feature_groups else ()) + ((words,) if packed else ())


def _distinct(words, ordered: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """``(first, inverse)`` of the packed rows ``words`` as ``np.unique(rows, axis=0, return_index=True,
    return_inverse=True)`` gives them for the rows unpacked (distinct rows in content order), by hashing:
    numpy's row-wise unique took 2.3 s on bank marketing replicated 5 times (158k rows x 177 columns), a
    stretch Ctrl-C waited on. ``ordered=False``: the distinct rows in input order instead (no sort: 0.4 s
    of 1.2 on 700,000 rows)."""
    representative = row_representatives(words, np.zeros((len(words), 0), np.uint64), np.arange(len(words)))
    first = np.flatnonzero(representative == np.arange(len(words)))
    inverse = np.searchsorted(first, representative)
    return _in_content_order(words, first, inverse) if ordered else (first, inverse)


def _in_content_order(words, first, inverse) -> tuple[np.ndarray, np.ndarray]:
    """``(first, inverse)`` of distinct rows in input order (``words``: the rows packed) renumbered in
    content order: by the rows as np.packbits packs them (first feature in the first byte's highest bit),
    compared as byte strings (0.24 s on 700,000 rows of 80 bytes, where a sort key a byte took 0.5 s)."""
    as_bytes = _BITS_REVERSED[words[first].view(np.uint8)]
    order = np.argsort(as_bytes.view(f"V{as_bytes.shape[1]}").ravel(), kind="stable") if len(first) else first
    rank = np.empty(len(first), np.int64)
    rank[order] = np.arange(len(first))
    return first[order], rank[inverse]


def _pricing_sample(y, max_samples: int, rng):
    """A stratified random subset of samples for pricing when the data are large, else None."""
    if max_samples is None or len(y) <= max_samples:
        return None
    share = max_samples / len(y)
    picked = []
    for label in (True, False):
        members = np.flatnonzero(y == label)
        picked.append(rng.choice(members, size=max(1, int(round(share * len(members)))), replace=False))
    return np.sort(np.concatenate(picked))
