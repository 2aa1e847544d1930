import numpy as np
import pytest
from conftest import shared_path

from optrules.data import formats


def test_compas_train_loads():
    base = shared_path("data", "compas", "corels_data")
    problem = formats.read_reference(base / "compas_train.out", base / "compas_train.label", base / "compas_train.minor")
    assert problem.captures.shape == (155, 6489)
    assert problem.antecedent_names[0] == "sex:Female"
    assert int(problem.y.sum()) == 2906
    assert problem.label_names == ["recidivate-within-two-years:No", "recidivate-within-two-years:Yes"]
    assert problem.minor.shape == (6489,)
    # sex:Female and sex:Male partition the samples
    np.testing.assert_array_equal(problem.captures[0], ~problem.captures[1])


def test_roundtrip(tmp_path, rng):
    bits = rng.random((5, 77)) < 0.4
    names = [f"a:{i}" for i in range(5)]
    formats.write_bit_lines(tmp_path / "x.out", names, bits)
    back = formats.read_out(tmp_path / "x.out")
    assert back.names == names
    np.testing.assert_array_equal(back.bits, bits)
    y = rng.random(77) < 0.5
    formats.write_label(tmp_path / "x.label", y)
    y_back, label_names = formats.read_label(tmp_path / "x.label")
    np.testing.assert_array_equal(y_back, y)
    assert label_names == ["label=0", "label=1"]
    formats.write_minor(tmp_path / "x.minor", bits[0])
    np.testing.assert_array_equal(formats.read_minor(tmp_path / "x.minor"), bits[0])


def test_mismatched_lengths_are_errors(tmp_path):
    formats.write_bit_lines(tmp_path / "x.out", ["a"], np.ones((1, 4), bool))
    formats.write_label(tmp_path / "x.label", np.array([0, 1, 0]))
    with pytest.raises(ValueError, match="4 samples per antecedent but .* 3 labels"):
        formats.read_reference(tmp_path / "x.out", tmp_path / "x.label")
    (tmp_path / "bad.out").write_text("{a} 0 1 1\n{b} 0 1\n")
    with pytest.raises(ValueError, match="2 bits, but line 1 has 3"):
        formats.read_out(tmp_path / "bad.out")
    (tmp_path / "bad2.out").write_text("{a} 0 2 1\n")
    with pytest.raises(ValueError, match="expected 0/1 bits"):
        formats.read_out(tmp_path / "bad2.out")
    formats.write_bit_lines(tmp_path / "bad.label", ["n", "y"], np.array([[1, 0], [1, 1]], bool))
    with pytest.raises(ValueError, match="complements"):
        formats.read_label(tmp_path / "bad.label")
