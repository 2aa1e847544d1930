"""The registry of model families: what the command line and the web app read instead of branching on
model types.

Each family package (``corels/``, ``frl/``, ``rulesets/``) declares one :class:`Family` in its
``family.py``: its estimator and model classes (named, imported on first use), what it accepts (classes,
sample and class weights, a described class, domain constraints, cross-validation), its command-line
options and its web form. A new family is one package and one line in :data:`FAMILY_MODULES`.
"""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass, field, replace
from importlib import import_module
from typing import Any, Callable

from .escape import shown
from .parameters import (
    NOT_GIVEN,
    SHARED_NAMES,
    Declared,
    Interval,
    ParameterError,
    add_option,
    option_of,
    with_current_names,
)


@dataclass(frozen=True)
class Parameter:
    """One setting of a web form: its estimator keyword, label, kind and range, and the check of what a
    page sends for it. A family's fields are made from its estimator's declarations (:meth:`of`); a few
    settings of the app's own (memory in MB, missing values as a flag) are written here."""

    name: str
    label: str
    kind: str  # "number", "integer", "flag", "choice", "class" (the text of a class of the target) or
    # "names" (features or columns, separated by commas)
    default: Any = None
    low: float | None = None
    high: float | None = None
    choices: tuple = ()  # for "choice": (value, label) pairs; the value "" means None
    closed: str = "both"  # which ends of [low, high] a number may take (as :class:`Interval`)

    @classmethod
    def of(cls, entry: Declared, label: str, default: Any, low: float | None = None, high: float | None = None,
           kind: str | None = None, choices: tuple = ()) -> "Parameter":
        """The field of a declared parameter: its kind, range and choices from the declaration, the range
        narrowed to ``[low, high]`` (the web app serves anyone: it offers what a run can finish), the
        choices to ``choices`` ((value, label) pairs) if given."""
        if kind is None:
            kind = ("integer" if entry.number.whole else "number") if entry.number is not None else (
                "flag" if entry.flag else "choice" if entry.options else "names" if entry.kind == "names" else None)
        if kind is None:
            raise ValueError(f"{entry.name}: a web form has no field for {entry.takes()}")
        if kind == "choice" and not choices:  # None first (as "" in a form), labelled by what it means
            choices = (((("", entry.none_means or "none"),) if entry.none else ())
                       + tuple((option, option) for option in entry.options))
        if kind == "choice" and default is None:
            default = ""
        interval = entry.number.narrowed(low, high) if entry.number is not None else Interval()
        return cls(entry.name, label, kind, default, interval.low, interval.high, choices, interval.closed)

    def read(self, params: dict):
        """The value in ``params`` (the default when absent), checked; ParameterError says what is wrong."""
        value = params.get(self.name, self.default)
        if self.kind == "flag":
            if not isinstance(value, bool):
                raise ParameterError(f"{self.name} must be true or false, got {shown(value)}")
            return value
        if self.kind == "choice":
            allowed = [choice for choice, _ in self.choices]
            if value not in allowed and not (value is None and "" in allowed):
                raise ParameterError(f"{self.name} must be one of {allowed}, got {shown(value)}")
            return value or None
        if self.kind == "class":
            if value is not None and not isinstance(value, str):
                raise ParameterError(f"{self.name} must be the text of a class (or empty), got {shown(value)}")
            return value or None
        if self.kind == "names":
            return self._names(value)
        if self.default is None and value in (None, ""):
            return None  # an optional number left empty: no bound
        return self._number(value)

    def _names(self, value):
        if value is None:
            return None
        if isinstance(value, str):
            value = value.split(",")
        if not isinstance(value, list) or not all(isinstance(name, str) for name in value):
            raise ParameterError(f"{self.name} must be names separated by commas, got {shown(value)}")
        names = [name.strip() for name in value if name.strip()]
        return names or None

    def _number(self, value):
        """A number a page sent (JSON, or the text of a field), in the field's range."""
        sent = shown(value)
        if isinstance(value, bool) or not isinstance(value, (int, float, str)) or (isinstance(value, str) and len(value) > 100):
            raise ParameterError(f"{self.name} must be a number, got {sent}")
        try:
            number = float(value)
        except (ValueError, OverflowError):  # (OverflowError: an integer of hundreds of digits)
            raise ParameterError(f"{self.name} must be a number of at most 300 digits, got {sent}") from None
        if not math.isfinite(number):
            raise ParameterError(f"{self.name} must be finite, got {sent}")
        interval = Interval(self.low, self.high, self.closed, self.kind == "integer")
        if not interval.holds(number):
            raise ParameterError(f"{self.name} must be {interval.text()}, got {sent}")
        return int(number) if self.kind == "integer" else number

    def describe(self) -> dict:
        """What a page needs to draw the field."""
        return {"name": self.name, "label": self.label, "kind": self.kind, "default": self.default,
                "min": self.low, "max": self.high, "choices": [list(c) for c in self.choices]}


