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


def test_fit_bundled_and_save(tmp_path, capsys):
    out = tmp_path / "model.json"
    assert main(["fit", "--dataset", "compas", "--regularization", "0.02", "--output", str(out)]) == 0
    text = capsys.readouterr().out
    assert "if (priors>3) then predict yes" in text and "certified optimal" in text
    from optrules.models import RuleList

    assert len(RuleList.from_json(out.read_text())) == 1


def test_fit_reference_files(capsys):
    from conftest import shared_path

    base = shared_path("data", "compas", "corels_data")
    assert main(["fit", "--reference-out", str(base / "compas_train.out"), "--reference-label",
                 str(base / "compas_train.label"), "--reference-minor", str(base / "compas_train.minor"),
                 "-r", "0.02"]) == 0
    text = capsys.readouterr().out
    assert "objective 0.384462937" in text and "(priors:>3)" in text
