"""Boolean rule sets' exact pricing by enumeration (rulesets/enumeration.py): branch and bound over
conjunctions against enumeration of every clause (nested chains, twin features, features alike below a
clause, thousands of rows), dominated features, searches in slices, in parts and raising the price."""

import itertools
import time

import numpy as np
import pandas as pd
import pytest
from test_pricing import DEEP_WINNERS, dense_pricing_instance

from optrules.data import bitset
from optrules.rulesets.enumeration import enumeration_pricing
from optrules.rulesets.pricing import PricingData


@pytest.mark.parametrize("seed", range(200))
def test_enumeration_pricing_against_enumeration(seed):
    """Larger and sparser than the IP test: zero duals, empty clauses, degrees 0-4, feature counts to 9."""
    rng = np.random.default_rng(4000 + seed)
    n, j, degree = int(rng.integers(5, 60)), int(rng.integers(1, 10)), int(rng.integers(0, 5))
    features = rng.random((n, j)) < rng.uniform(0.2, 0.8)
    y = rng.random(n) < 0.5
    data = PricingData.from_features(features, y, z_weight=float(rng.choice([1.0, 0.3, 2.0])))
    mu = rng.random(int(y.sum())) * rng.choice([0.5, 1.0, 3.0])
    mu[rng.random(len(mu)) < 0.3] = 0.0
    price = float(rng.choice([0.0, 0.05, 0.5]))
    check_enumeration_pricing(data, mu, price, degree, j)


@pytest.mark.parametrize("seed", DEEP_WINNERS)
def test_enumeration_pricing_when_a_deep_clause_barely_wins(seed):
    check_enumeration_pricing(*dense_pricing_instance(seed))


@pytest.mark.parametrize("seed", range(40))
def test_dominated_features_are_the_ones_another_feature_beats(seed):
    """A feature is left out of the searches when another covers every positive it covers (among those
    given) and no negative it does not; of equal features the first stays, and every feature left out
    has one kept that dominates it (so the search over the kept features misses no value)."""
    from optrules.rulesets.enumeration import undominated_features

    rng = np.random.default_rng(5000 + seed)
    n_features, n_pos, n_neg = int(rng.integers(1, 40)), int(rng.integers(0, 100)), int(rng.integers(0, 150))
    base = rng.random((3, n_pos + n_neg)) < 0.5  # few patterns: equal and nested features are common
    rows = np.array([base[rng.integers(3)] & (rng.random(n_pos + n_neg) < rng.choice([0.6, 1.0]))
                     for _ in range(n_features)]).reshape(n_features, n_pos + n_neg)
    positives, negatives = rows[:, :n_pos], rows[:, n_pos:]
    keep = undominated_features(bitset.pack(positives) if n_pos else np.zeros((n_features, 1), np.uint64),
                                bitset.pack(negatives) if n_neg else np.zeros((n_features, 1), np.uint64))

    def dominates(k, j):
        return (not (positives[j] & ~positives[k]).any()) and not (negatives[k] & ~negatives[j]).any()

    def equal(k, j):
        return (positives[k] == positives[j]).all() and (negatives[k] == negatives[j]).all()
    for j in range(n_features):
        expected = not any(dominates(k, j) and not (equal(k, j) and k > j) for k in range(n_features) if k != j)
        assert keep[j] == expected
        if not keep[j]:
            assert any(keep[k] and dominates(k, j) for k in range(n_features))
    assert keep.any()


def check_enumeration_pricing(data, mu, price, degree, j):
    every = [c for d in range(1, degree + 1) for c in itertools.combinations(range(j), d)]
    best = min([data.reduced_cost((), mu, price)] + [data.reduced_cost(c, mu, price) for c in every])
    best_ratio = min((data.reduced_cost(c, mu, price) / (1 + len(c)) for c in every), default=np.inf)
    _, value, lower, proven, ratio = enumeration_pricing(data, mu, price, degree, 30)
    assert proven and value == pytest.approx(best, abs=1e-9) and lower == pytest.approx(best, abs=1e-9)
    # the ratio bound holds, and a finished search proves at least what the minimum alone gives
    assert ratio <= best_ratio + 1e-9 and ratio >= min(best, 0.0) / 2 - 1e-9
    # out of time at once: nothing proven, but the bounds still hold
    _, value, lower, proven, ratio = enumeration_pricing(data, mu, price, degree, 0.0)
    assert lower <= best + 1e-9 and value >= best - 1e-9 and ratio <= best_ratio + 1e-9
    assert proven == (lower >= value)


