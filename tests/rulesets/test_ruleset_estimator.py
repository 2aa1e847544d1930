"""The rule sets' estimator (RuleSetClassifier): certified fits against the enumerated MIP under any
settings (CNF, class weights, the class described), semantics, saving, bad input, node budgets."""

import itertools
import time

import numpy as np
import pandas as pd
import pytest
from conftest import shared_path
from test_colgen import full_mip_optimum

from optrules import RuleSetClassifier, load_model
from optrules.data import bitset
from optrules.models import RuleSet


def _node_budget_fit(X, y, max_nodes, exact=True):
    # (quantile thresholds: the larger space, whose pricing the budget cuts)
    model = RuleSetClassifier(complexity=12, time_limit=None, pricing_time_limit=None, max_nodes=max_nodes,
                              exact_pricing=exact, thresholds="quantile").fit(X, y)
    c = model.certificate_
    return (model.rule_set_.clauses, c.status, c.objective, c.lower_bound,
            c.counters["pricing_nodes"], c.counters["iterations"])


@pytest.mark.parametrize("exact, max_nodes", [(True, 3000), pytest.param("ip", 20, marks=pytest.mark.slow)])
def test_a_node_budget_gives_the_same_fit_on_a_slow_machine(monkeypatch, exact, max_nodes):
    """Bounded by pricing work alone (no time limits), a fit spends exactly its budget and returns the
    same set and certificate when every clock reading takes a quarter of a second (a loaded machine);
    unbounded, this problem's pricing searches ~20M clauses (so the budget binds)."""

    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 8))
    y = (((X[:, 0] > 0.3) & (X[:, 1] < 0.5)) | (X[:, 2] + 0.5 * rng.normal(size=300) > 1.2)).astype(int)
    first = _node_budget_fit(X, y, max_nodes, exact)
    # (the branch-and-bound stops at the node; each call of HiGHS's IP counts at least one and may
    # overrun by the nodes it has open)
    assert first[1] == "node budget" and max_nodes <= first[4] <= (max_nodes if exact is True else 2 * max_nodes)
    clock = [time.perf_counter()]

    def slow_clock():
        clock[0] += 0.25
        return clock[0]

    monkeypatch.setattr(time, "perf_counter", slow_clock)
    assert _node_budget_fit(X, y, max_nodes, exact) == first


def tictactoe():
    frame = pd.read_csv(shared_path("data", "tictactoe", "tictactoe.csv"), header=None)
    X = frame.iloc[:, :9].astype(str)
    X.columns = [f"p{i}" for i in range(9)]
    return X, frame[9]


def test_tictactoe_eight_lines():
    X, y = tictactoe()
    model = RuleSetClassifier(complexity=40, negations=False).fit(X, y)
    assert model.score(X, y) == 1.0
    assert model.certificate_.is_optimal
    lines = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]
    expected = {frozenset(f"p{i}=x" for i in line) for line in lines}
    assert {frozenset(c) for c in model.rule_set_.clauses} == expected
    assert model.rule_set_.complexity == 32


def test_cnf_and_json(rng):
    X = pd.DataFrame({"a": rng.choice(["u", "v", "w"], 200), "b": rng.integers(0, 10, 200)})
    y = np.where((X["a"] != "u") & (X["b"] > 3), "yes", "no")
    model = RuleSetClassifier(complexity=10, cnf=True, time_limit=20).fit(X, y)
    assert model.score(X, y) == 1.0
    assert model.rule_set_.cnf and "AND" in str(model.rule_set_)
    again = load_model(model.rule_set_.to_json())
    assert isinstance(again, RuleSet) and again == model.rule_set_
    np.testing.assert_array_equal(again.predict(X), model.predict(X))
    proba = model.predict_proba(X)
    assert np.allclose(proba.sum(axis=1), 1)


