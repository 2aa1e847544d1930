"""Ctrl-C in every phase of a command: the fit returns its best model, the command writes it and exits
with status 130, and the phase that heard the stop does no more of its work (asserted in work done, not in
seconds: no clock races a load the test does not control)."""

import json
import os
import signal

import pytest

from optrules.certificate import INTERRUPTED
from optrules.cli import main


def _ctrl_c_before(monkeypatch, module, name: str) -> list:
    """Send this process a SIGINT (Ctrl-C) each time ``module.name`` is called, just before it runs;
    returns the list of calls seen."""
    original = getattr(module, name)
    calls = []

    def interrupted(*arguments, **options):
        calls.append(name)
        os.kill(os.getpid(), signal.SIGINT)
        return original(*arguments, **options)

    monkeypatch.setattr(module, name, interrupted)
    return calls


def test_ctrl_c_in_the_search_writes_the_model_and_exits_130(tmp_path, monkeypatch, capsys):
    import optrules.corels.estimator as estimator

    calls = _ctrl_c_before(monkeypatch, estimator, "search")
    output = tmp_path / "model.json"
    assert main(["fit", "--dataset", "compas", "-r", "0.005", "--max-card", "1", "-o", str(output)]) == 130
    assert calls == ["search"]
    saved = json.loads(output.read_text())
    assert saved["certificate"]["status"] == INTERRUPTED
    assert saved["certificate"]["counters"]["nodes_expanded"] == 0  # heard before the kernel's first slice
    captured = capsys.readouterr()
    assert "interrupted" in captured.err and "model written to" in captured.out