@pytest.mark.parametrize("seed", range(48))
def test_enumeration_pricing_on_thousands_of_rows_against_enumeration(seed):
    """Past a block of 32 words (2,048 negatives) the search stops counting a child's negatives once they
    cost more than it could win, and duals of few values are summed a word at a time (positives sorted by
    mu): the minimum, the ratio bound and the largest ratio still match brute force, with plain, whole
    (bit planes) and real negative weights."""
    from optrules.rulesets.enumeration import PricingSearch

    rng = np.random.default_rng(8800 + seed)
    n, j, degree = int(rng.integers(2_500, 6_000)), int(rng.integers(4, 8)), int(rng.integers(1, 4))
    features = rng.random((n, j)) < rng.uniform(0.3, 0.8, j)
    planted = features[:, 0] & features[:, 1]
    y = np.where(rng.random(n) < rng.uniform(0.05, 0.3), ~planted, planted)
    weights = [None, rng.integers(1, 4, n).astype(float), rng.uniform(0.2, 2.0, n)][seed % 3]
    data = PricingData.from_features(features, y, z_weight=float(rng.choice([0.05, 0.2, 1.0])), sample_weight=weights)
    n_pos = int(y.sum())
    mu = rng.choice([0.0, 0.5, 1.0, 1.0, 1.0], n_pos)  # runs of one value, as a master's duals come
    mu[rng.random(n_pos) < 0.05] = rng.random()  # and a few others
    price = float(rng.choice([0.0, 1.0, 10.0]))
    check_enumeration_pricing(data, mu, price, degree, j)
    for parts in (1, 2):  # every clause reported prices what it is reported at (no count cut short)
        search = PricingSearch(data, mu, price, degree, parts=parts)
        search.nodes_per_call = 3
        while not search.finished:
            search.run(30.0)
        for value, clause in search.found:
            assert value == pytest.approx(data.reduced_cost(clause, mu, price), abs=1e-9)
    # a child's negatives are counted whole, or the count stops at the limit and says so (+inf), never a
    # part of the cost passed off as the cost
    from optrules.rulesets.enumeration import _negative_cost, _negative_cost_of
    problem = search._parts[0].problem
    words = problem.negatives
    for _ in range(20):
        parent, feature = words[rng.integers(len(words))], words[rng.integers(len(words))]
        whole = _negative_cost(parent & feature, problem.z_weight, problem.z_weights, problem.z_planes)
        limit = float(rng.choice([whole, whole + 1.0, rng.uniform(0, 2 * whole + 1), -1.0]))
        got = _negative_cost_of(parent, feature, np.zeros_like(parent), problem.z_weight, problem.z_weights,
                                problem.z_planes, limit)
        assert got == pytest.approx(whole, rel=1e-12) or (got == np.inf and whole >= limit - 1e-9)
    every = [c for d in range(1, degree + 1) for c in itertools.combinations(range(j), d)]
    largest = max([price] + [data.reduced_cost(c, mu, 0.0) / -(1 + len(c)) for c in every])
    search = PricingSearch(data, mu, price, degree, raise_price=True)
    search.run(30.0)
    assert search.finished and search.unit_price == pytest.approx(largest, abs=1e-9)


