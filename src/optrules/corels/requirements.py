"""Required antecedents: a domain constraint on which rule lists are admissible.

A requirement is a group of antecedents (for the estimator: those that use a named feature, or any
feature of a named column); an admissible list holds at least one antecedent of every group. Antecedent
``a`` *covers* the requirements whose groups hold it, a bitmask ``masks[a]``; a prefix covers the union
of its antecedents' masks, which does not depend on their order.

The search needs one more number per prefix: ``rules_needed[coverage]``, the fewest antecedents that
complete a coverage (the smallest set cover of the missing requirements, exact: a breadth-first sweep
over the at most 2^R coverages, R <= :data:`MAX_REQUIREMENTS`). Any admissible extension of a prefix
adds at least that many rules, each costing lambda: the search's lower bounds add it (see
:mod:`optrules.corels.kernel`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

#: at most this many requirements (the table of rules needed has 2^R entries)
MAX_REQUIREMENTS = 16


@dataclass(frozen=True)
class Requirements:
    masks: np.ndarray  # (M,) int64: the requirements each antecedent covers
    rules_needed: np.ndarray  # (2^R,) int64: fewest antecedents that complete each coverage
    names: tuple[str, ...]  # one per requirement, for messages

    @classmethod
    def none(cls, n_antecedents: int) -> "Requirements":
        """No requirement: every list is admissible (coverage 0 is complete)."""
        return cls(np.zeros(n_antecedents, np.int64), np.zeros(1, np.int64), ())

    @classmethod
    def from_groups(cls, groups: Sequence[Sequence[int]], n_antecedents: int,
                    names: Sequence[str] | None = None) -> "Requirements":
        """Requirements from groups of antecedent indices (each list must hold one of every group)."""
        groups = [np.unique(np.asarray(list(group), dtype=np.int64)) for group in groups]
        names = tuple(f"group {j}" for j in range(len(groups))) if names is None else tuple(names)
        if len(names) != len(groups):
            raise ValueError(f"{len(names)} names for {len(groups)} requirements")
        if len(groups) > MAX_REQUIREMENTS:
            raise ValueError(f"at most {MAX_REQUIREMENTS} requirements are supported, got {len(groups)}")
        masks = np.zeros(n_antecedents, np.int64)
        for j, (group, name) in enumerate(zip(groups, names)):
            if group.size == 0:
                raise ValueError(f"requirement {name!r} cannot be met: no antecedent satisfies it")
            if group.min() < 0 or group.max() >= n_antecedents:
                raise ValueError(f"requirement {name!r} names antecedents outside [0, {n_antecedents})")
            masks[group] |= np.int64(1) << j
        return cls(masks, _fewest_rules_to_complete(masks, len(groups)), names)

    @property
    def count(self) -> int:
        return len(self.names)

    @property
    def complete(self) -> int:
        """The coverage of an admissible list."""
        return (1 << self.count) - 1

    def coverage(self, prefix) -> int:
        covered = 0
        for a in prefix:
            covered |= int(self.masks[a])
        return covered

    def admits(self, prefix) -> bool:
        return self.coverage(prefix) == self.complete

    def shortest(self) -> int:
        """Rules every admissible list has at least."""
        return int(self.rules_needed[0])

    def completed(self, prefix, max_length: int | None = None, cost=None) -> tuple[int, ...]:
        """An admissible list made from ``prefix``: its first rules (as many as leave room under
        ``max_length`` for the rules still needed), and the fewest antecedents that complete it, each
        one of those that bring the list one rule closer, put where ``cost(list)`` is least (without
        ``cost``: the first one, at the end)."""
        prefix = list(prefix)
        if max_length is not None:
            while prefix and len(prefix) + int(self.rules_needed[self.coverage(prefix)]) > max_length:
                prefix.pop()
        covered = self.coverage(prefix)
        while covered != self.complete:
            needed = self.rules_needed[covered]
            # antecedents that bring the coverage one rule closer to complete (some exist: the table is exact)
            closer = [int(a) for a in np.flatnonzero(self.masks & ~covered)
                      if self.rules_needed[covered | int(self.masks[a])] == needed - 1 and a not in prefix]
            if cost is None:
                prefix.append(closer[0])
            else:
                prefix = min((prefix[:at] + [a] + prefix[at:] for a in closer for at in range(len(prefix) + 1)),
                             key=cost)
            covered = self.coverage(prefix)
        return tuple(prefix)

    def check_length(self, max_length: int | None, name: str = "max_length") -> None:
        if max_length is not None and self.shortest() > max_length:
            raise ValueError(f"the requirements {list(self.names)} need at least {self.shortest()} rules, "
                             f"more than {name}={max_length}")


def _fewest_rules_to_complete(masks: np.ndarray, n_requirements: int) -> np.ndarray:
    """``needed[c]``: the fewest masks whose union with ``c`` is complete (breadth-first, backwards from the
    complete coverage over the distinct masks)."""
    complete = (1 << n_requirements) - 1
    distinct = np.unique(masks[masks != 0])
    coverages = np.arange(complete + 1, dtype=np.int64)
    needed = np.full(complete + 1, -1, np.int64)
    needed[complete] = 0
    level = 0
    while (needed < 0).any():
        reached = needed == level
        # c is one rule from a coverage reached at this level if c | mask is one of them, for some mask
        step = np.zeros(complete + 1, dtype=bool)
        for mask in distinct:
            step |= reached[coverages | mask]
        new = step & (needed < 0)
        if not new.any():
            break  # the rest cannot be completed (from_groups has ruled that out)
        level += 1
        needed[new] = level
    return needed
