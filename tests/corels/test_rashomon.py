"""The Rashomon set of rule lists against an exhaustive enumerator of every list."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pandas as pd
import pytest

from optrules import RuleListClassifier
from optrules.certificate import NODE_BUDGET
from optrules.cli import main
from optrules.corels.bruteforce import every_list
from optrules.corels.prefix import objective
from optrules.corels.problem import Problem
from optrules.corels.rashomon import enumerate_rashomon


def _every_list_objective(captures, y, regularization, max_length=None, sample_weight=None, n_classes=None):
    """{prefix: objective} of every list (each rule capturing something new), by brute force."""
    total = float(len(y) if sample_weight is None else np.sum(sample_weight))
    return {prefix: objective(mistakes, len(prefix), total, regularization)
            for prefix, mistakes in every_list(captures, y, max_length, sample_weight, n_classes, capturing_only=True)}


def _random_problem(rng, weighted=False, n_classes=2):
    m, n = int(rng.integers(2, 7)), int(rng.integers(6, 40))
    captures = rng.random((m, n)) < rng.uniform(0.1, 0.7)
    y = rng.integers(0, n_classes, n)
    y[:n_classes] = np.arange(n_classes)
    weights = rng.integers(1, 5, n).astype(float) if weighted else None
    return captures, y, weights


def _binary_problem(seed, n_antecedents, n_samples, density, regularization):
    """A random two-class problem and the objective of each of its lists."""
    rng = np.random.default_rng(seed)
    captures = rng.random((n_antecedents, n_samples)) < density
    y = (rng.random(n_samples) < 0.5).astype(int)
    return (Problem.from_captures(captures, y, regularization),
            _every_list_objective(captures, y, regularization))


@pytest.mark.parametrize("seed", range(60))
def test_members_are_every_list_within_epsilon(seed):
    rng = np.random.default_rng(seed)
    n_classes = 3 if seed % 5 == 4 else 2
    captures, y, weights = _random_problem(rng, weighted=seed % 3 == 0, n_classes=n_classes)
    regularization = float(rng.choice([0.0, 0.01, 0.03, 0.08]))
    epsilon = float(rng.choice([0.0, 0.01, 0.04, 0.2]))  # below and above lambda: the support bounds prune
    max_length = None if seed % 4 else int(rng.integers(0, 4))
    lists = _every_list_objective(captures, y, regularization, max_length, weights, n_classes)
    optimum = min(lists.values())
    expected = {p: v for p, v in lists.items() if v <= optimum + epsilon + 1e-9}
    problem = Problem.from_captures(captures, y, regularization, sample_weight=weights, n_classes=n_classes)
    # any upper bound on R* will do: the optimum itself, or the worst list
    upper_bound = optimum if seed % 2 else max(lists.values())
    with np.errstate(all="ignore"):
        enumeration = enumerate_rashomon(problem, epsilon, upper_bound, max_length=max_length)
    members = {m.prefix: m for m in enumeration.members()}
    assert set(members) == set(expected)
    for prefix, member in members.items():
        assert member.objective == pytest.approx(expected[prefix], abs=1e-9)
    assert enumeration.optimum == pytest.approx(optimum, abs=1e-12)
    assert enumeration.count() == len(expected)
    assert enumeration.complete_below == math.inf
    # counting for a smaller epsilon without listing
    half = epsilon / 2
    assert enumeration.count(half) == sum(v <= optimum + half + 1e-9 for v in lists.values())
    assert sum(enumeration.objective_counts().values()) == len(expected)


@pytest.mark.parametrize("seed", range(30))
def test_members_with_required_antecedents_are_every_admissible_list(seed):
    """Required groups (each list holds an antecedent of every group): the members are exactly the
    admissible lists within epsilon of the best admissible one, with the same counts and samples."""
    from optrules.corels.requirements import Requirements

    rng = np.random.default_rng(1000 + seed)
    n_classes = 3 if seed % 5 == 4 else 2
    captures, y, weights = _random_problem(rng, weighted=seed % 3 == 0, n_classes=n_classes)
    m = captures.shape[0]
    groups = [sorted(rng.choice(m, int(rng.integers(1, m)), replace=False).tolist())
              for _ in range(int(rng.integers(1, 3)))]
    requirements = Requirements.from_groups(groups, m)
    regularization = float(rng.choice([0.0, 0.01, 0.03, 0.08]))
    epsilon = float(rng.choice([0.0, 0.01, 0.04, 0.2]))
    max_length = None if seed % 4 else int(rng.integers(requirements.shortest(), 4))
    lists = {p: v for p, v in _every_list_objective(captures, y, regularization, max_length, weights, n_classes).items()
             if requirements.admits(p)}
    if not lists:
        pytest.skip("no admissible list captures something new with every rule")
    optimum = min(lists.values())
    expected = {p: v for p, v in lists.items() if v <= optimum + epsilon + 1e-9}
    problem = Problem.from_captures(captures, y, regularization, sample_weight=weights, n_classes=n_classes)
    upper_bound = optimum if seed % 2 else max(lists.values())
    with np.errstate(all="ignore"):
        enumeration = enumerate_rashomon(problem, epsilon, upper_bound, max_length=max_length,
                                         requirements=requirements)
    members = {m.prefix: m for m in enumeration.members()}
    assert set(members) == set(expected)
    for prefix, member in members.items():
        assert member.objective == pytest.approx(expected[prefix], abs=1e-9)
    assert enumeration.optimum == pytest.approx(optimum, abs=1e-12)
    assert enumeration.count() == len(expected) and enumeration.complete_below == math.inf
    assert enumeration.count(epsilon / 2) == sum(v <= optimum + epsilon / 2 + 1e-9 for v in lists.values())
    assert all(requirements.admits(m.prefix) for m in enumeration.sample(50, np.random.default_rng(seed)))


def test_each_rule_and_the_default_predict_their_majority():
    rng = np.random.default_rng(7)
    captures, y, weights = _random_problem(rng, weighted=True, n_classes=3)
    problem = Problem.from_captures(captures, y, 0.02, sample_weight=weights, n_classes=3)
    lists = _every_list_objective(captures, y, 0.02, None, weights, 3)
    enumeration = enumerate_rashomon(problem, 0.1, max(lists.values()))
    for member in enumeration.members():
        remaining = np.ones(len(y), bool)
        for antecedent, predicted in zip(member.prefix + (None,), member.predictions):
            captured = remaining.copy() if antecedent is None else captures[antecedent] & remaining
            totals = np.bincount(y[captured], weights=weights[captured], minlength=3)
            assert totals[predicted] == totals.max()
            remaining &= ~captured


def test_permutations_share_one_search():
    """k disjoint antecedents: every ordering of every subset is a member, but only the 2^k uncaptured
    sets are searched."""
    k, per = 4, 5
    captures = np.zeros((k, k * per + 3), bool)
    for a in range(k):
        captures[a, a * per:(a + 1) * per] = True
    y = np.zeros(k * per + 3, int)
    y[::2] = 1
    y[-3:] = [0, 0, 1]
    problem = Problem.from_captures(captures, y, 0.001)
    enumeration = enumerate_rashomon(problem, 1.0, 1.0)  # everything is a member
    orderings = sum(math.perm(k, r) for r in range(k + 1))
    assert enumeration.count() == orderings
    assert enumeration.counters["nodes"] == 2 ** k
    assert len(set(m.prefix for m in enumeration.members())) == orderings


@pytest.mark.parametrize("seed", range(12))
def test_a_budget_states_below_which_the_set_is_complete(seed):
    """Stopped by a node budget (with and without required antecedents), every list of objective below
    ``complete_below`` (the unexpanded nodes' reach + b0 + lambda N per rule an extension adds) is in
    the set."""
    from optrules.corels.requirements import Requirements

    problem, lists = _binary_problem(seed=3 + seed, n_antecedents=7, n_samples=60, density=0.35,
                                     regularization=float([0.005, 0.02, 0.05][seed % 3]))
    requirements = Requirements.from_groups([[seed % 7, (seed + 3) % 7]], 7) if seed % 2 else None
    if requirements is not None:
        lists = {p: v for p, v in lists.items() if requirements.admits(p)}
    enumeration = enumerate_rashomon(problem, 0.2, max(lists.values()), max_nodes=[3, 8, 20][seed % 3],
                                     requirements=requirements)
    assert enumeration.status == NODE_BUDGET
    assert enumeration.complete_below < math.inf
    found = {m.prefix for m in enumeration.members()}
    optimum = min(lists.values())
    missing = [v for p, v in lists.items() if p not in found and v <= optimum + 0.2 + 1e-9]
    # everything below the stated objective is there (on these problems some list is missing within
    # lambda of it: a bound one rule too high would fail); what is listed has its true objective
    assert min(missing, default=math.inf) >= enumeration.complete_below - 1e-9
    for member in enumeration.members():
        assert member.objective == pytest.approx(lists[member.prefix], abs=1e-9)


def test_uniform_sampling():
    problem, lists = _binary_problem(seed=11, n_antecedents=4, n_samples=30, density=0.4, regularization=0.01)
    enumeration = enumerate_rashomon(problem, 0.06, max(lists.values()))
    members = {m.prefix for m in enumeration.members()}
    assert len(members) >= 5
    draws = 300 * len(members)
    counts = Counter(m.prefix for m in enumeration.sample(draws, np.random.default_rng(0)))
    assert set(counts) == members
    expected = draws / len(members)
    # each member within 5 standard deviations of its binomial expectation
    sd = math.sqrt(draws * (1 / len(members)) * (1 - 1 / len(members)))
    assert all(abs(c - expected) < 5 * sd for c in counts.values())


def _table(seed=0, n=240):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({
        "age": rng.integers(18, 70, n),
        "group": rng.choice(["a", "b", "c"], n),
        "score": rng.normal(size=n).round(2),
    })
    y = ((X["age"] < 30) ^ (X["group"] == "b") ^ (rng.random(n) < 0.15)).astype(int)
    return X, y


def test_estimator_rashomon_set_members_are_rule_lists_of_the_fit():
    X, y = _table()
    est = RuleListClassifier(regularization=0.02, n_thresholds=4, min_support=0.0, max_card=1).fit(X, y)
    rashomon = est.rashomon_set(0.1, relative=True)  # (119 lists; each predicted here by its own rule list)
    assert rashomon.complete and rashomon.mined_all_rules
    assert rashomon.optimum == pytest.approx(est.certificate_.objective, abs=1e-12)
    members = list(rashomon)
    assert len(members) == rashomon.size == len(rashomon) > 1
    predictions = rashomon.predictions(X, members)
    for member, row in zip(members[:40], predictions):
        predicted = member.predict(X)
        assert np.array_equal(est.classes_[row], predicted)
        # the member's objective recomputed from its own predictions on the training data
        assert (predicted != y).sum() / len(y) + 0.02 * member.n_rules == pytest.approx(member.objective, abs=1e-9)
    # the training predictions (no X) are the same
    assert np.array_equal(rashomon.predictions(None, members), predictions)
    multiplicity = rashomon.multiplicity(X)
    reference = est.predict(X)
    direct = [m.predict(X) for m in members]
    assert multiplicity["discrepancy"] == pytest.approx(max((p != reference).mean() for p in direct))
    changed = np.zeros(len(X), bool)
    for predicted in direct:
        changed |= predicted != reference
    assert multiplicity["ambiguity"] == pytest.approx(changed.mean())
    rates = rashomon.group_rates(X, y, "group")
    at = (X["group"] == "a").to_numpy()
    positive_rates = [(p[at] == 1).mean() for p in direct]
    row = rates[(rates["group"] == "a") & (rates["rate"] == "positive_rate")].iloc[0]
    assert row["min"] == pytest.approx(min(positive_rates)) and row["max"] == pytest.approx(max(positive_rates))
    usage = rashomon.feature_usage()
    for feature, count in zip(usage["feature"], usage["members"]):
        assert count == sum(any(feature in rule for rule in m.rules) for m in members)
    groups = rashomon.permutation_groups()
    assert sum(len(g) for g in groups) == len(members)
    assert all(len({frozenset(m.antecedents) for m in g}) == 1 for g in groups)
    reliance = rashomon.reliance(X, y)
    assert set(reliance["column"]) == set(X.columns)
    assert (reliance["min"] <= reliance["optimal"] + 1e-12).all() and (reliance["optimal"] <= reliance["max"] + 1e-12).all()


def test_estimator_rashomon_set_refuses_bad_input():
    X, y = _table(1)
    est = RuleListClassifier(regularization=0.02, n_thresholds=4)
    with pytest.raises(Exception, match="fitted|fit"):
        est.rashomon_set(0.01)
    est.fit(X, y)
    for bad in (-0.1, float("nan"), float("inf"), "0.1", True):
        with pytest.raises(ValueError, match="epsilon"):
            est.rashomon_set(bad)


@pytest.mark.parametrize("epsilon", [0.0, 0.05, 0.3])
def test_support_bounds_spare_the_rules_requirements_need(epsilon):
    """A required antecedent capturing one sample classifies fewer than N (lambda - epsilon) correctly,
    and a rule that leaves one sample uncaptured leaves less than that to correct: the support bounds
    would prune both, yet removing the first or cutting before the second breaks the requirement."""
    from optrules.corels.requirements import Requirements

    n = 20
    y = np.r_[np.ones(12, int), np.zeros(8, int)]
    captures = np.zeros((3, n), bool)
    captures[0, :19] = True  # leaves only sample 19
    captures[1, 19] = True  # the required one: sample 19 alone
    captures[2, :10] = True
    requirements = Requirements.from_groups([[1]], 3)
    lists = {p: v for p, v in _every_list_objective(captures, y, 0.1).items() if requirements.admits(p)}
    optimum = min(lists.values())
    expected = {p for p, v in lists.items() if v <= optimum + epsilon + 1e-9}
    assert (0, 1) in lists  # the cut-before case is a list of the problem
    problem = Problem.from_captures(captures, y, 0.1)
    enumeration = enumerate_rashomon(problem, epsilon, max(lists.values()), requirements=requirements)
    assert {m.prefix for m in enumeration.members()} == expected
    assert enumeration.optimum == pytest.approx(optimum, abs=1e-12)


@pytest.mark.parametrize("seed", [18, 24, 29, 126, 0, 1, 2, 3])
def test_required_members_whose_cut_breaks_the_requirement(seed):
    """Members whose prefix before a rule misses a required antecedent: Theorem 21's cut (the default
    instead of that rule and what follows) would not be admissible, so the bound must not prune them.
    Seeds 18-126 are problems on which the bound without that guard loses members (found by search)."""
    from optrules.corels.requirements import Requirements

    rng = np.random.default_rng(50000 + seed)
    captures, y, weights = _random_problem(rng, weighted=seed % 2 == 0)
    m = captures.shape[0]
    requirements = Requirements.from_groups([sorted(rng.choice(m, int(rng.integers(1, 3)), replace=False).tolist())], m)
    regularization, epsilon = float(rng.choice([0.05, 0.1, 0.2])), float(rng.choice([0.0, 0.01, 0.03]))
    lists = {p: v for p, v in _every_list_objective(captures, y, regularization, None, weights, 2).items()
             if requirements.admits(p)}
    optimum = min(lists.values())
    problem = Problem.from_captures(captures, y, regularization, sample_weight=weights, n_classes=2)
    with np.errstate(all="ignore"):
        enumeration = enumerate_rashomon(problem, epsilon, max(lists.values()), requirements=requirements)
    assert {m.prefix for m in enumeration.members()} == {p for p, v in lists.items() if v <= optimum + epsilon + 1e-9}


def test_rashomon_set_keeps_the_required_features():
    """With required=['group'] the set is the unconstrained set's lists that use a group feature, up to
    the constrained R* + epsilon (the same antecedents are mined)."""
    X, y = _table(6)
    settings = {"regularization": 0.02, "thresholds": "quantile", "n_thresholds": 4, "max_card": 1, "min_support": 0.0}
    est = RuleListClassifier(**settings, required=["group"]).fit(X, y)
    rashomon = est.rashomon_set(0.02)
    assert rashomon.complete and rashomon.optimum == pytest.approx(est.certificate_.objective, abs=1e-12)
    free = RuleListClassifier(**settings).fit(X, y)
    names = [est.antecedents_.conditions(a) for a in range(len(est.antecedents_))]
    assert names == [free.antecedents_.conditions(a) for a in range(len(free.antecedents_))]
    wider = free.rashomon_set(rashomon.threshold - free.certificate_.objective + 1e-12)
    column_of = {feature.name: feature.column for feature in free.binarizer_.features_}  # ("not group=g" too)
    expected = {m.antecedents for m in wider if any(column_of[c] == "group" for a in m.antecedents for c in names[a])}
    members = {m.antecedents for m in rashomon}
    assert members == expected and len(members) == rashomon.size > 1


def test_a_set_stopped_before_any_list_says_so(tmp_path):
    """With a required feature the root's own list is not admissible: stopped before any expansion, the
    set holds no list, and says so rather than reporting R* = inf or failing inside an analysis."""
    X, y = _table(7)
    settings = {"regularization": 0.02, "n_thresholds": 4, "max_card": 1, "required": ["group"]}
    rashomon = RuleListClassifier(**settings).fit(X, y).rashomon_set(0.01, max_nodes=0)
    assert rashomon.size == 0 and not rashomon.complete and "no rule list reached yet" in repr(rashomon)
    with pytest.raises(ValueError, match="holds no rule list"):
        rashomon.multiplicity(X)
    data = tmp_path / "data.csv"
    X.assign(label=y).to_csv(data, index=False)
    with pytest.raises(SystemExit, match="before reaching any rule list"):
        main(["rashomon", str(data), "--target", "label", "-r", "0.02", "--max-card", "1", "--require", "group",
              "--max-nodes", "0", "--quiet"])


def test_rashomon_set_respects_max_rules():
    X, y = _table(2)
    est = RuleListClassifier(regularization=0.01, n_thresholds=4, max_card=1, max_rules=2, min_support=0.0).fit(X, y)
    rashomon = est.rashomon_set(0.03)
    codes = np.searchsorted(est.classes_, y)
    lists = _every_list_objective(est.antecedents_.capture_matrix(), codes, 0.01, max_length=2)
    optimum = min(lists.values())
    assert rashomon.complete and rashomon.optimum == pytest.approx(optimum, abs=1e-12)
    assert {m.antecedents for m in rashomon} == {p for p, v in lists.items() if v <= optimum + 0.03 + 1e-9}


def test_cli_rashomon(tmp_path, capsys):
    X, y = _table(3)
    data = tmp_path / "data.csv"
    X.assign(label=y).to_csv(data, index=False)
    out, figure = tmp_path / "members.csv", tmp_path / "set.png"
    code = main(["rashomon", str(data), "--target", "label", "-r", "0.02", "--epsilon", "0.2", "--relative",
                 "--max-card", "1", "--group", "group", "-o", str(out), "--plot", str(figure), "--quiet"])
    text = capsys.readouterr().out
    assert code == 0
    assert "certified complete" in text and "rates by group" in text
    assert figure.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    members = pd.read_csv(out)
    size = int(text.split(" rule lists with objective")[0].split()[-1].replace(",", ""))
    assert len(members) == size
    assert members["objective"].min() == pytest.approx(float(text.split("R* + epsilon = ")[1].split()[0]), abs=1e-9)
    with pytest.raises(SystemExit, match="rule lists"):
        main(["rashomon", str(data), "--target", "label", "--model", "ruleset", "--quiet"])
    with pytest.raises(SystemExit, match="png"):
        main(["rashomon", str(data), "--target", "label", "--plot", str(tmp_path / "set.txt"), "--quiet"])
    with pytest.raises(SystemExit, match="no such feature column"):
        main(["rashomon", str(data), "--target", "label", "-r", "0.02", "--max-card", "1", "--group", "nope", "--quiet"])


def test_analyses_in_blocks_equal_the_whole(monkeypatch):
    """Analyses go through the members' predictions a block at a time (bounded memory): with blocks of
    two members they give what one block gives, and reliance equals its definition computed by hand."""
    from optrules.corels import rashomon_analysis as analysis

    X, y = _table(4)
    est = RuleListClassifier(regularization=0.02, n_thresholds=4, min_support=0.0, max_card=1).fit(X, y)
    rashomon = est.rashomon_set(0.1, relative=True)
    members = list(rashomon)
    assert len(members) > 4
    whole = (rashomon.multiplicity(X), rashomon.group_rates(X, y, "group"), rashomon.reliance(X, y))
    groups = rashomon._row_groups(X, members)
    assert groups.size < len(X)  # (rows captured alike are one group)
    monkeypatch.setattr(analysis, "PREDICTION_CELLS", 2 * groups.size)
    assert len(list(analysis.prediction_blocks(groups, members, np.uint8))) == math.ceil(len(members) / 2)
    blocks = (rashomon.multiplicity(X), rashomon.group_rates(X, y, "group"), rashomon.reliance(X, y))
    for key in ("ambiguity", "discrepancy", "members"):
        assert blocks[0][key] == whole[0][key]
    assert np.array_equal(blocks[0]["disagreement"], whole[0]["disagreement"])
    pd.testing.assert_frame_equal(blocks[1], whole[1])
    pd.testing.assert_frame_equal(blocks[2], whole[2])
    keys = X["group"].to_numpy(object).copy()
    keys[:7] = None  # rows without a group value form a group of their own
    rates = rashomon.group_rates(X, y, keys)
    positive = rates[rates["rate"] == "positive_rate"]
    assert positive["rows"].sum() == len(X) and (positive["rows"] == 7).sum() == 1
    assert np.isfinite(positive[["min", "optimal", "max"]].to_numpy()).all()
    rng = np.random.default_rng(0)
    base = [(m.predict(X) != y).mean() for m in members]
    for column in X.columns:
        shuffled = X.assign(**{column: X[column].to_numpy()[rng.permutation(len(X))]})
        increase = [(m.predict(shuffled) != y).mean() - b for m, b in zip(members, base)]
        row = whole[2].set_index("column").loc[column]
        assert (row["min"], row["max"]) == pytest.approx((min(increase), max(increase)), abs=1e-12)


def test_an_analysis_stopped_by_its_budget_covers_a_uniform_sample_and_says_so(monkeypatch):
    """A budget that ends (time, or a stop request) between blocks of members: the analysis returns what it
    read, over the members of the blocks done (a seeded random order of those asked), and its scope says
    so; those members' ranges are what a whole analysis of them gives."""
    from optrules.budget import STOP, Budget
    from optrules.corels import rashomon_analysis as analysis

    X, y = _table(4)
    est = RuleListClassifier(regularization=0.02, n_thresholds=4, min_support=0.0, max_card=1).fit(X, y)
    rashomon = est.rashomon_set(0.2, relative=True)
    members = list(rashomon)
    groups = rashomon._row_groups(X, members)
    monkeypatch.setattr(analysis, "PREDICTION_CELLS", 3 * groups.size)  # three members a block
    asked = []
    cancel = Budget(hook=lambda: asked.append(1) or (STOP if len(asked) >= 2 else None))
    stopped = rashomon.multiplicity(X, members, budget=cancel)
    scope = stopped["scope"]
    assert scope.stopped == "interrupted" and scope.members == 6 and scope.members_total == len(members)
    assert "over 6 of" in scope.note() and "stopped (Ctrl-C or Cancel)" in scope.note()
    read = analysis.analysis_order(members)[:6]
    assert stopped["ambiguity"] == rashomon.multiplicity(X, read)["ambiguity"]
    assert stopped["discrepancy"] == rashomon.multiplicity(X, read)["discrepancy"]
    expired = rashomon.group_rates(X, y, "group", members, time_limit=1e-9)  # only the first block (optimal first)
    assert expired.attrs["scope"].stopped == "time budget" and expired.attrs["scope"].members == 2
    direct = rashomon.group_rates(X, y, "group", analysis.analysis_order(members)[:2])
    pd.testing.assert_frame_equal(expired[["min", "optimal", "max"]], direct[["min", "optimal", "max"]])
    whole = rashomon.multiplicity(X, members)
    assert whole["scope"].exact and whole["scope"].note() == ""


