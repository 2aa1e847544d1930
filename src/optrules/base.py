"""What the three families' scikit-learn estimators share: validation of the target, binarizing,
mining, budgets, progress, and predicting through the fitted model (each family's estimator lives
beside its solver: ``corels/estimator.py``, ``frl/estimator.py``, ``rulesets/estimator.py``)."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from .bnb import compiled_in_time
from .budget import Budget
from .certificate import INTERRUPTED, TIME_BUDGET, Trace
from .data import bitset
from .data.binarize import Binarizer
from .data.compiled import compile_data_kernels
from .data.mine import Antecedents, MiningReport, mine_antecedents
from .data.validation import as_frame, check_sample_weight, check_target
from .parameters import DEFAULT_TIME_LIMIT  # noqa: F401 (where the estimators read it)
from .solve import STAGES, ProgressEvent


@dataclass(frozen=True)
class Fitting:
    """What a fit runs within (:meth:`RuleModelEstimator._fitting`): its budget (time, nodes, memory, the
    stop request) and its progress callback (None: quiet)."""

    budget: Budget
    progress: object

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

    def report(self, X=None, y=None, groups=None, sample_weight=None, title: str = "optrules model") -> str:
        """One self-contained HTML page (:func:`optrules.report.html_report`): the data ``X``/``y`` (training
        or held out), the rules, the certificate and its trace, accuracy overall and by the ``groups``
        columns (a DataFrame or dict of arrays)."""
        from .report import html_report

        estimator = self._fitted_estimator()
        return html_report(estimator.rule_list_, getattr(estimator, "certificate_", None),
                           None if X is None else estimator._check_predict_input(X), y, groups, sample_weight,
                           title=title)

    def to_python(self) -> str:
        """The source of a standalone module (standard library only) with ``predict(row: dict)``."""
        return self._fitted_estimator().rule_list_.to_python()


def space_text(binarizer, antecedents, max_card) -> str:
    """What a certificate is optimal over, in words: the antecedents (conjunctions of up to
    ``max_card`` of the binary features) and where the features' thresholds come from."""
    features = len(binarizer.features_)
    negations = ", with negations" if binarizer.negations else ""
    reference = getattr(binarizer, "reference_", None)
    origin = ("numeric thresholds at quantiles" if reference is None and binarizer.thresholds == "quantile"
              else "thresholds and values chosen by the reference" if reference is None else reference.describe())
    if reference is not None and reference.fitted and binarizer.thresholds == "both":
        origin = f"numeric thresholds at quantiles and {origin}"
    if antecedents is not None and max_card is not None:
        shape = "single literals" if int(max_card) == 1 else f"conjunctions of up to {int(max_card)} literals"
        return f"{len(antecedents):,} antecedents ({shape}) of {features:,} binary features{negations}; {origin}"
    return f"rules over {features:,} binary features{negations}; {origin}"


def as_names(names) -> list[str]:
    """None, one name, or several, as a list."""
    return [] if names is None else [names] if isinstance(names, str) else list(names)


