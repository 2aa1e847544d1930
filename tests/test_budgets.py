"""Budgets, Ctrl-C and the trace: the search stops cleanly and says how good its answer is."""

import numpy as np
import pytest

from optrules.certificate import INTERRUPTED, MEMORY_BUDGET, OPTIMAL, TIME_BUDGET
from optrules.corels.bruteforce import brute_force
from optrules.corels.problem import Problem
from optrules.corels.search import Ablation, search


@pytest.fixture
def hard_problem():
    rng = np.random.default_rng(7)
    captures = rng.random((60, 400)) < 0.3
    y = (rng.random(400) < 0.5).astype(int)
    return Problem.from_captures(captures, y, 0.001)


def test_time_budget(hard_problem):
    result = search(hard_problem, time_limit=0.3)
    cert = result.certificate
    assert cert.status == TIME_BUDGET
    assert cert.counters["total_time"] < 5
    assert cert.lower_bound <= cert.objective and cert.gap > 0


def test_memory_budget(hard_problem):
    """A search whose queue would outgrow max_memory stops with its gap rather than being killed."""
    result = search(hard_problem, max_memory=2_000_000)
    cert = result.certificate
    assert cert.status == MEMORY_BUDGET
    assert cert.counters["memory_bytes"] <= 2_000_000
    assert cert.lower_bound < cert.objective
    # the list returned is what the certificate says it is
    assert result.objective == pytest.approx(hard_problem.mistakes(result.solution) / hard_problem.n_samples
                                             + hard_problem.regularization * len(result.solution))
    with pytest.raises(ValueError, match="max_memory"):
        search(hard_problem, max_memory=0)


def test_interrupt_returns_best_so_far(hard_problem):
    calls = []

    def interrupt_on_second_report(trace, info):
        calls.append(info)
        if len(calls) == 2:
            raise KeyboardInterrupt

    result = search(hard_problem, progress=interrupt_on_second_report, trace_interval=0.0)
    cert = result.certificate
    assert cert.status == INTERRUPTED
    assert cert.lower_bound <= cert.objective
    assert result.objective == cert.objective
    assert len(calls) == 3  # two in the loop, one final report


def test_trace_is_monotone_and_consistent():
    rng = np.random.default_rng(3)
    captures = rng.random((7, 50)) < 0.35
    y = (rng.random(50) < 0.5).astype(int)
    problem = Problem.from_captures(captures, y, 0.01)
    result = search(problem, trace_interval=0.0, warm_start=False)
    trace = result.certificate.trace
    assert len(trace) >= 1
    assert np.all(np.diff(trace.objective) <= 1e-15)  # the incumbent only improves
    assert all(lb <= obj + 1e-12 for lb, obj in zip(trace.lower_bound, trace.objective))
    assert trace.objective[-1] == pytest.approx(brute_force(captures, y, 0.01).objective)
    assert trace.lower_bound[-1] == pytest.approx(trace.objective[-1])
    assert np.all(np.diff(trace.time) >= 0)


def test_plot_trace(tmp_path):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    from optrules.plots import plot_trace

    rng = np.random.default_rng(4)
    problem = Problem.from_captures(rng.random((8, 80)) < 0.3, (rng.random(80) < 0.5).astype(int), 0.005)
    result = search(problem, trace_interval=0.0)
    fig = plot_trace(result.certificate, title="test")
    fig.savefig(tmp_path / "trace.png")
    assert (tmp_path / "trace.png").stat().st_size > 1000
    assert len(fig.axes) == 3


@pytest.mark.parametrize("seed", range(15))
def test_a_budget_spent_before_the_search_still_certifies_a_true_bound(seed):
    """Time ran out (or Ctrl-C came) before the search began: the incumbent comes back with Thm 20's bound
    at the root, which never passes the true optimum (brute force), also with weights."""
    from optrules.budget import Budget

    rng = np.random.default_rng(seed)
    captures = rng.random((5, 40)) < rng.uniform(0.2, 0.6)
    y = (rng.random(40) < 0.5).astype(int)
    weights = rng.uniform(0.5, 2.0, 40) if seed % 2 else None
    problem = Problem.from_captures(captures, y, 0.02, sample_weight=weights)
    budget = Budget()
    budget.interrupt()
    cert = search(problem, budget=budget).certificate
    optimum = brute_force(captures, y, 0.02, sample_weight=weights).objective
    assert cert.status == INTERRUPTED and cert.counters["nodes_expanded"] == 0
    assert cert.lower_bound <= optimum + 1e-12 <= cert.objective + 1e-12
    assert cert.lower_bound > 0 or problem.minor.sum() == 0


