"""scikit-learn estimators on top of the solvers."""

from __future__ import annotations

import math

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from .budget import Budget, check_budget_values
from .certificate import Trace
from .corels.prefix import rule_list_from_prefix
from .corels.problem import Problem, check_regularization, check_sample_weight
from .corels.search import Ablation, check_max_length, search
from .data import bitset
from .data.binarize import Binarizer
from .data.mine import mine_antecedents
from .data.validation import as_frame, check_target
from .frl import DEFAULT_C, DEFAULT_W


#: seconds a fit may take by default, like scikit-learn's ``max_iter``: a search that has not certified
#: its model by then returns it with its gap (``time_limit=None``: no limit)
DEFAULT_TIME_LIMIT = 120.0


class ModelViews:
    """The fitted model's table, explanations and exports, on the estimator (see
    :class:`optrules.models.Model`)."""

    def get_rules(self, prior: float | None = None, level: float = 0.95):
        """One row per rule, in order: condition, prediction, probability, training support and accuracy;
        with ``prior``, smoothed probabilities and credible intervals (:meth:`optrules.models.Model.get_rules`)."""
        return self._fitted_estimator().rule_list_.get_rules(prior, level)

    def explain(self, X, prior: float | None = None, level: float = 0.95):
        """The rule that decides each row of ``X``, with its prediction and training counts."""
        estimator = self._fitted_estimator()
        return estimator.rule_list_.explain(estimator._check_predict_input(X), prior, level)

    def to_sql(self, table: str = "data", dialect: str = "sqlite") -> str:
        """A query over ``table`` (the training columns) giving each row's prediction; SQLite or DuckDB."""
        return self._fitted_estimator().rule_list_.to_sql(table, dialect)

    def to_python(self) -> str:
        """The source of a standalone module (standard library only) with ``predict(row: dict)``."""
        return self._fitted_estimator().rule_list_.to_python()


