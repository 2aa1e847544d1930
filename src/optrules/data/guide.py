"""The reference model that chooses the binarizer's thresholds (``thresholds="boosted"``).

Quantile thresholds cut every numeric column at the same shares whatever the target: 9 thresholds a
column in both directions make near-copies of each other (``x<=41``, ``x<=43``, ...), and conjunctions of
two of them make thousands of antecedents that no bound closes in a minute on a raw table of a few
thousand rows. The split points of a small boosted ensemble of depth-1 trees are the cuts that reduce the
target's loss, a few per column where the column matters and none where it does not (the idea of
threshold guessing, McTavish et al., AAAI 2022; our own code on scikit-learn's histogram gradient
boosting).

What must hold: the reference sees only the training rows (with their sample and class weights) and the
design columns listed here; it is fitted with a fixed seed and no early stopping, so one table gives one
set of thresholds; a table taller than :data:`REFERENCE_ROWS` is sampled (deterministically) before the
reference reads it, so its time and memory do not grow with the rows. The certificate is over the space
it chooses: the thresholds are fixed before the search, whatever they are.

Within a time budget the reference is a phase like any other (:func:`reference_size`): its cost is
predicted from the cells it reads (:data:`SECONDS_PER_CELL`), and when a share of the time left cannot pay
for the whole table it is fitted on a smaller seeded sample (one of :data:`REFERENCE_ROW_LEVELS`, fixed
sizes, so that another machine or load lands on the same sample more often than a size made to measure
would), or skipped for quantile thresholds when not even the smallest can be paid for. Each of its fits
runs in a thread that the fit's stop request (time, Ctrl-C, cancel) does not wait for: scikit-learn's
fit cannot be interrupted, so a stop returns at once with the first fit's splits, or with none (quantile
thresholds) during the first, and the abandoned fit ends on its own, its result unused.
"""

from __future__ import annotations

import copy
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: boosting rounds (for K > 2 classes each round fits K trees); GOSDT's threshold guessing uses 40 stumps
REFERENCE_TREES = 40
#: depth of each tree: stumps; each split is one literal of a rule
REFERENCE_DEPTH = 1
REFERENCE_LEARNING_RATE = 0.1
#: rows the reference is fitted on at most (a seeded sample of a taller table)
REFERENCE_ROWS = 300_000
#: rounds of the reference's first fit; the budget (Ctrl-C, time) is asked after it, and a stop keeps its
#: splits. The other rounds follow in one warm-started fit: every fit bins the rows again and predicts
#: the earlier trees again, so rounds of 5 cost five times one fit of 40 (the splits are the same)
FIRST_ROUNDS = 5
#: seconds a reference of :data:`REFERENCE_TREES` rounds takes per row and design column, a little above
#: what it measured on 2 cores (200-270 ns for 10,000-300,000 rows of 4-400 columns; its first fit of
#: :data:`FIRST_ROUNDS` rounds 85-125 ns; benchmarks/phase_budgets.py)
SECONDS_PER_CELL = 3e-7
#: the share of the time left (when the reference starts) that its predicted cost may take: the rest pays
#: for the features, the transform, mining and the search
REFERENCE_TIME_SHARE = 0.25
#: the sample sizes a time budget may cut the reference to, largest first; below the smallest it is skipped
REFERENCE_ROW_LEVELS = (REFERENCE_ROWS, 100_000, 30_000, 10_000, 3_000)
#: seconds between two questions to the fit's stop request while a reference fit runs in its thread
STOP_POLL = 0.02
#: values of one categorical column offered to the reference at most (the most frequent)
REFERENCE_VALUES = 100
REFERENCE_SEED = 0


@dataclass(frozen=True)
class DesignColumn:
    """One column of the reference's input: a column's numbers (``number``), whether it equals a value
    (``equals``), is 1 (``binary``) or is missing (``missing``)."""

    column: str
    kind: str
    value: Any = None


@dataclass
class Reference:
    """What the reference ensemble learned: the thresholds it split each design column at, and how
    well it predicts the rows it was fitted on."""

    trees: int
    depth: int
    rows: int
    train_accuracy: float
    splits: dict = field(default_factory=dict)  # design column index -> sorted thresholds
    stopped: bool = False
    #: rows of the table when the reference read a sample of them (0: it read every row)
    sampled_from: int = 0
    #: why there is no reference (``trees == 0``): numeric columns then have quantile thresholds
    skipped: str = ""

    @property
    def fitted(self) -> bool:
        return self.trees > 0

    def describe(self) -> str:
        if not self.fitted:
            return f"numeric thresholds at quantiles ({self.skipped})"
        sampled = (f" (a sample of {self.rows:,} of {self.sampled_from:,} rows)" if self.sampled_from
                   else f" (a sample of {self.rows:,} rows)" if self.rows >= REFERENCE_ROWS else "")
        stopped = ", stopped early by the budget" if self.stopped else ""
        return (f"thresholds from a boosted reference of {self.trees} depth-{self.depth} trees{sampled}{stopped}, "
                f"training accuracy {self.train_accuracy:.4f}")

    def to_dict(self) -> dict:
        return {"trees": self.trees, "depth": self.depth, "rows": self.rows,
                "train_accuracy": self.train_accuracy, "stopped": self.stopped,
                "sampled_from": self.sampled_from, "skipped": self.skipped}