def test_rule_set_semantics():
    frame = pd.DataFrame({"a": [1, 1, 0, 0], "b": [1, 0, 1, 0]}).astype(bool)
    dnf = RuleSet([("a", "b")], cnf=False, feature_names=["a", "b"])
    cnf = RuleSet([("a", "b")], cnf=True, feature_names=["a", "b"])
    np.testing.assert_array_equal(dnf.predict(frame), [1, 0, 0, 0])
    np.testing.assert_array_equal(cnf.predict(frame), [1, 1, 1, 0])


def test_bad_input():
    X = pd.DataFrame({"a": ["x", "y", "x", "y"]})
    with pytest.raises(ValueError, match="complexity"):
        RuleSetClassifier(complexity=-1).fit(X, [0, 1, 0, 1])
    with pytest.raises(ValueError, match="max_degree"):
        RuleSetClassifier(max_degree=0).fit(X, [0, 1, 0, 1])
    with pytest.raises(ValueError, match="single class"):
        RuleSetClassifier().fit(X, [1, 1, 1, 1])
    with pytest.raises(ValueError, match="class_weight"):
        RuleSetClassifier(class_weight="odd").fit(X, [0, 1, 0, 1])


def test_penalty_and_class_weights(rng):
    X = pd.DataFrame({"a": rng.integers(0, 10, 300), "b": rng.choice(["p", "q", "r"], 300)})
    signal = (X["a"] > 6) | (X["b"] == "p")
    y = np.where(rng.random(300) < 0.1, ~signal, signal).astype(int)
    free = RuleSetClassifier(complexity=30, time_limit=20).fit(X, y)
    priced = RuleSetClassifier(complexity=30, penalty=5.0, time_limit=20).fit(X, y)
    assert priced.rule_set_.complexity <= free.rule_set_.complexity
    # weighting positives heavily never lowers recall on the training data
    recall = lambda m: np.mean(m.predict(X)[y == 1] == 1)  # noqa: E731
    heavy = RuleSetClassifier(complexity=30, class_weight={1: 5.0, 0: 1.0}, time_limit=20).fit(X, y)
    assert recall(heavy) >= recall(free) - 1e-12
    assert heavy.certificate_.lower_bound <= heavy.certificate_.objective


def _cnf_cost(features, y, chosen, w_pos, w_neg):
    """A CNF (clauses of feature indices) scored as the DNF learner scores its dual: each negative it
    accepts costs w_neg, each positive w_pos for every clause it violates."""
    satisfied = [features[:, list(c)].any(axis=1) for c in chosen]
    accepts = np.logical_and.reduce(satisfied) if satisfied else np.ones(len(y), bool)
    return w_neg * float((accepts & ~y).sum()) + w_pos * float(sum((~s & y).sum() for s in satisfied))


