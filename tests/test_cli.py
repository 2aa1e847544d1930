import json
import re

import pandas as pd
import pytest

from optrules.cli import main


def test_info(capsys):
    assert main(["info"]) == 0
    assert "compas" in capsys.readouterr().out


def test_mine_csv(tmp_path, capsys):
    path = tmp_path / "d.csv"
    pd.DataFrame({"color": ["red", "blue", "red", "green"] * 5, "size": list(range(20)), "label": [0, 1] * 10}).to_csv(path, index=False)
    # (quantile thresholds: the label alternates along size, so a boosted reference splits it nowhere)
    assert main(["mine", str(path), "--target", "label", "--min-support", "0.1", "--thresholds", "quantile"]) == 0
    out = capsys.readouterr().out
    assert "color=red" in out and "size<=" in out


def test_mine_rejects_single_class_target(tmp_path, capsys):
    path = tmp_path / "d.csv"
    pd.DataFrame({"a": [1, 2, 3], "label": [1, 1, 1]}).to_csv(path, index=False)
    assert main(["mine", str(path), "--target", "label"]) == 2
    assert "single class" in capsys.readouterr().out


def test_fit_bundled_and_save(tmp_path, capsys):
    out = tmp_path / "model.json"
    # the paper's space (quantile thresholds, pairs, no negations) gives the paper's list
    assert main(["fit", "--dataset", "compas", "--regularization", "0.02", "--thresholds", "quantile", "--max-card", "2",
                 "--no-negations", "--output", str(out)]) == 0
    text = capsys.readouterr().out
    assert "if (priors>3) then predict yes" in text and "certified optimal" in text
    from optrules.models import RuleList

    assert len(RuleList.from_json(out.read_text())) == 1
    # the default space holds it and more: its certified list is at least as good, and says over what
    assert main(["fit", "--dataset", "compas", "--regularization", "0.02", "--output", str(out)]) == 0
    text = capsys.readouterr().out
    assert "certified optimal" in text and "thresholds from a boosted reference" in text and "with negations" in text
    assert json.loads(out.read_text())["certificate"]["objective"] <= 0.381082959 + 1e-9


def test_fit_reference_files(capsys):
    from conftest import shared_path

    base = shared_path("data", "compas", "corels_data")
    assert main(["fit", "--reference-out", str(base / "compas_train.out"), "--reference-label",
                 str(base / "compas_train.label"), "--reference-minor", str(base / "compas_train.minor"),
                 "-r", "0.02"]) == 0
    text = capsys.readouterr().out
    assert "objective 0.384462937" in text and "(priors:>3)" in text


