"""The ladder of nested spaces a certified fit climbs (``max_card="auto"``: rule lists, falling lists; rule
sets over the reference's features, then every feature).

A space of a few hundred literals over rows that are all distinct (noisy credit and census tables) is
beyond any known bound within a minute, while the literals a boosted reference chose (a few dozen) certify
in well under a second. So a fit certifies a small space first and climbs to larger ones that hold it:

1. the single literals whose features the reference ensemble chose (its thresholds, the category values
   and missing values it split on, their negations; every feature of a column it did not see);
2. every single literal;
3. conjunctions of two literals (every mined antecedent).

What must hold: each rung's antecedents hold the one's below, so a rung's optimum is at most the one
below it, and each rung's search starts from the best list found so far (its first incumbent: it never
returns a worse list). A rung is climbed only after the one below certified; it runs while its own lower
bound, at the rate it rose over the last half of the rung's run, reaches the incumbent within the time
left (:class:`RungWatch`), else it ends there. The model is the best list found; its certificate
(:func:`proven_statement`) says in one sentence what is proven: optimal over the largest certified rung,
or, when a larger rung found a better list without finishing, better than every list of the certified
rung and within its gap of the optimum over the larger one.

The rungs are chosen by the estimator (:func:`ladder_rungs`, :func:`feature_rungs`); a stage searches one
rung and returns the estimator's fitted attributes for it (:class:`RungResult`), and :class:`Ladder` keeps
them apart until the best is chosen.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from .certificate import Certificate

#: seconds a rung above the first runs before its watch may end it: the lower bound jumps in the first
#: tenths of a second and may then stay flat a while (ionosphere's pairs, boosted space, 30 s budget:
#: ended at 0.5 s with a gap of 0.016, certified at 2.5 s when given 2 s)
RUNG_PROBE_SECONDS = 2.0
#: the watch ends a rung whose projected finish, this many times the straight line of its lower bound's
#: last half, falls after the deadline (measured: a noisy 1,000-row table's 46-literal rung finished at
#: 1.4-1.5 times what the line projected at a third of its run)
RUNG_PROJECTION_SAFETY = 2.0
#: a rung is climbed only when the time left is at least this many times what the rung below took (a
#: larger space costs at least what the smaller did)
RUNG_TIME_RATIO = 2.0
#: objectives closer than this are the same list's (found again by a larger rung)
OBJECTIVE_TIE = 1e-12


@dataclass(frozen=True)
class Rung:
    """One space of the ladder: ``positions`` into the mined antecedents (sorted), and what they are."""

    name: str
    positions: np.ndarray
    max_card: int

    def describe(self) -> str:
        return f"{len(self.positions):,} {self.name}"


def ladder_rungs(mined, feature_names: list[str], reference_features, max_card: int) -> list[Rung]:
    """The nested rungs of a fit's mined antecedents (``mined``: items index ``mined.feature_names``):
    the reference's single literals (when ``reference_features``, a mask over ``feature_names``, leaves
    some out and keeps some), every single literal, then every antecedent when ``max_card`` > 1. Rungs
    that add nothing to the one below are left out."""
    sizes = np.fromiter((len(items) for items in mined.items), dtype=np.int64, count=len(mined))
    singles = np.flatnonzero(sizes == 1)
    rungs = []
    if reference_features is not None:
        chosen = {name for name, keep in zip(feature_names, reference_features) if keep}
        picked = np.asarray([p for p in singles if mined.feature_names[mined.items[p][0]] in chosen], dtype=np.int64)
        if 0 < len(picked) < len(singles):
            rungs.append(Rung("literals the reference chose", picked, 1))
    if len(singles):
        rungs.append(Rung("single literals", singles, 1))
    if max_card > 1 and len(singles) < len(mined):
        rungs.append(Rung(f"antecedents (conjunctions of up to {max_card} literals)", np.arange(len(mined)),
                          max_card))
    return rungs


def feature_rungs(reference_features, max_card: int) -> list[Rung]:
    """The rungs of a rule set's binary features: those the reference chose (``reference_features``, a
    mask over the features), when it leaves some out and keeps some, then every feature."""
    every = np.arange(0 if reference_features is None else len(reference_features), dtype=np.int64)
    chosen = np.flatnonzero(np.asarray(reference_features, dtype=bool)) if reference_features is not None else every
    rungs = [Rung("features the reference chose", chosen, max_card)] if 0 < len(chosen) < len(every) else []
    return rungs + [Rung("binary features", every, max_card)]


def antecedents_inside(rung: Rung, prefix) -> bool:
    """Whether a list (positions into the mined antecedents) is one of ``rung``'s."""
    inside = set(rung.positions.tolist())
    return all(int(a) in inside for a in prefix)


