"""Pricing: find clauses (conjunctions of features) with negative reduced cost

    rc(k) = z_weight * |Z covered| - sum_{i in P covered} mu_i + (penalty + lambda) * (1 + |k|)

(with sample weights, z_weight * |Z covered| is the covered negatives' weight)

either exactly (an integer program on HiGHS, with a time limit and a proven lower bound on the minimum
reduced cost) or heuristically (a beam search over conjunctions, and a search of the clauses one
condition away from the master's own, both vectorised: the scores of all one-feature extensions of a
clause are two matrix-vector products).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..data import bitset
from .master import INF, highspy, interrupt_when, new_highs


class _Prices:
    """What a clause costs, from what it covers (``covered``, each class of pricing data's own)."""

    def negative_cost(self, covered_z) -> float:
        """Weight of the negatives a clause covers (a boolean vector over them)."""
        if self.z_weights is None:
            return float(self.z_weight * np.count_nonzero(covered_z))
        return float(self.z_weights[covered_z].sum())

    def reduced_cost(self, clause, mu, unit_price: float) -> float:
        covered_p, covered_z = self.covered(clause)
        return float(self.negative_cost(covered_z) - mu[covered_p].sum() + unit_price * (1 + len(clause)))


@dataclass(frozen=True)
class PricingData(_Prices):
    """Features of the positive and negative samples: boolean (one byte a cell) for exact pricing and
    re-scoring, or float32 0/1 (BLAS products) for the beam search."""

    positive: np.ndarray  # (|P|, J)
    negative: np.ndarray  # (|Z|, J)
    z_weight: float = 1.0
    #: each negative's own weight (sample weights), replacing ``z_weight``; None: every one weighs z_weight
    z_weights: np.ndarray | None = None
    #: each feature's nesting chain (-1: none; see :attr:`optrules.data.Binarizer.chains_`): no clause
    #: needs two features of one chain
    chains: np.ndarray | None = None

    @classmethod
    def from_features(cls, features, y, z_weight: float = 1.0, dtype=bool, sample_weight=None,
                      chains=None) -> "PricingData":
        features = np.asarray(features, dtype=bool)
        y = np.asarray(y).astype(bool)
        z_weights, chains = _weights_and_chains(features.shape[1], y, z_weight, sample_weight, chains)
        return cls(features[y].astype(dtype), features[~y].astype(dtype), z_weight, z_weights, chains)

    @property
    def n_features(self) -> int:
        return self.positive.shape[1]

    def packed(self) -> "PricingBits":
        """The same data as packed bitsets (the exact searches' form)."""
        return PricingBits(bitset.pack(self.positive.T > 0), bitset.pack(self.negative.T > 0), len(self.positive),
                           len(self.negative), self.z_weight, self.z_weights, self.chains)

    def unpacked(self) -> "PricingData":
        return self

    def as_floats(self) -> "PricingData":
        """The same data as float32 0/1 matrices (for the beam search's matrix products)."""
        if self.positive.dtype == np.float32:
            return self
        return replace(self, positive=self.positive.astype(np.float32), negative=self.negative.astype(np.float32))

    def features(self, subset) -> "PricingData":
        """The same samples with only the features in ``subset``."""
        return replace(self, positive=self.positive[:, subset], negative=self.negative[:, subset],
                       chains=None if self.chains is None else self.chains[subset])

    @property
    def nbytes(self) -> int:
        return self.positive.nbytes + self.negative.nbytes

    def covered(self, clause) -> tuple[np.ndarray, np.ndarray]:
        """The positives and the negatives a clause covers (boolean vectors over them)."""
        return tuple(rows[:, list(clause)].all(axis=1) if clause else np.ones(len(rows), bool)
                     for rows in (self.positive, self.negative))


@dataclass(frozen=True)
class PricingBits(_Prices):
    """The exact searches' pricing data: each feature's positives and its negatives as packed bitsets
    (:mod:`optrules.data.bitset`, one row of words a feature), an eighth of :class:`PricingData`'s
    bytes and packed from the table without a copy of it (700,000 rows x 640 features: 56 MB where the
    boolean matrices took 448 MB and the packing of the enumeration 600 MB more)."""

    positive: np.ndarray  # (J, words over |P|) uint64
    negative: np.ndarray  # (J, words over |Z|)
    n_positive: int
    n_negative: int
    z_weight: float = 1.0
    z_weights: np.ndarray | None = None
    chains: np.ndarray | None = None

    @classmethod
    def from_features(cls, features, y, z_weight: float = 1.0, sample_weight=None, chains=None) -> "PricingBits":
        """From a (samples x features) boolean table."""
        return cls.from_rows(bitset.pack_rows(features), np.shape(features)[1], y, z_weight, sample_weight, chains)

    @classmethod
    def from_rows(cls, rows, n_features: int, y, z_weight: float = 1.0, sample_weight=None,
                  chains=None) -> "PricingBits":
        """From the table's rows packed (:func:`~optrules.data.bitset.pack_rows`, one row of words a sample)."""
        y = np.asarray(y).astype(bool)
        z_weights, chains = _weights_and_chains(n_features, y, z_weight, sample_weight, chains)
        positives, negatives = np.flatnonzero(y), np.flatnonzero(~y)
        # each class's rows taken from the rows packed, then transposed as bits: gathering each class's rows
        # of the (Fortran-order) table to pack them took 1.2 s on 700,000 x 748, this 0.35 s
        return cls(bitset.transpose(rows[positives], n_features), bitset.transpose(rows[negatives], n_features),
                   len(positives), len(negatives), z_weight, z_weights, chains)

    @property
    def n_features(self) -> int:
        return self.positive.shape[0]

    @property
    def nbytes(self) -> int:
        return self.positive.nbytes + self.negative.nbytes

    def packed(self) -> "PricingBits":
        return self

    def unpacked(self) -> PricingData:
        """The same data as boolean matrices (samples x features), for the pricing IP and the beam search."""
        return PricingData(np.ascontiguousarray(bitset.unpack(self.positive, self.n_positive).T),
                           np.ascontiguousarray(bitset.unpack(self.negative, self.n_negative).T),
                           self.z_weight, self.z_weights, self.chains)

    def covered(self, clause) -> tuple[np.ndarray, np.ndarray]:
        """The positives and the negatives a clause covers (boolean vectors over them)."""
        return tuple(bitset.unpack(bitset.intersection(words, clause, n), n)
                     for words, n in ((self.positive, self.n_positive), (self.negative, self.n_negative)))


def _weights_and_chains(n_features: int, y, z_weight: float, sample_weight, chains):
    """The negatives' own weights (None without sample weights) and the features' chains, checked."""
    z_weights = None if sample_weight is None else z_weight * np.asarray(sample_weight, np.float64)[~y]
    chains = None if chains is None else np.asarray(chains, np.int64)
    if chains is not None and chains.shape != (n_features,):
        raise ValueError(f"chains needs one entry a feature ({n_features}), got shape {chains.shape}")
    return z_weights, chains


def beam_search(data: PricingData, mu, unit_price: float, max_degree: int, beam_width: int = 10,
                max_clauses: int = 20, tolerance: float = 1e-9, should_stop=None):
    """Clauses of up to ``max_degree`` conditions with negative reduced cost, most negative first.

    Starting from the empty clause, every beam clause is extended by every feature; the ``beam_width``
    best distinct extensions form the next beam. An extension can only lose covered positives, so a
    clause whose ``unit_price * (2 + |k|) - (mu-weight covered)`` is >= 0 is not extended. A level is
    two matrix products, (beam x samples) by (samples x features), and the choice of the next beam one
    partial sort of their scores: a beam of 1,000 on a wdbc fold's duals (512 rows, 540 features,
    degree 5) takes 0.08 s (a loop over each clause's extensions took 32 s). ``should_stop()`` (a fit's
    cancel) is asked before each level after the first: a wide beam on a large table takes seconds, and
    a stop then returns the clauses found so far.
    """
    exact, exact_mu = data, np.asarray(mu, dtype=np.float64)
    data, mu, z_cost = _as_scored(data, mu)
    n_features = data.positive.shape[1]
    width = max(int(beam_width), 1)
    clauses: list[tuple[int, ...]] = [()]
    covered_p = np.ones((1, len(mu)), bool)
    covered_z = np.ones((1, len(data.negative)), bool)
    found: dict[tuple[int, ...], float] = {}
    for degree in range(1, max_degree + 1):
        if degree > 1 and should_stop is not None and should_stop():
            break
        gain, scores = _extension_scores(data, mu, z_cost, clauses, covered_p, covered_z, unit_price)
        flat = scores.ravel()
        # a clause of d features is met from up to d parents: d times as many candidates as are wanted
        _note_best(found, flat, np.flatnonzero(flat < -tolerance), 2 * max_clauses * degree, clauses, n_features)
        if degree == max_degree:
            break
        extendable = np.flatnonzero((unit_price * (2 + degree) - gain.ravel() < -tolerance) & np.isfinite(flat))
        beam = _distinct_best(flat, extendable, width * degree, width, clauses, n_features)
        if not beam:
            break
        parents = np.array([b for b, _, _ in beam])
        added = np.array([j for _, j, _ in beam])
        covered_p = covered_p[parents] & (data.positive[:, added].T > 0)
        covered_z = covered_z[parents] & (data.negative[:, added].T > 0)
        clauses = [clause for _, _, clause in beam]
    return _rescored(exact, exact_mu, unit_price, found, max_clauses, tolerance)


def neighbour_search(data: PricingData, mu, unit_price: float, max_degree: int, starts, rounds: int = 3,
                     keep: int = 50, max_clauses: int = 20, max_cells: float = 3e8, tolerance: float = 1e-9,
                     should_stop=None):
    """Clauses with negative reduced cost one condition away from ``starts`` (the master's clauses of
    reduced cost 0, say): a condition added, dropped, or swapped for another, most negative first; then
    again from the ``keep`` best found, ``rounds`` times in all.

    Near the LP's optimum the beam, which grows clauses from the empty one a condition at a time, keeps
    pruning the prefixes of the clauses that would improve it (their first conditions alone score
    poorly), while such clauses are often a condition away from a column the restricted master already
    uses: at the end of 30 s fits at complexity 15, where the beam and 2 s exact searches found nothing
    on an ionosphere fold's duals, this found clauses of reduced cost -1.0 in 0.06 s (-2.0 after three
    rounds). A round scores every one-feature extension of each start and of each start less one of its
    conditions in two matrix products, as a beam level does; bases are taken in ``starts``' order up to
    ``max_cells`` (bases x samples x features) a round, and ``should_stop()`` is asked between rounds."""
    exact, exact_mu = data, np.asarray(mu, dtype=np.float64)
    data, mu, z_cost = _as_scored(data, mu)
    n_features = data.positive.shape[1]
    max_bases = max(1, int(max_cells // max(n_features * (len(data.positive) + len(data.negative)), 1)))
    seen = {tuple(sorted(clause)) for clause in starts}
    frontier = [tuple(sorted(clause)) for clause in starts]
    found: dict[tuple[int, ...], float] = {}
    for round_ in range(rounds):
        if not frontier or (round_ > 0 and should_stop is not None and should_stop()):
            break
        bases: dict[tuple[int, ...], None] = {}  # (ordered, distinct)
        for clause in frontier:
            for base in ([clause] if len(clause) < max_degree else []) + [
                    clause[:i] + clause[i + 1:] for i in range(len(clause))]:
                bases.setdefault(base)
        bases = list(bases)[:max_bases]
        covered_p, covered_z = (np.array(rows) for rows in zip(*(data.covered(base) for base in bases)))
        new: dict[tuple[int, ...], float] = {}
        for b, base in enumerate(bases):  # a start less a condition is a clause too (not the empty one)
            if base and base not in seen:
                seen.add(base)
                value = float(z_cost @ covered_z[b] - mu @ covered_p[b] + unit_price * (1 + len(base)))
                if value < -tolerance:
                    new[base] = value
        growing = [b for b, base in enumerate(bases) if len(base) < max_degree]
        if growing:
            _, scores = _extension_scores(data, mu, z_cost, [bases[b] for b in growing], covered_p[growing],
                                          covered_z[growing], unit_price)
            for row, j in zip(*np.nonzero(scores < -tolerance)):
                clause = tuple(sorted(bases[growing[row]] + (int(j),)))
                if clause not in seen:
                    seen.add(clause)
                    new[clause] = float(scores[row, j])
        found.update(new)
        frontier = [clause for clause, _ in sorted(new.items(), key=lambda item: item[1])[:keep]]
    return _rescored(exact, exact_mu, unit_price, found, max_clauses, tolerance)


def _as_scored(data: PricingData, mu):
    """The data, the duals and the negatives' costs in float32 for the vectorised searches' products
    (they only rank: the clauses found are re-scored exactly)."""
    data = data.as_floats()
    z_cost = (np.full(len(data.negative), data.z_weight, np.float32) if data.z_weights is None
              else np.asarray(data.z_weights, np.float32))
    return data, np.asarray(mu, dtype=np.float32), z_cost


def _extension_scores(data: PricingData, mu, z_cost, clauses, covered_p, covered_z, unit_price: float):
    """``(gain, scores)``: for each clause (its covered positives and negatives as rows of booleans) and
    each feature, the mu it still covers with the feature added, and the reduced cost of that extension
    (inf where the clause has the feature)."""
    gain = (covered_p * mu) @ data.positive  # (clauses, features)
    sizes = np.array([len(clause) for clause in clauses], np.float32)
    scores = (covered_z * z_cost) @ data.negative - gain + (np.float32(unit_price) * (2 + sizes))[:, None]
    for b, clause in enumerate(clauses):
        scores[b, list(clause)] = np.inf
    return gain, scores


def _rescored(exact: PricingData, mu, unit_price: float, found: dict, max_clauses: int, tolerance: float):
    """The ``max_clauses`` clauses of ``found`` (clause: its float32 score) of most negative reduced cost
    on ``exact``, as ``(reduced cost, clause)``, most negative first."""
    best = sorted(found.items(), key=lambda item: item[1])[:2 * max_clauses]  # (re-scoring costs a pass each)
    rescored = ((exact.reduced_cost(clause, mu, unit_price), clause) for clause, _ in best)
    ranked = sorted((item for item in rescored if item[0] < -tolerance), key=lambda item: item[0])
    return ranked[:max_clauses]


def _best_of(flat, candidates, count: int) -> np.ndarray:
    """The ``count`` candidates (indices into ``flat``) of smallest score, smallest first."""
    if len(candidates) > count:
        candidates = candidates[np.argpartition(flat[candidates], count - 1)[:count]]
    return candidates[np.argsort(flat[candidates], kind="stable")]


def _distinct_best(flat, candidates, count: int, width: int, clauses, n_features: int):
    """Among the ``count`` best candidates (beam clause b extended by feature j at ``b * n_features + j``),
    the first ``width`` distinct clauses: ``(b, j, sorted clause)``."""
    beam, seen = [], set()
    for index in _best_of(flat, candidates, count):
        b, j = divmod(int(index), n_features)
        clause = tuple(sorted(clauses[b] + (j,)))
        if clause not in seen:
            seen.add(clause)
            beam.append((b, j, clause))
            if len(beam) >= width:
                break
    return beam


def _note_best(found: dict, flat, candidates, count: int, clauses, n_features: int) -> None:
    """Keeps in ``found`` each of the ``count`` best candidates' clause with its best score (a clause's
    first among them, best first)."""
    for b, j, clause in _distinct_best(flat, candidates, count, count, clauses, n_features):
        found[clause] = min(found.get(clause, np.inf), float(flat[b * n_features + j]))


def exact_pricing(data: PricingData, mu, unit_price: float, max_degree: int, time_limit: float, seed: int = 0,
                  should_stop=None, work=None):
    """The pricing IP on HiGHS: ``(clause or None, reduced cost, lower bound on the minimum reduced cost,
    proven)``. Only positives with mu_i > 0 need variables; ``should_stop()`` interrupts the solve;
    ``work`` (a :class:`~optrules.budget.NodeBudget`) bounds and counts its MIP nodes."""
    data = data.unpacked()
    mu = np.asarray(mu, dtype=np.float64)
    active = np.flatnonzero(mu > 1e-12)
    n_features = data.positive.shape[1]
    h = new_highs(seed)
    h.setOptionValue("time_limit", float(max(time_limit, 0.05)))
    if work is not None and work.left() is not None:
        h.setOptionValue("mip_max_nodes", int(work.left()))
    interrupt_when(h, should_stop)
    # columns: z_j (binary), delta_i for active positives, delta_i for negatives
    n_pos, n_neg = len(active), data.negative.shape[0]
    z_costs = np.full(n_neg, data.z_weight) if data.z_weights is None else data.z_weights
    costs = np.concatenate([np.full(n_features, unit_price), -mu[active], z_costs])
    lower = np.zeros(n_features + n_pos + n_neg)
    upper = np.ones(n_features + n_pos + n_neg)
    h.addVars(len(costs), lower, upper)
    h.changeColsCost(len(costs), np.arange(len(costs), dtype=np.int32), costs)
    h.changeColsIntegrality(n_features, np.arange(n_features, dtype=np.int32),
                            np.array([highspy.HighsVarType.kInteger] * n_features))
    # rows 1: delta_i + z_j <= 1 for every feature j that is 0 in active positive i
    pos_rows, pos_features = np.nonzero(data.positive[active] == 0)
    m1 = len(pos_rows)
    idx1 = np.column_stack([n_features + pos_rows, pos_features]).ravel()
    # rows 2: delta_i + sum_{j: x_ij = 0} z_j >= 1 for every negative i
    neg_rows, neg_features = np.nonzero(data.negative == 0)
    per_row = np.bincount(neg_rows, minlength=n_neg)
    starts2 = np.concatenate([[0], np.cumsum(per_row + 1)[:-1]])
    idx2 = np.empty(int(np.sum(per_row + 1)), dtype=np.int64)
    idx2[starts2] = n_features + n_pos + np.arange(n_neg)
    slots = np.ones(len(idx2), dtype=bool)
    slots[starts2] = False
    idx2[slots] = neg_features  # np.nonzero is row-major, so each row's features follow its delta
    # row 3: 0 <= sum_j z_j <= max_degree (the empty clause is allowed)
    idx3 = np.arange(n_features)
    starts = np.concatenate([2 * np.arange(m1), 2 * m1 + starts2, [2 * m1 + len(idx2)]]).astype(np.int32)
    indices = np.concatenate([idx1, idx2, idx3]).astype(np.int32)
    values = np.ones(len(indices))
    row_lower = np.concatenate([np.full(m1, -INF), np.ones(n_neg), [0.0]])
    row_upper = np.concatenate([np.ones(m1), np.full(n_neg, INF), [float(max_degree)]])
    h.addRows(len(starts), row_lower, row_upper, len(indices), starts, indices, values)
    h.run()
    info = h.getInfo()
    if work is not None:
        work.spend(max(int(info.mip_node_count), 1))
    if info.primal_solution_status == 0:
        return None, np.inf, info.mip_dual_bound + unit_price, False
    z = np.asarray(h.getSolution().col_value)[:n_features]
    clause = tuple(int(j) for j in np.flatnonzero(z > 0.5))
    proven = h.getModelStatus() == highspy.HighsModelStatus.kOptimal
    # the constant unit_price (the clause's own 1 in c_k) is outside the IP objective
    return clause, data.reduced_cost(clause, mu, unit_price), info.mip_dual_bound + unit_price, proven
