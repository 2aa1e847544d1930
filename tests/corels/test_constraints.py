"""Domain constraints in the certified search: the certificate is optimal over the constrained lists,
checked against exhaustive enumeration of exactly those lists."""

import numpy as np
import pandas as pd
import pytest

from optrules import RuleListClassifier
from optrules.corels.bruteforce import brute_force
from optrules.corels.problem import Problem
from optrules.corels.search import search


def random_problem(rng, n_antecedents=7, n_samples=60):
    captures = rng.random((n_antecedents, n_samples)) < rng.uniform(0.15, 0.6, (n_antecedents, 1))
    y = ((captures[0] & ~captures[1]) ^ (rng.random(n_samples) < 0.2)).astype(np.int64)
    return captures, y


@pytest.mark.parametrize("seed", range(25))
def test_max_length_is_optimal_over_short_lists(seed):
    rng = np.random.default_rng(seed)
    captures, y = random_problem(rng)
    regularization = float(rng.choice([0.0, 0.005, 0.01, 0.03]))
    problem = Problem.from_captures(captures, y, regularization)
    for max_length in (0, 1, 2, 3):
        expected = brute_force(captures, y, regularization, max_length=max_length)
        result = search(problem, max_length=max_length, warm_start=bool(seed % 2))
        assert result.certificate.is_optimal
        assert len(result.solution) <= max_length
        assert result.objective == pytest.approx(expected.objective, abs=1e-12), (seed, max_length)


def test_max_length_checks_its_value():
    rng = np.random.default_rng(0)
    problem = Problem.from_captures(*random_problem(rng), 0.01)
    for bad in (-1, 1.5, True):
        with pytest.raises(ValueError, match="max_length"):
            search(problem, max_length=bad)


@pytest.fixture(scope="module")
def table():
    rng = np.random.default_rng(1)
    n = 400
    X = pd.DataFrame({"a": rng.choice(["p", "q", "r"], n), "b": rng.choice(["s", "t"], n),
                      "c": rng.integers(0, 10, n), "race": rng.choice(["u", "v", "w"], n)})
    y = np.where(((X["a"] == "p") & (X["race"] != "u")) | (X["c"] > 7) ^ (rng.random(n) < 0.1), 1, 0)
    return X, y


def test_forbidden_columns_and_features_are_never_used_and_the_rest_is_optimal(table):
    X, y = table
    for forbidden in (["race"], ["a=p", "race=u"], "c"):
        est = RuleListClassifier(regularization=0.01, max_card=1, n_thresholds=3, forbidden=forbidden,
                                 max_rules=3).fit(X, y)
        banned = [forbidden] if isinstance(forbidden, str) else forbidden
        used = {f for rule in est.rule_list_.rules for f in rule.conditions}
        columns = {est.binarizer_.features_[est.binarizer_.feature_names_.index(f)].column for f in used}
        assert not (used & set(banned)) and not (columns & set(banned))
        assert all(f not in banned and not any(f.startswith(b + "=") or f.startswith(b + "<") or f.startswith(b + ">")
                                               for b in banned if b in X.columns) for f in est.antecedents_.feature_names)
        # optimal over the lists of <= 3 rules on the allowed antecedents: exhaustive enumeration of them
        captures = est.antecedents_.capture_matrix()
        expected = brute_force(captures, y, 0.01, max_length=3)
        assert est.certificate_.is_optimal
        assert est.certificate_.objective == pytest.approx(expected.objective, abs=1e-12)
    with pytest.raises(ValueError, match="neither features nor columns"):
        RuleListClassifier(forbidden=["nope"]).fit(X, y)
    for bad in (-1, 2.5, "3"):
        with pytest.raises(ValueError, match="max_rules must be a whole number"):
            RuleListClassifier(max_rules=bad).fit(X, y)


def test_max_rules_on_the_estimator(table):
    X, y = table
    free = RuleListClassifier(regularization=0.0, max_card=1, n_thresholds=3).fit(X, y)
    short = RuleListClassifier(regularization=0.0, max_card=1, n_thresholds=3, max_rules=1).fit(X, y)
    assert len(free.rule_list_) > 1 and len(short.rule_list_) <= 1 and short.certificate_.is_optimal
    expected = brute_force(short.antecedents_.capture_matrix(), y, 0.0, max_length=1)
    assert short.certificate_.objective == pytest.approx(expected.objective)