def test_analyses_read_a_named_row_sample_when_time_cannot_pay_for_every_row(monkeypatch):
    """Rows nearly all distinct on the antecedents used, and little time: the analysis reads a seeded
    sample of rows (named in its scope), and its numbers are those of the members on exactly those rows."""
    from optrules.corels import rashomon_analysis as analysis

    X, y = _table(5, n=400)
    est = RuleListClassifier(regularization=0.02, n_thresholds=4, min_support=0.0, max_card=1).fit(X, y)
    rashomon = est.rashomon_set(0.1, relative=True)
    members = list(rashomon)
    monkeypatch.setattr(analysis, "MIN_SAMPLED_ROWS", 50)
    monkeypatch.setattr(analysis, "SECONDS_PER_CELL", 1.0)  # (nothing can be paid for: the smallest sample)
    result = rashomon.multiplicity(X, members, time_limit=60)
    scope = result["scope"]
    assert scope.rows == 50 and scope.rows_total == 400 and scope.members == len(members)
    assert "seeded sample of 50 of 400 rows" in scope.note()
    read = np.isfinite(result["disagreement"])
    assert read.sum() == 50
    reference = est.predict(X[read])
    changed = np.zeros(50, bool)
    for member in members:
        changed |= member.predict(X[read]) != reference
    assert result["ambiguity"] == pytest.approx(changed.mean())


