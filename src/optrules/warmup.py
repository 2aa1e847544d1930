"""Compile and cache every numba kernel the model families use, ahead of the first fit.

numba compiles a kernel the first time it is called with new argument types and caches the machine
code beside the module (``__pycache__``, or ``NUMBA_CACHE_DIR``); later processes load it in a fraction
of a second. A fresh install, or every container started from an image that never ran a fit, pays
the compilation in its first fit instead: ~13 s for the rule-list search alone (a whole first fit on
COMPAS ~22 s), ~30 s more for its two-core variant on large tables (BENCHMARKS.md). :func:`compile_kernels` runs small fits that take
each kernel's every argument-type combination a real fit takes (plain and weighted, two and three
classes, the large-table kernel, Rashomon sets, falling rule lists, the rule sets' exact pricing),
so that ``optrules compile`` in an install script or a Docker build leaves nothing to compile.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np


def _table(n_samples: int, n_features: int, n_classes: int = 2, seed: int = 0):
    """A random 0/1 table whose label depends on its first features (so that rules exist)."""
    rng = np.random.default_rng(seed)
    X = rng.random((n_samples, n_features)) < 0.5
    score = X[:, 0].astype(int) + (X[:, 1] & X[:, 2]) + (rng.random(n_samples) < 0.2)
    y = np.minimum(score, n_classes - 1)
    return X.astype(np.int8), y


def _rule_lists() -> None:
    from .estimators import RuleListClassifier

    X, y = _table(400, 8)
    model = RuleListClassifier(regularization=0.01).fit(X, y)
    model.rashomon_set(0.01)
    RuleListClassifier(regularization=0.01).fit(X, y, sample_weight=np.linspace(0.5, 2.0, len(y)))
    # noisy labels and a small lambda: the prefix map outgrows its first size (its rehash is a kernel too)
    X_noisy, y_noisy = _table(2000, 12, seed=5)
    y_noisy = np.where(np.random.default_rng(0).random(len(y_noisy)) < 0.3, 1 - np.minimum(y_noisy, 1), y_noisy)
    RuleListClassifier(regularization=0.0005, max_nodes=300).fit(X_noisy, y_noisy)
    X3, y3 = _table(400, 8, n_classes=3, seed=1)
    RuleListClassifier(regularization=0.01).fit(X3, y3)
    # a search that fills its memory budget sets prefixes aside (the compaction kernels), with node
    # counts in int32 and, weighted, in float64
    from .corels.problem import Problem
    from .corels.search import search

    rng = np.random.default_rng(0)
    captures, labels = rng.random((30, 300)) < 0.3, (rng.random(300) < 0.5).astype(int)
    for weights in (None, np.linspace(0.5, 2.0, 300)):
        search(Problem.from_captures(captures, labels, 0.001, sample_weight=weights), max_memory=600_000,
               max_nodes=30_000)


def _large_rule_list() -> None:
    """The two-core kernel runs where an expansion sweeps >= 2^16 words: many distinct rows."""
    from .estimators import RuleListClassifier

    X, y = _table(60_000, 22, seed=2)
    RuleListClassifier(regularization=0.02, max_nodes=50).fit(X, y)


def _many_antecedents() -> None:
    """Past 65,534 antecedents a prefix's last antecedent and length take 4 bytes, not 2: another
    specialization of each search kernel (12 s of compiling in a first fit, outside its time budget)."""
    from .estimators import FallingRuleListClassifier, RuleListClassifier

    X, y = _table(400, 380, seed=6)  # 380 features: ~72,000 distinct pairs
    RuleListClassifier(regularization=0.01, max_antecedents=None, min_support=0.001, max_nodes=2).fit(X, y)
    FallingRuleListClassifier(max_antecedents=None, min_class_support=0.001, max_nodes=2, iterations=2).fit(X, y)


def _falling_rule_lists() -> None:
    from .estimators import FallingRuleListClassifier

    X, y = _table(400, 6, seed=3)
    FallingRuleListClassifier(time_limit=30).fit(X, y)
    FallingRuleListClassifier(soft=True, time_limit=30).fit(X, y)
    FallingRuleListClassifier(time_limit=30).fit(X, y, sample_weight=np.linspace(0.5, 2.0, len(y)))


def _rule_sets() -> None:
    from .estimators import RuleSetClassifier

    X, y = _table(300, 8, seed=4)
    RuleSetClassifier(complexity=8, time_limit=30).fit(X, y)
    RuleSetClassifier(complexity=8, time_limit=30).fit(X, y, sample_weight=np.linspace(0.5, 2.0, len(y)))
    # the certificate's cost model (a fit this small never needs it)
    from .rulesets.enumeration import PricingSearch
    from .rulesets.pricing import PricingData

    features = np.random.default_rng(4).random((300, 8)) < 0.5
    labels = features[:, 0] | features[:, 1]
    PricingSearch(PricingData.from_features(features, labels), np.ones(int(labels.sum())), 1.0, 2,
                  raise_price=True).two_feature_mus()


#: what each part compiles, in the order they run
PARTS: dict[str, Callable[[], None]] = {
    "rule lists (and Rashomon sets)": _rule_lists,
    "rule lists on large tables (two cores)": _large_rule_list,
    "rule and falling lists with 65,535+ antecedents": _many_antecedents,
    "falling rule lists": _falling_rule_lists,
    "rule sets (exact pricing)": _rule_sets,
}


#: the parts ``large=False`` (``--skip-large``) leaves out: kernels only large problems take
LARGE_PARTS = ("rule lists on large tables (two cores)", "rule and falling lists with 65,535+ antecedents")


def compile_kernels(large: bool = True, progress: Callable[[str, float], None] | None = None) -> dict[str, float]:
    """Run every part (without :data:`LARGE_PARTS` when ``large`` is false); return the seconds each
    took (a part whose kernels are cached already takes well under a second)."""
    seconds = {}
    for name, part in PARTS.items():
        if not large and name in LARGE_PARTS:
            continue
        start = time.perf_counter()
        part()
        seconds[name] = time.perf_counter() - start
        if progress is not None:
            progress(name, seconds[name])
    return seconds
