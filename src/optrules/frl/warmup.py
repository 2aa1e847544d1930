"""The falling rule lists' part of ``optrules compile`` (:mod:`optrules.warmup`)."""

from __future__ import annotations

import numpy as np

from ..warmup import random_table, threads_from_the_first_slice


def falling_rule_lists() -> None:
    """Hard and soft, plain and weighted."""
    from .estimator import FallingRuleListClassifier

    X, y = random_table(400, 6, seed=3)
    FallingRuleListClassifier(time_limit=30).fit(X, y)
    FallingRuleListClassifier(soft=True, time_limit=30).fit(X, y)
    FallingRuleListClassifier(time_limit=30).fit(X, y, sample_weight=np.linspace(0.5, 2.0, len(y)))


def falling_lists_on_threads() -> None:
    """The parallel compilation of the search kernel (a search takes it once it has run 0.2 s on several
    cores): plain and weighted."""
    from .estimator import FallingRuleListClassifier

    with threads_from_the_first_slice() as several:
        if several:
            X, y = random_table(400, 6, seed=3)
            FallingRuleListClassifier(soft=True, max_nodes=50).fit(X, y)
            FallingRuleListClassifier(soft=True, max_nodes=50).fit(X, y, sample_weight=np.linspace(0.5, 2.0, len(y)))


def many_antecedents() -> None:
    """Past 65,534 antecedents a prefix's last antecedent and length take 4 bytes, not 2 (as for rule lists)."""
    from .estimator import FallingRuleListClassifier

    X, y = random_table(400, 380, seed=6)  # 380 features: ~72,000 distinct pairs
    FallingRuleListClassifier(max_antecedents=None, min_class_support=0.001, max_nodes=2, iterations=2).fit(X, y)