def _cnf_optimum(features, y, complexity, max_degree, w_pos, w_neg):
    clauses = [c for d in range(1, max_degree + 1) for c in itertools.combinations(range(features.shape[1]), d)]
    return min(_cnf_cost(features, y, chosen, w_pos, w_neg)
               for k in range(int(complexity // 2) + 1) for chosen in itertools.combinations(clauses, k)
               if sum(1 + len(c) for c in chosen) <= complexity)


def test_cnf_with_class_weights_against_enumeration():
    """cnf=True learns the DNF of the other class over negated features, so the two classes' weights
    must trade places: with unequal weights the certificate's objective is the learned CNF's own cost
    under the user's weights, never below the enumerated optimum, and equal to it when certified."""
    certified = 0
    for seed in range(8):
        rng = np.random.default_rng(5100 + seed)
        n = int(rng.integers(20, 50))
        X = pd.DataFrame({f"c{k}": rng.choice(["a", "b", "c"], n) for k in range(2)})
        y = (((X["c0"] == "a") | (X["c1"] == "b")) ^ (rng.random(n) < 0.15)).to_numpy()
        weights = {False: 1.0, True: float(rng.choice([2.0, 3.0]))}
        if seed % 2:
            weights = {False: weights[True], True: 1.0}
        model = RuleSetClassifier(complexity=4, max_degree=2, cnf=True, class_weight=weights, negations=False,
                                  min_support=0.0, time_limit=30).fit(X, y)
        features = model.binarizer_.transform(X).astype(bool)
        names = list(model.binarizer_.feature_names_)
        chosen = [tuple(names.index(condition) for condition in clause) for clause in model.rule_set_.clauses]
        optimum = _cnf_optimum(features, y, 4, 2, weights[True], weights[False])
        cert = model.certificate_
        assert cert.objective == pytest.approx(_cnf_cost(features, y, chosen, weights[True], weights[False]))
        assert cert.lower_bound <= optimum + 1e-6 <= cert.objective + 2e-6
        if cert.is_optimal:
            certified += 1
            assert cert.objective == pytest.approx(optimum)
    assert certified >= 5


def _random_settings_case(seed):
    """A small mixed table and settings drawn from what users combine: the bound (below 1, 1 to 2, small,
    none), the class described, CNF, penalty, class and sample weights, and budgets of time and of
    pricing work small enough to stop generation."""
    rng = np.random.default_rng(7700 + seed)
    n = int(rng.integers(8, 60))
    X = pd.DataFrame({"x0": np.round(rng.random(n), 1), "x1": np.round(rng.random(n), 1)})
    if rng.random() < 0.6:
        X["c"] = rng.choice(list("pqr"), n)
    score = X["x0"].to_numpy() + (0.5 * (X["c"] == "p").to_numpy() if "c" in X else 0.0)
    y = np.where(score + rng.normal(0, 0.3, n) > 0.7, "yes", "no")
    y[:2] = ["yes", "no"]
    time_limit = [None, 10.0, 0.3][int(rng.integers(0, 3))]
    params = dict(complexity=[0.0, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, None][int(rng.integers(0, 8))],
                  max_degree=int(rng.integers(1, 3)), cnf=bool(rng.random() < 0.5),
                  pos_label=[None, "yes", "no"][int(rng.integers(0, 3))], penalty=float(rng.choice([0.0, 0.0, 0.5])),
                  class_weight=[None, "balanced", {"yes": 2, "no": 1}][int(rng.integers(0, 3))],
                  n_thresholds=int(rng.integers(1, 3)), time_limit=time_limit,
                  pricing_time_limit=None if time_limit is None else 2.0,
                  max_nodes=[None, 20, 2000][int(rng.integers(0, 3))])
    sample_weight = None if rng.random() < 0.5 else rng.integers(1, 4, n).astype(float)
    return X, y, params, sample_weight


@pytest.mark.parametrize("seed", range(40))
def test_any_settings_against_the_enumerated_mip(seed):
    """Whatever the settings and budgets, the certificate's bound is at most the optimum over every
    clause of the binarized table (enumerated, the problem the settings pose: a CNF's negated, its
    weights swapped), the set is no better than it and fits the bound, `optimal` means equal, and the
    mistakes counted are the predictions'. (A bound from 1 to 2 once certified the empty set while the
    empty clause, complexity 1, was cheaper.)"""
    X, y, params, sample_weight = _random_settings_case(seed)
    model = RuleSetClassifier(**params).fit(X, y, sample_weight=sample_weight)
    features = np.asarray(model.binarizer_.transform(X)).astype(bool)
    y01 = (y == model.classes_[1]).astype(int)
    describes = model.rule_set_.describes
    target, weights = y01 == describes, model._class_weights(y01)
    positive_weight, negative_weight = weights[describes], weights[1 - describes]
    if params["cnf"]:
        features, target = ~features, ~target
        positive_weight, negative_weight = negative_weight, positive_weight
    costs = np.where(target, positive_weight, negative_weight) * (1.0 if sample_weight is None else sample_weight)
    complexity = np.inf if params["complexity"] is None else params["complexity"]
    optimum, _ = full_mip_optimum(features, target, complexity, params["max_degree"], params["penalty"],
                                  weights=costs)
    cert = model.certificate_
    assert cert.lower_bound <= optimum + 1e-6 <= cert.objective + 2e-6
    assert model.rule_set_.complexity <= complexity
    if cert.is_optimal:
        assert cert.objective == pytest.approx(optimum)
    assert cert.counters["training_mistakes"] == int((model.predict(X) != y).sum())


def test_pos_label_chooses_the_class_the_set_describes():
    """pos_label picks the class the DNF describes: its optimum is the enumerated optimum for that class,
    the set predicts that class where it holds, predict_proba's columns still follow classes_, and the
    choice survives JSON; an unknown label is refused."""
    from optrules.rulesets.selection import _objective

    rng = np.random.default_rng(77)
    n = 60
    X = pd.DataFrame({"a": rng.choice(["x", "y", "z"], n), "b": rng.choice(["p", "q"], n)})
    y = np.where(((X["a"] == "x") & (X["b"] == "p")) ^ (rng.random(n) < 0.1), "yes", "no")
    optima = []
    for label, index in (("no", 0), ("yes", 1)):
        model = RuleSetClassifier(complexity=5, max_degree=2, pos_label=label, negations=False, min_support=0.0,
                                  time_limit=30).fit(X, y)
        rule_set = model.rule_set_
        assert rule_set.describes == index and list(model.classes_) == ["no", "yes"]
        features = model.binarizer_.transform(X).astype(bool)
        optimum, _ = full_mip_optimum(features, y == label, 5.0, 2)
        names = list(model.binarizer_.feature_names_)
        chosen = [tuple(names.index(c) for c in clause) for clause in rule_set.clauses]
        cert = model.certificate_  # the objective is the set's own cost as a description of `label`
        assert cert.objective == pytest.approx(_objective(bitset.pack_columns(features), y == label, chosen,
                                                          np.ones(len(y)), 0.0))
        assert cert.lower_bound <= optimum + 1e-6 <= cert.objective + 1e-6
        if cert.is_optimal:
            assert cert.objective == pytest.approx(optimum)
        optima.append(optimum)
        accepted = rule_set.decision(X)
        assert (model.predict(X) == np.where(accepted, label, "no" if label == "yes" else "yes")).all()
        proba = model.predict_proba(X)
        assert np.allclose(proba.sum(axis=1), 1.0)
        assert np.allclose(proba[:, index], np.where(accepted, rule_set.rates[1], rule_set.rates[0]))
        assert rule_set.rates[1] == pytest.approx((y[accepted] == label).mean())
        again = load_model(rule_set.to_json())
        assert again.describes == index and (again.predict(X) == model.predict(X)).all()
    assert optima[0] != optima[1]  # the two classes are two problems
    with pytest.raises(ValueError, match="pos_label"):
        RuleSetClassifier(pos_label="maybe", time_limit=5).fit(X, y)


@pytest.mark.parametrize("cnf", [False, True])
@pytest.mark.parametrize("pos_label", ["yes", "no"])
@pytest.mark.parametrize("complexity", [0, 0.5, 1, 1.5])
def test_a_bound_below_two_is_the_base_rate(cnf, pos_label, complexity):
    """No clause with a condition fits a complexity bound below 2: below 1 the empty set (a DNF that never
    holds, a CNF that always does) is the only rule set; from 1 on the empty clause (complexity 1: a DNF
    that always holds, a CNF that never does) fits too, and the better of the two is certified at once
    with its own cost as the bound. Whichever class the set describes, a bound of 1 is the majority."""
    rng = np.random.default_rng(3)
    X = pd.DataFrame({"a": rng.random(90), "b": rng.choice(list("pq"), 90)})
    y = np.where(rng.random(90) < 0.3, "yes", "no")
    model = RuleSetClassifier(complexity=complexity, cnf=cnf, pos_label=pos_label).fit(X, y)
    other = "no" if pos_label == "yes" else "yes"
    empty_set = pos_label if cnf else other  # what the empty set predicts everywhere
    candidates = {empty_set: 0} if complexity < 1 else {"yes": 1, "no": 1, empty_set: 0}
    best = min(candidates, key=lambda label: int((y != label).sum()))
    assert model.certificate_.is_optimal
    assert (model.predict(X) == best).all()
    assert model.rule_set_.complexity == candidates[best]
    mistakes = int((y != best).sum())
    assert model.certificate_.objective == model.certificate_.lower_bound == mistakes
    assert model.certificate_.counters["training_mistakes"] == mistakes
    if complexity >= 1:
        assert best == "no"  # the majority


def test_a_fit_left_little_time_by_its_preparation_still_prices_once(monkeypatch):
    """A million-row table's 30 s fit had ~1.6 s when its column generation began, less than the shares
    kept for the MIP and the certificate: it returned the empty set without pricing. Now, with no clause
    yet, the time kept for the MIP and the certificate goes to a first pricing (the preparation is slowed
    here instead)."""

    from optrules import RuleSetClassifier
    from optrules.rulesets import colgen

    real = colgen.conflict_bound
    monkeypatch.setattr(colgen, "conflict_bound", lambda *args: (time.sleep(2.5), real(*args))[1])
    rng = np.random.default_rng(0)
    X = rng.random((600, 8)) < 0.5
    y = (X[:, 0] & X[:, 1]).astype(int)
    start = time.process_time()  # (the processor time of this process: what a busy machine does not add to)
    model = RuleSetClassifier(time_limit=4.0, complexity=10).fit(X, y)
    assert time.process_time() - start < 8.0
    assert len(model.rule_set_.clauses) >= 1 and model.score(X, y) == 1.0


@pytest.mark.parametrize("cnf", [False, True])
def test_branch_totals_from_the_packed_features_are_the_rule_sets_own(cnf):
    """The training totals of each branch come from the packed features the fit read (a CNF's negated),
    not from binarizing the table again: they are what the rule set itself says of the rows."""
    rng = np.random.default_rng(31 if cnf else 30)
    n = 400
    X = pd.DataFrame({"a": rng.normal(size=n), "b": rng.choice(["x", "y", "z"], n), "c": rng.integers(0, 5, n)})
    y = (((X["a"] > 0) & (X["b"] != "z")) | (X["c"] == 3)) ^ (rng.random(n) < 0.1)
    weights = rng.uniform(0.5, 2.0, n)
    model = RuleSetClassifier(complexity=12, cnf=cnf, time_limit=20).fit(X, y.astype(int), sample_weight=weights)
    fired = model.rule_set_.rule_index(X)
    expected = np.zeros((len(model.rule_set_.clauses) + 1, 2))
    np.add.at(expected, (fired, y.astype(int).to_numpy()), weights)
    np.testing.assert_allclose(np.array(model.rule_set_.branch_totals), expected, rtol=1e-12)
    assert len(model.rule_set_.clauses) >= 1


def test_the_fit_text_says_why_a_gap_as_large_as_the_objective_says_nothing():
    from optrules.rulesets.family import FAMILY

    rng = np.random.default_rng(5)
    X = pd.DataFrame(rng.normal(size=(300, 6)), columns=[f"x{j}" for j in range(6)])
    y = ((X.x0 + X.x1 * X.x2 + rng.normal(scale=0.8, size=300)) > 0).astype(int)
    # one pricing node: no proof of the master LP, so no bound above 0 (no two rows alike: no conflicts)
    starved = RuleSetClassifier(complexity=15, time_limit=None, pricing_time_limit=None, max_nodes=1,
                                thresholds="quantile").fit(X, y)
    assert starved.certificate_.lower_bound == 0 and starved.certificate_.objective > 0
    assert not starved.certificate_.counters["lp_solved"]
    assert "no lower bound yet" in FAMILY.fit_text(starved)
    # a solved LP worth 0 is a bound of 0, not one left unproven
    starved.certificate_.counters["lp_solved"] = True
    assert "no lower bound yet" not in FAMILY.fit_text(starved)
    proven = RuleSetClassifier(complexity=5, time_limit=None, pricing_time_limit=None).fit(X, y)
    assert proven.certificate_.lower_bound > 0
    assert "no lower bound yet" not in FAMILY.fit_text(proven)
