"""Falling rule lists, as the command line and the web app offer them."""

from __future__ import annotations

from ..families import Family, Field, Option, WarmUp
from ..parameters import value_of
from .parameters import FALLING_LIST_PARAMETERS


def _settings_text(model) -> str:
    return (f"{len(model.antecedents_)} antecedents, w = {model.w:g}, lambda = {value_of(model, 'regularization'):g}"
            + (f", C1 = {model.C1:g}" if model.soft else ""))


FAMILY = Family(
    name="frl",
    title="falling rule list",
    estimator_path="optrules.frl.estimator:FallingRuleListClassifier",
    model_path="optrules.frl.model:FallingRuleList",
    solver_paths=("optrules.frl.search:FallingListSearch",),
    cv_parameter=None,
    parameters=FALLING_LIST_PARAMETERS,
    form_fields=(
        Field("w", "w (weight of a positive)", low=1e-6, high=1e6),
        Field("regularization", "lambda (price of a rule)", high=1.0),
        Field("soft", "softly falling"),
        Field("pos_label", "Class whose probability falls", kind="class"),
    ),
    cli_options=(Option("w"), Option("regularization", ("--regularization", "-r")), Option("C"), Option("C1"), Option("soft"),
                 Option("method"), Option("iterations"),
                 Option("random_state", ("--seed",), metavar="SEED"), Option("min_class_support")),
    form_leaves_out=("C1", "method", "iterations", "prob_terminate", "curiosity_weight", "min_class_support"),
    web_settings=lambda common: {"random_state": 0},
    settings_text=_settings_text,
    warm_up=(
        WarmUp("falling rule lists", "optrules.frl.warmup:falling_rule_lists"),
        WarmUp("falling lists on several cores", "optrules.frl.warmup:falling_lists_on_threads", large=True),
        WarmUp("falling lists with 65,535+ antecedents", "optrules.frl.warmup:many_antecedents", large=True),
    ),
)
