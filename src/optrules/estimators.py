"""scikit-learn estimators on top of the solvers."""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from .corels.prefix import rule_list_from_prefix
from .corels.problem import Problem, check_regularization
from .corels.search import Ablation, search
from .data.binarize import Binarizer
from .data.mine import mine_antecedents
from .data.validation import as_frame, check_binary_target


class RuleListClassifier(ClassifierMixin, BaseEstimator):
    """Certifiably optimal rule list (CORELS): minimises mistakes/N + regularization * (number of rules).

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
    max_nodes, time_limit : budgets (prefixes expanded, seconds); on either, and on Ctrl-C, the best list
        found is returned and ``certificate_`` says how far from optimal it can be.
    verbose : show live progress.
    use_minimum_support, use_accurate_support, use_excessive_support, use_lookahead,
    use_equivalent_points : ablation switches for Theorems 10, 11, 21, Lemma 2 and Theorem 20.
    categorical, bins, n_thresholds, negations, missing : passed to the Binarizer.

    Fitted attributes: ``rule_list_``, ``certificate_``, ``classes_``, ``binarizer_``, ``antecedents_``,
    ``n_features_in_``, ``feature_names_in_``.
    """

    def __init__(
        self,
        regularization: float = 0.01,
        max_card: int = 2,
        min_support: float | None = None,
        policy: str = "lower_bound",
        map_type: str = "prefix",
        max_nodes: int | None = None,
        time_limit: float | None = None,
        verbose: bool = False,
        warm_start: bool = True,
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
    ):
        self.regularization = regularization
        self.max_card = max_card
        self.min_support = min_support
        self.policy = policy
        self.map_type = map_type
        self.max_nodes = max_nodes
        self.time_limit = time_limit
        self.verbose = verbose
        self.warm_start = warm_start
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

    def _ablation(self) -> Ablation:
        return Ablation(
            minimum_support=self.use_minimum_support,
            accurate_support=self.use_accurate_support,
            excessive_support=self.use_excessive_support,
            lookahead=self.use_lookahead,
            equivalent_points=self.use_equivalent_points,
        )

    def fit(self, X, y):
        regularization = check_regularization(self.regularization)
        frame = as_frame(X)
        y01, classes = check_binary_target(y, frame.shape[0])
        binarizer = Binarizer(self.categorical, self.bins, self.n_thresholds, self.negations, self.missing).fit(frame)
        features = binarizer.transform(frame)
        min_support = regularization if self.min_support is None else float(self.min_support)
        antecedents = mine_antecedents(
            features, binarizer.feature_names_, binarizer.groups_, max_card=self.max_card, min_support=min_support
        )
        if len(antecedents) == 0:
            raise ValueError(
                f"no antecedent has support in [{min_support}, {1 - min_support}]: lower min_support or "
                "regularization, or provide more informative features"
            )
        problem = Problem.from_antecedents(antecedents, y01, regularization)
        progress = None
        if self.verbose:
            from .progress import SearchProgress

            progress = SearchProgress()
        try:
            result = search(
                problem,
                policy=self.policy,
                map_type=self.map_type,
                ablation=self._ablation(),
                max_nodes=self.max_nodes,
                time_limit=self.time_limit,
                warm_start=self.warm_start,
                progress=progress,
            )
        finally:
            if progress is not None:
                progress.close()
        conditions = [antecedents.conditions(i) for i in range(len(antecedents))]
        self.rule_list_ = rule_list_from_prefix(
            antecedents.capture_matrix(), y01, result.prefix, conditions, classes, binarizer
        )
        self.certificate_ = result.certificate
        self.classes_ = classes
        self.binarizer_ = binarizer
        self.antecedents_ = antecedents
        self.n_features_in_ = frame.shape[1]
        self.feature_names_in_ = np.asarray(frame.columns, dtype=object)
        return self

    def predict(self, X):
        check_is_fitted(self, "rule_list_")
        return self.rule_list_.predict(X)

    def predict_proba(self, X):
        check_is_fitted(self, "rule_list_")
        return self.rule_list_.predict_proba(X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = self.missing == "category"
        tags.input_tags.string = True
        tags.input_tags.categorical = True
        return tags
