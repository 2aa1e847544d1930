"""Falling rule lists (Chen and Rudin, AISTATS 2018): objective, bounds, certified and Monte-Carlo searches."""

#: defaults of a falling rule list's costs, shared by the estimator, the command line and the web app:
#: a missed positive costs as much as a false alarm, and a rule must fix 0.1% of the rows to be worth
#: adding (the paper's w = 7, C = 1e-6 suit its bank marketing study, not a first look at a table:
#: on COMPAS they predict every row positive, and on bank marketing they keep rules of 72 rows)
DEFAULT_W = 1.0
DEFAULT_C = 1e-3
