"""Boolean rule sets, as the command line and the web app offer them."""

from __future__ import annotations

from ..families import Family, Parameter, WarmUp


def _add_cli_options(parser) -> None:
    group = parser.add_argument_group("Boolean rule sets (--model ruleset)")
    group.add_argument("--complexity", type=float, nargs="+", default=[30.0],
                       help="bound on clauses + conditions (default 30); several values with --cv K to choose")
    group.add_argument("--max-degree", type=int, default=5, help="conditions per clause (default 5)")
    group.add_argument("--cnf", action="store_true", help="learn a CNF (AND of ORs) instead of a DNF")
    group.add_argument("--penalty", type=float, default=0.0, help="price per unit of complexity (default 0)")


def _from_cli(args, common: dict, pos_label):
    from .estimator import RuleSetClassifier

    return RuleSetClassifier(
        complexity=args.complexity[0], max_degree=args.max_degree, cnf=args.cnf, penalty=args.penalty,
        pos_label=pos_label, max_nodes=args.max_nodes, **{**FAMILY.accepted(common), "negations": True},
    )


def _cv_from_cli(args, estimator):
    from .model_selection import RuleSetCV

    return RuleSetCV(args.complexity, estimator, pos_labels="both" if args.pos_label == "both" else None,
                     cv=args.cv, n_jobs=args.n_jobs)


def _fit_text(model) -> str:
    # the objective is a weighted Hamming loss (a negative counts once per clause covering it): the
    # mistakes beside it, and its gap as a share of the training rows (their weight)
    certificate = model.certificate_
    text = f"{certificate.counters['training_mistakes']:,} training mistakes, complexity {model.rule_set_.complexity}"
    gap = certificate.gap
    if gap > 0:
        rows = sum(sum(totals) for totals in model.rule_set_.branch_totals or ())
        points = f" ({100 * gap / rows:.2f} accuracy points)" if rows > 0 else ""
        text += f"; objective at most {gap:,.6g}{points} above the best rule set's"
        if certificate.lower_bound <= 0 and not certificate.counters.get("lp_solved"):
            # a gap as large as the objective says nothing: say why, and what lets the proof finish
            text += (" (no lower bound yet: the master LP's bound was not proven within the budget; a larger "
                     "budget, or a smaller complexity bound, lets the proof finish)")
    return text


FAMILY = Family(
    name="ruleset",
    title="Boolean rule set (column generation)",
    estimator_path="optrules.rulesets.estimator:RuleSetClassifier",
    model_path="optrules.rulesets.model:RuleSet",
    multiclass=False,
    sample_weight=True,
    class_weight=True,
    pos_label=True,
    constraints=False,
    cv_parameter="complexity",
    form=(
        Parameter("complexity", "Complexity bound", "number", 20.0, 2.0, 1000.0),
        Parameter("max_degree", "Conditions per clause", "integer", 3, 1, 10),
        Parameter("pos_label", "Class it describes", "class"),
    ),
    web_settings=lambda common: {"pricing_time_limit": min(common["time_limit"], 10.0)},
    add_cli_options=_add_cli_options,
    from_cli=_from_cli,
    cv_from_cli=_cv_from_cli,
    cv_size=("mean_complexity", "complexity found"),
    cv_candidates=lambda args: args.complexity,
    settings_text=lambda model: f"{len(model.binarizer_.feature_names_)} features, complexity <= {model.complexity:g}",
    fit_text=_fit_text,
    warm_up=(WarmUp("rule sets (exact pricing)", "optrules.rulesets.warmup:rule_sets"),),
)