def test_fit_falling_rule_list(tmp_path, capsys):
    import numpy as np

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.choice(["x", "y", "z"], 300), "b": rng.integers(0, 9, 300)})
    frame["label"] = (rng.random(300) < np.where(frame["a"] == "x", 0.7, 0.1)).astype(int)
    frame.to_csv(tmp_path / "d.csv", index=False)
    out = tmp_path / "frl.json"
    assert main(["fit", str(tmp_path / "d.csv"), "--target", "label", "--model", "frl", "--w", "3", "--C", "0.001",
                 "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert "if (a=x) then probability" in text and "certified optimal" in text
    from optrules import load_model

    assert load_model(out.read_text()).threshold == 0.25
    # --pos-label 0: the probability of class 0 falls down the list
    assert main(["fit", str(tmp_path / "d.csv"), "--target", "label", "--model", "frl", "--w", "3", "--C", "0.001",
                 "--pos-label", "0", "-o", str(out)]) == 0
    falling = load_model(out.read_text())
    assert falling.describes == 0 and falling.probabilities == sorted(falling.probabilities, reverse=True)
    with pytest.raises(SystemExit, match="--pos-label: only for --model frl and ruleset"):
        main(["fit", str(tmp_path / "d.csv"), "--target", "label", "--pos-label", "0"])


def test_fit_rule_set_within_a_node_budget(tmp_path, capsys):
    """--max-nodes bounds a rule set's exact pricing (it was ignored for rule sets): with none allowed,
    the beam's clauses make the set and the certificate says the node budget stopped it."""
    import numpy as np

    rng = np.random.default_rng(2)
    frame = pd.DataFrame({"a": rng.normal(size=300), "b": rng.normal(size=300), "c": rng.normal(size=300)})
    frame["label"] = (((frame["a"] > 0) & (frame["b"] < 0.5)) ^ (rng.random(300) < 0.1)).astype(int)
    frame.to_csv(tmp_path / "d.csv", index=False)
    out = tmp_path / "rs.json"
    assert main(["fit", str(tmp_path / "d.csv"), "--target", "label", "--model", "ruleset", "--complexity", "10",
                 "--max-nodes", "0", "--time-limit", "20", "--thresholds", "quantile", "-o", str(out)]) == 0
    # (quantile thresholds: a space the beam's clauses do not close, where the exact pricing would go on)
    certificate = json.loads(out.read_text())["certificate"]
    assert certificate["status"] == "node budget" and certificate["counters"]["pricing_nodes"] == 0
    assert certificate["counters"]["exact_pricing_calls"] == 0
    # the gap beside the mistakes, in the objective's units and in accuracy points of the 300 rows
    gap = certificate["objective"] - certificate["lower_bound"]
    assert gap > 0
    assert f"objective at most {gap:,.6g} ({100 * gap / 300:.2f} accuracy points)" in capsys.readouterr().out


def test_fit_rule_set(tmp_path, capsys):
    import numpy as np

    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"a": rng.choice(["x", "y", "z"], 200), "b": rng.integers(0, 9, 200)})
    frame["label"] = ((frame["a"] == "x") & (frame["b"] > 4)).astype(int)
    frame.to_csv(tmp_path / "d.csv", index=False)
    assert main(["fit", str(tmp_path / "d.csv"), "--target", "label", "--model", "ruleset", "--complexity", "10",
                 "--time-limit", "20", "-o", str(tmp_path / "rs.json")]) == 0
    text = capsys.readouterr().out
    assert "IF (" in text and "training accuracy 1.0000" in text and "0 training mistakes" in text
    # --pos-label: the set describes class 0 (labels read from the file are numbers)
    assert main(["fit", str(tmp_path / "d.csv"), "--target", "label", "--model", "ruleset", "--complexity", "10",
                 "--time-limit", "20", "--pos-label", "0", "-o", str(tmp_path / "rs0.json")]) == 0
    assert "THEN predict no" in capsys.readouterr().out  # 0/1 labels read as no/yes
    from optrules import load_model

    assert load_model((tmp_path / "rs0.json").read_text()).describes == 0
    with pytest.raises(SystemExit, match="not one of the classes"):
        main(["fit", str(tmp_path / "d.csv"), "--target", "label", "--model", "ruleset", "--pos-label", "2"])
    # --cv K chooses the complexity bound (and, with --pos-label both, the class)
    assert main(["fit", str(tmp_path / "d.csv"), "--target", "label", "--model", "ruleset", "--cv", "3",
                 "--complexity", "2", "6", "--pos-label", "both", "--time-limit", "20"]) == 0
    text = capsys.readouterr().out
    assert "3-fold cross-validation" in text and "class" in text and text.count(" *") == 1
    assert "thresholds" in text and "both" in text  # the space of thresholds is chosen too (RuleSetCV's "auto")
    assert "per fit" in text and "training accuracy" in text
    with pytest.raises(SystemExit, match="need --cv"):
        main(["fit", str(tmp_path / "d.csv"), "--target", "label", "--model", "ruleset", "--complexity", "2", "6"])
    with pytest.raises(SystemExit, match="not of --model frl"):
        main(["fit", str(tmp_path / "d.csv"), "--target", "label", "--model", "frl", "--cv", "3"])


def test_a_shared_option_takes_one_value_where_cv_does_not_choose_it():
    """-r is every family's lambda, and takes several values for the rule lists' --cv: for the families whose
    --cv chooses something else, or nothing, several values are refused (not the first taken silently)."""
    for model, why in (("frl", ""), ("ruleset", " (--cv K chooses among --complexity values)")):
        with pytest.raises(SystemExit, match=re.escape(f"--regularization takes one value with --model {model}{why}")):
            main(["fit", "--dataset", "compas", "--model", model, "-r", "0.01", "0.02"])
    with pytest.raises(SystemExit, match="need --cv"):
        main(["fit", "--dataset", "compas", "-r", "0.01", "0.02"])


def test_fit_prints_the_estimators_own_accuracy(tmp_path, capsys):
    """The accuracy line (computed without scikit-learn's metrics) equals ``score``, weighted or not."""
    import re

    import numpy as np

    from optrules import RuleListClassifier

    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"a": rng.choice(["x", "y", "z"], 400), "b": rng.integers(0, 5, 400)})
    frame["label"] = np.where(rng.random(400) < np.where(frame["a"] == "x", 0.8, 0.3), "yes", "no")
    frame["w"] = rng.integers(1, 6, 400).astype(float)
    frame.to_csv(tmp_path / "d.csv", index=False)
    assert main(["fit", str(tmp_path / "d.csv"), "--target", "label", "--weight-column", "w", "-r", "0.01"]) == 0
    printed = re.search(r"training accuracy (\S+), weighted (\S+)", capsys.readouterr().out)
    X, y, w = frame[["a", "b"]], frame["label"], frame["w"].to_numpy()
    model = RuleListClassifier(regularization=0.01).fit(X, y, sample_weight=w)
    assert float(printed.group(1)) == pytest.approx(model.score(X, y), abs=5e-5)
    assert float(printed.group(2).rstrip(",")) == pytest.approx(model.score(X, y, sample_weight=w), abs=5e-5)
    assert model.score(X, y) != pytest.approx(model.score(X, y, sample_weight=w), abs=1e-3)