def test_group_rates_pool_the_rarest_values_when_asked():
    X, y = _table(6, n=300)
    keys = np.array(["common"] * 150 + ["often"] * 100 + ["rare1"] * 20 + ["rare2"] * 20 + ["rare3"] * 10, object)
    est = RuleListClassifier(regularization=0.02, n_thresholds=4, min_support=0.0, max_card=1).fit(X, y)
    rashomon = est.rashomon_set(0.2, relative=True)
    rates = rashomon.group_rates(X, y, keys, max_groups=3)
    positive = rates[rates["rate"] == "positive_rate"].set_index("group")
    assert list(positive.index) == ["common", "often", "(other values)"]
    assert positive.loc["(other values)", "rows"] == 50 and rates.attrs["scope"].pooled == 3
    assert "3 rarest group values pooled" in rates.attrs["scope"].note()
    pooled = np.where(np.isin(keys, ["common", "often"]), keys, "(other values)")
    pd.testing.assert_frame_equal(rates, rashomon.group_rates(X, y, pooled), check_like=False, check_exact=False)


def test_plot_rashomon_draws_every_member():
    import matplotlib

    matplotlib.use("Agg")
    from optrules.plots import plot_rashomon

    X, y = _table(5)
    est = RuleListClassifier(regularization=0.02, n_thresholds=4, min_support=0.0, max_card=1).fit(X, y)
    rashomon = est.rashomon_set(0.2, relative=True)
    figure = plot_rashomon(rashomon, X, y, group="group")
    objectives, features, multiplicity, reliance, rates = [ax for ax in figure.axes if ax.get_visible()]
    disagreement = rashomon.multiplicity(X)["disagreement"]
    assert [bar.get_height() for bar in multiplicity.patches] == list(np.histogram(disagreement, np.linspace(0, 1, 21))[0])
    drawn = objectives.patches[0].get_data()
    edges, counts = rashomon.objective_histogram()
    assert counts.sum() == rashomon.size and np.array_equal(drawn.values, counts)
    assert edges[0] <= rashomon.optimum + 1e-12 and edges[-1] >= rashomon.threshold - 1e-12
    objectives_of_members = [m.objective for m in rashomon]
    assert np.array_equal(np.histogram(objectives_of_members, edges)[0], counts)
    usage = rashomon.feature_usage()
    assert sorted(bar.get_width() for bar in features.patches) == pytest.approx(sorted(usage["share"].head(15)))
    assert len(rates.get_yticklabels()) == 3 * X["group"].nunique()
    # without data: objectives, features and multiplicity on the training rows
    assert len([ax for ax in plot_rashomon(rashomon).axes if ax.get_visible()]) == 3


