"""What a prefix of antecedents does to the data: per-rule counts, predictions, mistakes, objective.

Plain boolean arithmetic, independent of the search's packed kernels, so that it can check them.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np


def majority(n_captured: int, n_positive: int) -> int:
    """The majority label of a rule's captured samples (a tie predicts the negative class)."""
    return 1 if 2 * n_positive > n_captured else 0


def rule_mistakes(n_captured: int, n_positive: int) -> int:
    """Mistakes of a rule that predicts the majority label of what it captures."""
    return min(n_positive, n_captured - n_positive)


def prefix_counts(captures: np.ndarray, y: np.ndarray, prefix: Sequence[int]) -> list[tuple[int, int]]:
    """``(n_captured, n_positive)`` of each rule in context, then of the default rule."""
    remaining = np.ones(captures.shape[1], dtype=bool)
    positive = np.asarray(y).astype(bool)
    counts = []
    for a in prefix:
        captured = captures[a] & remaining
        counts.append((int(captured.sum()), int((captured & positive).sum())))
        remaining &= ~captured
    counts.append((int(remaining.sum()), int((remaining & positive).sum())))
    return counts


def prefix_mistakes(captures: np.ndarray, y: np.ndarray, prefix: Sequence[int]) -> int:
    """Training mistakes of the rule list that the prefix defines (majority labels everywhere)."""
    return sum(rule_mistakes(n, p) for n, p in prefix_counts(captures, y, prefix))


def objective(mistakes: int, n_rules: int, n_samples: int, regularization: float) -> float:
    """The CORELS objective R(d) = mistakes/N + lambda*K."""
    return mistakes / n_samples + regularization * n_rules


def rule_list_from_prefix(
    captures: np.ndarray,
    y: np.ndarray,
    prefix: Sequence[int],
    conditions: Sequence[tuple[str, ...]],
    classes=(0, 1),
    binarizer=None,
    feature_names=None,
):
    """The rule list of a prefix: each rule predicts the majority of what it captures in context."""
    from ..models import Rule, RuleList  # imported here: the search core does not need pandas
    counts = prefix_counts(captures, y, prefix)
    rules = [Rule(tuple(conditions[a]), majority(n, p), n, p) for a, (n, p) in zip(prefix, counts)]
    n, p = counts[-1]
    return RuleList(rules, Rule((), majority(n, p), n, p), classes, binarizer, feature_names)