@pytest.mark.parametrize("seed", range(60))
def test_a_pricing_search_given_time_in_slices_ends_where_one_run_ends(seed):
    """More time on the same duals continues the search (a retry, the certificate's pricing): run in
    slices of a node each, it proves the brute-force minimum and a ratio bound as strong as a whole run
    proves, and every slice's bounds hold on the way."""
    from optrules.rulesets.enumeration import PricingSearch

    data, mu, price, degree, j = dense_pricing_instance(seed)
    every = [c for d in range(1, degree + 1) for c in itertools.combinations(range(j), d)]
    best = min([data.reduced_cost((), mu, price)] + [data.reduced_cost(c, mu, price) for c in every])
    best_ratio = min((data.reduced_cost(c, mu, price) / (1 + len(c)) for c in every), default=np.inf)
    whole = PricingSearch(data, mu, price, degree).run(30.0)
    search = PricingSearch(data, mu, price, degree)
    search.nodes_per_call = 1
    runs = 0
    while not search.finished:
        _, value, lower, proven, ratio = search.run(1e-4)
        assert lower <= best + 1e-9 <= value + 2e-9 and ratio <= best_ratio + 1e-9
        runs += 1
    clauses, value, lower, proven, ratio = search.run(1e-4)
    assert proven and value == pytest.approx(best, abs=1e-9) and lower == pytest.approx(best, abs=1e-9)
    assert ratio == pytest.approx(whole[4], abs=1e-12) and clauses[0][0] == pytest.approx(best, abs=1e-9)
    assert runs >= 1


@pytest.mark.parametrize("seed", range(60))
def test_a_search_raising_the_price_ends_at_the_largest_ratio(seed):
    """With ``raise_price`` the search ends at the price at which the dearest clause prices zero (each
    clause's (mu covered - negatives' cost) / complexity), or where it began if that is higher, whether it
    runs at once or a node a slice; every slice's bound holds at the price the slice ended at."""
    from optrules.rulesets.enumeration import PricingSearch

    data, mu, price, degree, j = dense_pricing_instance(seed)
    every = [c for d in range(1, degree + 1) for c in itertools.combinations(range(j), d)]
    zero_price = [(data.reduced_cost(c, mu, 0.0) / -(1 + len(c))) for c in every]  # where c prices zero
    start = price * float(np.random.default_rng(seed).choice([0.0, 1.0, 3.0]))
    whole = PricingSearch(data, mu, start, degree, raise_price=True)
    whole.run(30.0)
    assert whole.finished and whole.unit_price == pytest.approx(max([start] + zero_price), abs=1e-9)
    sliced = PricingSearch(data, mu, start, degree, raise_price=True)
    sliced.nodes_per_call = 1
    while not sliced.finished:
        _, best, lower, proven, _ = sliced.run(1e-4)
        assert best == 0.0 and lower <= min(data.reduced_cost(c, mu, sliced.unit_price) for c in every) + 1e-9
    assert sliced.unit_price == pytest.approx(whole.unit_price, abs=1e-9)


def check_carried_proofs(seed) -> int:
    """The certificate's proof of a price starts where the generation's last search of the same duals
    (the minimum at the master's price, or a largest ratio) stopped, when what that search finished is
    proven at the new price: stopped after any number of nodes, at a price below, at or above, the proof
    from any price still ends at the brute-force largest ratio. A search of other duals (or of a
    threshold) is not taken as proof. Returns how many parts started past their first root."""
    from optrules.budget import NodeBudget
    from optrules.rulesets.enumeration import PricingSearch

    data, mu, price, degree, j = dense_pricing_instance(seed)
    rng = np.random.default_rng(7100 + seed)
    every = [c for d in range(1, degree + 1) for c in itertools.combinations(range(j), d)]
    largest = max(data.reduced_cost(c, mu, 0.0) / -(1 + len(c)) for c in every)
    skipped = 0
    for raise_price in (False, True):
        earlier = PricingSearch(data, mu, price, degree, raise_price=raise_price)
        earlier.nodes_per_call = 1
        earlier.run(30.0, work=NodeBudget(int(rng.integers(1, 200))))
        others = rng.permutation(mu) * 1.5  # other duals: their proofs say nothing of these
        for earlier_search in (earlier, PricingSearch(data, others, price, degree, raise_price=raise_price)):
            if earlier_search is not earlier:
                earlier_search.run(30.0)
            for start in (0.0, price, 0.5 * (price + largest), largest, price + 0.5 * abs(largest - price)):
                proof = PricingSearch(data, mu, start, degree, raise_price=True, proven_by=earlier_search)
                skipped += sum(part.root > first for first, part in enumerate(proof._parts))
                proof.run(30.0)
                assert proof.finished and proof.unit_price == pytest.approx(max(start, largest), abs=1e-9), (
                    raise_price, start, earlier_search is earlier)
    collecting = PricingSearch(data, mu, price, degree, below=10.0, max_collected=10_000)
    collecting.run(30.0)
    assert all(part.root == first for first, part in enumerate(PricingSearch(
        data, mu, price, degree, raise_price=True, proven_by=collecting)._parts))
    return skipped


