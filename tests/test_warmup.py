"""``optrules compile`` must leave nothing for a later fit to compile: after :func:`compile_kernels`, the
fits a user makes on real data add no new kernel signature (each new one would be a compilation of
seconds in a fresh install)."""

import subprocess
import sys

import pytest

SCRIPT = r"""
import gc, warnings
import numpy as np
from numba.core.dispatcher import Dispatcher
from optrules.warmup import compile_kernels

def compiled():
    return {(d.__module__, d.__name__, str(signature)) for d in gc.get_objects()
            if isinstance(d, Dispatcher) and d.__module__.startswith("optrules") for signature in d.signatures}

compile_kernels(large=False)
before = compiled()

from optrules.data.datasets import load_dataset
from optrules.estimators import FallingRuleListClassifier, RuleListClassifier, RuleSetClassifier
warnings.simplefilter("ignore")
compas, car = load_dataset("compas"), load_dataset("car")
weights = np.where(compas.y == 1, 2.0, 1.0)
model = RuleListClassifier(regularization=0.005, max_nodes=3000).fit(compas.X, compas.y)
model.rashomon_set(0.002, max_nodes=3000)
RuleListClassifier(regularization=0.005, max_nodes=3000).fit(compas.X, compas.y, sample_weight=weights)
RuleListClassifier(regularization=0.01, max_nodes=3000).fit(car.X, car.y)
for soft in (False, True):
    FallingRuleListClassifier(soft=soft, max_nodes=3000).fit(compas.X, compas.y)
FallingRuleListClassifier(max_nodes=3000).fit(compas.X, compas.y, sample_weight=weights)
FallingRuleListClassifier(method="montecarlo", iterations=50, random_state=0).fit(compas.X, compas.y)
for cnf in (False, True):
    RuleSetClassifier(cnf=cnf, time_limit=5).fit(compas.X, compas.y)
RuleSetClassifier(time_limit=5).fit(compas.X, compas.y, sample_weight=weights)
# searches that fill their memory and set prefixes aside
from optrules.corels.problem import Problem
from optrules.corels.search import search
rng = np.random.default_rng(1)
captures, labels = rng.random((40, 500)) < 0.3, (rng.random(500) < 0.5).astype(int)
set_aside = [search(Problem.from_captures(captures, labels, 0.001, sample_weight=w), max_memory=600_000,
                    max_nodes=30_000).certificate.counters["prefixes_set_aside"] for w in (None, np.linspace(0.5, 2, 500))]
assert min(set_aside) > 0, set_aside
print("new:", sorted(compiled() - before))
"""


@pytest.mark.slow  # (it compiles every kernel in a process of its own: minutes on a clean clone)
def test_fits_after_compile_kernels_compile_nothing():
    # in a fresh process: kernels this test session compiled already would hide a missing part
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == "new: []"


def test_compile_command_reports_every_part(capsys):
    from optrules.cli import main
    from optrules.warmup import LARGE_PARTS, PARTS

    assert main(["compile", "--skip-large"]) == 0
    out = capsys.readouterr().out
    for part in PARTS:
        assert (part in out) == (part not in LARGE_PARTS)
    assert "compiled kernels cached" in out


def test_compile_first_runs_only_a_first_sessions_parts(capsys):
    """``make``'s install runs ``optrules compile --first`` while the extras install: the default fit of a
    bundled table and its Rashomon set, nothing else (the whole command takes minutes)."""
    from optrules.cli import main
    from optrules.warmup import FIRST_PARTS, PARTS

    assert FIRST_PARTS and set(FIRST_PARTS) < set(PARTS)
    assert main(["compile", "--first"]) == 0
    out = capsys.readouterr().out
    for part in PARTS:
        assert (part in out) == (part in FIRST_PARTS)


FIRST_SESSION = r"""
import gc, warnings
from numba.core.dispatcher import Dispatcher
from optrules.warmup import FIRST_PARTS, PARTS

def compiled():
    return {(d.__module__, d.__name__, str(signature)) for d in gc.get_objects()
            if isinstance(d, Dispatcher) and d.__module__.startswith("optrules") for signature in d.signatures}

for part in FIRST_PARTS:
    PARTS[part]()
before = compiled()
from optrules.cli import main
main(["fit", "--dataset", "compas", "--regularization", "0.005"])
from optrules import RuleListClassifier, load_compas
data = load_compas("A")
RuleListClassifier(regularization=0.005).fit(data.X, data.y).rashomon_set(0.01, relative=True)
print("new:", sorted(compiled() - before))
"""


