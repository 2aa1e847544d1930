"""A new user's path through the command line: their own CSV/Parquet, fit, save, predict, trace, bench."""

import json

import numpy as np
import pandas as pd
import pytest

from optrules.cli import build_parser, main
from optrules.data.datasets import load_car_evaluation, load_compas
from optrules.models import load_model


@pytest.fixture(scope="module")
def compas_csv(tmp_path_factory):
    data = load_compas()
    frame = data.X.assign(recidivism=np.where(data.y == 1, "yes", "no"))
    path = tmp_path_factory.mktemp("data") / "compas.csv"
    frame.to_csv(path, index=False)
    return path, frame


def test_fit_save_predict_round_trip(compas_csv, tmp_path, capsys):
    path, frame = compas_csv
    model_path = tmp_path / "model.json"
    assert main(["fit", str(path), "--target", "recidivism", "-r", "0.01", "-o", str(model_path)]) == 0
    text = capsys.readouterr().out
    assert "certified optimal" in text and "training accuracy" in text
    saved = json.loads(model_path.read_text())
    assert saved["certificate"]["status"] == "optimal" and len(saved["certificate"]["trace"]["time"]) > 0
    model = load_model(model_path.read_text())

    scored = tmp_path / "scored.csv"
    assert main(["predict", str(model_path), str(path), "--target", "recidivism", "--proba", "--explain",
                 "-o", str(scored)]) == 0
    text = capsys.readouterr().out
    out = pd.read_csv(scored)
    assert list(out.columns) == ["prediction", "P(no)", "P(yes)", "rule"]
    assert (out["prediction"].to_numpy() == model.predict(frame.drop(columns="recidivism"))).all()
    accuracy = float(np.mean(out["prediction"] == frame["recidivism"]))
    assert f"accuracy against 'recidivism': {accuracy:.4f}" in text
    assert np.allclose(out[["P(no)", "P(yes)"]].sum(axis=1), 1.0)
    # the explanation names the rule that fired, and the rule predicts what the row got
    first_rule = " and ".join(model.rules[0].conditions)
    fired = out["rule"] == first_rule
    assert fired.any() and (out.loc[fired, "prediction"] == model.classes[model.rules[0].prediction]).all()
    # the training table as it is: its target column (named in the model file) is the target, not an
    # unknown feature; without it, the rows are only predicted
    assert saved["target"] == "recidivism"
    assert main(["predict", str(model_path), str(path), "-o", str(tmp_path / "again.csv")]) == 0
    text = capsys.readouterr().out
    assert "the training target, is read as the target" in text
    assert f"accuracy against 'recidivism': {accuracy:.4f}" in text
    assert (pd.read_csv(tmp_path / "again.csv")["prediction"] == out["prediction"]).all()
    features_only = tmp_path / "features.csv"
    frame.drop(columns="recidivism").to_csv(features_only, index=False)
    assert main(["predict", str(model_path), str(features_only), "-o", str(tmp_path / "plain.csv")]) == 0
    assert "accuracy" not in capsys.readouterr().out
    with pytest.raises(SystemExit, match="no column 'label'"):
        main(["predict", str(model_path), str(path), "--target", "label"])


@pytest.mark.parametrize("model_args", [["-r", "0.01"], ["--model", "ruleset", "--complexity", "6", "--time-limit", "5"]])
def test_export_writes_sql_and_python_that_predict_as_the_model(compas_csv, tmp_path, capsys, model_args):
    import sqlite3

    path, frame = compas_csv
    model_path = tmp_path / "model.json"
    assert main(["fit", str(path), "--target", "recidivism", *model_args, "-o", str(model_path)]) == 0
    model = load_model(model_path.read_text())
    X = frame.drop(columns="recidivism")
    assert main(["export", str(model_path), "--to", "sql", "--table", "people", "-o", str(tmp_path / "m.sql")]) == 0
    with sqlite3.connect(":memory:") as connection:
        X.to_sql("people", connection, index=False)
        got = pd.read_sql_query((tmp_path / "m.sql").read_text(), connection)
    assert got["prediction"].tolist() == model.predict(X).tolist()
    capsys.readouterr()
    assert main(["export", str(model_path), "--to", "python"]) == 0
    namespace = {}
    exec(capsys.readouterr().out, namespace)
    assert [namespace["predict"](row) for row in X.iloc[:300].to_dict("records")] == model.predict(X.iloc[:300]).tolist()


