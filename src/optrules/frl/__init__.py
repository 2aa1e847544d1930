"""Falling rule lists (Chen and Rudin, AISTATS 2018): objective, bounds, certified and Monte-Carlo searches."""
