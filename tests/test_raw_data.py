"""A user's own raw table: identifiers, numbers stored as text, unseen categories, and budgets that hold
for every family (checked on statuses and counters, never on timing)."""

import os
import signal
import threading
import warnings

import numpy as np
import pandas as pd
import pytest

from optrules import FallingRuleListClassifier, RuleListClassifier, RuleSetClassifier
from optrules.budget import Budget
from optrules.data.binarize import Binarizer
from optrules.data.synthetic import make_mixed_table
from optrules.data.tables import read_table

FAMILIES = {
    "rulelist": lambda **kw: RuleListClassifier(regularization=0.002, **kw),
    "frl": lambda **kw: FallingRuleListClassifier(w=7, C=1e-6, min_class_support=0.01, **kw),
    "ruleset": lambda **kw: RuleSetClassifier(complexity=40, **kw),
}


@pytest.fixture(scope="module")
def mixed():
    frame = make_mixed_table(n_rows=1500, seed=3)
    return frame.drop(columns="outcome"), frame["outcome"]


def test_generated_yes_no_columns():
    frame = make_mixed_table(n_rows=400, n_numeric=3, n_text=2, n_binary=30, seed=2)
    binary = [c for c in frame.columns if c.startswith("b")]
    assert len(binary) == 30 and all(set(frame[c].dropna()) == {"yes", "no"} for c in binary)
    rates = [(frame[c] == "yes").mean() for c in binary]
    assert min(rates) < 0.2 and max(rates) > 0.3  # each column at its own rate
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        names = Binarizer(missing="category", negations=False).fit(frame.drop(columns="outcome")).feature_names_
    complete = [c for c in binary if frame[c].notna().all()]
    assert complete and all({n for n in names if n.startswith(f"{c}=")} == {f"{c}=no", f"{c}=yes"} for c in complete)


def titanic_like(n=400, seed=0):
    rng = np.random.default_rng(seed)
    sex = rng.choice(["male", "female"], n)
    klass = rng.choice([1, 2, 3], n)
    survived = ((sex == "female") ^ (rng.random(n) < 0.15)).astype(int)
    return pd.DataFrame({
        "PassengerId": np.arange(1, n + 1),
        "Name": [f"Passenger {i}, Mr. {rng.choice(['A', 'B', 'C'])}" for i in range(n)],
        "Ticket": [f"{rng.choice(['A/5 ', 'PC ', 'STON/O2. ', ''])}{rng.integers(1000, 400000)}" for _ in range(n)],
        "Sex": sex, "Pclass": klass, "Age": rng.integers(1, 80, n).astype(float),
    }), survived


# -- the binarizer on raw columns ------------------------------------------------------------------------
def test_identifier_columns_are_left_out_with_a_warning():
    X, y = titanic_like()
    with pytest.warns(UserWarning, match="row identifiers: 'PassengerId'.*'Name'.*'Ticket'"):
        model = RuleListClassifier(regularization=0.01).fit(X, y)
    used = " ".join(" ".join(rule.conditions) for rule in model.rule_list_.rules)
    assert "Sex=" in used and not any(c in used for c in ("PassengerId", "Name", "Ticket"))
    assert set(model.binarizer_.dropped_columns_) == {"PassengerId", "Name", "Ticket"}
    assert model.predict(X).shape == (len(X),)  # the left-out columns are still accepted at predict time
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        kept = Binarizer(identifiers="keep").fit(X)
    assert any(name.startswith("Ticket=") for name in kept.feature_names_)


def test_integer_columns_that_are_not_identifiers_stay():
    rng = np.random.default_rng(1)
    ages = pd.DataFrame({"age": rng.permutation(30) + 20})  # a small table: distinct ages are not ids
    incomes = pd.DataFrame({"income": rng.permutation(500) * 37 + 1000})  # unique, neither consecutive nor named
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert Binarizer().fit(ages).dropped_columns_ == {}
        assert Binarizer().fit(incomes).dropped_columns_ == {}
        assert Binarizer().fit(incomes.rename(columns={"income": "paid"})).dropped_columns_ == {}  # not "...Id"
    with pytest.warns(UserWarning, match="customer_id"):
        Binarizer().fit(pd.DataFrame({"customer_id": rng.permutation(500) * 37, "x": rng.random(500)}))


