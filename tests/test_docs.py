"""The documentation site builds from the docs and the docstrings, offline, without a warning."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_docs_site_builds_strictly(tmp_path):
    pytest.importorskip("mkdocs")
    pytest.importorskip("mkdocstrings_handlers.python")
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    log = result.stdout + result.stderr
    assert result.returncode == 0, log
    assert "WARNING" not in log, log
    api = (tmp_path / "site" / "api.html").read_text()
    # the API reference is generated from the code: a parameter documented only in a docstring shows up
    assert "RuleListClassifier" in api and "one_standard_error" in api and "theorem11_minimum_accurate_support" in api
    for page in ("index", "certificate", "corels", "frl", "rulesets", "model-selection", "cli"):
        assert (tmp_path / "site" / f"{page}.html").exists()
    # every figure a page shows was copied into the site
    for figure in ("corels_trace_0.01.png", "frl_bank_roc.png", "brcg_pareto.png"):
        assert (tmp_path / "site" / "figures" / figure).stat().st_size > 1000
    shutil.rmtree(tmp_path / "site")
