"""The ladder of nested spaces (``max_card="auto"``, :mod:`optrules.ladder`): rungs nested, each proven
rung's optimum brute force's over that rung, the model the best list any rung found, and one sentence
saying what is proven of it, the same in the certificate, the report and the web app."""

import numpy as np
import pandas as pd
import pytest

from optrules import FallingRuleListClassifier, RuleListClassifier
from optrules.certificate import OPTIMAL, TIME_BUDGET, Certificate
from optrules.corels.bruteforce import brute_force
from optrules.frl.bruteforce import brute_force as frl_brute_force
from optrules.ladder import RUNG_PROBE_SECONDS, RUNG_PROJECTION_SAFETY, Ladder, Rung, RungResult, RungWatch, ladder_rungs, proven_statement
from optrules.solve import ProgressEvent


def _table(rng, n=80):
    """Two columns that decide the target, two that do not (the reference leaves them out)."""
    X = pd.DataFrame({
        "age": rng.integers(18, 80, n).astype(float),
        "colour": rng.choice(["red", "green", "blue", "grey"], n),
        "noise": rng.choice(["p", "q", "r"], n),
        "score": rng.integers(0, 6, n).astype(float),
    })
    signal = (X.age > 45) * 1.0 + (X.colour == "red") * 0.8 + rng.normal(0, 0.6, n)
    return X, (signal > 0.6).astype(int).to_numpy()


@pytest.mark.parametrize("seed", range(6))
def test_every_proven_rung_has_brute_forces_optimum_and_the_model_is_the_best_found(seed):
    """Each rung the ladder certified has the optimum of exhaustive search over its antecedents (lists
    of up to R/lambda rules: Theorem 4 of the CORELS paper); rungs are nested (so optima fall up the
    ladder); the model is the best list of any rung, over the antecedents it names."""
    rng = np.random.default_rng(300 + seed)
    X, y = _table(rng)
    X = X[["age", "colour", "noise"]]
    regularization = 0.15  # lists of up to R/lambda <= 2 rules: brute force stays small
    model = RuleListClassifier(regularization=regularization, min_support=0.0 if seed % 2 else None,
                               negations=bool(seed % 3)).fit(X, y)
    searched = [row for row in model.ladder_ if row["searched"]]
    assert searched and searched[0]["status"] == OPTIMAL
    positions = [set(row["positions"].tolist()) for row in model.ladder_]
    assert all(low < high for low, high in zip(positions, positions[1:]))  # nested, each adds antecedents
    mined = model.mined_antecedents_
    codes = np.searchsorted(model.classes_, y)
    optima = []
    for row in searched:
        if row["status"] != OPTIMAL:
            continue
        rung = mined.subset(row["positions"])
        expected = brute_force(rung.capture_matrix(), codes, regularization,
                               max_length=int(row["objective"] / regularization + 1e-9))
        assert row["objective"] == pytest.approx(expected.objective, abs=1e-12)
        optima.append(expected.objective)
    assert optima == sorted(optima, reverse=True)  # a larger rung's optimum is never worse
    assert model.certificate_.objective == pytest.approx(min(row["objective"] for row in searched), abs=1e-12)
    expected_model = brute_force(model.antecedents_.capture_matrix(), codes, regularization,
                                 max_length=int(model.certificate_.objective / regularization + 1e-9))
    if model.certificate_.is_optimal:
        assert model.certificate_.objective == pytest.approx(expected_model.objective, abs=1e-12)
    assert model.certificate_.statement in str(model.certificate_)


def test_the_first_rung_holds_the_literals_the_reference_chose():
    """The first rung is the single literals whose features the reference split on; a column it never
    split on is only in the rungs above."""
    rng = np.random.default_rng(7)
    X, y = _table(rng, n=400)
    model = RuleListClassifier(regularization=0.02).fit(X, y)
    chosen = {name for name, keep in zip(model.binarizer_.feature_names_, model.binarizer_.reference_features_)
              if keep}
    rungs = ladder_rungs(model.mined_antecedents_, model.binarizer_.feature_names_,
                         model.binarizer_.reference_features_, 2)
    assert [r.name for r in rungs][:2] == ["literals the reference chose", "single literals"]
    first = model.mined_antecedents_.subset(rungs[0].positions)
    assert all(len(items) == 1 and first.feature_names[items[0]] in chosen for items in first.items)
    assert not any(name.startswith(("noise", "not noise")) for name in chosen)
    singles = model.mined_antecedents_.subset(rungs[1].positions)
    assert any(singles.feature_names[items[0]].startswith("noise") for items in singles.items)


