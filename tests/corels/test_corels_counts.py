"""The search prunes exactly as much as the paper's bounds allow: its counters are compared with a plain,
independent re-implementation of Algorithm 2 (best first by b(d_p) + b0(d_p), first in first out among
equals, no symmetry map, no warm start) on small random problems.

Brute force (tests/corels/test_corels_search.py) proves the optimum right; it cannot see a bound that prunes
too little (dropping the equivalent-points term, an off-by-one in Theorem 4's length cap: the search is
slower, the answer the same) or one that prunes too much without changing the optimum on the cases
tried (lookahead with 2 lambda). Equal expansions, bound evaluations and queue insertions can.
"""

from __future__ import annotations

import heapq
import math

import numpy as np
import pytest

from optrules.corels import kernel as K
from optrules.corels.kernel import IMPURE_CHILD_COMPARISONS
from optrules.corels.problem import Problem
from optrules.corels.search import search


def reference_counts(captures: np.ndarray, y: np.ndarray, regularization: float, lookahead: bool = True,
                     resolve_leaves: bool = False, dominance: bool = True, conditions=None, batch: int | None = None) -> dict:
    """Algorithm 2 of Angelino et al. (2018) with Thms 1, 4, 10, 11, 20, 21 and Lemma 2 (``lookahead``),
    in plain Python. ``resolve_leaves``: a child that passes the queue's test but whose own children
    could not (its bound + lambda fails it) is expanded at once, its children's lists checked for the
    incumbent, instead of being queued. ``dominance``: a child that passes it is dropped when a sibling
    whose rule errs on nothing it captures leaves out at most the child's mistakes of the child's
    samples (Thm 18; of two pure ones capturing the same samples, the one with the smaller index stays;
    and, with ``conditions`` (a tuple of names an antecedent), when a sibling made of some of its
    conditions, capturing all it captures, errs no more than it (the one with the smaller index stays
    of two capturing the same samples with as many mistakes).

    Prefixes are popped in batches of ``batch`` (default: the kernel's, ``K.batch_size``), as the
    kernel does: the pops test each against the incumbent; then each popped prefix's children are
    tested against the incumbent as the batch began, the incumbent improved by them in their order, and
    a child is queued only if it still passes the queue's test against the incumbent of that moment."""
    m, n = captures.shape
    batch = K.batch_size(m) if batch is None else batch
    lam_n = regularization * n
    ahead = lam_n if lookahead else 0.0
    # Thm 20: samples with the same signature are captured together; the minority of each such group is
    # an unavoidable mistake of any list that leaves it uncaptured
    signature = {}
    for i in range(n):
        signature.setdefault(captures[:, i].tobytes(), []).append(i)
    group_minority = {}
    for members in signature.values():
        positives = int(y[members].sum())
        for i in members:
            group_minority[i] = min(positives, len(members) - positives) / len(members)
    uncaptured_all = np.ones(n, bool)

    def b0(uncaptured):  # whole groups are uncaptured: the sum of their minorities
        return round(sum(group_minority[i] for i in np.flatnonzero(uncaptured)))

    best = float(min(y.sum(), n - y.sum()))  # the empty list
    queue = [(0.0 + b0(uncaptured_all), 0, ())]
    mistakes = {(): 0}  # of each queued prefix; its bound is mistakes + lambda N K (Thm 1)
    order = 1
    expanded = evaluations = insertions = kept = leaves = dominated = 0

    def thm4_cap(best):
        return m if lam_n <= 0 else min(math.floor(best / lam_n), m)

    parts = [set(c) for c in conditions] if conditions is not None else [{a} for a in range(m)]
    within = [[b for b in range(m) if b != a and parts[b] < parts[a] and not (captures[a] & ~captures[b]).any()]
              for a in range(m)]
    while queue:
        popped = []
        while queue and len(popped) < batch:
            _, _, prefix = heapq.heappop(queue)
            uncaptured = uncaptured_all.copy()
            for a in prefix:
                uncaptured &= ~captures[a]
            if not mistakes[prefix] + lam_n * len(prefix) + b0(uncaptured) + ahead < best:  # Thm 20, Lemma 2
                continue
            if len(prefix) + 1 > thm4_cap(best):  # Thm 4
                continue
            expanded += 1
            popped.append((prefix, uncaptured))
        began = best  # the incumbent as the batch began: what its children are tested against first
        for prefix, uncaptured in popped:
            prefix_mistakes = mistakes[prefix]
            inserted_before = insertions
            n_unc = int(uncaptured.sum())
            pos_unc = int(y[uncaptured].sum())
            pure = {0: [], 1: []}  # per class, (count, index, captured) of the siblings erring on none of theirs
            for b in range(m):
                grabbed = uncaptured & captures[b]
                if dominance and b not in prefix and grabbed.any() and y[grabbed].min() == y[grabbed].max():
                    pure[int(y[grabbed][0])].append((int(grabbed.sum()), b, grabbed))
            for siblings in pure.values():
                siblings.sort(key=lambda entry: entry[:2], reverse=True)
            for a in range(m):
                if a in prefix:
                    continue
                evaluations += 1
                captured = uncaptured & captures[a]
                n_cap = int(captured.sum())
                n_pos = int(y[captured].sum())
                rule_correct = max(n_pos, n_cap - n_pos)
                rest_pos, rest = pos_unc - n_pos, n_unc - n_cap
                if n_cap <= 0 or n_cap < lam_n or rule_correct < lam_n or rest < lam_n:  # Thms 10, 11, 21
                    continue
                child_lb = (prefix_mistakes + n_cap - rule_correct) + lam_n * (len(prefix) + 1)  # Thm 1
                child_objective = child_lb + rest - max(rest_pos, rest - rest_pos)
                best = min(best, child_objective)
                if len(prefix) + 1 >= m:
                    continue
                child_b0 = b0(uncaptured & ~captures[a])
                if not child_lb + child_b0 + ahead < began:
                    continue
                if dominance and any(_subconjunction_dominates(b, a, uncaptured, captures, y, n_cap,
                                                               n_cap - rule_correct)
                                     for b in within[a] if b not in prefix):
                    dominated += 1
                    continue
                if _dominated_by_pure(a, captured, y, pure):
                    dominated += 1
                    continue
                if resolve_leaves and not child_lb + lam_n + child_b0 + ahead < began:
                    if len(prefix) + 2 <= thm4_cap(began):
                        leaves += 1
                        evaluations += m - len(prefix) - 1
                        left = uncaptured & ~captures[a]
                        for b in range(m):
                            grand = left & captures[b]
                            if b == a or b in prefix or not grand.any():
                                continue
                            rest = left & ~captures[b]
                            leaf_mistakes = min(int(y[grand].sum()), int((1 - y[grand]).sum()))
                            leaf_mistakes += min(int(y[rest].sum()), int((1 - y[rest]).sum()))
                            best = min(best, child_lb + lam_n + leaf_mistakes)
                    continue
                if not child_lb + child_b0 + ahead < best:  # the incumbent its batch has found so far
                    continue
                child = prefix + (a,)
                mistakes[child] = prefix_mistakes + n_cap - rule_correct
                heapq.heappush(queue, (child_lb + child_b0, order, child))
                order += 1
                insertions += 1
            kept += insertions > inserted_before
    return {"nodes_expanded": expanded, "lower_bound_evaluations": evaluations, "queue_insertions": insertions,
            "expansions_with_children": kept, "leaves_resolved": leaves, "dominated_children": dominated,
            "objective": best / n}


