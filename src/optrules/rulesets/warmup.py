"""The rule sets' part of ``optrules compile`` (:mod:`optrules.warmup`)."""

from __future__ import annotations

import numpy as np

from ..warmup import random_table


def rule_sets() -> None:
    """Plain and weighted fits, and the exact pricing's cost model (a fit this small never needs it)."""
    from .enumeration import PricingSearch
    from .estimator import RuleSetClassifier
    from .pricing import PricingData

    X, y = random_table(300, 8, seed=4)
    RuleSetClassifier(complexity=8, time_limit=30).fit(X, y)
    RuleSetClassifier(complexity=8, time_limit=30).fit(X, y, sample_weight=np.linspace(0.5, 2.0, len(y)))
    features = np.random.default_rng(4).random((300, 8)) < 0.5
    labels = features[:, 0] | features[:, 1]
    PricingSearch(PricingData.from_features(features, labels), np.ones(int(labels.sum())), 1.0, 2,
                  raise_price=True).two_feature_mus()
