"""What a certified search on several threads must keep: the same search as on one (the same list, the
same certificate, the same work), whatever the family."""

import numba
import pytest

from optrules import bnb

#: counters that must be the same on every number of threads
SAME = ("nodes_expanded", "queue_insertions", "lower_bound_evaluations", "expansions_with_children",
        "max_queue_size", "prefixes_dropped", "leaves_resolved", "reexpansions", "dominated_children")
THREADS = min(2, numba.config.NUMBA_NUM_THREADS)


@pytest.fixture
def threads_from_the_first_slice(monkeypatch):
    """Searches take their threads at once (not after PARALLEL_AFTER seconds): small problems run the
    parallel kernel too."""
    monkeypatch.setattr(bnb, "PARALLEL_AFTER", 0.0)


def same_search(runs: dict) -> None:
    """Every run (``{n_jobs: result}``, n_jobs 1 among them) found the same list with the same
    certificate, by the same work, on the threads it asked for."""
    first = runs[1]
    for n_jobs, result in runs.items():
        assert result.solution == first.solution, n_jobs
        assert result.objective == first.objective, n_jobs
        assert result.certificate.status == first.certificate.status, n_jobs
        assert result.certificate.lower_bound == first.certificate.lower_bound, n_jobs
        assert {k: result.certificate.counters[k] for k in SAME} == {k: first.certificate.counters[k] for k in SAME}
        assert result.certificate.counters["threads"] == min(n_jobs, bnb.threads_for(n_jobs))


def default_and_slow(check, default: int = 20, slow: int = 530):
    """Two tests of ``check(seed)``: ``default`` seeds in the default suite, ``slow`` more in the slow one
    (assign them to names starting with ``test_`` for pytest to collect)."""

    @pytest.mark.parametrize("seed", range(default))
    def in_the_default_suite(seed):
        check(seed)

    @pytest.mark.slow
    @pytest.mark.parametrize("seed", range(default, default + slow))
    def in_the_slow_suite(seed):
        check(seed)

    return in_the_default_suite, in_the_slow_suite
