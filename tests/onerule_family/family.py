"""The one-rule family, as the command line and the web app offer it."""

from __future__ import annotations

from optrules.families import Family, Field, Option

from .parameters import ONE_RULE_PARAMETERS

FAMILY = Family(
    name="onerule",
    title="the best single rule (a baseline)",
    estimator_path="onerule_family.estimator:OneRuleClassifier",
    model_path="onerule_family.model:OneRule",
    solver_paths=("onerule_family.solver:OneRuleSearch",),
    cv_parameter=None,
    parameters=ONE_RULE_PARAMETERS,
    form_fields=(Field("n_thresholds", "Quantile thresholds per numeric column", high=50),),
    cli_options=(Option("n_thresholds", ("--one-rule-thresholds",)),),
    cli_settings=lambda common: {"thresholds": "quantile"},
    settings_text=lambda model: f"{len(model.binarizer_.feature_names_)} features tried",
)