def test_predict_prints_without_output_and_rejects_bad_files(compas_csv, tmp_path, capsys):
    path, frame = compas_csv
    model_path = tmp_path / "m.json"
    assert main(["fit", str(path), "--target", "recidivism", "-r", "0.02", "-o", str(model_path), "-q"]) == 0
    small = tmp_path / "small.csv"
    frame.drop(columns="recidivism").head(3).to_csv(small, index=False)
    capsys.readouterr()
    assert main(["predict", str(model_path), str(small)]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "prediction"
    missing = tmp_path / "missing.csv"
    frame.drop(columns=["priors", "recidivism"]).head(3).to_csv(missing, index=False)
    assert main(["predict", str(model_path), str(missing)]) == 2
    assert "priors" in capsys.readouterr().out
    not_json = tmp_path / "x.json"
    not_json.write_text("hello")
    with pytest.raises(SystemExit, match="not a saved optrules model"):
        main(["predict", str(not_json), str(small)])


def test_parquet_weights_and_class_weight(tmp_path, capsys):
    data = load_car_evaluation()
    frame = data.X.assign(rating=data.y, cost=np.where(data.y == "unacc", 1.0, 3.0))
    path = tmp_path / "car.parquet"
    frame.to_parquet(path, index=False)
    assert main(["fit", str(path), "--target", "rating", "--weight-column", "cost", "-r", "0.01", "--max-card", "1",
                 "-o", str(tmp_path / "car.json")]) == 0
    text = capsys.readouterr().out
    assert "certified optimal" in text and "weighted" in text
    model = load_model((tmp_path / "car.json").read_text())
    assert sorted(model.classes) == ["acc", "good", "unacc", "vgood"]
    assert main(["fit", str(path), "--target", "rating", "--class-weight", "balanced", "--max-card", "1", "-q"]) == 0
    assert "predict vgood" in capsys.readouterr().out


def test_cross_validation_from_the_command_line(compas_csv, capsys):
    path, _ = compas_csv
    assert main(["fit", str(path), "--target", "recidivism", "-r", "0.05", "0.02", "0.01", "--cv", "3",
                 "--max-card", "1"]) == 0
    text = capsys.readouterr().out
    assert "3-fold cross-validation" in text and "*" in text and "certified optimal" in text
    with pytest.raises(SystemExit, match="--cv"):
        main(["fit", str(path), "--target", "recidivism", "-r", "0.05", "0.02"])


def test_trace_from_saved_model_and_from_data(compas_csv, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    path, _ = compas_csv
    model_path = tmp_path / "m.json"
    assert main(["fit", str(path), "--target", "recidivism", "-r", "0.01", "-o", str(model_path), "-q"]) == 0
    figure = tmp_path / "trace.png"
    assert main(["trace", str(model_path), "-o", str(figure)]) == 0
    text = capsys.readouterr().out
    assert "search trace" in text and "lower bound" in text
    assert figure.stat().st_size > 10_000 and figure.read_bytes()[:4] == b"\x89PNG"
    assert main(["trace", "--dataset", "compas", "-r", "0.02", "-q"]) == 0
    assert "certified optimal" in capsys.readouterr().out


def test_bench(tmp_path, capsys):
    out = tmp_path / "bench.json"
    assert main(["bench", "--dataset", "compas", "-r", "0.05", "0.02", "-o", str(out)]) == 0
    rows = json.loads(out.read_text())
    assert [r["lambda"] for r in rows] == [0.05, 0.02]
    assert all(r["status"] == "optimal" and r["nodes_expanded"] > 0 and r["peak_rss_mb"] > 0 for r in rows)
    assert "search (s)" in capsys.readouterr().out


def test_help_and_user_errors(tmp_path, capsys):
    help_text = build_parser().format_help()
    for command in ("fit", "predict", "trace", "bench", "examples:"):
        assert command in help_text
    with pytest.raises(SystemExit, match="no such file"):
        main(["fit", str(tmp_path / "nope.csv"), "--target", "y"])
    bad = tmp_path / "bad.csv"
    pd.DataFrame({"a": [1, 2, 3], "y": [0, 1, 0]}).to_csv(bad, index=False)
    with pytest.raises(SystemExit, match="no column 'label'"):
        main(["fit", str(bad), "--target", "label"])
    with pytest.raises(SystemExit, match="--target"):
        main(["fit", str(bad)])
    nan = tmp_path / "nan.csv"
    pd.DataFrame({"a": [1, None, 3, 4], "y": [0, 1, 0, 1]}).to_csv(nan, index=False)
    assert main(["fit", str(nan), "--target", "y", "--missing", "error"]) == 2
    assert "missing" in capsys.readouterr().out


def test_serve_without_the_web_extra_says_what_to_install(monkeypatch):
    import sys

    for name in [m for m in sys.modules if m.startswith("optrules.web")]:
        monkeypatch.delitem(sys.modules, name)
    for name in ["starlette", *[m for m in sys.modules if m.startswith("starlette.")]]:
        monkeypatch.setitem(sys.modules, name, None)  # as if not installed (cached submodules too)
    with pytest.raises(SystemExit, match=r"pip install 'optrules\[web\]'"):
        main(["serve", "--port", "0"])
