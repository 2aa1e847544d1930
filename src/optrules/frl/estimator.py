"""The scikit-learn estimator of falling rule lists."""

from __future__ import annotations

import math

import numpy as np

from ..base import DEFAULT_TIME_LIMIT, RuleModelEstimator
from ..budget import Budget
from ..parameters import DEPRECATED, check_parameters, value_of
from ..staged import Space, StagedListSearch
from . import DEFAULT_C, DEFAULT_W
from .parameters import FALLING_LIST_PARAMETERS


class FallingRuleListClassifier(StagedListSearch, RuleModelEstimator):
    """Falling rule list (Chen and Rudin, AISTATS 2018): probabilities that fall down the list, chosen to
    minimise the cost-sensitive risk (a missed positive costs ``w``, a false alarm 1) + lambda * (rules),
    + C1 * (how much the list fails to fall) when ``soft``.

    Parameters
    ----------
    w : weight of a positive; a sample is predicted positive when its rule's probability > 1/(1+w)
        (default 1: a missed positive costs as much as a false alarm).
    regularization : lambda, the paper's C: the price of a rule, a share of the (weighted) training rows
        (default 0.001: a rule must fix 0.1% of the rows), as for rule lists. ``C``, its old name, is
        accepted until optrules 0.3 with a FutureWarning.
    C1 : price of rising probabilities (softly falling lists only).
    soft : learn a softly falling list (Program 5.1) instead of a falling one (Program 2.9).
    method : ``certified`` (branch-and-bound, optimal with a certificate, the default) or
        ``montecarlo`` (the paper's randomized search: ``iterations``, ``prob_terminate``,
        ``curiosity_weight``, ``random_state``). ``certified`` starts from a short Monte-Carlo run.
    max_nodes, time_limit, max_memory, verbose : budgets (the time limit, 120 s by default, covers the
        whole fit, the Monte-Carlo warm start included) and progress, as for rule lists.
    n_jobs : threads the certified search runs on, as for rule lists (None, the default: every core once
        the search has run 0.2 s); the search, its list and its certificate are the same for every value.
    min_class_support : antecedents must hold for at least this share of the positives or of the
        negatives (the paper: 10%); ``max_card``: items per antecedent (``"auto"``, the default: the ladder of
        nested spaces, as for rule lists: :mod:`optrules.ladder`; ``ladder_`` and ``max_card_`` say what it did);
        ``max_antecedents``: at most
        this many (``"auto"``, as for rule lists).
    categorical, bins, thresholds, n_thresholds, negations, missing, identifiers : passed to the Binarizer
        (default: numeric thresholds where a boosted reference ensemble splits, ``thresholds="boosted"``;
        ``"quantile"``: ``n_thresholds`` quantiles).
    pos_label : the class whose probability falls down the list and whose misses cost ``w`` (default:
        the second of the sorted classes).

    Attributes
    ----------
    rule_list_ : the :class:`~optrules.models.FallingRuleList`.
    objective_ : its objective (weighted risk + lambda per rule (+ C1 x rise)).
    certificate_ : its :class:`~optrules.certificate.Certificate`; None for ``montecarlo``, which proves
        nothing.
    classes_, binarizer_, antecedents_, n_features_in_, feature_names_in_ : as for rule lists.
    """

    _parameter_table = FALLING_LIST_PARAMETERS
    why_binary = "a falling rule list gives the probability of one class (pos_label), falling down the list"

    def __init__(
        self,
        w: float = DEFAULT_W,
        regularization: float = DEFAULT_C,
        C1: float = 0.5,
        soft: bool = False,
        method: str = "certified",
        iterations: int = 3000,
        prob_terminate: float = 0.01,
        curiosity_weight: float = 0.8,
        random_state=None,
        max_nodes: int | None = None,
        time_limit: float | None = DEFAULT_TIME_LIMIT,
        max_memory: int | None = None,
        verbose: bool = False,
        min_class_support: float = 0.1,
        max_card="auto",
        categorical=None,
        bins=None,
        thresholds: str = "boosted",
        n_thresholds: int = 9,
        negations: bool = False,
        missing: str = "category",
        identifiers: str = "drop",
        max_antecedents="auto",
        pos_label=None,
        n_jobs: int | None = None,
        C=DEPRECATED,
    ):
        self.w = w
        self.regularization = regularization
        self.C = C
        self.C1 = C1
        self.soft = soft
        self.method = method
        self.iterations = iterations
        self.prob_terminate = prob_terminate
        self.curiosity_weight = curiosity_weight
        self.random_state = random_state
        self.max_nodes = max_nodes
        self.time_limit = time_limit
        self.max_memory = max_memory
        self.verbose = verbose
        self.min_class_support = min_class_support
        self.max_card = max_card
        self.categorical = categorical
        self.bins = bins
        self.thresholds = thresholds
        self.n_thresholds = n_thresholds
        self.negations = negations
        self.missing = missing
        self.identifiers = identifiers
        self.max_antecedents = max_antecedents
        self.pos_label = pos_label
        self.n_jobs = n_jobs

    def fit(self, X, y, sample_weight=None):
        """Learn the list from ``X`` and ``y``; ``sample_weight`` (one non-negative number a row) makes
        every count in the objective a weight sum (a row of weight 2 counts as two rows)."""
        check_parameters(self)
        with self._fitting() as fitting:
            self._fit(X, y, sample_weight, fitting.budget, fitting.progress)
        return self

    def _fit(self, X, y, sample_weight, budget: Budget, progress) -> None:
        frame, codes, weights = self._weighted_rows(*self._target(X, y), sample_weight)
        describes = self._described_class()
        y01 = (codes == describes).astype(codes.dtype)  # 1: the class whose probability falls
        # a conjunction must hold for min_class_support of the positives or of the negatives: rarer
        # categories can be in none
        smaller_class = min(int(y01.sum()), int(len(y01) - y01.sum()))
        features = self._binarize(frame, codes, math.ceil(self.min_class_support * smaller_class - 1e-9), budget, weights,
                                  packed=True)
        self._mine(features, y01, 0.0, self.min_class_support, budget)
        prepared = (y01, weights, describes)
        if self.method == "montecarlo":  # proves nothing: it searches every mined antecedent
            budget.enter("search")
            self._take(self._search_space(prepared, Space.every(self.mined_antecedents_, self._mining_card()), None,
                                          budget, progress))
        else:
            self._search(prepared, None, budget, progress)

    def _search_space(self, prepared, space: Space, initial_prefix=None, budget: Budget | None = None, progress=None,
                      max_nodes: int | None = None) -> dict:
        """The fitted attributes of the search over ``space`` (every mined antecedent, or the single literals
        among them): a short Monte-Carlo run for a first list (unless ``initial_prefix``, a list of indices
        into the space or several, gives it), then the certified search."""
        from ..bnb import unsearched_certificate
        from ..data import bitset
        from .objective import falling_rule_list, list_counts, objective

        y01, weights, describes = prepared
        antecedents, conditions = space.antecedents, self._conditions(space.antecedents)
        starts = [] if initial_prefix is None else ([initial_prefix] if len(initial_prefix) == 0 or np.isscalar(
            initial_prefix[0]) else list(initial_prefix))
        prefix, certificate = (tuple(starts[0]) if starts else ()), None
        if len(antecedents):
            prefix, certificate = self._searched(antecedents, conditions, y01, weights, prefix, not starts, budget,
                                                 progress, max_nodes)
        captures = bitset.unpack(antecedents.bits[np.asarray(prefix, dtype=np.int64)], len(y01))
        fitted_objective = objective(list_counts(captures, y01, range(len(prefix)), weights), self.w,
                                     value_of(self, "regularization"), self.C1, self.soft)
        if self.method == "certified" and certificate is None:
            # not mined (the budget ended while mining's kernels compiled): the list of no rule, bound 0
            certificate = unsearched_certificate(fitted_objective, 0.0, budget, 0, groups=0)
        if certificate is not None:
            certificate.counters["antecedents"] = len(antecedents)
            certificate.counters["fit_time"] = budget.elapsed()
        rule_list = falling_rule_list(captures, y01, range(len(prefix)), [conditions[a] for a in prefix], self.w,
                                      self.soft, self.classes_, self.binarizer_, describes=describes,
                                      sample_weight=weights)
        return {**space.fitted(), "antecedent_indices_": [int(a) for a in prefix], "objective_": fitted_objective,
                "certificate_": certificate, "rule_list_": rule_list}

    def _searched(self, antecedents, conditions, y01, weights, prefix, warm_start: bool, budget: Budget, progress,
                  max_nodes):
        """``(prefix, certificate)`` of the searches over mined ``antecedents``: the Monte-Carlo run (a warm
        start, unless ``prefix`` is given), then the certified search (no certificate: ``method="montecarlo"``)."""
        from ..bnb import compiled_in_time
        from .montecarlo import compile_montecarlo_kernels, montecarlo_search
        from .search import FRLProblem, certified_search

        problem = FRLProblem(None, y01, self.w, value_of(self, "regularization"), self.C1, conditions, weights,
                             bits=antecedents.bits)
        # the warm start of the certified search gets at most a tenth of the time left (its kernels
        # compile within the budget: a first fit after install may have no time for it)
        if warm_start and compiled_in_time(lambda: compile_montecarlo_kernels(weights is not None), budget):
            prefix = montecarlo_search(
                problem, self.soft, self.iterations if self.method == "montecarlo" else min(self.iterations, 100),
                self.prob_terminate, self.curiosity_weight, self.random_state,
                time_limit=None if self.method == "montecarlo" else budget.share(0.1), budget=budget,
            ).prefix
        if self.method != "certified":
            return prefix, None
        result = certified_search(problem, self.soft, max_nodes=self.max_nodes if max_nodes is None else max_nodes,
                                  initial_prefix=prefix, progress=progress, budget=budget, n_jobs=self.n_jobs)
        return result.solution, result.certificate

