"""The one-rule estimator: every binarized feature tried, the fewest (weighted) mistakes kept."""

from __future__ import annotations

import numpy as np

from optrules.base import RuleModelEstimator
from optrules.certificate import OPTIMAL, Certificate
from optrules.models import Rule
from optrules.parameters import check_parameters

from .model import OneRule
from .parameters import ONE_RULE_PARAMETERS


class OneRuleClassifier(RuleModelEstimator):
    """``if feature then class a else class b`` with the fewest training mistakes (every feature tried:
    the certificate is exact)."""

    multiclass = True
    _parameter_table = ONE_RULE_PARAMETERS

    def __init__(self, thresholds: str = "quantile", n_thresholds: int = 9, negations: bool = False,
                 missing: str = "category", identifiers: str = "drop", time_limit: float | None = None,
                 max_memory: int | None = None, verbose=False, categorical=None, bins=None):
        self.thresholds = thresholds
        self.n_thresholds = n_thresholds
        self.negations = negations
        self.missing = missing
        self.identifiers = identifiers
        self.time_limit = time_limit
        self.max_memory = max_memory
        self.verbose = verbose
        self.categorical = categorical
        self.bins = bins

    def fit(self, X, y, sample_weight=None):
        check_parameters(self)
        with self._fitting() as fitting:
            self._fit(X, y, sample_weight, fitting.budget)
        return self

    def _fit(self, X, y, sample_weight, budget) -> None:
        frame, codes = self._target(X, y)
        weights = np.ones(len(codes)) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
        features = self._binarize(frame, codes, budget=budget).astype(bool)
        n_classes = len(self.classes_)
        by_class = np.stack([weights * (codes == c) for c in range(n_classes)], axis=1)  # (rows, classes)
        inside = features.T.astype(np.float64) @ by_class  # (features, classes): weight each rule captures
        outside = by_class.sum(axis=0) - inside
        mistakes = inside.sum(axis=1) - inside.max(axis=1) + outside.sum(axis=1) - outside.max(axis=1)
        best = int(np.argmin(mistakes))  # the first of the fewest: one answer for every run
        name = self.binarizer_.feature_names_[best]
        rule = Rule((name,), int(inside[best].argmax()), int(features[:, best].sum()), 0, tuple(inside[best]))
        default = Rule((), int(outside[best].argmax()), int((~features[:, best]).sum()), 0, tuple(outside[best]))
        self.rule_list_ = OneRule([rule], default, self.classes_, self.binarizer_)
        objective = float(mistakes[best] / weights.sum())
        self.certificate_ = Certificate(OPTIMAL, objective, objective,
                                        {"total_time": budget.elapsed(), "features_tried": len(mistakes)})
