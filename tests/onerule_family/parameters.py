"""The one-rule estimator's parameters, declared once (a light module: the front ends read it)."""

from optrules.parameters import (
    BINARIZER_PARAMETERS,
    CONSTRAINT_PARAMETERS,
    MAX_MEMORY,
    N_JOBS,
    TIME_LIMIT,
    VERBOSE,
    Declared,
    Interval,
    with_defaults,
)

ONE_RULE_PARAMETERS = (with_defaults((TIME_LIMIT,), time_limit=None) + (MAX_MEMORY, VERBOSE)
                       + with_defaults(BINARIZER_PARAMETERS, thresholds="quantile", negations=False)
                       + (Declared("block", "features tried between two progress reports", 8, Interval(1, 64, whole=True)),)
                       + CONSTRAINT_PARAMETERS + (N_JOBS,))