@pytest.mark.slow
def test_the_first_parts_leave_nothing_for_make_run_and_the_readmes_rashomon_set():
    done = subprocess.run([sys.executable, "-c", FIRST_SESSION], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == "new: []"


@pytest.mark.slow
@pytest.mark.parametrize("part, kernel", [("rule lists on several cores", "corels"),
                                          ("falling lists on several cores", "frl")])
def test_several_cores_parts_compile_the_parallel_kernels(part, kernel):
    script = (f"from optrules.warmup import PARTS; from optrules.{kernel}.kernel import expand_parallel; "
              f"PARTS[{part!r}](); print(len(expand_parallel.signatures))")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    assert int(done.stdout.split()[-1]) >= 1


@pytest.mark.slow
def test_many_antecedents_part_leaves_nothing_for_such_fits():
    script = SCRIPT.split("compile_kernels(large=False)")[0] + r"""
from optrules.warmup import PARTS
PARTS["rule lists with 65,535+ antecedents"]()
PARTS["falling lists with 65,535+ antecedents"]()
before = compiled()
from optrules.warmup import random_table as _table
from optrules.estimators import FallingRuleListClassifier, RuleListClassifier
X, y = _table(500, 400, seed=9)
model = RuleListClassifier(regularization=0.005, max_antecedents=None, min_support=0.001, max_nodes=20).fit(X, y)
assert len(model.antecedents_) >= 65_535
FallingRuleListClassifier(max_antecedents=None, min_class_support=0.001, max_nodes=20).fit(X, y)
print("new:", sorted(compiled() - before))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == "new: []"


ONCE = r"""
import gc, warnings
from numba.core.dispatcher import Dispatcher
from optrules.data.datasets import load_dataset
from optrules.estimators import FallingRuleListClassifier, RuleListClassifier, RuleSetClassifier
warnings.simplefilter("ignore")
compas = load_dataset("compas")
RuleListClassifier(regularization=0.005, max_nodes=3000).fit(compas.X, compas.y)
FallingRuleListClassifier(max_nodes=3000).fit(compas.X, compas.y)
RuleSetClassifier(time_limit=3).fit(compas.X, compas.y)
print("twice:", sorted((d.__module__, d.__name__, len(d.signatures)) for d in gc.get_objects()
                       if isinstance(d, Dispatcher) and d.__module__.startswith("optrules") and len(d.signatures) > 1))
"""


def test_a_first_fit_compiles_each_kernel_once():
    """Each kernel a plain fit calls is compiled for one signature: a literal argument (``0``) or a
    node index typed int32 at one call and int64 at another is a compilation more, 0.3-2 s each in a
    fresh install's first fit (the pure siblings' sort was compiled three times, the queue's push twice)."""
    done = subprocess.run([sys.executable, "-c", ONCE], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == "twice: []"


DATA = r"""
import gc, warnings
import numpy as np
from numba.core.dispatcher import Dispatcher
from optrules.data.compiled import compile_data_kernels

def compiled():
    return {(d.__module__, d.__name__, str(signature)) for d in gc.get_objects()
            if isinstance(d, Dispatcher) and d.__module__.startswith("optrules.data") for signature in d.signatures}

compile_data_kernels(2)
compile_data_kernels(3)
before = compiled()

from optrules.data.datasets import load_dataset
from optrules.estimators import FallingRuleListClassifier, RuleListClassifier
warnings.simplefilter("ignore")
compas, car = load_dataset("compas"), load_dataset("car")
weights = np.where(compas.y == 1, 2.0, 1.0)
RuleListClassifier(regularization=0.005, max_nodes=10).fit(compas.X, compas.y)
RuleListClassifier(regularization=0.005, max_nodes=10).fit(compas.X, compas.y, sample_weight=weights)
RuleListClassifier(regularization=0.01, max_nodes=10, max_card=3).fit(car.X, car.y)
FallingRuleListClassifier(max_nodes=10).fit(compas.X, compas.y, sample_weight=weights)
FallingRuleListClassifier(method="montecarlo", iterations=5, random_state=0).fit(compas.X, compas.y)
print("new:", sorted(compiled() - before))
"""


def test_the_data_kernels_warm_up_leaves_nothing_for_mining_and_grouping():
    """What a fit compiles within its budget before mining (:func:`optrules.data.compiled.compile_data_kernels`)
    is every data-layer kernel fits call: were one left out, a first fit after install would compile it
    past its budget."""
    done = subprocess.run([sys.executable, "-c", DATA], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == "new: []"


def test_a_kernels_cache_is_dropped_when_any_file_of_a_package_it_inlines_from_changes(tmp_path):
    """numba's cache notices edits to a function's own file only: a module naming a folder among its
    dependencies (the kernels name ``../_numba``, the compiled building blocks) has its cache dropped when
    any Python file in it changes, and kept otherwise."""
    from optrules._numba import drop_stale_cache

    package = tmp_path / "blocks"
    package.mkdir()
    (package / "heap.py").write_text("x = 1\n")
    (package / "maps.py").write_text("y = 2\n")
    kernel = tmp_path / "kernel.py"
    kernel.write_text("z = 3\n")
    cache = tmp_path / "__pycache__"
    cache.mkdir()

    def cached() -> bool:
        return (cache / "kernel.expand-1.py311.nbi").exists()

    def compile_():
        (cache / "kernel.expand-1.py311.nbi").write_text("index")

    drop_stale_cache(str(kernel), ["blocks"])
    compile_()
    drop_stale_cache(str(kernel), ["blocks"])
    assert cached()  # nothing changed: kept
    (package / "maps.py").write_text("y = 4\n")
    drop_stale_cache(str(kernel), ["blocks"])
    assert not cached()  # a file of the folder changed: dropped
    compile_()
    (package / "queue.py").write_text("w = 5\n")  # a new file in it counts too
    drop_stale_cache(str(kernel), ["blocks"])
    assert not cached()
