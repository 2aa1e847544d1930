import pandas as pd

from optrules.cli import main


def test_info(capsys):
    assert main(["info"]) == 0
    assert "compas" in capsys.readouterr().out


def test_mine_csv(tmp_path, capsys):
    path = tmp_path / "d.csv"
    pd.DataFrame({"color": ["red", "blue", "red", "green"] * 5, "size": list(range(20)), "label": [0, 1] * 10}).to_csv(path, index=False)
    assert main(["mine", str(path), "--target", "label", "--min-support", "0.1"]) == 0
    out = capsys.readouterr().out
    assert "color=red" in out and "size<=" in out


def test_mine_rejects_single_class_target(tmp_path, capsys):
    path = tmp_path / "d.csv"
    pd.DataFrame({"a": [1, 2, 3], "label": [1, 1, 1]}).to_csv(path, index=False)
    assert main(["mine", str(path), "--target", "label"]) == 2
    assert "single class" in capsys.readouterr().out