def _subconjunction_dominates(b, a, uncaptured, captures, y, n_cap, mistakes) -> bool:
    grabbed = uncaptured & captures[b]
    n_cap_b, n_pos_b = int(grabbed.sum()), int(y[grabbed].sum())
    mistakes_b = min(n_pos_b, n_cap_b - n_pos_b)
    return mistakes_b <= mistakes and not (n_cap_b == n_cap and mistakes_b == mistakes and b > a)


def _dominated_by_pure(a, captured, y, pure, impure_comparisons=IMPURE_CHILD_COMPARISONS) -> bool:
    """Thm 18 between siblings: a pure sibling b leaves out of what child a captures at most a's
    mistakes (of two pure ones capturing the same samples, the smaller index stays). A pure sibling of
    the other class can only when a's classes tie. ``pure[label]``: that class's pure siblings, those
    capturing most first (then the larger index); a child that errs somewhere is compared with the
    first ``impure_comparisons`` of each class that capture at least its majority."""
    n_cap, n_pos = int(captured.sum()), int(y[captured].sum())
    mistakes = min(n_pos, n_cap - n_pos)
    for label in (1, 0):
        if mistakes != n_cap - (n_pos if label else n_cap - n_pos):  # not a's majority (nor a tie)
            continue
        compared = 0
        for count, b, grabbed in pure[label]:
            if count < n_cap - mistakes or (mistakes > 0 and compared >= impure_comparisons):
                break
            if b == a or (count == n_cap and mistakes == 0 and b > a):
                continue
            compared += 1
            if int((captured & ~grabbed).sum()) <= mistakes:
                return True
    return False


