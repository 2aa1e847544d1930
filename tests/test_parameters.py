"""Parameters declared once (optrules.parameters): every estimator's table covers its __init__ with the
same defaults, fit refuses what the table refuses with a message naming the parameter, and the command
line's options and the web form's fields are made from the table (they take nothing it refuses)."""

import inspect
import math

import numpy as np
import pandas as pd
import pytest

from optrules.families import families
from optrules.parameters import Declared, Interval, ParameterError, check_parameters, from_text

FAMILIES = list(families().values())
TINY = (pd.DataFrame({"a": [0, 1, 0, 1, 1, 0], "b": list("xyxyyx")}), [0, 1, 0, 1, 1, 0])


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.name)
def test_the_table_covers_init_with_its_defaults(family):
    estimator = family.estimator
    assert family.parameters is estimator._parameter_table  # one table: the front ends read the estimator's
    names = [entry.name for entry in family.parameters]
    assert len(names) == len(set(names)), "a parameter declared twice"
    signature = inspect.signature(estimator.__init__).parameters
    assert set(names) == set(signature) - {"self"}
    for entry in family.parameters:
        assert entry.default == signature[entry.name].default, entry.name
        entry.check(entry.default)  # the default is a value it takes
    check_parameters(estimator())


def _outside(interval: Interval) -> list:
    """Values just outside each finite end of ``interval`` (and at an open end), and a fraction for whole numbers."""
    values = []
    for end, step, open_end in ((interval.low, -1, interval.closed in ("right", "neither")),
                                (interval.high, 1, interval.closed in ("left", "neither"))):
        if end is not None:
            values.append(end + step * (1 if interval.whole else max(1e-9, abs(end) * 1e-9)))
            if open_end:
                values.append(end)
    if interval.whole:
        values.append((interval.low or 0) + 1.5)
    return values + [math.nan, math.inf, -math.inf, True]


def _bad_values(entry: Declared) -> list:
    bad = [object()]
    if entry.number is not None:
        bad += [value for value in _outside(entry.number) if not entry.allows(value) or value is True]
    if entry.options or entry.number is not None:
        bad.append("not-an-option")
    if not entry.none:
        bad.append(None)
    return [value for value in bad if not (value is True and entry.flag)]


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.name)
def test_fit_refuses_what_the_table_refuses_naming_the_parameter(family):
    checked = 0
    for entry in family.parameters:
        if entry.kind == "any":
            continue
        for value in _bad_values(entry):
            assert not entry.allows(value), (entry.name, value)
            with pytest.raises(ParameterError, match=f"^{entry.name}( \\(\\w+\\))? must be "):
                family.estimator(**{entry.name: value}).fit(*TINY)
            checked += 1
    assert checked >= 2 * len(family.parameters) - 2


