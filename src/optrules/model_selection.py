"""Choosing a setting by cross-validation, what every family shares: folds in parallel through joblib
(processes with ``n_jobs``, and on a cluster under a joblib backend), the scores' table, the choice (the
best mean, or the simplest within one standard error), the refit on all data, and prediction through it.

Each family's cross-validated estimator lives in its package (:class:`~optrules.corels.model_selection.RuleListCV`
with the regularization path, :class:`~optrules.rulesets.model_selection.RuleSetCV`); they are importable
from here as well. On a Dask cluster::

    from dask.distributed import Client
    import joblib
    client = Client("tcp://scheduler:8786")          # or LocalCluster()
    with joblib.parallel_config(backend="dask"):
        RuleListCV(regularizations=[0.02, 0.01, 0.005], n_jobs=-1).fit(X, y)

(and likewise ``backend="ray"`` after ``ray.util.joblib.register_ray()``).
"""

from __future__ import annotations

import numpy as np
from joblib import Parallel, delayed, effective_n_jobs
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.metrics import check_scoring
from sklearn.model_selection import check_cv
from sklearn.utils.validation import check_is_fitted

from ._lazy import lazy_exports
from .base import ModelViews
from .budget import available_cores
from .certificate import Certificate
from .data.validation import as_frame, check_target


def test_weights(sample_weight, test) -> dict:
    """The scorer's keyword for a fold's test rows: their sample weights, so that a weight counts as
    that many repeated rows in the score as in the fit."""
    return {} if sample_weight is None else {"sample_weight": sample_weight[test]}


def take(X, rows):
    return X.iloc[rows] if hasattr(X, "iloc") else np.asarray(X)[rows]


#: joblib's backends that run on this machine (processes or threads); others (Dask, Ray) run on a cluster
LOCAL_BACKENDS = ("LokyBackend", "MultiprocessingBackend", "ThreadingBackend", "SequentialBackend")


def folds_side_by_side(n_jobs, n_folds: int) -> int:
    """How many folds run at once for ``n_jobs`` (joblib's count: -1 every core, ...): at most the folds,
    and under joblib's own backends at most this machine's cores (each fold's search takes its share of
    them, :func:`_sharing_cores`; more processes than cores only wait on each other and hold memory: 100
    asked on 2 cores made 104 processes and 4.4 GB). Under a cluster's backend its workers count."""
    from joblib.parallel import get_active_backend

    side_by_side = min(effective_n_jobs(n_jobs), max(1, n_folds))
    if type(get_active_backend()[0]).__name__ in LOCAL_BACKENDS:
        side_by_side = min(side_by_side, available_cores())
    return max(1, side_by_side)


