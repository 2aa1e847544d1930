"""Tables that attack: column names and values made of quotes, backslashes, line ends of every kind,
NUL, escape sequences and long unicode, fitted by every family and exported. The Python module is
imported in a subprocess and the SQL run in SQLite and DuckDB; each must be one module or one query,
predict what ``predict`` does, and run nothing else: every payload would create a marker file, which
must stay absent. The slow suite draws 500 tables a family, the default suite 50."""

from __future__ import annotations

import ast
import json
import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from optrules import FallingRuleListClassifier, RuleListClassifier, RuleSetClassifier
from optrules.escape import printable, python_literal, sql_identifier, sql_string

duckdb = pytest.importorskip("duckdb")

MARKER = Path(os.environ.get("TMPDIR", "/tmp")) / f"optrules-hostile-{os.getpid()}"


def payloads(marker: Path) -> list[str]:
    """Text that would create ``marker`` if it escaped into code or a query."""
    m = str(marker)
    python = f"open({m!r}, 'w').close()"
    return [
        f'"""\n{python}\n"""', f"'''\n{python}\n'''", f"\r{python}#", f"\n{python}\n", f"\u2028{python}",
        f"x\\\n{python}", f"\x00{python}", f"\x0c{python}", f"\x85{python}",
        f"\n; ATTACH DATABASE '{m}' AS pwn; --", f"'; ATTACH DATABASE '{m}' AS pwn; --",
        f"\"; ATTACH DATABASE '{m}' AS pwn; --", f"\r COPY (SELECT 1) TO '{m}'; --",
        f"*/ COPY (SELECT 1) TO '{m}'; /*", f"\x1b]0;{python}\x07\x1b[2J", "C:\\New\\x", "\u202eevil",
        "FALSE", "TRUE", "NULL", "rule", "data", "fired",  # SQLite reads a bare FALSE as a column so named
    ]


_PIECES = st.sampled_from(['"', "'", '"""', "\\", "\r", "\n", "\r\n", "\u2028", "\u2029", "\x00", "\x1b[31m",
                           "\x85", "\t", "--", "/*", "*/", ";", "{", "}", "%s", "é", "名前", "\U0001f600", " "])
HOSTILE_TEXT = st.one_of(
    st.sampled_from(payloads(MARKER)),
    st.lists(st.one_of(_PIECES, st.text(max_size=3)), min_size=1, max_size=6).map("".join),
    st.text(min_size=1, max_size=300),
)


@st.composite
def hostile_tables(draw):
    """A table of 40-80 rows: a numeric, a text (categories) and sometimes a 0/1 column, every name and
    category hostile, some values missing; the target depends on both so that the models use them."""
    names = draw(st.lists(HOSTILE_TEXT, min_size=4, max_size=4, unique=True))
    values = draw(st.lists(HOSTILE_TEXT, min_size=3, max_size=3, unique=True))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    n = int(rng.integers(40, 81))
    number = rng.normal(size=n).round(2)
    category = np.array(values, dtype=object)[rng.integers(0, 3, n)]
    frame = pd.DataFrame({names[0]: number, names[1]: pd.Series(category, dtype=object)})
    if draw(st.booleans()):
        frame[names[2]] = rng.integers(0, 2, n)
    y = (number > 0) ^ (category == values[0])
    y = np.where(rng.random(n) < 0.1, ~y, y)
    if draw(st.booleans()):  # missing values, read as their own category
        frame.loc[rng.random(n) < 0.1, names[0]] = np.nan
        frame.loc[rng.random(n) < 0.1, names[1]] = None
    if y.all() or not y.any():
        y[0] = not y[0]
    labels = draw(st.sampled_from([None, names[3]]))  # hostile class labels too
    target = y if labels is None else np.where(y, labels, "other" if labels != "other" else "else")
    return frame, target