def test_fit_command_does_not_wait_for_scipy_stats():
    """scipy.stats takes most of a second to import and no fit on quantile thresholds needs it: the command
    defers it, and the deferred module still answers whatever asks for it later. (The boosted reference
    imports scikit-learn's ensembles, which import scipy.stats themselves.)"""
    import subprocess
    import sys

    script = (
        "import contextlib, io, sys\n"
        "from optrules import cli\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    assert cli.main(['fit', '--dataset', 'compas', '-r', '0.02', '--thresholds', 'quantile']) == 0\n"
        "print(type(sys.modules['scipy.stats']).__name__, 'sklearn.metrics' in sys.modules)\n"
        "from scipy.stats import beta\n"
        "import scipy.stats\n"
        "print(round(beta.cdf(0.5, 2, 2), 6), round(scipy.stats.norm.cdf(0.0), 6),"
        " type(sys.modules['scipy.stats']).__name__)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert out.split("\n")[:2] == ["_DeferredModule False", "0.5 0.5 module"]


def test_rule_set_fit_prints_nothing_from_highs():
    """HiGHS prints its banner once per process, on the first call made while its output is on (highspy
    makes one when constructed): the rule-set command's output is ours alone. In a fresh process, since
    the banner never repeats."""
    import subprocess
    import sys

    command = [sys.executable, "-m", "optrules.cli", "fit", "--dataset", "compas", "--model", "ruleset",
               "--complexity", "6", "--time-limit", "5"]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    assert "IF (" in done.stdout
    assert "HiGHS" not in done.stdout.split("\n")[0]
    assert "Running HiGHS" not in done.stdout + done.stderr


def test_the_time_budget_counts_from_when_the_command_began(capsys):
    """The console script stamps the time before its imports (1.5-3 s) and the budget counts from that
    stamp: a command that began 100 s ago has no time left for a 60 s budget, while the same command
    begun now certifies."""
    import time

    argv = ["fit", "--dataset", "compas", "-r", "0.01", "--time-limit", "60"]
    assert main(argv, started=time.perf_counter() - 100.0) == 0
    assert "stopped on time budget" in capsys.readouterr().out
    assert main(argv) == 0
    assert "certified optimal" in capsys.readouterr().out


def test_the_console_script_starts_its_clock_before_importing():
    import subprocess
    import sys

    script = ("import sys, time, optrules._entry as entry; sys.argv = ['optrules', 'info']; "
              "assert 'optrules.cli' not in sys.modules; sys.exit(entry.main())")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "compas" in done.stdout


def test_fit_refine_searches_the_larger_space_from_the_boosted_optimum(tmp_path, capsys):
    import numpy as np

    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"a": rng.normal(size=400), "b": rng.normal(size=400)})
    frame["label"] = (((frame["a"] > 0.2) & (frame["b"] < 0.4)) ^ (rng.random(400) < 0.1)).astype(int)
    frame.to_csv(tmp_path / "d.csv", index=False)
    assert main(["fit", str(tmp_path / "d.csv"), "--target", "label", "--refine", "-q"]) == 0
    text = capsys.readouterr().out
    assert "certified optimum over the boosted space" in text and "numeric thresholds at quantiles and" in text
    with pytest.raises(SystemExit, match="--refine: only for the families that take refine="):
        main(["fit", str(tmp_path / "d.csv"), "--target", "label", "--refine", "--model", "frl"])