def test_the_first_column_of_a_headerless_file_of_distinct_integers_is_an_identifier(tmp_path):
    # UCI's wdbc.csv has no header and starts with patient numbers (569 distinct, 8,670 to 911,320,502)
    rng = np.random.default_rng(3)
    n = 300
    path = tmp_path / "records.csv"
    pd.DataFrame({"number": rng.choice(900_000_000 - 8_000, n, replace=False) + 8_000,  # (not an array of 900M)
                  "measure": rng.normal(size=n).round(3)}).to_csv(path, header=False, index=False)
    frame = read_table(str(path), header=False)  # columns x0 and x1
    assert list(frame.columns) == ["x0", "x1"]
    for named in (frame, frame.set_axis([0, 1], axis=1)):  # ours, and pandas's read_csv(header=None)
        with pytest.warns(UserWarning, match=f"row identifiers: '{named.columns[0]}'"):
            dropped = Binarizer().fit(named).dropped_columns_
        first = str(named.columns[0])
        assert list(dropped) == [first] and "without a header" in dropped[first]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert Binarizer().fit(frame[["x1", "x0"]].set_axis(["x0", "x1"], axis=1)).dropped_columns_ == {}  # not first
        assert Binarizer().fit(frame.iloc[:60]).dropped_columns_ == {}  # a small table: they say little
        assert Binarizer().fit(pd.concat([frame["x0"] % 97, frame["x1"]], axis=1)).dropped_columns_ == {}  # repeats
        assert Binarizer().fit(frame.set_axis(["number", "measure"], axis=1)).dropped_columns_ == {}  # named


def test_numbers_stored_as_text_are_numeric():
    frame = pd.DataFrame({"a": np.array([str(v) for v in np.linspace(0, 1, 40)], dtype=object),
                          "b": ["1.5", "?", "2.5", "3"] * 10})
    b = Binarizer(missing="category").fit(frame)
    assert b.numeric_text_columns_ == ["a", "b"]
    assert all(f.kind in ("le", "gt", "missing") for f in b.features_)
    assert "b=missing" in b.feature_names_
    Z = b.transform_frame(frame)
    np.testing.assert_array_equal(Z["b=missing"], frame["b"] == "?")
    with pytest.raises(ValueError, match="'b' has 10 missing"):
        Binarizer(missing="error").fit(frame)


def test_dates_are_compared_as_dates():
    rng = np.random.default_rng(4)
    days = pd.Timestamp("2013-01-01") + pd.to_timedelta(rng.integers(0, 700, 300), unit="D")
    frame = pd.DataFrame({"offense": days.strftime("%Y-%m-%d"), "month": rng.choice(["jan", "may", "dec"], 300)})
    frame.loc[3, "offense"] = None
    b = Binarizer(missing="category").fit(frame)
    assert b.date_columns_ == ["offense"] and "month=may" in b.feature_names_  # month names are no dates
    name = next(n for n in b.feature_names_ if n.startswith("offense<="))
    cut = pd.Timestamp(name.split("<=")[1])
    expected = (pd.to_datetime(frame["offense"]) <= cut).to_numpy()
    np.testing.assert_array_equal(b.transform_frame(frame)[name], expected)
    restored = Binarizer.from_dict(b.to_dict())
    np.testing.assert_array_equal(restored.transform(frame), b.transform(frame))


def test_rule_sets_skip_rare_categories_of_raw_text():
    X, y = titanic_like(1000)
    X["first"] = [f"name{i % 400}" for i in range(1000)]  # 400 first names, 2-3 rows each: not an identifier
    model = RuleSetClassifier(complexity=10, time_limit=20).fit(X, y)
    assert not any(n.startswith("first=") for n in model.binarizer_.feature_names_)
    every = RuleSetClassifier(complexity=10, min_support=0, time_limit=2).fit(X, y)
    assert sum(n.startswith("first=") for n in every.binarizer_.feature_names_) == 400