@pytest.mark.parametrize("seed", range(12))
def test_counting_out_of_time_counts_a_smaller_set_exactly(monkeypatch, seed):
    """When counting the whole set would pass the deadline (here: every count above a quarter of the
    allowance asked for gives up), the set counted is the one within a smaller epsilon, exactly, and it
    says so: its epsilon, a time-budget status, and complete only below what it counted."""
    import optrules.corels.rashomon as rashomon
    from optrules.certificate import TIME_BUDGET

    problem, lists = _binary_problem(seed=40 + seed, n_antecedents=6, n_samples=50, density=0.35,
                                     regularization=float([0.005, 0.02][seed % 2]))
    optimum = min(lists.values())
    epsilon = 0.2
    counted = rashomon._count_tables
    gave_up = []

    def slow_counting(graph, allowance, *args):
        if args[-1] is not None and allowance > (optimum + epsilon / 8) * problem.n_samples:
            gave_up.append(allowance)
            raise rashomon._OutOfTime
        return counted(graph, allowance, *args)

    monkeypatch.setattr(rashomon, "_count_tables", slow_counting)
    enumeration = enumerate_rashomon(problem, epsilon, optimum)
    assert gave_up and enumeration.epsilon <= epsilon / 16
    assert enumeration.status == TIME_BUDGET and enumeration.complete_below <= optimum + enumeration.epsilon
    expected = {p for p, v in lists.items() if v <= optimum + enumeration.epsilon + 1e-9}
    assert {m.prefix for m in enumeration.members()} == expected
    assert enumeration.count() == len(expected)


