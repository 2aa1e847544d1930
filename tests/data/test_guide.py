"""Thresholds chosen by the reference ensemble (``thresholds="boosted"``): the features are the
ensemble's splits, the certified optimum over them equals exhaustive search, missing values are data, and
counts past 2^21 samples stay exact."""

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import HistGradientBoostingClassifier

from optrules import FallingRuleListClassifier, RuleListClassifier, RuleSetClassifier
from optrules.corels.bruteforce import brute_force
from optrules.data import guide
from optrules.data.binarize import Binarizer, MissingValuesWarning

#: the guided space, spelled out (the estimators' defaults)
GUIDED = dict(thresholds="boosted", missing="category")
GUIDED_LIST = dict(GUIDED, max_card="auto", negations=True)


def _table(rng, n=300, missing=0.0):
    X = pd.DataFrame({
        "age": rng.integers(18, 80, n).astype(float),
        "income": rng.normal(50, 15, n).round(1),
        "colour": rng.choice(["red", "green", "blue", "grey"], n),
        "smoker": rng.integers(0, 2, n),
    })
    score = (X.age > 45) * 1.0 + (X.colour == "red") * 0.8 - (X.income > 60) * 0.7 + rng.normal(0, 0.6, n)
    y = (score > 0.6).astype(int).to_numpy()
    if missing:
        for column in ("age", "colour"):
            X.loc[rng.random(n) < missing, column] = np.nan
    return X, y


def _design_column(X, column):
    values = X[column.column]
    if column.kind == "number":
        return values.to_numpy(dtype=float)
    if column.kind == "missing":
        return values.isna().to_numpy(dtype=float)
    held = values == (1 if column.kind == "binary" else column.value)
    return np.where(values.isna(), np.nan if column.kind == "binary" else 0.0, held.to_numpy(dtype=float))


def _reference_splits(design, y, min_leaf, trees=guide.REFERENCE_TREES):
    """The splits of an ensemble fitted as the binarizer's reference is, by hand, in one fit."""
    model = HistGradientBoostingClassifier(learning_rate=guide.REFERENCE_LEARNING_RATE, max_iter=trees,
                                           max_depth=guide.REFERENCE_DEPTH, min_samples_leaf=min_leaf,
                                           l2_regularization=0.0, early_stopping=False,
                                           random_state=guide.REFERENCE_SEED).fit(design, y)
    return guide.ensemble_splits(model)


@pytest.mark.parametrize("seed", range(4))
def test_threshold_features_split_the_rows_as_the_ensemble_does(seed):
    rng = np.random.default_rng(seed)
    X, y = _table(rng, missing=0.1 * (seed % 2))
    binarizer = Binarizer(thresholds="boosted", min_category_count=5, missing="category").fit(X, y)
    design = np.column_stack([X.age, X.income])
    columns = binarizer.reference_columns_
    splits = _reference_splits(np.column_stack([_design_column(X, c) for c in columns]), y, 5)
    for name, values in (("age", design[:, 0]), ("income", design[:, 1])):
        j = next(k for k, c in enumerate(columns) if c.column == name and c.kind == "number")
        # each split's partition of the training rows is a feature's, and each feature is a split's
        expected = {tuple(np.flatnonzero(values <= t)) for t in splits.get(j, [])}
        expected = {rows for rows in expected if 0 < len(rows) < np.count_nonzero(~np.isnan(values))}
        features = [f for f in binarizer.features_ if f.column == name and f.kind == "le"]
        found = {tuple(np.flatnonzero(values <= f.value)) for f in features}
        assert found == expected
        assert all(f.value in set(values) for f in features)  # named by a value the column takes
    # categorical columns keep every value seen min_category_count times (stumps miss interactions)
    counts = X.colour.value_counts()
    assert {f.value for f in binarizer.features_ if f.column == "colour" and f.kind == "equals"} == set(
        counts.index[counts >= 5])


def test_a_numeric_column_the_reference_never_splits_gets_no_threshold():
    rng = np.random.default_rng(3)
    X, y = _table(rng)
    X["noise"] = rng.normal(size=len(X))
    X["label_copy"] = y * 10.0
    binarizer = Binarizer(thresholds="boosted").fit(X, y)
    assert [f.name for f in binarizer.features_ if f.column == "label_copy"] == ["label_copy<=0", "label_copy>0"]
    assert not [f for f in binarizer.features_ if f.column == "noise"]  # the label column explains all
    quantile = Binarizer(thresholds="quantile").fit(X)
    assert len(binarizer.features_) < len(quantile.features_)
    assert binarizer.reference_.train_accuracy == 1.0


