"""The rule lists' parameters, declared once (:mod:`optrules.parameters`): the estimator checks them, the
command line and the web form are made from them. A light module: the front ends read it without
importing the search."""

from __future__ import annotations

from ..parameters import (
    CLASS_WEIGHT,
    COMMON_PARAMETERS,
    CONSTRAINT_PARAMETERS,
    FAIRNESS,
    MAX_ANTECEDENTS,
    MAX_CARD,
    MAX_UNFAIRNESS,
    N_JOBS,
    Declared,
    Interval,
)

#: the queue orders of the search (the kernel's codes follow this order)
POLICY_NAMES = ("lower_bound", "objective", "curiosity", "bfs", "dfs")
#: the symmetry-aware maps (the kernel's codes follow this order)
MAP_TYPE_NAMES = ("none", "prefix", "captured")

_ABLATION = "ablation switch: use {} (on by default; off only to measure what it saves)"
#: the rule lists' parameters
RULE_LIST_PARAMETERS = COMMON_PARAMETERS + (
    Declared("regularization", "lambda: the price of one rule in training accuracy", 0.01, Interval(0, 1, "left"),
             symbol="lambda"),
    MAX_CARD,
    Declared("min_support", "antecedent support floor", None, Interval(0, 0.5), none=True,
             none_means="lambda, Theorem 10's floor"),
    Declared("policy", "queue order", "lower_bound", options=POLICY_NAMES),
    Declared("map_type", "symmetry-aware map ('auto': captured on few groups of samples, else prefix)", "auto",
             options=("auto", *MAP_TYPE_NAMES)),
    Declared("greedy_start", "seed the search with the greedy list", True, flag=True),
    CLASS_WEIGHT,
    *(Declared(f"use_{name}", _ABLATION.format(what), True, flag=True) for name, what in (
        ("minimum_support", "Theorem 10"), ("accurate_support", "Theorem 11"), ("excessive_support", "Theorem 21"),
        ("lookahead", "Lemma 2"), ("equivalent_points", "Theorem 20"))),
    MAX_ANTECEDENTS,
    *CONSTRAINT_PARAMETERS,
    Declared("refine", "after the certified optimum over the boosted thresholds, search quantile and boosted "
             "thresholds together from it (the certificate covers that larger space)", False, flag=True),
    N_JOBS,
    FAIRNESS,
    MAX_UNFAIRNESS,
)