def clauses_inside(rung: Rung, clauses) -> bool:
    """Whether a rule set (clauses of feature indices) is one of ``rung``'s."""
    inside = set(rung.positions.tolist())
    return all(int(j) in inside for clause in clauses for j in clause)


@dataclass(eq=False)  # (compared by identity: its fields hold arrays)
class RungResult:
    """One rung's search: its certificate, the best model (``prefix``: a list's positions into the mined
    antecedents, a rule set's clauses of feature indices), and the estimator's fitted attributes it left
    (``fitted``, put back if this rung's model is the model)."""

    rung: Rung
    certificate: Certificate
    prefix: list
    fitted: dict
    seconds: float

    @property
    def certified(self) -> bool:
        return self.certificate.is_optimal


class RungWatch:
    """Ends a rung (through :meth:`optrules.budget.Budget.ending_when`) once its lower bound, at the
    rate it rose over the last half of the rung's run, would not reach the incumbent before the deadline
    (times :data:`RUNG_PROJECTION_SAFETY`), after :data:`RUNG_PROBE_SECONDS` of search. Fed by the search's
    progress events (:meth:`heard`), which it passes on to ``progress``."""

    def __init__(self, deadline: float | None, progress=None):
        self.deadline = deadline
        self.progress = progress
        self.points: list[tuple[float, float]] = []
        self.hopeless = False
        self.projected: float | None = None

    def __call__(self, trace, event):
        self.heard(event)
        return None if self.progress is None else self.progress(trace, event)

    def heard(self, event, now: float | None = None) -> None:
        """A progress ``event`` of the rung's search, heard at ``now`` (the clock's, by default). Its
        rate is read on the search's own clock (``event.elapsed``, from the end of its kernel's
        compilation: a compile from a cold cache must not read as a bound that stopped rising)."""
        now = time.perf_counter() if now is None else float(now)
        ran, lower_bound, objective = float(event.elapsed), float(event.lower_bound), float(event.objective)
        if not (np.isfinite(lower_bound) and np.isfinite(objective) and np.isfinite(ran)):
            return
        self.points.append((ran, lower_bound))
        if self.deadline is None or ran < RUNG_PROBE_SECONDS or len(self.points) < 3:
            return
        then = next(bound for at, bound in self.points if at >= ran / 2)
        risen = lower_bound - then
        if risen <= 0:
            self.projected, self.hopeless = float("inf"), True
            return
        rate = risen / (ran / 2)
        self.projected = now + RUNG_PROJECTION_SAFETY * max(0.0, objective - lower_bound) / rate
        self.hopeless = self.projected > self.deadline


