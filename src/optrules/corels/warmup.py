"""The rule lists' part of ``optrules compile`` (:mod:`optrules.warmup`): small fits that take every
argument-type combination of the search kernels a real fit takes."""

from __future__ import annotations

import numpy as np

from ..warmup import random_table, threads_from_the_first_slice


def first_session() -> None:
    """What ``make run`` and the README's first lines take: the default fit of a bundled table (the data
    layer's kernels on mixed columns, the serial search) and its Rashomon set. ``make``'s install runs it
    (``optrules compile --first``) while the optional extras install."""
    from ..data.datasets import load_dataset
    from .estimator import RuleListClassifier

    data = load_dataset("compas")
    RuleListClassifier(regularization=0.005).fit(data.X, data.y).rashomon_set(0.01, relative=True)


def rule_lists() -> None:
    """Plain and weighted, two and three classes, Rashomon sets, the prefix map's rehash and the
    compaction kernels of a search that fills its memory."""
    from .estimator import RuleListClassifier

    X, y = random_table(400, 8)
    model = RuleListClassifier(regularization=0.01).fit(X, y)
    model.rashomon_set(0.01)
    RuleListClassifier(regularization=0.01).fit(X, y, sample_weight=np.linspace(0.5, 2.0, len(y)))
    # noisy labels and a small lambda: the prefix map outgrows its first size (its rehash is a kernel too)
    X_noisy, y_noisy = random_table(2000, 12, seed=5)
    y_noisy = np.where(np.random.default_rng(0).random(len(y_noisy)) < 0.3, 1 - np.minimum(y_noisy, 1), y_noisy)
    RuleListClassifier(regularization=0.0005, max_nodes=300).fit(X_noisy, y_noisy)
    X3, y3 = random_table(400, 8, n_classes=3, seed=1)
    RuleListClassifier(regularization=0.01).fit(X3, y3)
    # a search that fills its memory budget sets prefixes aside (the compaction kernels), with node
    # counts in int32 and, weighted, in float64
    from .problem import Problem
    from .search import search

    rng = np.random.default_rng(0)
    captures, labels = rng.random((30, 300)) < 0.3, (rng.random(300) < 0.5).astype(int)
    for weights in (None, np.linspace(0.5, 2.0, 300)):
        search(Problem.from_captures(captures, labels, 0.001, sample_weight=weights), max_memory=600_000,
               max_nodes=30_000)


def rule_lists_on_threads() -> None:
    """The parallel compilations of the search kernel and of the Rashomon set's, which a search takes once
    it has run 0.2 s on a machine with several cores (``optrules.bnb.PARALLEL_AFTER``): plain and weighted,
    and on a table whose expansions count their children on every core (>= 2^16 words a sweep)."""
    from .estimator import RuleListClassifier

    with threads_from_the_first_slice() as several:
        if several:
            X, y = random_table(400, 8)
            RuleListClassifier(regularization=0.01, max_nodes=50).fit(X, y).rashomon_set(0.01, max_nodes=50)
            RuleListClassifier(regularization=0.01, max_nodes=50).fit(X, y, sample_weight=np.linspace(0.5, 2.0, len(y)))
            X, y = random_table(60_000, 22, seed=2)
            RuleListClassifier(regularization=0.02, max_nodes=50).fit(X, y)


def many_antecedents() -> None:
    """Past 65,534 antecedents a prefix's last antecedent and length take 4 bytes, not 2: another
    specialization of each search kernel (12 s of compiling in a first fit, outside its time budget)."""
    from .estimator import RuleListClassifier

    X, y = random_table(400, 380, seed=6)  # 380 features: ~72,000 distinct pairs
    RuleListClassifier(regularization=0.01, max_antecedents=None, min_support=0.001, max_nodes=2).fit(X, y)
