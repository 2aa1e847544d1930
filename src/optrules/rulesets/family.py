"""Boolean rule sets, as the command line and the web app offer them."""

from __future__ import annotations

from ..families import Family, Field, Option, WarmUp
from .parameters import RULE_SET_PARAMETERS


def _cv_from_cli(args, estimator):
    from .model_selection import RuleSetCV

    return RuleSetCV(FAMILY.given_values(args, "complexity"), estimator, pos_labels="both" if args.pos_label == "both" else None,
                     cv=args.cv, n_jobs=args.n_jobs)


def _fit_text(model) -> str:
    # the objective is a weighted Hamming loss (a negative counts once per clause covering it): the
    # mistakes beside it, and its gap as a share of the training rows (their weight)
    certificate = model.certificate_
    mistakes = certificate.counters["training_mistakes"]
    text = f"{mistakes:,} training mistakes, complexity {model.rule_set_.complexity}"
    if abs(certificate.objective - mistakes) > 1e-9:  # (weights, a price per unit of complexity, or overlaps)
        text += (f"; the objective, {certificate.objective:,.6g}, counts each missed row at its weight, a row of "
                 "the other class once for each clause that covers it, and the price of the complexity")
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
    solver_paths=("optrules.rulesets.colgen:ColumnGeneration", "optrules.rulesets.fair:FairRuleSetSolver"),
    cv_parameter="complexity",
    parameters=RULE_SET_PARAMETERS,
    form_fields=(
        Field("complexity", "Complexity bound", low=2.0, high=1000.0, default=20.0),
        Field("max_card", "Conditions per clause", low=1, high=10, common=True),
        Field("pos_label", "Class it describes", kind="class"),
    ),
    cli_options=(Option("complexity", several=True), Option("regularization", ("--regularization", "-r")),
                 Option("cnf"), Option("max_degree"), Option("penalty"), Option("fairness"),
                 Option("max_unfairness", metavar="EPS", several="with --fairness: the certified optimum under each, a "
                                                                 "table and the --report's curve (the tightest kept)")),
    # the form's "features per rule" left empty: 3 conditions per clause, which a web run finishes
    web_settings=lambda common: {"pricing_time_limit": min(common["time_limit"], 10.0),
                                 "max_card": common.get("max_card", 3)},
    # (the command line's rule sets search negated features whatever --negations says)
    cli_settings=lambda common: {"negations": True},
    cv_from_cli=_cv_from_cli,
    cv_size=("mean_complexity", "complexity found"),
    # (min_support means another thing than the rule lists' --min-support; exact pricing takes a flag or a name)
    cli_leaves_out=("min_support", "exact_pricing"),
    form_leaves_out=("cnf", "regularization", "pricing_time_limit", "beam_width", "exact_pricing", "max_pricing_samples",
                     "max_pricing_features", "min_support"),
    cv_candidates=lambda args: FAMILY.given_values(args, "complexity"),
    settings_text=lambda model: f"{len(model.binarizer_.feature_names_)} features, complexity <= {model.complexity:g}",
    fit_text=_fit_text,
    warm_up=(WarmUp("rule sets (exact pricing)", "optrules.rulesets.warmup:rule_sets"),),
)
