"""A fit under a fairness constraint and its trade-off curve through the web app's API (issue 86)."""

from fractions import Fraction

import numpy as np
import pytest

pytest.importorskip("httpx2")
from test_web_api import strict_json, wait  # noqa: E402  (the helpers)

from optrules import RuleListClassifier, fairness_frontier  # noqa: E402
from optrules.data.datasets import load_compas  # noqa: E402

FAIR = {"regularization": 0.01, "fairness": "statistical_parity", "max_unfairness": 0.02, "time_limit": 60}


def _fair_run(client, params=FAIR, sensitive="sex"):
    body = {"table": "dataset:compas", "target": "two_year_recid", "model": "rulelist", "params": params,
            "sensitive": sensitive}
    response = client.post("/api/runs", json=body)
    assert response.status_code == 201, response.text
    return wait(client, response.json()["id"], 120)


def test_a_fit_under_a_fairness_constraint_is_the_library_s_and_its_curve_too(client):
    """The page's fit under statistical parity <= 0.02 between the sexes is the library's (the same list,
    objective and exact gap, sex not a feature); its trade-off curve over three bounds is
    fairness_frontier's, a point per bound, as strict JSON."""
    run = _fair_run(client)
    assert run["status"] == "done" and run["sensitive"] == "sex", run
    data = load_compas()
    X = data.X.drop(columns="sex")
    library = RuleListClassifier(regularization=0.01, fairness="statistical_parity", max_unfairness=0.02)
    library.fit(data.X, data.y, sensitive="sex")
    counters = run["result"]["certificate"]["counters"]
    assert counters["fairness"] == "statistical_parity" and counters["max_unfairness"] == "1/50"
    assert counters["unfairness"] == library.certificate_.counters["unfairness"]
    assert Fraction(counters["unfairness"]) <= Fraction(1, 50)
    assert run["result"]["text"] == str(library.rule_list_) and "sex" not in run["result"]["text"]
    assert run["result"]["certificate"]["objective"] == pytest.approx(library.certificate_.objective, abs=1e-12)
    assert run["result"]["training_accuracy"] == pytest.approx(np.mean(library.predict(X) == data.y))
    assert "statistical parity" in run["result"]["certificate_text"]

    response = client.post(f"/api/runs/{run['id']}/frontier", json={"params": {"bounds": "0.1, 0.02 0.05", "time_limit": 60}})
    assert response.status_code == 201, response.text
    assert response.json()["kind"] == "frontier" and response.json()["parent"] == run["id"]
    curve = wait(client, response.json()["id"], 180)
    assert curve["status"] == "done", curve
    result = strict_json(__import__("json").dumps(curve["result"]))
    expected = fairness_frontier(library, data.X, data.y, "sex", [0.02, 0.05, 0.1]).table(X, data.y)
    assert [p["max_unfairness"] for p in result["points"]] == [0.02, 0.05, 0.1]
    for got, want in zip(result["points"], expected):
        assert got["objective"] == pytest.approx(want["objective"], abs=1e-12) and got["status"] == want["status"]
        assert got["unfairness"] == pytest.approx(want["unfairness"]) and got["searched"] == want["searched"]
        assert got["training_accuracy"] == pytest.approx(want["test_accuracy"]) and got["unfairness"] <= got["max_unfairness"]
    objectives = [p["objective"] for p in result["points"]]
    assert objectives == sorted(objectives, reverse=True)  # a looser bound never costs more
    assert curve["message"].startswith("3 of 3 bounds")


def test_bad_fairness_requests_get_a_message(client):
    """Each wrong combination is refused when submitted, with what to change: the constraint without its
    column, the column without a constraint, the target or a many-valued column as the groups, a family
    without the constraint; the curve of a fit without one, wrong bounds; the Rashomon set of a fair fit."""
    base = {"table": "dataset:compas", "target": "two_year_recid", "model": "rulelist"}
    for params, sensitive, fragment in [
            (FAIR, "", "needs the sensitive column"), ({"regularization": 0.01}, "sex", "needs a fairness constraint"),
            (FAIR, "two_year_recid", "other than the target"), (FAIR, "age", "exactly two groups"),
            (FAIR, "nope", "other than the target"), (FAIR, 3, "sensitive must be"),
            ({**FAIR, "max_unfairness": 2}, "sex", "max_unfairness"), ({**FAIR, "fairness": "parity"}, "sex", "fairness")]:
        response = client.post("/api/runs", json={**base, "params": params, "sensitive": sensitive})
        assert response.status_code == 400 and fragment in response.json()["error"], (params, sensitive, response.text)
    response = client.post("/api/runs", json={**base, "model": "frl", "params": {}, "sensitive": "sex"})
    assert response.status_code == 400 and "does not take" in response.json()["error"], response.text

    plain = wait(client, client.post("/api/runs", json={**base, "params": {"regularization": 0.05}}).json()["id"])
    response = client.post(f"/api/runs/{plain['id']}/frontier", json={})
    assert response.status_code == 400 and "fairness constraint" in response.json()["error"]
    fair = _fair_run(client, {**FAIR, "max_unfairness": 0.1})
    url = f"/api/runs/{fair['id']}/frontier"
    for params, fragment in [({"bounds": "0.1, x"}, "bounds"), ({"bounds": [0.1, 2]}, "bounds"), ({"bounds": [True]}, "bounds"),
                             ({"bounds": [0.01] * 21}, "bounds"), ({"bounds": {"a": 1}}, "bounds"),
                             ({"time_limit": 0}, "time_limit"), ({"lambda": 1}, "not a setting")]:
        response = client.post(url, json={"params": params})
        assert response.status_code == 400 and fragment in response.json()["error"], (params, response.text)
    assert client.post("/api/runs/999/frontier", json={}).status_code == 404
    assert client.post(url, content=b"{}", headers={"Content-Type": "text/plain"}).status_code == 415
    response = client.post(f"/api/runs/{fair['id']}/rashomon", json={})
    assert response.status_code == 400 and "not available yet" in response.json()["error"]


def test_a_rule_set_under_a_fairness_constraint_from_the_page(client):
    """The rule set family takes the constraint too: its certificate says it is over the rule sets."""
    params = {"complexity": 6, "max_card": 2, "fairness": "equal_opportunity", "max_unfairness": 0.05, "time_limit": 60}
    body = {"table": "dataset:compas", "target": "two_year_recid", "model": "ruleset", "params": params, "sensitive": "sex"}
    response = client.post("/api/runs", json=body)
    assert response.status_code == 201, response.text
    run = wait(client, response.json()["id"], 120)
    assert run["status"] == "done", run
    counters = run["result"]["certificate"]["counters"]
    assert counters["fairness"] == "equal_opportunity" and Fraction(counters["unfairness"]) <= Fraction(1, 20)
    assert "rule sets (DNF) whose equal opportunity gap" in run["result"]["certificate_text"]
