"""Exhaustive search over every prefix up to a length: the oracle the branch-and-bound is tested against."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .prefix import class_weight_matrix, objective, rule_mistakes


@dataclass(frozen=True)
class BruteForceResult:
    objective: float
    mistakes: float
    prefix: tuple[int, ...] | None


def brute_force(captures, y, regularization: float, max_length: int | None = None, sample_weight=None,
                n_classes: int | None = None, required=None) -> BruteForceResult:
    """Minimum of mistakes/N + lambda*K over all ordered prefixes of distinct antecedents.

    ``captures`` is a boolean ``(n_antecedents, n_samples)`` matrix, ``y`` class indices; with
    ``sample_weight`` mistakes are weighted and N is the total weight. With ``max_length=None`` every
    length up to the number of antecedents is tried, so the result is the true optimum. With
    ``required`` (groups of antecedent indices) only lists holding an antecedent of every group count
    (the result's ``prefix`` is None when none does). Every prefix is
    evaluated (depth-first, reusing the parent's uncaptured set), none is pruned. Among equal objectives
    (to 12 decimals) the shortest, then lexicographically smallest prefix is returned.
    """
    required_groups = [] if required is None else [{int(a) for a in group} for group in required]
    total_weight = float(class_weight_matrix(y, n_classes, sample_weight).sum())
    found = [(round(objective(mistakes, len(prefix), total_weight, regularization), 12), len(prefix), mistakes, prefix)
             for prefix, mistakes in every_list(captures, y, max_length, sample_weight, n_classes)
             if all(group & set(prefix) for group in required_groups)]
    if not found:
        return BruteForceResult(np.inf, np.inf, None)
    _, _, mistakes, prefix = min(found)
    if sample_weight is None:
        mistakes = int(round(mistakes))
    return BruteForceResult(objective(mistakes, len(prefix), total_weight, regularization), mistakes, prefix)


def every_list(captures, y, max_length: int | None = None, sample_weight=None, n_classes: int | None = None,
               capturing_only: bool = False):
    """Yield ``(prefix, mistakes)`` for every ordered prefix of distinct antecedents up to ``max_length``
    rules (depth-first, reusing the parent's uncaptured set; nothing pruned). With ``capturing_only``
    only prefixes whose every rule captures a sample no earlier rule captured (the lists of a Rashomon
    set) are visited."""
    captures = np.asarray(captures, dtype=bool)
    class_weights = class_weight_matrix(y, n_classes, sample_weight)
    n_antecedents = captures.shape[0]
    longest = n_antecedents if max_length is None else min(int(max_length), n_antecedents)

    def visit(prefix: tuple[int, ...], remaining: np.ndarray, mistakes_so_far: float):
        yield prefix, mistakes_so_far + float(rule_mistakes(class_weights[remaining].sum(axis=0)))
        if len(prefix) == longest:
            return
        for a in range(n_antecedents):
            captured = captures[a] & remaining
            if a in prefix or (capturing_only and not captured.any()):
                continue
            yield from visit(prefix + (a,), remaining & ~captured,
                             mistakes_so_far + float(rule_mistakes(class_weights[captured].sum(axis=0))))

    yield from visit((), np.ones(captures.shape[1], dtype=bool), 0.0)
