"""What every certified branch-and-bound here shares on the Python side: the state arrays the compiled
kernels work on, grown on demand, and the loop that runs a kernel in short slices under a node budget, a
time budget and Ctrl-C, recording the trace as it goes.

A kernel is a compiled function ``run(max_pops) -> code`` that pops and expands at most ``max_pops``
prefixes and returns ``QUEUE_EMPTY``, ``POPS_DONE`` or ``NEED_ROOM`` (grow the arrays, call again).
Prefixes are nodes (parent pointer + last antecedent); the queue is a heap of (priority, node); the
dominance map an open-addressing table of node ids (-1 empty).
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from ._numba import (  # noqa: F401  (the state layout, defined beside the compiled steps that use it)
    BEST_LEN,
    DOMINATED,
    DROPPED,
    DROPPED_FLOOR,
    EXPANDED,
    HEAP_SIZE,
    IMPROVED,
    INSERTIONS,
    KEPT_A_CHILD,
    LB_EVALS,
    LEAVES_RESOLVED,
    MAP_COUNT,
    MAP_LOAD_DENOMINATOR,
    MAP_LOAD_NUMERATOR,
    MAX_LENGTH,
    MAX_QUEUE,
    MEMORY_FULL,
    MEMORY_TIGHT,
    N_FLOAT_STATE,
    N_INT_STATE,
    N_NODES,
    NEED_ROOM,
    POPS_DONE,
    QUEUE_EMPTY,
    REEXPANDED,
    SET_ASIDE,
    Frontier,
    Progress,
    Tree,
    map_refill,
    map_rehash,
    mark_kept_nodes,
    move_kept,
    renumber_kept,
)
from .budget import Budget, available_cores, check_budget_values
from .certificate import BRANCH_AND_BOUND, INTERRUPTED, MEMORY_BUDGET, NODE_BUDGET, OPTIMAL, TIME_BUDGET, Certificate, Trace

_PARALLEL = threading.Lock()


def threads_for(n_jobs) -> int:
    """The threads a search asked for ``n_jobs`` runs on, scikit-learn's convention: None or -1 every
    core this process may use, -2 all but one, k > 0 that many (at most numba's thread count). The
    searches give the same result on any number of threads, so None takes them all."""
    from numba import config

    available = min(available_cores(), config.NUMBA_NUM_THREADS)
    if n_jobs is None:
        return available
    n_jobs = int(n_jobs)
    return max(1, min(available, n_jobs if n_jobs > 0 else available + 1 + n_jobs))


@contextmanager
def parallel_region(threads: int):
    """The number of threads (at most ``threads``) this thread may start numba's parallel loops on, set
    as numba's thread count while the region lasts (0: run serially). numba's default threading layer
    (workqueue) aborts the process when two threads run parallel loops at once, and the web app runs
    fits in threads: one thread at a time gets them, the others run serially meanwhile."""
    from numba import get_num_threads, set_num_threads, set_parallel_chunksize

    if threads < 2 or not _PARALLEL.acquire(blocking=False):
        yield 0
        return
    before = get_num_threads()
    chunks_before = set_parallel_chunksize(1)
    try:
        set_num_threads(threads)
        yield threads
    finally:
        set_num_threads(before)
        set_parallel_chunksize(chunks_before)
        _PARALLEL.release()


NO_LIMIT = 1 << 62  # expansions a kernel call may make when the search has no node budget
SCRATCH = "search scratch"  # the budget's name for a batch's records and its slots' scratch
BATCH_MEMORY_SHARE = 16  # a batch takes at most 1/16 of the memory the search may hold


def batch_memory(budget: Budget) -> int:
    """The bytes a search's batch (its records and its slots' scratch) may take: a share of what the
    search may hold."""
    return budget.allowance(SCRATCH) // BATCH_MEMORY_SHARE


def charge_batch(budget: Budget, *parts) -> None:
    """Charge a batch's arrays (``parts``: tuples of arrays) to the budget, as :data:`SCRATCH`."""
    budget.charge(SCRATCH, sum(array.nbytes for part in parts for array in part))


