"""Cross-validation under a fairness constraint: each fold's fit takes its training part's groups, the
table adds each candidate's gap on the test parts, the refit meets the constraint on every row."""

from fractions import Fraction

import numpy as np
import pytest
from sklearn.model_selection import StratifiedKFold
from test_fair_estimator import _table

from optrules import RuleListClassifier, RuleSetClassifier
from optrules.corels.model_selection import RuleListCV
from optrules.fairness.metrics import exact_unfairness
from optrules.rulesets.model_selection import RuleSetCV


def test_a_rule_list_s_lambda_chosen_under_the_constraint():
    X, y = _table(3, 160)
    base = RuleListClassifier(fairness="equal_opportunity", max_unfairness=0.05)
    cv = RuleListCV([0.05, 0.01], base, cv=3).fit(X, y, sensitive="group")
    group = (X["group"] == "b").to_numpy().astype(int)
    features = X.drop(columns="group")
    for k, value in enumerate([0.05, 0.01]):  # each fold's fit, by hand
        scores, gaps = [], []
        for train, test in StratifiedKFold(3).split(features, y):
            model = RuleListClassifier(regularization=value, fairness="equal_opportunity", max_unfairness=0.05).fit(
                features.iloc[train], y[train], sensitive=X["group"].to_numpy()[train])
            predicted = model.predict(features.iloc[test])
            scores.append(np.mean(predicted == y[test]))
            gaps.append(float(exact_unfairness(y[test], group[test], None, predicted == 1, "equal_opportunity")))
        assert cv.cv_results_["mean_test_score"][k] == pytest.approx(np.mean(scores))
        assert cv.cv_results_["mean_test_unfairness"][k] == pytest.approx(np.mean(gaps))
    refit = cv.best_estimator_.predict(features) == 1
    assert exact_unfairness(y, group, None, refit, "equal_opportunity") <= Fraction(1, 20)
    assert cv.regularization_ in (0.05, 0.01) and cv.certificate_.counters["fairness"] == "equal_opportunity"


def test_a_rule_set_s_complexity_chosen_under_the_constraint():
    X, y = _table(5, 160)
    base = RuleSetClassifier(max_card=2, fairness="predictive_equality", max_unfairness=0.05)
    cv = RuleSetCV([3, 6], base, cv=3).fit(X, y, sensitive="group")
    assert len(cv.cv_results_["mean_test_unfairness"]) == len(cv.cv_results_["complexity"]) >= 2
    group = (X["group"] == "b").to_numpy().astype(int)
    refit = cv.best_estimator_.predict(X.drop(columns="group")) == 1
    assert exact_unfairness(y, group, None, refit, "predictive_equality") <= Fraction(1, 20)


def test_the_command_line_cross_validates_under_the_constraint(tmp_path, capsys):
    from optrules.cli import main

    X, y = _table(3, 160)
    path = tmp_path / "table.csv"
    X.assign(label=y).to_csv(path, index=False)
    assert main(["fit", str(path), "--target", "label", "--cv", "3", "-r", "0.05", "0.01", "--fairness",
                 "equal_opportunity", "--max-unfairness", "0.05", "--sensitive", "group"]) == 0
    out = capsys.readouterr().out
    assert "test gap" in out and "equal opportunity gap between a and b is at most 0.05" in " ".join(out.split())
    with pytest.raises(SystemExit, match="one bound with --cv"):
        main(["fit", str(path), "--target", "label", "--cv", "3", "-r", "0.05", "0.01", "--fairness",
              "equal_opportunity", "--max-unfairness", "0.05", "0.1", "--sensitive", "group"])
