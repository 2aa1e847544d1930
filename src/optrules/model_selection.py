"""Choosing lambda: the regularization path and its cross-validation; and a rule set's complexity bound
(and the class it describes) by cross-validation.

A path fits one certified rule list per lambda on the same data. It binarizes and mines once, at the
smallest lambda (an antecedent rarer than lambda * N can never enter an optimal list, Thm 10, so the
antecedents mined for the smallest lambda serve every larger one), and it runs from the largest lambda
down, starting each search from the lists already found: the best of them at the new lambda is a good
incumbent, so the search prunes from its first node. Every list on the path is still certified on its
own.

Cross-validation runs one path per fold. Folds are independent tasks for joblib, so they run in
parallel processes with ``n_jobs``, and on a cluster under a joblib backend::

    from dask.distributed import Client
    import joblib
    client = Client("tcp://scheduler:8786")          # or LocalCluster()
    with joblib.parallel_config(backend="dask"):
        RuleListCV(regularizations=[0.02, 0.01, 0.005], n_jobs=-1).fit(X, y)

(and likewise ``backend="ray"`` after ``ray.util.joblib.register_ray()``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.metrics import check_scoring
from sklearn.model_selection import check_cv
from sklearn.utils.validation import check_is_fitted

from .certificate import Certificate
from .corels.problem import check_regularization
from .data.validation import as_frame, check_target
from .estimators import ModelViews, RuleListClassifier
from .models import RuleList

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
    X_train, X_test = _take(X, train), _take(X, test)
    y_train, y_test = y[train], y[test]
    weights = None if sample_weight is None else sample_weight[train]
    path = regularization_path(X_train, y_train, values, base, weights)
    scores = [float(scorer(point.estimator, X_test, y_test, **_test_weights(sample_weight, test)))
              for point in path]
    n_rules = [point.n_rules for point in path]
    certified = [point.certificate.status == "optimal" for point in path]
    return scores, n_rules, certified


def _test_weights(sample_weight, test) -> dict:
    """The scorer's keyword for a fold's test rows: their sample weights, so that a weight counts as
    that many repeated rows in the score as in the fit."""
    return {} if sample_weight is None else {"sample_weight": sample_weight[test]}


def _take(X, rows):
    return X.iloc[rows] if hasattr(X, "iloc") else np.asarray(X)[rows]


class _CrossValidated(ModelViews, ClassifierMixin, BaseEstimator):
    """What choosing a setting by cross-validation shares: folds in parallel (joblib), the scores'
    table, the choice (the best mean, or the simplest within one standard error; candidates come simplest
    first, so ties keep the simpler model), the refit on all data, and prediction through it.

    Subclasses give ``_base()`` (the estimator to clone), ``_candidates()`` (a list of parameter dicts,
    simplest first), ``_fold(base, X, y, weights, train, test, candidates, scorer)`` returning (scores,
    sizes, certified) per candidate, and ``_results(candidates)`` (the parameter columns of
    ``cv_results_``) with ``_SIZE`` (the name of the size column).
    """

    _SIZE = "mean_size"

    def fit(self, X, y, sample_weight=None):
        base = self._base()
        candidates = self._candidates()
        frame = as_frame(X)
        codes, classes = check_target(y, frame.shape[0])
        y = classes[codes]  # plain labels (an object array of numbers becomes numbers) for the scorers
        weights = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
        splitter = check_cv(self.cv, y, classifier=True)
        scorer = check_scoring(base, scoring=self.scoring)
        folds = Parallel(n_jobs=self.n_jobs)(
            delayed(self._fold)(base, frame, y, weights, train, test, candidates, scorer)
            for train, test in splitter.split(frame, y)
        )
        scores = np.array([f[0] for f in folds])  # (folds, candidates)
        mean, std = scores.mean(axis=0), scores.std(axis=0)
        self.cv_results_ = {
            **self._results(candidates),
            "mean_test_score": mean,
            "std_test_score": std,
            **{f"split{k}_test_score": scores[k] for k in range(scores.shape[0])},
            self._SIZE: np.array([f[1] for f in folds]).mean(axis=0),
            "certified_fraction": np.array([f[2] for f in folds]).mean(axis=0),
        }
        best = int(np.argmax(mean))  # candidates run simplest first: ties keep the simpler model
        if self.one_standard_error:
            threshold = mean[best] - std[best] / np.sqrt(scores.shape[0])
            best = int(np.flatnonzero(mean >= threshold)[0])
        self.best_params_ = candidates[best]
        fit_weights = {} if sample_weight is None else {"sample_weight": sample_weight}
        self.best_estimator_ = clone(base).set_params(**self.best_params_).fit(X, y, **fit_weights)
        self.classes_ = self.best_estimator_.classes_
        self.n_features_in_ = self.best_estimator_.n_features_in_
        if hasattr(self.best_estimator_, "feature_names_in_"):
            self.feature_names_in_ = self.best_estimator_.feature_names_in_
        return self

    @property
    def certificate_(self) -> Certificate:
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.certificate_

    def _fitted_estimator(self):
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_

    def predict(self, X):
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.predict(X)

    def predict_proba(self, X):
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.predict_proba(X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.string = True
        tags.input_tags.categorical = True
        tags.input_tags.allow_nan = getattr(self._base(), "missing", "error") == "category"
        return tags


class RuleListCV(_CrossValidated):
    """A rule list whose lambda is chosen by cross-validation, then refitted on all the data.

    Parameters
    ----------
    regularizations : the lambdas to try.
    estimator : a :class:`~optrules.estimators.RuleListClassifier` with every other setting
        (default: the defaults).
    cv : folds (int: stratified k-fold), or any scikit-learn splitter or iterable of splits.
    scoring : a scikit-learn scorer name or callable (default: accuracy).
    n_jobs : folds run in parallel through joblib (``-1``: every core; under
        ``joblib.parallel_config(backend="dask")`` on a Dask cluster).
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
    def _fold(base, X, y, weights, train, test, candidates, scorer):
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


