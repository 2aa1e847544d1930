"""What every family's solver says, in one vocabulary: what a solve returns (:class:`SolveResult`) and what
it tells a progress callback while it runs (:class:`ProgressEvent`).

A progress callback (an estimator's callable ``verbose``; the web app's) is called as ``callback(trace,
event)``: ``trace`` is the certificate's :class:`~optrules.certificate.Trace` so far, ``event`` the last
point as a :class:`ProgressEvent` (elapsed seconds, best objective, proven lower bound, the work done in
the solver's own unit, the open subproblems). It returns :data:`~optrules.budget.STOP` to end the solve
cleanly with its best model and certified gap, anything else to go on; the solver hands the answer to
its :class:`~optrules.budget.Budget` (``Budget.hear``), which also hears Ctrl-C and holds every other
budget, so that one predicate, ``Budget.stopped()``, decides every stop.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from .certificate import LP_SOLVES, PREFIXES, Certificate, Trace  # noqa: F401  (the units, named here too)

#: the units of work the solvers report (``ProgressEvent.unit``): ``PREFIXES``, ``LP_SOLVES`` (the
#: certificate's methods') and
STAGES = "stages"  # between the stages of a fit (binarizing, mining), before any search


@dataclass(frozen=True)
class ProgressEvent(Mapping):
    """One progress point of a solve. It also reads as the mapping callbacks were first given
    (``event["nodes_expanded"]``: the work done, ``event["queue"]``: the open subproblems)."""

    elapsed: float
    objective: float
    lower_bound: float
    work: int
    unit: str
    queue: int = 0
    log10_remaining: float = math.nan  # of the search space left (Theorem 7 of CORELS), when known

    @classmethod
    def from_trace(cls, trace: Trace, work: int, unit: str, queue: int = 0) -> "ProgressEvent":
        """The event of the trace's last point (an empty trace: nothing found yet)."""
        if not len(trace):
            return cls(0.0, math.inf, 0.0, int(work), unit, int(queue))
        return cls(float(trace.time[-1]), float(trace.objective[-1]), float(trace.lower_bound[-1]), int(work), unit,
                   int(queue), float(trace.log10_remaining[-1]))

    @property
    def gap(self) -> float:
        return max(0.0, self.objective - self.lower_bound)

    def _legacy(self) -> dict:
        return {"nodes_expanded": self.work, "queue": self.queue}

    def __getitem__(self, key):
        return self._legacy()[key]

    def __iter__(self):
        return iter(self._legacy())

    def __len__(self) -> int:
        return 2


class SolveResult:
    """What every family's solver returns: ``objective`` (of the solution returned), its ``certificate``
    (status, proven lower bound, counters, trace) and the solution in the family's own terms
    (``solution``: a prefix of antecedent indices for the lists, clause indices for a rule set)."""

    objective: float
    certificate: Certificate

    @property
    def solution(self) -> tuple:  # pragma: no cover - every result says what its solution is
        raise NotImplementedError

    @property
    def counters(self) -> dict:
        return self.certificate.counters
