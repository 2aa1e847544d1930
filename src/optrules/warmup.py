"""Compile and cache every numba kernel the model families use, ahead of the first fit.

numba compiles a kernel the first time it is called with new argument types and caches the machine
code beside the module (``__pycache__``, or ``NUMBA_CACHE_DIR``); later processes load it in a fraction
of a second. A fresh install, or every container started from an image that never ran a fit, pays
the compilation in its first fit instead: ~13 s for the rule-list search alone (a whole first fit on
COMPAS ~22 s), ~30 s more for its two-core variant on large tables (BENCHMARKS.md). :func:`compile_kernels` runs small fits that take
each kernel's every argument-type combination a real fit takes (plain and weighted, two and three
classes, the large-table kernel, Rashomon sets, falling rule lists, the rule sets' exact pricing),
so that ``optrules compile`` in an install script or a Docker build leaves nothing to compile. Each
family declares its parts (``Family.warm_up``, in its package's ``warmup.py``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import contextmanager

import numpy as np


def random_table(n_samples: int, n_features: int, n_classes: int = 2, seed: int = 0):
    """A random 0/1 table whose label depends on its first features (so that rules exist)."""
    rng = np.random.default_rng(seed)
    X = rng.random((n_samples, n_features)) < 0.5
    score = X[:, 0].astype(int) + (X[:, 1] & X[:, 2]) + (rng.random(n_samples) < 0.2)
    y = np.minimum(score, n_classes - 1)
    return X.astype(np.int8), y


@contextmanager
def threads_from_the_first_slice():
    """Searches in it take their threads at once (not after ``optrules.bnb.PARALLEL_AFTER``), so that a
    part compiles a search kernel's parallel compilation; yields False on one core (never used there)."""
    from . import bnb

    if bnb.threads_for(None) < 2:
        yield False
        return
    after, bnb.PARALLEL_AFTER = bnb.PARALLEL_AFTER, 0.0
    try:
        yield True
    finally:
        bnb.PARALLEL_AFTER = after


def _parts() -> dict:
    from .families import families

    return {part.label: part for found in families().values() for part in found.warm_up}


#: what each part compiles, in the order they run: every family's warm-up parts (``Family.warm_up``)
PARTS: dict[str, Callable[[], None]] = {label: part.run for label, part in _parts().items()}

#: the parts ``large=False`` (``--skip-large``) leaves out: kernels only large problems take
LARGE_PARTS = tuple(label for label, part in _parts().items() if part.large)


#: the parts ``first=True`` (``--first``) runs alone: the kernels a first session takes
FIRST_PARTS = tuple(label for label, part in _parts().items() if part.first)


def compile_kernels(large: bool = True, progress: Callable[[str, float], None] | None = None,
                    first: bool = False) -> dict[str, float]:
    """Run every part (without :data:`LARGE_PARTS` when ``large`` is false; only :data:`FIRST_PARTS` when
    ``first``); return the seconds each took (a part whose kernels are cached already takes well under
    a second)."""
    seconds = {}
    for name, part in _parts().items():  # (the registry as it is now: a family registered since counts)
        if (not large and part.large) or (first and not part.first):
            continue
        start = time.perf_counter()
        part.run()
        seconds[name] = time.perf_counter() - start
        if progress is not None:
            progress(name, seconds[name])
    return seconds