def test_falling_lists_climb_the_ladder_to_brute_forces_optimum():
    """A falling list's ladder: each small proven rung's optimum is exhaustive search's over that rung
    (lists of at most objective / C rules), and the model is the best of them."""
    rng = np.random.default_rng(11)
    X, y = _table(rng, n=60)
    C = 0.06
    model = FallingRuleListClassifier(w=2.0, C=C).fit(X, y)
    assert model.certificate_.is_optimal and "certified optimal over" in model.certificate_.statement
    checked = 0
    for row in model.ladder_:
        if row.get("status") == OPTIMAL and len(row["positions"]) <= 30:
            rung = model.mined_antecedents_.subset(row["positions"])
            expected = frl_brute_force(rung.capture_matrix(), y, 2.0, C, max_length=int(row["objective"] / C))
            assert row["objective"] == pytest.approx(expected[0], abs=1e-9)
            checked += 1
    assert checked >= 1
    assert model.certificate_.objective == pytest.approx(
        min(row["objective"] for row in model.ladder_ if row["searched"]), abs=1e-12)


def _result(name, size, status, objective, lower_bound, prefix=(0,), seconds=1.0):
    rung = Rung(name, np.arange(size), 1)
    return RungResult(rung, Certificate(status, objective, lower_bound), list(prefix), {"name": name}, seconds)


class _Budget:
    deadline = None

    def stopped(self):
        return False

    def remaining(self):
        return None

    def ending_when(self, condition):
        import contextlib

        return contextlib.nullcontext()


def _ladder(results, rungs=None):
    rungs = rungs or [r.rung for r in results]
    answers = iter(results)
    return Ladder(rungs, lambda rung, starts, progress: next(answers), _Budget()).climb([])


def test_a_better_list_of_an_unfinished_rung_is_the_model_and_says_so():
    """A larger rung stopped before its proof with a better list: that list is the model, and the
    sentence says it beats every list of the proven rung and how close it is over the larger one."""
    ladder = _ladder([_result("small", 5, OPTIMAL, 0.30, 0.30), _result("large", 20, TIME_BUDGET, 0.28, 0.21)])
    assert ladder.best().rung.name == "large" and ladder.proven().rung.name == "small"
    text = proven_statement(ladder)
    assert text.startswith("better than every list over 5 small") and "0.300000000" in text
    assert "within 0.070000000 of the optimum over 20 large" in text


def test_a_rung_its_watch_ended_says_why_before_the_budget():
    """A rung ended by its watch stops long before the time budget: the sentence says it would have needed
    about the projected time, not only that its search ended (a user read "time budget" at 6.8 s of 120)."""
    large = _result("large", 20, TIME_BUDGET, 0.28, 0.21, seconds=6.79)
    assert "before its budget's end" not in proven_statement(_ladder([_result("small", 5, OPTIMAL, 0.30, 0.30), large]))
    large.certificate.counters["rung_projected_seconds"] = 1234.4
    text = proven_statement(_ladder([_result("small", 5, OPTIMAL, 0.30, 0.30), large]))
    assert text.endswith("whose search ended after 6.79 s, before its budget's end: its lower bound, rising as it "
                         "did, would have reached the objective only after ~1,234 s"), text


def test_an_unfinished_rung_that_found_nothing_better_leaves_the_proven_list():
    ladder = _ladder([_result("small", 5, OPTIMAL, 0.30, 0.30), _result("large", 20, TIME_BUDGET, 0.30, 0.25)])
    assert ladder.best().rung.name == "small"
    text = proven_statement(ladder)
    assert text.startswith("certified optimal over 5 small") and "within 0.050000000 of the optimum" in text


def test_the_same_list_proven_by_a_larger_rung_is_proven_over_the_larger():
    ladder = _ladder([_result("small", 5, OPTIMAL, 0.30, 0.30), _result("large", 20, OPTIMAL, 0.30, 0.30)])
    assert ladder.best().rung.name == "large"
    assert proven_statement(ladder) == "certified optimal over 20 large"


def test_no_rung_is_climbed_above_an_unproven_one():
    first = _result("small", 5, TIME_BUDGET, 0.30, 0.10)
    ladder = _ladder([first], rungs=[first.rung, Rung("large", np.arange(20), 1)])
    assert len(ladder.results) == 1 and [r.name for r in ladder.skipped()] == ["large"]
    assert proven_statement(ladder).startswith("not proven optimal: over 5 small")


def _event(objective, lower_bound, elapsed=0.0):
    return ProgressEvent(elapsed, objective, lower_bound, 0, "prefixes expanded")


