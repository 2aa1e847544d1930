import json
import warnings

import numpy as np
import pandas as pd
import pytest

from optrules.data.binarize import Binarizer, cut, interval_labels


@pytest.fixture
def frame():
    return pd.DataFrame(
        {
            "sex": ["Male", "Female", "Male", "Male", "Female", "Male"],
            "age": [19, 22, 30, 50, 24, 18],
            "score": [0.5, 1.5, 2.5, 3.5, 4.5, 5.5],
            "flag": [0, 1, 1, 0, 0, 1],
        }
    )


def test_categorical_bins_thresholds_and_zero_one(frame):
    b = Binarizer(bins={"age": [18, 21, 23, 26, 46]}, n_thresholds=1).fit(frame)
    names = b.feature_names_
    assert names[:2] == ["sex=Female", "sex=Male"]
    assert "age=18-20" in names and "age=21-22" in names and "age>45" in names
    assert "age=26-45" in names and "age=23-25" in names
    assert "flag" in names
    assert "score<=2.5" in names and "score>2.5" in names
    Z = b.transform_frame(frame)
    np.testing.assert_array_equal(Z["age=18-20"], frame["age"].between(18, 20))
    np.testing.assert_array_equal(Z["age>45"], frame["age"] > 45)
    np.testing.assert_array_equal(Z["sex=Male"], frame["sex"] == "Male")
    np.testing.assert_array_equal(Z["score<=2.5"], frame["score"] <= 2.5)
    np.testing.assert_array_equal(Z["score>2.5"], ~(frame["score"] <= 2.5))
    np.testing.assert_array_equal(Z["flag"], frame["flag"] == 1)
    # one-hot groups are exclusive, threshold features combine freely
    groups = dict(zip(names, b.groups_))
    assert groups["sex=Male"] == groups["sex=Female"] >= 0
    assert groups["age=18-20"] == groups["age>45"] >= 0
    assert groups["score<=2.5"] == -1


def test_zero_one_columns_of_a_headerless_file_name_their_value(frame):
    # columns 0, 1, 2, 3 as pandas's read_csv(header=None) names them: a rule "if (3)" would read as the number
    numbered = frame.set_axis([str(k) for k in range(frame.shape[1])], axis=1)
    b = Binarizer(n_thresholds=1).fit(numbered)
    assert "3=1" in b.feature_names_ and "3" not in b.feature_names_
    np.testing.assert_array_equal(b.transform_frame(numbered)["3=1"], frame["flag"] == 1)
    assert "flag" in Binarizer(n_thresholds=1).fit(frame).feature_names_  # a named column keeps its name


def test_interval_labels_follow_the_paper():
    assert interval_labels([1, 2, 4], integer=True, lowest=0) == ["0", "1", "2-3", ">3"]
    assert interval_labels([18, 21], integer=True, lowest=18) == ["<18", "18-20", ">20"]
    assert interval_labels([1.5, 2.5], integer=False) == ["<1.5", "[1.5,2.5)", ">=2.5"]
    s = cut(pd.Series([0, 1, 2, 3, 4, 9], name="priors"), [1, 2, 4])
    assert list(s) == ["0", "1", "2-3", "2-3", ">3", ">3"]


def test_negations(frame):
    b = Binarizer(negations=True, n_thresholds=1).fit(frame)
    Z = b.transform_frame(frame)
    np.testing.assert_array_equal(Z["not sex=Male"], ~Z["sex=Male"])
    np.testing.assert_array_equal(Z["not flag"], ~Z["flag"])
    assert not any(n.startswith("not score") for n in b.feature_names_)  # thresholds come in both directions


def test_unknown_category_maps_to_all_zero(frame):
    b = Binarizer().fit(frame)
    new = frame.head(2).copy()
    new["sex"] = ["Other", "Male"]
    Z = b.transform_frame(new)
    assert not Z.loc[0, ["sex=Female", "sex=Male"]].any()
    assert Z.loc[1, "sex=Male"]


def test_missing_values_error_names_the_column(frame):
    frame.loc[2, "age"] = np.nan
    with pytest.raises(ValueError, match=r"column 'age' has 1 missing.*missing='category'"):
        Binarizer(missing="error").fit(frame)