def expansions_left(max_nodes, state: "SearchState") -> int:
    """The expansions a kernel call may make: the node budget's rest, or :data:`NO_LIMIT`."""
    return NO_LIMIT if max_nodes is None else int(max_nodes) - int(state.ints[EXPANDED])


#: seconds a search runs on one thread before it takes the others: loading the parallel compilation (or
#: compiling it) and starting threads cost more than a shorter search could save (0: threads from the
#: first slice, the parallel compilation made ready first)
PARALLEL_AFTER = 0.2
#: ... and when numba's cache does not hold the parallel compilation yet: compiling it takes 6-25 s under
#: numba's one lock, which every kernel a process calls for the first time then waits for (even one its
#: cache holds): a first Rashomon set on COMPAS waited 6 s to load the kernel counting its tables
PARALLEL_COLD_AFTER = 3.0


def compiled_or_cached(kernel, *args) -> bool:
    """Whether ``kernel`` (a numba dispatcher) is compiled for these arguments' types in this process or
    in numba's disk cache (read from the cache's index: nothing is loaded or compiled, no lock taken);
    False when the cache cannot say (numba's internal layout changed: a search then waits longer)."""
    try:
        signature = tuple(kernel.typeof_pyval(arg) for arg in args)
        if signature in kernel.overloads:
            return True
        cache = kernel._cache
        return cache._index_key(signature, kernel.targetctx.codegen()) in cache._cache_file._load_index()
    except Exception:  # noqa: BLE001 (internals of numba's cache: unknown means "not cached")
        return False


class ThreadedKernel:
    """A search kernel's two compilations, serial and parallel, and when each runs: the serial one until
    the search has run :data:`PARALLEL_AFTER` seconds; then the parallel one on ``threads`` threads,
    once it is compiled (in a thread of its own, started then, while the search goes on: the serial
    kernel must release the GIL) and while this search holds the threads (:func:`parallel_region`).
    The kernels must search alike on any number of threads. ``arguments(max_pops, threads)``: a call's
    arguments. Called with ``max_pops``, it runs one slice, as :func:`drive` asks."""

    def __init__(self, serial, parallel, threads: int, arguments):
        self.serial, self.parallel, self.threads, self.arguments = serial, parallel, threads, arguments
        self.started: float | None = None
        self.compiling = False
        self.ready = threading.Event()
        self.used = 1  # the most threads a slice ran on
        self.cold: bool | None = None  # the parallel compilation neither compiled nor cached (once asked)

    def __call__(self, max_pops: int) -> int:
        if self.started is None and PARALLEL_AFTER > 0:
            # the clock starts after the first slice, which compiles the serial kernel in a first fit:
            # counted as search time, it started the parallel compilation (under numba's one lock) in every
            # cold search, and the next compilation, a first Rashomon set's, waited 20 s for it
            result = self.serial(*self.arguments(max_pops, 0))
            self.started = time.perf_counter()
            return result
        now = time.perf_counter()
        if self.started is None:
            self.started = now
        if self.threads > 1 and not self.compiling and now - self.started >= self._parallel_after():
            self.compiling = True
            if PARALLEL_AFTER <= 0:  # (threads from the first slice: the tests')
                self._compile_parallel()
            else:
                threading.Thread(target=self._compile_parallel, name="optrules-compile-parallel", daemon=True).start()
        if self.ready.is_set():
            with parallel_region(self.threads) as threads:
                if threads:
                    self.used = max(self.used, threads)
                    return self.parallel(*self.arguments(max_pops, threads))
        return self.serial(*self.arguments(max_pops, 0))

    def _parallel_after(self) -> float:
        """Seconds of search before the threads: :data:`PARALLEL_AFTER`, or :data:`PARALLEL_COLD_AFTER`
        when the parallel compilation is neither compiled nor cached (asked once)."""
        if self.cold is None:
            self.cold = PARALLEL_AFTER > 0 and not compiled_or_cached(self.parallel, *self.arguments(0, self.threads))
        return max(PARALLEL_AFTER, PARALLEL_COLD_AFTER) if self.cold else PARALLEL_AFTER

    def _compile_parallel(self) -> None:
        # a daemon: a search that ends first does not wait for it (the next one loads what it cached)
        try:
            compile_for(self.parallel, *self.arguments(0, self.threads))
        except Exception:  # noqa: BLE001 (the search goes on with the serial kernel, which finds the same)
            return
        self.ready.set()


