"""Rule lists under a fairness constraint: the metrics (compared exactly), the certified search with free
labels, and its exhaustive reference."""