def random_problem(rng, n_antecedents: int, n_samples: int, planted: bool):
    """Few antecedents over many samples, so that signatures repeat with mixed labels (Thm 20 bites);
    ``planted``: the labels follow a random rule list with 5% noise, so that long prefixes stay good
    enough to reach Theorem 4's length cap."""
    captures = rng.random((n_antecedents, n_samples)) < rng.uniform(0.15, 0.6)
    if not planted:
        return captures, (rng.random(n_samples) < rng.uniform(0.25, 0.75)).astype(np.int64)
    y = np.full(n_samples, rng.integers(0, 2))
    decided = np.zeros(n_samples, bool)
    for a in rng.permutation(n_antecedents)[:4]:
        fires = captures[a] & ~decided
        y[fires] = rng.integers(0, 2)
        decided |= fires
    noise = rng.random(n_samples) < 0.05
    return captures, np.where(noise, 1 - y, y).astype(np.int64)


CASES = [(seed, m, n, lam, planted) for seed, (m, n, lam, planted) in enumerate(
    [(m, n, lam, planted) for m in (5, 7, 9) for n in (40, 100, 120) for lam in (0.0, 0.005, 0.02, 0.05)
     for planted in (False, True)]
    # few samples and lambda*N whole: rules at exactly the support thresholds of Thms 10, 11 and 21
    + [(m, 20, lam, planted) for m in (4, 6, 8) for lam in (0.05, 0.1) for planted in (False, True)])]


def _search(captures, y, regularization, lookahead, resolve_leaves=False, dominance=True):
    from optrules.corels.search import Ablation

    problem = Problem.from_captures(captures, y, regularization)
    return search(problem, map_type="none", warm_start=False,
                  ablation=Ablation(lookahead=lookahead, leaf_resolution=resolve_leaves, sibling_dominance=dominance))


@pytest.mark.parametrize("lookahead, resolve_leaves, dominance",
                         [(True, False, True), (False, False, True), (True, True, True), (False, True, True),
                          (True, False, False)])
@pytest.mark.parametrize("seed, m, n, regularization, planted", CASES)
def test_counters_match_the_plain_algorithm(seed, m, n, regularization, planted, lookahead, resolve_leaves, dominance):
    captures, y = random_problem(np.random.default_rng(1000 + seed), m, n, planted)
    expected = reference_counts(captures, y, regularization, lookahead, resolve_leaves, dominance)
    result = _search(captures, y, regularization, lookahead, resolve_leaves, dominance)
    counters = result.certificate.counters
    assert result.certificate.status == "optimal"
    assert result.objective == pytest.approx(expected["objective"], abs=1e-12)
    for name in ("nodes_expanded", "lower_bound_evaluations", "queue_insertions", "expansions_with_children",
                 "leaves_resolved", "dominated_children"):
        assert counters[name] == expected[name], (name, counters[name], expected[name])


