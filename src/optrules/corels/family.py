"""Certifiably optimal rule lists, as the command line and the web app offer them."""

from __future__ import annotations

from ..families import Family, Parameter, WarmUp


def _add_cli_options(parser) -> None:
    group = parser.add_argument_group("rule lists (--model rulelist, the default)")
    group.add_argument("--regularization", "-r", type=float, nargs="+", default=[0.01], metavar="LAMBDA",
                       help="lambda: the price of one rule in training accuracy (default 0.01); several values "
                            "with --cv")
    group.add_argument("--min-support", type=float, default=None, help="antecedent support floor (default: lambda)")
    group.add_argument("--policy", default="lower_bound", choices=["lower_bound", "objective", "curiosity", "bfs", "dfs"],
                       help="queue order (default lower_bound)")
    group.add_argument("--map-type", default="auto", choices=["auto", "prefix", "captured", "none"],
                       help="symmetry-aware map (default auto: captured on few groups of samples, else prefix)")


def _from_cli(args, common: dict, pos_label):
    from .estimator import RuleListClassifier

    return RuleListClassifier(
        regularization=args.regularization[0], min_support=args.min_support, policy=args.policy,
        map_type=args.map_type, max_nodes=args.max_nodes, max_antecedents=args.max_antecedents, **FAMILY.accepted(common),
    )


def _cv_from_cli(args, estimator):
    from .model_selection import RuleListCV

    return RuleListCV(args.regularization, estimator, cv=args.cv, n_jobs=args.n_jobs)


def _fit_reference_files(args):
    from . import fit_reference

    return fit_reference(args.reference_out, args.reference_label, args.reference_minor, args.regularization[0],
                         policy=args.policy, map_type=args.map_type, max_nodes=args.max_nodes,
                         time_limit=args.time_limit)


FAMILY = Family(
    name="rulelist",
    title="rule list (certifiably optimal, CORELS)",
    estimator_path="optrules.corels.estimator:RuleListClassifier",
    model_path="optrules.corels.model:RuleList",
    multiclass=True,
    sample_weight=True,
    class_weight=True,
    pos_label=False,
    constraints=True,
    cv_parameter="regularization",
    rashomon=True,
    form=(
        Parameter("regularization", "lambda (price of a rule)", "number", 0.01, 0.0, 0.999),
        Parameter("class_weight", "Class weights", "choice", "", choices=(("", "equal"), ("balanced", "balanced"))),
        Parameter("max_rules", "At most this many rules", "integer", None, 0, None),
        Parameter("forbidden", "Features or columns no rule may use", "names"),
        Parameter("required", "Features or columns some rule must use", "names"),
        Parameter("refine", "then search quantile thresholds too, from the boosted optimum", "flag", False),
    ),
    add_cli_options=_add_cli_options,
    from_cli=_from_cli,
    cv_from_cli=_cv_from_cli,
    cv_title="lambda",
    cv_size=("mean_n_rules", "rules"),
    cv_candidates=lambda args: args.regularization,
    settings_text=lambda model: f"{len(model.antecedents_)} antecedents, lambda = {model.regularization:g}",
    fit_reference_files=_fit_reference_files,
    warm_up=(
        WarmUp("rule lists (and Rashomon sets)", "optrules.corels.warmup:rule_lists"),
        WarmUp("rule lists on large tables (two cores)", "optrules.corels.warmup:large_rule_list", large=True),
        WarmUp("rule lists with 65,535+ antecedents", "optrules.corels.warmup:many_antecedents", large=True),
    ),
)
