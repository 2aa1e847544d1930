"""The rule sets' exact pricing search on its own: how fast it proves the pricing problems a fit leaves.

For a few UCI folds (10-fold split of experiments/brcg_uci.py) a fit bounded by pricing work alone
(``max_nodes``, no time limits: the same duals on every machine) is run, and the duals of its last exact
pricing call are kept. On them the branch-and-bound (:class:`optrules.rulesets.enumeration.PricingSearch`)
proves the minimum reduced cost and the largest ratio (the certificate's search), in one part and in
two (threads on the two cores), for at most ``LIMIT`` seconds each: seconds, clauses searched, clauses a
second, and whether it finished. Run by hand: ``python benchmarks/pricing_search.py``; writes
``benchmarks/results/pricing_search.json`` and the table in its history file, benchmarks/history/ (and the summary, BENCHMARKS.md).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "experiments"))

from benchmarks_md import publish  # noqa: E402
from brcg_uci import folds  # noqa: E402
from uci import load  # noqa: E402

from optrules import RuleSetClassifier  # noqa: E402
from optrules.rulesets import colgen  # noqa: E402
from optrules.rulesets.enumeration import NodeBudget, PricingSearch  # noqa: E402

RESULTS = HERE / "results" / "pricing_search.json"
LIMIT = 20.0
# (dataset, fold, complexity bound, the fit's node budget)
PROBLEMS = [("ilpd", 4, 50, 20_000_000), ("ionosphere", 2, 10, 5_000_000)]


def last_duals(name: str, fold: int, complexity: float, max_nodes: int):
    """The pricing problem of the fit's last exact pricing over every clause: ``(data, mu, unit price,
    degree)``."""
    X, y, categorical = load(name)
    train, _ = folds(y)[fold]
    calls = []
    real = colgen._exact

    def keep(method, data, mu, unit_price, max_degree, *args, **kwargs):
        calls.append((data, mu, unit_price, max_degree))
        return real(method, data, mu, unit_price, max_degree, *args, **kwargs)
    colgen._exact = keep
    try:
        RuleSetClassifier(complexity=complexity, categorical=categorical, time_limit=None, pricing_time_limit=None,
                          max_nodes=max_nodes).fit(X.iloc[train], y[train])
    finally:
        colgen._exact = real
    deepest = max(call[3] for call in calls)  # the last search over every clause (not a shorter one)
    return [call for call in calls if call[3] == deepest][-1]


def measure(data, mu, price, degree, parts: int, raise_price: bool) -> dict:
    work = NodeBudget()
    search = PricingSearch(data, mu, price, degree, raise_price=raise_price, parts=parts)
    start = time.perf_counter()
    search.run(LIMIT, work=work)
    seconds = time.perf_counter() - start
    return {"parts": parts, "search": "largest ratio" if raise_price else "minimum", "seconds": seconds,
            "clauses": work.spent, "finished": bool(search.finished)}


def table(results: list[dict]) -> str:
    lines = ["| fold (features, conditions) | search | parts | s | clauses searched | million clauses / s | finished |",
             "|---|---|---|---|---|---|---|"]
    for r in results:
        lines.append(f"| {r['problem']} | {r['search']} | {r['parts']} | {r['seconds']:.2f} | {r['clauses']:,} | "
                     f"{r['clauses'] / r['seconds'] / 1e6:.1f} | {'yes' if r['finished'] else 'no'} |")
    return "\n".join(lines)


def main() -> None:
    results = []
    for name, fold, complexity, max_nodes in PROBLEMS:
        data, mu, price, degree = last_duals(name, fold, complexity, max_nodes)
        problem = f"{name} {fold}, C {complexity} ({data.n_features}, {degree})"
        for raise_price in (False, True):
            for parts in (1, 2):
                # the certificate's search starts where the minimum's is priced (the master's price of
                # complexity, or the best ratio met) and raises the price from there
                row = measure(data, mu, price, degree, parts, raise_price)
                results.append({"problem": problem, **row})
                print(table(results[-1:]).splitlines()[-1], flush=True)
    publish(RESULTS, results, "pricing_search", "python benchmarks/pricing_search.py", table(results),
            "Rule sets: the exact pricing search on its own")


if __name__ == "__main__":
    main()