def test_object_column_of_floats_returns_with_defaults():
    # scikit-learn's check_dtype_object: 40 floats stored as objects were 40 categories each, and the
    # search over their conjunctions did not return
    rng = np.random.default_rng(0)
    X = rng.random((40, 10)).astype(object)
    y = (X[:, 0] > 0.5).astype(int)
    model = RuleListClassifier().fit(X, y)
    assert model.certificate_.is_optimal
    assert all(f.kind in ("le", "gt") for f in model.binarizer_.features_)


def test_rare_categories_get_no_feature_and_unseen_ones_warn():
    X = pd.DataFrame({"city": ["a"] * 50 + ["b"] * 45 + ["c", "d", "e", "f", "g"]})
    y = np.r_[np.ones(50), np.zeros(50)].astype(int)
    model = RuleListClassifier(regularization=0.02).fit(X, y)
    # c..g are rarer than lambda * N
    assert model.binarizer_.feature_names_ == ["city=a", "city=b", "not city=a", "not city=b"]
    with pytest.warns(UserWarning, match="not seen at fit time.*'city': 2 row"):
        model.predict(pd.DataFrame({"city": ["a", "zz", "yy"]}))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.predict(pd.DataFrame({"city": ["a", "c"]}))  # rare but seen: no warning


def test_text_categories_survive_a_file_that_reads_them_as_numbers():
    X = pd.DataFrame({"level": ["0", ">0", "0", ">0"] * 10})
    y = np.array([0, 1, 0, 1] * 10)
    model = RuleListClassifier(regularization=0.01).fit(X, y)
    as_numbers = pd.DataFrame({"level": [0, 0]})  # a CSV of only "0" rows reads integers
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(model.predict(as_numbers), [0, 0])


# -- budgets that hold ------------------------------------------------------------------------------------
def test_twenty_thousand_antecedents_stop_on_a_small_memory_budget():
    rng = np.random.default_rng(7)
    X = pd.DataFrame(rng.random((2000, 205)) < 0.5, columns=[f"f{j}" for j in range(205)]).astype(int)
    y = (X["f0"] ^ X["f1"] ^ (rng.random(2000) < 0.2)).astype(int)
    budget = 16 << 20
    # past half the memory budget expansions defer children (the state stays near 4 MB here); past all of
    # it the search drains its queue until the time budget
    model = RuleListClassifier(regularization=0.0005, min_support=0.05, max_antecedents=None, max_card=2,
                               negations=False, thresholds="quantile", max_memory=budget, time_limit=3).fit(X, y)
    certificate = model.certificate_
    assert len(model.antecedents_) >= 20_000
    assert certificate.status in ("memory budget", "time budget")
    assert certificate.counters["memory_bytes"] <= budget
    assert certificate.lower_bound <= certificate.objective


def test_default_antecedent_bound_reports_why():
    rng = np.random.default_rng(8)
    X = pd.DataFrame(rng.random((1000, 120)) < 0.5, columns=[f"f{j}" for j in range(120)]).astype(int)
    y = (X["f0"] | X["f1"]).astype(int)
    model = RuleListClassifier(regularization=0.01, time_limit=5).fit(X, y)
    assert len(model.antecedents_) <= 2000
    assert "support floor raised" in str(model.antecedents_.report)


@pytest.mark.parametrize("family", FAMILIES)
def test_time_limit_covers_preparation(mixed, family):
    # a budget already spent when the search would start: every family still returns a model whose
    # certificate holds, stopped on the time budget
    X, y = mixed
    model = FAMILIES[family](time_limit=1e-3, missing="category").fit(X, y)
    certificate = model.certificate_
    assert certificate.status == "time budget"
    assert certificate.lower_bound <= certificate.objective + 1e-12
    assert certificate.counters["fit_time"] >= 1e-3
    if family == "ruleset":
        assert certificate.counters["columns"] == 0  # no clause was generated after the deadline
    else:
        assert model.antecedents_.report.stopped  # mining itself was cut short by the deadline
    assert model.predict(X).shape == (len(X),)


