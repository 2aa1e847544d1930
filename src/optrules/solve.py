"""What every family's solver is, in one vocabulary: a :class:`Solver` runs its phases in one fixed order,
returns one frozen :class:`SolveResult`, and tells a progress callback what it does while it runs
(:class:`ProgressEvent`).

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
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import ClassVar

from .budget import STOP, Budget  # noqa: F401  (STOP: what a callback answers, named here too)
from .certificate import LP_SOLVES, METHODS, PREFIXES, Certificate, Trace  # noqa: F401  (the units, named here too)

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


@dataclass(frozen=True)
class SolveResult:
    """What every solver returns: the ``solution`` in the family's own terms (antecedent indices in order
    for a list, each clause's feature indices for a rule set, the enumeration for a Rashomon set), its
    ``objective``, the ``certificate`` that says how far from optimal it is proven to be (its ``method``
    names how), the solution's training ``mistakes`` when the solver counts them (weighted), and
    ``details`` a solver adds (a cluster search's work by worker)."""

    solution: object
    objective: float
    certificate: Certificate
    mistakes: float | None = None
    details: Mapping = field(default_factory=lambda: MappingProxyType({}))

    def __post_init__(self):
        if isinstance(self.solution, list):  # (a list of indices or clauses: kept as given, unchangeable)
            object.__setattr__(self, "solution", tuple(self.solution))
        object.__setattr__(self, "objective", float(self.objective))
        if not isinstance(self.details, MappingProxyType):
            object.__setattr__(self, "details", MappingProxyType(dict(self.details)))

    @property
    def method(self) -> str:
        return self.certificate.method

    @property
    def counters(self) -> dict:
        return self.certificate.counters


class Solver(ABC):
    """A solve in one fixed order of phases (:meth:`solve`); each phase documents what it leaves on the
    instance, and a family's solver says how it proves (``method``, a key of
    :data:`~optrules.certificate.METHODS`).

    1. :meth:`prepare`: the data the search reads (groups of alike samples, distinct rows, a master
       problem), charged to the budget.
    2. :meth:`start`: what the search starts from (the incumbent: a warm start, the given solutions).
    3. :meth:`search`: the search proper, until it ends or a budget or stop request ends it.
    4. :meth:`certify`: the :class:`SolveResult`: the best solution, its proven bound, status and counters.

    A budget spent or a stop heard before a phase (``Budget.stopped``) skips the phases left and returns
    :meth:`unsearched`: the best solution of what the phases that ran left (``self.ran``), with a bound
    they prove (0 at least). A solver is built with its data, then keyword-only its ``settings`` (one
    frozen dataclass), its ``budget`` and its ``progress`` callback.
    """

    method: ClassVar[str]
    PHASES: ClassVar[tuple[str, ...]] = ("prepare", "start", "search")

    def __init__(self, *, settings, budget: Budget, progress=None):
        if self.method not in METHODS:
            raise TypeError(f"{type(self).__name__}.method must be one of {sorted(METHODS)}, got {self.method!r}")
        self.settings, self.budget, self.progress = settings, budget, progress
        self.ran: list[str] = []  # the phases run so far, in order

    def solve(self) -> SolveResult:
        """Every phase in order, and the result: :meth:`certify`'s, or :meth:`unsearched`'s when a budget or
        a stop request ends the solve before a phase. The budget names the search as the fit's stage (a stop
        heard from now on was heard in the search)."""
        self.budget.enter("search")
        for phase in self.PHASES:
            if self.budget.stopped():
                return self.unsearched()
            getattr(self, phase)()
            self.ran.append(phase)
        return self.certify()

    @abstractmethod
    def prepare(self) -> None:
        """The data the search reads, charged to the budget."""

    def start(self) -> None:
        """What the search starts from (none by default)."""

    @abstractmethod
    def search(self) -> None:
        """The search proper, to its end or a budget."""

    @abstractmethod
    def certify(self) -> SolveResult:
        """The best solution with what the search proved of it."""

    @abstractmethod
    def unsearched(self) -> SolveResult:
        """What a solve stopped before a phase returns: the best of what ran (``self.ran``), a true bound."""
