"""``RuleListClassifier(fairness=..., max_unfairness=...).fit(X, y, sensitive=...)``: the model it returns
is the exhaustive optimum over its antecedents with free labels, its predictions meet the constraint on the
training rows, its certificate says so, and what a user gets wrong gets one clear error."""

import json
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from optrules import RuleListClassifier
from optrules.certificate import Certificate
from optrules.data import bitset
from optrules.fairness.bruteforce import best_fair_list
from optrules.fairness.metrics import METRICS, exact_unfairness


def _table(seed: int, n: int = 60):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({f"f{j}": rng.integers(0, 2, n) for j in range(3)})
    X["group"] = rng.choice(["a", "b"], n)
    y = ((X["f0"] == 1) ^ (rng.random(n) < 0.25) | (X["group"] == "b") & (rng.random(n) < 0.3)).astype(int)
    return X, y.to_numpy()


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("metric", METRICS)
def test_the_fit_is_the_exhaustive_fair_optimum_and_is_fair(seed, metric):
    X, y = _table(seed)
    weights = np.random.default_rng(seed).integers(1, 3, len(y)).astype(float) if seed % 2 else None
    model = RuleListClassifier(regularization=0.02, fairness=metric, max_unfairness=0.1, negations=False).fit(
        X, y, sample_weight=weights, sensitive="group")
    assert "group" not in model.feature_names_in_
    group = (X["group"] == "b").to_numpy().astype(int)
    captures = bitset.unpack(model.antecedents_.bits, len(y))
    expected = best_fair_list(captures, y, group, 0.02, metric, Fraction(1, 10), weights)
    c = model.certificate_
    assert c.is_optimal and c.objective == pytest.approx(expected, abs=1e-12)
    predicted = model.predict(X.drop(columns="group")) == 1
    assert exact_unfairness(y, group, weights, predicted, metric) <= Fraction(1, 10)
    assert Fraction(c.counters["unfairness"]) == exact_unfairness(y, group, weights, predicted, metric)
    w = np.ones(len(y)) if weights is None else weights
    assert c.objective == pytest.approx(w[predicted != (y == 1)].sum() / w.sum() + 0.02 * len(model.rule_list_.rules))
    assert (c.counters["sensitive_group_0"], c.counters["sensitive_group_1"]) == ("a", "b")
    cells = [c.counters[f"group_{g}_{kind}"] for g in (0, 1)
             for kind in ("true_positives", "false_positives", "false_negatives", "true_negatives")]
    assert sum(cells) == pytest.approx(w.sum())
    assert c.counters["group_1_true_positives"] == pytest.approx(w[predicted & (y == 1) & (group == 1)].sum())
    assert "between a and b is at most 0.1 (rules predict either class)" in str(c)
    saved = Certificate.from_dict(json.loads(json.dumps(c.to_dict())))  # (a model file keeps it whole)
    assert str(saved) == str(c)


def test_the_groups_may_be_given_as_values_and_a_tight_bound_costs_accuracy():
    X, y = _table(3, 120)
    groups = X.pop("group").to_numpy()
    loose = RuleListClassifier(regularization=0.01, fairness="statistical_parity", max_unfairness=1.0).fit(
        X, y, sensitive=groups)
    tight = RuleListClassifier(regularization=0.01, fairness="statistical_parity", max_unfairness=0.0).fit(
        X, y, sensitive=groups)
    assert loose.certificate_.objective <= tight.certificate_.objective
    assert Fraction(tight.certificate_.counters["unfairness"]) == 0