@pytest.mark.parametrize("family", FAMILIES)
def test_cancel_from_the_progress_callback_stops_every_family(mixed, family):
    X, y = mixed
    calls = []

    def cancel_after_a_few(trace, counters):
        calls.append(len(trace))
        if len(calls) >= 3:
            raise KeyboardInterrupt

    model = FAMILIES[family](time_limit=120, missing="category", verbose=cancel_after_a_few).fit(X, y)
    assert model.certificate_.status == "interrupted"
    assert model.certificate_.lower_bound <= model.certificate_.objective + 1e-12
    assert model.predict(X).shape == (len(X),)


@pytest.mark.parametrize("family", FAMILIES)
def test_ctrl_c_returns_the_best_model(mixed, family):
    X, y = mixed
    timer = threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    try:
        # (quantile thresholds: a space no family finishes within the second before the interrupt)
        model = FAMILIES[family](time_limit=120, missing="category", thresholds="quantile").fit(X, y)
    finally:
        timer.cancel()
    assert model.certificate_.status == "interrupted"
    assert model.certificate_.counters["fit_time"] < 100  # stopped by the interrupt, not by the limit


@pytest.mark.parametrize("family", ["frl", "ruleset"])
def test_memory_budget_for_every_family(mixed, family):
    X, y = mixed
    if family == "ruleset":  # the pricing matrices alone pass 1 MB: a clear error before any work
        with pytest.raises(MemoryError, match="memory budget"):
            FAMILIES[family](max_memory=1 << 20, missing="category", thresholds="quantile").fit(X, y)
        return
    # (the capture vectors stay packed: 8 MB fills within a few seconds, 40 MB took the whole 15 s; the time
    # limit is a margin, not a measure: a first fit compiling its kernels on a busy machine spent 10 s)
    # (quantile thresholds: a space large enough to fill the budget)
    model = FAMILIES[family](max_memory=8 << 20, time_limit=120, missing="category", thresholds="quantile").fit(X, y)
    assert model.certificate_.status == "memory budget"
    assert model.certificate_.counters["memory_bytes"] <= 8 << 20


def test_budget_accounting():
    budget = Budget(max_memory=1000)
    budget.charge("a", 600)
    assert budget.fits(400) and not budget.fits(401)
    assert budget.fits(900, replacing="a")
    with pytest.raises(MemoryError, match="needs 0 MB"):
        budget.require("b", 500, "b's table")
    budget.release("a")
    budget.require("b", 500, "b's table")
    assert budget.used == 500
    with pytest.raises(ValueError, match="time_limit"):
        Budget(time_limit=0)
    with pytest.raises(ValueError, match="max_memory"):
        Budget(max_memory=-1)


# -- the command line on a user's files -------------------------------------------------------------------
def _cli(args):
    from optrules.cli import main

    return main([str(a) for a in args])


def test_cli_bad_files_give_one_line_errors(tmp_path, capsys):
    empty = tmp_path / "empty.csv"
    empty.write_bytes(b"")
    with pytest.raises(SystemExit, match="empty"):
        _cli(["fit", empty, "--target", "y"])
    latin = tmp_path / "latin.csv"
    latin.write_bytes("city,y\n" .encode() + "Montr\xe9al,1\nParis,0\n".encode("latin-1") * 20)
    with pytest.raises(SystemExit, match="not utf-8 text.*--encoding latin-1"):
        _cli(["fit", latin, "--target", "y"])
    assert _cli(["fit", latin, "--target", "y", "--encoding", "latin-1", "-r", "0.1", "-q"]) == 0
    assert "Montréal" in capsys.readouterr().out
    binary = tmp_path / "binary.csv"
    binary.write_bytes(b"\x00\x01\x02" * 100)
    with pytest.raises(SystemExit, match="binary data"):
        _cli(["fit", binary, "--target", "y"])


