"""Batches: one search on several threads, the same for every thread count."""

from __future__ import annotations

from numba import njit

from .cache import drop_stale_cache

drop_stale_cache(__file__, ["."])  # (this package's functions inline each other's)


# -- batches: one search on several threads ---------------------------------------------------------
# A kernel that runs on threads pops its prefixes in batches, expands a batch's prefixes side by side
# (each on its own slot: its rows of the workspace and its records of the children found) and merges
# what they found on one thread, in the batch's order. What a batch holds depends on the problem and the
# memory allowed, never on the threads: the same search for every n_jobs.

#: a batch holds at most this many prefixes, and fewer when its records (a child an antecedent, each
#: slot) would pass BATCH_RECORDS: enough for two threads to share evenly (a prefix's expansion takes
#: ~1-20 us, a parallel region's start a few; rule lists, monks-3 at lambda 0.005 on two threads against
#: one, the least of two runs each: 1.24x with batches of 16, 1.43x of 32, 1.57x of 64, the one-thread
#: search within its noise), few enough that a batch seldom expands what a list found within it would prune
MAX_BATCH = 32
BATCH_RECORDS = 1 << 17


def batch_slots(n_antecedents: int, slot_bytes: int, max_bytes: int | None, most: int = MAX_BATCH) -> int:
    """Prefixes a batch pops: at most ``most``, its records within BATCH_RECORDS and its slots (of
    ``slot_bytes`` each) within ``max_bytes``; a function of the problem and the memory allowed, never of
    the threads, so that every thread count searches alike."""
    fits = most if max_bytes is None else int(max_bytes) // max(int(slot_bytes), 1)
    return max(1, min(most, BATCH_RECORDS // max(int(n_antecedents), 1), fits))


def two_compilations(function, parallel_name: str):
    """``function`` (a kernel with ``prange`` loops) compiled twice: serially without numba's reference
    counting (see :class:`Workspace`; rule lists, monks-3 lambda 0.01: 13.3 -> 11.7 s), and in parallel
    (which needs it for its threads), compiled only when a search runs on several threads (its parfors
    compile ~2x slower). Both release the GIL: the parallel one compiles in a thread while the serial one
    searches (:class:`optrules.bnb.ThreadedKernel`), and the web app's fits run in threads.

    The parallel one is a copy named ``parallel_name``: numba's disk cache keys a function's machine code
    on its name and signature, not on ``parallel``, so the two compilations of one source need two names."""
    code = function.__code__.replace(co_name=parallel_name, co_qualname=parallel_name)
    copy = type(function)(code, function.__globals__, parallel_name, function.__defaults__, function.__closure__)
    copy.__qualname__ = parallel_name
    return (njit(cache=True, _nrt=False, nogil=True)(function),
            njit(cache=True, parallel=True, nogil=True)(copy))