@dataclass
class Ladder:
    """Climbs ``rungs`` with ``search(rung, starts, progress)`` (a stage: searches the rung from the
    models ``starts``, and returns its :class:`RungResult`) within ``budget``. ``inside(rung, model)``
    says whether a model is one of a rung's; ``watched``: a rung above the first is ended by its
    :class:`RungWatch` (a search whose progress events carry a rising lower bound; column generation's
    bound is proven only at its end, so its rungs run to the budget); ``noun`` and ``number`` (a format
    spec) for :func:`proven_statement`."""

    rungs: list
    search: Callable
    budget: object
    progress: object = None
    results: list = field(default_factory=list)
    inside: Callable = antecedents_inside
    watched: bool = True
    noun: str = "list"
    number: str = ".9f"

    def climb(self, starts: list) -> "Ladder":
        for k, rung in enumerate(self.rungs):
            if k and not self._worth_climbing(rung):
                break
            best = self.best()
            rung_starts = ([best.prefix] if best is not None else []) + list(starts)
            rung_starts = [list(p) for p in rung_starts if self.inside(rung, p)]
            if k == 0 or not self.watched:
                result = self.search(rung, rung_starts, self.progress)
            else:
                started = time.perf_counter()
                watch = RungWatch(self.budget.deadline, self.progress)
                with self.budget.ending_when(lambda: watch.hopeless):
                    result = self.search(rung, rung_starts, watch)
                if watch.hopeless and watch.projected is not None and np.isfinite(watch.projected):
                    # (when the rung would have ended, on the clock of the rung's start)
                    result.certificate.counters["rung_projected_seconds"] = watch.projected - started
            self.results.append(result)
            if not result.certified or self.budget.stopped():
                break
        return self

    def _worth_climbing(self, rung: Rung) -> bool:
        below = self.results[-1]
        if not below.certified or self.budget.stopped():
            return False
        left = self.budget.remaining()
        return left is None or left >= RUNG_TIME_RATIO * below.seconds

    def best(self) -> RungResult | None:
        """The result of the best list found; on ties (the same list, found again by a larger rung) a
        certified rung's over an unfinished one's, then the larger rung's: what is proven of it covers more."""
        if not self.results:
            return None
        lowest = min(r.certificate.objective for r in self.results)
        tied = [k for k, r in enumerate(self.results) if r.certificate.objective <= lowest + OBJECTIVE_TIE]
        return self.results[max(tied, key=lambda k: (self.results[k].certified, k))]

    def proven(self) -> RungResult | None:
        """The largest rung whose search certified its optimum."""
        certified = [r for r in self.results if r.certified]
        return certified[-1] if certified else None

    def summary(self) -> list[dict]:
        """Each rung: its space (``rung``, ``positions`` into the mined antecedents), and, when searched,
        its search's ``status``, ``objective``, ``lower_bound`` and ``seconds`` (``searched`` False: not
        climbed)."""
        rows = [dict(rung=r.rung.describe(), positions=r.rung.positions, searched=True, status=r.certificate.status,
                     objective=r.certificate.objective, lower_bound=r.certificate.lower_bound, seconds=r.seconds)
                for r in self.results]
        return rows + [dict(rung=rung.describe(), positions=rung.positions, searched=False) for rung in self.skipped()]

    def skipped(self) -> list:
        """The rungs not climbed."""
        return self.rungs[len(self.results):]

    def note(self, certificate: Certificate) -> list[dict]:
        """Write into the best model's ``certificate`` what is proven of it (``counters["proven"]``, when a
        rung certified: else its status says it) and every rung's outcome (``counters["ladder"]``); returns
        :meth:`summary`."""
        if self.proven() is not None:
            certificate.counters["proven"] = proven_statement(self)
        rows = self.summary()
        number = self.number
        certificate.counters["ladder"] = "; ".join(
            f"{row['rung']}: {row['status']}, objective {row['objective']:{number}}, lower bound "
            f"{row['lower_bound']:{number}}, {row['seconds']:.2f} s" if row["searched"] else f"{row['rung']}: not searched"
            for row in rows)
        return rows


def proven_statement(ladder: Ladder) -> str:
    """In one sentence, what is proven of the best model the ladder found."""
    best, proven, noun = ladder.best(), ladder.proven(), ladder.noun

    def number(x: float) -> str:
        return format(x, ladder.number)

    if proven is None:
        c = best.certificate
        return (f"not proven optimal: over {best.rung.describe()} its objective {number(c.objective)} is within "
                f"{number(c.gap)} of the optimum (lower bound {number(c.lower_bound)})")
    above = ladder.results[next(k for k, r in enumerate(ladder.results) if r is proven) + 1:]
    head = f"certified optimal over {proven.rung.describe()}"
    if best is proven:
        if not above:
            return head
        larger = above[-1]
        return (f"{head}; over {larger.rung.describe()}, searched for {larger.seconds:.2f} s without a better "
                f"{noun}, it is within {number(max(0.0, proven.certificate.objective - larger.certificate.lower_bound))} "
                f"of the optimum")
    return (f"better than every {noun} over {proven.rung.describe()} (whose optimum, "
            f"{number(proven.certificate.objective)}, is proven), and within {number(best.certificate.gap)} of the "
            f"optimum over {best.rung.describe()}, whose search ended after {best.seconds:.2f} s{_why_ended(best)}")


def _why_ended(result: RungResult) -> str:
    """Why a rung's search ended early when its watch ended it (the time budget was not spent)."""
    projected = result.certificate.counters.get("rung_projected_seconds")
    if projected is None:
        return ""
    return (f", before its budget's end: its lower bound, rising as it did, would have reached the objective only "
            f"after ~{projected:,.0f} s")
