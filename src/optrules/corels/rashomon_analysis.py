"""What a Rashomon set's members do on data: their predictions, predictive multiplicity, group rates and
model class reliance, computed on groups of rows and within a budget.

*Rows captured alike are predicted alike.* A member predicts a row from the first of its rules that
captures it, so two rows that the antecedents of the members capture alike get the same prediction from
every member. Each analysis groups the rows by their capture signature over the antecedents its members
use (:class:`RowGroups`) and counts each group with its size: exact, at a cost of members x groups rather
than members x rows (1,000 members on 600,000 rows took 16 s row by row; their rows make a few dozen
groups). Group rates count each group's rows by group value and truth (a sparse table) and take one
matrix product a block of members.

*Within a budget* (a :class:`~optrules.budget.Budget`: its deadline and its stop request, Ctrl-C or the web
app's Cancel): the members are analysed in blocks, the stop asked between blocks, in a seeded random
order, so that a stopped analysis is one of a uniform sample of the members asked. When the groups are so
many that the time left cannot pay for members x groups (the rows are nearly all distinct on the
antecedents used), the analysis reads a seeded sample of the rows. Group rates of more than ``max_groups``
values pool the rarest into one. Every result says what it read (:class:`AnalysisScope`): all of it,
exactly, unless its scope says otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import numpy as np

from ..budget import Budget
from ..certificate import INTERRUPTED, TIME_BUDGET

#: cells of a block of members' predictions (members x row groups) an analysis holds at once
PREDICTION_CELLS = 1 << 24
#: seconds an analysis spends per member and row group, a little above what it measured (2 cores)
SECONDS_PER_CELL = 2e-8
#: the share of the time left one analysis may plan to spend (several follow each other)
ANALYSIS_TIME_SHARE = 0.5
#: rows an analysis reads at least when it samples them
MIN_SAMPLED_ROWS = 10_000
ANALYSIS_SEED = 0
#: the name of the pooled rarest group values
OTHER = "(other values)"
#: group values whose rates the command line and the web app show; the rarest others are pooled
GROUPS_SHOWN = 50
#: the share of a Rashomon command's (or web run's) time limit its enumeration gets; its analysis has the rest
ENUMERATION_SHARE = 0.75


@dataclass
class AnalysisScope:
    """What an analysis read: ``rows`` of ``rows_total`` (a seeded sample when fewer), ``members`` of
    ``members_total`` (fewer when the budget ``stopped`` it: ``"time budget"`` or ``"interrupted"``), and
    how many rare group values it ``pooled`` into one."""

    rows: int
    rows_total: int
    members: int
    members_total: int
    stopped: str = ""
    pooled: int = 0

    @property
    def exact(self) -> bool:
        return self.rows == self.rows_total and self.members == self.members_total and not self.pooled

    def note(self) -> str:
        """What is not exact, in words ("" when it is)."""
        parts = []
        if self.rows < self.rows_total:
            parts.append(f"on a seeded sample of {self.rows:,} of {self.rows_total:,} rows")
        if self.members < self.members_total:
            why = "was stopped (Ctrl-C or Cancel)" if self.stopped == INTERRUPTED else f"ran out of its {self.stopped}"
            parts.append(f"over {self.members:,} of {self.members_total:,} members (a uniform sample of them): "
                         f"the analysis {why}")
        if self.pooled:
            parts.append(f"the {self.pooled:,} rarest group values pooled as {OTHER!r}")
        return "; ".join(parts)

    def to_dict(self) -> dict:
        return {"rows": self.rows, "rows_total": self.rows_total, "members": self.members,
                "members_total": self.members_total, "stopped": self.stopped, "pooled": self.pooled,
                "exact": self.exact, "note": self.note()}


class RowGroups:
    """The rows (all, or a sample: ``rows``) grouped by which of the antecedents ``used`` capture them:
    ``captures[k, g]`` whether ``used[k]`` captures group g's rows, ``inverse`` the group of each row read,
    ``counts`` the rows of each group."""

    def __init__(self, captures: np.ndarray, used: list[int], rows: np.ndarray | None = None):
        self.used = list(used)
        self.position = {a: k for k, a in enumerate(self.used)}
        self.n_rows = captures.shape[1]
        self.rows = rows
        read = captures if rows is None else captures[:, rows]
        self.inverse, first, self.counts = _signature_groups(read)
        self.captures = read[:, first]

    @property
    def size(self) -> int:
        return self.counts.shape[0]

    def sampled(self, n: int) -> "RowGroups":
        """The same grouping read on a seeded sample of ``n`` rows (in table order)."""
        rng = np.random.default_rng(ANALYSIS_SEED)
        rows = np.sort(rng.choice(self.n_rows, n, replace=False))
        sample = RowGroups.__new__(RowGroups)
        sample.used, sample.position, sample.n_rows, sample.rows = self.used, self.position, self.n_rows, rows
        kept, sample.inverse, sample.counts = np.unique(self.inverse[rows], return_inverse=True, return_counts=True)
        sample.captures = self.captures[:, kept]
        return sample


def _signature_groups(captures: np.ndarray):
    """``(inverse, first, counts)``: the columns of ``captures`` (antecedents x rows) grouped by equal
    content: each row's group, a row of each group, and each group's rows."""
    n = captures.shape[1]
    if captures.shape[0] == 0:
        return np.zeros(n, np.int64), np.zeros(min(n, 1), np.int64), np.full(min(n, 1), n, np.int64)
    packed = np.packbits(captures, axis=0, bitorder="little")  # (bytes, rows)
    if packed.shape[0] <= 8:  # one 64-bit code a row
        codes = np.zeros(n, np.uint64)
        for k in range(packed.shape[0]):
            codes |= packed[k].astype(np.uint64) << np.uint64(8 * k)
    else:
        codes = np.ascontiguousarray(packed.T).view(f"V{packed.shape[0]}").ravel()
    _, first, inverse, counts = np.unique(codes, return_index=True, return_inverse=True, return_counts=True)
    return inverse.ravel().astype(np.int64), first.astype(np.int64), counts.astype(np.int64)


def fitted_groups(groups: RowGroups, n_members: int, budget: Budget | None) -> RowGroups:
    """``groups``, or the same on a seeded sample of rows when members x groups would cost more than
    :data:`ANALYSIS_TIME_SHARE` of the budget's time left (never below :data:`MIN_SAMPLED_ROWS` rows)."""
    left = None if budget is None else budget.remaining()
    if left is None or groups.n_rows <= MIN_SAMPLED_ROWS:
        return groups
    affordable = ANALYSIS_TIME_SHARE * max(0.0, left) / SECONDS_PER_CELL / max(1, n_members)
    if groups.size <= affordable:
        return groups
    # the groups of a sample are at most its rows: rows the time pays for, as groups
    n = int(min(groups.n_rows, max(MIN_SAMPLED_ROWS, affordable)))
    return groups if n >= groups.n_rows else groups.sampled(n)


