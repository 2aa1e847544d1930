"""Rule sets on the ladder of features (:func:`optrules.ladder.feature_rungs`): the features the boosted
reference chose, then every feature from the set found. Each certified rung's optimum is the master MIP's
over every clause of its features (enumerated), the model is the better set, and the certificate's
sentence says over which features it is proven."""

import numpy as np
import pandas as pd
import pytest
from test_colgen import full_mip_optimum, planted_instance

from optrules import RuleSetClassifier
from optrules.certificate import OPTIMAL
from optrules.rulesets.colgen import column_generation


def _table(rng, n):
    """A column that decides the target, a numeric one that helps, and two the reference has little use for."""
    X = pd.DataFrame({
        "colour": rng.choice(["red", "green", "blue", "grey"], n),
        "age": rng.integers(18, 80, n).astype(float),
        "noise": rng.choice(["p", "q", "r"], n),
        "shape": rng.choice(["round", "square"], n),
    })
    signal = (X.colour == "red") * 1.0 + (X.age > 50) * 0.7 + rng.normal(0, 0.5, n)
    return X, (signal > 0.6).astype(int).to_numpy()


def _objective_and_mistakes(features, target, clauses) -> tuple[int, int]:
    """The rule sets' objective (a missed positive costs 1, a negative 1 for each clause covering it) and
    the rows misclassified."""
    covering = np.zeros(len(target), np.int64)
    for clause in clauses:
        covering += features[:, list(clause)].all(axis=1)
    objective = int((target & (covering == 0)).sum() + covering[~target].sum())
    return objective, int(((covering > 0) != target).sum())


@pytest.mark.parametrize("seed", range(8))
def test_each_certified_rung_has_the_enumerated_optimum_and_the_model_is_the_better_set(seed):
    assert _check_the_ladder(seed), "the reference chose every feature"


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(8, 508))
def test_the_ladder_of_features_on_500_more_problems(seed):
    _check_the_ladder(seed)


def _check_the_ladder(seed) -> bool:
    """One random table's fit: each certified rung's optimum is the enumerated MIP's, the model never worse
    than the proven rung, the sentence the one of the rung the set is proven over. False when there is
    no ladder (the reference chose every feature, which is then checked)."""
    rng = np.random.default_rng(700 + seed)
    X, y = _table(rng, int(rng.integers(50, 90)))
    complexity, max_card = float(rng.choice([4, 6, 9])), int(rng.integers(1, 3))
    model = RuleSetClassifier(complexity=complexity, max_card=max_card, time_limit=60, pricing_time_limit=20).fit(X, y)
    features = model.binarizer_.transform(X).astype(bool)
    target = y == model.classes_[model.rule_set_.describes]
    names = list(model.binarizer_.feature_names_)
    clauses = [[names.index(name) for name in clause] for clause in model.rule_set_.clauses]
    objective, mistakes = _objective_and_mistakes(features, target, clauses)
    assert model.certificate_.objective == objective and model.certificate_.counters["training_mistakes"] == mistakes
    if model.ladder_ is None:
        assert np.all(model.binarizer_.reference_features_)
        return False
    first, larger = model.ladder_
    assert first["searched"] and first["status"] == OPTIMAL
    assert set(first["positions"].tolist()) < set(larger["positions"].tolist()) == set(range(len(names)))
    optimum = full_mip_optimum(features[:, first["positions"]], target, complexity, max_card)[0]
    assert first["objective"] == pytest.approx(optimum)
    everything = full_mip_optimum(features, target, complexity, max_card)[0]
    assert everything <= optimum + 1e-9
    assert model.certificate_.objective <= first["objective"] + 1e-9  # never worse than the proven rung
    assert model.certificate_.lower_bound <= everything + 1e-9
    statement = model.certificate_.statement
    if larger["searched"] and larger["status"] == OPTIMAL:
        assert model.certificate_.objective == pytest.approx(everything)
        assert statement.startswith(f"certified optimal over {len(names)} binary features")
    elif model.certificate_.objective < first["objective"]:
        assert statement.startswith(f"better than every rule set over {len(first['positions'])} features the "
                                    "reference chose")
    else:
        assert statement.startswith(f"certified optimal over {len(first['positions'])} features the reference chose")
    assert str(model.certificate_).startswith(statement)
    return True


def test_a_numeric_table_has_one_space():
    """Every feature of a numeric table is a threshold the reference chose: one rung, no ladder."""
    rng = np.random.default_rng(3)
    X = pd.DataFrame({"a": rng.normal(size=120), "b": rng.normal(size=120)})
    y = (X.a + X.b > 0).astype(int).to_numpy()
    model = RuleSetClassifier(complexity=6, time_limit=30).fit(X, y)
    assert model.ladder_ is None and "proven" not in model.certificate_.counters


@pytest.mark.parametrize("seed", range(10))
def test_initial_clauses_are_columns_the_set_may_keep(seed):
    """A set given as the master's first columns is never beaten by a worse one, even when generation
    prices with a beam of one clause over one feature (no exact pricing to find better clauses)."""
    features, y, complexity, max_degree, rng = planted_instance(2000 + seed)
    found = column_generation(features, y, complexity, 0.0, max_degree, time_limit=30, pricing_time_limit=10)
    again = column_generation(features, y, complexity, 0.0, max_degree, time_limit=30, exact=False, beam_width=1,
                              max_pricing_features=1, max_pricing_samples=2,
                              initial_clauses=found.solution)
    assert again.objective <= found.objective + 1e-9


@pytest.mark.parametrize("max_nodes", [0, 40, 400])
def test_the_node_budget_is_the_whole_fits_across_the_rungs(max_nodes, monkeypatch):
    """``max_nodes`` bounds the exact pricing of the whole fit, both rungs together: each rung's column
    generation spends from what the rungs below left, and the nodes reported are every rung's."""
    from optrules.rulesets import colgen

    spent = []
    solve = colgen.ColumnGeneration.solve

    def counted(self):
        result = solve(self)
        spent.append(result.certificate.counters["pricing_nodes"])
        return result

    monkeypatch.setattr(colgen.ColumnGeneration, "solve", counted)
    rng = np.random.default_rng(9)
    X, y = _table(rng, 90)
    model = RuleSetClassifier(complexity=9, max_card=2, time_limit=None, pricing_time_limit=None,
                              max_nodes=max_nodes).fit(X, y)
    assert model.ladder_ is not None and len(spent) == sum(row["searched"] for row in model.ladder_) == 2
    assert sum(spent) <= max_nodes and model.certificate_.counters["pricing_nodes"] == sum(spent)