@pytest.mark.parametrize("seed", range(120))
def test_a_ratio_search_skips_the_roots_an_earlier_search_proved_and_only_those(seed):
    check_carried_proofs(seed)


def test_the_carried_proofs_skip_roots_on_many_instances():
    """(So that the test above can see a wrong skip: on its instances, proofs do start past their roots.)"""
    assert sum(check_carried_proofs(seed) > 0 for seed in range(60)) >= 20


@pytest.mark.parametrize("seed", range(40))
def test_a_search_in_parts_proves_what_one_search_proves(seed):
    """The roots dealt to 1, 2 or 3 parts (threads, each pruning by its own best): the same minimum and
    the same largest ratio as brute force; under a node budget a run spends exactly the budget, and the
    same budget gives the same clauses again (which clauses a part searches does not depend on timing)."""
    from optrules.budget import NodeBudget
    from optrules.rulesets.enumeration import PricingSearch

    data, mu, price, degree, j = dense_pricing_instance(seed)
    every = [c for d in range(1, degree + 1) for c in itertools.combinations(range(j), d)]
    best = min([data.reduced_cost((), mu, price)] + [data.reduced_cost(c, mu, price) for c in every])
    largest = max([0.0] + [data.reduced_cost(c, mu, 0.0) / -(1 + len(c)) for c in every])
    for parts in (1, 2, 3):
        _, value, lower, proven, _ = PricingSearch(data, mu, price, degree, parts=parts).run(30.0)
        assert proven and value == pytest.approx(best, abs=1e-9) and lower == pytest.approx(best, abs=1e-9)
        ratio = PricingSearch(data, mu, 0.0, degree, raise_price=True, parts=parts)
        ratio.run(30.0)
        assert ratio.finished and ratio.unit_price == pytest.approx(largest, abs=1e-9)
        runs = []
        for _ in range(2):
            work, search = NodeBudget(3), PricingSearch(data, mu, price, degree, parts=parts)
            search.nodes_per_call = 1
            found, value, lower, proven, _ = search.run(30.0, work=work)
            assert work.spent == 3 or search.finished
            assert lower <= best + 1e-9 <= value + 2e-9
            runs.append((found, value))
        assert runs[0] == runs[1]


def test_a_search_in_parts_stops_when_asked_from_the_callers_thread():
    """A fit's hook (a progress display's) is asked in the caller's thread only, and a stop ends the
    parts' threads within a slice: the search returns unfinished, with bounds that hold."""
    import threading

    from optrules.rulesets.enumeration import PricingSearch

    rng = np.random.default_rng(7)
    features = rng.random((400, 300)) < 0.6
    y = rng.random(400) < 0.5
    data = PricingData.from_features(features, y, z_weight=1.0)
    mu = rng.random(int(y.sum()))
    search = PricingSearch(data, mu, 0.01, 5)
    asked_from = set()
    start = time.perf_counter()

    def should_stop():
        asked_from.add(threading.current_thread().name)
        return time.perf_counter() - start > 0.3
    _, value, lower, proven, _ = search.run(60.0, should_stop=should_stop)
    # (a margin, not a measure: the search, unheard, runs its 60 s)
    assert time.perf_counter() - start < 20.0 and not search.finished and not proven
    assert asked_from == {threading.current_thread().name} and lower < value