def test_a_sampled_reference_scales_its_leaf_floor(monkeypatch):
    """A table taller than the reference's sample: the rows a leaf needs (a share of the table, such as
    a falling list's class support) are that share of the sample, and the sample splits as the whole
    table does (the floor once exceeded the sample: a 3.3M-row table got no threshold)."""
    rng = np.random.default_rng(11)
    x = rng.normal(size=4000)
    y = (x + 0.3 * rng.normal(size=4000) > 0).astype(int)
    X = pd.DataFrame({"x": x})
    whole = Binarizer(thresholds="boosted", min_category_count=1200).fit(X, y)
    monkeypatch.setattr(guide, "REFERENCE_ROWS", 1000)
    sampled = Binarizer(thresholds="boosted", min_category_count=1200).fit(X, y)
    assert sampled.reference_.rows == 1000
    assert [f.name for f in whole.features_] and len(sampled.features_) >= len(whole.features_) // 2
    assert sampled.reference_.train_accuracy > 0.8


def test_a_replicated_table_gets_the_reference_of_the_table(monkeypatch):
    """The reference fits a design's distinct rows weighted by their copies, its leaf floor scaled to
    them: a table copied 30 times gives the table's splits and accuracy, fitted on the table's rows."""
    rng = np.random.default_rng(5)
    X, y = _table(rng)
    fitted_rows = []
    real_fit = HistGradientBoostingClassifier.fit

    def counting_fit(self, design, target, sample_weight=None):
        fitted_rows.append(design.shape[0])
        return real_fit(self, design, target, sample_weight=sample_weight)

    monkeypatch.setattr(HistGradientBoostingClassifier, "fit", counting_fit)
    once = Binarizer(thresholds="boosted", min_category_count=20).fit(X, y)
    copies = Binarizer(thresholds="boosted", min_category_count=600).fit(pd.concat([X] * 30, ignore_index=True),
                                                                         np.tile(y, 30))
    assert copies.feature_names_ == once.feature_names_
    assert copies.reference_.splits == once.reference_.splits
    assert copies.reference_.train_accuracy == pytest.approx(once.reference_.train_accuracy)
    assert copies.reference_.rows == 30 * len(X)
    assert set(fitted_rows) == {len(X)}


def test_boosted_thresholds_need_a_target():
    X, _ = _table(np.random.default_rng(0))
    with pytest.raises(ValueError, match="pass y"):
        Binarizer(thresholds="boosted").fit(X)
    with pytest.raises(ValueError, match="thresholds must be one of"):
        Binarizer(thresholds="deciles").fit(X)


def test_the_reference_is_deterministic_and_weighted():
    rng = np.random.default_rng(7)
    X, y = _table(rng)
    first = Binarizer(thresholds="boosted").fit(X, y).feature_names_
    assert Binarizer(thresholds="boosted").fit(X, y).feature_names_ == first
    # a row of weight 2 counts as that row twice, for the reference too
    weights = rng.integers(1, 3, len(X)).astype(float)
    repeated = X.loc[X.index.repeat(weights.astype(int))].reset_index(drop=True)
    assert (Binarizer(thresholds="boosted").fit(X, y, sample_weight=weights).feature_names_
            == Binarizer(thresholds="boosted").fit(repeated, np.repeat(y, weights.astype(int))).feature_names_)


def test_a_stop_after_the_first_fit_keeps_its_splits_and_none_gives_the_splits_of_one_fit(monkeypatch):
    rng = np.random.default_rng(3)
    X, y = _table(rng)
    design = np.column_stack([X.age, X.income])
    asked = []
    # each fit run where it is called: the stop is asked between the two fits only
    monkeypatch.setattr(guide, "_finished", lambda fit, should_stop: fit() or True)
    _, whole = guide.fit_reference(design, y, None, 5, should_stop=lambda: asked.append(1) and False)
    assert len(asked) == 1 and not whole.stopped and whole.trees == guide.REFERENCE_TREES
    assert whole.splits == _reference_splits(design, y, 5)
    _, first = guide.fit_reference(design, y, None, 5, should_stop=lambda: True)
    assert first.stopped and first.trees == guide.FIRST_ROUNDS
    assert first.splits == _reference_splits(design, y, 5, guide.FIRST_ROUNDS) != whole.splits