def _sharing_cores(base, side_by_side: int):
    """``base`` for folds fitted ``side_by_side``: a search with threads (``n_jobs``) takes its share of
    the cores, folds x threads at most the cores (threads in processes that each took every core would
    only wait on each other)."""
    if side_by_side <= 1 or "n_jobs" not in base.get_params():
        return base
    from .bnb import threads_for

    return clone(base).set_params(n_jobs=max(1, threads_for(base.get_params()["n_jobs"]) // side_by_side))


class CrossValidated(ModelViews, ClassifierMixin, BaseEstimator):
    """What choosing a setting by cross-validation shares: folds in parallel (joblib), the scores'
    table, the choice (the best mean, or the simplest within one standard error; candidates come simplest
    first, so ties keep the simpler model), the refit on all data, and prediction through it.

    Subclasses give ``_base()`` (the estimator to clone), ``_candidates()`` (a list of parameter dicts,
    simplest first), ``_results(candidates)`` (the parameter columns of ``cv_results_``), ``_SIZE`` (the
    name of the size column) with ``_size(fitted estimator)``, and may replace ``_fold(base, X, y, weights,
    train, test, candidates, scorer)`` (default: :func:`fold_fits`, every candidate fitted on its own).
    """

    _SIZE = "mean_size"

    @staticmethod
    def _size(model) -> float:  # pragma: no cover - every subclass says how large a fitted model is
        raise NotImplementedError

    def _fold(self, base, X, y, weights, train, test, candidates, scorer):
        return fold_fits(base, X, y, weights, train, test, candidates, scorer, self._size)

    def fit(self, X, y, sample_weight=None, sensitive=None):
        """Score each candidate on the folds, choose, refit on all the rows. ``sensitive`` (with a base
        estimator under a fairness constraint: a column name of ``X`` or one value a row): each fold's fit
        meets the constraint on its training part, and ``cv_results_`` adds each candidate's mean gap on
        the test parts, ``mean_test_unfairness`` (the choice is still by score)."""
        base = self._base()
        candidates = self._candidates()
        if sensitive is not None or getattr(base, "fairness", None) is not None:
            return self._fit_fair(X, y, sample_weight, sensitive, base, candidates)
        frame = as_frame(X)
        codes, classes = check_target(y, frame.shape[0])
        y = classes[codes]  # plain labels (an object array of numbers becomes numbers) for the scorers
        weights = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
        splitter = check_cv(self.cv, y, classifier=True)
        scorer = check_scoring(base, scoring=self.scoring)
        splits = list(splitter.split(frame, y))
        side_by_side = folds_side_by_side(self.n_jobs, len(splits))
        each = _sharing_cores(base, side_by_side)
        folds = Parallel(n_jobs=side_by_side)(
            delayed(self._fold)(each, frame, y, weights, train, test, candidates, scorer) for train, test in splits
        )
        return self._choose(folds, candidates, base, X, y, sample_weight)

    def _choose(self, folds, candidates, base, X, y, sample_weight, **fit_params):
        """The scores' table (``cv_results_``), the choice, and the refit on all the rows."""
        scores = np.array([f[0] for f in folds])  # (folds, candidates)
        mean, std = scores.mean(axis=0), scores.std(axis=0)
        self.cv_results_ = {
            **self._results(candidates),
            "mean_test_score": mean,
            "std_test_score": std,
            **{f"split{k}_test_score": scores[k] for k in range(scores.shape[0])},
            self._SIZE: np.array([f[1] for f in folds]).mean(axis=0),
            "certified_fraction": np.array([f[2] for f in folds]).mean(axis=0),
            **({"mean_test_unfairness": np.array([f[3] for f in folds]).mean(axis=0)} if len(folds[0]) > 3 else {}),
        }
        best = int(np.argmax(mean))  # candidates run simplest first: ties keep the simpler model
        if self.one_standard_error:
            threshold = mean[best] - std[best] / np.sqrt(scores.shape[0])
            best = int(np.flatnonzero(mean >= threshold)[0])
        self.best_params_ = candidates[best]
        fit_weights = ({} if sample_weight is None else {"sample_weight": sample_weight}) | fit_params
        self.best_estimator_ = clone(base).set_params(**self.best_params_).fit(X, y, **fit_weights)
        self.classes_ = self.best_estimator_.classes_
        self.n_features_in_ = self.best_estimator_.n_features_in_
        if hasattr(self.best_estimator_, "feature_names_in_"):
            self.feature_names_in_ = self.best_estimator_.feature_names_in_
        return self

    def _fit_fair(self, X, y, sample_weight, sensitive, base, candidates):
        """Cross-validation under the base estimator's fairness constraint: the groups split with the rows,
        every candidate fitted on its own in each fold (the shared regularization path is the
        unconstrained search's)."""
        from .fairness.fit import split_sensitive
        from .fairness.metrics import check_metric, check_sensitive

        frame, values = split_sensitive(X, sensitive)
        metric = check_metric(getattr(base, "fairness", None) or "")
        group, _ = check_sensitive(values, frame.shape[0])
        codes, classes = check_target(y, frame.shape[0])
        y = classes[codes]
        weights = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
        splits = list(check_cv(self.cv, y, classifier=True).split(frame, y))
        scorer = check_scoring(base, scoring=self.scoring)
        side_by_side = folds_side_by_side(self.n_jobs, len(splits))
        folds = Parallel(n_jobs=side_by_side)(
            delayed(fold_fits)(_sharing_cores(base, side_by_side), frame, y, weights, train, test, candidates, scorer,
                               self._size, (values, group, metric)) for train, test in splits)
        return self._choose(folds, candidates, base, frame, y, sample_weight, sensitive=values)

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


def fold_fits(base, X, y, weights, train, test, candidates, scorer, size, groups=None):
    """Fit every candidate setting on one fold's training part (with its sample weights); score each on
    its test part (weighted: a weight counts as that many repeated rows); ``size(model)`` says how large
    each fitted model is. ``groups`` (under a fairness constraint): ``(values, group 0/1, metric)`` of
    every row: each fit takes its training part's groups, and each candidate's gap on the test part is
    returned beside its score."""
    X_train, X_test = take(X, train), take(X, test)
    fit_weights = {} if weights is None else {"sample_weight": weights[train]}
    if groups is not None:
        fit_weights["sensitive"] = groups[0][train]
    scores, sizes, certified, gaps = [], [], [], []
    for params in candidates:
        model = clone(base).set_params(**params).fit(X_train, y[train], **fit_weights)
        scores.append(float(scorer(model, X_test, y[test], **test_weights(weights, test))))
        sizes.append(size(model))
        certified.append(model.certificate_.status == "optimal")
        if groups is not None:
            gaps.append(_test_gap(model, X_test, y[test], groups[1][test], None if weights is None else weights[test],
                                  groups[2]))
    return (scores, sizes, certified) + ((gaps,) if groups is not None else ())


def _test_gap(model, X, y, group, weights, metric: str) -> float:
    """The model's gap in ``metric`` on these rows (its positive class: the described one, or the second)."""
    from .fairness.metrics import exact_unfairness

    positive = model.classes_[model._described_class() if hasattr(model, "pos_label") else 1]
    return float(exact_unfairness((y == positive).astype(int), group, weights, model.predict(X) == positive, metric))


# each family's cross-validated estimator, where it was before the families owned them
__getattr__ = lazy_exports(__name__, {
    "DEFAULT_REGULARIZATIONS": "optrules.corels.model_selection",
    "PathPoint": "optrules.corels.model_selection",
    "RuleListCV": "optrules.corels.model_selection",
    "regularization_path": "optrules.corels.model_selection",
    "DEFAULT_COMPLEXITIES": "optrules.rulesets.model_selection",
    "RuleSetCV": "optrules.rulesets.model_selection",
})
