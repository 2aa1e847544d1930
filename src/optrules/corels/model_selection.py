"""Choosing lambda: the regularization path and its cross-validation.

A path fits one certified rule list per lambda on the same data. It binarizes and mines once, at the
smallest lambda (an antecedent rarer than lambda * N can never enter an optimal list, Thm 10, so the
antecedents mined for the smallest lambda serve every larger one), and it runs from the largest lambda
down, starting each search from the lists already found: the best of them at the new lambda is a good
incumbent, so the search prunes from its first node. Every list on the path is still certified on its
own. Cross-validation runs one path per fold (the folds in parallel, :mod:`optrules.model_selection`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.base import clone
from sklearn.utils.validation import check_is_fitted

from ..certificate import Certificate
from ..model_selection import CrossValidated, take, test_weights
from .estimator import RuleListClassifier
from .model import RuleList
from .problem import check_regularization

#: the lambdas tried when none are given: 1 rule costs 5% ... 0.25% of training accuracy
DEFAULT_REGULARIZATIONS = (0.05, 0.02, 0.01, 0.005, 0.0025)

# what a fitted rule-list estimator shares across the lambdas of a path (binarization and mining)
_PREPARED_ATTRIBUTES = ("classes_", "binarizer_", "antecedents_", "mined_antecedents_", "n_features_in_",
                        "feature_names_in_")


@dataclass
class PathPoint:
    regularization: float
    estimator: RuleListClassifier  # fitted

    @property
    def rule_list(self) -> RuleList:
        return self.estimator.rule_list_

    @property
    def certificate(self) -> Certificate:
        return self.estimator.certificate_

    @property
    def n_rules(self) -> int:
        return len(self.estimator.rule_list_)


def _check_regularizations(regularizations) -> list[float]:
    values = sorted({check_regularization(r) for r in np.atleast_1d(regularizations)}, reverse=True)
    if not values:
        raise ValueError("give at least one regularization (lambda) value")
    return values


def regularization_path(X, y, regularizations=DEFAULT_REGULARIZATIONS, estimator: RuleListClassifier | None = None,
                        sample_weight=None) -> list[PathPoint]:
    """One certified rule list per lambda, largest lambda first (see the module docstring).

    ``estimator`` carries every other setting (max_card, budgets, class_weight, binarizer options); its
    own ``regularization`` is ignored. Each point holds a fitted estimator with its certificate.
    """
    base = RuleListClassifier() if estimator is None else estimator
    values = _check_regularizations(regularizations)
    shared = clone(base).set_params(regularization=values[-1])
    prepared = shared._prepare(X, y, sample_weight, values[-1])
    path: list[PathPoint] = []
    for value in values:
        model = clone(base).set_params(regularization=value)
        for name in _PREPARED_ATTRIBUTES:
            if hasattr(shared, name):
                setattr(model, name, getattr(shared, name))
        # each as indices into the mined antecedents (a list of single literals indexes their subset)
        previous = [[int(point.estimator._space_positions[a]) for a in point.estimator.antecedent_indices_]
                    for point in path]
        model._search(prepared, initial_prefix=previous or None)  # the search keeps the best of them
        path.append(PathPoint(value, model))
    return path


def _fold_path(base, X, y, sample_weight, train, test, values, scorer):
    """Fit the path on one fold's training part; score every lambda on its test part."""
    X_train, X_test = take(X, train), take(X, test)
    y_train, y_test = y[train], y[test]
    weights = None if sample_weight is None else sample_weight[train]
    path = regularization_path(X_train, y_train, values, base, weights)
    scores = [float(scorer(point.estimator, X_test, y_test, **test_weights(sample_weight, test)))
              for point in path]
    n_rules = [point.n_rules for point in path]
    certified = [point.certificate.status == "optimal" for point in path]
    return scores, n_rules, certified


class RuleListCV(CrossValidated):
    """A rule list whose lambda is chosen by cross-validation, then refitted on all the data.

    Parameters
    ----------
    regularizations : the lambdas to try.
    estimator : a :class:`~optrules.estimators.RuleListClassifier` with every other setting
        (default: the defaults).
    cv : folds (int: stratified k-fold), or any scikit-learn splitter or iterable of splits.
    scoring : a scikit-learn scorer name or callable (default: accuracy).
    n_jobs : folds run in parallel through joblib (``-1``: every core; under
        ``joblib.parallel_config(backend="dask")`` on a Dask cluster); on this machine at most its cores
        at once, each fold's search on its share of them (folds x threads <= cores).
    one_standard_error : pick the largest lambda (the shortest list) whose mean score is within one
        standard error of the best, rather than the best mean itself.

    Attributes
    ----------
    regularization_ : the chosen lambda (``best_params_``: ``{"regularization": ...}``).
    best_estimator_ : a :class:`~optrules.estimators.RuleListClassifier` refitted on all data with it.
    cv_results_ : dict of arrays over the lambdas (largest first): ``regularization``,
        ``mean_test_score``, ``std_test_score``, ``split{k}_test_score``, ``mean_n_rules``,
        ``certified_fraction``.
    classes_, n_features_in_ : as in scikit-learn.
    """

    _SIZE = "mean_n_rules"

    def __init__(self, regularizations=DEFAULT_REGULARIZATIONS, estimator=None, cv=5, scoring=None, n_jobs=None,
                 one_standard_error: bool = False):
        self.regularizations = regularizations
        self.estimator = estimator
        self.cv = cv
        self.scoring = scoring
        self.n_jobs = n_jobs
        self.one_standard_error = one_standard_error

    def _base(self):
        return RuleListClassifier() if self.estimator is None else self.estimator

    def _candidates(self):
        return [{"regularization": value} for value in _check_regularizations(self.regularizations)]

    @staticmethod
    def _size(model) -> float:
        return len(model.rule_list_)

    def _fold(self, base, X, y, weights, train, test, candidates, scorer):
        return _fold_path(base, X, y, weights, train, test, [c["regularization"] for c in candidates], scorer)

    @staticmethod
    def _results(candidates):
        return {"regularization": np.array([c["regularization"] for c in candidates])}

    @property
    def regularization_(self) -> float:
        check_is_fitted(self, "best_params_")
        return self.best_params_["regularization"]

    @property
    def rule_list_(self) -> RuleList:
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.rule_list_
