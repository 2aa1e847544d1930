"""A fitted rule list's Rashomon set (:class:`RashomonSet`): its members as rule lists, their count, samples,
and what they do on data (predictions, multiplicity, feature use, group rates, fairness, reliance; counted
by :mod:`optrules.corels.rashomon_analysis`), over the enumeration of :mod:`optrules.corels.rashomon`."""

from __future__ import annotations

import math
from collections import defaultdict
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Iterator

import numpy as np

from ..budget import Budget
from ..certificate import INTERRUPTED, OPTIMAL, TIME_BUDGET
from ..escape import plain as _plain
from . import rashomon_analysis as A
from .rashomon import Enumeration, Member


@dataclass(frozen=True)
class RashomonMember:
    """A rule list of a Rashomon set. ``rules`` are the conditions of each rule (feature names, all
    true), ``predictions`` the class label of each rule and then of the default."""

    antecedents: tuple[int, ...]  # indices into the estimator's antecedents_
    rules: tuple[tuple[str, ...], ...]
    predictions: tuple
    objective: float
    mistakes: float
    _owner: "RashomonSet" = field(repr=False, compare=False, default=None)
    _class_indices: tuple[int, ...] = field(repr=False, compare=False, default=())  # of ``predictions``

    @property
    def n_rules(self) -> int:
        return len(self.rules)

    @property
    def rule_list(self):
        """The member as a :class:`~optrules.models.RuleList` (training counts included)."""
        return self._owner._rule_list(self.antecedents)

    def predict(self, X) -> np.ndarray:
        return self.rule_list.predict(X)

    def __str__(self) -> str:
        lines = [f"objective {self.objective:.9f} ({self.n_rules} rules)"]
        for k, (conditions, label) in enumerate(zip(self.rules, self.predictions)):
            lines.append(f"{'if' if k == 0 else 'else if'} {' and '.join(conditions)} then {label}")
        lines.append(f"else {self.predictions[-1]}")
        return "\n".join(lines)


