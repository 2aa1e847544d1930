"""Warnings point at the user's line, whatever the path through the library (an estimator's fit, the
binarizer it calls through scikit-learn's output wrapper, the file reader, the parameters' checks)."""

import warnings

import numpy as np
import pandas as pd
import pytest

from optrules import RuleListClassifier, RuleSetClassifier
from optrules.data.binarize import Binarizer
from optrules.data.tables import read_table


def _caught(call) -> list[warnings.WarningMessage]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    assert caught, "no warning"
    return caught


@pytest.fixture
def table():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"age": rng.integers(18, 70, 300).astype(float), "city": rng.choice(["a", "b"], 300),
                          "customer_id": np.arange(300) + 1000})
    frame.loc[::7, "age"] = np.nan
    return frame, (frame["city"] == "a").to_numpy().astype(int)


@pytest.mark.parametrize("call", [
    lambda frame, y: RuleListClassifier(regularization=0.01, max_nodes=100).fit(frame, y),
    lambda frame, y: RuleSetClassifier(time_limit=5).fit(frame, y),
    lambda frame, y: Binarizer().fit_transform(frame),
    lambda frame, y: RuleListClassifier(regularization=1e-7, max_nodes=10).fit(frame, y),
])
def test_a_fits_warnings_name_the_users_line(table, call):
    frame, y = table
    caught = _caught(lambda: call(frame, y))
    assert {w.filename for w in caught} == {__file__}, [(w.filename, w.lineno, str(w.message)[:60]) for w in caught]


def test_the_readers_warning_names_the_users_line(tmp_path):
    path = tmp_path / "census.csv"
    path.write_text("age,work\n39,State-gov\n50,?\n38,Private\n")
    caught = _caught(lambda: read_table(path))
    assert [w.filename for w in caught] == [__file__] and "read as missing" in str(caught[0].message)
