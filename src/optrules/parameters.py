"""Parameters declared once (as scikit-learn's ``_parameter_constraints``): each estimator lists every
parameter it takes in ``_parameter_table``, a tuple of :class:`Declared`; ``fit`` checks the values
against it (:func:`check_parameters`, one message format for every parameter), and the front ends make
their inputs from it: the command line's options (:func:`add_option`: type, choices, default, help) and
the web app's form fields (:class:`optrules.families.Parameter`: kind, range, choices).

A declaration says what values are allowed, as alternatives: a number in an :class:`Interval`, one of a
few ``options``, ``None``, ``True``/``False``, or a ``kind`` checked by type here and by meaning where it
is used ("names": a feature or column name or a list of them; "mapping": a dict; "callable"; "any").
What ties two parameters together (``refine`` needs ``thresholds="boosted"``) stays in ``fit``.
"""

from __future__ import annotations

import argparse
import math
import numbers
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from .escape import shown
from .notices import warn


class ParameterError(ValueError, TypeError):
    """A parameter with a value it does not take: the message says which, what it takes, and what it got
    (a ValueError, and a TypeError when the type is wrong, as scikit-learn's ``InvalidParameterError``)."""


@dataclass(frozen=True)
class Interval:
    """Numbers from ``low`` to ``high`` (None: unbounded), ``closed`` at "both" ends, "left", "right" or
    "neither"; ``whole``: whole numbers only."""

    low: float | None = None
    high: float | None = None
    closed: str = "both"
    whole: bool = False

    def holds(self, value) -> bool:
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
            return False
        number = float(value)
        if not math.isfinite(number) or (self.whole and number != int(number)):
            return False
        if self.low is not None and (number < self.low or (number == self.low and self.closed in ("right", "neither"))):
            return False
        return not (self.high is not None
                    and (number > self.high or (number == self.high and self.closed in ("left", "neither"))))

    def text(self) -> str:
        """'> 0', 'a whole number >= 1', 'a number in [0, 1)'."""
        left = "[" if self.closed in ("both", "left") else "("
        right = "]" if self.closed in ("both", "right") else ")"
        what = "a whole number" if self.whole else "a number"
        low, high = _number_text(self.low), _number_text(self.high)
        if self.low is not None and self.high is not None:
            return f"{what} in {left}{low}, {high}{right}"
        if self.low is not None:
            bound = f"{'>=' if left == '[' else '>'} {low}"
            return f"{what} {bound}" if self.whole else bound
        if self.high is not None:
            bound = f"{'<=' if right == ']' else '<'} {high}"
            return f"{what} {bound}" if self.whole else bound
        return what

    def narrowed(self, low: float | None = None, high: float | None = None) -> "Interval":
        """The part of this interval within ``[low, high]`` (what a front end offers of it)."""
        left_closed, right_closed = self.closed in ("both", "left"), self.closed in ("both", "right")
        new_low, new_high = self.low, self.high
        if low is not None and (new_low is None or low > new_low):
            new_low, left_closed = low, True
        if high is not None and (new_high is None or high < new_high):
            new_high, right_closed = high, True
        closed = {(True, True): "both", (True, False): "left", (False, True): "right", (False, False): "neither"}
        return Interval(new_low, new_high, closed[left_closed, right_closed], self.whole)


def _number_text(number: float | None) -> str:
    """A bound as people write it: 0.5, 1e-06, 4294967295 (not 4.29497e+09)."""
    if number is None:
        return ""
    if float(number).is_integer() and abs(number) < 1e15:
        return str(int(number))
    return f"{number:g}"


def _names(value) -> bool:
    """A name, or a list of names (a column's name may be a number: a table read without a header)."""
    if isinstance(value, str):
        return True
    return (isinstance(value, (list, tuple, set, frozenset, np.ndarray))
            and all(isinstance(name, (str, numbers.Integral)) and not isinstance(name, bool) for name in value))