@pytest.mark.parametrize("max_memory", [3_000_000, 7_000_000, 20_000_000])
def test_the_memory_budget_is_used_to_its_end(hard_problem, max_memory):
    """The last growth of the state is cut to what the budget allows instead of being refused whole:
    the search stops with its state between 80% and 100% of what the budget leaves it (the rest is
    the old copy of an array while it grows; growing by 1.5 or not at all stopped anywhere from 67% up)."""
    from optrules.budget import Budget

    budget = Budget(max_memory=max_memory)
    # without deferred children or setting prefixes aside, which let the search certify this problem
    # within 20 MB
    result = search(hard_problem, budget=budget, ablation=Ablation(deferred_children=False, set_aside=False))
    assert result.certificate.status == MEMORY_BUDGET
    state = result.certificate.counters["memory_bytes"]
    allowance = max_memory - (budget.used - budget.charges().get("search state", 0))
    assert 0.8 * allowance <= state <= allowance


@pytest.mark.parametrize("allowance", [2_000_000, 9_000_000, 40_000_000])
def test_growth_fills_the_allowance_and_counts_the_copy(allowance):
    """Each growth keeps the state plus the old copy of the array being copied within the allowance, and
    growth stops only when no room for one more expansion (or for the map's doubling, which is all or
    nothing) is left."""
    from optrules.bnb import HEAP_SIZE, MAP_COUNT, N_NODES, SearchState

    state = SearchState(50, {"node_mistakes": np.int32, "node_b0": np.int32})

    def arrays():
        return [getattr(state, name) for name in [*state.node_fields, "heap_key", "heap_node", "map_slots"]]

    while True:  # a search that fills every array before asking for room
        state.ints[N_NODES] = state.node_parent.shape[0]
        state.ints[HEAP_SIZE] = state.heap_key.shape[0]
        state.ints[MAP_COUNT] = state.node_parent.shape[0] // 2
        largest = max(a.nbytes for a in arrays())
        if not state.make_room(allowance):
            break
        assert state.nbytes + largest <= allowance
    # what one more expansion of 50 children needs at least (every array is full here): their node and
    # heap entries beside the old copy of the largest array, and the map doubled beside the old map
    row = sum(np.dtype(d).itemsize for d in state.node_fields.values()) + 8 + 4
    one_more = 50 * row + max(a.nbytes for a in arrays())
    assert state.nbytes + one_more + 2 * state.map_slots.nbytes > allowance
    assert state.nbytes + max(a.nbytes for a in arrays()) >= 0.9 * allowance


def test_room_for_a_batch_while_memory_allows_it_then_for_one_expansion():
    """Arrays near full grow for a whole batch's children (batch_room) while the allowance holds them;
    when it does not, memory is tight from then on and they grow for one expansion's (room)."""
    from optrules.bnb import MEMORY_TIGHT, N_NODES, SearchState

    def nearly_full():
        state = SearchState(50, {"node_value": np.float64})
        state.batch_room = 50 * 32
        state.ints[N_NODES] = state.node_parent.shape[0] - 60  # room for one expansion, not for a batch
        return state

    roomy = nearly_full()
    assert roomy.make_room(None)
    assert roomy.node_parent.shape[0] >= roomy.ints[N_NODES] + roomy.batch_room and not roomy.ints[MEMORY_TIGHT]
    tight = nearly_full()
    # enough for one expansion's growth (by MIN_GROWTH), not for a batch's
    node_bytes = sum(np.dtype(d).itemsize for d in tight.node_fields.values())
    allowance = tight.nbytes + 2 * tight.node_parent.shape[0] * node_bytes // 16 + max(
        getattr(tight, name).nbytes for name in tight.node_fields)
    assert tight.make_room(allowance)
    assert tight.ints[MEMORY_TIGHT] == 1
    assert tight.ints[N_NODES] + tight.room <= tight.node_parent.shape[0] < tight.ints[N_NODES] + tight.batch_room