FAMILIES = {
    "rulelist": lambda: RuleListClassifier(regularization=0.02, time_limit=5, missing="category"),
    "falling": lambda: FallingRuleListClassifier(w=2.0, C=0.01, max_card=1, time_limit=5, missing="category"),
    "ruleset": lambda: RuleSetClassifier(complexity=8, time_limit=5, missing="category"),
}

RUNNER = textwrap.dedent("""
    import importlib.util, json, sqlite3, sys
    folder = sys.argv[1]
    spec = importlib.util.spec_from_file_location("exported", folder + "/exported.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    rows = json.load(open(folder + "/rows.json", encoding="utf-8"))
    table = json.load(open(folder + "/table.json", encoding="utf-8"))
    sql = None
    if table["query"]:
        kept = [j for j, c in enumerate(table["columns"]) if c and chr(0) not in c]  # (the query reads none of the others)
        connection = sqlite3.connect(":memory:")
        quoted = ", ".join('"' + table["columns"][j].replace('"', '""') + '"' for j in kept)
        connection.execute(f"CREATE TABLE data ({quoted})")
        connection.executemany(f"INSERT INTO data VALUES ({', '.join('?' * len(kept))})",
                               [[row[j] for j in kept] for row in table["rows"]])
        query = open(folder + "/query.sql", encoding="utf-8", newline="").read()
        sql = [list(r) for r in connection.execute(query).fetchall()]  # one statement, or sqlite3 refuses it
    json.dump({"python": [module.rule_index(r) for r in rows], "sql": sql}, sys.stdout)
""")


def _json_value(value):
    if isinstance(value, (float, np.floating)) and np.isnan(value):
        return None
    return value.item() if isinstance(value, np.generic) else value


def _sql_or_refusal(estimator, used_columns, dialect: str = "sqlite") -> str | None:
    """The query, or None when a column it needs has a NUL in its name (a clear refusal: checked)."""
    try:
        return estimator.to_sql(dialect=dialect)
    except ValueError as error:
        assert ("NUL" in str(error) and any("\x00" in c for c in used_columns)) or (
            "empty name" in str(error) and "" in used_columns), error
        return None