@dataclass(frozen=True)
class Field:
    """One field of a family's web form: a parameter of its estimator, its label, and what the form
    changes of the declaration (a narrower range, another default: see :meth:`Parameter.of`)."""

    name: str
    label: str
    low: float | None = None
    high: float | None = None
    default: Any = "the estimator's"
    kind: str | None = None  # "class" for a class of the target, typed as text
    #: a field every family's form has (budgets, features per rule): this family's range and default of it
    common: bool = False


#: the web form's fields of the shared parameters a capability brings (as the command line's shared
#: options: --max-rules, --forbid, --require, --fairness, --max-unfairness)
CAPABILITY_FIELDS = (
    ("constraints", (Field("max_rules", "At most this many rules"),
                     Field("forbidden", "Features or columns no rule may use"),
                     Field("required", "Features or columns some rule must use"))),
    ("fairness", (Field("fairness", "Fairness constraint (between the sensitive column's two groups)"),
                  Field("max_unfairness", "Largest gap allowed between the groups' rates"))),
)


@dataclass(frozen=True)
class Option:
    """One command-line option of a family: a parameter of its estimator, with its type, choices, default
    and help from the declaration (:func:`optrules.parameters.add_option`)."""

    name: str
    flags: tuple[str, ...] = ()  # default: --name-with-dashes
    several: bool | str = False  # one or more values (the --cv parameter's; text: what several do, for the help)
    metavar: str | None = None


@dataclass(frozen=True)
class WarmUp:
    """One part of ``optrules compile`` (:mod:`optrules.warmup`): a function of the family's package whose
    small fits compile kernels a real fit would otherwise compile in its first call."""

    label: str  # what the command prints
    function_path: str  # "module:function"
    large: bool = False  # only large problems take its kernels: ``--skip-large`` leaves it out
    first: bool = False  # a first session takes its kernels: ``--first`` runs only such parts

    def run(self) -> None:
        _resolve(self.function_path)()