def test_the_watch_ends_a_rung_whose_bound_would_not_reach_the_incumbent_in_time():
    """The projection: the lower bound's rise over the last half of the rung's run, drawn on to the
    incumbent (times the safety factor), against the deadline; never before the probe's seconds."""
    probe = RUNG_PROBE_SECONDS
    times = (0.4 * probe, probe, 2 * probe)

    def watched(deadline, bounds):
        watch = RungWatch(deadline=deadline)
        for now, bound in zip(times, bounds):
            watch.heard(_event(0.30, bound, now), now=now)
        return watch

    # risen 0.04 over the last half (probe seconds): 0.06 left takes 1.5 probes, twice that from 2 probes
    watch = watched(100 * probe, (0.10, 0.20, 0.24))
    assert not watch.hopeless and watch.projected == pytest.approx(2 * probe + RUNG_PROJECTION_SAFETY * 1.5 * probe)
    assert watched(4 * probe, (0.10, 0.20, 0.24)).hopeless
    assert watched(1e9, (0.20, 0.20, 0.20)).hopeless  # a bound that stopped rising never closes
    assert not watched(None, (0.20, 0.20, 0.20)).hopeless  # no time limit: the rung runs to its end
    early = RungWatch(deadline=1e-9)
    for now in (0.1 * probe, 0.5 * probe, 0.9 * probe):
        early.heard(_event(0.30, 0.20, now), now=now)
    assert not early.hopeless  # before the probe's seconds of search, nothing is judged
    compiled = RungWatch(deadline=1e-9)  # a rung whose kernel compiled for 10 probes first: its search's clock
    for now, searched in ((10 * probe, 0.1 * probe), (10.5 * probe, 0.6 * probe), (11 * probe, 0.9 * probe)):
        compiled.heard(_event(0.30, 0.20, searched), now=now)
    assert not compiled.hopeless


def test_the_sentence_is_the_same_in_the_certificate_and_the_report():
    rng = np.random.default_rng(5)
    X, y = _table(rng, n=200)
    model = RuleListClassifier(regularization=0.02).fit(X, y)
    statement = model.certificate_.statement
    assert statement == model.certificate_.counters["proven"]
    assert str(model.certificate_).startswith(statement)
    from optrules.escape import html_text

    assert html_text(statement) in model.report()


def _ladder_problem(seed: int):
    """A small random table for the ladder's brute-force check: 40-120 rows, a number, a category, a
    column of noise; the target from the first two, with 5-30 % of it flipped."""
    rng = np.random.default_rng(10_000 + seed)
    n = int(rng.integers(40, 121))
    X = pd.DataFrame({"x": rng.integers(0, 12, n).astype(float), "c": rng.choice(list("abcde"), n),
                      "z": rng.choice(list("pq"), n)})
    signal = (X.x > rng.integers(3, 9)) ^ X.c.isin(rng.choice(list("abcde"), 2, replace=False))
    flipped = rng.random(n) < rng.uniform(0.05, 0.3)
    return X, (signal ^ flipped).astype(int).to_numpy(), rng


def _lists(antecedents: int, longest: int) -> int:
    """How many ordered lists of distinct antecedents, up to ``longest`` rules, brute force visits."""
    total, count = 1, 1
    for length in range(min(longest, antecedents)):
        count *= antecedents - length
        total += count
    return total


def _check_rungs(model, brute, max_length_of):
    """Every certified rung small enough to enumerate (100,000 lists) has brute force's optimum; optima never rise up the
    ladder; the model is the best list of any rung."""
    searched = [row for row in model.ladder_ if row["searched"]]
    optima = []
    for row in searched:
        if row["status"] == OPTIMAL and _lists(len(row["positions"]), max_length_of(row["objective"])) <= 100_000:
            rung = model.mined_antecedents_.subset(row["positions"])
            expected = brute(rung.capture_matrix(), max_length_of(row["objective"]))
            assert row["objective"] == pytest.approx(expected, abs=1e-9), row["rung"]
        if row["status"] == OPTIMAL:
            optima.append(row["objective"])
    assert all(high <= low + 1e-12 for low, high in zip(optima, optima[1:]))
    assert model.certificate_.objective == pytest.approx(min(row["objective"] for row in searched), abs=1e-12)


# 500 problems (400 rule lists, 100 falling lists), 10 to a case so that the workers share them
@pytest.mark.slow
@pytest.mark.parametrize("block", range(50))
def test_the_ladder_is_exact_on_500_random_problems(block):
    for seed in range(10 * block, 10 * block + 10):
        X, y, rng = _ladder_problem(seed)
        if seed % 5 == 4:
            C = float(rng.choice([0.05, 0.08, 0.12]))
            model = FallingRuleListClassifier(w=float(rng.choice([1.0, 2.0, 4.0])), C=C, time_limit=60).fit(X, y)
            w = model.w
            _check_rungs(model, lambda captures, length: frl_brute_force(captures, y, w, C, max_length=length)[0],
                         lambda objective: int(objective / C))
        else:
            regularization = float(rng.choice([0.08, 0.12, 0.2]))
            model = RuleListClassifier(regularization=regularization, negations=bool(seed % 2), time_limit=60).fit(X, y)
            _check_rungs(model, lambda captures, length: brute_force(captures, y, regularization,
                                                                     max_length=length).objective,
                         lambda objective: int(objective / regularization + 1e-9))