@pytest.mark.parametrize("seed", range(40))
def test_enumeration_pricing_with_nested_chains_against_enumeration(seed):
    """Threshold features both ways (a binarizer's, with its chains): skipping two features of one
    chain loses no minimum, intervals (x > a and x <= b: two chains of one column) included, which the
    planted positives favour."""
    from optrules import Binarizer

    rng = np.random.default_rng(6000 + seed)
    n = int(rng.integers(10, 50))
    frame = pd.DataFrame({"a": rng.integers(0, 12, n), "b": rng.normal(size=n).round(1), "c": rng.integers(0, 3, n)})
    binarizer = Binarizer(categorical=["c"], n_thresholds=int(rng.integers(2, 5))).fit(frame)
    features = binarizer.transform(frame)
    inside = (frame["a"] > 3) & (frame["a"] <= 8)
    y = np.where(rng.random(n) < 0.2, ~inside, inside).astype(bool)
    data = PricingData.from_features(features, y, chains=binarizer.chains_)
    assert (binarizer.chains_ >= 0).sum() >= 4  # thresholds of a and b, two chains each
    mu = rng.random(int(y.sum())) * rng.choice([0.5, 1.0, 3.0])
    price = float(rng.choice([0.0, 0.05, 0.3]))
    degree, j = int(rng.integers(1, 4)), features.shape[1]
    check_enumeration_pricing(data, mu, price, degree, j)


@pytest.mark.parametrize("seed", range(100))
def test_enumeration_pricing_with_twin_features_against_enumeration(seed):
    """Features planted in twins that agree on every positive but not on the negatives, or on the
    negatives but not on one positive, and in copies: the search expands one of two sibling clauses only
    when they cover the same rows, so a twin that differs on the negatives alone must still be searched."""
    rng = np.random.default_rng(7000 + seed)
    n, n_base = int(rng.integers(15, 50)), int(rng.integers(3, 6))
    y = rng.random(n) < 0.5
    base = rng.random((n, n_base)) < rng.uniform(0.5, 0.9)
    columns = []
    for f in range(n_base):
        columns.append(base[:, f])
        twin = base[:, f].copy()
        twin[(~y) & (rng.random(n) < 0.3)] = False  # covers fewer negatives, the same positives
        columns.append(twin)
        if rng.random() < 0.5:
            columns.append(base[:, f].copy())  # a copy: the same rows
        else:
            other = base[:, f].copy()
            one = rng.choice(np.flatnonzero(y)) if y.any() else 0
            other[one] = ~other[one]  # differs on one positive
            columns.append(other)
    features = np.column_stack(columns)
    data = PricingData.from_features(features, y, z_weight=float(rng.choice([1.0, 0.3])))
    mu = rng.random(int(y.sum())) * rng.choice([0.5, 1.0, 3.0])
    price = float(rng.choice([0.0, 0.05, 0.1]))
    check_enumeration_pricing(data, mu, price, int(rng.integers(3, 5)), features.shape[1])


def features_alike_below_a_clause(rng):
    """Features that agree (or nest) on the rows of a clause and differ elsewhere: a gate feature, base
    features, and for each base variants changed only on rows the gate misses (copies there), or that
    also drop some of the gate's negatives (dominating there) or add some (dominated there), or trade
    one of the gate's positives for another and drop negatives (neither dominates). Half of the labels
    are planted as the gate and two base features, so that the best clauses run through such a node."""
    n, n_base = int(rng.integers(20, 60)), int(rng.integers(2, 4))
    gate = rng.random(n) < 0.6
    bases = rng.random((n, n_base)) < rng.uniform(0.5, 0.9, n_base)
    y = rng.random(n) < rng.uniform(0.3, 0.7)
    if rng.random() < 0.5:
        y = np.where(rng.random(n) < 0.1, ~y, gate & bases[:, 0] & bases[:, 1])
    columns = [gate]
    for base in bases.T:
        columns.append(base)
        for _ in range(int(rng.integers(1, 3))):
            variant = base.copy()
            outside = ~gate & (rng.random(n) < 0.5)
            variant[outside] = ~variant[outside]
            kind = rng.integers(0, 4)
            if kind in (1, 3):
                variant[gate & ~y & (rng.random(n) < 0.3)] = False
            if kind == 2:
                variant[gate & ~y & (rng.random(n) < 0.3)] = True
            if kind == 3 and (gate & y & base).any() and (gate & y & ~base).any():
                variant[rng.choice(np.flatnonzero(gate & y & base))] = False
                variant[rng.choice(np.flatnonzero(gate & y & ~base))] = True
            columns.append(variant)
    return np.column_stack(columns), y


