"""One certified rule-list search across the workers of a Dask cluster (``distributed``).

The search space is cut into **subtrees**: the lists that begin with one prefix P. A worker searches a
subtree as a search of its own over the samples P leaves (:func:`subtree_problem`: the same antecedents,
lambda N the same, so that its objective is the full one less what P's rules cost), pruning against the
best list any worker has found. The caller's process coordinates (:class:`ClusterSearch`):

- it keeps the subtrees not yet searched in a queue ordered by their bound, and hands the least-bound
  ones to the workers, one a worker thread;
- the incumbent is shared both ways: a worker puts each better list it finds on a Dask ``Queue``, the
  coordinator keeps the best and writes its objective into a Dask ``Variable``, which workers read between
  their kernel's slices (every :data:`POLL_SECONDS`);
- a subtree comes back finished (searched to its end) or open: its time ran out, or the coordinator asked
  it to split because a worker ran dry. An open subtree returns its live frontier grouped into at most
  :data:`SPLIT_ROOTS` subtrees under it (:func:`_grouped_frontier`), each bounded by the least bound of the
  frontier it holds (Lemma 2, Thm 20), which join the queue. The coordinator first searches the whole problem
  itself for up to :data:`LOCAL_SECONDS` (a search certified by then never waits for the cluster); if
  not certified, the first subtree is the whole search, pruned by the incumbent that stage found;
- a worker lost mid-subtree costs that subtree's work, not its lists: Dask runs its task again elsewhere,
  and a task lost too often (``KilledWorker``) is queued again by the coordinator.

The certificate's lower bound is the least of the incumbent and the bounds of the subtrees not finished
(queued, running, or open), so it stays valid whatever is lost or stopped. Each subtree's search keeps
its own symmetry map: permutations of one prefix that fall in different subtrees are each searched, which
is what the cluster pays for its workers (docs/corels.md, "On a cluster"). The objective is the serial
search's; among lists of equal objective the one returned may differ.

Start it with :func:`cluster_search`, or fit an estimator inside ``with on_cluster(client):``.
"""

from __future__ import annotations

import contextlib
import contextvars
import heapq
import itertools
import time
import uuid
import warnings
from concurrent.futures import CancelledError
from dataclasses import dataclass, field

import numpy as np

from ..bnb import HEAP_SIZE, IMPROVED
from ..budget import STOP, Budget, as_budget, check_budget_values
from ..certificate import BRANCH_AND_BOUND, INTERRUPTED, OPTIMAL, TIME_BUDGET, Certificate, Trace
from ..data import bitset
from ..escape import printable
from ..solve import Solver
from .prefix import objective
from .problem import Problem
from .requirements import Requirements
from .search import (
    Ablation,
    RuleListSearch,
    RuleListSearchSettings,
    SearchResult,
    _before_search,
    _initial_incumbent,
    check_max_length,
)

#: the most subtrees an open subtree comes back as (its frontier grouped by ancestor, deepest first)
SPLIT_ROOTS = 64
#: how often a worker reads the shared incumbent and its split requests, and the coordinator its queue
POLL_SECONDS = 0.05
#: a subtree running at least this long may be asked to split when a worker has nothing to do
MIN_SPLIT_SECONDS = 0.25
#: seconds the coordinator searches the whole problem itself before the workers get it: a search
#: certified by then never waits for the cluster (small problems take what they take serially)
LOCAL_SECONDS = 1.0
#: relative slack on the bound a subtree prunes with: a list that ties the incumbent after the change of
#: units (floating point) is kept, never a better one pruned
BOUND_SLACK = 1e-12

_CLIENT = contextvars.ContextVar("optrules_cluster_client", default=None)


@contextlib.contextmanager
def on_cluster(client):
    """Within this block, estimators' rule-list searches run on ``client``'s cluster (a
    ``distributed.Client``, or a scheduler's address)."""
    client = _as_client(client)
    token = _CLIENT.set(client)
    try:
        yield client
    finally:
        _CLIENT.reset(token)


def current_client():
    """The client of the innermost :func:`on_cluster` block, or None."""
    return _CLIENT.get()


#: seconds a scheduler's address is given to answer (less when the caller's budget has less left)
SCHEDULER_TIMEOUT = 10.0