# -- a full memory budget: the search drains its queue --------------------------------------------------
def _weakly_bounded(seed, lambdas, leaf_resolution=False, deferred_children=False):
    """8 antecedents, 60 samples: brute force is exact; with the support and equivalent-points bounds
    and the symmetry map off the search queues thousands of prefixes, more than a ~220 KB state holds
    (leaves finished at once and children deferred, which a tight budget turns on, would hold off the
    drops these tests are about: off unless asked)."""
    from optrules.corels.search import Ablation

    rng = np.random.default_rng(seed)
    captures = rng.random((8, 60)) < rng.uniform(0.2, 0.6)
    y = (rng.random(60) < 0.5).astype(int)
    regularization = float(rng.choice(lambdas))
    ablation = Ablation(minimum_support=False, accurate_support=False, excessive_support=False,
                        equivalent_points=False, lookahead=bool(seed % 2), leaf_resolution=leaf_resolution,
                        deferred_children=deferred_children)
    return captures, y, regularization, dict(map_type="none", ablation=ablation)


def _check_against_brute_force(certificate, captures, y, regularization):
    optimum = brute_force(captures, y, regularization).objective
    assert certificate.lower_bound <= optimum + 1e-12 <= certificate.objective + 1e-12
    if certificate.status == "optimal":
        assert certificate.objective == pytest.approx(optimum, abs=1e-12)
    return optimum


# each case brute-forces ~110,000 lists (~5 s): the default run keeps the telling ones
@pytest.mark.parametrize("seed", [23, *(pytest.param(s, marks=pytest.mark.slow) for s in (10, 14, 21, 24, 26))])
def test_a_search_out_of_memory_drains_its_queue_with_a_valid_bound(seed):
    """Once the state may not grow, the search goes on with the queue it has, dropping the children it
    would queue and bounding them by their smallest bound: the certificate stays valid (seed 23 ends
    with an incumbent worse than the optimum, so a bound that forgot the dropped prefixes would claim a
    wrong optimum) and a memory-budget stop keeps a gap."""
    captures, y, regularization, options = _weakly_bounded(seed, [0.001, 0.002, 0.005])
    problem = Problem.from_captures(captures, y, regularization)
    certificate = search(problem, max_memory=240_000, **options).certificate
    assert certificate.counters["prefixes_dropped"] > 0
    assert certificate.counters["memory_bytes"] <= 240_000
    _check_against_brute_force(certificate, captures, y, regularization)
    assert certificate.status == MEMORY_BUDGET and certificate.lower_bound < certificate.objective
    assert f"{certificate.counters['prefixes_dropped']:,} prefixes dropped" in str(certificate)


def test_a_tight_budget_finishes_leaves_instead_of_dropping():
    """Past half its memory allowance the search finishes the prefixes none of whose children could be
    queued instead of queuing them: fewer prefixes dropped, the certificate as valid."""
    captures, y, regularization, options = _weakly_bounded(23, [0.001, 0.002, 0.005], leaf_resolution=None)
    problem = Problem.from_captures(captures, y, regularization)
    certificate = search(problem, max_memory=240_000, **options).certificate
    dropping = search(problem, max_memory=240_000, **_weakly_bounded(23, [0.001, 0.002, 0.005])[3]).certificate
    assert certificate.counters["leaves_resolved"] > 0 and dropping.counters["leaves_resolved"] == 0
    assert certificate.counters["prefixes_dropped"] < dropping.counters["prefixes_dropped"]
    assert certificate.counters["memory_bytes"] <= 240_000
    _check_against_brute_force(certificate, captures, y, regularization)


