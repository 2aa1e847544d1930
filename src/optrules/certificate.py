"""What every solver returns beside its model: how far from optimal the model is proven to be."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields
from typing import Callable

import numpy as np

OPTIMAL = "optimal"
NODE_BUDGET = "node budget"
TIME_BUDGET = "time budget"
MEMORY_BUDGET = "memory budget"
INTERRUPTED = "interrupted"
GAP = "gap"  # the search ended without a budget stopping it, but its bound does not meet the model
STATUSES = (OPTIMAL, NODE_BUDGET, TIME_BUDGET, MEMORY_BUDGET, INTERRUPTED, GAP)

#: the units of work the solvers report (``ProgressEvent.unit``, ``Certificate.work``)
PREFIXES = "prefixes expanded"  # the branch-and-bound searches (rule lists, falling rule lists)
LP_SOLVES = "LP solves"  # column generation (rule sets)


@dataclass
class Trace:
    """The search over time (the paper's Figures 14, 16 and 18)."""

    time: list[float] = field(default_factory=list)
    objective: list[float] = field(default_factory=list)
    lower_bound: list[float] = field(default_factory=list)
    queue_by_length: list[list[int]] = field(default_factory=list)
    log10_remaining: list[float] = field(default_factory=list)

    def append(self, time, objective, lower_bound, queue_by_length, log10_remaining) -> None:
        self.time.append(float(time))
        self.objective.append(float(objective))
        self.lower_bound.append(float(lower_bound))
        self.queue_by_length.append([int(q) for q in queue_by_length])
        self.log10_remaining.append(float(log10_remaining))

    def __len__(self) -> int:
        return len(self.time)

    @property
    def nbytes(self) -> int:
        """About how much memory the trace holds (Python floats and ints in lists)."""
        return sum(4 * 32 + 64 + 32 * len(q) for q in self.queue_by_length)


@dataclass
class Certificate:
    """``objective`` of the returned model and a proven ``lower_bound`` on the optimum.

    ``status`` is ``optimal`` when the model is proven optimal (then ``gap == 0``), the budget that
    stopped the search, ``interrupted``, or ``gap`` when the search ended with a bound (e.g. from a
    relaxation) that does not meet the model; ``counters`` holds the paper's statistics (total time, time to optimum,
    lower-bound evaluations, queue insertions, maximum queue size, maximum evaluated prefix length, ...).
    """

    status: str
    objective: float
    lower_bound: float
    counters: dict = field(default_factory=dict)
    trace: Trace = field(default_factory=Trace)
    #: how it was proven (a key of :data:`METHODS`: which counters measure the work, how they read); ""
    #: for a solver of its own, whose counters are printed by no one
    method: str = ""

    def __post_init__(self):
        if self.status not in STATUSES:
            raise ValueError(f"unknown status {self.status!r}")
        if self.method and self.method not in METHODS:
            raise ValueError(f"unknown method {self.method!r}; known: {', '.join(METHODS)}")

    @property
    def work(self) -> tuple[int, str]:
        """The work the solve did, and its unit ("prefixes expanded", "LP solves"; 0 and "" when unknown)."""
        method = METHODS.get(self.method)
        if method is None:
            return 0, ""
        return int(self.counters.get(method.work_counter, 0) or 0), method.unit

    @property
    def gap(self) -> float:
        return max(0.0, self.objective - self.lower_bound)

    @property
    def is_optimal(self) -> bool:
        return self.status == OPTIMAL

    @property
    def statement(self) -> str:
        """What is proven of the model, in one sentence: a ladder's (``counters["proven"]``: optimal over
        the space of one rung, or better than every list of it and within a gap over a larger one), or
        the status's."""
        proven = self.counters.get("proven")
        if isinstance(proven, str):
            return proven
        if self.is_optimal:
            return "certified optimal"
        if self.status == GAP:
            return "finished with a gap"
        return f"stopped on {self._stop()}"

    def _stop(self) -> str:
        """The budget or request that stopped the search, and the phase it was heard in when not the search."""
        where = self.counters.get("stopped_in")
        return f"{self.status}{f' while {where}' if isinstance(where, str) and where != 'search' else ''}"

    def __str__(self) -> str:
        head = f"{self.statement}: objective {self.objective:.9f}"
        if not self.is_optimal:
            head += f", lower bound {self.lower_bound:.9f}, gap {self.gap:.9f}"
            if isinstance(self.counters.get("proven"), str) and self.status != GAP:  # (the sentence names no budget)
                head += f" ({self._stop()})"
        c = self.counters
        parts = [head]
        if isinstance(c.get("space"), str):  # what the model is optimal over (the binarized space)
            parts.append(f"over {c['space']}")
        if isinstance(c.get("fairness"), str):  # a constrained fit: over the lists that meet the constraint
            parts.append(_fairness_line(c))
        for note in ("guided_space", "pairs_search", "ladder"):  # the other spaces a fit searched
            if isinstance(c.get(note), str):
                parts.append(c[note])
        method = METHODS.get(self.method)
        if method is not None:
            parts += method.statistics(c)
        return "\n".join(parts)

    def _repr_html_(self) -> str:
        """The certificate in a notebook: status, objective, lower bound, gap, then the statistics."""
        from .escape import html_text

        head, *rest = str(self).split("\n")
        rows = [("status", self.status), ("objective", f"{self.objective:.9f}"),
                ("lower bound", f"{self.lower_bound:.9f}"), ("gap", f"{self.gap:.9f}")]
        cells = "".join(f"<tr><th>{html_text(k)}</th><td>{html_text(v)}</td></tr>" for k, v in rows)
        return (f"<div><strong>{html_text(head)}</strong><table>{cells}</table>"
                + "".join(f"<p>{html_text(line)}</p>" for line in rest) + "</div>")

    def to_dict(self) -> dict:
        data = asdict(self)
        data["gap"] = self.gap
        return _plain(data)

    @classmethod
    def from_dict(cls, data: dict) -> "Certificate":
        """The inverse of :meth:`to_dict` (the ``gap`` entry is derived, not read). A certificate read
        from a file is checked first: ValueError, in one line, says what is wrong."""
        _check_saved(data)
        trace = dict(data.get("trace", {}))
        trace["log10_remaining"] = [-np.inf if v is None else v for v in trace.get("log10_remaining", [])]
        counters = dict(data.get("counters", {}))
        method = data.get("method", _method_of_older_file(counters))
        return cls(data["status"], float(data["objective"]), float(data["lower_bound"]), counters, Trace(**trace),
                   method)


def _branch_and_bound_statistics(c: dict) -> list[str]:
    head = f"time {c.get('total_time', float('nan')):.3f} s"
    if "time_to_optimum" in c:
        head += f" (optimum found at {c['time_to_optimum']:.3f} s)"
    counted = [f"{c.get('nodes_expanded', 0):,} prefixes expanded"] + [  # (what the search counted)
        text.format(c[name]) for name, text in (("lower_bound_evaluations", "{:,} lower bounds"),
                                                ("queue_insertions", "{:,} queue insertions"),
                                                ("max_queue_size", "max queue {:,}"),
                                                ("max_prefix_length", "max prefix length {}")) if name in c]
    parts = [", ".join([head, *counted])]
    if c.get("prefixes_set_aside"):  # the memory budget was reached: prefixes to be made again
        parts.append(f"memory full: {c['prefixes_set_aside']:,} queued prefixes set aside to make room, each "
                     "made again by its parent in its turn")
    if c.get("searches_again"):  # the queue drained with time left and a better list
        parts.append(f"searched again {c['searches_again']} time(s) from a better list, its queue having "
                     "drained for want of memory before the time ran out")
    if c.get("prefixes_dropped"):  # the memory budget was reached: prefixes were left unexpanded
        parts.append(f"memory full: {c['prefixes_dropped']:,} prefixes dropped, left unexpanded to make room "
                     "(their smallest bound is part of the lower bound)")
    return parts


def _column_generation_statistics(c: dict) -> list[str]:
    pricing = f"{c['exact_pricing_calls']} exact pricing calls, " if "exact_pricing_calls" in c else ""
    value = f" (value {c['lp_objective']:.4f})" if "lp_objective" in c else ""
    return [f"time {c.get('total_time', float('nan')):.3f} s, {c.get('iterations', 0)} LP solves, "
            f"{c.get('columns', 0)} clauses generated, {pricing}master LP "
            f"{'solved' if c.get('lp_solved') else 'not proven'}{value}"
            + (f", {c['solver']}" if c.get("solver") else "")]


def _enumeration_statistics(c: dict) -> list[str]:
    line = f"time {c.get('time', c.get('total_time', float('nan'))):.3f} s, {c.get('expansions', 0):,} prefixes expanded"
    if "nodes" in c:  # a Rashomon set's graph of uncaptured sets
        line += (f", a graph of {c['nodes']:,} nodes and {c.get('edges', 0):,} edges, {c.get('table_entries', 0):,} "
                 "count table entries")
    return [line]


@dataclass(frozen=True)
class Method:
    """A way of proving a bound: the counter that measures its work, the work's unit, and the lines
    that print its statistics."""

    work_counter: str
    unit: str
    statistics: Callable[[dict], list[str]]


BRANCH_AND_BOUND = "branch and bound"
COLUMN_GENERATION = "column generation"
ENUMERATION = "enumeration"  # every candidate listed (a Rashomon set's lists within a tolerance of the optimum)
METHODS = {
    BRANCH_AND_BOUND: Method("nodes_expanded", PREFIXES, _branch_and_bound_statistics),
    COLUMN_GENERATION: Method("iterations", LP_SOLVES, _column_generation_statistics),
    ENUMERATION: Method("expansions", PREFIXES, _enumeration_statistics),
}


def _method_of_older_file(counters: dict) -> str:
    """The method of a certificate saved before certificates named theirs, from its counters."""
    if "iterations" in counters:
        return COLUMN_GENERATION
    return BRANCH_AND_BOUND if "nodes_expanded" in counters else ""


def _finite_number(value) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)


