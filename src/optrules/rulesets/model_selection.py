"""Choosing a rule set's complexity bound, its space of thresholds (and the class it describes) by
cross-validation."""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ..data.validation import check_target
from ..model_selection import CrossValidated
from ..parameters import THRESHOLD_MODES

#: the complexity bounds tried when none are given: the base rate (1: the majority class, the cheaper of the
#: empty set and the empty clause), then 5 ... 50 (tic-tac-toe's eight lines of three cost 32)
DEFAULT_COMPLEXITIES = (1, 5, 10, 15, 20, 30, 50)
#: ``thresholds="auto"``: the spaces tried after a boosted estimator's own, each holding the one before it.
#: A larger space fits the training rows better at the same complexity bound, which may or may not carry to
#: new rows (10-fold, bound 30: banknote 96.7 -> 99.1 % with the deciles added to the boosted thresholds,
#: ionosphere 89.7 -> 85.2 %), so the folds choose
LARGER_SPACES = {"boosted": ("both",)}


class RuleSetCV(CrossValidated):
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
    thresholds : the binarizer's ``thresholds`` to try each (the space of numeric thresholds, smallest
        first): ``"auto"`` (default) the estimator's own and, when it is ``"boosted"``, ``"both"`` too
        (the boosted thresholds and the quantiles); None, the estimator's only; or a list.
    cv, scoring, n_jobs, one_standard_error : as for every family (:class:`~optrules.model_selection.CrossValidated`;
        the simplest: the smallest bound).

    Attributes
    ----------
    best_params_ : the chosen ``{"complexity": C}`` (and ``"thresholds"``, ``"pos_label"`` when several
        were tried).
    best_estimator_ : the :class:`~optrules.estimators.RuleSetClassifier` refitted on all data.
    cv_results_ : arrays over the candidates (by complexity, then space, then class): ``complexity``,
        ``thresholds``, ``pos_label``,
        ``mean_test_score``, ``std_test_score``, ``split{k}_test_score``, ``mean_complexity`` (of the sets
        found), ``certified_fraction``.
    """

    _SIZE = "mean_complexity"

    def __init__(self, complexities=DEFAULT_COMPLEXITIES, estimator=None, pos_labels=None, cv=5, scoring=None,
                 n_jobs=None, one_standard_error: bool = False, thresholds="auto"):
        self.complexities = complexities
        self.estimator = estimator
        self.pos_labels = pos_labels
        self.thresholds = thresholds
        self.cv = cv
        self.scoring = scoring
        self.n_jobs = n_jobs
        self.one_standard_error = one_standard_error

    def _base(self):
        from .estimator import RuleSetClassifier

        return RuleSetClassifier() if self.estimator is None else self.estimator

    def _candidates(self):
        values = sorted({float(c) for c in np.atleast_1d(self.complexities)})
        if not values or any(not c >= 0 for c in values):
            raise ValueError(f"complexities must be numbers >= 0, got {self.complexities!r}")
        spaces = [{}] if len(self._spaces) < 2 else [{"thresholds": space} for space in self._spaces]
        labels = [{}] if self.pos_labels is None else [{"pos_label": label} for label in self._labels]
        return [{"complexity": c, **space, **label} for c in values for space in spaces for label in labels]

    def _thresholds_tried(self) -> list:
        own = self._base().thresholds
        if self.thresholds is None:
            return [own]
        if isinstance(self.thresholds, str) and self.thresholds == "auto":
            return [own, *LARGER_SPACES.get(own, ())]
        spaces = list(dict.fromkeys(np.atleast_1d(self.thresholds).tolist()))
        unknown = [space for space in spaces if space not in THRESHOLD_MODES]
        if not spaces or unknown:
            raise ValueError(f"thresholds must be 'auto', None or a list of {list(THRESHOLD_MODES)}, "
                             f"got {self.thresholds!r}")
        return spaces

    def fit(self, X, y, sample_weight=None, sensitive=None):
        self._spaces = self._thresholds_tried()
        _, classes = check_target(y, len(y))
        if isinstance(self.pos_labels, str) and self.pos_labels == "both":
            self._labels = list(classes)
        elif self.pos_labels is not None:
            self._labels = list(self.pos_labels)
            unknown = [label for label in self._labels if label not in list(classes)]
            if unknown:
                raise ValueError(f"pos_labels {unknown} are not classes of y {list(classes)}")
        return super().fit(X, y, sample_weight, sensitive)

    @staticmethod
    def _size(model) -> float:
        return model.rule_set_.complexity

    def _results(self, candidates):
        return {"complexity": np.array([c["complexity"] for c in candidates]),
                "thresholds": np.array([c.get("thresholds", self._spaces[0]) for c in candidates], dtype=object),
                "pos_label": np.array([c.get("pos_label") for c in candidates], dtype=object)}

    @property
    def rule_set_(self):
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.rule_set_

    rule_list_ = rule_set_