@pytest.mark.parametrize("seed", [23, 24])
def test_a_tight_budget_defers_children_instead_of_dropping(seed):
    """Past half its memory allowance an expansion queues only the children keyed within lambda*N of its
    own key and queues itself again for the rest: fewer prefixes dropped, the certificate as valid."""
    captures, y, regularization, options = _weakly_bounded(seed, [0.001, 0.002, 0.005], deferred_children=None)
    problem = Problem.from_captures(captures, y, regularization)
    certificate = search(problem, max_memory=240_000, **options).certificate
    dropping = search(problem, max_memory=240_000, **_weakly_bounded(seed, [0.001, 0.002, 0.005])[3]).certificate
    assert certificate.counters["reexpansions"] > 0 and dropping.counters["reexpansions"] == 0
    assert certificate.counters["prefixes_dropped"] < dropping.counters["prefixes_dropped"]
    assert certificate.counters["memory_bytes"] <= 240_000
    _check_against_brute_force(certificate, captures, y, regularization)


@pytest.mark.parametrize("seed, share", [(14, 0.9), pytest.param(14, 0.8, marks=pytest.mark.slow),
                                         pytest.param(26, 0.99, marks=pytest.mark.slow)])
def test_a_drained_queue_can_still_prove_the_optimum(seed, share):
    """With a budget a little below what the search needs, the queue drains after the incumbent has
    become optimal and the dropped prefixes' bound reaches it: certified optimal despite the drops."""
    from optrules.budget import Budget

    captures, y, regularization, options = _weakly_bounded(seed, [0.01, 0.02, 0.05])
    problem = Problem.from_captures(captures, y, regularization)
    unlimited = Budget()
    search(problem, budget=unlimited, **options)
    certificate = search(problem, max_memory=int(share * unlimited.used), **options).certificate
    assert certificate.counters["prefixes_dropped"] > 0
    assert certificate.status == "optimal"
    _check_against_brute_force(certificate, captures, y, regularization)


def test_warm_start_is_charged_or_left_out():
    """The greedy warm start holds the groups' vectors and a block of scores: charged while it runs,
    skipped (the search goes on without an incumbent) when the budget has no room for it."""
    from optrules.budget import Budget
    from optrules.corels.greedy import WARM_START, greedy_prefix
    from optrules.corels.problem import Problem

    rng = np.random.default_rng(4)
    captures = rng.random((60, 500)) < 0.3
    y = (captures[0] | (rng.random(500) < 0.2)).astype(int)
    problem = Problem.from_captures(captures, y, 0.01)
    unbudgeted = greedy_prefix(problem)
    assert unbudgeted
    assert greedy_prefix(problem, budget=Budget(max_memory=10_000)) == ()
    budget = Budget(max_memory=1 << 30)
    charged = []
    original = budget.charge
    budget.charge = lambda name, nbytes: (charged.append((name, nbytes)), original(name, nbytes))
    assert greedy_prefix(problem, budget=budget) == unbudgeted
    assert any(name == WARM_START and nbytes >= problem.bits.nbytes for name, nbytes in charged)
    assert WARM_START not in budget.charges()


class StandInCompiler:
    """A compiler that takes 30 s, or until the test lets it go: ``compile`` in place of a kernel's
    compilation. Whether it had ``finished`` when a fit returned tells whether the fit waited for it (it
    then returns only after 30 s), whatever the load on the machine."""

    def __init__(self):
        import threading

        self.released, self.finished, self.started = threading.Event(), threading.Event(), threading.Event()

    def compile(self, *arguments) -> None:
        self.started.set()
        self.released.wait(30)
        self.finished.set()


def _fit_while_compiling(estimator, X, y, stop: str, compiler: StandInCompiler):
    """Fit (with Ctrl-C once the stand-in compiler runs, when ``stop`` is "ctrl-c"), then let the compiler
    go: ``(model, whether the fit returned before the compiler finished)``."""
    import os
    import signal
    import threading

    def interrupt_once_compiling():
        if compiler.started.wait(30):
            os.kill(os.getpid(), signal.SIGINT)

    timer = threading.Thread(target=interrupt_once_compiling, daemon=True)
    if stop == "ctrl-c":
        timer.start()
    try:
        model = estimator.fit(X, y)
        without_waiting = not compiler.finished.is_set()
    finally:
        compiler.released.set()
    return model, without_waiting