def connect_scheduler(address: str, timeout: float = SCHEDULER_TIMEOUT):
    """A ``distributed.Client`` of the Dask scheduler at ``address``, or a one-line ``ValueError`` within
    ``timeout`` seconds: a malformed address at once; one where nothing answers, or a service that is not a
    Dask scheduler, after asking it who it is (Dask's own ``identity`` request, which a scheduler answers
    with its type: a web server's reply read as Dask frames asked for exabytes, one that never answers
    held the client 20 s and more). TLS settings come from Dask's configuration, as for ``Client``.

    A scheduler is trusted code: Dask lets it run code in this process (results and messages are
    pickled), so connect only to schedulers you run; across machines use ``tls://`` (docs/corels.md)."""
    import asyncio

    from distributed import Client
    from distributed.comm import parse_address
    from distributed.comm.addressing import parse_host_port

    shown = printable(address)
    try:
        scheme, location = parse_address(str(address), strict=False)
        if scheme in ("tcp", "tls"):
            host, port = parse_host_port(location)
            if not 0 < int(port) < 65536:
                raise ValueError(f"port {port} is out of range")
        answer = asyncio.run(asyncio.wait_for(_identity(address), timeout))
    except (asyncio.TimeoutError, TimeoutError):
        raise ValueError(f"no Dask scheduler answered at {shown!r} within {timeout:g} s") from None
    except ValueError as error:  # (Dask's own parsing, with its hint on what an address looks like)
        raise ValueError(f"{shown!r} is not a scheduler's address ({printable(error)}): give tcp://HOST:PORT "
                         "or tls://HOST:PORT") from None
    except Exception as error:  # noqa: BLE001 - whatever a service that is not Dask makes the client raise
        raise ValueError(f"cannot reach a Dask scheduler at {shown!r}: {printable(error)[:200]}") from None
    if not (isinstance(answer, dict) and answer.get("type") == "Scheduler"):
        raise ValueError(f"{shown!r} answered, but not as a Dask scheduler")
    try:
        return Client(address, timeout=max(1.0, timeout), set_as_default=False)
    except Exception as error:  # noqa: BLE001
        raise ValueError(f"cannot connect to the Dask scheduler at {shown!r}: {printable(error)[:200]}") from None


async def _identity(address: str):
    """What the process at ``address`` says it is, asked as Dask asks a scheduler."""
    from distributed.comm import connect
    from distributed.security import Security

    comm = await connect(address, **Security().get_connection_args("client"))
    try:
        await comm.write({"op": "identity", "reply": True})
        return await comm.read()
    finally:
        comm.abort()


def _as_client(client):
    from distributed import Client

    if isinstance(client, str):
        return connect_scheduler(client)
    if not isinstance(client, Client):
        raise TypeError(f"a distributed.Client or a scheduler's address is needed, got {type(client).__name__}")
    return client


def check_cluster_options(policy: str = "lower_bound", map_type: str = "auto", ablation: Ablation = Ablation(),
                          max_nodes=None, required=None) -> None:
    """A clear error for what the cluster search does not do: it searches in the lower-bound order with
    every bound and the automatic map, without requirements or a node budget (a time budget ends it)."""
    refused = [what for what, given in (
        (f"policy={policy!r}", policy != "lower_bound"), (f"map_type={map_type!r}", map_type != "auto"),
        ("bounds switched off", ablation != Ablation()), (f"max_nodes={max_nodes!r}", max_nodes is not None),
        ("required features", required is not None and (not isinstance(required, Requirements) or required.count > 0))) if given]
    if refused:
        raise ValueError("a search on a Dask cluster takes the default policy, map and bounds, no required features "
                         f"and no max_nodes (time_limit ends it); got {', '.join(refused)}")


# -- a subtree's problem ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Subtree:
    """The lists that begin with ``prefix``; ``offset``: what its rules cost (mistakes they make + lambda N
    a rule), which the subtree's problem leaves out; ``problem``: the samples it leaves, or None when no
    list longer than the prefix can beat it (one class left, no sample, or lambda N above every mistake)."""

    prefix: tuple[int, ...]
    offset: float
    problem: Problem | None


def subtree_problem(problem: Problem, prefix) -> Subtree:
    """The search of the lists that begin with ``prefix`` as a search of its own: the samples the prefix
    leaves, every antecedent (the prefix's capture none of them), lambda scaled so that lambda N stays
    the same. A list Q of it costs (mistake units) what ``prefix + Q`` does less the offset."""
    prefix = tuple(int(a) for a in prefix)
    n = problem.n_samples
    captured = np.zeros(bitset.n_words(n), np.uint64)
    for a in prefix:
        captured |= problem.bits[a]
    left = ~bitset.unpack(captured[None, :], n)[0]
    weights = problem.class_weights()
    offset = problem.cost(prefix) - _default_mistakes(weights[left])
    rest = np.flatnonzero(left)
    y = problem.y[rest]
    sample_weight = None if problem.sample_weight is None else problem.sample_weight[rest]
    total = float(len(rest) if sample_weight is None else sample_weight.sum())
    if len(rest) == 0 or y.min() == y.max() or problem.lambda_n >= total:
        return Subtree(prefix, offset, None)
    bits = bitset.pack(bitset.unpack(problem.bits, n)[:, rest])
    with warnings.catch_warnings():  # (a small lambda was warned of by the whole problem)
        warnings.simplefilter("ignore", RuntimeWarning)
        sub = Problem(bits, y, problem.lambda_n / total, problem.conditions, problem.minor[rest], sample_weight,
                      problem.n_classes)
    # an antecedent's sub-conjunctions capture every sample it does on any subset of the samples too
    sub._subconjunctions = problem.subconjunctions()
    return Subtree(prefix, offset, sub)