def test_the_cases_exercise_every_bound():
    """Each bound changes the counts on some case, so that weakening or strengthening it cannot hide:
    the equivalent-points term and the lookahead (searched without each), and Theorem 4's cap (the
    plain algorithm with the cap one larger; without lookahead, since Lemma 2 implies the cap); some
    case has leaves to resolve; turning the sibling dominance off changes some case too."""
    from optrules.corels.search import Ablation

    changed = {"thm20": 0, "lookahead": 0, "thm4": 0, "leaves": 0, "dominance": 0}
    for seed, m, n, lam, planted in CASES:
        captures, y = random_problem(np.random.default_rng(1000 + seed), m, n, planted)
        problem = Problem.from_captures(captures, y, lam)
        base = reference_counts(captures, y, lam)["nodes_expanded"]
        for name, ablation in (("thm20", Ablation(equivalent_points=False)), ("lookahead", Ablation(lookahead=False)),
                               ("dominance", Ablation(sibling_dominance=False))):
            counters = search(problem, map_type="none", warm_start=False, ablation=ablation).certificate.counters
            changed[name] += counters["nodes_expanded"] != base
        changed["thm4"] += _cap_binds(captures, y, lam)
        changed["leaves"] += reference_counts(captures, y, lam, resolve_leaves=True)["leaves_resolved"] > 0
    assert all(changed.values()), changed


def _cap_binds(captures, y, lam) -> bool:
    """Does a prefix reach Theorem 4's cap in the search without lookahead? (its deepest expansion)"""
    if lam <= 0:
        return False
    result = _search(captures, y, lam, lookahead=False)
    counters = result.certificate.counters
    cap = math.floor(result.objective * len(y) / (lam * len(y)))
    return counters["max_prefix_length"] >= cap


