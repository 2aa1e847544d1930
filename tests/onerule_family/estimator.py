"""The one-rule estimator: every binarized feature tried, the fewest (weighted) mistakes kept."""

from __future__ import annotations

import numpy as np

from optrules.base import RuleModelEstimator
from optrules.models import Rule
from optrules.parameters import check_parameters

from .model import OneRule
from .parameters import ONE_RULE_PARAMETERS
from .solver import OneRuleSearch, OneRuleSettings


class OneRuleClassifier(RuleModelEstimator):
    """``if feature then class a else class b`` with the fewest training mistakes (every feature tried:
    the certificate is exact)."""

    multiclass = True
    _parameter_table = ONE_RULE_PARAMETERS

    def __init__(self, thresholds: str = "quantile", n_thresholds: int = 9, negations: bool = False,
                 missing: str = "category", identifiers: str = "drop", time_limit: float | None = None,
                 max_memory: int | None = None, verbose=False, categorical=None, bins=None, block: int = 8,
                 max_rules: int | None = None, forbidden=None, required=None, n_jobs: int | None = None):
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
        self.block = block
        self.max_rules = max_rules
        self.forbidden = forbidden
        self.required = required
        self.n_jobs = n_jobs

    def fit(self, X, y, sample_weight=None):
        check_parameters(self)
        with self._fitting() as fitting:
            self._fit(X, y, sample_weight, fitting.budget, fitting.progress)
        return self

    def _fit(self, X, y, sample_weight, budget, progress) -> None:
        frame, codes = self._target(X, y)
        weights = np.ones(len(codes)) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
        features = self._binarize(frame, codes, budget=budget).astype(bool)
        n_classes = len(self.classes_)
        settings = OneRuleSettings(self.block, self._candidates(), self.n_jobs)
        result = OneRuleSearch(features, codes, weights, n_classes, settings=settings, budget=budget,
                               progress=progress).solve()
        by_class = np.stack([weights * (codes == c) for c in range(n_classes)], axis=1)  # (rows, classes)
        captured = features[:, result.solution[0]] if result.solution else np.zeros(len(codes), bool)
        inside, outside = by_class[captured].sum(axis=0), by_class[~captured].sum(axis=0)
        rules = [Rule((self.binarizer_.feature_names_[result.solution[0]],), int(inside.argmax()), int(captured.sum()),
                      0, tuple(inside))] if result.solution else []
        default = Rule((), int(outside.argmax()), int((~captured).sum()), 0, tuple(outside))
        self.rule_list_ = OneRule(rules, default, self.classes_, self.binarizer_)
        self.certificate_ = result.certificate
        self.certificate_.counters["total_time"] = budget.elapsed()

    def _candidates(self) -> tuple[int, ...]:
        """The features the rule may test: none when ``max_rules`` is 0, never a ``forbidden`` one, and
        one that every ``required`` name names (a single rule must use them all)."""
        allowed = ~self._named_features(self.forbidden, "forbidden")[1].any(axis=0)
        names, masks = self._named_features(self.required, "required")
        allowed &= masks.all(axis=0)
        if names and (self.max_rules == 0 or not allowed.any()):
            raise ValueError(f"no single rule can use every required name {names}")
        return () if self.max_rules == 0 else tuple(int(j) for j in np.flatnonzero(allowed))
