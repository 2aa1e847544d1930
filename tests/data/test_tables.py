"""One reader for the command line and the web app: the same file gives the same table in both."""

import pandas as pd
import pytest

from optrules.data.tables import TableError, read_table


def test_separators_bom_and_encodings(tmp_path):
    frame = pd.DataFrame({"city": ["Paris", "Lyon", "Nice"] * 5, "n": range(15), "y": [0, 1, 1] * 5})
    for sep in [",", ";", "\t", "|"]:
        path = tmp_path / "t.csv"
        path.write_text(frame.to_csv(sep=sep, index=False), encoding="utf-8-sig")  # with a byte-order mark
        read = read_table(path)
        assert list(read.columns) == ["city", "n", "y"] and read.equals(frame), sep
    latin = tmp_path / "latin.csv"
    latin.write_bytes(("city,y\n" + "Montr\xe9al,1\nParis,0\n" * 10).encode("latin-1"))
    assert read_table(latin)["city"][0] == "Montréal"  # guessed
    with pytest.raises(TableError, match="not utf-8 text"):
        read_table(latin, encoding="utf-8")  # told: no guess


def test_cli_and_web_read_alike(tmp_path):
    from optrules.cli import _read_table
    from optrules.web.runs import read_csv_upload

    path = tmp_path / "t.csv"
    path.write_text("a; b;y\n1; x;0\n2; z;1\n3; x;1\n", encoding="utf-8")
    assert _read_table(str(path)).equals(read_csv_upload("t.csv", path))
    assert list(read_table(path)["b"]) == ["x", "z", "x"]  # initial spaces skipped


@pytest.mark.parametrize("content,message", [(b"", "is empty"), (b"  \n\n", "is empty"),
                                              (b"\x00\x01" * 50, "binary data")])
def test_unreadable_files_say_why(tmp_path, content, message):
    path = tmp_path / "bad.csv"
    path.write_bytes(content)
    with pytest.raises(TableError, match=message):
        read_table(path, name="bad.csv")
    with pytest.raises(TableError, match="no such file"):
        read_table(tmp_path / "none.csv")
    with pytest.raises(TableError, match="is a folder"):
        read_table(tmp_path)


def test_equal_rows_are_exact_and_give_up_on_distinct_tables():
    """Rows equal in every column and label, each with its first row; values equal to Python but not to
    the binarizer (1, True, "1") stay apart, missing markers are one value; None once too many differ."""
    import numpy as np
    import pandas as pd

    from optrules.data.distinct import equal_rows

    frame = pd.DataFrame({"x": [1.0, 1.0, 2.0, 1.0, np.nan, np.nan, 1.0],
                          "t": pd.Series(["a", "a", "b", "a", None, np.nan, "a"], dtype=object),
                          "m": pd.Series([1, True, 1, 1, "1", "1", 1], dtype=object)})
    labels = np.array([0, 0, 0, 1, 1, 1, 0])
    first, group = equal_rows([frame[c] for c in frame], labels)
    assert first.tolist() == [0, 1, 2, 3, 4]
    assert group.tolist() == [0, 1, 2, 3, 4, 4, 0]
    rng = np.random.default_rng(0)
    big = pd.DataFrame({"a": rng.integers(0, 3, 5000), "b": rng.choice(["p", "q"], 5000)})
    y = rng.integers(0, 2, 5000)
    first, group = equal_rows([big.a, big.b], y)
    keys = list(zip(big.a, big.b, y))
    assert len(first) == len(set(keys)) == 12
    assert all(keys[i] == keys[first[g]] for i, g in enumerate(group))
    assert equal_rows([pd.Series(rng.normal(size=5000))], y, most_distinct=0.5) is None


def test_question_marks_are_read_as_missing_values_with_a_warning(tmp_path):
    """The UCI tables' '?' (census, heart) is a missing value, as pandas reads an empty cell: a warning
    names the columns; a column of numbers and '?' becomes numeric; a '?' inside a text is a text."""
    from optrules.data.tables import MissingMarkerWarning

    path = tmp_path / "census.csv"
    path.write_text("age, workclass, hours, note\n39, State-gov, 40, why?\n50, ?, ?, ok\n38, Private, 45, ?\n")
    with pytest.warns(MissingMarkerWarning, match=r"'\?' read as missing values: 'workclass' 1, 'hours' 1, 'note' 1"):
        frame = read_table(path)
    hostile = tmp_path / "hostile.csv"  # a column name holding a terminal escape: named with the escape escaped
    hostile.write_text("a\x1b[2J,b\n?,1\nx,2\n")
    with pytest.warns(MissingMarkerWarning) as heard:
        read_table(hostile)
    assert "'a\\x1b[2J' 1" in str(heard[0].message) and "\x1b" not in str(heard[0].message)
    assert frame["workclass"].isna().tolist() == [False, True, False]
    assert frame["hours"].dtype.kind == "f" and frame["hours"].tolist()[0] == 40
    assert frame["note"].tolist()[:2] == ["why?", "ok"] and pd.isna(frame["note"].iloc[2])
    clean = tmp_path / "clean.csv"
    clean.write_text("a,b\n1,x\n2,y\n")
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert read_table(clean)["b"].tolist() == ["x", "y"]


def test_a_space_separated_table_is_sniffed_after_the_usual_separators(tmp_path):
    """UCI's space-separated tables (German credit) read as columns, header or not; a space inside a value
    of a comma, tab or bar separated file does not make the space the separator."""
    from optrules.data.tables import sniff_separator

    rows = ["A11 6 A34 1169 1", "A12 48 A32 5951 2", "A14 12 A34 2096 1", "A11 42 A32 7882 1"]
    path = tmp_path / "german.data"
    path.write_text("\n".join(rows) + "\n")
    frame = read_table(path, header=False)
    assert frame.shape == (4, 5) and frame["x3"].tolist() == [1169, 5951, 2096, 7882]
    assert sniff_separator("city\tn\nNew York\t3\nLos Angeles\t4\n") == "\t"
    assert sniff_separator("city, n\nNew York, 3\nSan Jose, 4\n") == ","
    assert sniff_separator("a b|c\nx y|z\nu v|w\n") == "|"
    assert sniff_separator("one\ntwo\n") == ","


def test_the_command_lines_reader_is_public():
    import optrules

    assert optrules.read_table is read_table
