"""Sample weights' checks, with numpy alone: the search cores (``optrules.corels.search``,
``optrules.frl.search``) check weights without loading pandas (docs/architecture.md)."""

from __future__ import annotations

import numpy as np

#: the largest total sample weight (doubles count whole numbers exactly up to 2**53, about 9e15)
MAX_TOTAL_WEIGHT = 1e15


def check_sample_weight(sample_weight, n_samples: int, y=None) -> np.ndarray | None:
    """Finite, non-negative weights, one per sample, not all zero (or None); with the labels ``y``, on
    two classes at least (a fit on one weighted class learns nothing, and a rule set's LP has no row)."""
    if sample_weight is None:
        return None
    weights = np.asarray(sample_weight, dtype=np.float64).ravel()
    if weights.shape[0] != n_samples:
        raise ValueError(f"sample_weight has {weights.shape[0]} entries for {n_samples} samples")
    if not np.all(np.isfinite(weights)):
        raise ValueError("sample_weight has NaN or infinite entries")
    if (weights < 0).any():
        raise ValueError("sample_weight must be non-negative")
    total = float(weights.sum())
    if total <= 0:
        raise ValueError("sample_weight sums to zero: no sample counts")
    if not total <= MAX_TOTAL_WEIGHT:  # (a sum of huge weights overflows to inf, and sums of them lose the units)
        raise ValueError(f"sample_weight sums to {total:.3g}, more than {MAX_TOTAL_WEIGHT:.0e}: divide the weights by a "
                         "common factor (only their ratios and the penalties' scale matter)")
    if y is not None and np.unique(np.asarray(y)[weights > 0]).shape[0] < 2:
        raise ValueError("every sample of positive weight has the same label: two classes are needed")
    return weights
