"""The scikit-learn estimator of certifiably optimal rule lists."""

from __future__ import annotations

import math

import numpy as np
from sklearn.base import clone

from ..base import DEFAULT_TIME_LIMIT, RuleModelEstimator, as_names
from ..budget import Budget, check_budget_values
from ..data import bitset
from ..data.groups import GROUPING, GroupingStopped, grouping_bytes
from ..parameters import check_parameters
from ..staged import Space, StagedListSearch
from .cluster import check_cluster_options, cluster_search, current_client
from .parameters import RULE_LIST_PARAMETERS
from .prefix import rule_list_from_prefix
from .problem import Problem, check_regularization
from .rashomon import check_epsilon, enumerate_rashomon
from .rashomon_set import RashomonSet
from .requirements import Requirements
from .search import Ablation, search, unmined_result


class RuleListClassifier(StagedListSearch, RuleModelEstimator):
    """Certifiably optimal rule list (CORELS): minimises mistakes/N + regularization * (number of rules).

    Two or more classes (each rule predicts the majority class of what it captures); with
    ``sample_weight`` or ``class_weight`` mistakes are weighted and N is the total weight.

    The data are binarized (:class:`~optrules.data.binarize.Binarizer`), antecedents mined (conjunctions
    of up to ``max_card`` features with support in [min_support, 1 - min_support]) and the
    branch-and-bound search run until the optimum is certified or a budget runs out.

    Parameters
    ----------
    regularization : lambda in [0, 1), the price of one rule in training accuracy.
    max_card : features per antecedent, at most; ``"auto"`` (default): the ladder of nested spaces
        (:mod:`optrules.ladder`: the single literals the reference chose, every single literal, pairs),
        each rung searched from the best list so far, climbed after the one below certified and ended
        when its lower bound would not reach the incumbent within the budget; the model is the best list
        found, ``certificate_.statement`` says what is proven of it, ``ladder_`` lists the rungs and
        ``max_card_`` is the best rung's. A number searches conjunctions of up to that many literals to
        the end of the budget.
    min_support : minimum antecedent support for mining; defaults to ``regularization`` (Thm 10: rarer
        antecedents can never appear in an optimal list, so this loses nothing).
    policy : queue order: ``lower_bound`` (default), ``objective``, ``curiosity``, ``bfs``, ``dfs``.
    map_type : symmetry-aware map keyed on the antecedent set (``prefix``, Cor 16), on the captured set
        (``captured``, Thm 15), or ``none``; ``auto`` (default): ``captured`` when the capture vectors
        over groups of identical samples take at most 64 words and no antecedent is required, else
        ``prefix``.
    max_antecedents : at most this many antecedents are mined (``"auto"``: 2,000, fewer for very many
        samples; None: no bound); when more qualify, the support floor of the longest conjunctions is
        raised (the most frequent are kept) and ``antecedents_.report`` says so.
    max_nodes, time_limit, max_memory : budgets (prefixes expanded; seconds for the whole fit, from
        binarizing to the end of the search, default 120, None for no limit; bytes of everything the fit
        holds: binarized table, antecedents, queue, maps, trace; default 1 GiB or half the machine's). On any, and on
        Ctrl-C, the best list found is returned and ``certificate_`` says how far from optimal it can be.
    verbose : show live progress; or a callable ``(trace, event)`` called after each slice of the
        search (``event``: a :class:`~optrules.solve.ProgressEvent`), and with an empty trace between the
        stages before it (returning ``optrules.STOP`` stops the fit, which returns its best list; so does
        raising ``KeyboardInterrupt`` in it).
    class_weight : None, "balanced" (weights inversely proportional to class frequencies) or
        {label: weight}; multiplies ``sample_weight`` given to ``fit``.
    use_minimum_support, use_accurate_support, use_excessive_support, use_lookahead,
    use_equivalent_points : ablation switches for Theorems 10, 11, 21, Lemma 2 and Theorem 20.
    categorical, bins, thresholds, n_thresholds, negations, missing, identifiers : passed to the Binarizer
        (``identifiers="drop"`` leaves out columns that identify rows, with a warning). Defaults: numeric
        thresholds where a boosted reference ensemble splits (``thresholds="boosted"``; ``"quantile"``:
        ``n_thresholds`` quantiles), negated literals too (``negations=True``), missing values as their
        own literal (``missing="category"``).
    refine : after the certified optimum over the boosted space (``thresholds="boosted"``), search the
        larger space of quantile and reference thresholds together (``thresholds="both"``; pairs of
        literals, or ``max_card`` if a number) from that list: it is the search's first incumbent, so
        the search never returns a worse list and proves what the budget allows over the larger space.
        ``certificate_`` then covers the larger space, and ``certificate_.counters["guided_space"]``
        says what the first search certified. (Default False: the boosted space alone.)
    n_jobs : threads the search (and :meth:`rashomon_set`'s enumeration) runs on, as scikit-learn counts them
        (-1: every core, -2: all but one);
        None (default): every core once the search has run 0.2 s (a shorter one stays on one thread, and
        so does one beside another fit holding the threads). The search is the same for every value:
        the same prefixes expanded, list and certificate; only a time budget ends it elsewhere.
    greedy_start : seed the search with the greedy list (a good first incumbent prunes early; the
        certificate does not depend on it). Not scikit-learn's ``warm_start``: every fit starts afresh.
    max_rules : domain constraint: lists of at most this many rules (default: no limit); the
        certificate is then optimal over those lists.
    forbidden : domain constraint: features (``"sex=Male"``) or columns (``"race"``: every feature of
        it) no rule may use; the certificate is optimal over the lists that avoid them.
    required : domain constraint: features or columns (at most 16) each of which some rule must use;
        the certificate is optimal over the lists that use them all. Conjunctions with a required
        feature escape ``min_support`` (Theorem 10's floor holds only for rules a list can do
        without; ``max_antecedents`` still bounds them all), categories however rare get a feature,
        and the ``captured`` map is refused (it would merge prefixes that meet different
        requirements). With ``greedy_start``, a tenth of the budget first searches without the
        requirements: its lists, completed, are the first incumbents and its bound a lower bound.

    Attributes
    ----------
    rule_list_ : the certified :class:`~optrules.models.RuleList`.
    certificate_ : its :class:`~optrules.certificate.Certificate` (optimal, or the gap left by a budget).
    ladder_ : with ``max_card="auto"``, each rung of the ladder (:meth:`optrules.ladder.Ladder.summary`).
    classes_, n_features_in_, feature_names_in_ : as in scikit-learn.
    binarizer_, antecedents_ : the fitted binarizer and the mined antecedents.
    antecedent_indices_ : the list's antecedents, as indices into ``antecedents_``.
    """

    def __init__(
        self,
        regularization: float = 0.01,
        max_card="auto",
        min_support: float | None = None,
        policy: str = "lower_bound",
        map_type: str = "auto",
        max_nodes: int | None = None,
        time_limit: float | None = DEFAULT_TIME_LIMIT,
        max_memory: int | None = None,
        verbose: bool = False,
        greedy_start: bool = True,
        class_weight=None,
        use_minimum_support: bool = True,
        use_accurate_support: bool = True,
        use_excessive_support: bool = True,
        use_lookahead: bool = True,
        use_equivalent_points: bool = True,
        categorical=None,
        bins=None,
        thresholds: str = "boosted",
        n_thresholds: int = 9,
        negations: bool = True,
        missing: str = "category",
        identifiers: str = "drop",
        max_antecedents="auto",
        max_rules: int | None = None,
        forbidden=None,
        required=None,
        refine: bool = False,
        n_jobs: int | None = None,
        fairness: str | None = None,
        max_unfairness: float = 0.05,
    ):
        self.regularization = regularization
        self.max_card = max_card
        self.min_support = min_support
        self.policy = policy
        self.map_type = map_type
        self.max_nodes = max_nodes
        self.time_limit = time_limit
        self.max_memory = max_memory
        self.verbose = verbose
        self.greedy_start = greedy_start
        self.class_weight = class_weight
        self.use_minimum_support = use_minimum_support
        self.use_accurate_support = use_accurate_support
        self.use_excessive_support = use_excessive_support
        self.use_lookahead = use_lookahead
        self.use_equivalent_points = use_equivalent_points
        self.categorical = categorical
        self.bins = bins
        self.thresholds = thresholds
        self.n_thresholds = n_thresholds
        self.negations = negations
        self.missing = missing
        self.identifiers = identifiers
        self.max_antecedents = max_antecedents
        self.max_rules = max_rules
        self.forbidden = forbidden
        self.required = required
        self.refine = refine
        self.n_jobs = n_jobs
        self.fairness = fairness
        self.max_unfairness = max_unfairness

    def _ablation(self) -> Ablation:
        return Ablation(
            minimum_support=self.use_minimum_support,
            accurate_support=self.use_accurate_support,
            excessive_support=self.use_excessive_support,
            lookahead=self.use_lookahead,
            equivalent_points=self.use_equivalent_points,
        )

    multiclass = True
    _parameter_table = RULE_LIST_PARAMETERS

    def fit(self, X, y, sample_weight=None, sensitive=None):
        """Fit the certified optimal list. With ``fairness=``: the best list whose metric between the two
        groups of ``sensitive`` (a column name of ``X``, which is then not a feature, or one value a row) is
        at most ``max_unfairness`` (:mod:`optrules.fairness`)."""
        check_parameters(self)
        regularization = check_regularization(self.regularization)
        if self.refine and self.thresholds != "boosted" and self.fairness is None and sensitive is None:
            raise ValueError(f"refine=True starts from the boosted space: thresholds='boosted', not {self.thresholds!r}")
        with self._fitting() as fitting:
            if self.fairness is not None or sensitive is not None:
                from ..fairness.fit import fit_fair

                fit_fair(self, X, y, sample_weight, sensitive, regularization, fitting.budget)
            elif self.refine:
                self._refined(X, y, sample_weight, regularization, fitting.budget, fitting.progress)
            else:
                self._search(self._prepare(X, y, sample_weight, regularization, fitting.budget),
                             budget=fitting.budget, progress=fitting.progress)
        return self

    def _refined(self, X, y, sample_weight, regularization: float, budget: Budget, progress):
        """``refine=True``: certify the boosted space's optimum, then search the larger space (quantile and
        reference thresholds) from it, within what is left of the budget."""
        guided = clone(self).set_params(refine=False, verbose=False)
        guided._search(guided._prepare(X, y, sample_weight, regularization, budget), budget=budget, progress=progress)
        fitted = {name: value for name, value in vars(guided).items() if name not in self.get_params()}
        if not guided.certificate_.is_optimal or budget.stopped():  # no proven start: the boosted space's fit
            self.__dict__.update(fitted)
            return self
        prepared = self._prepare(X, y, sample_weight, regularization, budget, thresholds="both")
        space = Space.every(self.mined_antecedents_, self._mining_card())
        start = self._same_captures(guided, space.antecedents)
        self._take(self._search_space(prepared, space, None if start is None else [start], budget, progress))
        first = guided.certificate_
        self.certificate_.counters["guided_space"] = (
            f"certified optimum over the boosted space ({len(guided.antecedents_):,} antecedents): objective "
            f"{first.objective:.9f}" + ("" if start is not None else
                                         "; its list is not among these antecedents, so it did not start this search"))
        return self

    @staticmethod
    def _same_captures(fitted, antecedents) -> list | None:
        """The list of another fit on the same rows (``fitted``) as indices into ``antecedents``, each
        antecedent matched by the rows it captures; None when one has no match."""
        index = {}
        for a in range(len(antecedents)):
            index.setdefault(antecedents.bits[a].tobytes(), a)
        found = [index.get(fitted.antecedents_.bits[a].tobytes()) for a in fitted.antecedent_indices_]
        return None if any(a is None for a in found) else [int(a) for a in found]

    def _prepare(self, X, y, sample_weight, smallest_regularization: float, budget: Budget | None = None,
                 thresholds: str | None = None):
        """Binarize and mine (for lambda down to ``smallest_regularization``; numeric thresholds as
        ``thresholds`` says, else as the estimator's); return ``(codes, weights)``. A regularization
        path mines once, at its smallest lambda, and searches every lambda on that."""
        frame, codes, sample_weight = self._weighted_rows(*self._target(X, y), sample_weight)
        weights = self._sample_weights(codes, sample_weight)
        min_support = self._default_min_support(smallest_regularization, weights)
        # Thm 10: a category rarer than the minimum support can be in no antecedent of an optimal list
        # (but a required one may be, so with requirements every category gets its feature)
        rarest = 1 if as_names(self.required) else math.ceil(min_support * len(codes) - 1e-9)
        features = self._binarize(frame, codes, rarest, budget, sample_weight, packed=True, thresholds=thresholds)
        # the supports from lambda are those of Thms 10 and 21: none there, the list of no rule is optimal
        self._mine(features, codes, min_support, budget=budget, forbidden=self.forbidden, required=self.required,
                   none_is_an_answer=self.min_support is None)
        return codes, weights

    def _search_space(self, prepared, space: Space, initial_prefix=None, budget: Budget | None = None, progress=None,
                      max_nodes: int | None = None) -> dict:
        """The fitted attributes of the certified search over ``space`` (every mined antecedent, or the single
        literals among them)."""
        codes, weights = prepared
        antecedents = space.antecedents
        own_progress = progress is None
        progress = self._progress() if own_progress else progress
        try:
            budget = budget if budget is not None else self._budget(progress)
            mined = self._mined(antecedents)
            if not len(antecedents):  # not mined (the budget ended while mining's kernels compiled, or
                # while it mined the first level), or no antecedent within the supports an optimal list's may have
                report = antecedents.report
                result = unmined_result(codes, weights, len(self.classes_), check_regularization(self.regularization),
                                        budget, proven=mined and not (report is not None and report.stopped))
            else:
                result = self._searched(antecedents, codes, weights, mined, max_nodes, budget, progress, initial_prefix)
        finally:
            if own_progress:
                self._close(progress)
        certificate = result.certificate
        certificate.counters["antecedents"] = len(antecedents)
        certificate.counters["fit_time"] = budget.elapsed()
        return {**space.fitted(), "_training": (codes, weights),  # (what rashomon_set searches again)
                "rule_list_": self._rule_list(codes, weights, result.solution, antecedents=antecedents),
                "antecedent_indices_": result.solution, "certificate_": certificate}

    def _searched(self, antecedents, codes, weights, mined: bool, max_nodes, budget: Budget, progress, initial_prefix):
        """The search's result over mined ``antecedents`` (the list of no rule when the rows' grouping is
        stopped)."""
        budget.require("grouping", grouping_bytes(antecedents.bits, len(codes)), GROUPING)
        # not mined, but for the required features: no equivalent points (grouping's kernel did
        # not compile either, and the groups of these antecedents bound no other list), so the
        # search, whose budget has ended, returns the shortest admissible list, bound lambda a rule
        try:
            problem = Problem.from_antecedents(antecedents, codes, check_regularization(self.regularization),
                                               minor=None if mined else np.zeros(len(codes), bool),
                                               sample_weight=weights, n_classes=len(self.classes_),
                                               should_stop=budget.stopped)
        except GroupingStopped:  # a tall table's budget ended while its rows were grouped: no search
            return unmined_result(codes, weights, len(self.classes_), check_regularization(self.regularization), budget)
        return self._search_on(problem, self.max_nodes if max_nodes is None else max_nodes, budget, progress,
                               initial_prefix, antecedents)

    def _search_on(self, problem: Problem, max_nodes, budget: Budget, progress, initial_prefix, antecedents):
        """The search on this machine, or on the cluster of an :func:`~optrules.corels.cluster.on_cluster`
        block."""
        options = dict(warm_start=self.greedy_start, initial_prefix=initial_prefix, progress=progress, budget=budget,
                       max_length=self.max_rules)
        client = current_client()
        if client is None:
            return search(problem, policy=self.policy, map_type=self.map_type, ablation=self._ablation(),
                          max_nodes=max_nodes, required=self._requirements(antecedents), n_jobs=self.n_jobs, **options)
        check_cluster_options(self.policy, self.map_type, self._ablation(), max_nodes, self._requirements(antecedents))
        return cluster_search(problem, client, **options)

    def rashomon_set(self, epsilon: float, relative: bool = False, max_nodes: int | None = None,
                     time_limit: float | None = DEFAULT_TIME_LIMIT, max_memory: int | None = None) -> RashomonSet:
        """Every rule list over ``antecedents_`` whose objective is within ``epsilon`` of the optimum R*
        (``relative=True``: epsilon is a share of R*), as a :class:`~optrules.corels.rashomon_set.RashomonSet`,
        certified complete unless a budget (``max_nodes``, ``time_limit`` seconds, ``max_memory`` bytes)
        or Ctrl-C stops it first; then it says below which objective it is complete.

        Lists with ``max_rules`` rules at most, with a rule on each ``required`` feature or column (R* is
        then the best such list's); ``forbidden`` features never appear (they are not among the
        antecedents). Only antecedents the fit mined can appear: with the default
        ``min_support`` (lambda) a member's rules, which classify at least N (lambda - epsilon) samples
        correctly, may need rarer ones when epsilon > 0; fit with ``min_support=max(0, lambda -
        epsilon)`` (``mined_all_rules`` says whether that holds).
        """
        self._fitted_estimator()
        if self.fairness is not None:
            raise ValueError("the Rashomon set of a fit under a fairness constraint is not available yet: fit without "
                             "fairness= for the set of every near-optimal list (its fairness can then be read from "
                             "each member's predictions)")
        if not hasattr(self, "_training"):
            raise ValueError("a pickled estimator keeps neither its training labels nor its capture vectors (they "
                             "grow with the rows): fit again to search its Rashomon set")
        if not self._mined():
            raise ValueError("the fit mined no antecedent (its budget ended while mining's kernels compiled, in a "
                             "first fit after install): fit again, or run `optrules compile` first")
        if not len(self.antecedents_):
            raise ValueError("the fit mined no antecedent: none has the support lambda allows an optimal list's, so "
                             "its list has no rule; the lists within epsilon may have rarer ones: fit with "
                             "min_support=max(0, lambda - epsilon)")
        epsilon = check_epsilon(epsilon)
        check_budget_values(time_limit, max_memory, max_nodes)
        codes, weights = self._training
        regularization = check_regularization(self.regularization)
        problem = Problem.from_antecedents(self.antecedents_, codes, regularization, sample_weight=weights,
                                           n_classes=len(self.classes_))
        upper_bound = self.certificate_.objective
        if relative:
            epsilon *= upper_bound
        # a callable ``verbose`` is asked whether to stop, as during the fit (the web app's cancel)
        budget = self._budget(self.verbose if callable(self.verbose) else None, (time_limit, max_memory))
        with budget.catch_interrupt():
            enumeration = enumerate_rashomon(problem, epsilon, upper_bound, max_length=self.max_rules,
                                             max_nodes=max_nodes, budget=budget, requirements=self._requirements(),
                                             n_jobs=self.n_jobs)
        n = len(codes)

        def rule_list(prefix):
            return self._rule_list(codes, weights, prefix)

        def training_captures(antecedents):
            return bitset.unpack(self.antecedents_.bits[np.asarray(antecedents, dtype=np.int64)], n)

        def capture_frame(X, antecedents):
            frame = self._check_predict_input(X)
            conditions = [self.antecedents_.conditions(a) for a in antecedents]
            binary = self.binarizer_.transform_frame(frame, sorted({c for conds in conditions for c in conds}))
            captures = np.ones((len(antecedents), len(frame)), dtype=bool)
            for row, conds in zip(captures, conditions):
                for condition in conds:
                    row &= binary[condition].to_numpy(dtype=bool)
            return captures

        result = RashomonSet(enumeration, self._conditions(), self.classes_, rule_list, capture_frame,
                             training_captures, regularization)
        report = self.antecedents_.report
        # every conjunction a member may use (support >= N (lambda - epsilon)) was mined, none left out by a
        # raised floor or a stop (weights: the floor is on weight shares; not claimed)
        result.mined_all_rules = (weights is None and report is not None and not report.stopped and not report.notes
                                  and report.min_support <= max(0.0, regularization - epsilon) + 1e-12)
        return result

    def _requirements(self, antecedents=None) -> Requirements | None:
        """The ``required`` names as groups of ``antecedents`` (else ``antecedents_``): those with a condition
        on a feature the name names (itself, or any feature of the named column)."""
        names, masks = self._named_features(self.required, "required")
        if not names:
            return None
        antecedents = self.antecedents_ if antecedents is None else antecedents
        index = {name: j for j, name in enumerate(self.binarizer_.feature_names_)}
        groups = [[a for a in range(len(antecedents))
                   if any(mask[index[c]] for c in antecedents.conditions(a))] for mask in masks]
        for name, group in zip(names, groups):
            if not group:
                raise ValueError(f"required {name!r} is in no antecedent: its features hold for no training row "
                                 "or were left out by the bound on antecedents (max_antecedents)")
        requirements = Requirements.from_groups(groups, len(antecedents), names)
        requirements.check_length(self.max_rules, "max_rules")
        return requirements

    def _rule_list(self, codes, weights, prefix, labels=None, antecedents=None):
        """The rule list of ``prefix`` over ``antecedents`` (else ``antecedents_``; only its antecedents'
        capture vectors are unpacked); each rule predicts its majority, or its class in ``labels`` (a
        constrained list's: each rule's, then the default's)."""
        antecedents = self.antecedents_ if antecedents is None else antecedents
        rows = bitset.unpack(antecedents.bits[np.asarray(prefix, dtype=np.int64)], len(codes))
        conditions = [antecedents.conditions(a) for a in prefix]
        return rule_list_from_prefix(rows, codes, range(len(prefix)), conditions, self.classes_, self.binarizer_,
                                     sample_weight=weights, labels=labels)

    def _mining_card(self) -> int:
        """As every family's; with a fairness constraint ``"auto"`` mines single literals (the ladder's
        rungs are certified with bounds the constraint does not keep: :mod:`optrules.fairness.fit`)."""
        if self.fairness is not None and self.max_card == "auto":
            return 1
        return super()._mining_card()

    def __getstate__(self) -> dict:
        # a pickled estimator weighs what its model weighs: the training labels and weights kept for
        # rashomon_set grow with the rows (and the capture vectors it needs with them are not pickled)
        state = dict(super().__getstate__())  # (a copy: object's own is the instance's __dict__)
        state.pop("_training", None)
        return state

    def __copy__(self):
        # a shallow copy (the web app's, one per Rashomon run) shares the training rows and can search
        copied = type(self).__new__(type(self))
        copied.__dict__.update(self.__dict__)
        return copied

    def _sample_weights(self, codes, sample_weight):
        """Per-sample weights (the checked ``sample_weight`` x class weight), or None for unit weights."""
        if sample_weight is None and self.class_weight is None:
            return None
        weights = np.ones(len(codes)) if sample_weight is None else sample_weight
        return weights * self._class_weights(codes)[codes]

    def _default_min_support(self, regularization: float, weights) -> float:
        """Thm 10: an antecedent of an optimal list captures a weight >= lambda * W, so one whose share
        of samples is below lambda * W / (N * largest weight) can be left out without losing the optimum."""
        if self.min_support is not None:
            return float(self.min_support)
        share = regularization if weights is None else (
            regularization * float(weights.sum()) / (len(weights) * float(weights.max())))
        # at most a half, mining's widest floor: above lambda = 1/2 the empty list is optimal anyway (a rule
        # corrects at most the smaller of the majority's share and the rest), and the mined window
        # [share, 1 - share] would be empty
        return min(share, 0.5)
