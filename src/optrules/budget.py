"""One budget for a whole fit: a deadline, a memory account and a way to stop.

An estimator creates a :class:`Budget` when ``fit`` starts and hands it to every stage (binarize, mine,
warm start, search, final solve). Each stage asks :meth:`Budget.stopped` between pieces of work and
returns what it has when the answer is yes, so that ``time_limit`` bounds the whole fit, not only the
search, and Ctrl-C or a cancel (the ``verbose`` callback answering :data:`STOP`) stops any stage
within a slice. Large structures are charged to the memory account by name; a stage that would pass
``max_memory`` stops instead of allocating.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time

from .parameters import BUDGET_PARAMETERS


class _Stop:
    """The answer of a progress callback that asks the fit to stop (:data:`STOP`)."""

    def __repr__(self) -> str:
        return "optrules.STOP"

    def __reduce__(self):
        return "STOP"


#: what a progress callback (an estimator's callable ``verbose``) returns to stop the fit: every stage
#: then returns its best so far, as on Ctrl-C (a callback that raises ``KeyboardInterrupt`` is heard too)
STOP = _Stop()


#: default memory budget of a fit: its accounted structures stay below this (the process adds its
#: interpreter and libraries, ~200 MB). Raise ``max_memory`` for searches that need more.
DEFAULT_MAX_MEMORY = 1 << 30


def physical_memory() -> int:
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):  # not a POSIX system
        return 16 << 30


#: Ctrl-Cs (SIGINT) that a fit's budget turned into a stop request in this process (:func:`interrupts_heard`)
_interrupts_heard = 0


def interrupts_heard() -> int:
    """How many Ctrl-Cs fits of this process have heard so far: a command that returns a fit's best model
    after one still ends as an interrupted command (status 130), once the model is written."""
    return _interrupts_heard


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity where the system has one)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def default_memory_budget() -> int:
    """1 GiB, or half of the machine's memory if that is less."""
    return min(DEFAULT_MAX_MEMORY, physical_memory() // 2)


def check_budget_values(time_limit=None, max_memory=None, max_nodes=None) -> None:
    """Clear errors for budgets that cannot be met."""
    for entry, value in zip(BUDGET_PARAMETERS, (max_nodes, time_limit, max_memory)):
        entry.check(value)


class Budget:
    """Deadline, memory account and stop request of one fit.

    ``time_limit`` (seconds from now) and ``max_memory`` (bytes, default :func:`default_memory_budget`);
    ``hook()`` is called by :meth:`stopped` and answers :data:`STOP` (or raises ``KeyboardInterrupt``) to
    ask for a stop (the web app's cancel does).
    """

    def __init__(self, time_limit: float | None = None, max_memory: int | None = None, hook=None):
        check_budget_values(time_limit, max_memory)
        self.start = time.perf_counter()
        self.deadline = None if time_limit is None else self.start + float(time_limit)
        self.max_memory = default_memory_budget() if max_memory is None else int(max_memory)
        self.hook = hook
        self.interrupted = False
        self._charges: dict[str, int] = {}
        #: the stage now running (:meth:`enter`), and the one that first heard a stop (time, Ctrl-C, cancel)
        self.phase = "starting"
        self.stopped_in: str | None = None

    # -- time --------------------------------------------------------------------------------------
    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def remaining(self) -> float | None:
        """Seconds left (may be negative), or None without a time limit."""
        return None if self.deadline is None else self.deadline - time.perf_counter()

    def expired(self) -> bool:
        return self.deadline is not None and time.perf_counter() >= self.deadline

    def share(self, fraction: float) -> float | None:
        """``fraction`` of the time left (0 when none is left), or None without a time limit."""
        left = self.remaining()
        return None if left is None else max(0.0, fraction * left)

    # -- stopping ----------------------------------------------------------------------------------
    def enter(self, phase: str) -> None:
        """Name the stage that runs from now on (binarizing, mining, search, analysis): a fit's certificate
        says in which one its budget ended (``stopped_in``)."""
        self.phase = phase

    def _heard(self) -> None:
        if self.stopped_in is None:
            self.stopped_in = self.phase

    def interrupt(self) -> None:
        self.interrupted = True
        self._heard()

    def cancelled(self) -> bool:
        """Was a stop asked for (Ctrl-C, or the hook answered :data:`STOP`)?"""
        if self.hook is not None and not self.interrupted:
            try:
                self.hear(self.hook())
            except KeyboardInterrupt:
                self.interrupt()
        return self.interrupted

    def hear(self, answer) -> bool:
        """A progress callback's ``answer``: :data:`STOP` asks for a stop. Returns whether one was asked."""
        if answer is STOP:
            self.interrupt()
        return self.interrupted

    def stopped(self) -> bool:
        """Should the current stage stop? (time is up, a stop was asked for, or the stage's own end
        came: :meth:`ending_when`)."""
        if self.cancelled() or self.expired():
            self._heard()
            return True
        return self._stage_ends is not None and bool(self._stage_ends())

    _stage_ends = None

    @contextlib.contextmanager
    def ending_when(self, condition):
        """While the block runs, :meth:`stopped` also says yes once ``condition()`` does: the stage ends
        early by its caller's choice (a ladder's rung it judged would not finish), which is neither a stop
        request nor the budget's end (``stopped_in`` stays unset)."""
        previous = self._stage_ends
        self._stage_ends = condition
        try:
            yield self
        finally:
            self._stage_ends = previous

    @contextlib.contextmanager
    def holding_back(self, fraction: float):
        """Move the deadline ``fraction`` of the time left earlier while the block runs: time kept for
        work after it (which must end by the real deadline)."""
        deadline = self.deadline
        if deadline is not None:
            self.deadline = deadline - fraction * max(0.0, deadline - time.perf_counter())
        try:
            yield self
        finally:
            self.deadline = deadline

    @contextlib.contextmanager
    def capped(self, seconds: float):
        """End the block's stage at most ``seconds`` from now (or at the real deadline, if sooner)."""
        deadline = self.deadline
        cap = time.perf_counter() + float(seconds)
        self.deadline = cap if deadline is None else min(deadline, cap)
        try:
            yield self
        finally:
            self.deadline = deadline

    @contextlib.contextmanager
    def catch_interrupt(self):
        """Turn Ctrl-C (SIGINT) into a stop request while the block runs: the stages see it through
        :meth:`stopped` and return their best so far. A second Ctrl-C raises at once. Only in the
        main thread (signal handlers live there); elsewhere the block runs unchanged."""
        if threading.current_thread() is not threading.main_thread():
            yield self
            return
        previous = signal.getsignal(signal.SIGINT)

        def handler(signum, frame):
            global _interrupts_heard
            _interrupts_heard += 1
            if self.interrupted:
                raise KeyboardInterrupt
            self.interrupt()

        try:
            signal.signal(signal.SIGINT, handler)
        except ValueError:  # not allowed here (e.g. an embedded interpreter)
            yield self
            return
        try:
            yield self
        finally:
            signal.signal(signal.SIGINT, previous)

    # -- memory ------------------------------------------------------------------------------------
    @property
    def used(self) -> int:
        return sum(self._charges.values())

    def charge(self, name: str, nbytes: int) -> None:
        """Account ``nbytes`` under ``name`` (replacing that name's earlier charge)."""
        self._charges[name] = int(nbytes)

    def release(self, name: str) -> None:
        self._charges.pop(name, None)

    def fits(self, extra_bytes: int, replacing: str | None = None) -> bool:
        """Would ``extra_bytes`` more (in place of ``replacing``'s charge) stay within ``max_memory``?"""
        used = self.used - (self._charges.get(replacing, 0) if replacing else 0)
        return used + int(extra_bytes) <= self.max_memory

    def allowance(self, name: str) -> int:
        """The most ``name`` may be charged: ``max_memory`` less every other charge."""
        return self.max_memory - (self.used - self._charges.get(name, 0))

    def require(self, name: str, nbytes: int, what: str) -> None:
        """Charge ``nbytes`` for ``name`` or raise a clear MemoryError before allocating it."""
        if not self.fits(nbytes, replacing=name):
            raise MemoryError(
                f"{what} needs {nbytes / 2**20:,.0f} MB, and the fit's memory budget is "
                f"{self.max_memory / 2**20:,.0f} MB ({self.used / 2**20:,.0f} MB in use): raise max_memory, "
                "or make fewer antecedents (larger min_support, smaller max_card or max_antecedents)"
            )
        self.charge(name, nbytes)

    def charges(self) -> dict[str, int]:
        return dict(self._charges)


def as_budget(budget: Budget | None, time_limit=None, max_memory=None) -> Budget:
    """The given budget, or a new one from the limits (for callers of the solvers without an estimator)."""
    return budget if budget is not None else Budget(time_limit, max_memory)


class StoppableThreads:
    """``functions`` run in daemon threads that stop together. Each is called with ``stop_asked``, which
    reads one flag: set by :meth:`stop`, by :meth:`wait` when the caller's ``should_stop`` says so, and
    when one of them raises. A fit's hook (``should_stop``, maybe a progress display's) is asked only in
    the caller's thread, in :meth:`wait`, never in these threads; the functions look at the flag
    between slices of their work (the searches' kernels release the GIL, so they run on other cores).
    ``results[k]`` holds what function ``k`` returned, ``errors`` what they raised."""

    def __init__(self, functions, name: str):
        self._stopping = threading.Event()
        self.results = [None] * len(functions)
        self.errors: list[BaseException] = []

        def call(k, function):
            try:
                self.results[k] = function(self._stopping.is_set)
            except BaseException as error:  # noqa: BLE001 - the caller reads errors
                self.errors.append(error)
                self._stopping.set()
        self._threads = [threading.Thread(target=call, args=(k, function), name=name, daemon=True)
                         for k, function in enumerate(functions)]
        for thread in self._threads:
            thread.start()

    def wait(self, until: float | None = None, should_stop=None, poll: float = 0.05) -> bool:
        """Wait for the threads to end, until ``until`` (a ``time.perf_counter()`` time) at most; every
        ``poll`` seconds ask ``should_stop`` and, when it says so, set the flag (and wait on for them to
        end, within a slice). Ctrl-C while waiting stops them and is raised. Whether all have ended."""
        try:
            for thread in self._threads:
                while thread.is_alive():
                    if should_stop is not None and should_stop():
                        self._stopping.set()
                    left = poll if until is None else min(poll, until - time.perf_counter())
                    if left <= 0:
                        return False
                    thread.join(left)
        except BaseException:
            self.stop()
            raise
        return True

    def stop(self) -> None:
        """Set the flag and wait for every thread to end."""
        self._stopping.set()
        for thread in self._threads:
            thread.join()


class NodeBudget:
    """Work a search may still do, in its own nodes (the rule sets' exact pricing: clauses searched, the
    HiGHS pricing IP's nodes; the lists' searches count prefixes expanded against ``max_nodes`` in their
    kernels' state): unlike seconds, the same on every machine and under any load, so a fit bounded by it
    alone returns the same model everywhere. ``limit`` None: no bound."""

    def __init__(self, limit: int | None = None):
        self.limit = None if limit is None else int(limit)
        self.spent = 0

    def left(self) -> int | None:
        return None if self.limit is None else max(self.limit - self.spent, 0)

    def spend(self, nodes: int) -> None:
        self.spent += int(nodes)

    @property
    def exhausted(self) -> bool:
        return self.limit is not None and self.spent >= self.limit
