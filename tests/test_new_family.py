"""A family is one package and one registry entry: the one-rule family of ``tests/onerule_family`` (which
nothing in ``src/`` knows of) is served by the command line (fit, save, predict, export, report, bench),
by the web app (its form, a run, the model's download) and by ``load_model``, once its module is listed
in the registry."""

import io
import json
import time

import numpy as np
import pandas as pd
import pytest

from optrules.cli import main
from optrules.models import load_model


@pytest.fixture
def registered(monkeypatch):
    import optrules.families

    monkeypatch.setattr(optrules.families, "FAMILY_MODULES",
                        (*optrules.families.FAMILY_MODULES, "onerule_family.family"))


@pytest.fixture(scope="module")
def table():
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"age": rng.integers(18, 80, 400), "colour": rng.choice(["red", "green", "blue"], 400),
                          "score": rng.normal(size=400)})
    frame.loc[rng.random(400) < 0.05, "score"] = np.nan  # missing values are data
    noise = rng.random(400) < 0.15
    frame["label"] = np.where((frame["age"] > 50) ^ noise, "late", "early")
    return frame


def brute_force_mistakes(features: np.ndarray, codes: np.ndarray, weights: np.ndarray) -> float:
    """The fewest weighted mistakes of any ``if feature then a else b``, one feature at a time."""
    best = np.inf
    for j in range(features.shape[1]):
        mistakes = 0.0
        for side in (features[:, j], ~features[:, j]):
            totals = np.bincount(codes[side], weights=weights[side], minlength=codes.max() + 1)
            mistakes += totals.sum() - totals.max()
        best = min(best, mistakes)
    return best


def test_the_family_is_exact(registered, table):
    from onerule_family.estimator import OneRuleClassifier

    X, y = table.drop(columns="label"), table["label"]
    weights = np.random.default_rng(0).uniform(0.5, 2.0, len(y))
    model = OneRuleClassifier().fit(X, y, sample_weight=weights)
    features = model.binarizer_.transform(X).astype(bool)
    codes = np.searchsorted(model.classes_, y)
    assert model.certificate_.objective == pytest.approx(brute_force_mistakes(features, codes, weights) / weights.sum())
    assert model.certificate_.is_optimal and model.rule_list_.rules[0].conditions[0].startswith("age")