def test_samples_are_distinct_lists_unless_drawn_with_replacement_and_multiplicity_prints_a_summary():
    """``sample(k)`` draws k different lists (all of them when the set holds no more), ``replace=True``
    independent draws; the multiplicity analysis prints a line, not one value per row."""
    X, y = _table()
    est = RuleListClassifier(regularization=0.02, n_thresholds=4, min_support=0.0, max_card=1).fit(X, y)
    rashomon = est.rashomon_set(0.1, relative=True)
    key = lambda member: (member.antecedents, member.predictions)  # noqa: E731
    every = {key(m) for m in rashomon}
    for k, seed in ((3, 0), (10, 1), (len(every) // 2 + 1, 2), (len(every) + 5, 3)):
        drawn = rashomon.sample(k, seed)
        assert len(drawn) == min(k, len(every)) and len({key(m) for m in drawn}) == len(drawn)
        assert {key(m) for m in drawn} <= every
    assert {key(m) for m in rashomon.sample(len(every) + 5, 4)} == every
    with_replacement = rashomon.sample(400, 0, replace=True)
    assert len(with_replacement) == 400 and len({key(m) for m in with_replacement}) < 400  # 400 draws of 119
    multiplicity = rashomon.multiplicity(X)
    text = repr(multiplicity)
    assert text.startswith("Multiplicity(ambiguity ") and len(text) < 250 and str(multiplicity) == text
    assert f"{multiplicity['ambiguity']:.4f}" in text and multiplicity["disagreement"].shape == (len(X),)
