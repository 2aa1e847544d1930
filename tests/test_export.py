"""Exports run: the SQL in SQLite and DuckDB, the Python module by exec, on random tables of every
column kind, and must give ``model.predict`` / ``rule_index`` / ``predict_proba`` row for row."""

from __future__ import annotations

import csv
import io
import sqlite3

import numpy as np
import pandas as pd
import pytest

from optrules.data.binarize import Binarizer
from optrules.models import FallingRuleList, Rule, RuleList, RuleSet

duckdb = pytest.importorskip("duckdb")

MARKERS = ["?", "NA", "", "n/a"]


def random_table(rng, n: int) -> pd.DataFrame:
    def holes(values, share=0.1):
        values = pd.Series(values, dtype=object)
        values[rng.random(n) < share] = np.nan
        return values

    days = rng.integers(15000, 15400, n)
    stamps = pd.to_datetime(days, unit="D")
    dates = [s.strftime("%Y-%m-%d") if rng.random() < 0.7 else s.strftime("%Y-%m-%d %H:%M")
             for s in stamps + pd.to_timedelta(rng.integers(0, 24 * 60, n) * (rng.random(n) < 0.3), unit="min")]
    numbers_as_text = [f"{x:.1f}" if rng.random() < 0.85 else MARKERS[rng.integers(len(MARKERS))]
                       for x in rng.normal(10, 3, n)]
    return pd.DataFrame({
        "score": pd.Series(np.where(rng.random(n) < 0.1, np.nan, rng.normal(0, 1, n).round(2))),
        "count": rng.integers(0, 20, n),
        "colour": holes(rng.choice(["red", "green", "blue", "it's"], n)),
        "level": numbers_as_text,
        "seen": holes(dates),
        "member": rng.random(n) < 0.4,
        "flag": rng.integers(0, 2, n),
        "grade": rng.choice([1, 2, 3], n),
    })


def random_models(rng, binarizer, n_models: int):
    names = binarizer.feature_names_
    classes = ["no", "yes"]
    for _ in range(n_models):
        def conditions():
            return tuple(rng.choice(names, rng.integers(1, 4), replace=False))

        k = int(rng.integers(0, 5))
        rules = [Rule(conditions(), int(rng.integers(2)), int(rng.integers(1, 50)), 0) for _ in range(k)]
        rules = [Rule(r.conditions, r.prediction, r.n_captured, int(rng.integers(0, r.n_captured + 1))) for r in rules]
        default = Rule((), int(rng.integers(2)), 30, int(rng.integers(0, 31)))
        yield RuleList(rules, default, classes, binarizer)
        probabilities = sorted(rng.random(k + 1), reverse=True)
        yield FallingRuleList(rules, default, probabilities, 0.5, classes, binarizer, describes=int(rng.integers(2)))
        clauses = [conditions() for _ in range(int(rng.integers(0, 4)))]
        for cnf in (False, True):
            yield RuleSet(clauses, cnf, tuple(rng.random(2)), classes, binarizer, describes=int(rng.integers(2)))


def sql_rows(frame: pd.DataFrame, query: str, dialect: str) -> pd.DataFrame:
    if dialect == "sqlite":
        with sqlite3.connect(":memory:") as connection:
            frame.to_sql("data", connection, index=False)
            return pd.read_sql_query(query, connection)
    connection = duckdb.connect()
    connection.register("frame", frame)
    connection.execute("CREATE TABLE data AS SELECT * FROM frame")
    return connection.execute(query).df()


def python_module(model) -> dict:
    namespace: dict = {}
    exec(compile(model.to_python(), "<export>", "exec"), namespace)
    return namespace