def skipped_reference(why: str) -> Reference:
    """No reference: ``why`` (the numeric columns get quantile thresholds)."""
    return Reference(0, REFERENCE_DEPTH, 0, 0.0, {}, stopped=True, skipped=why)


def reference_size(n_rows: int, n_columns: int, seconds: float | None) -> int:
    """How many rows the reference reads of a table of ``n_rows`` and ``n_columns`` design columns when
    ``seconds`` are left (None: no time limit): all, or at most :data:`REFERENCE_ROWS`, or the largest of
    :data:`REFERENCE_ROW_LEVELS` that :data:`REFERENCE_TIME_SHARE` of them pays for; 0 when not even the
    smallest is paid for (the reference is skipped)."""
    most = min(n_rows, REFERENCE_ROWS)
    if seconds is None:
        return most
    affordable = REFERENCE_TIME_SHARE * max(0.0, seconds) / (SECONDS_PER_CELL * max(1, n_columns))
    if most <= affordable:
        return most
    return next((level for level in REFERENCE_ROW_LEVELS if level <= affordable and level < n_rows), 0)


def reference_rows(n_rows: int, size: int | None = None) -> np.ndarray | None:
    """The rows the reference reads: all (None), or a seeded sample of ``size`` (default
    :data:`REFERENCE_ROWS`) of a taller table, in table order."""
    size = REFERENCE_ROWS if size is None else int(size)
    if n_rows <= size:
        return None
    rng = np.random.default_rng(REFERENCE_SEED)
    return np.sort(rng.choice(n_rows, size, replace=False))


def _finished(fit, should_stop) -> bool:
    """Run ``fit()`` in a thread; True once it ended (its error raised here), False as soon as
    ``should_stop`` says so, without waiting for it: the fit goes on in its thread, unused."""
    if should_stop is not None and should_stop():  # (a stop already asked: not started, whatever its speed)
        return False
    done, errors = threading.Event(), []

    def run():
        try:
            fit()
        except BaseException as error:  # noqa: BLE001 - raised in the caller's thread below
            errors.append(error)
        finally:
            done.set()

    threading.Thread(target=run, name="optrules reference", daemon=True).start()
    while not done.wait(STOP_POLL):
        if should_stop is not None and should_stop():
            return False
    if errors:
        raise errors[0]
    return True


def fit_reference(design: np.ndarray, y: np.ndarray, weights: np.ndarray | None, min_leaf: int,
                  should_stop=None, time_left=None):
    """Fit the reference ensemble on ``design`` (float, NaN where missing) and ``y`` (class codes);
    returns ``(model, Reference)``, or ``(None, skipped Reference)`` when a stop came during the first
    fit. Fitted in two warm-started fits, :data:`FIRST_ROUNDS` and then the rest, each in a thread that a
    stop (``should_stop``) does not wait for; the second is not started when ``time_left()`` (seconds,
    or None) cannot pay for it (predicted from the first). A stopped fit keeps the splits of the first."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    model = HistGradientBoostingClassifier(
        learning_rate=REFERENCE_LEARNING_RATE, max_iter=FIRST_ROUNDS, max_depth=REFERENCE_DEPTH,
        min_samples_leaf=max(1, int(min_leaf)), l2_regularization=0.0, early_stopping=False, warm_start=True,
        random_state=REFERENCE_SEED)

    def fit():
        # (no warnings.catch_warnings here: it swaps the process's warning state, and a fit left running
        # would put back, when it ends, the state of another moment over the caller's)
        model.fit(design, y, sample_weight=weights)

    started = time.perf_counter()
    if not _finished(fit, should_stop):
        return None, skipped_reference("the budget ended, or a stop came, during the boosted reference's first fit")
    first_seconds = time.perf_counter() - started
    rounds, stopped = FIRST_ROUNDS, True
    left = None if time_left is None else time_left()
    # the other rounds cost about 1.5 times the first fit's (which also binned the rows)
    if not (should_stop is not None and should_stop()) and (left is None or left > 1.5 * first_seconds):
        first = copy.deepcopy(model)  # (the second fit grows the model in place, in a thread a stop leaves)
        model.set_params(max_iter=REFERENCE_TREES)
        if _finished(fit, should_stop):
            rounds, stopped = REFERENCE_TREES, False
        else:
            model = first
    accuracy = float(np.average(model.predict(design) == y, weights=weights))
    return model, Reference(rounds, REFERENCE_DEPTH, design.shape[0], accuracy, ensemble_splits(model), stopped)


#: the reference reads a table's distinct rows (equal in every column it reads and in the label),
#: weighted by their copies, when they are at most this share of its rows (:meth:`Binarizer._fit_reference`):
#: a table copied k times is then fitted as the table itself (gradients and hessians scale by k, the
#: splits do not), in the table's time
DISTINCT_ROWS_SHARE = 0.8


def ensemble_splits(model) -> dict[int, list[float]]:
    """Every threshold the fitted ensemble splits each design column at: ``{column index: thresholds}``
    (a split sends ``x <= threshold`` left)."""
    splits: dict[int, set] = {}
    for round_trees in model._predictors:  # one tree a class (one for two classes) each round
        for tree in round_trees:
            nodes = tree.nodes
            for node in nodes[~nodes["is_leaf"].astype(bool)]:
                splits.setdefault(int(node["feature_idx"]), set()).add(float(node["num_threshold"]))
    return {j: sorted(thresholds) for j, thresholds in splits.items()}
