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