_KINDS = {
    "names": (_names, "a name or a list of names"),
    "mapping": (lambda v: isinstance(v, dict), "a dict"),
    "callable": (callable, "a callable"),
    "random_state": (lambda v: isinstance(v, (np.random.RandomState, np.random.Generator)),
                     "a numpy random generator"),
    "n_jobs": (lambda v: isinstance(v, numbers.Integral) and not isinstance(v, (bool, np.bool_)) and v != 0,
               "a whole number other than 0"),
    "any": (lambda v: True, "a value"),
}


@dataclass(frozen=True)
class Declared:
    """One parameter: its ``name``, a one-line ``help`` (the command line's, the docs'), its ``default``,
    and the values it takes: a number in ``number``, one of ``options``, None (``none``; ``none_means`` says what it
    means), True or False (``flag``), or a value of ``kind``."""

    name: str
    help: str
    default: Any = None  # the estimator's default (its __init__ says the same: a test checks it)
    number: Interval | None = None
    options: tuple = ()
    none: bool = False
    none_means: str = ""
    flag: bool = False
    kind: str | None = None
    symbol: str = ""  # what the paper calls it ("lambda"), said beside the name in messages
    renames: str = ""  # an old name of this parameter, accepted for a release: the current name
    same_unit: bool = True  # (an old name) its values mean what the current name's do

    def __post_init__(self):
        if self.kind is not None and self.kind not in _KINDS:
            raise ValueError(f"unknown kind {self.kind!r}; known: {', '.join(_KINDS)}")

    def allows(self, value) -> bool:
        if value is None:
            return self.none
        if isinstance(value, (bool, np.bool_)):
            return self.flag or (self.kind is not None and _KINDS[self.kind][0](value))
        if isinstance(value, str) and value in self.options:
            return True
        if self.number is not None and self.number.holds(value):
            return True
        return self.kind is not None and _KINDS[self.kind][0](value)

    def takes(self) -> str:
        """What it takes, in words: "a number in [0, 1)", "> 0 or None", "one of ['a', 'b']"."""
        parts = []
        if self.number is not None:
            parts.append(self.number.text())
        options = [option for option in self.options if option != DEPRECATED]
        if options:
            parts.append(f"one of {options}" if self.number is None else " or ".join(repr(o) for o in options))
        if self.flag:
            parts.append("True or False")
        if self.kind is not None:
            parts.append(_KINDS[self.kind][1])
        if self.none:
            parts.append("None" + (f" ({self.none_means})" if self.none_means else ""))
        return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " or " + parts[-1]

    def check(self, value) -> None:
        """ParameterError unless the value is one it takes."""
        if not self.allows(value):
            called = f"{self.name} ({self.symbol})" if self.symbol else self.name
            raise ParameterError(f"{called} must be {self.takes()}, got {shown(value)}")


#: the default of a parameter's old name: not given (the current name's value holds)
DEPRECATED = "deprecated"
#: the release from which old names are refused
OLD_NAMES_REMOVED_IN = "0.3"


def old_name(entry: Declared, old: str, unit: str = "") -> Declared:
    """The declaration of ``old``, a name ``entry``'s parameter had: it takes what ``entry`` takes, and
    its default, :data:`DEPRECATED`, means not given. Given, its value is used (:func:`value_of`) with a
    FutureWarning; ``unit`` says how its value differs from the current name's, if it does."""
    return replace(entry, name=old, help=f"old name of {entry.name}{unit}", default=DEPRECATED,
                   options=entry.options + (DEPRECATED,), renames=entry.name, symbol="", same_unit=not unit)


def table_of(estimator) -> dict[str, Declared]:
    """The estimator's declared parameters by name."""
    return {declared.name: declared for declared in type(estimator)._parameter_table}


def check_parameters(estimator) -> None:
    """Check every parameter of ``estimator`` against its ``_parameter_table`` (each parameter of its
    ``__init__`` must be declared: a parameter without a declaration is a programming error); an old name
    given gets a FutureWarning, and an error when its current name is given too."""
    table = table_of(estimator)
    for name, value in estimator.get_params(deep=False).items():
        if name not in table:
            raise TypeError(f"{type(estimator).__name__}.{name} is not declared in its _parameter_table")
        table[name].check(value)
        if table[name].renames and given(value):
            _warn_old_name(estimator, table[name], table[table[name].renames])