class _RuleModelEstimator(ModelViews, ClassifierMixin, BaseEstimator):
    """What the rule-model estimators share: binarize, mine, predict through the fitted model."""

    #: learns from more than two classes
    multiclass = False

    def _target(self, X, y):
        """Check ``X`` and ``y``; set ``classes_``, ``n_features_in_``, ``feature_names_in_``; return the
        frame and the class indices (0/1 for binary models)."""
        frame = as_frame(X)
        codes, classes = check_target(y, frame.shape[0], binary=not self.multiclass)
        self.classes_ = classes
        self.n_features_in_ = frame.shape[1]
        self.feature_names_in_ = np.asarray(frame.columns, dtype=object)
        return frame, codes

    def _binarize(self, frame, min_category_count: int = 1, budget: Budget | None = None) -> np.ndarray:
        """Fit the binarizer (``binarizer_``) and return the boolean features of ``frame``."""
        binarizer = Binarizer(self.categorical, self.bins, self.n_thresholds, self.negations, self.missing,
                              self.identifiers, max(1, int(min_category_count))).fit(frame)
        self.binarizer_ = binarizer
        if budget is not None:
            budget.require("features", frame.shape[0] * len(binarizer.features_), "the binarized table")
        return binarizer.transform(frame)

    def _class_weights(self, y_codes) -> np.ndarray:
        """Weight of each class (``class_weight``: None, "balanced" or {label: weight})."""
        if self.class_weight is None:
            return np.ones(len(self.classes_))
        if not (self.class_weight == "balanced" or isinstance(self.class_weight, dict)):
            raise ValueError(f"class_weight must be None, 'balanced' or a dict, got {self.class_weight!r}")
        from sklearn.utils.class_weight import compute_class_weight

        return compute_class_weight(self.class_weight, classes=self.classes_, y=self.classes_[y_codes])

    def _allowed_features(self, forbidden) -> np.ndarray:
        """Which binarized features rules may use: all but those named in ``forbidden`` (feature names,
        or column names meaning every feature of that column)."""
        binarizer = self.binarizer_
        allowed = np.ones(len(binarizer.features_), dtype=bool)
        if forbidden is None:
            return allowed
        names = [forbidden] if isinstance(forbidden, str) else list(forbidden)
        known_columns = set(binarizer.columns_)
        unknown = [n for n in names if n not in binarizer.feature_names_ and n not in known_columns]
        if unknown:
            raise ValueError(f"forbidden names {unknown} are neither features nor columns of the data "
                             f"(features look like {binarizer.feature_names_[:3]})")
        banned = set(names)
        for j, feature in enumerate(binarizer.features_):
            if feature.name in banned or feature.column in banned:
                allowed[j] = False
        return allowed

    def _mine(self, features, y01, min_support: float, min_class_support: float = 0.0,
              budget: Budget | None = None, forbidden=None) -> None:
        """Mine the antecedents of the binarized ``features`` (but the ``forbidden`` ones); set
        ``antecedents_``."""
        binarizer = self.binarizer_
        allowed = self._allowed_features(forbidden)
        names, groups = binarizer.feature_names_, binarizer.groups_
        if not allowed.all():
            features = features[:, allowed]
            names = [name for name, keep in zip(names, allowed) if keep]
            groups = groups[allowed]
        antecedents = mine_antecedents(
            features, names, groups, max_card=self.max_card,
            min_support=min_support, y=y01, min_class_support=min_class_support,
            max_antecedents=self.max_antecedents, budget=budget,
        )
        if budget is not None:
            budget.release("features")
        if len(antecedents) == 0:
            raise ValueError(
                f"no antecedent has support in [{min_support}, {1 - min_support}]"
                + (f" and {min_class_support} of a class" if min_class_support else "")
                + ": lower the support thresholds or provide more informative features"
            )
        self.antecedents_ = antecedents

    def _budget(self, progress) -> Budget:
        """The fit's budget; a progress callback is also asked, between stages, whether to stop."""
        hook = None
        if progress is not None:
            def hook():
                progress(Trace(), {"nodes_expanded": 0, "queue": 0})
        return Budget(self.time_limit, self.max_memory, hook)

    def _progress(self):
        """The search's progress callback: ``verbose`` itself when callable, a terminal display when true."""
        if callable(self.verbose):
            return self.verbose
        if not self.verbose:
            return None
        from .progress import SearchProgress

        return SearchProgress()

    @staticmethod
    def _close(progress) -> None:
        close = getattr(progress, "close", None)
        if close is not None:
            close()

    def _conditions(self):
        return [self.antecedents_.conditions(i) for i in range(len(self.antecedents_))]

    def _check_predict_input(self, X):
        """Fitted, and arrays have the fitted number of columns (a DataFrame is matched by column names)."""
        check_is_fitted(self, "rule_list_")
        frame = as_frame(X, columns=list(self.feature_names_in_))
        if not hasattr(X, "columns") and frame.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {frame.shape[1]} features, but {type(self).__name__} is expecting "
                             f"{self.n_features_in_} features as input.")
        return frame

    def _fitted_estimator(self):
        check_is_fitted(self, "rule_list_")
        return self

    def _described_class(self) -> int:
        """The index in ``classes_`` of ``pos_label`` (binary families; default: the second class)."""
        if self.pos_label is None:
            return 1
        matches = [k for k, label in enumerate(self.classes_) if label == self.pos_label]
        if not matches:
            raise ValueError(f"pos_label={self.pos_label!r} is not one of the classes {list(self.classes_)}")
        return matches[0]

    def predict(self, X):
        frame = self._check_predict_input(X)
        return self.rule_list_.predict(frame)

    def predict_proba(self, X):
        frame = self._check_predict_input(X)
        return self.rule_list_.predict_proba(frame)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = self.multiclass
        tags.input_tags.allow_nan = self.missing == "category"
        tags.input_tags.string = True
        tags.input_tags.categorical = True
        return tags


