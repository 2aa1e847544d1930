"""The three families' scikit-learn estimators, in one place to import them from (each lives beside its
solver)."""

from .base import DEFAULT_TIME_LIMIT, ModelViews, RuleModelEstimator
from .corels.estimator import RuleListClassifier
from .frl.estimator import FallingRuleListClassifier
from .rulesets.estimator import RuleSetClassifier

__all__ = ["DEFAULT_TIME_LIMIT", "FallingRuleListClassifier", "ModelViews", "RuleListClassifier",
           "RuleModelEstimator", "RuleSetClassifier"]