@dataclass(frozen=True)
class Family:
    """One model family, as the command line and the web app see it."""

    name: str  # the --model value and the web form's
    title: str  # one line, for menus
    estimator_path: str  # "module:Class"
    model_path: str
    #: the family's solvers ("module:Class", each a :class:`~optrules.solve.Solver`): what its fits and its
    #: Rashomon sets run; the solver contract test (``tests/test_solver_contract.py``) holds each to it
    solver_paths: tuple[str, ...]
    #: the parameter --cv chooses, or None
    cv_parameter: str | None
    #: one search across a Dask cluster's workers (``fit --scheduler``)
    cluster: bool = False
    #: the estimator's declared parameters (its ``_parameter_table``, from the family's light
    #: ``parameters`` module: the front ends read it without importing the solver)
    parameters: tuple[Declared, ...] = ()
    #: the web form's settings beyond the common ones (every family: budgets, max_card, missing values)
    #: that need a label, range or default of their own; every other parameter of the family's own
    #: (:meth:`own_parameters`) gets a field as declared, unless ``form_leaves_out`` names it
    form_fields: tuple[Field, ...] = ()
    #: the family's own command-line options of ``fit`` that need flags or several values; every other
    #: parameter of its own gets an option as declared (:attr:`options`), unless ``cli_leaves_out`` names it
    cli_options: tuple[Option, ...] = ()
    #: own parameters the command line offers no option of their own: the shared options offer them
    #: (``--max-rules``, ``--forbid``, ``--require``, ``--refine``), or none does (measurement switches)
    cli_leaves_out: tuple[str, ...] = ()
    #: own parameters the web form leaves out (a public server offers what a run can finish)
    form_leaves_out: tuple[str, ...] = ()
    #: estimator settings the web app fixes for this family, from the common ones
    web_settings: Callable[[dict], dict] = field(default=lambda common: {})
    #: estimator settings the command line fixes for this family, from the common ones
    cli_settings: Callable[[dict], dict] = field(default=lambda common: {})
    #: (args, estimator) -> a cross-validated search over the family's --cv parameter, unfitted
    cv_from_cli: Callable | None = None
    #: the --cv parameter's title in tables ("" for its name)
    cv_title: str = ""
    #: the cross-validation table's size column in ``cv_results_`` and its title
    cv_size: tuple[str, str] = ("", "")
    #: (args) -> the values the command line was given for the --cv parameter
    cv_candidates: Callable = field(default=lambda args: [])
    #: (fitted estimator) -> what was fitted, after the data's name ("lambda = 0.01")
    settings_text: Callable = field(default=lambda model: "")
    #: (fitted estimator) -> a few words added to the training accuracy line ("" for none)
    fit_text: Callable = field(default=lambda model: "")
    #: (args) -> (model, certificate): fit the C++ CORELS reference's prepared ``.out``/``.label``
    #: (/``.minor``) files named by ``--reference-out`` and its companions; None: the family cannot
    fit_reference_files: Callable | None = None
    #: what ``optrules compile`` runs for this family, in order
    warm_up: tuple[WarmUp, ...] = ()

    @property
    def cv_label(self) -> str:
        return self.cv_title or self.cv_parameter or ""

    @property
    def estimator(self) -> type:
        return _resolve(self.estimator_path)

    @property
    def model(self) -> type:
        return _resolve(self.model_path)

    @property
    def solvers(self) -> tuple[type, ...]:
        return tuple(_resolve(path) for path in self.solver_paths)

    # -- capabilities, read from the estimator: its declarations (light), else its class ---------------
    def _declares(self, name: str) -> bool:
        return any(entry.name == name for entry in self.parameters)

    @property
    def class_weight(self) -> bool:
        """The ``class_weight`` parameter."""
        return self._declares("class_weight")

    @property
    def pos_label(self) -> bool:
        """The ``pos_label`` parameter (binary families: the class described)."""
        return self._declares("pos_label")

    @property
    def constraints(self) -> bool:
        """``max_rules``, ``forbidden`` and ``required``."""
        return all(self._declares(name) for name in ("max_rules", "forbidden", "required"))

    @property
    def fairness(self) -> bool:
        """A fairness constraint (``fairness``, ``max_unfairness``; ``fit(..., sensitive=)``)."""
        return self._declares("fairness")

    @property
    def n_jobs(self) -> bool:
        """Searches on several threads (``n_jobs``)."""
        return self._declares("n_jobs")

    @property
    def multiclass(self) -> bool:
        """Learns from more than two classes (the estimator's ``multiclass``)."""
        return bool(getattr(self.estimator, "multiclass", False))

    @property
    def sample_weight(self) -> bool:
        """``fit(X, y, sample_weight=...)``."""
        return "sample_weight" in inspect.signature(self.estimator.fit).parameters

    @property
    def rashomon(self) -> bool:
        """Its fitted estimator enumerates the Rashomon set (``rashomon_set``): the command line's
        ``rashomon`` and the web app's Rashomon form serve it."""
        return callable(getattr(self.estimator, "rashomon_set", None))

    def own_parameters(self) -> tuple[Declared, ...]:
        """The parameters the family declares beside those several families share (``optrules.parameters``,
        which the front ends offer by options and fields of their own), old names left out."""
        return tuple(entry for entry in self.parameters if entry.name not in SHARED_NAMES and not entry.renames)

    @property
    def options(self) -> tuple[Option, ...]:
        """The family's own command-line options: those listed, then every other own parameter as declared."""
        listed = {option.name for option in self.cli_options}
        return self.cli_options + tuple(Option(entry.name) for entry in self.own_parameters()
                                        if entry.name not in listed and entry.name not in self.cli_leaves_out)

    def _form_fields(self) -> tuple[Field, ...]:
        """The listed fields, then every own parameter's, then the fields of the capabilities it has."""
        listed = {f.name for f in self.form_fields}
        own = tuple(Field(entry.name, entry.help[:1].upper() + entry.help[1:]) for entry in self.own_parameters()
                    if entry.name not in listed and entry.name not in self.form_leaves_out)
        capable = tuple(f for capability, fields in CAPABILITY_FIELDS for f in fields
                        if getattr(self, capability) and f.name not in listed)
        return self.form_fields + own + capable

    @property
    def form(self) -> tuple[Parameter, ...]:
        """The web form's fields beyond the common ones, made from the estimator's declarations."""
        fields = []
        for f in self._form_fields():
            if f.common:
                continue
            entry = self.declared(f.name)
            fields.append(Parameter.of(entry, f.label, entry.default if f.default == "the estimator's" else f.default,
                                       f.low, f.high, f.kind))
        return tuple(fields)

    def common_field(self, common: Parameter) -> Parameter:
        """A field every family's form has, with this family's range and default of it, if it says."""
        for f in self.form_fields:
            if f.common and f.name == common.name:
                return replace(common, low=f.low, high=f.high,
                               default=common.default if f.default == "the estimator's" else f.default)
        return common

    def declared(self, name: str) -> Declared:
        """The declaration of the estimator's parameter ``name``."""
        for entry in self.parameters:
            if entry.name == name:
                return entry
        raise KeyError(f"the {self.name} family declares no parameter {name!r}")

    def option_flags(self, option: Option) -> tuple[str, ...]:
        return option.flags or (option_of(option.name),)

    def given_values(self, args, name: str) -> list:
        """The values the command line gave the family's option ``name`` (its default when not given)."""
        value = getattr(args, name)
        return [self.declared(name).default] if value is NOT_GIVEN else value if isinstance(value, list) else [value]

    def cli_values(self, args) -> dict:
        """The family's own options as the command line gave them (the first value of several); an option
        several families share, not given, is left out: the estimator keeps its own default."""
        values = {option.name: getattr(args, option.name) for option in self.options}
        return {name: value[0] if isinstance(value, list) else value for name, value in values.items()
                if value is not NOT_GIVEN}

    def estimator_from_cli(self, args, common: dict, pos_label=None):
        """The estimator ``optrules fit`` fits, unfitted: the family's own options as given (:meth:`cli_values`),
        and of the settings every family's command line offers (``common``, the budgets' options, the class
        the model describes) those its estimator declares, then what the family fixes (``cli_settings``)."""
        shared = {**common, "max_nodes": args.max_nodes, "max_antecedents": getattr(args, "max_antecedents", None),
                  "n_jobs": getattr(args, "n_jobs", None), "pos_label": pos_label}
        return self.estimator(**self.cli_values(args), **{**self.accepted(shared), **self.cli_settings(common)})

    def estimator_from_form(self, params: dict, common: dict):
        """The estimator a web run fits: the form's settings (checked) plus what the app fixes."""
        settings = {parameter.name: parameter.read(params) for parameter in self.form}
        return self.estimator(**{**settings, **self.accepted(common), **self.web_settings(common)})

    def with_current_names(self, params: dict) -> dict:
        """A front end's settings with the old names of the estimator's parameters (``C``, ``max_degree``)
        replaced by the current ones."""
        return with_current_names(self.parameters, params)

    def accepted(self, common: dict) -> dict:
        """The settings of ``common`` (those every front end offers) that this family's estimator takes:
        falling lists, say, take no ``class_weight``."""
        own = {entry.name for entry in self.parameters}
        return {key: value for key, value in common.items() if key in own}

    def describe(self) -> dict:
        return {"name": self.name, "title": self.title, "multiclass": self.multiclass, "rashomon": self.rashomon,
                "parameters": [parameter.describe() for parameter in self.form]}