@pytest.mark.parametrize("seed", [*range(3), *(pytest.param(s, marks=pytest.mark.slow) for s in range(3, 6))])
def test_exports_agree_with_the_model(seed):
    rng = np.random.default_rng(seed)
    frame = random_table(rng, 300)
    binarizer = Binarizer(missing="category", negations=True, categorical=["grade"], bins={"count": [5, 12]},
                          n_thresholds=4, identifiers="keep").fit(frame)
    assert {"level"} <= set(binarizer.numeric_text_columns_) and binarizer.date_columns_ == ["seen"]
    csv_text = frame.to_csv(index=False)
    reread = pd.read_csv(io.StringIO(csv_text))
    text_rows = list(csv.DictReader(io.StringIO(csv_text)))
    for model in random_models(rng, binarizer, 6):
        expected, fired = model.predict(frame), model.rule_index(frame)
        for dialect in ("sqlite", "duckdb"):
            got = sql_rows(frame, model.to_sql(dialect=dialect), dialect)
            assert len(got) == len(frame)
            assert got["rule"].astype(int).tolist() == fired.tolist(), (dialect, model.to_sql(dialect=dialect))
            assert got["prediction"].tolist() == expected.tolist()
            assert np.allclose(got["probability"].astype(float), model.predict_proba(frame)[:, 1])
        module = python_module(model)
        assert [module["predict"](row) for row in frame.to_dict("records")] == expected.tolist()
        assert [module["rule_index"](row) for row in frame.to_dict("records")] == fired.tolist()
        # rows as a CSV reader gives them (all text) agree with the model on the same CSV read by pandas
        assert [module["predict"](row) for row in text_rows] == model.predict(reread).tolist()
        explained = module["explain"](frame.iloc[0].to_dict())
        assert explained["condition"] == model.get_rules()["rule"][fired[0]]


def test_missing_values_are_refused_not_guessed():
    rng = np.random.default_rng(7)
    train = pd.DataFrame({"level": rng.normal(size=200), "other": rng.normal(size=200)})
    binarizer = Binarizer(n_thresholds=3, missing="error").fit(train)
    threshold = next(f.name for f in binarizer.features_ if f.column == "level" and f.kind == "gt")
    model = RuleList([Rule((threshold,), 1, 10, 8)], Rule((), 0, 10, 2), ["no", "yes"], binarizer)
    data = pd.DataFrame({"level": rng.normal(size=50), "other": rng.normal(size=50)})
    data.loc[[3, 9], "level"] = np.nan
    data.loc[[4], "other"] = np.nan  # a column the model does not use
    for dialect in ("sqlite", "duckdb"):
        got = sql_rows(data, model.to_sql(dialect=dialect), dialect)
        assert got["prediction"][[3, 9]].isna().all() and got["rule"][[3, 9]].isna().all()
        kept = data.drop(index=[3, 9])
        assert got.drop(index=[3, 9])["prediction"].tolist() == model.predict(kept.fillna(0.0)).tolist()
    module = python_module(model)
    with pytest.raises(ValueError, match="'level' is missing"):
        module["predict"](data.iloc[3].to_dict())
    assert module["predict"](data.iloc[4].to_dict()) == model.predict(data.iloc[[4]].fillna(0.0))[0]
    with pytest.raises(ValueError, match="no column"):
        module["predict"]({})


def test_dates_read_as_the_binarizer_reads_them():
    from optrules.data.binarize import dates_in_text

    texts = pd.Series(["2013-08-14", "2013/08/14", "08/14/2013", "14/08/2013", "2013-08-14 06:30", "2013-08-14T06:30:15",
                       "2012-02-29", "03/04/2013", "2013-13-01", "not a date"])
    days = dates_in_text(texts.iloc[:8])
    binarizer = Binarizer(identifiers="keep").fit(pd.DataFrame({"d": texts.iloc[:8]}))
    module = python_module(RuleList([Rule((binarizer.feature_names_[0],), 1, 1, 1)], Rule((), 0, 1, 0), [0, 1],
                                    binarizer))
    read = [module["_date"](t, "d") for t in texts]
    assert read[:8] == days.tolist()
    assert read[8:] == [None, None]