def given(value) -> bool:
    """Was an old name given a value (not left at :data:`DEPRECATED`)?"""
    return not (isinstance(value, str) and value == DEPRECATED)


def _warn_old_name(estimator, old: Declared, current: Declared) -> None:
    if getattr(estimator, current.name) != current.default:
        raise ParameterError(f"{old.name} is the old name of {current.name}: pass {current.name} alone")
    warn(f"{type(estimator).__name__}: {old.name} is the {old.help}; the old name is refused from "
         f"optrules {OLD_NAMES_REMOVED_IN}", FutureWarning)


def value_of(estimator, name: str):
    """The value of the parameter ``name``, or of an old name of it when that was given (an old name in
    another unit is the estimator's to convert)."""
    for entry in type(estimator)._parameter_table:
        if entry.renames == name and entry.same_unit and given(getattr(estimator, entry.name)):
            return getattr(estimator, entry.name)
    return getattr(estimator, name)


def with_current_names(table: tuple, params: dict) -> dict:
    """``params`` (a front end's settings by name) with old names replaced by the current ones (those
    whose values mean the same)."""
    current = dict(params)
    for entry in table:
        if entry.renames and entry.same_unit and entry.name in current:
            if entry.renames in current:
                raise ParameterError(f"{entry.name} is the old name of {entry.renames}: send {entry.renames} alone")
            current[entry.renames] = current.pop(entry.name)
    return current


# -- the command line --------------------------------------------------------------------------------
_NONE_WORDS = ("none", "inf", "no", "off")


def option_of(name: str) -> str:
    """The command-line option of a parameter: ``max_card`` -> ``--max-card``."""
    return "--" + name.replace("_", "-")


def from_text(entry: Declared, text: str):
    """The value a command-line word gives ``entry`` (argparse's ``type``): an option as it is, 'none'
    for None, else a number; checked against the declaration."""
    word = text.strip()
    if word in entry.options:
        return word
    if entry.none and word.lower() in _NONE_WORDS:
        return None
    if entry.number is None:
        raise argparse.ArgumentTypeError(f"expected {_typed(entry)}, got {shown(text)}")
    try:
        value = float(word)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {_typed(entry)}, got {shown(text)}") from None
    if entry.number.whole and value.is_integer():
        value = int(value)
    if not entry.allows(value):
        raise argparse.ArgumentTypeError(f"expected {_typed(entry)}, got {shown(text)}")
    return value


def _typed(entry: Declared) -> str:
    """What ``entry`` takes, as typed on a command line (None is the word 'none')."""
    return entry.takes().replace("None", "'none'")


class _NotGiven:
    def __repr__(self) -> str:
        return "not given"


#: the value of a command-line option several families take when it was not given: each family's
#: estimator then keeps its own default
NOT_GIVEN = _NotGiven()


def _default_text(entry: Declared) -> str:
    default = entry.default
    if default is None:
        return f"default: {entry.none_means}" if entry.none_means else ""
    text = f"default {default:g}" if isinstance(default, float) else f"default {default}"
    return text + (f"; 'none': {entry.none_means}" if entry.none and entry.none_means else "")


class DefaultValues(list):
    """A several-valued option's default, told apart from the same values given on the command line."""


#: ``add_option``'s default: the declaration's
_DECLARED = object()


