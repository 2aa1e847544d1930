"""The curiosity dive: a lower-bound search not finished after a share of its time runs a search in the
curiosity order and takes its best list as incumbent. Only the incumbent may change: the answer and the
certificate must stay exact (brute force), and a stop asked during the dive ends the whole search."""

from __future__ import annotations

import time

import numpy as np
import pytest
from test_corels_search import check_result, planted_instance, random_instance

from optrules.budget import Budget
from optrules.certificate import INTERRUPTED
from optrules.corels import search as corels_search
from optrules.corels.bruteforce import brute_force
from optrules.corels.problem import Problem
from optrules.corels.search import search


@pytest.fixture
def dive_at_once(monkeypatch):
    """The dive at the first slice of every lower-bound search with a time limit."""
    monkeypatch.setattr(corels_search, "CURIOSITY_DIVE_AFTER", 0.0)


@pytest.mark.parametrize("seed", range(16))
def test_a_search_that_dives_keeps_the_optimum(dive_at_once, seed):
    rng = np.random.default_rng(7000 + seed)
    captures, y, lam = planted_instance(rng) if seed % 2 else random_instance(rng, n_max=60, m_max=7)
    expected = brute_force(captures, y, lam)
    problem = Problem.from_captures(captures, y, lam)
    for map_type in ("prefix", "captured"):
        result = search(problem, map_type=map_type, warm_start=False, time_limit=30)
        check_result(result, captures, y, lam, expected)
        assert result.certificate.counters["curiosity_dive_seconds"] > 0


def test_the_dive_gives_the_search_better_incumbents(dive_at_once):
    """Without a warm start the incumbent after the root's expansion is a list of one rule; on planted
    problems with long optima the dive's list beats it on most, and the search still proves the optimum."""
    improved = 0
    for seed in range(12):
        rng = np.random.default_rng(3000 + seed)
        captures, y, lam = planted_instance(rng)
        expected = brute_force(captures, y, lam)
        result = search(Problem.from_captures(captures, y, lam), warm_start=False, time_limit=30)
        check_result(result, captures, y, lam, expected)
        improved += result.certificate.counters["curiosity_dive_improved"]
    assert improved >= 6, improved


def test_no_dive_without_a_time_limit_with_a_node_budget_in_other_orders_or_without_memory(dive_at_once, monkeypatch):
    rng = np.random.default_rng(11)
    captures, y, lam = planted_instance(rng)
    problem = Problem.from_captures(captures, y, lam)
    for options in ({"max_nodes": 10_000}, {"max_nodes": 10_000, "time_limit": 30},
                    {"time_limit": 30, "policy": "curiosity"}, {"time_limit": 30, "policy": "objective"}):
        assert search(problem, warm_start=False, **options).certificate.counters["curiosity_dive_seconds"] == 0.0
    monkeypatch.setattr(corels_search, "CURIOSITY_DIVE_MIN_MEMORY", 1 << 50)  # more than any budget leaves
    assert search(problem, warm_start=False, time_limit=30).certificate.counters["curiosity_dive_seconds"] == 0.0


def test_a_stop_asked_during_the_dive_ends_the_search(dive_at_once, monkeypatch):
    """The web app's cancel (a hook that raises KeyboardInterrupt) while the dive runs: the dive stops,
    and so does the search, with its best list and a bound below the optimum."""
    diving = []
    real = corels_search._curiosity_dive

    def watched(*args, **kwargs):
        diving.append(time.perf_counter())
        return real(*args, **kwargs)

    def cancel_once_diving():  # 0.2 s into the dive
        if diving and time.perf_counter() - diving[0] > 0.2:
            raise KeyboardInterrupt

    monkeypatch.setattr(corels_search, "_curiosity_dive", watched)
    monkeypatch.setattr(corels_search, "CURIOSITY_DIVE_SHARE", 1.0)  # the dive may take all the time
    rng = np.random.default_rng(5)  # noise labels, 80 antecedents, lambda 0.001: neither search ends soon
    captures = rng.random((80, 600)) < rng.uniform(0.05, 0.5, size=(80, 1))
    y = (rng.random(600) < 0.4).astype(int)
    problem = Problem.from_captures(captures, y, 0.001)
    budget = Budget(60, None, cancel_once_diving)
    result = search(problem, warm_start=False, budget=budget)
    certificate = result.certificate
    assert diving and time.perf_counter() - diving[0] < 20.0  # (a margin: unheard, the dive runs its 60 s)
    assert certificate.status == INTERRUPTED
    assert 0 < certificate.lower_bound < result.objective
    assert 0.2 < certificate.counters["curiosity_dive_seconds"] < 2.0
