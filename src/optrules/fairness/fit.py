"""``RuleListClassifier(fairness=..., max_unfairness=...).fit(X, y, sensitive=...)``: the estimator's fit
under a fairness constraint (:mod:`optrules.fairness.search`).

What changes from an unconstrained fit, and why: antecedents are mined without the support floor of
Theorem 10 (it assumes rules predict their majority; a rule of small support may be what makes a list
fair), so ``min_support`` defaults to 0 here; ``max_card="auto"`` searches single literals (the ladder's
rungs are certified with the unconstrained bounds); the search is the constrained one, whose certificate
holds over every list of the mined antecedents, each rule and the default free to predict either class.
Mining's other shortcuts hold under any constraint: an antecedent capturing the same rows as another is
the other in every list, one capturing no row only costs lambda, and one capturing every row makes a list
no better than its default alone.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..budget import Budget
from ..data import bitset
from ..data.validation import as_frame
from ..staged import Space
from .metrics import check_max_unfairness, check_metric, check_sensitive, exact_cells, exact_unfairness
from .search import STATUS, FairListSettings, FairListSolver, list_predictions  # noqa: F401  (STATUS: the rule sets')


def split_sensitive(X, sensitive):
    """``(features, sensitive values)``: a column name of ``X`` is taken out of the features."""
    frame = as_frame(X)
    if sensitive is None:
        raise ValueError("fairness= needs the two groups: fit(X, y, sensitive=COLUMN or one value a row)")
    if isinstance(sensitive, str) or (np.ndim(sensitive) == 0 and sensitive in frame.columns):
        if sensitive not in frame.columns:
            raise ValueError(f"sensitive={sensitive!r} is not a column of X")
        return frame.drop(columns=[sensitive]), frame[sensitive].to_numpy()
    return frame, np.asarray(sensitive, dtype=object)


def rows_and_groups(X, y, sample_weight, sensitive):
    """``(features, y, sample_weight, group 0/1 a row, the two group labels)``, the rows of zero weight left
    out (of the groups too: they change no rate)."""
    frame, values = split_sensitive(X, sensitive)
    group, group_labels = check_sensitive(values, frame.shape[0])
    if sample_weight is not None:
        weights = np.asarray(sample_weight, dtype=np.float64)
        if weights.shape == (frame.shape[0],) and (weights == 0).any():
            kept = weights > 0
            frame, y, group, sample_weight = frame[kept], np.asarray(y)[kept], group[kept], weights[kept]
    return frame, y, sample_weight, group, group_labels


def checked_constraint(estimator) -> tuple[str, Fraction]:
    if estimator.fairness is None:
        raise ValueError("sensitive= is read with a fairness constraint only: pass fairness= (one of "
                         "'statistical_parity', 'equal_opportunity', 'predictive_equality', 'equalized_odds')")
    return check_metric(estimator.fairness), check_max_unfairness(estimator.max_unfairness)


def fit_fair(estimator, X, y, sample_weight, sensitive, regularization: float, budget: Budget):
    """Fit ``estimator`` (a RuleListClassifier) under its fairness constraint, within ``budget``."""
    metric, eps = checked_constraint(estimator)
    if estimator.refine:
        raise ValueError("refine=True is not available with fairness=: pass thresholds='both' for the larger space")
    frame, y, sample_weight, group, group_labels = rows_and_groups(X, y, sample_weight, sensitive)
    codes, weights = estimator._prepare(frame, y, sample_weight, 0.0, budget)
    if len(estimator.classes_) != 2:
        raise ValueError(f"a fairness constraint compares the rates of one class: the target needs two classes, "
                         f"it has {len(estimator.classes_)}")
    budget.enter("search")
    estimator._take(Space.every(estimator.mined_antecedents_, estimator._mining_card()).fitted())  # every one
    # the captures as bytes, by row and by signature (as many as the rows at most), and the signatures'
    # key, a copy of them as bits (numpy's unique then sorts it)
    n_antecedents = len(estimator.antecedents_)
    budget.require("fair search captures", 2 * n_antecedents * len(codes) + 2 * len(codes) * ((n_antecedents + 7) // 8),
                   "the fair search's copy of the captures")
    captures = bitset.unpack(estimator.antecedents_.bits, len(codes)) if n_antecedents else \
        np.zeros((0, len(codes)), dtype=bool)
    settings = FairListSettings(regularization, metric, eps, estimator.max_rules, estimator.max_nodes)
    result = FairListSolver(captures, codes, group, weights, settings=settings, budget=budget).solve()
    prefix, labels = list(result.solution), list(result.details["labels"])
    predicted = list_predictions(captures, prefix, labels)
    achieved = exact_unfairness(codes, group, weights, predicted, metric)
    estimator.certificate_ = certificate = result.certificate
    certificate.counters.update(fairness=metric, max_unfairness=str(eps), unfairness=str(achieved),
                                **confusion_counters(codes, group, weights, predicted, group_labels),
                                antecedents=len(estimator.antecedents_), fit_time=budget.elapsed())
    estimator.antecedent_indices_ = prefix
    estimator.rule_list_ = estimator._rule_list(codes, weights, prefix, labels=labels)
    estimator.fairness_ = {"metric": metric, "max_unfairness": float(eps), "groups": group_labels,
                           "unfairness": float(achieved)}
    return estimator


def confusion_counters(y, group, weights, predicted, group_labels) -> dict:
    """Each group's name (``sensitive_group_0``, ``_1``) and confusion counts (weights summed:
    ``group_0_true_positives`` ...) of the returned list, what proves it feasible (flat: a certificate's
    counters are names and numbers)."""
    positive, total = exact_cells(y, group, weights, predicted)
    counters = {}
    for g, label in enumerate(group_labels):
        tp, fp = positive[g][1], positive[g][0]
        counters[f"sensitive_group_{g}"] = str(label)
        counters.update({f"group_{g}_true_positives": float(tp), f"group_{g}_false_positives": float(fp),
                         f"group_{g}_false_negatives": float(total[g][1] - tp),
                         f"group_{g}_true_negatives": float(total[g][0] - fp)})
    return counters