class SearchState:
    """Node arrays (``node_*``), the heap, the map, counters (``ints``), the incumbent (``floats[0]``,
    ``best_prefix``). ``extra_fields`` maps further per-node arrays to their dtypes."""

    BASE_FIELDS = {"node_parent": np.int32, "node_last": np.int32, "node_depth": np.int32,
                   "node_hash": np.uint64, "node_dead": np.bool_}
    # an antecedent index and a prefix length fit in 2 bytes below 65,535 antecedents: 4 bytes a prefix
    SMALL_FIELDS = ("node_last", "node_depth")
    GROWTH = 1.5  # rather than doubling: less slack at the peak
    #: near the memory budget arrays still grow by at least this share: growing by the room of one
    #: expansion would copy every array at every expansion (the search crawls instead of stopping)
    MIN_GROWTH = 1 / 16

    INITIAL_CAPACITY = 1 << 12  # nodes and queue entries
    #: bytes a node the arrays leave free within the memory allowance, for the scratch of :meth:`compact`
    #: and of the search that calls it (0: a search that never compacts)
    scratch_per_node = 0

    def __init__(self, n_antecedents: int, extra_fields: dict, capacity: int | None = None):
        capacity = max(capacity or self.INITIAL_CAPACITY, 4 * n_antecedents + 16)
        small = {name: np.uint16 for name in self.SMALL_FIELDS} if n_antecedents < np.iinfo(np.uint16).max else {}
        self.node_fields = {**self.BASE_FIELDS, **small, **extra_fields}
        for name, dtype in self.node_fields.items():
            setattr(self, name, np.zeros(capacity, dtype))
        self.heap_key = np.empty(capacity, np.float64)
        self.heap_node = np.empty(capacity, np.int32)
        self.map_slots = np.full(1 << int(np.ceil(np.log2(4 * capacity))), -1, np.int32)
        self.ints = np.zeros(N_INT_STATE, np.int64)
        self.floats = np.zeros(N_FLOAT_STATE, np.float64)
        self.floats[DROPPED_FLOOR] = np.inf
        self.best_prefix = np.zeros(n_antecedents + 1, np.int64)
        self.n_antecedents = n_antecedents
        #: the nodes (and queue entries) a kernel's call may add before it asks for room again: an
        #: expansion's children
        self.room = n_antecedents
        #: the room a kernel asks for while memory is not tight (MEMORY_TIGHT): a whole batch's, so that
        #: batches are not cut short where the arrays are near full (a kernel then asks for what it uses)
        self.batch_room = n_antecedents

    def make_room(self, allowance: int | None = None) -> bool:
        """Grow what the next expansion could overflow: by ``GROWTH``, or by less when that would pass
        ``allowance`` (the bytes the whole state may take, the old copy of the array being grown
        included), so that a memory budget is used to its end rather than stopping a growth step early.
        False when even room for one expansion does not fit. Room for a batch (``batch_room``) while memory
        is not tight; when that does not fit, memory is tight from then on (MEMORY_TIGHT), and the room of
        one expansion is made."""
        if not self.ints[MEMORY_TIGHT] and self.batch_room > self.room:
            if self._make_room(self.batch_room, allowance):
                return True
            self.ints[MEMORY_TIGHT] = 1
        return self._make_room(self.room, allowance)

    def _make_room(self, m: int, allowance: int | None) -> bool:
        ints = self.ints
        # (a node's share of the room kept for compact's scratch counts as its own)
        node_bytes = sum(np.dtype(d).itemsize for d in self.node_fields.values()) + self.scratch_per_node
        heap_bytes = self.heap_key.itemsize + self.heap_node.itemsize
        spare = None if allowance is None else allowance - self.nbytes - self.scratch_per_node * self.node_parent.shape[0]
        steps = []  # (arrays, size needed, capacity, bytes per entry)
        if ints[N_NODES] + m > self.node_parent.shape[0]:
            steps.append((list(self.node_fields), self._least(int(ints[N_NODES]) + m, self.node_parent.shape[0]),
                          self.node_parent.shape[0], node_bytes))
        if ints[HEAP_SIZE] + m > self.heap_key.shape[0]:
            steps.append((["heap_key", "heap_node"], self._least(int(ints[HEAP_SIZE]) + m, self.heap_key.shape[0]),
                          self.heap_key.shape[0], heap_bytes))
        grow_map = MAP_LOAD_DENOMINATOR * (ints[MAP_COUNT] + m) > MAP_LOAD_NUMERATOR * self.map_slots.shape[0]
        if spare is not None:
            # arrays are copied one at a time: while one is, its old copy is alive too
            copied = [getattr(self, name).nbytes for names, *_ in steps for name in names]
            spare -= max(copied + [self.map_slots.nbytes if grow_map else 0])
            spare -= self.map_slots.nbytes if grow_map else 0
            if spare < sum((needed - capacity) * width for _, needed, capacity, width in steps):
                return False
        for i, (names, needed, capacity, width) in enumerate(steps):
            size = max(needed, int(self.GROWTH * capacity))
            if spare is not None:  # leave the arrays grown after this one their minimum
                later = sum((n - c) * w for _, n, c, w in steps[i + 1:])
                size = max(needed, min(size, capacity + (spare - later) // width))
                spare -= (size - capacity) * width
            self._grow(names, size)
        if grow_map:
            new = np.empty(2 * self.map_slots.shape[0], np.int32)
            map_rehash(self.map_slots, self.node_hash, new)
            self.map_slots = new
        return True

    def _least(self, needed: int, capacity: int) -> int:
        """The smallest size an array needing ``needed`` entries grows to."""
        return max(needed, capacity + int(self.MIN_GROWTH * capacity))

    def _grow(self, names, size: int) -> None:
        if size >= np.iinfo(np.int32).max:
            raise MemoryError("more than 2**31 prefixes: set max_nodes or time_limit")
        for name in names:  # one array at a time keeps the transient peak small
            old = getattr(self, name)
            new = np.zeros(size, old.dtype)
            new[: old.shape[0]] = old
            setattr(self, name, new)
            del old

    def compaction_bytes(self) -> int:
        """The scratch :meth:`compact` needs: a bit and 1/8 byte a node."""
        return 16 * ((int(self.ints[N_NODES]) + 63) // 64)

    def compile_compaction(self) -> None:
        """Compile (or load from numba's cache) what :meth:`compact` runs, for this state's arrays."""
        kept, rank, n = np.zeros(1, np.uint64), np.zeros(1, np.int64), 0
        compile_for(mark_kept_nodes, self.node_parent, self.node_dead, n, kept, rank, self.heap_node, n, True)
        compile_for(renumber_kept, self.node_parent, self.node_dead, n, kept, rank, self.heap_key, self.heap_node, n)
        for itemsize in sorted({getattr(self, name).itemsize for name in self.node_fields}):
            compile_for(move_kept, np.zeros(1, f"u{itemsize}"), kept, n)
        compile_for(map_refill, self.map_slots, self.node_hash, self.node_dead, n)

    def compact(self, map_in_use: bool, keep_closed: bool = True) -> int:
        """Free the nodes of dead prefixes (a search marks dead the prefixes it takes out of the queue,
        see :func:`optrules.corels.kernel.set_aside`) and, unless ``keep_closed``, of the prefixes it is
        done with (expanded or pruned, not queued: the symmetry map then forgets them, and may let a
        permutation of one be searched again), except those a queued prefix descends from: the kept
        nodes move to the front of the arrays in their order, renumbered, the queue and (``map_in_use``)
        the symmetry map rebuilt. Returns how many nodes were freed."""
        n_nodes = int(self.ints[N_NODES])
        words = (n_nodes + 63) // 64
        kept, rank = np.zeros(words, np.uint64), np.zeros(words, np.int64)
        n_kept = int(mark_kept_nodes(self.node_parent, self.node_dead, n_nodes, kept, rank, self.heap_node,
                                     int(self.ints[HEAP_SIZE]), keep_closed))
        self.ints[HEAP_SIZE] = renumber_kept(self.node_parent, self.node_dead, n_nodes, kept, rank,
                                             self.heap_key, self.heap_node, int(self.ints[HEAP_SIZE]))
        for name in self.node_fields:
            values = getattr(self, name)
            move_kept(values.view(f"u{values.itemsize}"), kept, n_nodes)
        self.ints[N_NODES] = n_kept
        if map_in_use:
            self.ints[MAP_COUNT] = map_refill(self.map_slots, self.node_hash, self.node_dead, n_kept)
        return n_nodes - n_kept

    def tree(self) -> Tree:
        return Tree(self.node_parent, self.node_last, self.node_depth, self.node_hash, self.node_dead)

    def frontier(self) -> Frontier:
        return Frontier(self.heap_key, self.heap_node, self.map_slots)

    def progress(self) -> Progress:
        return Progress(self.ints, self.floats, self.best_prefix)

    def best(self) -> tuple[int, ...]:
        return tuple(int(a) for a in self.best_prefix[: int(self.ints[BEST_LEN])])

    def set_incumbent(self, value: float, prefix) -> None:
        self.floats[0] = value
        self.best_prefix[: len(prefix)] = prefix
        self.ints[BEST_LEN] = len(prefix)

    def push_root(self, key: float = 0.0) -> None:
        from ._numba import heap_push

        self.node_parent[0] = -1
        self.ints[N_NODES] = 1
        # typed as the kernels' own calls, so that numba compiles the push once
        heap_push(self.heap_key, self.heap_node, np.int64(0), float(key), np.int64(0))
        self.ints[HEAP_SIZE] = 1
        self.ints[MAX_QUEUE] = 1

    @property
    def nbytes(self) -> int:
        names = list(self.node_fields) + ["heap_key", "heap_node", "map_slots"]
        return sum(getattr(self, n).nbytes for n in names)

    def counters(self) -> dict:
        return {
            "nodes_expanded": int(self.ints[EXPANDED]),
            "lower_bound_evaluations": int(self.ints[LB_EVALS]),
            "queue_insertions": int(self.ints[INSERTIONS]),
            "expansions_with_children": int(self.ints[KEPT_A_CHILD]),
            "max_queue_size": int(self.ints[MAX_QUEUE]),
            "max_prefix_length": int(self.ints[MAX_LENGTH]),
            "memory_bytes": int(self.nbytes),
            "prefixes_dropped": int(self.ints[DROPPED]),
            "prefixes_set_aside": int(self.ints[SET_ASIDE]),
            "leaves_resolved": int(self.ints[LEAVES_RESOLVED]),
            "reexpansions": int(self.ints[REEXPANDED]),
            "dominated_children": int(self.ints[DOMINATED]),
        }

    def dropped_floor(self) -> float:
        """The smallest bound among prefixes dropped for want of memory (inf: none was)."""
        return float(self.floats[DROPPED_FLOOR])


def proven_status(status: str, queue_bound: float, incumbent: float) -> str:
    """``status`` after a search that may have drained its queue past the memory budget: optimal when
    the bound on everything not evaluated (queued and dropped prefixes, in the incumbent's units) already
    reaches the incumbent."""
    return OPTIMAL if status == MEMORY_BUDGET and queue_bound >= incumbent else status


def unsearched_counters(prefix_length: int) -> dict:
    """The counters of a search that never started (its budget ran out before it)."""
    return {"total_time": 0.0, "time_to_optimum": 0.0, "nodes_expanded": 0, "lower_bound_evaluations": 0,
            "queue_insertions": 0, "expansions_with_children": 0, "max_queue_size": 0, "max_prefix_length": 0,
            "memory_bytes": 0, "prefixes_dropped": 0, "prefixes_set_aside": 0,
            "leaves_resolved": 0, "reexpansions": 0, "dominated_children": 0, "optimal_prefix_length": prefix_length,
            "compile_time": 0.0}


def unsearched_certificate(objective: float, lower_bound: float, budget: Budget, prefix_length: int,
                           **counters) -> Certificate:
    """The certificate of a search that never started (its budget, or a stop request, ran out first)."""
    status = INTERRUPTED if budget.interrupted else TIME_BUDGET
    return Certificate(status, objective, lower_bound, {**unsearched_counters(prefix_length), **counters}, Trace(),
                       BRANCH_AND_BOUND)


@dataclass
class Outcome:
    status: str
    total_time: float
    time_to_optimum: float
    compile_time: float


STATE = "search state"  # the budget's name for the node arrays, heap and map
# past this share of its allowance the state is tight (MEMORY_TIGHT): two more growths (by GROWTH) would
# pass it
TIGHT_FRACTION = 0.5


def _charge_state(state: SearchState, budget: Budget) -> None:
    """Charge the state's arrays to the budget, and flag it tight past TIGHT_FRACTION of its allowance."""
    budget.charge(STATE, state.nbytes)
    if state.nbytes > TIGHT_FRACTION * budget.allowance(STATE):
        state.ints[MEMORY_TIGHT] = 1


def compile_for(kernel, *args) -> None:
    """Compile ``kernel`` (a numba dispatcher) for these arguments' types, or load it from numba's cache,
    without running it."""
    kernel.compile(tuple(kernel.typeof_pyval(arg) for arg in args))


def compiled_in_time(compile_kernel, budget: Budget) -> bool:
    """Run ``compile_kernel()`` in a thread while the budget lasts: True when it is done, False when the
    time budget ran out or a stop came first (Ctrl-C included).

    A first fit after install compiles its search kernel for seconds (the rule list's ~7 s, after ~5 s
    of the data layer's kernels), which a time budget could not stop: a first fit on COMPAS with a 5 s
    budget took 12.8 s. Given up on, the thread goes on (not a daemon: the process waits for it at exit)
    so that the kernel reaches numba's cache and later fits start at once. numba compiles under one
    lock for the whole process, so a search compiles every other kernel it needs after the search
    kernel (e.g. the queue scan for its bound) before it starts this."""
    done = threading.Event()
    errors: list[BaseException] = []

    def target() -> None:
        try:
            compile_kernel()
        except BaseException as error:  # noqa: BLE001 (raised in the fit's own thread below)
            errors.append(error)
        finally:
            done.set()

    threading.Thread(target=target, name="optrules-compile").start()
    try:
        while not done.wait(0.02):
            if budget.stopped():
                return False
    except KeyboardInterrupt:
        budget.interrupt()
        return False
    if errors:
        raise errors[0]
    return True


def drive(run, state: SearchState, record, budget: Budget, max_nodes=None, trace_interval: float = 0.05,
          trace=None, drop_when_full: bool = False, compile_kernel=None, set_aside=None) -> Outcome:
    """Run ``run`` in slices of ~20 ms until the queue is empty or a budget (or Ctrl-C) stops it.

    ``budget`` holds the deadline (for the whole fit: time spent before the search counts), the stop
    request and the memory account: the state arrays are charged to it, and when growing them would
    pass ``max_memory`` the search stops with status ``memory budget``; with ``drop_when_full`` it goes
    on instead with the queue it has, dropping the children it would queue and keeping their smallest
    bound (``MEMORY_FULL`` in :mod:`optrules._numba`; the kernel must support it), until the queue is
    empty or another budget stops it; the status is then ``memory budget`` too, for the caller to
    upgrade to optimal when the dropped prefixes' bound proves it. Before that, ``set_aside()`` (if
    given) may free room by taking queued prefixes out (to be made again later, or dropped with their
    bound): True when it freed enough to go on queueing. ``trace`` (if given) is charged too, as it
    grows.

    ``record(elapsed)`` appends a trace point (and may report progress, returning the progress
    callback's answer: :data:`~optrules.budget.STOP` stops the search); it is called after slices, no
    more than every ``trace_interval`` seconds and at most ~5% of the time, and once at the end.

    ``compile_kernel()`` (:func:`compile_for` the kernel ``run`` calls) compiles it within the budget
    (:func:`compiled_in_time`): when the budget ends first, the search ends before it began (status
    ``time budget`` or ``interrupted``; the queue holds the root).
    """
    check_budget_values(max_nodes=max_nodes)
    _charge_state(state, budget)
    # compiling (or loading from numba's cache) is charged to the fit's clock, but not to the search time
    compile_start = time.perf_counter()
    if compile_kernel is not None and not compiled_in_time(compile_kernel, budget):
        status = INTERRUPTED if budget.interrupted else TIME_BUDGET
        try:
            if budget.hear(record(0.0)):  # a cancel seen by the report (the web app's): the search is over anyway
                status = INTERRUPTED
        except KeyboardInterrupt:  # (a callback that raises it instead)
            budget.interrupt()
            status = INTERRUPTED
        return Outcome(status, 0.0, 0.0, time.perf_counter() - compile_start)
    run(0)
    compile_time = time.perf_counter() - compile_start
    start = time.perf_counter()
    status = OPTIMAL
    time_to_optimum = 0.0
    # the first slice is one pop: one expansion over hundreds of thousands of antecedents sweeps millions of
    # words, and Ctrl-C and the budgets are heard only between slices; slices double from there
    slice_pops = 1
    last_record = -np.inf
    record_every = trace_interval
    try:
        while True:
            pops = slice_pops
            if max_nodes is not None:
                left = int(max_nodes) - int(state.ints[EXPANDED])
                if left <= 0:
                    status = NODE_BUDGET
                    break
                pops = min(pops, left)
            slice_start = time.perf_counter()
            code = run(pops)
            now = time.perf_counter()
            if state.ints[IMPROVED]:
                state.ints[IMPROVED] = 0
                time_to_optimum = now - start
            took = now - slice_start
            # a slice that ends for room has done work too: with many antecedents (an expansion adding
            # tens of thousands of children) it may be most of the slices, and must not grow long
            if took > 0.04 and slice_pops > 1:
                slice_pops //= 2
            elif took < 0.01 and code != NEED_ROOM:
                slice_pops = min(slice_pops * 2, 1 << 20)
            if code == NEED_ROOM:
                if not state.make_room(budget.allowance(STATE)):
                    if set_aside is not None and set_aside():
                        continue
                    status = MEMORY_BUDGET
                    if not drop_when_full:
                        break
                    state.ints[MEMORY_FULL] = 1
                    continue
                _charge_state(state, budget)
            elif code == QUEUE_EMPTY:
                break
            if code != NEED_ROOM and now - last_record >= record_every:
                budget.hear(record(now - start))  # (a stop asked for ends the search below)
                last_record = time.perf_counter()
                # a record scans the queue: keep that below ~5% of the search time
                record_every = max(trace_interval, 20.0 * (last_record - now))
                if trace is not None:
                    budget.charge("trace", trace.nbytes)
            if budget.stopped():
                status = INTERRUPTED if budget.interrupted else TIME_BUDGET
                break
    except KeyboardInterrupt:
        budget.interrupt()
        status = INTERRUPTED
    # however it ended, memory ended the proper search
    if (state.ints[MEMORY_FULL] or state.ints[DROPPED]) and status != INTERRUPTED:
        status = MEMORY_BUDGET
    total_time = time.perf_counter() - start
    try:
        record(total_time)
    except KeyboardInterrupt:  # during the final report: the search itself is over
        pass
    return Outcome(status, total_time, time_to_optimum, compile_time)