@pytest.mark.parametrize("stopped_in", ["first fit", "second fit"])
def test_a_stop_during_a_reference_fit_does_not_wait_for_it(monkeypatch, stopped_in):
    """scikit-learn's fit cannot be interrupted: a stop during it returns at once, with no reference
    (quantile thresholds) during the first fit and with the first fit's splits during the second, while the
    fit goes on in its thread (here one that waits until the test lets it go)."""
    import threading

    from sklearn.ensemble import HistGradientBoostingClassifier

    rng = np.random.default_rng(3)
    X, y = _table(rng)
    design = np.column_stack([X.age, X.income])
    original = HistGradientBoostingClassifier.fit
    released, waiting, finished = threading.Event(), threading.Event(), threading.Event()
    holding = guide.FIRST_ROUNDS if stopped_in == "first fit" else guide.REFERENCE_TREES

    def fit(model, *arguments, **options):
        if model.max_iter == holding:
            waiting.set()
            released.wait(30)
        result = original(model, *arguments, **options)
        if model.max_iter == holding:
            finished.set()
        return result

    monkeypatch.setattr(HistGradientBoostingClassifier, "fit", fit)
    try:
        model, reference = guide.fit_reference(design, y, None, 5, should_stop=waiting.is_set)
        assert not finished.is_set()  # returned while the fit it stopped still waits
    finally:
        released.set()
    if stopped_in == "first fit":
        assert model is None and not reference.fitted and "first fit" in reference.skipped
        assert reference.describe().startswith("numeric thresholds at quantiles")
    else:
        assert reference.stopped and reference.trees == guide.FIRST_ROUNDS
        assert reference.splits == _reference_splits(design, y, 5, guide.FIRST_ROUNDS)
        assert model.n_iter_ == guide.FIRST_ROUNDS  # the first fit's model, not the one the second grows


def test_the_time_left_sizes_the_reference_sample():
    """A time budget cuts the reference's sample to one of the fixed sizes its share of the time left pays
    for, or skips it; without a limit, or with time enough, it reads the rows it always reads."""
    cost = guide.SECONDS_PER_CELL / guide.REFERENCE_TIME_SHARE  # seconds left a row of one column needs
    assert guide.reference_size(1_000_000, 50, None) == guide.REFERENCE_ROWS
    assert guide.reference_size(45_211, 50, 60.0) == 45_211
    assert guide.reference_size(1_000_000, 50, cost * 50 * 120_000) == 100_000
    assert guide.reference_size(1_000_000, 50, cost * 50 * 2_000) == 0
    assert guide.reference_size(20_000, 50, cost * 50 * 15_000) == 10_000
    assert guide.reference_size(2_000, 50, cost * 50 * 2_500) == 2_000  # (all rows, when they are paid for)


# seed 5 (three classes, negations) brute-forces ~900,000 lists (~15 s): slow; seed 2 has three classes too
@pytest.mark.parametrize("seed", [*range(5), pytest.param(5, marks=pytest.mark.slow)])
def test_the_default_rule_list_is_the_optimum_over_its_space(seed):
    """max_card="auto" climbs the ladder (the reference's literals, single literals, pairs): the certified
    objective is the optimum over the antecedents it names (brute force's, every list of up to R/lambda
    rules: an optimal list has no more, Theorem 4 of the CORELS paper; or a plain search's over the same
    space), and no worse than the singles' optimum once their rung certified."""
    rng = np.random.default_rng(100 + seed)
    X, y = _table(rng, n=80, missing=0.1)
    X = X[["age", "colour"]]
    if seed % 3 == 2:
        y = np.where(rng.random(len(y)) < 0.3, 2, y)  # three classes
    regularization = 0.15  # lists of up to R/lambda <= 3 rules: brute force stays small
    with pytest.warns(MissingValuesWarning, match="'age'"):
        model = RuleListClassifier(regularization=regularization, min_support=0.0 if seed % 2 else None,
                                   **dict(GUIDED_LIST, negations=bool(seed % 2))).fit(X, y)
    assert model.certificate_.is_optimal
    assert model.max_card_ in (1, 2)
    assert all(len(items) <= model.max_card_ for items in model.antecedents_.items)
    # the space it names has the optimum a plain search over it certifies, and the singles' optimum is
    # brute force's over every single literal (lists of up to R/lambda rules: Theorem 4)
    options = dict(GUIDED_LIST, negations=bool(seed % 2), regularization=regularization, min_support=model.min_support)
    codes = np.searchsorted(model.classes_, y)
    plain = RuleListClassifier(**dict(options, max_card=model.max_card_)).fit(X, y)
    assert plain.certificate_.is_optimal
    if len(plain.antecedents_) == len(model.antecedents_):
        assert model.certificate_.objective == pytest.approx(plain.certificate_.objective, abs=1e-12)
    else:  # the rung of the literals the reference chose
        named = brute_force(model.antecedents_.capture_matrix(), codes, regularization,
                            max_length=int(model.certificate_.objective / regularization + 1e-9),
                            n_classes=len(model.classes_))
        assert model.certificate_.objective == pytest.approx(named.objective, abs=1e-12)
    singles = RuleListClassifier(**dict(options, max_card=1)).fit(X, y)
    expected = brute_force(singles.antecedents_.capture_matrix(), codes, regularization,
                           max_length=int(singles.certificate_.objective / regularization + 1e-9),
                           n_classes=len(model.classes_))
    assert singles.certificate_.objective == pytest.approx(expected.objective, abs=1e-12)
    if any(row["rung"].endswith(" single literals") and row.get("status") == "optimal" for row in model.ladder_):
        assert model.certificate_.objective <= expected.objective + 1e-12
    assert "single literals" in str(model.certificate_) or "conjunctions of up to 2" in str(model.certificate_)
    assert model.certificate_.counters["reference_train_accuracy"] == model.binarizer_.reference_.train_accuracy