def test_fit_help_names_the_thresholds_in_force(capsys):
    """The fit command's words follow the declaration: the default thresholds it names are the declared
    default, every mode the estimators take is offered, and a fit with the largest one runs."""
    from optrules.parameters import BINARIZER_PARAMETERS, THRESHOLD_MODES

    default = next(entry.default for entry in BINARIZER_PARAMETERS if entry.name == "thresholds")
    with pytest.raises(SystemExit):
        main(["fit", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert f"(default: {default})" in text and "{" + ",".join(THRESHOLD_MODES) + "}" in text
    assert "cut at quantiles" not in text and "boosted ensemble splits them at" in text
    assert main(["fit", "--dataset", "compas", "-r", "0.01", "--thresholds", "both", "--time-limit", "30"]) == 0
    assert "certified optimal" in capsys.readouterr().out


def test_a_rule_sets_objective_is_explained_where_it_differs_from_its_mistakes(capsys):
    """A price per unit of complexity makes a rule set's objective more than its training mistakes: the
    line of mistakes says what the objective counts; where the two agree it says nothing more."""
    argv = ["fit", "--dataset", "compas", "--model", "ruleset", "--complexity", "6", "--time-limit", "20"]
    assert main(argv + ["--regularization", "0.001"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "training mistakes" in text and "counts each missed row at its weight" in text
    assert main(argv + ["--regularization", "0"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    mistakes = int(text.split(" training mistakes")[0].split()[-1].replace(",", ""))
    objective = float(text.split("objective ")[1].split()[0].rstrip(",:"))
    assert ("counts each missed row" in text) == (objective != mistakes)


def test_a_headerless_file_gets_a_hint_naming_no_header(tmp_path, capsys):
    """A target named by number in a file whose first line is data: the message names --no-header, and
    with it the space-separated columns are found and fitted."""
    import numpy as np

    rng = np.random.default_rng(0)
    lines = [f"A1{rng.integers(1, 5)} {rng.integers(4, 60)} A3{rng.integers(0, 5)} {rng.integers(1, 3)}"
             for _ in range(200)]
    path = tmp_path / "german.data"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(SystemExit, match="first line reads like data.*--no-header"):
        main(["fit", str(path), "--target", "3"])
    capsys.readouterr()

    def rules(target: str) -> list[str]:
        # (a node budget, not a time one: the two fits must search alike on a loaded machine too)
        assert main(["fit", str(path), "--target", target, "--no-header", "--time-limit", "none",
                     "--max-nodes", "2000"]) == 0
        return [line for line in capsys.readouterr().out.splitlines() if line.startswith(("if ", "else"))]

    by_number = rules("3")
    assert by_number == rules("x3") and any(" x0" in line or " x2" in line for line in by_number), by_number


def _help_defaults():
    """(command, option flags, argparse default, default named in the help) for every option of every
    command whose help names a default ("(default X", "; default: X")."""
    import argparse
    import re

    from optrules.cli import build_parser

    def walk(parser, command):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    yield from walk(sub, name)
            elif action.help:
                for named in re.finditer(r"[(;]\s*default:? ([\w.\-/]+)", action.help):
                    yield command, action.option_strings, action.default, named.group(1)

    return list(walk(build_parser(), ""))


#: what a help may name as the default of an option whose value is worked out at run time (argparse
#: default None): each phrase says where the value comes from
WORKED_OUT = {"detected", "the", "every", "no", "print", "lambda", "on", "10", "1", "boosted"}


def test_every_default_a_help_names_is_the_one_in_force():
    """A help that names a default names the option's own (a hand-written help and its argparse default
    drifted apart once: `fit --help` still said quantiles after the default became boosted); the
    defaults worked out at run time are named by where they come from, and the per-family ones (the
    regularization's) are each estimator's."""
    from optrules.budget import DEFAULT_MAX_MEMORY
    from optrules.families import families
    from optrules.parameters import BINARIZER_PARAMETERS

    checked = 0
    for command, flags, default, named in _help_defaults():
        if isinstance(default, list):
            default = default[0]
        if isinstance(default, (int, float)) and not isinstance(default, bool):
            assert float(named) == float(default), (command, flags, default, named)
        elif isinstance(default, str) and flags != ["--model"]:
            assert named == default, (command, flags, default, named)
        else:
            assert named in WORKED_OUT or "--regularization" in flags or "--time-limit" in flags, (command, flags, named)
        checked += 1
    assert checked > 50
    from optrules.cli import build_parser

    fit = build_parser()._subparsers._group_actions[0].choices["fit"]
    helps = {flag: " ".join(action.help.split()) for action in fit._actions if action.help for flag in action.option_strings}
    for name, family in families().items():
        regularization = family.estimator().get_params()["regularization"]
        assert f"--model {name}: default {regularization:g}" in helps["--regularization"], (name, regularization)
    from optrules.parameters import DEFAULT_TIME_LIMIT  # (the estimators', the web app's and the CLI's: one)

    assert f"(default {DEFAULT_TIME_LIMIT:g};" in helps["--time-limit"]
    assert all(family.estimator().get_params()["time_limit"] == DEFAULT_TIME_LIMIT for family in families().values())
    assert DEFAULT_MAX_MEMORY == 2**30 and "(default: 1 GiB or half the machine's)" in helps["--max-memory"]
    thresholds = next(entry.default for entry in BINARIZER_PARAMETERS if entry.name == "thresholds")
    assert f"default: {thresholds})" in helps["--thresholds"]
