import numpy as np
import pandas as pd
from conftest import shared_path

from optrules.data.datasets import load_compas, load_dataset


def test_compas_feature_set_a():
    data = load_compas("A")
    assert len(data.X) == len(data.y) == 6907  # the paper's row count
    assert list(data.X.columns) == ["sex", "age", "juvenile-felonies", "juvenile-misdemeanors", "juvenile-crimes", "priors"]
    assert set(data.X["age"]) == {"18-20", "21-22", "23-25", "26-45", ">45"}
    assert set(data.X["priors"]) == {"0", "1", "2-3", ">3"}
    assert set(data.X["juvenile-crimes"]) == {"0", ">0"}
    assert not data.X.isna().any().any()


def test_compas_matches_raw_file():
    raw = pd.read_csv(shared_path("data", "compas", "compas-scores-two-years.csv"))
    raw = raw[raw["days_b_screening_arrest"].notna()].reset_index(drop=True)
    data = load_compas("A")
    np.testing.assert_array_equal(data.y, raw["two_year_recid"])
    np.testing.assert_array_equal(data.X["priors"] == ">3", raw["priors_count"] > 3)
    np.testing.assert_array_equal(data.X["age"] == "21-22", raw["age"].between(21, 22))
    juvenile = raw["juv_fel_count"] + raw["juv_misd_count"] + raw["juv_other_count"]
    np.testing.assert_array_equal(data.X["juvenile-crimes"] == ">0", juvenile > 0)


def test_compas_feature_set_b_adds_race():
    data = load_dataset("compas-B")
    assert set(data.X["race"]) == {"African-American", "Caucasian", "Hispanic", "Other"}
    assert (data.X["race"] == "Other").sum() == (np.isin(data.extra["race"], ["Other", "Asian", "Native American"])).sum()


def test_compas_propublica_rows_are_the_analysis_filters():
    raw = pd.read_csv(shared_path("data", "compas", "compas-scores-two-years.csv"))
    kept = raw[raw["days_b_screening_arrest"].between(-30, 30) & (raw["is_recid"] != -1)
               & (raw["c_charge_degree"] != "O") & (raw["score_text"] != "N/A")]
    data = load_dataset("compas-B-propublica")
    assert len(data.y) == len(kept) == 6172  # ProPublica's count
    np.testing.assert_array_equal(data.y, kept["two_year_recid"])
    assert "race" in data.X.columns and data.name == "compas-B-propublica"


def test_unknown_dataset_variants_are_clear_errors():
    import pytest

    for name in ("bank-x", "compas-A-corels-x", "compas-C", "compas-A-everyone", "nothing"):
        with pytest.raises(ValueError, match="unknown dataset|feature_set|rows"):
            load_dataset(name)