@pytest.mark.parametrize("seed", range(4))
def test_a_refined_fit_starts_from_the_boosted_optimum_and_certifies_the_larger_space(seed):
    """refine=True: the boosted space's certified list starts a search over quantile and reference
    thresholds together; its certified objective is brute force's over that larger space, and no worse
    than the boosted space's optimum (every boosted threshold is in the larger space)."""
    rng = np.random.default_rng(200 + seed)
    X, y = _table(rng, n=90)
    X = X[["age", "income"]]
    regularization = 0.12  # lists of up to R/lambda rules, few antecedents: brute force stays small
    options = dict(regularization=regularization, max_card=1, n_thresholds=3, min_support=0.0)
    guided = RuleListClassifier(**options).fit(X, y)
    refined = RuleListClassifier(**options, refine=True).fit(X, y)
    assert guided.certificate_.is_optimal and refined.certificate_.is_optimal
    assert set(guided.binarizer_.feature_names_) <= set(refined.binarizer_.feature_names_)
    assert refined.binarizer_.thresholds == "both" and "quantiles and thresholds from a boosted" in str(
        refined.certificate_)
    expected = brute_force(refined.antecedents_.capture_matrix(), y, regularization,
                           max_length=int(guided.certificate_.objective / regularization + 1e-9))
    assert refined.certificate_.objective == pytest.approx(expected.objective, abs=1e-12)
    assert refined.certificate_.objective <= guided.certificate_.objective + 1e-12
    note = refined.certificate_.counters["guided_space"]
    assert f"{guided.certificate_.objective:.9f}" in note and "did not start" not in note
    with pytest.raises(ValueError, match="starts from the boosted space"):
        RuleListClassifier(**options, refine=True, thresholds="quantile").fit(X, y)


def test_missing_values_are_read_by_default_and_exported_the_same(tmp_path):
    import importlib.util
    import sqlite3

    rng = np.random.default_rng(11)
    X, y = _table(rng, n=400, missing=0.2)
    for estimator in (RuleListClassifier(**GUIDED_LIST), FallingRuleListClassifier(**GUIDED),
                      RuleSetClassifier(time_limit=10, **GUIDED)):
        with pytest.warns(MissingValuesWarning):
            model = estimator.fit(X, y)
        predicted = model.predict(X)
        path = tmp_path / f"{type(estimator).__name__}.py"
        path.write_text(model.to_python())
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        rows = X.astype(object).where(X.notna(), None).to_dict("records")
        assert [module.predict(row) for row in rows] == list(predicted)
        connection = sqlite3.connect(":memory:")
        X.to_sql("data", connection, index=False)
        from_sql = [row[0] for row in connection.execute(model.to_sql())]
        assert from_sql == [int(p) for p in predicted]
    with pytest.raises(ValueError, match="missing value"):
        RuleListClassifier(**dict(GUIDED_LIST, missing="error")).fit(X, y)


def test_the_reference_score_beside_the_model():
    rng = np.random.default_rng(5)
    X, y = _table(rng, n=500)
    model = RuleListClassifier(**GUIDED_LIST).fit(X[:350], y[:350])
    score = model.reference_score(X[350:], y[350:])
    assert 0.5 < score <= 1.0
    assert model.reference_score(X[:350], y[:350]) == pytest.approx(model.binarizer_.reference_.train_accuracy)
    quantile = RuleListClassifier(thresholds="quantile", max_card=1).fit(X[:350], y[:350])
    assert "quantiles" in quantile.certificate_.counters["space"]
    with pytest.raises(ValueError, match="no reference ensemble"):
        quantile.reference_score(X[350:], y[350:])


def test_large_weights_fit_as_unit_weights():
    """Weights of 100,000 a row (12M in all) fit the list of unit weights (counts past 2^21 of plain
    samples are tested on the counting kernel itself: test_bitset)."""
    rng = np.random.default_rng(2)
    X, y = _table(rng, n=120)
    weights = np.full(len(y), 100_000.0)  # 12M in all: a rule of 21 rows counts past 2^21
    model = RuleListClassifier(regularization=0.02, max_card=1, **GUIDED).fit(X, y, sample_weight=weights)
    assert model.certificate_.is_optimal and model.certificate_.objective > 0
    unweighted = RuleListClassifier(regularization=0.02, max_card=1, **GUIDED).fit(X, y)
    assert model.certificate_.objective == pytest.approx(unweighted.certificate_.objective, abs=1e-12)
