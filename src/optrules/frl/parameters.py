"""The falling rule lists' parameters, declared once (:mod:`optrules.parameters`): the estimator checks
them, the command line and the web form are made from them. A light module: the front ends read it
without importing the search."""

from __future__ import annotations

from ..parameters import (
    COMMON_PARAMETERS,
    MAX_ANTECEDENTS,
    MAX_CARD,
    N_JOBS,
    POS_LABEL,
    RANDOM_STATE,
    Declared,
    Interval,
    old_name,
    with_defaults,
)
from . import DEFAULT_C, DEFAULT_W

REGULARIZATION = Declared("regularization", "lambda: the price of one rule, a share of the (weighted) training rows",
                          DEFAULT_C, Interval(0, None), symbol="lambda")
#: the falling lists' parameters
FALLING_LIST_PARAMETERS = with_defaults(COMMON_PARAMETERS, negations=False) + (
    Declared("w", "weight of a positive (a missed positive costs w, a false alarm 1)", DEFAULT_W,
             Interval(0, None, "neither")),
    REGULARIZATION,
    Declared("C1", "price of rising probabilities, with soft", 0.5, Interval(0, None)),
    Declared("soft", "learn a softly falling list", False, flag=True),
    Declared("method", "certified (branch and bound, with a certificate) or montecarlo (the paper's randomized "
             "search)", "certified", options=("certified", "montecarlo")),
    Declared("iterations", "Monte-Carlo rounds", 3000, Interval(1, None, whole=True)),
    Declared("prob_terminate", "Monte-Carlo: chance a list ends after each rule", 0.01, Interval(0, 1, "left")),
    Declared("curiosity_weight", "Monte-Carlo: weight of curiosity in choosing a rule", 0.8, Interval(0, 1)),
    RANDOM_STATE,
    Declared("min_class_support", "antecedents hold for this share of a class at least", 0.1, Interval(0, 1)),
    MAX_CARD,
    MAX_ANTECEDENTS,
    POS_LABEL,
    N_JOBS,
    old_name(REGULARIZATION, "C"),
)