def test_command_line_constraints(capsys):
    from optrules.cli import main

    assert main(["fit", "--dataset", "compas", "-r", "0.005", "--forbid", "sex", "--max-rules", "2", "-q"]) == 0
    out = capsys.readouterr().out
    assert "certified optimal" in out and "sex=" not in out and "else if" in out and out.count("then predict") <= 2
    with pytest.raises(SystemExit, match="only for --model rulelist"):
        main(["fit", "--dataset", "compas", "--model", "ruleset", "--max-rules", "2"])
    assert main(["fit", "--dataset", "compas", "-r", "0.01", "--require", "juvenile-crimes", "--max-rules", "3",
                 "-q"]) == 0
    out = capsys.readouterr().out
    rules = [line for line in out.splitlines() if "then predict" in line]
    assert "certified optimal" in out and any("juvenile-crimes" in line for line in rules)
    with pytest.raises(SystemExit, match="only for --model rulelist"):
        main(["fit", "--dataset", "compas", "--model", "frl", "--require", "sex"])


# -- required antecedents ---------------------------------------------------------------------------
from itertools import combinations  # noqa: E402

from optrules.corels.requirements import MAX_REQUIREMENTS, Requirements  # noqa: E402
from optrules.corels.search import Ablation  # noqa: E402
from optrules.data.mine import mine_antecedents  # noqa: E402


def admissible(prefix, groups):
    return all(set(group) & set(prefix) for group in groups)


@pytest.mark.parametrize("seed", range(40))
def test_required_groups_are_met_and_the_list_is_optimal_among_those_that_meet_them(seed):
    rng = np.random.default_rng(100 + seed)
    m, n = int(rng.integers(4, 8)), int(rng.integers(20, 70))
    captures = rng.random((m, n)) < rng.uniform(0.05, 0.7, (m, 1))
    y = ((captures[0] & ~captures[1]) ^ (rng.random(n) < 0.2)).astype(np.int64)
    y[:2] = [0, 1]
    regularization = float(rng.choice([0.0, 0.005, 0.02, 0.05, 0.15]))
    groups = [sorted(rng.choice(m, size=int(rng.integers(1, 3)), replace=False).tolist())
              for _ in range(int(rng.integers(1, 4)))]
    max_length = [None, 2, 3, 4][seed % 4]
    weights = rng.uniform(0.2, 3, n) if seed % 3 == 0 else None
    expected = brute_force(captures, y, regularization, max_length=max_length, sample_weight=weights, required=groups)
    problem = Problem.from_captures(captures, y, regularization, sample_weight=weights)
    # every bound and queue order, with and without the symmetry map: each must respect the requirements
    ablation = Ablation() if seed % 4 else Ablation(lookahead=False, equivalent_points=bool(seed % 8))
    if expected.prefix is None:
        with pytest.raises(ValueError, match="need at least"):
            search(problem, max_length=max_length, required=groups)
        return
    result = search(problem, max_length=max_length, required=groups, warm_start=bool(seed % 2), ablation=ablation,
                    map_type=["prefix", "none"][seed % 2],
                    policy=["lower_bound", "bfs", "objective", "dfs", "curiosity"][seed % 5])
    assert result.certificate.is_optimal
    assert admissible(result.solution, groups)
    assert result.objective == pytest.approx(expected.objective, abs=1e-12), (groups, max_length, regularization)


def test_a_search_stopped_early_still_returns_an_admissible_list_with_a_valid_bound():
    rng = np.random.default_rng(7)
    captures, y = random_problem(rng, n_antecedents=8, n_samples=80)
    groups = [[5], [6, 7]]
    problem = Problem.from_captures(captures, y, 0.0)
    expected = brute_force(captures, y, 0.0, max_length=4, required=groups)
    for max_nodes in (1, 3, 10):
        result = search(problem, max_length=4, required=groups, max_nodes=max_nodes, warm_start=False)
        assert admissible(result.solution, groups)
        assert result.certificate.lower_bound <= expected.objective + 1e-12 <= result.objective + 1e-12


def test_fewest_rules_needed_is_the_smallest_set_cover():
    rng = np.random.default_rng(3)
    for _ in range(30):
        m, r = int(rng.integers(2, 7)), int(rng.integers(1, 5))
        groups = [sorted(rng.choice(m, size=int(rng.integers(1, m + 1)), replace=False).tolist()) for _ in range(r)]
        requirements = Requirements.from_groups(groups, m)
        for covered in range(requirements.complete + 1):
            missing = [j for j in range(r) if not covered >> j & 1]
            fewest = min(k for k in range(m + 1) for chosen in combinations(range(m), k)
                         if all(set(groups[j]) & set(chosen) for j in missing))
            assert requirements.rules_needed[covered] == fewest
        assert admissible(requirements.completed(()), groups)
        assert len(requirements.completed(())) == requirements.shortest()


def test_requirements_that_cannot_be_met_are_refused():
    problem = Problem.from_captures(*random_problem(np.random.default_rng(0)), 0.01)
    with pytest.raises(ValueError, match="cannot be met"):
        search(problem, required=[[0], []])
    with pytest.raises(ValueError, match="at most 16"):
        search(problem, required=[[0]] * (MAX_REQUIREMENTS + 1))
    with pytest.raises(ValueError, match="need at least 2 rules"):
        search(problem, required=[[0], [1]], max_length=1)
    with pytest.raises(ValueError, match="captured"):
        search(problem, required=[[0]], map_type="captured")


