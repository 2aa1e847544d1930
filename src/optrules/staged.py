"""The list families' staged search (rule lists, falling rule lists): which spaces of mined antecedents a
fit searches, in what order, and which search's list it keeps.

A family's estimator gives :meth:`StagedListSearch._search_space`: one certified search over a
:class:`Space` (antecedents, their positions among the mined ones, the literals a rule may have), which
*returns* the fitted attributes it found (list, indices, certificate, ...) and sets nothing. This layer
chooses the spaces (every mined antecedent; or, with ``max_card="auto"``, the ladder's rungs:
:mod:`optrules.ladder`) and puts the chosen search's attributes on the estimator once, at the end: a
stage never reads what another left on the estimator. The rule sets climb their own ladder of features
(``RuleSetClassifier._climb``) and do not inherit this one.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from .budget import Budget
from .data.mine import Antecedents


@dataclass(frozen=True)
class Space:
    """What one search runs over: ``antecedents``, their ``positions`` among the mined ones
    (``mined_antecedents_``), and ``max_card``, the literals of its longest antecedent."""

    antecedents: Antecedents
    positions: np.ndarray
    max_card: int

    @classmethod
    def every(cls, mined: Antecedents, max_card: int) -> "Space":
        return cls(mined, np.arange(len(mined)), int(max_card))

    def fitted(self) -> dict:
        """The fitted attributes that say which space a model is over."""
        return {"antecedents_": self.antecedents, "_space_positions": np.asarray(self.positions, dtype=np.int64),
                "max_card_": self.max_card}


class StagedListSearch:
    """The staged search of an estimator whose model is a list over mined antecedents (a mixin beside
    :class:`~optrules.base.RuleModelEstimator`): :meth:`_search` runs it and sets the chosen list."""

    def _search_space(self, prepared, space: Space, initial_prefix=None, budget: Budget | None = None,
                      progress=None, max_nodes: int | None = None) -> dict:  # pragma: no cover - each family's
        """The fitted attributes of one search over ``space`` (from ``initial_prefix``: indices into it)."""
        raise NotImplementedError

    def _take(self, fitted: dict):
        """Set the fitted attributes one search returned."""
        for name, value in fitted.items():
            setattr(self, name, value)
        return self

    def _search(self, prepared, initial_prefix=None, budget: Budget | None = None, progress=None):
        """The certified search over the mined antecedents (``prepared``: what the family's
        ``_search_space`` needs), optionally from known lists (prefixes of indices into the mined
        antecedents); within ``budget`` (the fit's), or a new one from ``time_limit`` and ``max_memory``.
        With ``max_card="auto"``: the ladder of nested spaces (:meth:`_climb`). Sets the chosen search's
        attributes (``_space_positions`` maps the indices of its space into ``mined_antecedents_``)."""
        mined = self.mined_antecedents_
        if budget is not None:
            budget.enter("search")
        if self.max_card != "auto" or not len(mined):
            space = Space.every(mined, self._mining_card() if self.max_card != "auto" else 1)
            return self._take(self._search_space(prepared, space, initial_prefix, budget, progress))
        own_progress = progress is None
        progress = self._progress() if own_progress else progress
        try:
            return self._climb(prepared, initial_prefix, budget if budget is not None else self._budget(progress),
                               progress)
        finally:
            if own_progress:
                self._close(progress)

    def _climb(self, prepared, initial_prefix, budget: Budget, progress):
        """``max_card="auto"``: climb the ladder of nested spaces (:mod:`optrules.ladder`: the reference's
        literals, every single literal, pairs), each rung's search started from the best list so far; the
        fitted model is the best list found, and its certificate's ``proven`` says what is proven of it
        (``ladder_`` lists each rung's space, seconds and outcome)."""
        from .ladder import Ladder, ladder_rungs

        mined = self.mined_antecedents_
        rungs = ladder_rungs(mined, self.binarizer_.feature_names_,
                             getattr(self.binarizer_, "reference_features_", None), self._mining_card())
        starts = [] if initial_prefix is None else ([initial_prefix] if len(initial_prefix) == 0 or np.isscalar(
            initial_prefix[0]) else list(initial_prefix))
        ladder = Ladder(rungs, lambda rung, rung_starts, watch: self._search_rung(
            prepared, mined, rung, rung_starts, budget, watch), budget, progress).climb(starts)
        best = ladder.best()
        self._take(best.fitted)
        self.certificate_ = best.certificate
        self.ladder_ = ladder.note(self.certificate_)
        self.certificate_.counters["fit_time"] = budget.elapsed()
        return self

    def _search_rung(self, prepared, mined: Antecedents, rung, starts: list, budget: Budget, progress):
        """One rung's search (:class:`optrules.ladder.RungResult`): ``_search_space`` over its antecedents
        from ``starts`` (positions into ``mined``); the estimator is left as it was."""
        from .ladder import RungResult

        position = {int(a): k for k, a in enumerate(rung.positions)}
        space = Space(mined.subset(rung.positions), np.asarray(rung.positions, dtype=np.int64), rung.max_card)
        started = time.perf_counter()
        fitted = self._search_space(prepared, space, [[position[int(a)] for a in p] for p in starts] or None, budget,
                                    progress)
        return RungResult(rung, fitted["certificate_"], [int(rung.positions[a]) for a in fitted["antecedent_indices_"]],
                          fitted, time.perf_counter() - started)