@pytest.mark.parametrize("family", ["rulelist", "frl"])
@pytest.mark.parametrize("stop", ["time", "ctrl-c"])
def test_a_kernel_still_compiling_does_not_hold_the_fit_past_its_budget(monkeypatch, family, stop):
    """A first fit after install compiles its search kernel for seconds: the time budget (or Ctrl-C) ends
    the fit while the compiler goes on in its thread; the fit returns its warm start with a valid bound."""

    from optrules import FallingRuleListClassifier, RuleListClassifier
    from optrules.corels import search as corels_search
    from optrules.frl import search as frl_search

    compiler = StandInCompiler()
    for module in (corels_search, frl_search):  # a compiler that takes 30 s (or until the test ends)
        monkeypatch.setattr(module, "compile_for", compiler.compile)
    rng = np.random.default_rng(0)
    X = rng.random((300, 6)) < 0.5
    y = (X[:, 0] ^ (rng.random(300) < 0.2)).astype(int)
    estimator = (RuleListClassifier(regularization=0.01, time_limit=1.0 if stop == "time" else 60)
                 if family == "rulelist" else FallingRuleListClassifier(time_limit=1.0 if stop == "time" else 60))
    model, without_waiting = _fit_while_compiling(estimator, X, y, stop, compiler)
    certificate = model.certificate_
    assert without_waiting  # (the fit took 30 s when it waited for the compiler)
    assert certificate.status == (TIME_BUDGET if stop == "time" else INTERRUPTED)
    assert certificate.counters["nodes_expanded"] == 0
    assert 0 <= certificate.lower_bound <= certificate.objective
    assert model.predict(X).shape == (300,)


@pytest.mark.parametrize("family", ["rulelist", "frl"])
def test_a_cancel_while_the_kernel_compiles_returns_the_warm_start(monkeypatch, family):
    """A cancel (the web app's: the progress callback raises KeyboardInterrupt once it is asked for) that
    comes while the search's kernel compiles: the fit returns its warm start, interrupted. The search's
    first report after the wait used to let the callback's KeyboardInterrupt out of the fit (the web
    app's worker thread died with it)."""
    import threading

    from optrules import FallingRuleListClassifier, RuleListClassifier
    from optrules.corels import search as corels_search
    from optrules.frl import search as frl_search

    released, compiling = threading.Event(), threading.Event()

    def compile_for(kernel, *args):
        compiling.set()
        released.wait(30)

    for module in (corels_search, frl_search):
        monkeypatch.setattr(module, "compile_for", compile_for)

    def progress(trace, counters):
        if compiling.is_set():
            raise KeyboardInterrupt  # as the web app's callback does for a cancelled run
    rng = np.random.default_rng(0)
    X = rng.random((300, 6)) < 0.5
    y = (X[:, 0] ^ (rng.random(300) < 0.2)).astype(int)
    estimator = (RuleListClassifier(regularization=0.01, time_limit=60, verbose=progress) if family == "rulelist"
                 else FallingRuleListClassifier(time_limit=60, verbose=progress))
    try:
        model = estimator.fit(X, y)
    except KeyboardInterrupt:
        pytest.fail("the cancel's KeyboardInterrupt came out of the fit")
    finally:
        released.set()
    assert model.certificate_.status == INTERRUPTED and model.certificate_.counters["nodes_expanded"] == 0
    assert 0 <= model.certificate_.lower_bound <= model.certificate_.objective
    assert model.predict(X).shape == (300,)