def _default_mistakes(class_weights: np.ndarray) -> float:
    """Mistakes of the default rule over these samples: all but its majority class."""
    totals = class_weights.sum(axis=0)
    return float(totals.sum() - totals.max()) if len(totals) else 0.0


# -- a worker's search of one subtree ------------------------------------------------------------------
@dataclass
class SubtreeOutcome:
    """What a worker's search of a subtree found: its best list (the whole prefix) and cost (mistake
    units) if it beat the bound it was given (else None, inf), whether it searched the subtree to its end,
    and if not the subtrees it leaves open as ``(bound, prefix)``; its prefixes expanded and seconds."""

    root: tuple[int, ...]
    best: tuple[int, ...] | None
    cost: float
    finished: bool
    open: list = field(default_factory=list)
    expanded: int = 0
    seconds: float = 0.0
    worker: str = ""


class _SharedIncumbent:
    """A worker's side of the coordinator's channel: reads its Variable (best objective, split and stop
    requests) at most every POLL_SECONDS; puts better lists and given-away subtrees on its Queue."""

    def __init__(self, names: tuple[str, str], task: str):
        from distributed import Queue, Variable, get_client

        client = get_client()
        self.variable, self.queue = Variable(names[0], client=client), Queue(names[1], client=client)
        self.task, self.last, self.bound = task, -np.inf, np.inf
        self.split = self.stop = False
        self.answered = set()  # split requests answered (each is a number the coordinator counts up)

    def read(self) -> float:
        """The best objective known (mistake units of the whole problem); notes split and stop requests."""
        now = time.perf_counter()
        if now - self.last >= POLL_SECONDS:
            self.last = now
            shared = self.variable.get()
            self.bound = min(self.bound, float(shared["bound"]))
            asked = shared["split"].get(self.task)
            self.split = asked is not None and asked not in self.answered
            self.asked, self.stop = asked, bool(shared["stop"])
        return self.bound

    def offer(self, prefix: tuple[int, ...], cost: float) -> None:
        if cost < self.bound:
            self.bound = cost
            self.queue.put(("better", cost, prefix, time.time()))  # (when: the incumbent's latency)

    def give(self, subtrees: list) -> None:
        """Answer the split request: these subtrees are the coordinator's now (none: nothing to give)."""
        self.answered.add(self.asked)
        self.split = False
        self.queue.put(("open", self.task, self.asked, subtrees))


class _LocalIncumbent:
    """The coordinator's incumbent as its own search of the first subtree sees it: read and offered at
    once, never a split or stop request (its budget ends it)."""

    split = stop = False

    def __init__(self, coordinator: "ClusterSearch"):
        self.coordinator = coordinator

    @property
    def bound(self) -> float:
        return self.coordinator.best_cost

    def read(self) -> float:
        return self.coordinator.best_cost

    def offer(self, prefix: tuple[int, ...], cost: float) -> None:
        self.coordinator._offer(prefix)