class RuleModelEstimator(ModelViews, ClassifierMixin, BaseEstimator):
    """What the rule-model estimators share: binarize, mine, predict through the fitted model."""

    #: learns from more than two classes
    multiclass = False
    #: why not, in the error a target of three or more classes gets
    why_binary = "this model learns two classes"

    def _target(self, X, y):
        """Check ``X`` and ``y``; set ``classes_``, ``n_features_in_``, ``feature_names_in_``; return the
        frame and the class indices (0/1 for binary models)."""
        frame = as_frame(X)
        codes, classes = check_target(y, frame.shape[0], binary=not self.multiclass, why_binary=self.why_binary)
        self.classes_ = classes
        self.n_features_in_ = frame.shape[1]
        self.feature_names_in_ = np.asarray(frame.columns, dtype=object)
        return frame, codes

    @staticmethod
    def _weighted_rows(frame, codes, sample_weight):
        """``(frame, codes, sample_weight)`` without the rows of zero weight (checked weights, or None).
        Such rows change no objective, but they would split antecedents that capture the same weighted
        rows apart; without them, integer weights and repeated rows give one antecedent space."""
        weights = check_sample_weight(sample_weight, len(codes), codes)
        if weights is None or (weights > 0).all():
            return frame, codes, weights
        kept = np.flatnonzero(weights > 0)
        return frame.iloc[kept], codes[kept], weights[kept]

    def _binarize(self, frame, codes, min_category_count: int = 1, budget: Budget | None = None,
                  sample_weight=None, packed: bool = False, thresholds: str | None = None) -> np.ndarray:
        """Fit the binarizer (``binarizer_``, on the rows of positive ``sample_weight``, thresholds from
        the reference ensemble fitted on ``codes`` with the sample and class weights, or at weighted
        quantiles, or both: ``thresholds``, else the estimator's) and return the boolean features of
        ``frame`` (``packed``: packed, one row of words a feature, what mining reads)."""
        binarizer = Binarizer(self.categorical, self.bins, self.n_thresholds, self.negations, self.missing,
                              self.identifiers, max(1, int(min_category_count)), thresholds or self.thresholds)
        reference_weight = sample_weight
        if getattr(self, "class_weight", None) is not None:
            class_weights = self._class_weights(codes)[codes]
            reference_weight = class_weights if sample_weight is None else sample_weight * class_weights
        options = dict(sample_weight=sample_weight, reference_weight=reference_weight,
                       keep_columns=self._required_columns(frame))
        if budget is None:
            features = binarizer.fit_transform(frame, codes, packed=packed, **options)
        else:
            budget.enter("binarizing")  # each column made and evaluated within the stop requests; a third of the time left is kept for
            # mining and the search
            with budget.holding_back(1 / 3):
                features = binarizer.fit_transform(
                    frame, codes, packed=packed, should_stop=budget.stopped, time_left=budget.remaining,
                    charge=lambda nbytes: budget.require("features", nbytes, "the binarized table"), **options)
        self.binarizer_ = binarizer
        return features

    def _required_columns(self, frame) -> list:
        """The columns of the ``required`` names (a column, or a feature ``column<op>...``): they keep
        every feature the reference would not choose, so that a rule can use them."""
        names = as_names(getattr(self, "required", None))
        return [c for c in frame.columns if any(name == c or (name.startswith(str(c)) and name[len(str(c)):][:1]
                                                               in ("=", "<", ">")) for name in names)]

    def _class_weights(self, y_codes) -> np.ndarray:
        """Weight of each class (``class_weight``: None, "balanced" or {label: weight})."""
        if self.class_weight is None:
            return np.ones(len(self.classes_))
        if not (self.class_weight == "balanced" or isinstance(self.class_weight, dict)):
            raise ValueError(f"class_weight must be None, 'balanced' or a dict, got {self.class_weight!r}")
        from sklearn.utils.class_weight import compute_class_weight

        return compute_class_weight(self.class_weight, classes=self.classes_, y=self.classes_[y_codes])

    def _named_features(self, names, role: str) -> tuple[list[str], np.ndarray]:
        """``names`` (one or a list of feature names, or column names meaning every feature of that
        column) as a list, and a ``(names, features)`` mask of the binarized features each one names."""
        binarizer = self.binarizer_
        names = as_names(names)
        known_columns = set(binarizer.columns_)
        unknown = [n for n in names if n not in binarizer.feature_names_ and n not in known_columns]
        if unknown:
            raise ValueError(f"{role} names {unknown} are neither features nor columns of the data "
                             f"(features look like {binarizer.feature_names_[:3]})")
        masks = np.array([[feature.name == name or feature.column == name for feature in binarizer.features_]
                          for name in names], dtype=bool).reshape(len(names), len(binarizer.features_))
        return names, masks

    def _mine(self, features, y01, min_support: float, min_class_support: float = 0.0,
              budget: Budget | None = None, forbidden=None, required=None, none_is_an_answer: bool = False) -> None:
        """Mine the antecedents of the packed features (``_binarize(packed=True)``), but the ``forbidden``
        ones (conjunctions of a ``required`` one whatever their support); set ``mined_antecedents_`` and
        ``antecedents_`` (the space searched: a search may narrow it). When none has the support asked, an
        error, unless ``none_is_an_answer`` (the supports are the ones a theorem allows an optimal model's
        antecedents: then no antecedent is the answer)."""
        if budget is not None:
            budget.enter("mining")
        self.antecedents_ = self.mined_antecedents_ = self._mined_antecedents(
            features, y01, min_support, min_class_support, budget, forbidden, required, none_is_an_answer)

    def _mined_antecedents(self, features, y01, min_support: float, min_class_support: float, budget: Budget | None,
                           forbidden, required, none_is_an_answer: bool) -> Antecedents:
        """What :meth:`_mine` sets."""
        binarizer = self.binarizer_
        allowed = ~self._named_features(forbidden, "forbidden")[1].any(axis=0)
        required_names, required_masks = self._named_features(required, "required")
        for name, mask in zip(required_names, required_masks):
            if not mask.any():
                dropped = getattr(binarizer, "dropped_columns_", {})
                raise ValueError(f"required {name!r} has no feature, so no rule can use it: "
                                 + (f"{dropped[name]}" if name in dropped else "the column takes a single value"))
            if not (mask & allowed).any():
                raise ValueError(f"required {name!r} is also forbidden: no rule could use it")
        names, groups = binarizer.feature_names_, binarizer.groups_
        if budget is not None and not compiled_in_time(lambda: compile_data_kernels(self._mining_card()), budget):
            # a first fit after install whose budget ended while the data layer's kernels compiled
            # (optrules.data.compiled): no conjunction, so the model of no rule with lower bound 0, or,
            # when some features are required, antecedents of those features alone (a list must have its
            # required rules; the search then returns the shortest such list, its bound lambda per rule)
            kept = np.flatnonzero(required_masks.any(axis=0) & allowed)
            kept = kept[bitset.popcount(features[kept]) > 0]
            note = ("not mined: the budget ended while mining's kernels compiled (a first fit after install; "
                    "`optrules compile` compiles them ahead)" + ("; the required features alone are antecedents"
                                                                 if len(kept) else ""))
            report = MiningReport(len(y01), len(names), self._mining_card(), float(min_support), None, stopped=True,
                                  notes=[note], n_antecedents=len(kept), mined=False)
            return Antecedents(list(names), [(int(j),) for j in kept],
                               np.ascontiguousarray(features[kept], dtype=np.uint64), len(y01), report)
        if not allowed.all():
            features = features[allowed]
            names = [name for name, keep in zip(names, allowed) if keep]
            groups = groups[allowed]
        if len(names) == 0:  # no feature (each column takes one value on the rows that count, or is left out)
            if not none_is_an_answer:
                raise ValueError("the table gives no feature to mine: every column takes a single value on the "
                                 "rows with weight, is forbidden or was left out "
                                 f"{dict(getattr(binarizer, 'dropped_columns_', {}))}")
            return Antecedents([], [], np.zeros((0, bitset.n_words(len(y01))), np.uint64), len(y01),
                               MiningReport(len(y01), 0, self._mining_card(), float(min_support), None,
                                            notes=["no feature to mine"]))
        antecedents = mine_antecedents(
            features, names, groups, max_card=self._mining_card(),
            min_support=min_support, y=y01, min_class_support=min_class_support,
            max_antecedents=self.max_antecedents, budget=budget, unbounded=required_masks.any(axis=0)[allowed],
            n_samples=len(y01),
        )
        if budget is not None:
            budget.release("features")
        if len(antecedents) == 0 and not none_is_an_answer:
            raise ValueError(
                f"no antecedent has support in [{min_support}, {1 - min_support}]"
                + (f" and {min_class_support} of a class" if min_class_support else "")
                + ": lower the support thresholds or provide more informative features"
            )
        return antecedents

    def _mining_card(self) -> int:
        """Features per mined antecedent at most: ``max_card``, or 2 for ``"auto"`` (the search then
        certifies single literals first, and pairs when they finish: ``RuleListClassifier``)."""
        return 2 if self.max_card == "auto" else int(self.max_card)

    def _mined(self, antecedents: Antecedents | None = None) -> bool:
        """Whether the fit mined its antecedents (``antecedents``, else ``antecedents_``; not when its budget
        ended while mining's kernels compiled: :meth:`_mine`)."""
        report = (self.antecedents_ if antecedents is None else antecedents).report
        return report is None or report.mined

    @contextlib.contextmanager
    def _fitting(self):
        """The context of a fit: its budget (Ctrl-C turned into a stop request) and its progress display
        (:class:`Fitting`), closed whatever happens; after the fit, the certificate says the space it is
        optimal over and, if the budget ended it, in which phase. A family's ``fit`` reads::

            with self._fitting() as fitting:
                self._fit(X, y, sample_weight, fitting.budget, fitting.progress)
            return self
        """
        progress = self._progress()
        try:
            budget = self._budget(progress)
            with budget.catch_interrupt():
                yield Fitting(budget, progress)
            self._unproven_if_unread(budget)
            self._name_space()
            certificate = getattr(self, "certificate_", None)
            if certificate is not None and not certificate.is_optimal and (
                    budget.stopped_in or budget.interrupted or budget.expired()):  # where the budget ended the fit
                certificate.counters["stopped_in"] = budget.stopped_in or budget.phase
        finally:
            self._close(progress)

    def _name_space(self) -> None:
        """Write into the certificate the space it is optimal over (``space``: the antecedents or
        features, and where their thresholds come from) and the reference ensemble's training accuracy
        (``reference_train_accuracy``): what the short certified model gives up against a boosted one."""
        certificate = getattr(self, "certificate_", None)
        binarizer = getattr(self, "binarizer_", None)
        if certificate is None or binarizer is None:
            return
        certificate.counters["space"] = space_text(binarizer, getattr(self, "antecedents_", None),
                                                   getattr(self, "max_card_", getattr(self, "max_card", None)))
        reference = getattr(binarizer, "reference_", None)
        if reference is not None and reference.fitted:
            certificate.counters["reference_train_accuracy"] = reference.train_accuracy

    def reference_score(self, X, y, sample_weight=None) -> float:
        """Accuracy of the binarizer's reference ensemble (``thresholds="boosted"``) on ``X``, ``y``: beside
        ``score``, what the certified model gives up against the boosted model its thresholds come from."""
        estimator = self._fitted_estimator()
        codes = estimator.binarizer_.reference_predict(estimator._check_predict_input(X))
        return float(np.average(estimator.classes_[codes] == np.asarray(y).ravel(), weights=sample_weight))

    def _unproven_if_unread(self, budget: Budget) -> None:
        """A fit stopped while binarizing searched the features of the columns read: its model is a model
        of the whole problem, but its lower bound is only one over fewer features (rows that differ in an
        unread column look alike, and fewer rules are available), so it falls to 0, which every
        objective here meets (each is a count of weighted mistakes plus penalties)."""
        certificate = getattr(self, "certificate_", None)
        if certificate is None or not getattr(getattr(self, "binarizer_", None), "unread_columns_", None):
            return
        certificate.counters["unread_columns"] = len(self.binarizer_.unread_columns_)
        certificate.lower_bound = min(certificate.lower_bound, 0.0)
        if certificate.objective > 0.0:
            certificate.status = INTERRUPTED if budget.interrupted else TIME_BUDGET

    def _budget(self, progress, limits: tuple | None = None) -> Budget:
        """The fit's budget, or one of ``limits`` = (time_limit seconds, max_memory bytes) for work after
        the fit; a progress callback is also asked, between stages, whether to stop."""
        hook = None
        if progress is not None:
            def hook():
                return progress(Trace(), ProgressEvent.from_trace(Trace(), 0, STAGES))
        time_limit, max_memory = (self.time_limit, self.max_memory) if limits is None else limits
        return Budget(time_limit, max_memory, hook)

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

    def _conditions(self, antecedents: Antecedents | None = None):
        return (self.antecedents_ if antecedents is None else antecedents).condition_names

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