@pytest.mark.parametrize("params, fit, message", [
    ({}, {"sensitive": "group"}, "sensitive= is read with a fairness constraint only"),
    ({"fairness": "statistical_parity"}, {}, "fairness= needs the two groups"),
    ({"fairness": "statistical_parity"}, {"sensitive": "race"}, "not a column of X"),
    ({"fairness": "parity"}, {"sensitive": "group"}, "fairness"),
    ({"fairness": "statistical_parity", "max_unfairness": 1.5}, {"sensitive": "group"}, "max_unfairness"),
    ({"fairness": "statistical_parity"}, {"sensitive": ["a", "b", "c"] * 20}, "exactly two groups, got 3"),
    ({"fairness": "statistical_parity"}, {"sensitive": ["a", "b"] * 10}, "20 values for 60 rows"),
])
def test_what_a_user_gets_wrong_is_one_clear_error(params, fit, message):
    X, y = _table(0)
    with pytest.raises(ValueError, match=message):
        RuleListClassifier(**params).fit(X, y, **fit)


def test_a_constraint_needs_two_classes():
    X, y = _table(0)
    y = np.arange(len(y)) % 3
    with pytest.raises(ValueError, match="two classes"):
        RuleListClassifier(fairness="equal_opportunity").fit(X, y, sensitive="group")


def test_the_rashomon_set_of_a_fair_fit_says_it_is_not_available():
    X, y = _table(0)
    model = RuleListClassifier(fairness="statistical_parity").fit(X, y, sensitive="group")
    with pytest.raises(ValueError, match="not available yet"):
        model.rashomon_set(0.01)