class SubtreeSearch(RuleListSearch):
    """:class:`~optrules.corels.search.RuleListSearch` of one subtree's problem that prunes against the
    shared incumbent (lowered between slices), gives part of its frontier away when asked to split
    (:meth:`_give_away`), and ends with its open frontier instead of a certificate (no warm start, no
    curiosity dive, no search again: the coordinator's incumbent is better than either would find)."""

    def __init__(self, subtree: Subtree, shared: _SharedIncumbent, budget: Budget, max_length):
        super().__init__(subtree.problem, settings=RuleListSearchSettings(warm_start=False, max_length=max_length,
                                                                          n_jobs=1), budget=budget)
        self.subtree, self.shared = subtree, shared

    def _bound(self) -> float:
        """The shared incumbent in this problem's units, with its slack."""
        return self.shared.read() - self.subtree.offset + BOUND_SLACK * self.problem.total_weight

    def _load(self) -> None:
        # the subtree's own list (its prefix and the default rule) is this search's first incumbent
        own = float(self.state.floats[0]) + self.subtree.offset
        if own < self.shared.read():
            self.shared.offer(self.subtree.prefix + self.state.best(), own)
        self._lower_incumbent()
        super()._load()

    def unsearched(self) -> SubtreeOutcome:
        # stopped before its kernel ran: the whole subtree is open, bounded by Thm 20 alone
        return SubtreeOutcome(self.subtree.prefix, None, np.inf, False,
                              [(self.subtree.offset + self.root_b0, self.subtree.prefix)])

    def _lower_incumbent(self) -> None:
        # floats[0] then prunes below a list found elsewhere; best_prefix stays this search's own
        self.state.floats[0] = min(float(self.state.floats[0]), self._bound())

    def _slice(self, max_pops: int) -> int:
        self._lower_incumbent()
        if self.shared.split:
            self._give_away()
        code = self.kernel(max_pops)
        if self.state.ints[IMPROVED]:
            prefix = self.subtree.prefix + self.state.best()
            self.shared.offer(prefix, float(self.state.floats[0]) + self.subtree.offset)
        return code

    def _give_away(self) -> None:
        """A worker has run dry: hand the coordinator about half of the queued prefixes, as the subtrees
        they lie in (:func:`_grouped_frontier`), and take them out of this search's queue (marked dead: the
        kernel skips them; a prefix the map finds one of them beats is covered by its subtree, which the
        coordinator hands out). The subtree holding the least bound stays, so this search goes on best first."""
        state = self.state
        if state.dropped_floor() < np.inf:  # (its frontier misses what memory dropped: nothing to give)
            self.shared.give([])
            return
        nodes, roots, which, least = _grouped_frontier(state, self.lambda_n, self.keys_bound, SPLIT_ROOTS)
        given = np.zeros(len(roots), bool)
        if len(roots) > 1:
            sizes = np.bincount(which, minlength=len(roots))
            kept = int(np.argmin(least))
            order = [r for r in np.argsort(-sizes, kind="stable") if r != kept]
            share = np.cumsum(sizes[order])
            given[np.asarray(order)[:max(1, int((share <= sizes.sum() // 2).sum()))]] = True
        state.node_dead[nodes[given[which]]] = True
        offset, prefix = self.subtree.offset, self.subtree.prefix
        self.shared.give([(float(least[r]) + offset, prefix + _prefix_of(state, int(roots[r])))
                          for r in np.flatnonzero(given)])

    def _dive(self) -> None:
        self.dive_at = None

    def certify(self) -> SubtreeOutcome:
        state, subtree = self.state, self.subtree
        own = state.best()
        cost = self.problem.cost(own) + subtree.offset
        found = (subtree.prefix + own, cost) if cost < self.shared.bound + BOUND_SLACK * self.n else (None, np.inf)
        expanded, seconds = state.counters()["nodes_expanded"], self.outcome.total_time
        if self.outcome.status == OPTIMAL:
            return SubtreeOutcome(subtree.prefix, *found, True, [], expanded, seconds)
        if state.dropped_floor() < np.inf:  # its frontier misses what memory dropped: split it by its first rule
            bound = min(state.dropped_floor(), _frontier(state, self.lambda_n, self.keys_bound)[1].min(initial=np.inf))
            roots = [(bound + self.lambda_n + subtree.offset, subtree.prefix + (a,)) for a in range(self.m)
                     if a not in subtree.prefix]
            return SubtreeOutcome(subtree.prefix, *found, False, roots, expanded, seconds)
        _, roots, _, least = _grouped_frontier(state, self.lambda_n, self.keys_bound, SPLIT_ROOTS)
        return SubtreeOutcome(subtree.prefix, *found, False,
                              [(float(b) + subtree.offset, subtree.prefix + _prefix_of(state, int(r)))
                               for b, r in zip(least, roots)], expanded, seconds)


def _frontier(state, lambda_n: float, keys_bound: bool) -> tuple[np.ndarray, np.ndarray]:
    """The live queued prefixes' nodes and their bounds b + b0 (Thms 1, 20; a prefix queued again for
    its deferred children: its key, as :func:`~optrules.corels.kernel.queue_summary` does)."""
    size = int(state.ints[HEAP_SIZE])
    keys, nodes = state.heap_key[:size], state.heap_node[:size].astype(np.int64)
    live = ~state.node_dead[nodes]
    keys, nodes = keys[live], nodes[live]
    bounds = (state.node_mistakes[nodes] + lambda_n * state.node_depth[nodes].astype(np.float64)
              + state.node_b0[nodes])
    if keys_bound:
        bounds = np.maximum(bounds, keys)
    return nodes, bounds


def _grouped_frontier(state, lambda_n: float, keys_bound: bool, most: int):
    """The live frontier of a search grouped into at most ``most`` subtrees (or by first rule, when there
    are more of those): each the ancestor, at the deepest depth that keeps them few enough, of queued
    prefixes. Returns the queued nodes, the subtrees' root nodes, which root each queued node lies under,
    and each root's bound: the least b + b0 + lambda N of the prefixes queued under it (Lemma 2: every
    list not yet evaluated extends a queued prefix by a rule at least; one the symmetry map pruned is
    covered by the prefix that pruned it, queued or expanded)."""
    nodes, bounds = _frontier(state, lambda_n, keys_bound)
    if len(nodes) == 0:
        return nodes, nodes, nodes, bounds
    depth = state.node_depth[nodes].astype(np.int64)
    chosen = _ancestors(state.node_parent, depth, nodes, 1)
    for level in range(2, int(depth.max()) + 1):
        deeper = _ancestors(state.node_parent, depth, nodes, level)
        if len(np.unique(deeper)) > most:
            break
        chosen = deeper
    roots, which = np.unique(chosen, return_inverse=True)
    least = np.full(len(roots), np.inf)
    np.minimum.at(least, which, bounds + lambda_n)
    return nodes, roots, which, least


def _ancestors(parent: np.ndarray, depth: np.ndarray, nodes: np.ndarray, level: int) -> np.ndarray:
    """Each node's ancestor at depth ``level`` (the node itself when it is not deeper)."""
    nodes, depth = nodes.copy(), depth.copy()
    while True:
        deeper = depth > level
        if not deeper.any():
            return nodes
        nodes[deeper] = parent[nodes[deeper]]
        depth[deeper] -= 1


def _prefix_of(state, node: int) -> tuple[int, ...]:
    prefix = []
    while state.node_parent[node] >= 0:
        prefix.append(int(state.node_last[node]))
        node = int(state.node_parent[node])
    return tuple(reversed(prefix))


def search_subtree(problem: Problem, prefix, seconds, names: tuple[str, str], task: str, max_memory=None,
                   max_length=None) -> SubtreeOutcome:
    """A worker's task: search the lists beginning with ``prefix`` for at most ``seconds`` (None: to the
    end) or until the coordinator asks it to split."""
    from distributed import get_worker

    shared = _SharedIncumbent(names, task)
    budget = Budget(seconds, max_memory, lambda: STOP if shared.stop else None)
    outcome = searched_subtree(problem, prefix, shared, budget, max_length)
    outcome.worker = get_worker().address
    return outcome


def searched_subtree(problem: Problem, prefix, shared, budget: Budget, max_length=None,
                     search_class=SubtreeSearch) -> SubtreeOutcome:
    """The lists beginning with ``prefix`` searched by ``search_class`` against ``shared`` (the channel
    to the coordinator) within ``budget``."""
    subtree = subtree_problem(problem, prefix)
    started = time.perf_counter()
    if subtree.problem is None or (max_length is not None and len(subtree.prefix) >= max_length):
        cost = problem.cost(subtree.prefix)  # only the prefix itself, with its default rule, is in it
        found = (subtree.prefix, cost) if cost < shared.read() else (None, np.inf)
        return SubtreeOutcome(subtree.prefix, *found, True, [], 0, time.perf_counter() - started)
    rest = None if max_length is None else max_length - len(subtree.prefix)
    return search_class(subtree, shared, budget, rest).solve()



# -- the coordinator ---------------------------------------------------------------------------------
#: seconds the coordinator waits, once its budget has ended, for the running subtrees to come back with
#: their frontier (they stop within a slice of their kernel); those not back by then are cancelled and
#: count with the bound they were handed out with
WIND_DOWN_SECONDS = 2.0


def cluster_search(problem: Problem, client, time_limit: float | None = None, max_memory: int | None = None,
                   max_length: int | None = None, initial_prefix=None, warm_start: bool = True,
                   worker_memory: int | None = None, progress=None, budget: Budget | None = None) -> SearchResult:
    """The certified rule list of ``problem`` (as :func:`~optrules.corels.search.search` finds it), searched
    on the workers of ``client`` (a ``distributed.Client`` or a scheduler's address): one subtree a
    worker thread at a time (module docstring). ``time_limit`` (seconds) and Ctrl-C end it with the best
    list found and a certified gap; ``max_memory`` bounds the coordinator's own share, ``worker_memory``
    each subtree's search (default: each worker's own default budget over its threads). ``progress`` is
    called with the trace and a :class:`~optrules.solve.ProgressEvent` as the search goes."""
    check_budget_values(time_limit, max_memory)
    check_max_length(max_length)
    settings = ClusterSettings(max_length, initial_prefix, warm_start, worker_memory)
    return ClusterSearch(problem, _as_client(client), settings=settings,
                         budget=as_budget(budget, time_limit, max_memory), progress=progress).solve()


def _wait(futures, seconds: float, return_when: str) -> None:
    """Until ``return_when`` holds for ``futures`` or ``seconds`` have passed."""
    from distributed import wait

    try:
        wait(futures, timeout=seconds, return_when=return_when)
    except (TimeoutError, CancelledError):  # (a cancelled task is collected as lost)
        pass


@dataclass(frozen=True)
class ClusterSettings:
    """What one cluster search is asked for (:func:`cluster_search`'s arguments, checked there)."""

    max_length: int | None = None
    initial_prefix: object = None
    warm_start: bool = True
    worker_memory: int | None = None


class ClusterSearch(Solver):
    """One search of :func:`cluster_search`, in the :class:`~optrules.solve.Solver`'s phases:

    1. :meth:`prepare`: the cluster's threads and the incumbent (the serial search's start: the greedy
       list, given prefixes).
    2. :meth:`search`: :meth:`_open_channel` (a Variable the coordinator writes, a Queue the workers
       write, the problem scattered to every worker); :meth:`_search_here`: the whole search on this
       process for up to :data:`LOCAL_SECONDS`; if it is not certified by then, the whole search (the
       root) is queued, pruned by the incumbent it found; :meth:`_coordinate`: subtrees handed out least
       bound first, one a worker thread, while any is left and the budget lasts; better lists and
       given-away subtrees read from the Queue; worker threads with nothing to do make as many of the
       oldest running subtrees give half their frontier away; :meth:`_wind_down`: on the budget's end or
       Ctrl-C, the running subtrees are asked to stop and their frontiers collected.
    3. :meth:`certify`: the list and its certificate: optimal when no subtree is left open, else
       bounded by the least bound of the open ones.
    """

    method = BRANCH_AND_BOUND

    def __init__(self, problem: Problem, client, *, settings: ClusterSettings, budget: Budget, progress=None):
        super().__init__(settings=settings, budget=budget, progress=progress)
        self.problem, self.client, self.max_length = problem, client, settings.max_length
        self.initial_prefix, self.warm_start, self.worker_memory = (settings.initial_prefix, settings.warm_start,
                                                                    settings.worker_memory)
        self.started = time.perf_counter()
        self.n = problem.total_weight
        self.pending: list = []  # heap of (bound, order, prefix): subtrees not handed out
        self.running: dict = {}  # future -> (bound, prefix, started, task name)
        self.split: dict = {}  # task name -> the number of the split request it has not answered
        self.order = itertools.count()
        self.trace = Trace()
        self.counters = {"subtrees": 0, "subtrees_given_away": 0, "split_requests": 0, "subtrees_again": 0,
                         "subtrees_pruned": 0, "nodes_expanded": 0, "worker_seconds": 0.0, "incumbent_updates": 0,
                         "local_seconds": 0.0, "local_expanded": 0}
        self.latencies: list[float] = []  # seconds from a worker's better list to the coordinator
        self.by_worker: dict[str, list] = {}  # worker -> [prefixes expanded, seconds searching]

    def unsearched(self) -> SearchResult:
        """The best of the given lists (or the incumbent found) with the root's bound (Thm 20): nothing was
        handed out."""
        prefixes = [self.best] if "prepare" in self.ran else self.initial_prefix
        return _before_search(self.problem, prefixes, self.budget, self.problem.root_b0(), "lower_bound", "auto",
                              self.max_length)

    # -- phase 1 ------------------------------------------------------------------------------------
    def prepare(self) -> None:
        problem = self.problem
        self.threads = sum(self.client.nthreads().values())
        if self.threads == 0:
            raise ValueError("the Dask cluster has no worker: start workers or use search() on this machine")
        self.best = _initial_incumbent(problem, self.warm_start, self.initial_prefix, self.budget, self.max_length)
        self.best_cost = problem.cost(self.best)

    # -- phase 2 ------------------------------------------------------------------------------------
    def search(self) -> None:
        self._open_channel()
        try:
            self._search_here()
            self._publish(stop=False)
            self._coordinate()
        except KeyboardInterrupt:
            self.budget.interrupt()
        finally:
            self._wind_down()

    def _open_channel(self) -> None:
        from distributed import Queue, Variable

        problem = self.problem
        token = uuid.uuid4().hex
        self.names = (f"optrules-incumbent-{token}", f"optrules-found-{token}")
        self.variable = Variable(self.names[0], client=self.client)
        self.queue = Queue(self.names[1], client=self.client)
        self.requests = itertools.count(1)
        self._publish(stop=False)
        problem.subconjunctions()  # found once, here, and shipped with the problem
        self.problem_future = self.client.scatter(problem, broadcast=True, hash=False)

    # -- search here --------------------------------------------------------------------------------
    def _search_here(self) -> None:
        """The whole search on this process for up to LOCAL_SECONDS: certified by then (or stopped by the
        budget, its frontier open), the workers get nothing; else they get the whole search."""
        subtree = subtree_problem(self.problem, ())
        if subtree.problem is None or self.max_length == 0:  # no rule can pay for itself, or none allowed
            self._offer(())
            return
        started = time.perf_counter()
        self._queue_subtree(self.problem.root_b0(), ())  # open until the stage says otherwise (an exception leaves it so)
        with self.budget.capped(LOCAL_SECONDS):
            outcome = SubtreeSearch(subtree, _LocalIncumbent(self), self.budget, self.max_length).solve()
        if outcome.finished or self.budget.stopped():
            self.pending.clear()
            self._take(outcome)
        else:  # the workers start again from the root with this stage's incumbent: its frontier, cut into
            # many subtrees with a symmetry map each, would search more permutations again than the root
            # given to one worker and split only as the others run dry
            self._offer(outcome.best)
            self.counters["nodes_expanded"] += outcome.expanded
        self.counters["local_seconds"] = time.perf_counter() - started
        self.counters["local_expanded"] = outcome.expanded

    def _publish(self, stop: bool) -> None:
        self.variable.set({"bound": self.best_cost, "split": dict(self.split), "stop": stop})

    def _queue_subtree(self, bound: float, prefix) -> None:
        heapq.heappush(self.pending, (bound, next(self.order), tuple(prefix)))

    # -- coordinate ---------------------------------------------------------------------------------
    def _coordinate(self) -> None:
        last_record = last_count = -np.inf
        while self.pending or self.running:
            if self.budget.stopped():
                return
            if time.perf_counter() - last_count >= 1.0:  # workers come and go
                self.threads, last_count = max(1, sum(self.client.nthreads().values())), time.perf_counter()
            self._hand_out()
            if self.running:
                _wait(list(self.running), POLL_SECONDS, "FIRST_COMPLETED")
            changed = self._read_queue()
            for future in [f for f in self.running if f.done()]:
                changed |= self._collect(future)
            changed |= self._read_queue()  # (what a task put before it ended is there by now)
            changed |= self._ask_for_a_split()
            if changed:
                self._publish(stop=False)
            now = time.perf_counter()
            if now - last_record >= max(POLL_SECONDS, 0.01 * (now - self.started)):  # (a trace of ~100 points a decade)
                self._record()
                last_record = now

    def _hand_out(self) -> None:
        """Running subtrees up to one a worker thread, least bound first; those the incumbent prunes go."""
        while self.pending and len(self.running) < self.threads:
            bound, order, prefix = heapq.heappop(self.pending)
            if bound >= self.best_cost - BOUND_SLACK * self.n:
                self.counters["subtrees_pruned"] += 1
                continue
            task = f"optrules-subtree-{self.names[0][-32:]}-{order}"
            seconds = self.budget.remaining()
            seconds = None if seconds is None else max(seconds, 0.0)
            future = self.client.submit(search_subtree, self.problem_future, prefix, seconds, self.names, task,
                                        self.worker_memory, self.max_length, key=task, pure=False)
            self.running[future] = (bound, prefix, time.perf_counter(), task)
            self.counters["subtrees"] += 1

    def _read_queue(self) -> bool:
        changed = False
        for message in self.queue.get(batch=True):
            if message[0] == "better":
                changed |= self._offer(message[2])
                self.latencies.append(max(0.0, time.time() - message[3]))
            else:
                _, task, asked, subtrees = message
                if self.split.get(task) == asked:
                    del self.split[task]
                    changed = True
                for bound, prefix in subtrees:
                    self._queue_subtree(bound, prefix)
                self.counters["subtrees_given_away"] += len(subtrees)
        return changed

    def _offer(self, prefix) -> bool:
        """A list a worker found: the incumbent if it beats it (its objective computed here, on the
        whole problem)."""
        if prefix is None:
            return False
        cost = self.problem.cost(prefix)
        if cost < self.best_cost:
            self.best, self.best_cost = tuple(int(a) for a in prefix), cost
            self.counters["incumbent_updates"] += 1
            return True
        return False

    def _collect(self, future) -> bool:
        from distributed import KilledWorker

        bound, prefix, _, task = self.running.pop(future)
        self.split.pop(task, None)
        try:
            outcome = future.result()
        except (KilledWorker, CancelledError):
            # lost with its workers too often, or with the problem's copies: searched again from the start
            if self.problem_future.status != "finished":
                self.problem_future = self.client.scatter(self.problem, broadcast=True, hash=False)
            self._queue_subtree(bound, prefix)
            self.counters["subtrees_again"] += 1
            return True
        changed = self._take(outcome)
        self.counters["worker_seconds"] += outcome.seconds
        work = self.by_worker.setdefault(outcome.worker, [0, 0.0])
        work[0] += outcome.expanded
        work[1] += outcome.seconds
        return changed

    def _take(self, outcome: SubtreeOutcome) -> bool:
        """A subtree's outcome: its list offered, what it left open queued, its expansions counted."""
        changed = self._offer(outcome.best)
        for open_bound, open_prefix in outcome.open:
            self._queue_subtree(open_bound, open_prefix)
        self.counters["nodes_expanded"] += outcome.expanded
        return changed

    def _ask_for_a_split(self) -> bool:
        """Worker threads with nothing to do and nothing queued: as many running subtrees as threads wait
        (less the requests not answered yet), those that have run longest (at least MIN_SPLIT_SECONDS, not
        asked already), are each asked to give half their frontier away: one request a poll would fill one
        idle worker a poll, and many workers would wait on that pace."""
        idle = self.threads - len(self.running)
        if self.pending or idle <= 0:
            return False
        now = time.perf_counter()
        waiting = sorted((started, task) for _, _, started, task in self.running.values()
                         if task not in self.split and now - started >= MIN_SPLIT_SECONDS)
        asked = waiting[:max(0, idle - len(self.split))]
        for _, task in asked:
            self.split[task] = next(self.requests)
        self.counters["split_requests"] += len(asked)
        return bool(asked)

    def _record(self) -> None:
        elapsed = time.perf_counter() - self.started
        lower = self._lower_bound()
        self.trace.append(elapsed, self.best_cost / self.n, lower / self.n, [len(self.pending) + len(self.running)],
                          float("nan"))
        if self.progress is not None:
            from ..solve import PREFIXES, ProgressEvent

            event = ProgressEvent.from_trace(self.trace, self.counters["nodes_expanded"], PREFIXES,
                                             len(self.pending) + len(self.running))
            self.budget.hear(self.progress(self.trace, event))

    def _lower_bound(self) -> float:
        bounds = [b for b, _, _ in self.pending] + [b for b, _, _, _ in self.running.values()]
        return min([self.best_cost, *bounds])

    # -- wind down ----------------------------------------------------------------------------------
    def _wind_down(self) -> None:
        if not self.running:
            return
        self._publish(stop=True)
        _wait(list(self.running), WIND_DOWN_SECONDS, "ALL_COMPLETED")
        self._read_queue()
        for future in list(self.running):
            if future.done():
                self._collect(future)
        self._read_queue()
        for future, (bound, prefix, _, _) in list(self.running.items()):  # not back: open as handed out
            future.cancel()
            self._queue_subtree(bound, prefix)
        self.running.clear()

    # -- phase 3 ------------------------------------------------------------------------------------
    def certify(self) -> SearchResult:
        problem, n = self.problem, self.n
        self.pending = [entry for entry in self.pending if entry[0] < self.best_cost - BOUND_SLACK * n]
        mistakes = problem.mistakes(self.best)
        best = objective(mistakes, len(self.best), n, problem.regularization)
        if not self.pending:
            status, lower_bound = OPTIMAL, best
        else:
            status = INTERRUPTED if self.budget.interrupted else TIME_BUDGET
            lower_bound = min(best, min(b for b, _, _ in self.pending) / n)
        total = time.perf_counter() - self.started
        self._record()
        counters = {**self.counters, "total_time": total, "workers": len(self.by_worker), "threads": self.threads,
                    "open_subtrees": len(self.pending), "optimal_prefix_length": len(self.best),
                    "idle_share": max(0.0, 1.0 - self.counters["worker_seconds"] / max(self.threads * total, 1e-9)),
                    "incumbent_latency_max": max(self.latencies, default=0.0),
                    "incumbent_latency_mean": float(np.mean(self.latencies)) if self.latencies else 0.0,
                    "policy": "lower_bound", "map_type": "auto"}
        certificate = Certificate(status, best, lower_bound, counters, self.trace, BRANCH_AND_BOUND)
        return SearchResult(self.best, best, certificate, mistakes, {"by_worker": self.by_worker})