#: the complexity bounds tried when none are given: the base rate (1: the majority class, the cheaper of the
#: empty set and the empty clause), then the paper's grid, 5 ... 30
DEFAULT_COMPLEXITIES = (1, 5, 10, 15, 20, 30)


def _fold_fits(base, X, y, weights, train, test, candidates, scorer):
    """Fit every candidate setting on one fold's training part (with its sample weights); score each on
    its test part (weighted, as RuleListCV)."""
    X_train, X_test = _take(X, train), _take(X, test)
    fit_weights = {} if weights is None else {"sample_weight": weights[train]}
    scores, sizes, certified = [], [], []
    for params in candidates:
        model = clone(base).set_params(**params).fit(X_train, y[train], **fit_weights)
        scores.append(float(scorer(model, X_test, y[test], **_test_weights(weights, test))))
        sizes.append(model.rule_set_.complexity)
        certified.append(model.certificate_.status == "optimal")
    return scores, sizes, certified


class RuleSetCV(_CrossValidated):
    """A Boolean rule set whose complexity bound, and optionally the class it describes, are chosen by
    cross-validation, then refitted on all the data.

    Parameters
    ----------
    complexities : the complexity bounds C to try (clauses + conditions); a bound below 1 stands for
        the empty set (it predicts the other class everywhere), one from 1 to 2 for the cheaper of it
        and the empty clause (it always holds: the majority class), so that the search can say no rule
        set beats them. Default: 1, then 5, 10, 15, 20, 30.
    estimator : a :class:`~optrules.estimators.RuleSetClassifier` with every other setting (its
        budgets apply to each fit: a fold fits every candidate).
    pos_labels : the classes the set may describe: None (the estimator's ``pos_label``), or a list of
        labels to try each (``"both"``: both classes).
    cv, scoring, n_jobs, one_standard_error : as :class:`RuleListCV` (simplest: the smallest bound).

    Attributes
    ----------
    best_params_ : the chosen ``{"complexity": C}`` (and ``"pos_label"`` when several were tried).
    best_estimator_ : the :class:`~optrules.estimators.RuleSetClassifier` refitted on all data.
    cv_results_ : arrays over the candidates (by complexity, then class): ``complexity``, ``pos_label``,
        ``mean_test_score``, ``std_test_score``, ``split{k}_test_score``, ``mean_complexity`` (of the sets
        found), ``certified_fraction``.
    """

    _SIZE = "mean_complexity"

    def __init__(self, complexities=DEFAULT_COMPLEXITIES, estimator=None, pos_labels=None, cv=5, scoring=None,
                 n_jobs=None, one_standard_error: bool = False):
        self.complexities = complexities
        self.estimator = estimator
        self.pos_labels = pos_labels
        self.cv = cv
        self.scoring = scoring
        self.n_jobs = n_jobs
        self.one_standard_error = one_standard_error

    def _base(self):
        from .estimators import RuleSetClassifier

        return RuleSetClassifier() if self.estimator is None else self.estimator

    def _candidates(self):
        values = sorted({float(c) for c in np.atleast_1d(self.complexities)})
        if not values or any(not c >= 0 for c in values):
            raise ValueError(f"complexities must be numbers >= 0, got {self.complexities!r}")
        if self.pos_labels is None:
            return [{"complexity": c} for c in values]
        labels = self._labels
        return [{"complexity": c, "pos_label": label} for c in values for label in labels]

    def fit(self, X, y, sample_weight=None):
        _, classes = check_target(y, len(y))
        if isinstance(self.pos_labels, str) and self.pos_labels == "both":
            self._labels = list(classes)
        elif self.pos_labels is not None:
            self._labels = list(self.pos_labels)
            unknown = [label for label in self._labels if label not in list(classes)]
            if unknown:
                raise ValueError(f"pos_labels {unknown} are not classes of y {list(classes)}")
        return super().fit(X, y, sample_weight)

    _fold = staticmethod(_fold_fits)

    @staticmethod
    def _results(candidates):
        return {"complexity": np.array([c["complexity"] for c in candidates]),
                "pos_label": np.array([c.get("pos_label") for c in candidates], dtype=object)}

    @property
    def rule_set_(self):
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.rule_set_

    rule_list_ = rule_set_
