"""Reference optima of the C++ CORELS on compas_train (shared/reference/corels_compas_train.tsv)."""

import csv

import pytest
from conftest import shared_path

from optrules.corels import fit_reference


def reference_rows():
    path = shared_path("reference", "corels_compas_train.tsv")
    with open(path) as handle:
        return {float(row["lambda"]): row for row in csv.DictReader(handle, delimiter="\t")}


def certify(regularization, **options):
    base = shared_path("data", "compas", "corels_data")
    rule_list, certificate = fit_reference(
        base / "compas_train.out", base / "compas_train.label", base / "compas_train.minor", regularization, **options
    )
    return rule_list, certificate


@pytest.mark.parametrize("regularization", [0.02, 0.01])
def test_reference_optimum_certified(regularization):
    expected = reference_rows()[regularization]
    rule_list, certificate = certify(regularization)
    mistakes = sum(min(r.n_positive, r.n_captured - r.n_positive) for r in rule_list.rules + [rule_list.default])
    assert certificate.is_optimal
    assert mistakes == int(expected["mistakes"])
    assert len(rule_list) == int(expected["rules"])
    assert certificate.objective == pytest.approx(float(expected["objective"]), abs=1e-9)
    assert certificate.lower_bound == pytest.approx(certificate.objective)


def test_reference_optimum_with_captured_set_map():
    rule_list, certificate = certify(0.01, map_type="captured")
    assert certificate.is_optimal
    assert certificate.objective == pytest.approx(float(reference_rows()[0.01]["objective"]), abs=1e-9)


@pytest.mark.slow
def test_reference_optimum_lambda_0005():
    expected = reference_rows()[0.005]
    rule_list, certificate = certify(0.005)
    assert certificate.is_optimal
    assert certificate.objective == pytest.approx(float(expected["objective"]), abs=1e-9)
    assert len(rule_list) == int(expected["rules"])


def test_budget_on_reference_gives_valid_gap():
    row = reference_rows()[0.01]
    expected = int(row["mistakes"]) / 6489 + 0.01 * int(row["rules"])
    _, certificate = certify(0.01, max_nodes=2000)
    assert certificate.status == "node budget"
    assert certificate.lower_bound <= expected + 1e-12 <= certificate.objective + 1e-12
    assert certificate.gap > 0