@pytest.mark.parametrize("seed", range(6))
def test_conjunctions_of_unbounded_features_escape_the_support_bounds_and_stay_apart(seed):
    rng = np.random.default_rng(seed)
    n, f = 50, 7
    features = rng.random((n, f)) < rng.uniform(0.03, 0.9, f)
    groups = np.array([0, 0, -1, -1, 1, 1, -1])
    unbounded = rng.random(f) < 0.4
    min_support = 0.15
    mined = mine_antecedents(features, [f"f{j}" for j in range(f)], groups, max_card=2, min_support=min_support,
                             unbounded=unbounded)
    expected = set()
    for k in (1, 2):
        for items in combinations(range(f), k):
            if k == 2 and groups[items[0]] >= 0 and groups[items[0]] == groups[items[1]]:
                continue
            count = int(features[:, list(items)].all(axis=1).sum())
            free = bool(unbounded[list(items)].any())
            if (free and count > 0) or (not free and min_support * n <= count <= (1 - min_support) * n and 0 < count < n):
                expected.add((features[:, list(items)].all(axis=1).tobytes(),
                              tuple(j for j in items if unbounded[j])))
    found = [(features[:, list(items)].all(axis=1).tobytes(), tuple(j for j in items if unbounded[j]))
             for items in mined.items]
    assert len(found) == len(set(found))  # kept apart only when they differ
    assert set(found) == expected
    # the bound on antecedents raises one floor for both kinds: the most frequent conjunctions stay
    capped = mine_antecedents(features, [f"f{j}" for j in range(f)], groups, max_card=2, min_support=min_support,
                              unbounded=unbounded, max_antecedents=f + 4)
    pairs = [items for items in capped.items if len(items) == 2]
    assert len(capped) <= f + 4
    if pairs:
        support = {items: int(features[:, list(items)].all(axis=1).sum()) for items in pairs}
        floor = min(support.values())
        dropped = [items for items in combinations(range(f), 2) if items not in support
                   and not (groups[items[0]] >= 0 and groups[items[0]] == groups[items[1]])
                   and (features[:, list(items)].all(axis=1).tobytes(), tuple(j for j in items if unbounded[j]))
                   in expected]
        assert all(int(features[:, list(items)].all(axis=1).sum()) <= floor for items in dropped)


def test_a_required_rare_category_is_used_and_the_list_is_optimal_among_those_using_it(table):
    X, y = table
    X = X[["a", "b", "race"]].copy()  # few enough antecedents for brute force over pairs of features
    X.loc[:2, "b"] = "rare"  # 3 of 400 rows: below the support floor of lambda = 0.02 (8 rows)
    for required in (["b=rare"], ["b=rare", "race"], "a"):
        est = RuleListClassifier(regularization=0.02, max_card=2, negations=False, required=required,
                                 max_rules=3).fit(X, y)
        names = [required] if isinstance(required, str) else required
        column_of = {feature.name: feature.column for feature in est.binarizer_.features_}
        used = [c for rule in est.rule_list_.rules for c in rule.conditions]
        assert all(any(c == name or column_of[c] == name for c in used) for name in names), (required, used)
        groups = [[a for a in range(len(est.antecedents_))
                   if any(c == name or column_of[c] == name for c in est.antecedents_.conditions(a))] for name in names]
        # the conjunctions of the rare category were mined although they are rarer than lambda
        assert any(len(est.antecedents_.items[a]) == 2 for a in groups[0]) or required == "a"
        expected = brute_force(est.antecedents_.capture_matrix(), y, 0.02, max_length=3, required=groups)
        assert est.certificate_.is_optimal
        assert est.certificate_.objective == pytest.approx(expected.objective, abs=1e-12)
    free = RuleListClassifier(regularization=0.02, max_card=2, negations=False, max_rules=3).fit(X, y)
    assert "b=rare" not in free.binarizer_.feature_names_  # without the requirement: below the floor, no feature


def test_required_names_are_checked(table):
    X, y = table
    with pytest.raises(ValueError, match="neither features nor columns"):
        RuleListClassifier(required=["nope"]).fit(X, y)
    with pytest.raises(ValueError, match="also forbidden"):
        RuleListClassifier(required=["race=u"], forbidden=["race"]).fit(X, y)
    with pytest.raises(ValueError, match="max_rules=1"):
        RuleListClassifier(required=["a", "b"], max_rules=1, max_card=1).fit(X, y)


def test_a_required_column_without_features_is_explained(table):
    X, y = table
    X = X.assign(row_id=[f"r{i}" for i in range(len(X))])  # an identifier: dropped by the binarizer
    with pytest.raises(ValueError, match="'row_id' has no feature.*distinct values"):
        RuleListClassifier(required=["row_id"]).fit(X, y)