def test_the_command_line_serves_it(registered, table, tmp_path, capsys):
    data, saved = tmp_path / "data.csv", tmp_path / "model.json"
    table.to_csv(data, index=False)
    report = tmp_path / "report.html"
    assert main(["fit", str(data), "--target", "label", "--model", "onerule", "--one-rule-thresholds", "4",
                 "-o", str(saved), "--report", str(report), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "certified optimal" in out and "when age" in out and "features tried" in out
    model = load_model(saved.read_text())
    assert type(model).__name__ == "OneRule" and json.loads(saved.read_text())["format"] == "tests.OneRule"
    assert "when age" in report.read_text()
    # predict, export and report read the saved model through the registry
    assert main(["predict", str(saved), str(data), "--target", "label", "-o", str(tmp_path / "p.csv")]) == 0
    predicted = pd.read_csv(tmp_path / "p.csv")["prediction"]
    assert (predicted.to_numpy() == model.predict(table.drop(columns="label"))).all()
    capsys.readouterr()
    assert main(["export", str(saved), "--to", "python", "-o", str(tmp_path / "m.py")]) == 0
    namespace = {}
    exec((tmp_path / "m.py").read_text(), namespace)
    rows = table.drop(columns="label").to_dict("records")
    assert [namespace["predict"](row) for row in rows[:50]] == list(predicted[:50])
    assert main(["export", str(saved), "--to", "sql"]) == 0 and "SELECT" in capsys.readouterr().out.upper()
    assert main(["report", str(saved), str(data), "--target", "label", "-o", str(tmp_path / "r.html")]) == 0
    assert main(["bench", str(data), "--target", "label", "--model", "onerule", "-o", str(tmp_path / "b.json")]) == 0
    assert json.loads((tmp_path / "b.json").read_text())[0]["status"] == "optimal"
    # the options of other families are refused for it, with the families that take them
    with pytest.raises(SystemExit, match="--class-weight: only for --model rulelist and ruleset, not --model onerule"):
        main(["fit", str(data), "--target", "label", "--model", "onerule", "--class-weight", "balanced"])


def test_the_web_app_serves_it(registered, table):
    pytest.importorskip("httpx2")
    from starlette.testclient import TestClient

    from optrules.web.app import create_app
    from optrules.web.runs import RunManager

    app = create_app(RunManager(workers=1, max_upload_bytes=2 * 2**20), allowed_hosts=["testserver"])
    with TestClient(app, headers={"Origin": "http://testserver"}) as client:
        listed = {f["name"]: f for f in client.get("/api/families").json()}
        assert [p["name"] for p in listed["onerule"]["parameters"]] == ["n_thresholds", "block", "max_rules", "forbidden",
                                                                        "required"]
        key = client.post("/api/uploads", files={"file": ("t.csv", io.BytesIO(table.to_csv(index=False).encode()),
                                                          "text/csv")}).json()["key"]
        refused = client.post("/api/runs", json={"table": key, "target": "label", "model": "onerule",
                                                 "params": {"n_thresholds": 0}})
        assert refused.status_code == 400 and "n_thresholds" in refused.json()["error"]
        submitted = client.post("/api/runs", json={"table": key, "target": "label", "model": "onerule",
                                                   "params": {"n_thresholds": 4, "time_limit": 30,
                                                              "missing_as_category": True}})
        assert submitted.status_code == 201, submitted.text
        run_id = submitted.json()["id"]
        deadline = time.time() + 60
        while (run := client.get(f"/api/runs/{run_id}").json())["status"] not in ("done", "failed", "cancelled"):
            assert time.time() < deadline, run
            time.sleep(0.05)
        assert run["status"] == "done", run
        assert run["result"]["text"].startswith("when age") and run["result"]["certificate"]["status"] == "optimal"
        model = load_model(client.get(f"/api/runs/{run_id}/model.json").text)
        assert str(model) == run["result"]["text"]


def test_a_parameter_added_to_its_table_reaches_fit_the_command_line_and_the_form(registered, table, tmp_path,
                                                                                   capsys):
    """``block`` is declared in the family's table (and taken by ``__init__``) and nowhere else: its entry
    in the registry names it neither as an option nor as a field."""
    from onerule_family.estimator import OneRuleClassifier
    from onerule_family.family import FAMILY

    from optrules.parameters import ParameterError
    from optrules.web.runs import InputError, build_estimator

    assert "block" not in {o.name for o in FAMILY.cli_options} | {f.name for f in FAMILY.form_fields}
    X, y = table.drop(columns="label"), table["label"]
    with pytest.raises(ParameterError, match="block must be a whole number in \\[1, 64\\], got 0"):
        OneRuleClassifier(block=0).fit(X, y)
    events = []
    OneRuleClassifier(block=2, verbose=lambda trace, event: events.append(event.work)).fit(X, y)
    assert [w for w in events if w][:3] == [2, 4, 6]  # (the solver reports a block of 2 at a time)
    data = tmp_path / "data.csv"
    table.to_csv(data, index=False)
    assert main(["fit", str(data), "--target", "label", "--model", "onerule", "--block", "3", "--quiet"]) == 0
    capsys.readouterr()
    with pytest.raises(SystemExit):
        main(["fit", str(data), "--target", "label", "--model", "onerule", "--block", "0"])
    assert "--block: expected a whole number in [1, 64]" in capsys.readouterr().err
    assert build_estimator("onerule", {"block": 5}, None).block == 5
    with pytest.raises(InputError, match="block must be a whole number in \\[1, 64\\]"):
        build_estimator("onerule", {"block": 100}, None)


def test_given_every_capability_it_is_still_one_package_and_one_registry_line(registered, table, tmp_path, capsys):
    """Several classes, weights, constraints and n_jobs, declared by its estimator alone: the registry reads
    them (no flag in its entry), and the command line and the web form offer them."""
    from onerule_family.estimator import OneRuleClassifier

    from optrules.families import family
    from optrules.web.runs import build_estimator

    found = family("onerule")
    assert (found.multiclass, found.sample_weight, found.constraints, found.n_jobs) == (True, True, True, True)
    assert not found.class_weight and not found.fairness and not found.rashomon
    X, y = table.drop(columns="label"), table["label"].to_numpy().copy()
    y[::7] = "unsure"  # three classes
    weights = np.random.default_rng(1).uniform(0.5, 2.0, len(y))
    free = OneRuleClassifier().fit(X, y, sample_weight=weights)
    assert len(free.classes_) == 3 and free.rule_list_.rules[0].conditions[0].startswith("age")
    # constraints: the certificate is the exact optimum over the rules they allow
    no_age = OneRuleClassifier(forbidden="age").fit(X, y, sample_weight=weights)
    features = no_age.binarizer_.transform(X).astype(bool)
    allowed = np.array([not name.startswith("age") for name in no_age.binarizer_.feature_names_])
    codes = np.searchsorted(no_age.classes_, y)
    expected = brute_force_mistakes(features[:, allowed], codes, weights) / weights.sum()
    assert no_age.certificate_.is_optimal and no_age.certificate_.objective == pytest.approx(expected)
    assert not no_age.rule_list_.rules[0].conditions[0].startswith("age")
    colour = OneRuleClassifier(required="colour").fit(X, y)
    assert colour.rule_list_.rules[0].conditions[0].startswith("colour")
    none = OneRuleClassifier(max_rules=0).fit(X, y)
    assert none.rule_list_.rules == [] and none.certificate_.is_optimal
    with pytest.raises(ValueError, match="no single rule can use every required name"):
        OneRuleClassifier(required=["colour", "age"]).fit(X, y)
    # n_jobs: the same rule and certificate on any number of threads
    one, two = (OneRuleClassifier(n_jobs=n, block=3).fit(X, y, sample_weight=weights) for n in (1, 2))
    assert str(one.rule_list_) == str(two.rule_list_) and one.certificate_.objective == two.certificate_.objective
    # the front ends offer them
    data = tmp_path / "data.csv"
    table.assign(label=y).to_csv(data, index=False)
    assert main(["fit", str(data), "--target", "label", "--model", "onerule", "--forbid", "age", "--n-jobs", "2",
                 "--quiet"]) == 0
    assert "when age" not in capsys.readouterr().out
    fields = {parameter.name for parameter in found.form}
    assert {"max_rules", "forbidden", "required"} <= fields
    assert build_estimator("onerule", {"forbidden": "age"}, None).forbidden == ["age"]
