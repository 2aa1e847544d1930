"""Certifiably optimal rule lists, as the command line and the web app offer them."""

from __future__ import annotations

from ..families import Family, Field, Option, WarmUp
from .parameters import RULE_LIST_PARAMETERS


def _cv_from_cli(args, estimator):
    from .model_selection import RuleListCV

    return RuleListCV(FAMILY.given_values(args, "regularization"), estimator, cv=args.cv, n_jobs=args.n_jobs)


def _fit_reference_files(args):
    from . import fit_reference

    return fit_reference(args.reference_out, args.reference_label, args.reference_minor,
                         FAMILY.given_values(args, "regularization")[0],
                         policy=args.policy, map_type=args.map_type, max_nodes=args.max_nodes,
                         time_limit=args.time_limit)


FAMILY = Family(
    name="rulelist",
    title="rule list (certifiably optimal, CORELS)",
    estimator_path="optrules.corels.estimator:RuleListClassifier",
    model_path="optrules.corels.model:RuleList",
    solver_paths=("optrules.corels.search:RuleListSearch", "optrules.corels.cluster:ClusterSearch",
                  "optrules.corels.rashomon:RashomonEnumeration", "optrules.fairness.search:FairListSolver"),
    cv_parameter="regularization",
    cluster=True,
    parameters=RULE_LIST_PARAMETERS,
    form_fields=(
        Field("regularization", "lambda (price of a rule)", high=0.999),
        Field("class_weight", "Class weights"),
        Field("refine", "then search quantile thresholds too, from the boosted optimum"),
    ),
    cli_options=(Option("regularization", ("--regularization", "-r"), several=True, metavar="LAMBDA"),
                 Option("min_support"), Option("policy"), Option("map_type"), Option("fairness"),
                 Option("max_unfairness", metavar="EPS", several="with --fairness: the certified optimum under each, a table and "
                                                                "the --report's curve (the tightest bound's list kept)")),
    # (a shared option offers refine; the bounds' switches measure)
    cli_leaves_out=("refine", "use_minimum_support", "use_accurate_support", "use_excessive_support", "use_lookahead",
                    "use_equivalent_points"),
    form_leaves_out=("min_support", "policy", "map_type", "greedy_start", "use_minimum_support", "use_accurate_support",
                     "use_excessive_support", "use_lookahead", "use_equivalent_points"),
    cv_from_cli=_cv_from_cli,
    cv_title="lambda",
    cv_size=("mean_n_rules", "rules"),
    cv_candidates=lambda args: FAMILY.given_values(args, "regularization"),
    settings_text=lambda model: f"{len(model.antecedents_)} antecedents, lambda = {model.regularization:g}",
    fit_reference_files=_fit_reference_files,
    warm_up=(
        WarmUp("a first session (a rule list and its Rashomon set on bundled COMPAS)",
               "optrules.corels.warmup:first_session", first=True),
        WarmUp("rule lists (and Rashomon sets)", "optrules.corels.warmup:rule_lists"),
        WarmUp("rule lists on several cores", "optrules.corels.warmup:rule_lists_on_threads", large=True),
        WarmUp("rule lists with 65,535+ antecedents", "optrules.corels.warmup:many_antecedents", large=True),
    ),
)