def add_cli_options(parser, known: dict[str, Family]) -> None:
    """Add every family's own options to ``fit``'s parser, a group per family. An option several families
    take (the same flags: ``-r/--regularization``) is added once, in the first one's group: it takes what
    any of them takes, and each estimator keeps its own default when it is not given."""
    added: set[str] = set()
    for each in known.values():
        group = parser.add_argument_group(f"{each.title} (--model {each.name})")
        for option in each.options:
            flags = each.option_flags(option)
            if flags[0] in added:
                continue
            added.update(flags)
            takers = {other.name: other.declared(option.name) for other in known.values()
                      if any(other.option_flags(o) == flags and o.name == option.name for o in other.options)}
            add_option(group, each.declared(option.name), *flags, several=option.several, metavar=option.metavar,
                       takers=takers)


def _resolve(path: str):
    module, name = path.split(":")
    return getattr(import_module(module), name)


#: the family modules, in the order menus show them (the first is the default)
FAMILY_MODULES = ("optrules.corels.family", "optrules.frl.family", "optrules.rulesets.family")


def families() -> dict[str, Family]:
    """Every family by name, the default first."""
    found = [import_module(module).FAMILY for module in FAMILY_MODULES]
    return {family.name: family for family in found}


def default_family() -> Family:
    """The family a front end fits when none is named (the first of :data:`FAMILY_MODULES`)."""
    return next(iter(families().values()))


def names_where(test: Callable[[Family], Any]) -> list[str]:
    """The names of the families for which ``test(family)`` holds (those that take an option, say)."""
    return [name for name, found in families().items() if test(found)]


def with_rashomon_sets() -> list[str]:
    """The names of the families whose fits enumerate Rashomon sets."""
    return names_where(lambda found: found.rashomon)


def family(name: str) -> Family:
    """The family called ``name``, or a ValueError listing the known ones."""
    known = families()
    if name not in known:
        raise ValueError(f"unknown model family {name!r}; choose one of {', '.join(known)}")
    return known[name]