def test_intervals_hold_what_they_say():
    rng = np.random.default_rng(0)
    for closed in ("both", "left", "right", "neither"):
        for low, high in ((0.0, 1.0), (-2.0, None), (None, 3.0), (1.0, 1.0)):
            interval = Interval(low, high, closed)
            for value in np.concatenate([rng.uniform(-4, 4, 200), [0.0, 1.0, -2.0, 3.0]]):
                above = low is None or value > low or (value == low and closed in ("both", "left"))
                below = high is None or value < high or (value == high and closed in ("both", "right"))
                assert interval.holds(float(value)) == (above and below), (interval, value)
    assert Interval(1, None, whole=True).holds(np.int64(3)) and not Interval(1, None, whole=True).holds(2.5)
    assert not Interval(0, None).holds(True) and not Interval(0, None).holds("1")
    assert Interval(0, 1, "left").text() == "a number in [0, 1)" and Interval(0, None, "neither").text() == "> 0"
    assert Interval(0, None, whole=True).text() == "a whole number >= 0"
    assert Interval(0, 1, "left").narrowed(high=0.999) == Interval(0, 0.999, "both")
    assert Interval(0, None, "neither").narrowed(low=1e-6, high=1e6) == Interval(1e-6, 1e6, "both")
    assert Interval(0, 5).narrowed(low=-1, high=9) == Interval(0, 5)


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.name)
def test_command_line_options_come_from_the_table(family):
    import argparse

    from optrules.cli import build_parser
    from optrules.parameters import DEPRECATED, NOT_GIVEN

    fit = build_parser()._subparsers._group_actions[0].choices["fit"]
    actions = {action.dest: action for action in fit._actions}
    for option in family.cli_options:
        entry, action = family.declared(option.name), actions[option.name]
        if entry.renames:  # an old name: taken, not shown
            assert action.help == argparse.SUPPRESS and action.default == DEPRECATED
            continue
        takers = [other.declared(option.name) for other in FAMILIES for o in other.cli_options
                  if o.name == option.name and other.option_flags(o) == family.option_flags(option)]
        if len(takers) > 1:  # shared (-r): each estimator keeps its own default unless it is given
            assert action.default is NOT_GIVEN and family.name in action.help
        else:
            assert action.default == ([entry.default] if option.several else entry.default)
        if action.choices is not None:
            assert tuple(action.choices) == entry.options
        if entry.number is not None:
            for value in _outside(entry.number)[:2]:
                if not any(taker.allows(value) for taker in takers):
                    with pytest.raises(argparse.ArgumentTypeError):
                        action.type(repr(value))
            if entry.default is not None:
                assert action.type(repr(entry.default)) == entry.default
    # the words of the command line: options, 'none' where None is taken
    declared = Declared("x", "", None, Interval(1, None, whole=True), options=("auto",), none=True)
    assert from_text(declared, "auto") == "auto" and from_text(declared, "none") is None and from_text(declared, "7") == 7


def test_old_names_work_for_a_release_with_a_warning():
    from optrules.estimators import FallingRuleListClassifier, RuleSetClassifier

    X, y = TINY[0].iloc[[0, 1, 2, 3, 4, 5] * 5], TINY[1] * 5
    for old, new in ((FallingRuleListClassifier(C=0.05), FallingRuleListClassifier(regularization=0.05)),
                     (RuleSetClassifier(max_degree=1, penalty=2.0), RuleSetClassifier(max_card=1, regularization=2 / 30))):
        with pytest.warns(FutureWarning, match="old name of"):
            old.fit(X, y)
        assert old.certificate_.objective == pytest.approx(new.fit(X, y).certificate_.objective)
        assert str(old.rule_list_) == str(new.rule_list_)
    with pytest.raises(ParameterError, match="pass max_card alone"):
        RuleSetClassifier(max_degree=1, max_card=2).fit(X, y)
    family = families()["frl"]
    assert family.with_current_names({"C": 0.1, "w": 2}) == {"regularization": 0.1, "w": 2}
    with pytest.raises(ParameterError, match="alone"):
        family.with_current_names({"C": 0.1, "regularization": 0.2})
    # an old name in another unit is not renamed: the estimator converts it
    assert families()["ruleset"].with_current_names({"penalty": 1.0}) == {"penalty": 1.0}


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.name)
def test_web_fields_take_nothing_the_table_refuses(family):
    from optrules.families import ParameterError as FormError

    rng = np.random.default_rng(1)
    for field in family.form:
        entry = family.declared(field.name)
        assert field.name in {f.name for f in family._form_fields()}
        if field.kind in ("number", "integer"):
            for value in list(rng.uniform(-2, 2, 50)) + [field.low, field.high, 0, 1]:
                if value is None:
                    continue
                value = int(round(value)) if field.kind == "integer" else float(value)
                try:
                    read = field.read({field.name: value})
                except FormError:
                    continue
                assert entry.allows(read), (field.name, value)
        if field.kind == "choice":
            for value, _ in field.choices:
                assert entry.allows(field.read({field.name: value}))
    for field in family.form_fields:  # a family's range of a field every form has: within what it takes
        if field.common:
            assert all(family.declared(field.name).allows(end) for end in (field.low, field.high) if end is not None)