@pytest.mark.parametrize("family", ["rulelist", "frl", "montecarlo"])
@pytest.mark.parametrize("stop", ["time", "ctrl-c"])
def test_data_kernels_still_compiling_do_not_hold_the_fit_past_its_budget(monkeypatch, family, stop):
    """A first fit after install compiles mining's and grouping's kernels for seconds before its search: the
    budget (or Ctrl-C) ends the fit while they compile in their thread, and it returns the list of no rule
    (the majority, or the else clause's rate) with lower bound 0, since no antecedent was mined."""

    import optrules.base
    from optrules import FallingRuleListClassifier, RuleListClassifier

    compiler = StandInCompiler()
    monkeypatch.setattr(optrules.base, "compile_data_kernels", compiler.compile)
    rng = np.random.default_rng(1)
    X = rng.random((300, 6)) < 0.5
    y = (X[:, 0] ^ (rng.random(300) < 0.2)).astype(int)
    limit = 1.0 if stop == "time" else 60
    estimator = (RuleListClassifier(regularization=0.01, time_limit=limit) if family == "rulelist" else
                 FallingRuleListClassifier(time_limit=limit, method="certified" if family == "frl" else "montecarlo"))
    model, without_waiting = _fit_while_compiling(estimator, X, y, stop, compiler)
    assert without_waiting  # (the fit took 30 s when it waited for the compiler)
    assert len(model.antecedents_) == 0 and model.antecedents_.report.stopped
    assert len(model.rule_list_.rules) == 0
    positives, negatives = int(y.sum()), int(len(y) - y.sum())
    if family == "rulelist":
        assert np.all(model.predict(X) == int(positives > negatives))
        objective = min(positives, negatives) / len(y)
    else:  # the else clause predicts the positive class when its rate passes 1 / (1 + w)
        objective = min(model.w * positives, negatives) / len(y)
        np.testing.assert_allclose(model.predict_proba(X)[:, 1], positives / len(y))
        assert str(model.rule_list_).startswith(f"probability {positives / len(y):.3f}")  # no "if" without a rule
    if family == "montecarlo":
        assert model.certificate_ is None and model.objective_ == pytest.approx(objective)
        return
    certificate = model.certificate_
    assert certificate.status == (TIME_BUDGET if stop == "time" else INTERRUPTED)
    assert certificate.objective == pytest.approx(objective) and certificate.lower_bound == 0.0
    assert certificate.counters["antecedents"] == 0
    if family == "rulelist":
        with pytest.raises(ValueError, match="mined no antecedent"):
            model.rashomon_set(0.01)


@pytest.mark.parametrize("stop", ["time", "ctrl-c"])
def test_a_fit_with_required_rules_while_the_data_kernels_compile_returns_a_list_with_them(monkeypatch, stop):
    """A list must have its required rules, so the list of no rule will not do: when the budget (or Ctrl-C)
    ends while mining's kernels compile, the required features alone are the antecedents and the fit
    returns the shortest list using every required column, bounded by lambda a rule (no equivalent
    points: those of a few features bound no other list), below the optimum that a normal fit proves."""

    import pandas as pd

    import optrules.base
    from optrules import RuleListClassifier

    rng = np.random.default_rng(2)
    X = pd.DataFrame(rng.random((300, 5)) < 0.5, columns=list("abcde"))
    y = ((X["a"] & X["c"]) ^ (rng.random(300) < 0.1)).astype(int)
    settings = dict(regularization=0.01, required=["b", "d"], max_card=2, negations=False)
    optimum = RuleListClassifier(**settings, time_limit=60).fit(X, y).certificate_
    assert optimum.status == OPTIMAL
    compiler = StandInCompiler()
    monkeypatch.setattr(optrules.base, "compile_data_kernels", compiler.compile)
    estimator = RuleListClassifier(**settings, time_limit=1.0 if stop == "time" else 60)
    model, without_waiting = _fit_while_compiling(estimator, X, y, stop, compiler)
    assert without_waiting
    assert not model.antecedents_.report.mined and model.antecedents_.names == ["b", "d"]
    rules = model.rule_list_.rules
    assert sorted(tuple(rule.conditions) for rule in rules) == [("b",), ("d",)]
    certificate = model.certificate_
    assert certificate.status == (TIME_BUDGET if stop == "time" else INTERRUPTED)
    mistakes = int((model.predict(X) != y).sum())
    assert certificate.objective == pytest.approx(mistakes / len(y) + 2 * 0.01)
    assert certificate.lower_bound == pytest.approx(2 * 0.01)
    assert certificate.lower_bound <= optimum.objective <= certificate.objective
    with pytest.raises(ValueError, match="mined no antecedent"):
        model.rashomon_set(0.01)


