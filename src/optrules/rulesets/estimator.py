"""The scikit-learn estimator of Boolean rule sets."""

from __future__ import annotations

import math
import time
from dataclasses import replace

import numpy as np

from ..base import DEFAULT_TIME_LIMIT, RuleModelEstimator
from ..data import bitset
from ..parameters import DEPRECATED, check_parameters, given, value_of
from .parameters import RULE_SET_PARAMETERS


class RuleSetClassifier(RuleModelEstimator):
    """Boolean rule set (DNF, or CNF with ``cnf=True``) by column generation on HiGHS (Dash, Guenluek and
    Wei, NeurIPS 2018): minimise missed positives + covered negatives (Hamming loss) subject to a
    complexity bound (clauses + conditions <= ``complexity``), optionally with a price per unit of
    complexity (``regularization``) and class weights.

    Parameters
    ----------
    complexity : C, the bound on sum over clauses of (1 + conditions). Below 1 only the empty set fits
        (it predicts the other class everywhere); from 1 to 2 the empty clause too (complexity 1, it
        always holds), and the cheaper of the two is the base rate: bounds cross-validation may choose.
    max_card : conditions per clause, at most (and at most ``complexity`` - 1: a longer clause fits
        in no rule set), as ``max_card`` bounds the literals of a rule list's rules.
    cnf : learn a CNF (AND of ORs) instead of a DNF.
    pos_label : the class the rule set describes (predicts when it holds); default None: the second of
        the sorted classes, as scikit-learn's binary metrics assume. Describing the other class is a
        different problem with a different optimum (a DNF for one class is a CNF for the other).
    regularization : lambda, the price of each unit of complexity in the objective, a share of the weighted
        training rows (each row's class weight times its sample weight), as lambda prices a rule list's
        rule (0, the default: only the bound).
    max_degree, penalty : the old names of ``max_card`` and of the price per unit of complexity, accepted
        until optrules 0.3 with a FutureWarning (``penalty`` in weighted mistakes, not a share of the rows).
    class_weight : None, "balanced", or {label: weight}: weights of missed positives / covered negatives.
    time_limit, pricing_time_limit : seconds for the whole fit (binarizing, column generation and the
        final MIP; None: no limit) and for the first exact pricing of each set of duals (a call that
        finds nothing and proves nothing goes on for twice the time while the fit has it; None: until
        it proves or finds).
    max_nodes : the exact pricing's work for the whole fit, in clauses searched (branch-and-bound
        nodes; the pricing IP's nodes); column generation stops when it is spent, status ``node
        budget``, and the final MIP runs. Seconds depend on the machine and its load, nodes do not:
        with ``time_limit=None`` and ``pricing_time_limit=None`` the fit is deterministic (the same set
        and certificate everywhere; counters["pricing_nodes"] reports what was spent).
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
    categorical, bins, thresholds, n_thresholds, negations, missing, identifiers : the Binarizer (default:
        thresholds where a boosted reference ensemble splits, both ways, one-hot with negations; the paper's
        decile thresholds: ``thresholds="quantile"``).

    Attributes
    ----------
    rule_set_ : the :class:`~optrules.models.RuleSet` (also as ``rule_list_``).
    certificate_ : its :class:`~optrules.certificate.Certificate`, objective and lower bound in weighted
        mistakes; ``certificate_.statement`` says what is proven of the set (over the rung of features it
        is optimal over, see ``ladder_``).
    ladder_ : when the boosted reference chose some of the features and left others: the two rungs
        searched (:meth:`optrules.ladder.Ladder.summary`), the reference's features first (they certify
        in seconds where every feature does not), then every feature from the set found; the model is
        the better set. None when there is one space (every feature the reference's: numeric tables).
    classes_, binarizer_, n_features_in_, feature_names_in_ : as for rule lists.
    """

    _parameter_table = RULE_SET_PARAMETERS
    why_binary = "a rule set describes one class (pos_label): a row either satisfies it or not"

    def __init__(
        self,
        complexity: float = 30.0,
        max_card: int = 5,
        cnf: bool = False,
        pos_label=None,
        regularization: float = 0.0,
        class_weight=None,
        time_limit: float | None = DEFAULT_TIME_LIMIT,
        pricing_time_limit: float | None = 30.0,
        max_nodes: int | None = None,
        beam_width: int = 10,
        exact_pricing: bool | str = True,
        max_pricing_samples: int = 5000,
        max_pricing_features: int = 2000,
        random_state: int = 0,
        verbose: bool = False,
        categorical=None,
        bins=None,
        thresholds: str = "boosted",
        n_thresholds: int = 9,
        negations: bool = True,
        missing: str = "category",
        identifiers: str = "drop",
        max_memory: int | None = None,
        min_support: float = 0.005,
        fairness: str | None = None,
        max_unfairness: float = 0.05,
        max_degree=DEPRECATED,
        penalty=DEPRECATED,
    ):
        self.complexity = complexity
        self.max_card = max_card
        self.cnf = cnf
        self.pos_label = pos_label
        self.regularization = regularization
        self.max_degree = max_degree
        self.penalty = penalty
        self.class_weight = class_weight
        self.time_limit = time_limit
        self.pricing_time_limit = pricing_time_limit
        self.max_nodes = max_nodes
        self.beam_width = beam_width
        self.exact_pricing = exact_pricing
        self.max_pricing_samples = max_pricing_samples
        self.max_pricing_features = max_pricing_features
        self.random_state = random_state
        self.verbose = verbose
        self.categorical = categorical
        self.bins = bins
        self.thresholds = thresholds
        self.n_thresholds = n_thresholds
        self.negations = negations
        self.missing = missing
        self.identifiers = identifiers
        self.max_memory = max_memory
        self.min_support = min_support
        self.fairness = fairness
        self.max_unfairness = max_unfairness

    def fit(self, X, y, sample_weight=None, sensitive=None):
        """Learn the rule set; ``sample_weight`` (one non-negative number a row) multiplies each row's
        class weight in the objective. With ``fairness=``: the best DNF whose metric between the two groups
        of ``sensitive`` (a column name of ``X``, which is then not a feature, or one value a row) is at most
        ``max_unfairness``, the described class (``pos_label``) the positive one
        (:mod:`optrules.rulesets.fair`)."""
        check_parameters(self)
        with self._fitting() as fitting:
            if self.fairness is not None or sensitive is not None:
                from .fair import fit_fair_rule_set

                fit_fair_rule_set(self, X, y, sample_weight, sensitive, fitting.budget)
            else:
                self._fit(X, y, sample_weight, fitting.budget, fitting.progress)
        return self

    def _fit(self, X, y, sample_weight, budget, progress) -> None:
        from .colgen import ColumnGenerationSettings

        frame, y01, sample_weight = self._weighted_rows(*self._target(X, y), sample_weight)
        features = self._binarize(frame, y01, math.ceil(self.min_support * len(y01) - 1e-9), budget,
                                  sample_weight, packed=True)
        describes = self._described_class()
        weights = self._class_weights(y01)
        negative_weight, positive_weight = weights[1 - describes], weights[describes]
        target = y01 == describes
        if self.cnf:  # De Morgan: a CNF for y is the negation of a DNF over negated features for not-y
            features, target = bitset.complement(features, len(y01)), ~target
            positive_weight, negative_weight = negative_weight, positive_weight
        settings = ColumnGenerationSettings(
            complexity=self.complexity if self.complexity is not None else np.inf,
            penalty=self._penalty(target, positive_weight, negative_weight, sample_weight),
            max_degree=int(value_of(self, "max_card")), positive_weight=positive_weight, negative_weight=negative_weight,
            pricing_time_limit=self.pricing_time_limit, beam_width=self.beam_width, exact=self.exact_pricing,
            max_pricing_samples=self.max_pricing_samples, max_pricing_features=self.max_pricing_features,
            random_state=self.random_state, max_nodes=self.max_nodes)
        budget.enter("search")
        result = self._climb(features, target, settings, budget, sample_weight, progress)
        result.certificate.counters["fit_time"] = budget.elapsed()
        self._set_rule_set(features, y01, list(result.solution), describes, sample_weight)
        self.certificate_ = result.certificate

    def _set_rule_set(self, features, y01, feature_clauses, describes: int, sample_weight) -> None:
        """``rule_set_`` of the clauses (feature indices into the packed ``features``), with each branch's
        training rates."""
        from .model import RuleSet
        from .selection import first_covering

        names = list(self.binarizer_.feature_names_)
        clauses = [tuple(names[j] for j in clause) for clause in feature_clauses]
        rule_set = RuleSet(clauses, self.cnf, (0.0, 1.0), self.classes_, self.binarizer_, describes=describes)
        # each row's branch from the packed features (a CNF's negated): re-binarizing the table to ask the
        # rule set took 0.5-0.9 s of a 10 s fit on 700,000 rows, after its budget
        fired = first_covering(features, feature_clauses, len(y01))
        accepted = np.array([b.prediction == describes for b in rule_set.branches()])[fired]
        # the described class's (weighted) training rate among the rows the set rejects, and among those
        # it accepts
        row_weights = np.ones(len(y01)) if sample_weight is None else sample_weight
        is_described = (y01 == describes).astype(np.float64)
        rates = tuple(_weighted_mean(is_described[accepted == side], row_weights[accepted == side], float(side))
                      for side in (False, True))
        totals = np.zeros((len(clauses) + 1, 2))
        np.add.at(totals, (fired, y01), row_weights)
        self.rule_set_ = self.rule_list_ = RuleSet(clauses, self.cnf, rates, self.classes_, self.binarizer_,
                                                   describes=describes, branch_totals=totals)


    def _climb(self, features, target, settings, budget, sample_weight, progress):
        """Column generation over the ladder of features (:func:`optrules.ladder.feature_rungs`): the
        reference's, then every feature from the set found (its clauses the master's first columns);
        the better set's result, its clauses in feature indices. Sets ``ladder_``."""
        from ..ladder import Ladder, RungResult, clauses_inside, feature_rungs
        from .colgen import ColumnGeneration

        chains = self.binarizer_.chains_  # (negated for a CNF, still nested)
        rungs = feature_rungs(getattr(self.binarizer_, "reference_features_", None), settings.max_degree)
        if len(rungs) < 2:
            self.ladder_ = None
            return ColumnGeneration(features, target, settings=settings, budget=budget, sample_weight=sample_weight,
                                    chains=chains, packed=True, progress=progress).solve()

        # the rungs below's: progress counts the whole fit, and the node budget is the whole fit's
        done = {"iterations": 0, "seconds": 0.0, "pricing_nodes": 0}

        def heard(trace, event):
            return progress(trace, replace(event, work=event.work + done["iterations"],
                                           elapsed=event.elapsed + done["seconds"]))

        def search(rung, starts, _):
            local = {int(j): k for k, j in enumerate(rung.positions)}
            started = time.perf_counter()
            nodes_left = None if settings.max_nodes is None else max(0, settings.max_nodes - done["pricing_nodes"])
            result = ColumnGeneration(
                features[rung.positions], target, settings=replace(settings, max_nodes=nodes_left), budget=budget,
                sample_weight=sample_weight,
                chains=None if chains is None else np.asarray(chains)[rung.positions], packed=True,
                progress=None if progress is None else heard,
                initial_clauses=[tuple(local[j] for j in clause) for start in starts for clause in start]).solve()
            result = replace(result, solution=[tuple(int(rung.positions[j]) for j in clause)
                                               for clause in result.solution])
            seconds = time.perf_counter() - started
            done["iterations"] += result.certificate.counters["iterations"]
            done["pricing_nodes"] += result.certificate.counters["pricing_nodes"]
            done["seconds"] += seconds
            return RungResult(rung, result.certificate, list(result.solution), {"result": result}, seconds)

        ladder = Ladder(rungs, search, budget, progress, inside=clauses_inside, watched=False, noun="rule set",
                        number=",.9g").climb([])
        result = ladder.best().fitted["result"]
        # (LP solves and pricing nodes: the whole fit's)
        result.certificate.counters["iterations"] = done["iterations"]
        result.certificate.counters["pricing_nodes"] = done["pricing_nodes"]
        self.ladder_ = ladder.note(result.certificate)
        return result

    def _penalty(self, target, positive_weight: float, negative_weight: float, sample_weight) -> float:
        """The objective's price of a unit of complexity, in weighted mistakes: ``regularization`` times the
        weighted rows (each row's class weight times its sample weight), or the old ``penalty`` as given."""
        if given(self.penalty):
            return float(self.penalty)
        costs = np.where(target, positive_weight, negative_weight)
        return float(self.regularization) * float(costs.sum() if sample_weight is None else costs @ sample_weight)


def _weighted_mean(values, weights, empty: float) -> float:
    """The weighted mean, or ``empty`` when there is no weight."""
    total = float(weights.sum())
    return float(values @ weights) / total if total > 0 else empty
