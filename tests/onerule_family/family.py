"""The one-rule family, as the command line and the web app offer it."""

from __future__ import annotations

from optrules.families import Family, Parameter


def _add_cli_options(parser) -> None:
    group = parser.add_argument_group("one rule (--model onerule)")
    group.add_argument("--one-rule-thresholds", type=int, default=9, help="quantile thresholds per numeric column")


def _from_cli(args, common: dict, pos_label):
    from .estimator import OneRuleClassifier

    return OneRuleClassifier(n_thresholds=args.one_rule_thresholds,
                             **{**FAMILY.accepted(common), "thresholds": "quantile"})


FAMILY = Family(
    name="onerule",
    title="the best single rule (a baseline)",
    estimator_path="onerule_family.estimator:OneRuleClassifier",
    model_path="onerule_family.model:OneRule",
    multiclass=True,
    sample_weight=True,
    class_weight=False,
    pos_label=False,
    constraints=False,
    cv_parameter=None,
    form=(Parameter("n_thresholds", "Quantile thresholds per numeric column", "integer", 9, 1, 50),),
    add_cli_options=_add_cli_options,
    from_cli=_from_cli,
    settings_text=lambda model: f"{len(model.binarizer_.feature_names_)} features tried",
)
