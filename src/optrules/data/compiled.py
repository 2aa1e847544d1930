"""The data layer's compiled kernels, made ready (compiled, or loaded from numba's cache) on a tiny table.

Mining and grouping call numba kernels that a first fit after install compiles for ~4-5 s before its
search begins (COMPAS: mining ~2-3 s, grouping ~2 s), where no budget can stop them: a first fit given
2 s took 3.7 s. A fit runs :func:`compile_data_kernels` in a thread within its budget first
(:func:`optrules.bnb.compiled_in_time`) and, when the budget ends before it, returns the model of no
rule with lower bound 0 rather than waiting (``RuleModelEstimator._mine``). Later fits load the
kernels from the cache in a fraction of a second, and on this tiny table they run in microseconds.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from . import bitset
from .groups import group_samples, signature_groups
from .mine import mine_antecedents


def tiny_table() -> tuple[np.ndarray, np.ndarray]:
    """70 samples x 5 features with a repeated feature (mining compares equal capture vectors) and
    repeated rows (grouping compares equal signatures), and labels of both classes."""
    rng = np.random.default_rng(0)
    features = rng.random((70, 4)) < 0.5
    features = np.concatenate([features, features[:, :1]], axis=1)
    features[35:] = features[:35]
    y = (features[:, 0] ^ (rng.random(70) < 0.2)).astype(np.int64)
    return features, y


def compile_data_kernels(max_card: int = 2) -> None:
    """Compile (once a process) the kernels a fit mining up to ``max_card`` features calls: see
    :func:`_mine_and_group_tiny_table`."""
    _mine_and_group_tiny_table(min(max(int(max_card), 1), 3))


@cache  # (kernels compiled once stay in memory: later fits in the process skip the tiny table)
def _mine_and_group_tiny_table(max_card: int) -> None:
    """Mine (conjunctions of up to ``max_card`` features, with class supports, a feature group and an
    unbounded feature) and group a tiny table as fits do: every data-layer kernel a fit mining up to
    ``max_card`` calls is then compiled for the argument types it passes. (From the third level on the
    levels' kernels take sliced arrays, a specialization of their own: a fit of pairs does not compile it.)"""
    features, y = tiny_table()
    n, f = features.shape
    packed = bitset.pack(features.T)
    names = [f"x{j}" for j in range(f)]
    groups = np.array([-1, 0, 0, -1, -1])
    for unbounded in (None, np.arange(f) == 3):
        antecedents = mine_antecedents(packed, names, groups, max_card=max_card, min_support=0.05,
                                       y=y, min_class_support=0.1, unbounded=unbounded, n_samples=n)
    signatures = signature_groups(antecedents.bits, n)
    group_samples(antecedents.bits, y, signatures=signatures)
    group_samples(antecedents.bits, y, class_weights=np.eye(2)[y])  # (weighted or many classes: a weight a sample)