class RuleListClassifier(_RuleModelEstimator):
    """Certifiably optimal rule list (CORELS): minimises mistakes/N + regularization * (number of rules).

    Two or more classes (each rule predicts the majority class of what it captures); with
    ``sample_weight`` or ``class_weight`` mistakes are weighted and N is the total weight.

    The data are binarized (:class:`~optrules.data.binarize.Binarizer`), antecedents mined (conjunctions
    of up to ``max_card`` features with support in [min_support, 1 - min_support]) and the
    branch-and-bound search run until the optimum is certified or a budget runs out.

    Parameters
    ----------
    regularization : lambda in [0, 1), the price of one rule in training accuracy.
    max_card : features per antecedent, at most.
    min_support : minimum antecedent support for mining; defaults to ``regularization`` (Thm 10: rarer
        antecedents can never appear in an optimal list, so this loses nothing).
    policy : queue order: ``lower_bound`` (default), ``objective``, ``curiosity``, ``bfs``, ``dfs``.
    map_type : symmetry-aware map keyed on the antecedent set (``prefix``, Cor 16), on the captured set
        (``captured``, Thm 15), or ``none``.
    max_antecedents : at most this many antecedents are mined (``"auto"``: 2,000, fewer for very many
        samples; None: no bound); when more qualify, the support floor of the longest conjunctions is
        raised (the most frequent are kept) and ``antecedents_.report`` says so.
    max_nodes, time_limit, max_memory : budgets (prefixes expanded; seconds for the whole fit, from
        binarizing to the end of the search, default 120, None for no limit; bytes of everything the fit
        holds: binarized table, antecedents, queue, maps, trace; default 1 GiB or half the machine's). On any, and on
        Ctrl-C, the best list found is returned and ``certificate_`` says how far from optimal it can be.
    verbose : show live progress; or a callable ``(trace, counters)`` called after each slice of the
        search, and with an empty trace between the stages before it (raising ``KeyboardInterrupt`` in
        it stops the fit, which returns its best list).
    class_weight : None, "balanced" (weights inversely proportional to class frequencies) or
        {label: weight}; multiplies ``sample_weight`` given to ``fit``.
    use_minimum_support, use_accurate_support, use_excessive_support, use_lookahead,
    use_equivalent_points : ablation switches for Theorems 10, 11, 21, Lemma 2 and Theorem 20.
    categorical, bins, n_thresholds, negations, missing, identifiers : passed to the Binarizer
        (``identifiers="drop"`` leaves out columns that identify rows, with a warning).
    greedy_start : seed the search with the greedy list (a good first incumbent prunes early; the
        certificate does not depend on it). Not scikit-learn's ``warm_start``: every fit starts afresh.
    max_rules : domain constraint: lists of at most this many rules (default: no limit); the
        certificate is then optimal over those lists.
    forbidden : domain constraint: features (``"sex=Male"``) or columns (``"race"``: every feature of
        it) no rule may use; the certificate is optimal over the lists that avoid them.

    Attributes
    ----------
    rule_list_ : the certified :class:`~optrules.models.RuleList`.
    certificate_ : its :class:`~optrules.certificate.Certificate` (optimal, or the gap left by a budget).
    classes_, n_features_in_, feature_names_in_ : as in scikit-learn.
    binarizer_, antecedents_ : the fitted binarizer and the mined antecedents.
    antecedent_indices_ : the list's antecedents, as indices into ``antecedents_``.
    """

    def __init__(
        self,
        regularization: float = 0.01,
        max_card: int = 2,
        min_support: float | None = None,
        policy: str = "lower_bound",
        map_type: str = "prefix",
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
        n_thresholds: int = 9,
        negations: bool = False,
        missing: str = "error",
        identifiers: str = "drop",
        max_antecedents="auto",
        max_rules: int | None = None,
        forbidden=None,
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
        self.n_thresholds = n_thresholds
        self.negations = negations
        self.missing = missing
        self.identifiers = identifiers
        self.max_antecedents = max_antecedents
        self.max_rules = max_rules
        self.forbidden = forbidden

    def _ablation(self) -> Ablation:
        return Ablation(
            minimum_support=self.use_minimum_support,
            accurate_support=self.use_accurate_support,
            excessive_support=self.use_excessive_support,
            lookahead=self.use_lookahead,
            equivalent_points=self.use_equivalent_points,
        )

    multiclass = True

    def fit(self, X, y, sample_weight=None):
        regularization = check_regularization(self.regularization)
        check_budget_values(self.time_limit, self.max_memory, self.max_nodes)
        check_max_length(self.max_rules, "max_rules")
        progress = self._progress()
        try:
            budget = self._budget(progress)
            with budget.catch_interrupt():
                prepared = self._prepare(X, y, sample_weight, regularization, budget)
                return self._search(prepared, budget=budget, progress=progress)
        finally:
            self._close(progress)

    def _prepare(self, X, y, sample_weight, smallest_regularization: float, budget: Budget | None = None):
        """Binarize and mine (for lambda down to ``smallest_regularization``); return ``(codes, weights)``.
        A regularization path mines once, at its smallest lambda, and searches every lambda on that."""
        frame, codes = self._target(X, y)
        weights = self._sample_weights(codes, sample_weight)
        min_support = self._default_min_support(smallest_regularization, weights)
        # Thm 10: a category rarer than the minimum support can be in no antecedent of an optimal list
        features = self._binarize(frame, math.ceil(min_support * len(codes) - 1e-9), budget)
        self._mine(features, codes, min_support, budget=budget, forbidden=self.forbidden)
        return codes, weights

    def _search(self, prepared, initial_prefix=None, budget: Budget | None = None, progress=None):
        """The certified search on prepared data (``_prepare``), optionally from a known list; within
        ``budget`` (the fit's), or a new one from ``time_limit`` and ``max_memory``."""
        codes, weights = prepared
        own_progress = progress is None
        progress = self._progress() if own_progress else progress
        try:
            budget = budget if budget is not None else self._budget(progress)
            budget.require("captures", 2 * len(self.antecedents_) * len(codes),
                           "grouping the samples (antecedents x samples bytes, twice)")
            problem = Problem.from_antecedents(self.antecedents_, codes, check_regularization(self.regularization),
                                               sample_weight=weights, n_classes=len(self.classes_))
            result = search(
                problem,
                policy=self.policy,
                map_type=self.map_type,
                ablation=self._ablation(),
                max_nodes=self.max_nodes,
                warm_start=self.greedy_start,
                initial_prefix=initial_prefix,
                progress=progress,
                budget=budget,
                max_length=self.max_rules,
            )
        finally:
            if own_progress:
                self._close(progress)
        self.rule_list_ = self._rule_list(codes, weights, result.prefix)
        self.antecedent_indices_ = result.prefix
        self.certificate_ = result.certificate
        self.certificate_.counters["antecedents"] = len(self.antecedents_)
        self.certificate_.counters["fit_time"] = budget.elapsed()
        return self

    def _rule_list(self, codes, weights, prefix):
        """The rule list of ``prefix`` (only its antecedents' capture vectors are unpacked)."""
        rows = bitset.unpack(self.antecedents_.bits[np.asarray(prefix, dtype=np.int64)], len(codes))
        conditions = [self.antecedents_.conditions(a) for a in prefix]
        return rule_list_from_prefix(rows, codes, range(len(prefix)), conditions, self.classes_, self.binarizer_,
                                     sample_weight=weights)

    def _sample_weights(self, codes, sample_weight):
        """Per-sample weights (``sample_weight`` x class weight), or None for unit weights."""
        if sample_weight is None and self.class_weight is None:
            return None
        weights = np.ones(len(codes)) if sample_weight is None else check_sample_weight(sample_weight, len(codes))
        return weights * self._class_weights(codes)[codes]

    def _default_min_support(self, regularization: float, weights) -> float:
        """Thm 10: an antecedent of an optimal list captures a weight >= lambda * W, so one whose share
        of samples is below lambda * W / (N * largest weight) can be left out without losing the optimum."""
        if self.min_support is not None:
            return float(self.min_support)
        if weights is None:
            return regularization
        return regularization * float(weights.sum()) / (len(weights) * float(weights.max()))


class FallingRuleListClassifier(_RuleModelEstimator):
    """Falling rule list (Chen and Rudin, AISTATS 2018): probabilities that fall down the list, chosen to
    minimise the cost-sensitive risk (a missed positive costs ``w``, a false alarm 1) + C * (rules),
    + C1 * (how much the list fails to fall) when ``soft``.

    Parameters
    ----------
    w : weight of a positive; a sample is predicted positive when its rule's probability > 1/(1+w)
        (default 1: a missed positive costs as much as a false alarm).
    C, C1 : price of a rule (default 0.001: a rule must fix 0.1% of the rows); price of rising
        probabilities (softly falling lists only).
    soft : learn a softly falling list (Program 5.1) instead of a falling one (Program 2.9).
    method : ``certified`` (branch-and-bound, optimal with a certificate, the default) or
        ``montecarlo`` (the paper's randomized search: ``iterations``, ``prob_terminate``,
        ``curiosity_weight``, ``random_state``). ``certified`` starts from a short Monte-Carlo run.
    max_nodes, time_limit, max_memory, verbose : budgets (the time limit, 120 s by default, covers the
        whole fit, the Monte-Carlo warm start included) and progress, as for rule lists.
    min_class_support : antecedents must hold for at least this share of the positives or of the
        negatives (the paper: 10%); ``max_card``: items per antecedent; ``max_antecedents``: at most this
        many (``"auto"``, as for rule lists).
    categorical, bins, n_thresholds, negations, missing, identifiers : passed to the Binarizer.
    pos_label : the class whose probability falls down the list and whose misses cost ``w`` (default:
        the second of the sorted classes).

    Attributes
    ----------
    rule_list_ : the :class:`~optrules.models.FallingRuleList`.
    objective_ : its objective (weighted risk + C per rule (+ C1 x rise)).
    certificate_ : its :class:`~optrules.certificate.Certificate`; None for ``montecarlo``, which proves
        nothing.
    classes_, binarizer_, antecedents_, n_features_in_, feature_names_in_ : as for rule lists.
    """

    def __init__(
        self,
        w: float = DEFAULT_W,
        C: float = DEFAULT_C,
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
        max_card: int = 2,
        categorical=None,
        bins=None,
        n_thresholds: int = 9,
        negations: bool = False,
        missing: str = "error",
        identifiers: str = "drop",
        max_antecedents="auto",
        pos_label=None,
    ):
        self.w = w
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
        self.n_thresholds = n_thresholds
        self.negations = negations
        self.missing = missing
        self.identifiers = identifiers
        self.max_antecedents = max_antecedents
        self.pos_label = pos_label

    def fit(self, X, y):
        from .frl.montecarlo import montecarlo_search
        from .frl.objective import falling_rule_list
        from .frl.search import FRLProblem, certified_search

        if self.method not in ("certified", "montecarlo"):
            raise ValueError(f"method must be 'certified' or 'montecarlo', got {self.method!r}")
        check_budget_values(self.time_limit, self.max_memory, self.max_nodes)
        progress = self._progress()
        try:
            budget = self._budget(progress)
            with budget.catch_interrupt():
                self._fit(X, y, budget, progress)
        finally:
            self._close(progress)
        return self

    def _fit(self, X, y, budget: Budget, progress) -> None:
        from .frl.montecarlo import montecarlo_search
        from .frl.objective import falling_rule_list
        from .frl.search import FRLProblem, certified_search

        frame, codes = self._target(X, y)
        describes = self._described_class()
        y01 = (codes == describes).astype(codes.dtype)  # 1: the class whose probability falls
        # a conjunction must hold for min_class_support of the positives or of the negatives: rarer
        # categories can be in none
        smaller_class = min(int(y01.sum()), int(len(y01) - y01.sum()))
        features = self._binarize(frame, math.ceil(self.min_class_support * smaller_class - 1e-9), budget)
        self._mine(features, y01, 0.0, self.min_class_support, budget)
        budget.require("captures", len(self.antecedents_) * len(y01), "the antecedents' capture vectors")
        captures = self.antecedents_.capture_matrix()
        problem = FRLProblem(captures, y01, self.w, self.C, self.C1, self._conditions())
        # the warm start of the certified search gets at most a tenth of the time left
        warm = montecarlo_search(
            problem, self.soft, self.iterations if self.method == "montecarlo" else min(self.iterations, 100),
            self.prob_terminate, self.curiosity_weight, self.random_state,
            time_limit=None if self.method == "montecarlo" else budget.share(0.1), budget=budget,
        )
        prefix, self.certificate_ = warm.prefix, None
        if self.method == "certified":
            result = certified_search(problem, self.soft, max_nodes=self.max_nodes, initial_prefix=warm.prefix,
                                      progress=progress, budget=budget)
            prefix, self.certificate_ = result.prefix, result.certificate
            self.certificate_.counters["antecedents"] = len(self.antecedents_)
            self.certificate_.counters["fit_time"] = budget.elapsed()
        self.objective_ = problem.objective(prefix, self.soft)
        self.rule_list_ = falling_rule_list(captures, y01, prefix, self._conditions(), self.w, self.soft,
                                            self.classes_, self.binarizer_, describes=describes)


class RuleSetClassifier(_RuleModelEstimator):
    """Boolean rule set (DNF, or CNF with ``cnf=True``) by column generation on HiGHS (Dash, Guenluek and
    Wei, NeurIPS 2018): minimise missed positives + covered negatives (Hamming loss) subject to a
    complexity bound (clauses + conditions <= ``complexity``), optionally with a complexity ``penalty``
    and class weights.

    Parameters
    ----------
    complexity : C, the bound on sum over clauses of (1 + conditions).
    max_degree : conditions per clause, at most.
    cnf : learn a CNF (AND of ORs) instead of a DNF.
    pos_label : the class the rule set describes (predicts when it holds); default None: the second of
        the sorted classes, as scikit-learn's binary metrics assume. Describing the other class is a
        different problem with a different optimum (a DNF for one class is a CNF for the other).
    penalty : price of each unit of complexity in the objective (0: only the bound).
    class_weight : None, "balanced", or {label: weight}: weights of missed positives / covered negatives.
    time_limit, pricing_time_limit : seconds for the whole fit (binarizing, column generation and the
        final MIP; None: no limit) and per exact pricing call.
    max_memory : bytes the fit may hold (binarized table, pricing matrices, the master's columns;
        default 1 GiB or half the machine's): column generation stops there, status ``memory budget``.
    min_support : a category must hold for at least this share of the training rows to become a
        feature (a rarer one describes a handful of rows, and a raw table's names or dates can have
        thousands of them).
    beam_width : width of the pricing beam search.
    exact_pricing : when the beam finds nothing, price exactly (needed to prove the LP bound): ``True``
        or ``"enumeration"`` (branch-and-bound over conjunctions, the default), ``"ip"`` (the pricing IP
        on HiGHS), ``False`` (beam only).
    max_pricing_samples, max_pricing_features : the beam search prices on a stratified random subsample
        of samples, and a random subset of features, above these sizes (clauses are re-scored on all).
    categorical, bins, n_thresholds, negations, missing, identifiers : the Binarizer (the paper: decile
        thresholds both ways, one-hot with negations).

    Attributes
    ----------
    rule_set_ : the :class:`~optrules.models.RuleSet` (also as ``rule_list_``).
    certificate_ : its :class:`~optrules.certificate.Certificate`, objective and lower bound in weighted
        mistakes.
    classes_, binarizer_, n_features_in_, feature_names_in_ : as for rule lists.
    """

    def __init__(
        self,
        complexity: float = 30.0,
        max_degree: int = 5,
        cnf: bool = False,
        pos_label=None,
        penalty: float = 0.0,
        class_weight=None,
        time_limit: float | None = DEFAULT_TIME_LIMIT,
        pricing_time_limit: float = 30.0,
        beam_width: int = 10,
        exact_pricing: bool | str = True,
        max_pricing_samples: int = 5000,
        max_pricing_features: int = 2000,
        random_state: int = 0,
        verbose: bool = False,
        categorical=None,
        bins=None,
        n_thresholds: int = 9,
        negations: bool = True,
        missing: str = "error",
        identifiers: str = "drop",
        max_memory: int | None = None,
        min_support: float = 0.005,
    ):
        self.complexity = complexity
        self.max_degree = max_degree
        self.cnf = cnf
        self.pos_label = pos_label
        self.penalty = penalty
        self.class_weight = class_weight
        self.time_limit = time_limit
        self.pricing_time_limit = pricing_time_limit
        self.beam_width = beam_width
        self.exact_pricing = exact_pricing
        self.max_pricing_samples = max_pricing_samples
        self.max_pricing_features = max_pricing_features
        self.random_state = random_state
        self.verbose = verbose
        self.categorical = categorical
        self.bins = bins
        self.n_thresholds = n_thresholds
        self.negations = negations
        self.missing = missing
        self.identifiers = identifiers
        self.max_memory = max_memory
        self.min_support = min_support

    def fit(self, X, y):
        from .models import RuleSet
        from .rulesets.colgen import column_generation

        if not (self.complexity is None or self.complexity >= 2):
            raise ValueError(f"complexity must be >= 2 (one clause of one condition), got {self.complexity}")
        if int(self.max_degree) < 1:
            raise ValueError(f"max_degree must be >= 1, got {self.max_degree}")
        if self.penalty < 0 or not self.pricing_time_limit > 0:
            raise ValueError("penalty must be >= 0 and pricing_time_limit positive")
        if not 0.0 <= self.min_support < 0.5:
            raise ValueError(f"min_support must lie in [0, 0.5), got {self.min_support}")
        check_budget_values(self.time_limit, self.max_memory)
        progress = self._progress()
        try:
            budget = self._budget(progress)
            with budget.catch_interrupt():
                frame, y01 = self._target(X, y)
                features = self._binarize(frame, math.ceil(self.min_support * len(y01) - 1e-9), budget)
                names = list(self.binarizer_.feature_names_)
                describes = self._described_class()
                weights = self._class_weights(y01)
                negative_weight, positive_weight = weights[1 - describes], weights[describes]
                target = y01 == describes
                if self.cnf:  # De Morgan: a CNF for y is the negation of a DNF over negated features for not-y
                    features, target = ~features, ~target
                    positive_weight, negative_weight = negative_weight, positive_weight
                result = column_generation(
                    features, target, self.complexity if self.complexity is not None else np.inf, self.penalty,
                    int(self.max_degree), positive_weight, negative_weight, None, self.pricing_time_limit,
                    self.beam_width, self.exact_pricing, self.max_pricing_samples, self.max_pricing_features,
                    self.random_state, progress, budget=budget,
                )
                result.certificate.counters["fit_time"] = budget.elapsed()
        finally:
            self._close(progress)
        clauses = [tuple(names[j] for j in clause) for clause in result.clauses]
        rule_set = RuleSet(clauses, self.cnf, (0.0, 1.0), self.classes_, self.binarizer_, describes=describes)
        fired = rule_set.rule_index(X)
        accepted = np.array([b.prediction == describes for b in rule_set.branches()])[fired]
        # the described class's training rate among the rows the set rejects, and among those it accepts
        rates = tuple(float((y01[accepted == side] == describes).mean()) if (accepted == side).any() else float(side)
                      for side in (False, True))
        totals = np.zeros((len(clauses) + 1, 2))
        np.add.at(totals, (fired, y01), 1.0)
        self.rule_set_ = self.rule_list_ = RuleSet(clauses, self.cnf, rates, self.classes_, self.binarizer_,
                                                   describes=describes, branch_totals=totals)
        self.certificate_ = result.certificate
        return self