def test_missing_as_category(frame):
    frame.loc[2, "age"] = np.nan
    frame["sex"] = frame["sex"].astype(object)
    frame.loc[3, "sex"] = None
    b = Binarizer(missing="category", bins={"age": [21]}).fit(frame)
    Z = b.transform_frame(frame)
    assert Z["age=missing"].tolist() == [False, False, True, False, False, False]
    assert Z["sex=missing"].tolist() == [False, False, False, True, False, False]
    assert not Z.loc[2, [n for n in b.feature_names_ if n.startswith("age") and n != "age=missing"]].any()


def test_infinite_values_rejected(frame):
    frame["score"] = frame["score"].astype(float)
    frame.loc[1, "score"] = np.inf
    with pytest.raises(ValueError, match=r"column 'score' has 1 infinite"):
        Binarizer().fit(frame)


def test_columns_checked_at_transform(frame):
    b = Binarizer().fit(frame)
    with pytest.raises(ValueError, match=r"missing columns seen at fit time: \['flag'\]"):
        b.transform(frame.drop(columns=["flag"]))
    with pytest.raises(ValueError, match=r"unknown columns not seen at fit time: \['extra'\]"):
        b.transform(frame.assign(extra=1))
    # column order does not matter
    np.testing.assert_array_equal(b.transform(frame[frame.columns[::-1]]), b.transform(frame))


def test_empty_data_rejected():
    with pytest.raises(ValueError, match="empty"):
        Binarizer().fit(pd.DataFrame({"a": []}))


def test_dict_roundtrip_transforms_identically(frame):
    b = Binarizer(bins={"age": [21, 46]}, negations=True, n_thresholds=3).fit(frame)
    again = Binarizer.from_dict(json.loads(json.dumps(b.to_dict())))
    assert again.feature_names_ == b.feature_names_
    np.testing.assert_array_equal(again.transform(frame), b.transform(frame))


def test_arrays_get_positional_names():
    b = Binarizer(n_thresholds=1).fit(np.array([[1.0, 0.0], [2.0, 1.0], [3.0, 1.0]]))
    assert b.feature_names_ == ["x0<=2", "x0>2", "x1"]


def test_transform_of_chosen_features_matches_the_full_one(frame):
    b = Binarizer(negations=True).fit(frame)
    full = b.transform_frame(frame)
    chosen = [b.feature_names_[-1], b.feature_names_[0], b.feature_names_[3]]
    pd.testing.assert_frame_equal(b.transform_frame(frame, chosen), full[chosen])
    assert b.transform(frame, []).shape == (len(frame), 0)
    with pytest.raises(ValueError, match="not made by this binarizer"):
        b.transform(frame, ["age<=1000"])
    with pytest.raises(ValueError, match="missing columns"):  # every column is still checked
        b.transform(frame.drop(columns=["flag"]), chosen[:1])


def test_a_column_with_every_value_missing(frame):
    frame = frame.assign(empty=np.nan)
    with pytest.raises(ValueError, match="missing"):
        Binarizer(missing="error").fit(frame)
    b = Binarizer(missing="category").fit(frame)
    assert [name for name in b.feature_names_ if name.startswith("empty")] == ["empty=missing"]
    assert b.transform_frame(frame)["empty=missing"].all()


@pytest.mark.parametrize("values, expected", [
    (pd.Series([0, 1, 1, 0]), True),
    (pd.Series([0.0, 1.0, np.nan]), True),
    (pd.Series([0, 1, None], dtype="Int64"), True),
    (pd.Series([0.0, 1.0, None], dtype="Float64"), True),
    (pd.Series([True, False]), True),
    (pd.Series([0, 2, 1]), False),
    (pd.Series([0.0, 1.0, 0.5]), False),
    (pd.Series([np.nan, np.nan]), False),
    (pd.Series(["0", "1"]), False),
    (pd.Series([1, 1, 1], dtype="Int64"), True),
])
def test_zero_one_columns_are_recognised(values, expected):
    from optrules.data.binarize import _is_zero_one

    assert _is_zero_one(values) is expected