def check_exports_hold(estimator, frame: pd.DataFrame, folder: Path) -> None:
    fired = estimator.rule_list_.rule_index(frame).tolist()
    expected = [int(p) if isinstance(p, (bool, np.bool_)) else p for p in estimator.predict(frame).tolist()]
    source = estimator.to_python()
    ast.parse(source)  # one module
    used = {f.column for f in estimator.binarizer_.features_ if f.name in estimator.rule_list_.used_features()}
    query = _sql_or_refusal(estimator, used)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "exported.py").write_text(source, encoding="utf-8")
    (folder / "query.sql").write_text(query or "", encoding="utf-8", newline="")
    rows = [{c: _json_value(v) for c, v in row.items()} for row in frame.to_dict("records")]
    (folder / "rows.json").write_text(json.dumps(rows), encoding="utf-8")
    table = {"columns": list(frame.columns), "rows": [list(r.values()) for r in rows], "query": query is not None}
    (folder / "table.json").write_text(json.dumps(table), encoding="utf-8")
    done = subprocess.run([sys.executable, "-c", RUNNER, str(folder)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    got = json.loads(done.stdout)
    assert got["python"] == fired
    if query is not None:
        assert [r[-1] for r in got["sql"]] == fired
        assert [r[0] for r in got["sql"]] == expected
        query = estimator.to_sql(dialect="duckdb")
        assert len(duckdb.extract_statements(query)) == 1
        connection = duckdb.connect()
        connection.register("frame", frame[[c for c in frame.columns if c and "\x00" not in c]])
        connection.execute("CREATE TABLE data AS SELECT * FROM frame")
        assert connection.execute(query).df()["rule"].tolist() == fired
    assert not MARKER.exists(), "a payload ran"


def _fit_and_check(family: str, table, tmp_path_factory) -> None:
    frame, y = table
    try:
        estimator = FAMILIES[family]().fit(frame, y)
    except ValueError as error:  # a clear refusal is a correct answer (e.g. names that collide)
        assert "collide" in str(error) or "identifier" in str(error), error
        return
    check_exports_hold(estimator, frame, tmp_path_factory.mktemp(family))


# each example runs the exports in a process of their own (~0.2 s): 15 by default, 500 in the slow suite
@pytest.mark.parametrize("family", sorted(FAMILIES))
@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(table=hostile_tables())
def test_hostile_tables_export_as_one_module_and_one_query(family, table, tmp_path_factory):
    _fit_and_check(family, table, tmp_path_factory)


@pytest.mark.slow
@pytest.mark.parametrize("family", sorted(FAMILIES))
@settings(max_examples=500, deadline=None, suppress_health_check=list(HealthCheck))
@given(table=hostile_tables())
def test_hostile_tables_export_as_one_module_and_one_query_slow(family, table, tmp_path_factory):
    _fit_and_check(family, table, tmp_path_factory)


# -- the escaping functions themselves ---------------------------------------------------------------
@settings(max_examples=300, deadline=None)
@given(text=st.one_of(HOSTILE_TEXT, st.text()))
def test_literals_read_back_and_comments_stay_one_line(text):
    assert ast.literal_eval(python_literal(text)) == text
    shown = printable(text)
    assert shown.isprintable() and "\n" not in shown and "\r" not in shown
    # a comment holding it ends where we end it, in Python and in SQL
    source = f"x = 1  # {shown}\ny = 2\n"
    namespace: dict = {}
    exec(compile(source, "<comment>", "exec"), namespace)
    assert namespace["x"] == 1 and namespace["y"] == 2
    if text and "\x00" not in text:
        with sqlite3.connect(":memory:") as connection:
            quoted = sql_identifier(text)
            connection.execute(f"CREATE TABLE t ({quoted})")
            connection.execute(f"INSERT INTO t VALUES ({sql_string(text, 'sqlite')})")
            got = connection.execute(f"SELECT {quoted} FROM t  -- {shown}\n").fetchall()
            assert got == [(text,)]
    else:
        with pytest.raises(ValueError, match="NUL|empty name"):
            sql_identifier(text)
    with sqlite3.connect(":memory:") as connection:
        assert connection.execute(f"SELECT {sql_string(text, 'sqlite')}").fetchone()[0] == text
    assert duckdb.execute(f"SELECT {sql_string(text, 'duckdb')} AS v -- {shown}\n").fetchone()[0] == text


def test_a_query_on_a_table_without_the_column_fails_instead_of_reading_text():
    """SQLite reads an unqualified "name" that no column has as the text 'name': the export names its
    columns with their table, so a missing column is an error, never a silent comparison of text."""
    rng = np.random.default_rng(5)
    X = pd.DataFrame({"level": rng.normal(size=200), "FALSE": rng.integers(0, 2, 200)})
    y = (X["level"] > 0).to_numpy()
    estimator = RuleListClassifier(regularization=0.01).fit(X, y)
    with sqlite3.connect(":memory:") as connection:
        connection.execute('CREATE TABLE data ("other")')
        with pytest.raises(sqlite3.OperationalError, match="no such column"):
            connection.execute(estimator.to_sql()).fetchall()


def test_values_without_a_literal_are_refused():
    with pytest.raises(ValueError, match="Timestamp"):
        python_literal([pd.Timestamp("2020-01-01")])


def test_a_hostile_csv_through_the_command_line(tmp_path, capsys):
    """CSV -> ``fit -o`` -> ``export`` (Python, SQL) -> import and run: the payloads stay text, and the
    terminal sees no control character."""
    from optrules.cli import main

    marker = tmp_path / "ran"
    python = f"open({str(marker)!r}, 'w').close()"
    name = f'age"""\n{python}\n"""'
    values = ["low", f"b\r{python}#", "\x1b[31mred\x1b]0;title\x07", f"x\n; ATTACH DATABASE '{marker}' AS pwn; --"]
    rng = np.random.default_rng(4)
    n = 400
    frame = pd.DataFrame({name: rng.integers(18, 70, n), "kind": np.array(values, dtype=object)[rng.integers(0, 4, n)]})
    frame["label"] = ((frame[name] < 25) | (frame["kind"] == values[2])).astype(int)
    path = tmp_path / "hostile.csv"
    frame.to_csv(path, index=False)
    model = tmp_path / "model.json"
    assert main(["fit", str(path), "--target", "label", "-r", "0.01", "-o", str(model)]) == 0
    out = capsys.readouterr()
    assert "\x1b" not in out.out + out.err and "\r" not in out.out + out.err
    assert "\\x1b[31mred" in out.out  # shown, escaped
    module, query = tmp_path / "exported.py", tmp_path / "model.sql"
    assert main(["export", str(model), "--to", "python", "-o", str(module)]) == 0
    assert main(["export", str(model), "--to", "sql", "-o", str(query)]) == 0
    reread = pd.read_csv(path).drop(columns="label")
    script = textwrap.dedent(f"""
        import csv, importlib.util, json, sqlite3, sys
        spec = importlib.util.spec_from_file_location("exported", {str(module)!r})
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        rows = list(csv.DictReader(open({str(path)!r}, newline="", encoding="utf-8")))
        connection = sqlite3.connect(":memory:")
        columns = list(rows[0])
        connection.execute("CREATE TABLE data (" + ", ".join('"' + c.replace('"', '""') + '"' for c in columns) + ")")
        connection.executemany("INSERT INTO data VALUES (" + ", ".join("?" * len(columns)) + ")",
                               [[int(r[c]) if c != "kind" else r[c] for c in columns] for r in rows])
        sql = [row[-1] for row in connection.execute(open({str(query)!r}).read()).fetchall()]
        json.dump({{"python": [module.rule_index(r) for r in rows], "sql": sql}}, sys.stdout)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    from optrules.models import load_model

    expected = load_model(model.read_text()).rule_index(reread).tolist()
    got = json.loads(done.stdout)
    assert got["python"] == expected and got["sql"] == expected
    assert not marker.exists()


# -- model files somebody else wrote -----------------------------------------------------------------
def _edits(saved: dict) -> list:
    """Hand edits of a saved rule list: each must load correctly or be refused in one line."""
    import copy

    def edit(change):
        data = copy.deepcopy(saved)
        change(data)
        return json.dumps(data)

    feature = saved["binarizer"]["features"]
    threshold = next(k for k, f in enumerate(feature) if f["kind"] in ("le", "gt"))
    edits = [
        edit(lambda d: d["rules"][0].update(prediction=99)), edit(lambda d: d["rules"][0].update(prediction=-1)),
        edit(lambda d: d["rules"][0].update(prediction=10**30)), edit(lambda d: d["rules"][0].update(prediction=1.5)),
        edit(lambda d: d["rules"][0].update(prediction="1")), edit(lambda d: d["default"].update(prediction=True)),
        edit(lambda d: d["rules"][0].update(n_captured=-3)), edit(lambda d: d["rules"][0].pop("n_positive")),
        edit(lambda d: d["rules"][0].update(conditions=["no such feature"])),
        edit(lambda d: d["rules"][0].update(conditions="age")), edit(lambda d: d["rules"][0].update(conditions=[[1]])),
        edit(lambda d: d.update(classes=[0])), edit(lambda d: d.update(classes=[1, 1])),
        edit(lambda d: d.update(classes=[{"a": 1}, 2])), edit(lambda d: d.update(rules="x")),
        edit(lambda d: d.update(format="other")), edit(lambda d: d.update(version=99)),
        edit(lambda d: d["binarizer"]["features"][threshold].update(value="3")),
        edit(lambda d: d["binarizer"]["features"][threshold].update(kind="regex")),
        edit(lambda d: d["binarizer"]["features"][threshold].update(column="elsewhere")),
        edit(lambda d: d["binarizer"]["features"][threshold].update(extra=1)),
        edit(lambda d: d["binarizer"]["params"].update(bogus=1)), edit(lambda d: d["binarizer"].pop("columns")),
        edit(lambda d: d["certificate"].update(objective="0.3")), edit(lambda d: d["certificate"].update(lower_bound=None)),
        edit(lambda d: d["certificate"].update(counters=[1])), edit(lambda d: d["certificate"]["trace"].update(time="x")),
        edit(lambda d: d["certificate"]["trace"].update(bogus=[1])), edit(lambda d: d["certificate"].update(status=5)),
        edit(lambda d: d.pop("certificate")),
    ]
    text = json.dumps(saved)
    edits += [text.replace('"n_captured": ', '"n_captured": 1e400, "x": ', 1), "[" * 100_000 + "]" * 100_000,
              '{"format": ' + "[" * 50_000 + "]" * 50_000 + "}", "null", "[]", text[: len(text) // 2], "\ufeff" + text]
    return edits


def test_hand_edited_model_files_load_right_or_get_one_line(tmp_path, capsys):
    from optrules.cli import main

    data = tmp_path / "d.csv"
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"age": rng.integers(18, 70, 300), "kind": rng.choice(["a", "b"], 300)})
    frame["label"] = ((frame["age"] < 30) | (frame["kind"] == "a")).astype(int)
    frame.to_csv(data, index=False)
    rows = tmp_path / "rows.csv"
    frame.drop(columns="label").to_csv(rows, index=False)
    saved = tmp_path / "model.json"
    assert main(["fit", str(data), "--target", "label", "-r", "0.01", "-o", str(saved)]) == 0
    capsys.readouterr()
    good = json.loads(saved.read_text())
    refused = 0
    for k, text in enumerate(_edits(good)):
        path = tmp_path / f"edited-{k}.json"
        path.write_text(text, encoding="utf-8")
        for command in (["predict", str(path), str(rows)], ["export", str(path), "--to", "python"],
                        ["export", str(path), "--to", "sql"], ["report", str(path), "-o", str(tmp_path / "r.html")],
                        ["trace", str(path)]):
            try:
                code = main(command)
            except SystemExit as stop:  # a refusal: one line that says what is wrong
                message = str(stop.code)
                assert message.startswith("error: ") and "\n" not in message and len(message) < 400, (k, command, message)
                refused += 1
                continue
            out = capsys.readouterr()
            assert code == 0, (k, command, out)
            if command[0] == "predict":  # a file that loads predicts what the model it describes predicts
                from optrules.models import load_model

                model = load_model(text)
                assert all(0 <= branch.prediction < len(model.classes) for branch in model.branches())
        capsys.readouterr()
    assert refused >= 80


# -- tables very wide or very tall: their work is inside the budget -------------------------------------
def _elapsed(work) -> float:
    """The processor seconds of this process ``work`` took: what a busy machine does not add to (the
    margins below are several times the budget, against the tens of seconds the faults they guard took)."""
    import time

    started = time.process_time()
    work()
    return time.process_time() - started


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_a_wide_table_keeps_the_budget(family):
    """20,000 columns: the fit stops binarizing on its budget, and predict reads only the model's columns
    (the column check was quadratic: 40,000 columns took 44 s to fit with time_limit=2, and 40 s to predict)."""
    rng = np.random.default_rng(0)
    n, m = 60, 20_000
    X = pd.DataFrame(rng.integers(0, 5, (n, m)).astype(np.int8), columns=[f"c{j}" for j in range(m)])
    y = (X["c0"] > 2).to_numpy()
    estimator = FAMILIES[family]().set_params(time_limit=1)
    with pytest.warns(UserWarning, match="stopped"):
        took = _elapsed(lambda: estimator.fit(X, y))
    assert took < 8, took
    assert _elapsed(lambda: estimator.predict(X)) < 2
    assert estimator.certificate_.lower_bound <= estimator.certificate_.objective


@pytest.mark.slow
def test_a_tall_table_keeps_the_budget():
    """4.3 million rows: grouping the samples hears the budget (it took 14.7 s with time_limit=5)."""
    rng = np.random.default_rng(0)
    n = 4_300_000
    X = pd.DataFrame({"a": rng.normal(size=n).round(2), "b": rng.integers(0, 50, n), "c": rng.choice(["x", "y", "z"], n)})
    y = ((X["a"] > 0) ^ (X["c"] == "x")).to_numpy()
    estimator = RuleListClassifier(regularization=0.01, time_limit=5)
    took = _elapsed(lambda: estimator.fit(X, y))
    assert took < 9, took
    assert estimator.certificate_.lower_bound <= estimator.certificate_.objective


def test_grouping_stopped_by_the_budget_gives_the_list_of_no_rule(monkeypatch):
    from optrules.corels import estimator as corels_estimator
    from optrules.data.groups import GroupingStopped

    def stopped(*args, **kwargs):
        raise GroupingStopped

    monkeypatch.setattr(corels_estimator.Problem, "from_antecedents", stopped)
    rng = np.random.default_rng(2)
    X = pd.DataFrame({"a": rng.normal(size=200)})
    y = (X["a"] > 0).to_numpy()
    model = RuleListClassifier(regularization=0.01).fit(X, y)
    assert len(model.rule_list_) == 0 and model.certificate_.lower_bound == 0.0
    assert model.certificate_.status != "optimal"


# -- numbers at the edge of what a double holds ---------------------------------------------------------
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_weights_whose_sum_overflows_are_refused(family):
    rng = np.random.default_rng(3)
    X = pd.DataFrame({"a": rng.normal(size=100)})
    y = (X["a"] > 0).to_numpy()
    with pytest.raises(ValueError, match="sample_weight sums to"):
        with np.errstate(over="ignore"):
            FAMILIES[family]().fit(X, y, sample_weight=np.full(100, 1e308))


def test_a_subnormal_lambda_is_refused_in_one_line(tmp_path, capsys):
    from optrules.cli import main

    rng = np.random.default_rng(3)
    X = pd.DataFrame({"a": rng.normal(size=100)})
    y = (X["a"] > 0).to_numpy()
    with pytest.raises(ValueError, match="at least 1e-300"):
        RuleListClassifier(regularization=1e-310).fit(X, y)
    path = tmp_path / "d.csv"
    X.assign(label=y.astype(int)).to_csv(path, index=False)
    assert main(["fit", str(path), "--target", "label", "-r", "1e-310"]) != 0
    out = capsys.readouterr()
    assert "1e-300" in out.out + out.err and "Traceback" not in out.out + out.err


def test_a_column_named_twice_is_refused_not_renamed(tmp_path):
    from optrules.cli import main

    path = tmp_path / "d.csv"
    path.write_text("a,label,label\n1,0,0\n2,1,1\n3,0,0\n4,1,1\n")
    with pytest.raises(SystemExit, match="twice"):
        main(["fit", str(path), "--target", "label"])


@pytest.mark.parametrize("values", [[{"k": 1}, {"k": 2}], [[1, 2], [3]], [{1}, {2}]])
@pytest.mark.parametrize("categorical", [None, ["a"]])
def test_a_column_of_lists_or_dicts_is_refused_by_name(values, categorical):
    """A column holding lists, dicts or sets (JSON read into a DataFrame) cannot become features: one clear
    error naming the column and the type, not pandas' "unhashable type" from deep inside, in every family."""
    import numpy as np
    import pandas as pd

    from optrules import FallingRuleListClassifier, RuleListClassifier, RuleSetClassifier

    X = pd.DataFrame({"a": values * 20, "b": np.arange(40)})
    y = np.arange(40) % 2
    for make in (RuleListClassifier, FallingRuleListClassifier, RuleSetClassifier):
        with pytest.raises(ValueError, match=f"column 'a' holds {type(values[0]).__name__} values .*own column"):
            make(time_limit=10, categorical=categorical).fit(X, y)
