"""The HTML report: self-contained, escaped, and its numbers computed independently."""

from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest

from optrules.cli import main
from optrules.estimators import FallingRuleListClassifier, RuleListClassifier, RuleSetClassifier
from optrules.report import group_table, html_report

EVIL = "<script>alert(1)</script>"


class Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.attributes, self.text = [], [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attributes += attrs

    def handle_data(self, data):
        self.text.append(data)


def table(seed=0, n=400):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"age": rng.integers(18, 70, n), EVIL: rng.choice(["a", "b", EVIL], n),
                      "group": rng.choice(["g1", "g2", "g3"], n)})
    y = np.where((X["age"] < 30) ^ (rng.random(n) < 0.2), "yes", "no")
    return X, y


@pytest.mark.parametrize("estimator", [RuleListClassifier(regularization=0.01), FallingRuleListClassifier(),
                                       RuleSetClassifier(complexity=6, time_limit=30)], ids=lambda e: type(e).__name__)
def test_a_report_per_family(estimator):
    X, y = table()
    fitted = estimator.fit(X, y)
    html = html_report(fitted.rule_list_, fitted.certificate_, X, y, groups={"group": X["group"]})
    parsed = Tags()
    parsed.feed(html)
    assert "script" not in parsed.tags and EVIL not in html  # escaped wherever it appears
    assert EVIL in "".join(parsed.text)  # ... and shown as text
    external = [value for name, value in parsed.attributes if name in ("src", "href") and value]
    assert not external
    # (a ladder whose larger rung found a better list unfinished: what is proven, in its sentence)
    verdict = ("Certified optimal" if fitted.certificate_.is_optimal else "Better than every list"
               if "proven" in fitted.certificate_.counters else "Not proven optimal")
    assert verdict in html and str(fitted.rule_list_).split("\n")[0] in "".join(parsed.text)
    # accuracy by group, computed here without the report's code
    predicted = fitted.predict(X)
    for value, rows in X.groupby("group").groups.items():
        accuracy = float(np.mean(predicted[rows] == y[rows]))
        assert f"{accuracy:.4f}" in html, value


def test_a_report_escapes_like_the_terminal():
    """A value holding a right-to-left override (U+202E shows "evil" as "live") or a terminal escape reaches
    neither the page nor its text raw, in the data, rules and accuracy tables: each is written as its
    escape, as the terminal shows it."""
    rng = np.random.default_rng(1)
    n = 300
    trick, ansi = "\u202elive", "\x1b[31mred"
    X = pd.DataFrame({"name\u202e": rng.choice([trick, "plain"], n), "colour": rng.choice([ansi, "blue"], n)})
    y = np.where((X["name\u202e"] == trick) ^ (rng.random(n) < 0.1), "yes", "no")
    fitted = RuleListClassifier(regularization=0.01).fit(X, y)
    assert any("\u202e" in name for name in fitted.rule_list_.used_features())  # the rule uses the tricky column
    html = html_report(fitted.rule_list_, fitted.certificate_, X, y,
                       groups={"colour": X["colour"], "name\u202e": X["name\u202e"]})
    assert "\u202e" not in html and "\x1b" not in html
    text = "".join(_parsed(html).text)
    assert "\\u202elive" in text and "\\x1b[31mred" in text and "name\\u202e" in text
    assert "\u202e" not in fitted._repr_html_() and "\u202e" not in fitted.certificate_._repr_html_()


def _parsed(html):
    parsed = Tags()
    parsed.feed(html)
    return parsed


def test_group_rates_against_a_direct_count():
    X, y = table(1)
    model = RuleListClassifier(regularization=0.01).fit(X, y)
    weights = np.random.default_rng(2).uniform(0.5, 2.0, len(y))
    frame = group_table(model.rule_list_, X, y, {"group": X["group"]}, weights)
    predicted = model.predict(X)
    for _, row in frame[frame["group"] == "group"].iterrows():
        mask = (X["group"] == row["value"]).to_numpy()
        negatives = mask & (y == "no")
        fpr = weights[negatives & (predicted == "yes")].sum() / weights[negatives].sum()
        assert row["false positive rate"] == pytest.approx(fpr)
        assert row["rows"] == mask.sum()
        assert row["accuracy"] == pytest.approx(weights[mask & (predicted == y)].sum() / weights[mask].sum())


def test_a_gap_is_reported_as_a_gap():
    X, y = table(3, 2000)
    model = RuleListClassifier(regularization=0.0005, max_nodes=50, thresholds="quantile", max_card=2).fit(X, y)
    assert not model.certificate_.is_optimal
    html = html_report(model.rule_list_, model.certificate_, X, y)
    assert "Not proven optimal" in html and f"{model.certificate_.gap:.9f}" in html


def test_command_line_reports(tmp_path, capsys):
    X, y = table(4)
    data = tmp_path / "d.csv"
    X.assign(label=y).to_csv(data, index=False)
    out, page = tmp_path / "m.json", tmp_path / "fit.html"
    assert main(["fit", str(data), "--target", "label", "--drop", "group", "-o", str(out), "--report", str(page),
                 "-q"]) == 0
    assert "Certified optimal" in page.read_text()
    second = tmp_path / "r.html"
    # a column left out of the features can still split the accuracy table
    assert main(["report", str(out), str(data), "--target", "label", "--drop", "group", "--group", "group",
                 "-o", str(second)]) == 0
    text = second.read_text()
    assert all(value in text for value in ("g1", "g2", "g3")) and "Certified optimal" in text
    with pytest.raises(SystemExit, match="not a column"):
        main(["report", str(out), str(data), "--target", "label", "--group", "nope", "-o", str(second)])
    assert main(["report", str(out), "-o", str(second)]) == 0  # the model alone: rules and certificate
    assert "Accuracy" not in second.read_text() and "Certificate" in second.read_text()


def test_the_estimator_writes_its_report():
    X, y = table(5)
    model = FallingRuleListClassifier().fit(X, y)
    page = model.report(X, y, groups={"group": X["group"]}, title="falling")
    assert "<title>falling</title>" in page and "false positive rate" in page
    assert f"{model.score(X, y):.4f}" in page  # the all-rows accuracy is the estimator's score