class RashomonSet:
    """Every rule list whose objective is within ``epsilon`` of the optimum R*, over the mined
    antecedents (see :mod:`optrules.corels.rashomon` for the exact definition and how completeness is
    certified).

    Sized (``size``; ``len()`` when it fits an index), iterable (members in depth-first order, each as a
    :class:`RashomonMember`), countable for any smaller epsilon without listing (:meth:`count`), and
    samplable uniformly (:meth:`sample`). ``complete`` says whether every member is certainly there;
    otherwise ``complete_below`` is the objective below which it is (a budget stopped the enumeration).
    Analysis: :meth:`predictions`, :meth:`multiplicity`, :meth:`feature_usage`, :meth:`group_rates`,
    :meth:`reliance`, and :meth:`permutation_groups` (members that differ only in order).
    """

    def __init__(self, enumeration: Enumeration, conditions, classes, rule_list, capture_frame, training_captures,
                 regularization: float):
        self._enumeration = enumeration
        self._conditions = conditions
        self.classes = np.asarray(classes)
        self._rule_list_of = rule_list
        self._capture_frame = capture_frame  # X -> (n_antecedents, n_rows) boolean, for the antecedents asked
        self._training_captures = training_captures  # () -> (n_antecedents, n_samples) boolean
        self.regularization = float(regularization)

    # -- what it is --------------------------------------------------------------------------------
    @property
    def epsilon(self) -> float:
        return self._enumeration.epsilon

    @property
    def optimum(self) -> float:
        """R*: the smallest objective of any list (certified when the set is complete)."""
        return self._enumeration.optimum

    @property
    def threshold(self) -> float:
        """R* + epsilon: the largest objective of a member."""
        return self.optimum + self.epsilon

    @property
    def complete_below(self) -> float:
        """Every list of smaller objective is in the set (infinite when the enumeration finished)."""
        return self._enumeration.complete_below

    @property
    def complete(self) -> bool:
        """Is every member certainly in the set (and R* certified)?"""
        return self.complete_below * self._enumeration.total_weight > self._enumeration.allowance

    @property
    def status(self) -> str:
        """``complete`` when the enumeration finished, else the budget that stopped it."""
        return "complete" if self._enumeration.status == OPTIMAL else self._enumeration.status

    @property
    def counters(self) -> dict:
        return dict(self._enumeration.counters)

    @property
    def size(self) -> int:
        return self._enumeration.count()

    def __len__(self) -> int:
        return self.size

    def count(self, epsilon: float | None = None) -> int:
        """Members within ``epsilon`` (at most the set's) of the optimum, counted without listing them."""
        return self._enumeration.count(epsilon)

    def objective_counts(self) -> dict[float, int]:
        """Number of members at each objective value."""
        return self._enumeration.objective_counts()

    def objective_histogram(self, bins: int = 30) -> tuple[np.ndarray, np.ndarray]:
        """``(edges, counts)``: the members counted in ``bins`` equal bins of objective from R* to
        R* + epsilon (one bin when epsilon is 0), without listing them."""
        counts = self.objective_counts()
        values = np.array(list(counts), dtype=float)
        low = min(self.optimum, values.min(initial=self.optimum))  # (the counts' keys are rounded)
        high = max(self.threshold, values.max(initial=low))
        edges = np.linspace(low, high, int(bins) + 1) if high > low else np.array([low, low + 1e-9])
        numbers, _ = np.histogram(values, bins=edges, weights=np.array(list(counts.values()), dtype=float))
        return edges, numbers.round().astype(np.int64)

    def __iter__(self) -> Iterator[RashomonMember]:
        return (self._member(m) for m in self._enumeration.members())

    def sample(self, n_samples: int = 1, random_state=None, budget: Budget | None = None,
               replace: bool = False) -> list[RashomonMember]:
        """``n_samples`` distinct members drawn uniformly at random (every member, in set order, when the set
        holds no more); with ``replace=True``, independent uniform draws (a list may come more than once).
        Fewer (as uniform) when ``budget`` ends first."""
        rng = np.random.default_rng(random_state)
        if replace:
            return [self._member(m) for m in self._enumeration.sample(n_samples, rng, budget)]
        if self.size <= 2 * n_samples:  # few enough to list: a uniform subset of them
            every = list(self._enumeration.members())
            kept = np.sort(rng.choice(len(every), size=min(n_samples, len(every)), replace=False))
            return [self._member(every[k]) for k in kept]
        # uniform draws, a list drawn again dropped: a uniform subset (at least half of each draw is new)
        distinct: dict = {}
        while len(distinct) < n_samples:
            drawn = self._enumeration.sample(n_samples - len(distinct), rng, budget)
            for member in drawn:
                distinct.setdefault((tuple(member.prefix), tuple(member.predictions)), member)
            if len(drawn) < n_samples - len(distinct) or (budget is not None and budget.stopped()):
                break
        return [self._member(m) for m in list(distinct.values())[:n_samples]]

    def __repr__(self) -> str:
        state = "complete" if self.complete else f"complete below objective {self.complete_below:.9f} ({self.status})"
        if not math.isfinite(self.optimum):  # a budget stopped it before any list ended
            return f"RashomonSet(no rule list reached yet, {state})"
        return (f"RashomonSet({self.size:,} rule lists within {self.epsilon:g} of R* = {self.optimum:.9f}, "
                f"{state})")

    def _member(self, member: Member) -> RashomonMember:
        rules = tuple(self._conditions[a] for a in member.prefix)
        labels = tuple(_plain(self.classes[c]) for c in member.predictions)
        return RashomonMember(member.prefix, rules, labels, member.objective, member.mistakes, self, member.predictions)

    def _rule_list(self, antecedents):
        return self._rule_list_of(antecedents)

    def _chosen(self, members, max_members: int) -> list[RashomonMember]:
        """``members`` as a list; by default every member, refused above ``max_members`` (sample instead)."""
        if members is not None:
            return list(members)
        if self.size > max_members:
            raise ValueError(f"the set has {self.size:,} members, more than max_members={max_members:,}: pass "
                             "members=rashomon.sample(n) (a uniform sample) or raise max_members")
        return list(self)

    # -- analysis ----------------------------------------------------------------------------------
    # (computed on groups of rows captured alike, within a budget: optrules.corels.rashomon_analysis)
    def predictions(self, X=None, members=None, max_members: int = 100_000) -> np.ndarray:
        """``(members, rows)``: each member's predicted class index for each row of ``X`` (default: the
        training data). Antecedents are evaluated once for all members."""
        chosen = self._chosen(members, max_members)
        groups = self._row_groups(X, chosen)
        blocks = [A.expand(groups, block) for block in A.prediction_blocks(groups, chosen, self._index_dtype)]
        return np.concatenate(blocks) if blocks else np.empty((0, self._n_rows(X)), self._index_dtype)

    @property
    def _index_dtype(self):
        return np.uint8 if len(self.classes) <= 256 else np.int32

    def _n_rows(self, X) -> int:
        return self._training_captures([]).shape[1] if X is None else len(X)

    def _row_groups(self, X, members) -> A.RowGroups:
        """The rows of ``X`` (default: the training rows) grouped by what the members' antecedents capture."""
        used = sorted({a for m in members for a in m.antecedents})
        return A.RowGroups(self._training_captures(used) if X is None else self._capture_frame(X, used), used)

    @contextmanager
    def _analysis_budget(self, time_limit, budget):
        """The budget an analysis runs in: ``budget`` as given, or one of ``time_limit`` seconds (None: no
        limit) that hears Ctrl-C (the analysis then returns what it read, and says so)."""
        if budget is not None:
            yield budget
            return
        own = Budget(time_limit)
        with own.catch_interrupt():
            yield own

    def multiplicity(self, X=None, members=None, max_members: int = 100_000, time_limit: float | None = None,
                     budget: Budget | None = None) -> dict:
        """Predictive multiplicity (Marx, Calmon and Ustun, 2020) over the members: ``ambiguity``, the
        share of rows whose prediction some member changes from the optimal list's; ``discrepancy``, the
        largest share of rows one member changes; ``disagreement``, per row the share of members that
        predict another class than the optimal list (NaN on rows not read). Exact, unless the
        ``time_limit`` (seconds), the ``budget`` or Ctrl-C cut it short: ``scope``
        (:class:`~optrules.corels.rashomon_analysis.AnalysisScope`) says what it read."""
        chosen = self._chosen(members, max_members)
        with self._analysis_budget(time_limit, budget) as within:
            optimal = self.optimal_member()
            groups = A.fitted_groups(self._row_groups(X, [optimal] + chosen), len(chosen) + 1, within)
            return A.multiplicity(groups, optimal, chosen, self._index_dtype, within)

    def optimal_member(self) -> RashomonMember:
        """A list of objective R* (the shortest, then the first found)."""
        if not math.isfinite(self.optimum):
            raise ValueError(f"the set holds no rule list: the enumeration stopped ({self.status}) before reaching one; "
                             "raise time_limit or max_memory")
        return min((self._member(m) for m in self._enumeration.members(0.0)), key=lambda m: (m.objective, m.n_rules))

    def feature_usage(self, members=None, max_members: int = 100_000):
        """Per feature the members use: how many use it, their share, and whether the optimal list does
        (a pandas DataFrame, most used first)."""
        import pandas as pd

        chosen = self._chosen(members, max_members)
        optimal = set(c for rule in self.optimal_member().rules for c in rule)
        counts: dict[str, int] = defaultdict(int)
        for member in chosen:
            for feature in {c for rule in member.rules for c in rule}:
                counts[feature] += 1
        frame = pd.DataFrame({"feature": list(counts), "members": list(counts.values())})
        frame["share"] = frame["members"] / max(1, len(chosen))
        frame["in_optimal_list"] = frame["feature"].isin(optimal)
        return frame.sort_values(["members", "feature"], ascending=[False, True], ignore_index=True)

    def permutation_groups(self, members=None, max_members: int = 100_000) -> list[list[RashomonMember]]:
        """Members grouped by their set of rules (lists that differ only in order), best group first."""
        groups: dict[frozenset, list] = defaultdict(list)
        for member in self._chosen(members, max_members):
            groups[frozenset(member.antecedents)].append(member)
        return sorted(groups.values(), key=lambda g: (min(m.objective for m in g), len(g[0].antecedents)))

    def group_rates(self, X, y, groups, members=None, max_members: int = 100_000, positive=None,
                    max_groups: int | None = None, time_limit: float | None = None, budget: Budget | None = None):
        """Ranges over the members of each group's predicted-positive, false-positive and false-negative
        rates (two classes; ``positive`` defaults to the second class). ``groups``: a column of ``X`` or
        one value per row (a missing value is a group of its own); with ``max_groups``, the rarest values
        beyond it are pooled into one. A pandas DataFrame with min / optimal / max per rate and group,
        exact unless ``time_limit``, ``budget`` or Ctrl-C cut it short, or values were pooled:
        ``frame.attrs["scope"]`` says what it read."""
        if len(self.classes) != 2:
            raise ValueError("group rates need two classes")
        chosen = self._chosen(members, max_members)
        positive_index = 1 if positive is None else int(np.flatnonzero(self.classes == positive)[0])
        keys = np.asarray(X[groups] if isinstance(groups, str) else groups)
        truth = np.asarray(y) == self.classes[positive_index]
        if keys.shape[0] != truth.shape[0]:
            raise ValueError(f"groups has {keys.shape[0]} values for {truth.shape[0]} rows")
        codes, names, pooled = A.group_codes(keys, max_groups)
        with self._analysis_budget(time_limit, budget) as within:
            optimal = self.optimal_member()
            row_groups = A.fitted_groups(self._row_groups(X, [optimal] + chosen), len(chosen) + 1, within)
            return A.group_rates(row_groups, codes, names, truth, positive_index, optimal, chosen, self._index_dtype,
                                 within, pooled)

    def fairness(self, X, y, sensitive, metric: str = "statistical_parity", members=None, max_members: int = 100_000,
                 positive=None, time_limit: float | None = None, budget: Budget | None = None) -> dict:
        """How fair the near-optimal lists are: the smallest and largest gap in ``metric`` (a metric of
        :mod:`optrules.fairness.metrics`) between the two groups of ``sensitive`` (a column of ``X`` or one
        value a row) over the members, the optimal list's, and the fairest member (the least gap, then the
        least objective) with its exact gap: how much fairness is free within epsilon. Exact over every
        member when ``scope`` (an :class:`~optrules.corels.rashomon_analysis.AnalysisScope`) says all were
        read, on the rows of ``X``."""
        from ..fairness.metrics import check_metric, check_sensitive, exact_unfairness

        if len(self.classes) != 2:
            raise ValueError("a fairness metric needs two classes")
        check_metric(metric)
        chosen = self._chosen(members, max_members)
        positive_index = 1 if positive is None else int(np.flatnonzero(self.classes == positive)[0])
        keys = np.asarray(X[sensitive] if isinstance(sensitive, str) else sensitive, dtype=object)
        group, labels = check_sensitive(keys, len(X))
        truth = np.asarray(y) == self.classes[positive_index]
        features = X.drop(columns=[sensitive]) if isinstance(sensitive, str) and sensitive in X.columns else X
        everyone = [self.optimal_member()] + A.analysis_order(chosen)
        scope = A.AnalysisScope(len(X), len(X), len(chosen), len(chosen))
        with self._analysis_budget(time_limit, budget) as within:
            row_groups = self._row_groups(features, everyone)
            gaps = A.fairness_gaps(row_groups, group, truth, positive_index, everyone, self._index_dtype, metric,
                                   within, scope)
        if scope.stopped:
            scope.members -= 1  # (the gaps counted the optimal list too)
        read = everyone[:len(gaps)]
        fairest = min(range(len(read)), key=lambda k: (round(float(gaps[k]), 12), read[k].objective))
        predicted = read[fairest].predict(features) == self.classes[positive_index]
        return {"metric": metric, "groups": labels, "min": float(gaps[1:].min(initial=gaps[0])),
                "max": float(gaps[1:].max(initial=gaps[0])), "optimal": float(gaps[0]), "fairest": read[fairest],
                "fairest_gap": exact_unfairness(truth.astype(int), group, None, predicted, metric), "scope": scope}

    def reliance(self, X, y, members=None, max_members: int = 100_000, random_state=0, time_limit: float | None = None,
                 budget: Budget | None = None):
        """Model class reliance (Fisher, Rudin and Dominici, 2019) per column of ``X``: over the members,
        the smallest and largest increase in error rate when that column's values are permuted among
        the rows (one fixed permutation per column), beside the optimal list's. Within ``time_limit``,
        ``budget`` or Ctrl-C: the columns not reached are left out (``frame.attrs["scope"]``)."""
        import pandas as pd

        chosen = self._chosen(members, max_members)
        rng = np.random.default_rng(random_state)
        label_index = {_plain(label): k for k, label in enumerate(self.classes)}
        codes = np.array([label_index.get(_plain(v), -1) for v in np.asarray(y)])  # -1: a class no list predicts
        ranges = _Ranges()
        with self._analysis_budget(time_limit, budget) as within:
            everyone = [self.optimal_member()] + chosen
            scope = A.AnalysisScope(len(X), len(X), len(chosen), len(chosen))
            base = A.error_rates(self._row_groups(X, everyone), codes, len(self.classes), everyone, self._index_dtype)
            for column in X.columns:
                if within.stopped():
                    scope.stopped = INTERRUPTED if within.interrupted else TIME_BUDGET
                    break
                shuffled = X.copy()
                shuffled[column] = X[column].to_numpy()[rng.permutation(len(X))]
                errors = A.error_rates(self._row_groups(shuffled, everyone), codes, len(self.classes), everyone,
                                       self._index_dtype)
                ranges.add(column, errors - base)
        rows = [{"column": column, **values} for column, values in ranges.items()]
        frame = (pd.DataFrame(rows, columns=["column", "min", "optimal", "max"])
                 .sort_values("max", ascending=False, ignore_index=True))
        frame.attrs["scope"] = scope
        return frame


class _Ranges:
    """Per key, the smallest and largest value over the members (NaN ignored) and the optimal list's
    (the first value added), gathered block by block."""

    def __init__(self):
        self._ranges: dict = {}

    def add(self, key, values: np.ndarray) -> None:
        first = key not in self._ranges
        optimal = float(values[0]) if first else self._ranges[key]["optimal"]
        others = values[1:] if first else values
        low, high = (float(np.nanmin(others)), float(np.nanmax(others))) if np.isfinite(others).any() else (math.nan,) * 2
        if not first:
            low, high = np.fmin(low, self._ranges[key]["min"]), np.fmax(high, self._ranges[key]["max"])
        self._ranges[key] = {"min": float(low), "optimal": optimal, "max": float(high)}

    def items(self):
        return self._ranges.items()


def _rate(flags: np.ndarray) -> np.ndarray:
    """Mean over rows of a (members, rows) boolean matrix; NaN when there are no rows."""
    return flags.mean(axis=1) if flags.shape[1] else np.full(flags.shape[0], np.nan)