def _stop_on_call(n: int):
    """A ``verbose`` callback (the web app's cancel) that asks the fit to stop the n-th time it is asked."""
    calls = []

    def progress(trace, counters):
        calls.append(1)
        if len(calls) >= n:
            raise KeyboardInterrupt

    return progress


@pytest.mark.parametrize("family", ["rulelist", "frl", "ruleset"])
def test_a_fit_stopped_while_binarizing_keeps_a_valid_model_and_no_bound_from_the_columns_read(family):
    """The binarizer hears a stop between columns; the model over the columns read is a model of the whole
    problem, but its bound is not: here the first column alone leaves rows alike with either label (a bound
    far above the optimum, which the second column makes 0 mistakes), so the bound must fall to 0."""
    import pandas as pd

    from optrules import FallingRuleListClassifier, RuleListClassifier, RuleSetClassifier

    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 400)
    X = pd.DataFrame({"noise": rng.integers(0, 2, 400), "signal": y, "more": rng.integers(0, 3, 400)})
    estimator = {"rulelist": lambda **k: RuleListClassifier(regularization=0.01, **k),
                 "frl": FallingRuleListClassifier, "ruleset": lambda **k: RuleSetClassifier(complexity=10, **k)}[family]
    with pytest.warns(UserWarning, match="while binarizing: 2 of 3 columns"):
        stopped = estimator(verbose=_stop_on_call(1)).fit(X, y)
    assert stopped.binarizer_.unread_columns_ == ["signal", "more"]
    assert "signal" in stopped.binarizer_.dropped_columns_
    assert all(f.column == "noise" for f in stopped.binarizer_.features_)
    certificate = stopped.certificate_
    assert certificate.status == INTERRUPTED and certificate.lower_bound == 0.0
    assert certificate.counters["unread_columns"] == 2
    full = estimator().fit(X, y).certificate_
    assert full.status == "optimal" and certificate.lower_bound <= full.objective
    np.testing.assert_array_equal(stopped.predict(X), stopped.rule_list_.predict(X))  # every column still checked


@pytest.mark.parametrize("family", ["rulelist", "frl", "ruleset"])
@pytest.mark.parametrize("when", ["between stages", "during the search"])
def test_a_progress_callback_answering_stop_ends_the_fit(family, when):
    """A callable ``verbose`` that returns ``optrules.STOP`` (the web app's cancel) stops the fit as
    Ctrl-C does: between the stages (an empty trace) or once the search reports, every family returns its
    best model so far, interrupted, with a valid bound; the callback's answer alone does it (nothing is
    raised), and after a stop the fit asks nothing more of the search."""
    from optrules import STOP, FallingRuleListClassifier, RuleListClassifier, RuleSetClassifier

    rng = np.random.default_rng(4)
    X = rng.random((3000, 24)) < 0.5
    y = ((X[:, 0] & X[:, 1]) | (X[:, 2] & ~X[:, 3]) ^ (rng.random(3000) < 0.25)).astype(int)
    calls = {"empty": 0, "search": 0}

    def progress(trace, counters):
        calls["empty" if not len(trace) else "search"] += 1
        if when == "between stages" or len(trace):
            return STOP
        return None

    estimator = {"rulelist": RuleListClassifier(regularization=0.0005, max_card=2, time_limit=120, verbose=progress),
                 "frl": FallingRuleListClassifier(time_limit=120, verbose=progress),
                 "ruleset": RuleSetClassifier(complexity=40, time_limit=120, verbose=progress)}[family]
    model = estimator.fit(X, y)
    certificate = model.certificate_
    assert certificate.status == INTERRUPTED
    assert 0 <= certificate.lower_bound <= certificate.objective
    assert model.predict(X).shape == (3000,)
    if when == "between stages":
        assert calls["empty"] >= 1 and calls["search"] <= 1  # (at most the search's report of its stop)
    else:
        assert calls["search"] >= 1