def add_option(parser, entry: Declared, *flags: str, several: bool | str = False, help: str | None = None,
               metavar: str | None = None, takers: dict[str, Declared] | None = None, default=_DECLARED) -> None:
    """Add ``entry`` to an argparse ``parser`` as ``--name`` (or ``flags``), with the type, choices, default
    and help its declaration gives (``several``: one or more values, as the --cv parameter takes; text: what
    several values do, for the help). ``default``: another value when the option is not given (None: each
    family's own, which ``help`` then says).

    ``takers``: the families that take it by name, when several do (their declarations may differ in
    range and default): it takes what any of them takes, its value is :data:`NOT_GIVEN` unless given
    (each estimator keeps its own default), and its help lists the defaults."""
    flags = flags or (option_of(entry.name),)
    text = help or entry.help
    if entry.renames:  # an old name: still taken, no longer shown
        parser.add_argument(*flags, dest=entry.name, default=entry.default, help=argparse.SUPPRESS,
                            type=lambda word: from_text(entry, word))
        return
    given_default = default
    if entry.flag and entry.number is None and not entry.options:  # a switch (--x, or --x/--no-x when on by default)
        default = bool(entry.default) if given_default is _DECLARED else given_default
        parser.add_argument(*flags, dest=entry.name, default=default, help=text,
                            action=argparse.BooleanOptionalAction if default is None or default else "store_true")
        return
    entries = list((takers or {entry.name: entry}).values())
    if takers and len(takers) > 1:
        default = NOT_GIVEN
        text += " (" + "; ".join(f"--model {name}: {_default_text(each)}" for name, each in takers.items()) + ")"
    elif given_default is not _DECLARED:
        default = given_default
    else:
        default = DefaultValues([entry.default]) if several else entry.default
        text += f" ({_default_text(entry)})" if _default_text(entry) else ""
    if several:
        text += "; several values " + (several if isinstance(several, str) else "with --cv K, to choose among them")
    if entry.options and entry.number is None and not entry.none and len(entries) == 1:
        parser.add_argument(*flags, dest=entry.name, choices=list(entry.options), default=default, help=text)
        return
    parser.add_argument(*flags, dest=entry.name, type=lambda word: _from_any(entries, word),
                        nargs="+" if several else None, default=default, metavar=metavar, help=text)


def _from_any(entries: list[Declared], text: str):
    """What the first of ``entries`` that takes ``text`` makes of it (the first one's error otherwise)."""
    errors = []
    for entry in entries:
        try:
            return from_text(entry, text)
        except argparse.ArgumentTypeError as error:
            errors.append(error)
    raise errors[0]


# -- what several estimators take --------------------------------------------------------------------
#: seconds a fit may take by default, like scikit-learn's ``max_iter``: a search that has not certified
#: its model by then returns it with its gap (``time_limit=None``: no limit)
DEFAULT_TIME_LIMIT = 120.0
#: the budgets every fit takes
MAX_NODES = Declared("max_nodes", "stop after this much search work (prefixes expanded by the branch-and-bound "
                     "searches, clauses searched by an exact pricing); unlike seconds, the same on every machine",
                     None, Interval(0, None, whole=True), none=True, none_means="no limit")
TIME_LIMIT = Declared("time_limit", "seconds for the whole fit; the best model found is returned with its certified gap",
                      DEFAULT_TIME_LIMIT, Interval(0, None, "neither"), none=True, none_means="no limit")
MAX_MEMORY = Declared("max_memory", "bytes of memory the fit may hold", None, Interval(0, None, "neither"), none=True,
                      none_means="1 GiB or half the machine's")
BUDGET_PARAMETERS = (MAX_NODES, TIME_LIMIT, MAX_MEMORY)
#: a megabyte, the unit the front ends show ``max_memory`` in
MB = 2**20


def in_megabytes(entry: Declared) -> Declared:
    """A declaration in bytes as the front ends show it, in MB: the same range, the help saying the unit."""
    return replace(entry, help=entry.help.replace("bytes", "MB"), default=None if entry.default is None
                   else entry.default / MB)
VERBOSE = Declared("verbose", "show live progress, or a callable (trace, event) that hears it and may answer STOP",
                   False, flag=True, kind="callable")
#: how numeric columns get their thresholds: a reference ensemble's splits, quantiles, or both
THRESHOLD_MODES = ("boosted", "quantile", "both")
#: how every estimator binarizes its table: the parameters it passes to the Binarizer (whose own defaults
#: differ in two: quantile thresholds, no negations)
BINARIZER_PARAMETERS = (
    Declared("categorical", "columns to one-hot encode even if numeric", None, none=True, kind="names"),
    Declared("bins", "{column: increasing edges} cutting a numeric column into bins", None, none=True, kind="mapping"),
    Declared("thresholds", "where numeric thresholds come from: where a boosted reference ensemble splits, at "
             "quantiles, or both", "boosted", options=THRESHOLD_MODES),
    Declared("n_thresholds", "quantile thresholds per numeric column", 9, Interval(1, None, whole=True)),
    Declared("negations", "also the negation of each one-hot, bin, 0/1 and missing feature", True, flag=True),
    Declared("missing", "missing values: a feature of their own ('category') or an error", "category",
             options=("category", "error")),
    Declared("identifiers", "columns that identify rows: left out ('drop', with a warning) or kept", "drop",
             options=("drop", "keep")),
)
#: what every estimator takes: budgets, progress, and how it binarizes
COMMON_PARAMETERS = BUDGET_PARAMETERS + (VERBOSE,) + BINARIZER_PARAMETERS
N_JOBS = Declared("n_jobs", "threads the certified search runs on (-1: every core, -2: all but one); the search, "
                  "its model and its certificate are the same for every value", None, none=True,
                  none_means="every core, once the search has run 0.2 s", kind="n_jobs")