def analysis_order(members: list) -> list:
    """The members in a seeded random order: the first k analysed are a uniform sample of them (what a
    stopped analysis covers). The order changes no result of a finished analysis."""
    order = np.random.default_rng(ANALYSIS_SEED).permutation(len(members))
    return [members[i] for i in order]


def prediction_blocks(groups: RowGroups, members: list, index_dtype, budget: Budget | None = None,
                      scope: AnalysisScope | None = None) -> Iterator[np.ndarray]:
    """The members' predicted class indices on each row group, ``(members, groups)``, in blocks of at
    most :data:`PREDICTION_CELLS` cells; the budget's stop is asked before every block but the first, and
    a stop ends the blocks (``scope`` says after how many members, and why)."""
    per_block = max(1, PREDICTION_CELLS // max(1, groups.size))
    for start in range(0, len(members), per_block):
        if start and budget is not None and budget.stopped():
            if scope is not None:
                scope.members = start
                scope.stopped = INTERRUPTED if budget.interrupted else TIME_BUDGET
            return
        block = members[start:start + per_block]
        out = np.empty((len(block), groups.size), index_dtype)
        for i, member in enumerate(block):
            out[i] = member._class_indices[-1]
            for a, index in zip(reversed(member.antecedents), reversed(member._class_indices[:-1])):
                out[i, groups.captures[groups.position[a]]] = index  # earlier rules overwrite later ones
        yield out


class Multiplicity(dict):
    """Predictive multiplicity (``ambiguity``, ``discrepancy``, ``disagreement`` per row, ``members``,
    ``scope``): a dict that prints as a summary, not as one value per row."""

    def __repr__(self) -> str:
        per_row = np.asarray(self["disagreement"], dtype=float)
        read = per_row[~np.isnan(per_row)]
        rows = (f"disagreement on {read.size:,} rows: mean {read.mean():.4f}, max {read.max():.4f}, "
                f"{int((read > 0).sum()):,} rows changed by some member" if read.size else "no row read")
        return (f"Multiplicity(ambiguity {self['ambiguity']:.4f}, discrepancy {self['discrepancy']:.4f}, "
                f"{self['members']:,} members; {rows})")

    __str__ = __repr__


def multiplicity(groups: RowGroups, optimal, members: list, index_dtype, budget: Budget | None = None) -> dict:
    """Predictive multiplicity over ``members`` against the ``optimal`` list: see
    :meth:`~optrules.corels.rashomon_set.RashomonSet.multiplicity`."""
    scope = AnalysisScope(int(groups.counts.sum()), groups.n_rows, len(members), len(members))
    reference = next(prediction_blocks(groups, [optimal], index_dtype))[0]
    changed = np.zeros(groups.size, np.int64)  # members that change each group's prediction
    discrepancy = 0
    for block in prediction_blocks(groups, analysis_order(members), index_dtype, budget, scope):
        differs = block != reference
        changed += differs.sum(axis=0)
        if differs.size:
            discrepancy = max(discrepancy, int((differs @ groups.counts).max()))
    rows = max(1, int(groups.counts.sum()))
    disagreement = np.full(groups.n_rows, np.nan)
    read = slice(None) if groups.rows is None else groups.rows
    disagreement[read] = (changed / scope.members)[groups.inverse] if scope.members else 0.0
    return Multiplicity({
        "ambiguity": float(groups.counts[changed > 0].sum() / rows) if groups.size else 0.0,
        "discrepancy": discrepancy / rows,
        "disagreement": disagreement,
        "members": scope.members,
        "scope": scope,
    })


def group_codes(keys: np.ndarray, max_groups: int | None) -> tuple[np.ndarray, list, int]:
    """Each row's group (a missing value is a group of its own), the groups' values, and how many rare
    values were pooled into :data:`OTHER` to keep ``max_groups`` groups."""
    import pandas as pd

    from ..escape import plain

    codes, values = pd.factorize(keys, use_na_sentinel=False)
    values = [plain(v) for v in values]
    if max_groups is None or len(values) <= max_groups:
        return codes.astype(np.int64), values, 0
    sizes = np.bincount(codes, minlength=len(values))
    kept = np.sort(np.argsort(-sizes, kind="stable")[:max(1, max_groups - 1)])  # the most frequent, in order
    new_code = np.full(len(values), len(kept), np.int64)
    new_code[kept] = np.arange(len(kept))
    return new_code[codes], [values[k] for k in kept] + [OTHER], len(values) - len(kept)


def group_rates(groups: RowGroups, codes: np.ndarray, names: list, truth: np.ndarray, positive_index: int,
                optimal, members: list, index_dtype, budget: Budget | None = None, pooled: int = 0):
    """Ranges over ``members`` of each group's predicted-positive, false-positive and false-negative
    rates (``codes``: each row's group among ``names``; ``truth``: whether a row is of the positive class),
    beside the ``optimal`` list's: see :meth:`~optrules.corels.rashomon_set.RashomonSet.group_rates`."""
    import pandas as pd
    from scipy.sparse import csr_array

    read = slice(None) if groups.rows is None else groups.rows
    codes, truth = codes[read], np.asarray(truth, dtype=bool)[read]
    shape = (groups.size, len(names))

    def table(rows):  # rows of each (row group, group value)
        return csr_array((np.ones(int(rows.sum())), (groups.inverse[rows], codes[rows])), shape=shape)

    negatives, positives = table(~truth), table(truth)
    n_negative, n_positive = negatives.sum(axis=0), positives.sum(axis=0)
    scope = AnalysisScope(int(groups.counts.sum()), groups.n_rows, len(members), len(members), pooled=pooled)
    ranges = {}
    with np.errstate(invalid="ignore", divide="ignore"):
        blocks = prediction_blocks(groups, [optimal] + analysis_order(members), index_dtype, budget, scope)
        for block in blocks:
            predicted = (block == positive_index).astype(np.float64)
            false_positives, true_positives = predicted @ negatives, predicted @ positives
            rates = {"positive_rate": (false_positives + true_positives) / (n_negative + n_positive),
                     "false_positive_rate": false_positives / n_negative,
                     "false_negative_rate": (n_positive - true_positives) / n_positive}
            for name, values in rates.items():
                _add_range(ranges, name, values)
    if scope.stopped:  # (the blocks counted the optimal list too)
        scope.members -= 1
    rows = []
    for j, name in enumerate(names):
        for rate in ("positive_rate", "false_positive_rate", "false_negative_rate"):
            low, optimal_value, high = (float(r[j]) for r in ranges[rate])
            rows.append({"group": name, "rate": rate, "rows": int(n_negative[j] + n_positive[j]),
                         "min": low, "optimal": optimal_value, "max": high})
    frame = pd.DataFrame(rows)
    frame.attrs["scope"] = scope
    return frame


def fairness_gaps(groups: RowGroups, sensitive: np.ndarray, truth: np.ndarray, positive_index: int, members: list,
                  index_dtype, metric: str, budget: Budget | None = None, scope: AnalysisScope | None = None):
    """Each member's gap in a fairness metric (:mod:`optrules.fairness.metrics`) between the two groups of
    ``sensitive`` (0/1 a row), in ``members``' order (fewer when the budget stopped it): the rates of its
    predicted positives, from its predictions on each row group."""
    from scipy.sparse import csr_array

    from ..fairness.metrics import RATES

    read = slice(None) if groups.rows is None else groups.rows
    sensitive, truth = np.asarray(sensitive)[read], np.asarray(truth, dtype=bool)[read]
    cells = [csr_array((np.ones(int(rows.sum())), (groups.inverse[rows], sensitive[rows])), shape=(groups.size, 2))
             for rows in (~truth, truth)]  # rows of each (row group, group) of each true label
    wholes = [np.asarray(cell.sum(axis=0), dtype=np.float64) for cell in cells]
    gaps = []
    with np.errstate(invalid="ignore", divide="ignore"):
        for block in prediction_blocks(groups, members, index_dtype, budget, scope):
            predicted = (block == positive_index).astype(np.float64)
            worst = np.zeros(predicted.shape[0])
            for labels in RATES[metric]:
                hits = sum(predicted @ cells[label] for label in labels)
                whole = sum(wholes[label] for label in labels)
                rates = np.where(whole > 0, hits / np.where(whole > 0, whole, 1.0), 0.0)
                worst = np.maximum(worst, np.abs(rates[:, 1] - rates[:, 0]))
            gaps.append(worst)
    return np.concatenate(gaps) if gaps else np.zeros(0)


def _add_range(ranges: dict, name: str, values: np.ndarray) -> None:
    """Fold a block's ``(members, groups)`` values into ``ranges[name]`` = (min, optimal, max) per group:
    the first row ever folded is the optimal list's, the others are the members'; NaN (no row to rate)
    ignored."""
    if name not in ranges:
        optimal, values = values[0], values[1:]
        empty = np.full(optimal.shape, np.nan)
        ranges[name] = (empty, optimal, empty)
    low, optimal, high = ranges[name]
    if values.shape[0]:
        low = np.fmin(low, np.fmin.reduce(values, axis=0))
        high = np.fmax(high, np.fmax.reduce(values, axis=0))
    ranges[name] = (low, optimal, high)


def error_rates(groups: RowGroups, codes: np.ndarray, n_classes: int, members: list, index_dtype,
                budget: Budget | None = None, scope: AnalysisScope | None = None) -> np.ndarray:
    """Each member's error rate on the rows read (``codes``: each row's class index, -1 for a class no
    list predicts), in ``members``' order (fewer when the budget stopped it)."""
    read = slice(None) if groups.rows is None else groups.rows
    codes = np.asarray(codes)[read]
    known = codes >= 0
    by_class = np.zeros((groups.size, n_classes), np.int64)  # rows of each class in each row group
    np.add.at(by_class, (groups.inverse[known], codes[known]), 1)
    rows = max(1, codes.shape[0])
    out = []
    for block in prediction_blocks(groups, members, index_dtype, budget, scope):
        right = np.take_along_axis(by_class.T, block.astype(np.int64), axis=0) if block.size else block
        out.append(1.0 - right.sum(axis=1) / rows)
    return np.concatenate(out) if out else np.empty(0)


def scope_note(*scopes) -> str:
    """The notes of several analyses' scopes, each once."""
    notes = []
    for scope in scopes:
        if scope is not None and scope.note() and scope.note() not in notes:
            notes.append(scope.note())
    return "; ".join(notes)


def expand(groups: RowGroups, block: np.ndarray) -> np.ndarray:
    """A block over row groups as a block over the rows read."""
    return block[:, groups.inverse]

