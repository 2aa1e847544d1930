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
"""

from __future__ import annotations

import warnings
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

    def describe(self) -> str:
        sampled = f" (a sample of {self.rows:,} rows)" if self.rows >= REFERENCE_ROWS else ""
        stopped = ", stopped early by the budget" if self.stopped else ""
        return (f"thresholds from a boosted reference of {self.trees} depth-{self.depth} trees{sampled}{stopped}, "
                f"training accuracy {self.train_accuracy:.4f}")

    def to_dict(self) -> dict:
        return {"trees": self.trees, "depth": self.depth, "rows": self.rows,
                "train_accuracy": self.train_accuracy, "stopped": self.stopped}


def reference_rows(n_rows: int) -> np.ndarray | None:
    """The rows the reference reads: all (None), or a seeded sample of :data:`REFERENCE_ROWS` of a taller
    table, in table order."""
    if n_rows <= REFERENCE_ROWS:
        return None
    rng = np.random.default_rng(REFERENCE_SEED)
    return np.sort(rng.choice(n_rows, REFERENCE_ROWS, replace=False))


def fit_reference(design: np.ndarray, y: np.ndarray, weights: np.ndarray | None, min_leaf: int,
                  should_stop=None):
    """Fit the reference ensemble on ``design`` (float, NaN where missing) and ``y`` (class codes);
    returns ``(model, Reference)``. Fitted in two warm-started fits, :data:`FIRST_ROUNDS` and then the rest,
    ``should_stop`` asked between them: a stopped fit keeps the splits of the first."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    model = HistGradientBoostingClassifier(
        learning_rate=REFERENCE_LEARNING_RATE, max_iter=0, max_depth=REFERENCE_DEPTH,
        min_samples_leaf=max(1, int(min_leaf)), l2_regularization=0.0, early_stopping=False, warm_start=True,
        random_state=REFERENCE_SEED)
    stopped = False
    rounds = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (warm start's notes)
        for rounds_after in (FIRST_ROUNDS, REFERENCE_TREES):
            if rounds and should_stop is not None and should_stop():
                stopped = True
                break
            rounds = rounds_after
            model.set_params(max_iter=rounds)
            model.fit(design, y, sample_weight=weights)
    accuracy = float(np.average(model.predict(design) == y, weights=weights))
    return model, Reference(rounds, REFERENCE_DEPTH, design.shape[0], accuracy, ensemble_splits(model), stopped)


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