MAX_CARD = Declared("max_card", "features per antecedent, at most ('auto': the best list of single literals first, "
                    "then pairs from it when their search certifies)", "auto", Interval(1, None, whole=True),
                    options=("auto",))
MAX_ANTECEDENTS = Declared("max_antecedents", "mine at most this many antecedents ('auto': 2,000, fewer for very "
                           "many rows); the support floor of the longest conjunctions rises to fit", "auto",
                           Interval(1, None, whole=True), options=("auto",), none=True, none_means="no bound")
CLASS_WEIGHT = Declared("class_weight", "weights of the classes: 'balanced' (inversely to their frequency) or "
                        "{label: weight}", None, options=("balanced",), none=True, none_means="equal", kind="mapping")
#: the group fairness metrics a constraint may bound (:mod:`optrules.fairness.metrics` computes them)
FAIRNESS_METRICS = ("statistical_parity", "equal_opportunity", "predictive_equality", "equalized_odds")
#: a fairness constraint (rule lists and rule sets): the metric, and the largest gap it allows
FAIRNESS = Declared("fairness", f"a fairness constraint on the training rows ({', '.join(FAIRNESS_METRICS)}): the best "
                    "model whose gap in that metric between the two groups of fit's sensitive= (--sensitive) is at "
                    "most max_unfairness", None, options=FAIRNESS_METRICS, none=True, none_means="no constraint")
MAX_UNFAIRNESS = Declared("max_unfairness", "with fairness=: the largest difference of the two groups' rates allowed, "
                          "decided exactly", 0.05, Interval(0, 1))
#: the constraints a family may take (``Family.constraints``): the certificate is optimal over the models
#: that meet them
MAX_RULES = Declared("max_rules", "at most this many rules (the certificate is optimal over those lists)", None,
                     Interval(0, None, whole=True), none=True, none_means="no limit")
FORBIDDEN = Declared("forbidden", "features (sex=Male) or columns (race) no rule may use", None, none=True, kind="names")
REQUIRED = Declared("required", "features or columns each of which some rule must use (the certificate is optimal over "
                    "the lists that use them all)", None, none=True, kind="names")
CONSTRAINT_PARAMETERS = (MAX_RULES, FORBIDDEN, REQUIRED)
POS_LABEL = Declared("pos_label", "the class the model describes (default: the second of the sorted classes)", None,
                     none=True, kind="any")
RANDOM_STATE = Declared("random_state", "random seed", None, Interval(0, 2**32 - 1, whole=True), none=True,
                        kind="random_state")
#: what several families take: the front ends offer these by options and fields of their own (each
#: family's own parameters get theirs from its registry entry, :meth:`optrules.families.Family.options`)
SHARED_NAMES = frozenset(entry.name for entry in COMMON_PARAMETERS + CONSTRAINT_PARAMETERS + (
    N_JOBS, MAX_CARD, MAX_ANTECEDENTS, CLASS_WEIGHT, FAIRNESS, MAX_UNFAIRNESS, POS_LABEL, RANDOM_STATE))


def with_defaults(table: tuple, **defaults) -> tuple:
    """``table`` with other defaults for some of its declarations (a family whose default differs)."""
    unknown = set(defaults) - {entry.name for entry in table}
    if unknown:
        raise KeyError(f"no declaration of {sorted(unknown)}")
    return tuple(replace(entry, default=defaults[entry.name]) if entry.name in defaults else entry for entry in table)