@pytest.mark.parametrize("seed", range(80))
def test_enumeration_pricing_with_features_alike_below_a_clause_against_enumeration(seed):
    """A node leaves out of its children to extend those another one dominates on the node's rows (of
    two equal there, the earlier stays): the minimum and the largest ratio still match brute force."""
    from optrules.rulesets.enumeration import PricingSearch

    rng = np.random.default_rng(9100 + seed)
    features, y = features_alike_below_a_clause(rng)
    data = PricingData.from_features(features, y, z_weight=float(rng.choice([1.0, 0.4])))
    mu = rng.choice([0.3, 1.0, 1.0], int(y.sum())) * rng.choice([1.0, 3.0])
    price = float(rng.choice([0.0, 0.05, 0.3]))
    degree, j = int(rng.integers(3, 5)), features.shape[1]
    check_enumeration_pricing(data, mu, price, degree, j)
    every = [c for d in range(1, degree + 1) for c in itertools.combinations(range(j), d)]
    search = PricingSearch(data, mu, 0.0, degree, raise_price=True)
    search.run(30.0)
    largest_ratio = max(data.reduced_cost(c, mu, 0.0) / -(1 + len(c)) for c in every)
    assert search.finished and search.unit_price == pytest.approx(max(0.0, largest_ratio), abs=1e-9)


@pytest.mark.parametrize("seed", range(40))
def test_collecting_below_a_threshold_keeps_the_clauses_alike_below_a_clause(seed):
    """Collecting every clause priced below a threshold leaves out only clauses that cover what a
    shorter or earlier one covers: each clause below it has one collected that covers the same rows
    with no more conditions (the dominated ones, which cover other rows, included)."""
    from optrules.rulesets.enumeration import PricingSearch

    rng = np.random.default_rng(9300 + seed)
    features, y = features_alike_below_a_clause(rng)
    data = PricingData.from_features(features, y)
    mu = rng.uniform(0.2, 1.5, int(y.sum()))  # every positive priced: a row for the test below
    price, degree, j = 0.1, int(rng.integers(2, 4)), features.shape[1]
    every = [c for d in range(1, degree + 1) for c in itertools.combinations(range(j), d)]
    values = sorted(data.reduced_cost(c, mu, price) for c in every)
    threshold = values[len(values) // 3]
    search = PricingSearch(data, mu, price, degree, below=threshold, max_collected=len(every) + 1)
    search.run(30.0)
    assert search.finished
    kept = {(features[:, list(c)].all(axis=1).tobytes(), len(c)) for c in search.collected if c}
    for clause in every:
        if data.reduced_cost(clause, mu, price) < threshold:
            rows = features[:, list(clause)].all(axis=1).tobytes()
            assert any((rows, d) in kept for d in range(1, len(clause) + 1)), clause


def test_chains_are_the_nested_thresholds():
    from optrules import Binarizer

    frame = pd.DataFrame({"x": np.arange(20.0), "y": np.arange(20) % 7, "g": list("ab") * 10})
    binarizer = Binarizer(categorical=["g"], n_thresholds=3).fit(frame)
    features, chains = binarizer.transform(frame), binarizer.chains_
    for chain in set(chains[chains >= 0]):  # one chain: nested, so the conjunction of any two is one of them
        members = np.flatnonzero(chains == chain)
        assert len(members) >= 2
        for a, b in itertools.combinations(members, 2):
            both = features[:, a] & features[:, b]
            assert (both == features[:, a]).all() or (both == features[:, b]).all()
    names = binarizer.feature_names_
    assert chains[names.index("g=a")] == -1
    # each column's two directions are different chains (x > 4 and x <= 14 is an interval)
    assert len(set(chains[chains >= 0])) == 4