def block_problem(rng, n_antecedents: int, n_samples: int):
    """One antecedent captures the first 80% of the samples, the others runs of the rest (plus a few
    strays); labels mostly constant per run. Once the big rule is in a prefix the uncaptured samples sit
    in a few words, and the kernel follows its list of live words instead of sweeping every word."""
    big = int(0.8 * n_samples)
    run = (n_samples - big) // (n_antecedents - 1)
    owner = np.where(np.arange(n_samples) < big, 0,
                     1 + np.minimum((np.arange(n_samples) - big) // run, n_antecedents - 2))
    captures = (owner[None, :] == np.arange(n_antecedents)[:, None]) | (rng.random((n_antecedents, n_samples)) < 0.01)
    run_label = rng.integers(0, 2, n_antecedents)
    y = np.where(rng.random(n_samples) < 0.05, 1 - run_label[owner], run_label[owner]).astype(np.int64)
    return captures, y


@pytest.mark.parametrize("counting", ["samples", "planes", "packed"])
@pytest.mark.parametrize("seed", range(6))
def test_counters_match_with_sparse_and_dense_words(seed, counting):
    captures, y = block_problem(np.random.default_rng(500 + seed), 8, 2000)
    for regularization in (0.0005, 0.002):
        expected = reference_counts(captures, y, regularization)
        problem = Problem.from_captures(captures, y, regularization)
        result = search(problem, map_type="none", warm_start=False, counting=counting)
        counters = result.certificate.counters
        assert result.objective == pytest.approx(expected["objective"], abs=1e-12)
        for name in ("nodes_expanded", "lower_bound_evaluations", "queue_insertions", "expansions_with_children"):
            assert counters[name] == expected[name], (name, counters[name], expected[name])


def test_both_cores_count_the_children_as_one_does():
    """A problem large enough for the parallel kernel (an expansion sweeps >= PARALLEL_MIN_WORDS words):
    on two threads and on one the search makes the same expansions, bounds and insertions, and finds the
    same list; three threads running searches at once finish with the same answer (numba's default
    threading layer aborts the process when two threads start parallel loops at once)."""
    import threading

    import numba

    from optrules.corels import kernel as K

    rng = np.random.default_rng(7)
    captures = rng.random((40, 120_000)) < 0.2  # no two samples alike: the words stay dense
    y = (captures[0] & captures[1]) ^ (rng.random(120_000) < 0.3)
    assert captures.shape[0] * (captures.shape[1] // 64) >= K.PARALLEL_MIN_WORDS
    problem = Problem.from_captures(captures, y.astype(np.int64), 0.0005)
    threads = numba.get_num_threads()
    runs = {}
    try:
        for n_threads in (1, min(2, numba.config.NUMBA_NUM_THREADS)):
            numba.set_num_threads(n_threads)
            result = search(problem, map_type="none", warm_start=False, max_nodes=400)
            runs[n_threads] = (result.solution, {k: result.certificate.counters[k] for k in
                                               ("nodes_expanded", "lower_bound_evaluations", "queue_insertions")})
    finally:
        numba.set_num_threads(threads)
    assert len(set(map(repr, runs.values()))) == 1, runs
    assert runs[1][1]["nodes_expanded"] == 400

    answers = []

    def fit():
        answers.append(search(problem, map_type="none", warm_start=False, max_nodes=100).solution)

    workers = [threading.Thread(target=fit) for _ in range(3)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert len(answers) == 3 and len(set(answers)) == 1


def test_weights_as_bit_planes_count_the_children_on_both_cores_as_on_one(monkeypatch):
    """Repeated rows make groups whose weights are bit planes: an expansion then sweeps each word once a
    plane, so the parallel kernel serves a sweep below PARALLEL_MIN_WORDS words (a tall table's
    31,561 groups); on two threads and on one it makes the same expansions and finds the same list."""
    import numba

    from optrules.corels import kernel as K
    from optrules.data.groups import group_samples

    rng = np.random.default_rng(8)
    distinct = rng.random((80, 12_000)) < 0.3
    repeats = rng.integers(1, 61, 12_000)
    captures = np.repeat(distinct, repeats, axis=1)
    y = (np.repeat(distinct[0] & distinct[1], repeats) ^ (rng.random(captures.shape[1]) < 0.25)).astype(np.int64)
    problem = Problem.from_captures(captures, y, 0.001)
    groups = group_samples(problem.bits, problem.y, problem.minor, "planes")
    words = groups.bits.shape[0] * groups.bits.shape[1]
    sweep = K.sweep_words(groups.bits.shape[1], groups.bits.shape[0], groups.count_planes, groups.positive_planes,
                          groups.minority_planes, groups.packed_weights)
    assert words < K.PARALLEL_MIN_WORDS <= sweep
    from optrules import bnb

    monkeypatch.setattr(bnb, "PARALLEL_AFTER", 0.0)  # both threads from the root on (a batch of one prefix)
    runs, threads = {}, {}
    for n_jobs in (1, min(2, numba.config.NUMBA_NUM_THREADS)):
        result = search(problem, map_type="none", warm_start=False, max_nodes=300, counting="planes", n_jobs=n_jobs)
        runs[n_jobs] = (result.solution, result.objective, {k: result.certificate.counters[k] for k in
                                                          ("nodes_expanded", "lower_bound_evaluations")})
        threads[n_jobs] = result.certificate.counters["threads"]
    assert len(set(map(repr, runs.values()))) == 1, runs
    assert threads == {n_jobs: n_jobs for n_jobs in runs}
    # and the counts are the samples': the list's objective recounted sample by sample
    assert runs[1][1] == pytest.approx(problem.cost(list(runs[1][0])) / problem.total_weight, abs=1e-12)
