"""The one-rule search as a :class:`~optrules.solve.Solver`: every feature tried, a block at a time, each
block reported to the progress callback, which may stop it (its best rule so far, and 0 as its bound)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from optrules.certificate import ENUMERATION, INTERRUPTED, OPTIMAL, TIME_BUDGET, Certificate, Trace
from optrules.solve import PREFIXES, ProgressEvent, Solver, SolveResult


@dataclass(frozen=True)
class OneRuleSettings:
    """Features tried between two reports."""

    block: int = 8


class OneRuleSearch(Solver):
    """1. prepare: each class's weight per row; 3. search: the mistakes of every ``if feature then a else b``,
    a block of features at a time (the budget heard between blocks); 4. certify: the first of the fewest."""

    method = ENUMERATION

    def __init__(self, features, codes, weights, n_classes: int, *, settings: OneRuleSettings, budget, progress=None):
        super().__init__(settings=settings, budget=budget, progress=progress)
        self.features, self.codes, self.weights, self.n_classes = features, codes, weights, n_classes
        self.mistakes = np.full(features.shape[1], np.inf)
        self.tried = 0
        self.trace = Trace()

    def prepare(self) -> None:
        self.by_class = np.stack([self.weights * (self.codes == c) for c in range(self.n_classes)], axis=1)

    def search(self) -> None:
        for start in range(0, self.features.shape[1], self.settings.block):
            if self.budget.stopped():
                return
            block = self.features[:, start:start + self.settings.block].T.astype(np.float64)
            inside = block @ self.by_class
            outside = self.by_class.sum(axis=0) - inside
            self.mistakes[start:start + len(block)] = (inside.sum(axis=1) - inside.max(axis=1) + outside.sum(axis=1)
                                                       - outside.max(axis=1))
            self.tried = start + len(block)
            self._report()

    def _report(self) -> None:
        total = self.weights.sum()
        best = min(self._no_rule(), float(self.mistakes.min())) / total
        self.trace.append(self.budget.elapsed(), best, 0.0, [self.features.shape[1] - self.tried], float("nan"))
        if self.progress is not None:
            self.budget.hear(self.progress(self.trace, ProgressEvent.from_trace(self.trace, self.tried, PREFIXES)))

    def _no_rule(self) -> float:
        totals = np.bincount(self.codes, weights=self.weights, minlength=self.n_classes)
        return float(totals.sum() - totals.max())

    def unsearched(self) -> SolveResult:
        return self._result(INTERRUPTED if self.budget.interrupted else TIME_BUDGET)

    def certify(self) -> SolveResult:
        finished = self.tried == self.features.shape[1]
        return self._result(OPTIMAL if finished else INTERRUPTED if self.budget.interrupted else TIME_BUDGET)

    def _result(self, status: str) -> SolveResult:
        total = self.weights.sum()
        best = int(np.argmin(self.mistakes)) if self.tried else -1  # the first of the fewest
        solution = () if best < 0 or self.mistakes[best] >= self._no_rule() and status != OPTIMAL else (best,)
        objective = (self.mistakes[best] if solution else self._no_rule()) / total
        lower = objective if status == OPTIMAL else 0.0
        counters = {"expansions": self.tried, "features_tried": self.tried}
        return SolveResult(solution, objective, Certificate(status, objective, lower, counters, self.trace, ENUMERATION))
