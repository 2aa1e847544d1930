"""A fitted Boolean rule set (DNF or CNF) describing one of two classes."""

from __future__ import annotations

import numpy as np

from ..escape import printable
from ..models import FORMAT_VERSION, Branch, Model, check_format, condition_text, display_label


class RuleSet(Model):
    """A Boolean rule set: DNF (``IF clause OR clause ... THEN positive``, a clause being an AND of
    features) or, with ``cnf``, CNF (``IF (a OR b) AND (c) ... THEN positive``).

    ``clauses`` are tuples of feature names. The set describes ``classes[describes]`` (the "positive"
    class it predicts when it holds; by default the second). ``rates`` are the training rates of that
    class among the samples the set rejects and accepts, reported by ``predict_proba`` (whose columns
    follow ``classes``). ``branch_totals`` (optional) are the training totals per class of the rows each
    branch decided (see :meth:`branches`).

    Read as a decision list (:meth:`branches`): a DNF accepts a row at the first clause that holds and
    rejects it otherwise; a CNF rejects it at the first clause none of whose features holds and accepts
    it otherwise.
    """

    FORMAT = "optrules.RuleSet"  # the "format" of its saved files (load_model reads it)

    def __init__(self, clauses, cnf: bool = False, rates=(0.0, 1.0), classes=(0, 1), binarizer=None,
                 feature_names=None, describes: int = 1, branch_totals=None):
        if describes not in (0, 1):
            raise ValueError(f"describes must be 0 or 1 (an index into classes), got {describes!r}")
        if len(classes) != 2:
            raise ValueError(f"a rule set describes one of two classes, got classes {list(classes)}")
        super().__init__(classes, binarizer, feature_names)
        self.describes = int(describes)
        self.clauses = [tuple(c) for c in clauses]
        self.cnf = bool(cnf)
        self.rates = (float(rates[0]), float(rates[1]))
        if branch_totals is not None and len(branch_totals) != len(self.clauses) + 1:
            raise ValueError(f"{len(branch_totals)} branch totals for {len(self.clauses)} clauses and the default")
        self.branch_totals = None if branch_totals is None else [tuple(float(t) for t in b) for b in branch_totals]

    def __len__(self) -> int:
        return len(self.clauses)

    def branches(self) -> list[Branch]:
        accept, reject = self.describes, 1 - self.describes

        def probabilities(accepted: bool):
            p = self.rates[1] if accepted else self.rates[0]  # of the described class
            return (p, 1.0 - p) if self.describes == 0 else (1.0 - p, p)

        def totals(k):
            if self.branch_totals is None:
                return None, None
            return int(round(sum(self.branch_totals[k]))), self.branch_totals[k]

        out = []
        for k, clause in enumerate(self.clauses):
            if self.cnf:  # the clause fails: none of its features holds
                literals, prediction = tuple((name, False) for name in clause), reject
                text = "not (" + " or ".join(clause) + ")" if clause else "(always)"
            else:
                literals, prediction = tuple((name, True) for name in clause), accept
                text = condition_text(literals) if clause else "(always)"
            out.append(Branch(literals, prediction, probabilities(prediction == accept), text, *totals(k)))
        default = reject if not self.cnf else accept
        out.append(Branch((), default, probabilities(default == accept), "(otherwise)", *totals(len(self.clauses))))
        return out

    def decision(self, X) -> np.ndarray:
        """True where the rule set predicts the described class."""
        predictions = np.array([branch.prediction for branch in self.branches()], dtype=np.int64)
        return predictions[self.rule_index(X)] == self.describes

    @property
    def complexity(self) -> int:
        """The paper's complexity: number of clauses plus number of conditions."""
        return len(self.clauses) + sum(len(c) for c in self.clauses)

    def __str__(self) -> str:
        positive = display_label(self.classes, self.describes)
        negative = display_label(self.classes, 1 - self.describes)
        if not self.clauses:
            return f"predict {positive if self.cnf else negative}"
        inner, outer = (" OR ", "\n  AND ") if self.cnf else (" AND ", "\n  OR ")
        body = outer.join("(" + (inner.join(map(printable, c)) if c else ("false" if self.cnf else "true")) + ")" for c in self.clauses)
        return f"IF {body}\nTHEN predict {positive}\nELSE predict {negative}"

    def __repr__(self) -> str:
        return f"RuleSet({'CNF' if self.cnf else 'DNF'}, {len(self.clauses)} clauses, complexity {self.complexity})"

    def __eq__(self, other) -> bool:
        return (isinstance(other, RuleSet) and self.clauses == other.clauses and self.cnf == other.cnf
                and self.describes == other.describes and self._same_classes(other))

    def to_dict(self) -> dict:
        return {"format": self.FORMAT, "version": FORMAT_VERSION, "clauses": [list(c) for c in self.clauses],
                "cnf": self.cnf, "describes": self.describes, "rates": list(self.rates),
                "branch_totals": None if self.branch_totals is None else [list(b) for b in self.branch_totals],
                **self._common_dict()}

    @classmethod
    def from_dict(cls, data: dict) -> "RuleSet":
        check_format(data, cls.FORMAT, "RuleSet")
        return cls(data["clauses"], data["cnf"], data["rates"], data["classes"], cls._binarizer_from(data),
                   data.get("feature_names"), data.get("describes", 1), data.get("branch_totals"))