def test_sql_names_are_quoted_and_dialects_checked():
    frame = pd.DataFrame({'odd "name"': ["a'b", "c", "a'b", "c"], "x y": [1.0, 2.0, 3.0, 4.0]})
    binarizer = Binarizer(n_thresholds=2, identifiers="keep").fit(frame)
    name = next(n for n in binarizer.feature_names_ if n.startswith('odd'))
    model = RuleList([Rule((name,), 1, 2, 2)], Rule((), 0, 2, 0), [0, 1], binarizer)
    for dialect in ("sqlite", "duckdb"):
        assert sql_rows(frame, model.to_sql(dialect=dialect), dialect)["prediction"].tolist() == model.predict(frame).tolist()
    with pytest.raises(ValueError, match="dialect"):
        model.to_sql(dialect="oracle")


def test_model_on_a_boolean_matrix_exports_its_feature_columns():
    rng = np.random.default_rng(3)
    X = rng.random((100, 4)) < 0.5
    names = ["a", "b", "c", "d"]
    model = RuleSet([("a", "b"), ("c",)], cnf=False, classes=[0, 1], feature_names=names)
    frame = pd.DataFrame(X.astype(int), columns=names)
    assert sql_rows(frame, model.to_sql(), "sqlite")["prediction"].tolist() == model.predict(X).tolist()
    module = python_module(model)
    assert [module["predict"](r) for r in frame.to_dict("records")] == model.predict(X).tolist()


def test_estimators_explain_and_export_what_they_learnt():
    from optrules import FallingRuleListClassifier, RuleListClassifier, RuleSetClassifier
    from optrules.data.datasets import load_compas

    compas = load_compas()
    X, y = compas.X.iloc[:1500], compas.y[:1500]
    estimators = [RuleListClassifier(regularization=0.02, time_limit=20), RuleSetClassifier(complexity=6, time_limit=20),
                  RuleSetClassifier(complexity=6, cnf=True, time_limit=20),
                  FallingRuleListClassifier(w=2.0, C=0.01, max_card=1)]
    for estimator in estimators:
        estimator.fit(X, y)
        rules = estimator.get_rules()
        predicted = estimator.predict(X)
        explained = estimator.explain(X)
        assert explained["prediction"].tolist() == predicted.tolist()
        assert (explained.index == X.index).all()
        # training support of each rule = the training rows it decides; accuracy = their share it predicts right
        counts = explained["rule"].value_counts()
        for k, row in rules.iterrows():
            assert row["support"] == counts.get(k, 0), (estimator, k)
            decided = explained["rule"] == k
            if decided.any():
                assert row["accuracy"] == pytest.approx(np.mean(y[decided.to_numpy()] == row["prediction"]))
        assert "<table>" in estimator.rule_list_._repr_html_()
        got = sql_rows(X, estimator.to_sql(), "sqlite")
        assert got["prediction"].tolist() == predicted.tolist()
        module = python_module(estimator)
        assert [module["predict"](r) for r in X.iloc[:200].to_dict("records")] == predicted[:200].tolist()


def test_notebook_views_of_a_model_and_its_certificate():
    import matplotlib

    matplotlib.use("Agg")
    from optrules import RuleListClassifier
    from optrules.data.datasets import load_compas

    compas = load_compas()
    est = RuleListClassifier(regularization=0.01).fit(compas.X, compas.y)
    html = est.certificate_._repr_html_()
    assert "certified optimal" in html and f"{est.certificate_.objective:.9f}" in html and "prefixes expanded" in html
    figure = est.rule_list_.plot()
    bars = figure.axes[0].patches
    assert len(bars) == len(est.rule_list_) + 1
    assert [b.get_width() for b in bars] == est.get_rules()["support"].astype(float).tolist()
    labels = [t.get_text() for t in figure.axes[0].get_yticklabels()]
    assert f"0: {est.get_rules()['rule'][0]}" in labels and bars[0].get_y() > bars[-1].get_y()  # first rule on top
