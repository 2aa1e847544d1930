"""The one-rule search as a :class:`~optrules.solve.Solver`: every candidate feature tried, a block at a
time (split among ``n_jobs`` threads: numpy's products release the GIL), each block reported to the
progress callback, which may stop it (its best rule so far, and 0 as its bound)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from optrules.bnb import threads_for
from optrules.certificate import ENUMERATION, INTERRUPTED, OPTIMAL, TIME_BUDGET, Certificate, Trace
from optrules.solve import PREFIXES, ProgressEvent, Solver, SolveResult


@dataclass(frozen=True)
class OneRuleSettings:
    """Features tried between two reports; the ``candidates`` (feature indices; None: every feature); the
    threads a block is split among."""

    block: int = 8
    candidates: tuple | None = None
    n_jobs: int | None = None


class OneRuleSearch(Solver):
    """1. prepare: each class's weight per row; 3. search: the mistakes of every ``if feature then a else b``,
    a block of features at a time (the budget heard between blocks); 4. certify: the first of the fewest."""

    method = ENUMERATION

    def __init__(self, features, codes, weights, n_classes: int, *, settings: OneRuleSettings, budget, progress=None):
        super().__init__(settings=settings, budget=budget, progress=progress)
        self.codes, self.weights, self.n_classes = codes, weights, n_classes
        self.candidates = (np.arange(features.shape[1]) if settings.candidates is None
                           else np.asarray(settings.candidates, dtype=np.int64))
        self.features = features[:, self.candidates]
        self.mistakes = np.full(len(self.candidates), np.inf)
        self.tried = 0
        self.trace = Trace()

    def prepare(self) -> None:
        self.by_class = np.stack([self.weights * (self.codes == c) for c in range(self.n_classes)], axis=1)

    def search(self) -> None:
        threads = max(1, threads_for(self.settings.n_jobs))
        with ThreadPoolExecutor(threads) as pool:
            for start in range(0, self.features.shape[1], self.settings.block):
                if self.budget.stopped():
                    return
                stop = min(start + self.settings.block, self.features.shape[1])
                parts = np.array_split(np.arange(start, stop), threads)
                for part, scored in zip(parts, pool.map(self._scored, parts)):
                    self.mistakes[part] = scored
                self.tried = stop
                self._report()

    def _scored(self, columns: np.ndarray) -> np.ndarray:
        """The fewest mistakes of ``if feature then a else b`` for each of these candidates (a column at a
        time: the same sums however the block is split among threads)."""
        inside = np.array([self.by_class[self.features[:, j]].sum(axis=0) for j in columns]).reshape(-1, self.n_classes)
        outside = np.array([self.by_class[~self.features[:, j]].sum(axis=0) for j in columns]).reshape(-1, self.n_classes)
        return inside.sum(axis=1) - inside.max(axis=1) + outside.sum(axis=1) - outside.max(axis=1)

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
        finished = self.tried == len(self.candidates)
        return self._result(OPTIMAL if finished else INTERRUPTED if self.budget.interrupted else TIME_BUDGET)

    def _result(self, status: str) -> SolveResult:
        total = self.weights.sum()
        best = int(np.argmin(self.mistakes)) if self.tried else -1  # the first of the fewest
        keep = best >= 0 and (status == OPTIMAL or self.mistakes[best] < self._no_rule())
        solution = (int(self.candidates[best]),) if keep else ()
        objective = (self.mistakes[best] if keep else self._no_rule()) / total
        lower = objective if status == OPTIMAL else 0.0
        counters = {"expansions": self.tried, "features_tried": self.tried}
        return SolveResult(solution, objective, Certificate(status, objective, lower, counters, self.trace, ENUMERATION))