def test_cli_checks_the_output_path_before_fitting(tmp_path, monkeypatch):
    X, y = titanic_like(100)
    path = tmp_path / "t.csv"
    X.assign(Survived=y).to_csv(path, index=False)

    def no_fit(*args, **kwargs):
        raise AssertionError("fit must not start")

    monkeypatch.setattr(RuleListClassifier, "fit", no_fit)
    with pytest.raises(SystemExit, match="no folder"):
        _cli(["fit", path, "--target", "Survived", "-o", tmp_path / "nowhere" / "m.json"])
    with pytest.raises(SystemExit, match="is a folder"):
        _cli(["fit", path, "--target", "Survived", "-o", tmp_path])


def test_every_family_takes_a_weight_column(tmp_path, capsys):
    rng = np.random.default_rng(0)
    x = rng.integers(0, 3, 90)
    y = (x == 2) ^ (rng.random(90) < 0.2)
    # the weights make the rows of x = 1 decide: heavy where y = 1, so a weighted model predicts 1 there
    cost = np.where((x == 1) & y, 20.0, 1.0)
    path = tmp_path / "w.csv"
    levels = np.array(["low", "mid", "high"])  # text, so one feature per level whatever the weights
    pd.DataFrame({"x": levels[x], "cost": cost, "y": y.astype(int)}).to_csv(path, index=False)
    from optrules import load_model

    grid = pd.DataFrame({"x": ["low", "mid", "high"]})
    for model in ("rulelist", "frl", "ruleset"):
        extra = ["--complexity", "4"] if model == "ruleset" else []
        predictions = []
        for weighted in (False, True):
            out_file = tmp_path / f"{model}{weighted}.json"
            weights = ["--weight-column", "cost"] if weighted else ["--drop", "cost"]
            assert _cli(["fit", path, "--target", "y", *weights, "--model", model, "-q", "-o", out_file, *extra]) == 0
            assert ("weighted" in capsys.readouterr().out) == weighted
            predictions.append(list(load_model(out_file.read_text()).predict(grid)))
        assert predictions == [[0, 0, 1], [0, 1, 1]], model


def test_cli_hand_edited_model_files(tmp_path, capsys):
    X, y = titanic_like(120)
    data = tmp_path / "t.csv"
    X.assign(Survived=y).to_csv(data, index=False)
    model = tmp_path / "m.json"
    assert _cli(["fit", data, "--target", "Survived", "-r", "0.05", "-o", model, "-q"]) == 0
    text = model.read_text()
    broken = tmp_path / "broken.json"
    for edit in (text.replace('"rules"', '"rulez"'), text.replace('"format": "optrules.RuleList"', '"format": 3'),
                 text[: len(text) // 2], '["a list"]'):
        broken.write_text(edit)
        with pytest.raises(SystemExit, match="not a (valid|saved) optrules model"):
            _cli(["predict", broken, data])


def test_cli_headerless_file_drop_and_default_budget(tmp_path, capsys):
    rng = np.random.default_rng(2)
    frame = pd.DataFrame({0: rng.integers(0, 5, 300), 1: rng.choice(["a", "b", "c"], 300), 2: rng.random(300)})
    frame[3] = ((frame[0] > 2) | (frame[1] == "a")).astype(int)
    path = tmp_path / "raw.data"
    frame.to_csv(path, index=False, header=False)
    assert _cli(["fit", path, "--no-header", "--target", "3", "--drop", "2", "-r", "0.02", "-q"]) == 0
    out = capsys.readouterr().out
    assert "time budget 120 s (default" in out
    assert "certified optimal" in out and "x2<=" not in out and "x2>" not in out
    # the columns are named as a numpy array's: rules read x0>2 and x1=a, not 0>2 and 1=a
    assert ("x0>" in out or "x0<=" in out) and "x1=a" in out
    with pytest.raises(SystemExit, match="no column 'label'.*named x0, x1"):
        _cli(["fit", path, "--no-header", "--target", "label"])
