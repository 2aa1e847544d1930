"""The rule sets' parameters, declared once (:mod:`optrules.parameters`): the estimator checks them, the
command line and the web form are made from them. A light module: the front ends read it without
importing column generation."""

from __future__ import annotations

from ..parameters import (
    CLASS_WEIGHT,
    COMMON_PARAMETERS,
    FAIRNESS,
    MAX_UNFAIRNESS,
    POS_LABEL,
    RANDOM_STATE,
    Declared,
    Interval,
    old_name,
    with_defaults,
)

#: conditions per clause: the rule sets' features per rule (no "auto": column generation prices clauses of
#: every length up to it at once)
MAX_CONDITIONS = Declared("max_card", "conditions per clause, at most", 5, Interval(1, None, whole=True))
REGULARIZATION = Declared("regularization", "lambda: the price of one unit of complexity (a clause, or a condition), "
                          "a share of the (weighted) training rows", 0.0, Interval(0, None), symbol="lambda")
#: the rule sets' parameters
RULE_SET_PARAMETERS = COMMON_PARAMETERS + (
    Declared("complexity", "bound on clauses + conditions", 30.0, Interval(0, None), none=True, none_means="no bound"),
    MAX_CONDITIONS,
    Declared("cnf", "learn a CNF (AND of ORs) instead of a DNF", False, flag=True),
    POS_LABEL,
    REGULARIZATION,
    CLASS_WEIGHT,
    Declared("pricing_time_limit", "seconds for the first exact pricing of each set of duals", 30.0,
             Interval(0, None, "neither"), none=True, none_means="until it proves or finds"),
    Declared("beam_width", "width of the pricing beam search", 10, Interval(1, None, whole=True)),
    Declared("exact_pricing", "when the beam finds nothing, price exactly: by enumeration (True) or the pricing IP",
             True, options=("enumeration", "ip"), flag=True),
    Declared("max_pricing_samples", "the beam prices on a sample of at most this many rows", 5000,
             Interval(1, None, whole=True)),
    Declared("max_pricing_features", "the beam prices on at most this many features", 2000,
             Interval(1, None, whole=True)),
    *with_defaults((RANDOM_STATE,), random_state=0),
    Declared("min_support", "share of the rows a category must hold for to become a feature", 0.005,
             Interval(0, 0.5, "left")),
    FAIRNESS,
    MAX_UNFAIRNESS,
    old_name(MAX_CONDITIONS, "max_degree"),
    old_name(REGULARIZATION, "penalty", " (in weighted mistakes per unit of complexity, where regularization is a "
             "share of the weighted training rows)"),
)