def fit_and_predict_on_the_command_line(tmp_path, capsys, X, y, family_args, metric: str, bound: str) -> str:
    """``optrules fit`` under the constraint, then ``predict`` with the saved model (the groups' column left
    out, as the target is): the predictions meet the constraint exactly; returns what fit printed."""
    from optrules.cli import main

    path = tmp_path / "table.csv"
    X.assign(label=y).to_csv(path, index=False)
    model_file = tmp_path / "fair.json"
    assert main(["fit", str(path), "--target", "label", *family_args, "--fairness", metric,
                 "--max-unfairness", bound, "--sensitive", "group", "-o", str(model_file)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert f"{metric.replace('_', ' ')} gap between a and b is at most {bound}" in out
    assert json.loads(model_file.read_text())["sensitive"] == "group"
    scored = tmp_path / "scored.csv"
    assert main(["predict", str(model_file), str(path), "-o", str(scored)]) == 0
    predicted = pd.read_csv(scored)["prediction"].to_numpy() == 1
    group = (X["group"] == "b").to_numpy().astype(int)
    assert len(predicted) == len(y) and exact_unfairness(y, group, None, predicted, metric) <= Fraction(bound)
    return out


def test_the_command_line_fits_predicts_and_refuses(tmp_path, capsys):
    from optrules.cli import main

    X, y = _table(1, 200)
    out = fit_and_predict_on_the_command_line(tmp_path, capsys, X, y, ["-r", "0.02"], "equalized_odds", "0.08")
    assert "certified optimal" in out
    path = tmp_path / "table.csv"
    for argv, message in ((["--fairness", "statistical_parity"], "--fairness needs --sensitive"),
                          (["--sensitive", "group"], "--sensitive needs --fairness"),
                          (["--sensitive", "group", "--fairness", "statistical_parity", "--model", "frl"],
                           "--sensitive: only for --model rulelist and ruleset, not --model frl: with --fairness"),

                          (["--max-unfairness", "0.1"], "--max-unfairness bounds the gap of --fairness"),
                          (["--max-unfairness", "0.1", "0.2"], "--max-unfairness bounds the gap of --fairness")):
        with pytest.raises(SystemExit, match=message):
            main(["fit", str(path), "--target", "label", *argv])


def test_hostile_group_names_stay_on_one_escaped_line_and_in_the_model_file(tmp_path, capsys):
    """Group values from the data end up in the terminal, the certificate's line and the model file: a line
    break, a terminal escape or rich markup in one is shown escaped on the one line, and the file is JSON."""
    from optrules.cli import main

    X, y = _table(2, 200)
    hostile = "[bold red]a\x1b[31m</td>\r\nDROP TABLE x;--"
    X["group"] = X["group"].map({"a": hostile, "b": "b"})
    path, model_file = tmp_path / "hostile.csv", tmp_path / "m.json"
    X.assign(label=y).to_csv(path, index=False)
    assert main(["fit", str(path), "--target", "label", "--fairness", "statistical_parity", "--max-unfairness",
                 "0.1", "--sensitive", "group", "-o", str(model_file)]) == 0
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if "statistical parity gap between" in line)
    assert "\x1b" not in out and "\\x1b[31m" in line and "\\r\\nDROP TABLE x;--" in line and "[bold red]" in line
    saved = json.loads(model_file.read_text())
    assert hostile in (saved["certificate"]["counters"]["sensitive_group_0"], saved["certificate"]["counters"]["sensitive_group_1"])
    lines = str(Certificate.from_dict(saved["certificate"])).splitlines()
    assert not any(line.startswith("DROP TABLE") for line in lines) and any("\\r\\nDROP" in line for line in lines)


def test_several_bounds_on_the_command_line_draw_the_curve_in_the_report(tmp_path, capsys):
    """--max-unfairness with several bounds prints the certified optimum under each (fairness_frontier's),
    keeps the tightest bound's list, and the report shows the constraint, each group's confusion counts,
    the curve and the groups' rates; values from the data escaped."""
    from optrules import fairness_frontier
    from optrules.cli import main

    X, y = _table(2, 200)
    X["group"] = X["group"].map({"a": "<b>a</b>", "b": "b & c"})
    path = tmp_path / "table.csv"
    X.assign(label=y).to_csv(path, index=False)
    report, model_file = tmp_path / "report.html", tmp_path / "model.json"
    assert main(["fit", str(path), "--target", "label", "-r", "0.02", "--fairness", "statistical_parity",
                 "--max-unfairness", "0.2", "0.05", "0.1", "--sensitive", "group", "--report", str(report),
                 "-o", str(model_file)]) == 0
    out = capsys.readouterr().out
    expected = fairness_frontier(RuleListClassifier(regularization=0.02, fairness="statistical_parity"),
                                 X, y, "group", [0.05, 0.1, 0.2])
    for row in expected.table():
        assert f"{row['objective']:.6f}" in out
    tightest = expected.points[0].model
    saved = json.loads(model_file.read_text())
    assert saved["certificate"]["counters"]["max_unfairness"] == "1/20"
    assert saved["certificate"]["objective"] == pytest.approx(tightest.certificate_.objective, abs=1e-12)
    html = report.read_text()
    assert "<h2>Fairness</h2>" in html and "The trade-off curve (statistical parity)" in html
    assert html.count("<circle") == 6  # three bounds, the objective and the error on the data
    assert "&lt;b&gt;a&lt;/b&gt;" in html and "<b>a</b>" not in html and "b &amp; c" in html
    counters = tightest.certificate_.counters
    assert f"{int(counters['group_0_true_positives']):,}" in html
    assert html.count("group</td><td>&lt;b&gt;a&lt;/b&gt;") == 1  # the groups' rates, by the sensitive column


def test_a_budget_running_out_in_the_search_reads_as_a_time_budget(monkeypatch):
    """The fit's budget expiring during the fair search is the search's time limit, never an interrupt:
    the search reads its own clock and hears only a cancel from the budget (here the budget reads as expired
    from the moment the search starts; its own clock has time: the list is proven)."""
    from optrules.budget import Budget
    from optrules.fairness.search import FairListSolver

    searching, search = [], FairListSolver.search

    def marked(self):
        searching.append(True)
        return search(self)

    monkeypatch.setattr(FairListSolver, "search", marked)
    expired = Budget.expired
    monkeypatch.setattr(Budget, "expired", lambda self: bool(searching) or expired(self))
    X, y = _table(3, 200)
    model = RuleListClassifier(regularization=0.02, fairness="equal_opportunity", max_unfairness=0.05)
    model.fit(X, y, sensitive="group")
    assert model.certificate_.status == "optimal"