def _check_saved(data) -> None:
    """What :meth:`Certificate.from_dict` and its printing take for granted of a saved certificate."""
    if not isinstance(data, dict):
        raise ValueError("the certificate must be a JSON object")
    if not isinstance(data.get("status"), str) or len(data["status"]) > 100:
        raise ValueError("the certificate's status must be a short text")
    for key in ("objective", "lower_bound"):
        if not _finite_number(data.get(key)):
            raise ValueError(f"the certificate's {key} must be a finite number, got {str(data.get(key))[:40]!r}")
    counters = data.get("counters", {})
    if not isinstance(counters, dict) or not all(
            isinstance(k, str) and (v is None or isinstance(v, (str, bool)) or _finite_number(v)) for k, v in counters.items()):
        raise ValueError("the certificate's counters must map names to finite numbers")
    if data.get("method", "") not in ("", *METHODS):
        raise ValueError(f"the certificate's method must be one of {sorted(METHODS)}, got {str(data['method'])[:40]!r}")
    trace = data.get("trace", {})
    known = {f.name for f in fields(Trace)}
    if not isinstance(trace, dict) or not set(trace) <= known:
        raise ValueError(f"the certificate's trace must hold only {sorted(known)}")
    for key, values in trace.items():
        if not isinstance(values, list):
            raise ValueError(f"the certificate's trace {key} must be a list")
        flat = [v for row in values for v in row] if key == "queue_by_length" and all(isinstance(r, list) for r in values) else values
        if not all(v is None or _finite_number(v) for v in flat):
            raise ValueError(f"the certificate's trace {key} must hold finite numbers")
    if len({len(values) for values in trace.values()}) > 1:
        raise ValueError("the certificate's trace lists must have one entry per point")


def _plain(value):
    """Plain, strict-JSON values: numpy scalars become Python numbers, NaN and infinities None (an infinite
    log10 remaining space is an empty queue: nothing remains)."""
    if isinstance(value, (float, np.floating)) and not np.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


def _fairness_line(counters: dict) -> str:
    """A constrained fit's constraint, and what its model achieves (exactly, and as a decimal)."""
    from fractions import Fraction

    from .escape import printable

    # (values from the data: a line break or a control character in one stays on this one line, escaped)
    groups = (f"{printable(counters.get('sensitive_group_0', 'group 0'))} and "
              f"{printable(counters.get('sensitive_group_1', 'group 1'))}")
    bound, achieved = Fraction(counters["max_unfairness"]), Fraction(counters["unfairness"])
    over = counters.get("fairness_over", "lists")  # (a rule set's fit says "rule sets")
    freedom = " (rules predict either class)" if over == "lists" else ""
    return (f"among the {over} whose {counters['fairness'].replace('_', ' ')} gap between {groups} is at most "
            f"{float(bound):g}{freedom}: this one's is {float(achieved):.6f} ({achieved})")