def _pandas_truth(feature, column: pd.Series) -> np.ndarray:
    """A feature's truth value the plain way, one pandas comparison per feature (what the shared
    :class:`ColumnValues` must reproduce)."""
    missing = column.isna().to_numpy()
    if feature.kind == "missing":
        truth = missing
    elif feature.kind == "equals":
        truth = (column == feature.value).to_numpy(dtype=bool, na_value=False)
    elif feature.kind == "binary":
        truth = (column.astype("float64") == 1.0).to_numpy(dtype=bool, na_value=False)
    else:
        values = column.to_numpy(dtype="float64", na_value=np.nan)
        with np.errstate(invalid="ignore"):
            truth = {"le": values <= feature.value, "gt": values > feature.value,
                     "interval": (values >= feature.value) & (values < (feature.upper or 0))}[feature.kind]
        truth = truth & ~missing
    return ~truth if feature.negated else truth


@pytest.mark.parametrize("seed", range(8))
def test_shared_column_values_give_each_feature_what_pandas_compares(seed):
    """Features of one column share its codes and numbers: equal values of other types (1, 1.0, True),
    text with spaces, categoricals, nullable integers, missing values, and values unseen at fit time."""
    rng = np.random.default_rng(seed)
    n = 300
    pools = {
        "objects": np.array([1, 1.0, True, "b", "a", "a ", 2.5, None], dtype=object),
        "text": np.array(["x", "y", " y", "z", None], dtype=object),
        "ints": np.arange(6),
    }
    frame = pd.DataFrame({
        "objects": rng.choice(pools["objects"], n),
        "text": pd.Series(rng.choice(pools["text"], n), dtype="string"),
        "category": pd.Categorical(rng.choice(["p", "q", "r"], n)),
        "ints": rng.choice(pools["ints"], n),
        "nullable": pd.array(np.where(rng.random(n) < 0.2, None, rng.integers(0, 4, n)), dtype="Int64"),
        "flag": rng.integers(0, 2, n).astype(bool),
        "measure": np.where(rng.random(n) < 0.1, np.nan, rng.normal(size=n)),
    })
    fitted = Binarizer(categorical=["objects", "ints"], missing="category", negations=True,
                       bins={"nullable": [1, 2]}, identifiers="keep").fit(frame.iloc[: n // 2])
    new = frame.iloc[n // 2:]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # values unseen at fit time are warned about; tested elsewhere
        out = fitted.transform(new)
    for j, feature in enumerate(fitted.features_):
        np.testing.assert_array_equal(out[:, j], _pandas_truth(feature, new[feature.column]), err_msg=feature.name)
    # a chosen subset, out of the table's column order, gives the same columns
    chosen = fitted.feature_names_[::-3]
    np.testing.assert_array_equal(fitted.transform(new, chosen),
                                  out[:, [fitted.feature_names_.index(name) for name in chosen]])


def test_a_stop_leaves_the_columns_not_yet_read_without_features(frame):
    asked = []

    def should_stop():
        asked.append(1)
        return len(asked) == 3  # heard before the fourth column is read, once only

    with pytest.warns(UserWarning, match="1 of 4 columns get no feature"):
        fitted = Binarizer(n_thresholds=1).fit(frame, should_stop=should_stop)
    assert fitted.unread_columns_ == ["flag"]
    assert {f.column for f in fitted.features_} == {"sex", "age", "score"}
    assert set(fitted.dropped_columns_) == {"flag"}
    # a stop that holds (a budget's) is heard again between the columns' features: those read but not yet
    # made get none either
    asked.clear()
    with pytest.warns(UserWarning, match="3 of 4 columns get no feature"):
        fitted = Binarizer(n_thresholds=1).fit(frame, should_stop=lambda: asked.append(1) or len(asked) >= 3)
    assert fitted.unread_columns_ == ["age", "score", "flag"]
    assert {f.column for f in fitted.features_} == {"sex"}
    assert set(fitted.dropped_columns_) == {"age", "score", "flag"}
    assert fitted.columns_ == list(frame.columns)  # all still required at transform time
    with pytest.raises(ValueError, match="missing columns"):
        fitted.transform(frame.drop(columns="flag"))
    restored = Binarizer.from_dict(json.loads(json.dumps(fitted.to_dict())))
    assert restored.unread_columns_ == ["age", "score", "flag"]
    np.testing.assert_array_equal(restored.transform(frame), fitted.transform(frame))
    # a stop asked at once is heard only once a column has given a feature
    with pytest.warns(UserWarning, match="3 of 4 columns"):
        at_once = Binarizer(n_thresholds=1).fit(frame, should_stop=lambda: True)
    assert at_once.feature_names_ == ["sex=Female", "sex=Male"]
