"""Falling rule lists, as the command line and the web app offer them."""

from __future__ import annotations

from ..families import Family, Parameter, WarmUp
from . import DEFAULT_C, DEFAULT_W


def _add_cli_options(parser) -> None:
    group = parser.add_argument_group("falling rule lists (--model frl)")
    group.add_argument("--w", type=float, default=DEFAULT_W, help=f"weight of a positive (default {DEFAULT_W:g})")
    group.add_argument("--C", type=float, default=DEFAULT_C, help=f"price of a rule (default {DEFAULT_C:g})")
    group.add_argument("--C1", type=float, default=0.5, help="price of rising probabilities, with --soft (default 0.5)")
    group.add_argument("--soft", action="store_true", help="softly falling list")
    group.add_argument("--method", choices=["certified", "montecarlo"], default="certified")
    group.add_argument("--iterations", type=int, default=3000, help="Monte-Carlo rounds (default 3000)")
    group.add_argument("--seed", type=int, default=None, help="random seed of the Monte-Carlo search")
    group.add_argument("--min-class-support", type=float, default=0.1,
                       help="antecedents hold for this share of a class at least (default 0.1)")


def _from_cli(args, common: dict, pos_label):
    from .estimator import FallingRuleListClassifier

    return FallingRuleListClassifier(
        w=args.w, C=args.C, C1=args.C1, soft=args.soft, method=args.method, iterations=args.iterations,
        random_state=args.seed, max_nodes=args.max_nodes, min_class_support=args.min_class_support,
        max_antecedents=args.max_antecedents, pos_label=pos_label, **FAMILY.accepted(common),
    )


def _settings_text(model) -> str:
    return (f"{len(model.antecedents_)} antecedents, w = {model.w:g}, C = {model.C:g}"
            + (f", C1 = {model.C1:g}" if model.soft else ""))


FAMILY = Family(
    name="frl",
    title="falling rule list",
    estimator_path="optrules.frl.estimator:FallingRuleListClassifier",
    model_path="optrules.frl.model:FallingRuleList",
    multiclass=False,
    sample_weight=True,
    class_weight=False,
    pos_label=True,
    constraints=False,
    cv_parameter=None,
    form=(
        Parameter("w", "w (weight of a positive)", "number", DEFAULT_W, 1e-6, 1e6),
        Parameter("C", "C (price of a rule)", "number", DEFAULT_C, 0.0, 1.0),
        Parameter("soft", "softly falling", "flag", False),
        Parameter("pos_label", "Class whose probability falls", "class"),
    ),
    web_settings=lambda common: {"random_state": 0},
    add_cli_options=_add_cli_options,
    from_cli=_from_cli,
    settings_text=_settings_text,
    warm_up=(
        WarmUp("falling rule lists", "optrules.frl.warmup:falling_rule_lists"),
        WarmUp("falling lists with 65,535+ antecedents", "optrules.frl.warmup:many_antecedents", large=True),
    ),
)
