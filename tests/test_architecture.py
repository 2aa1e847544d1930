"""docs/architecture.md's promises, as tests: the search cores load neither pandas nor scikit-learn, no
package of optrules imports another that imports it back, no family package imports a sibling, and the
front ends name no family (they read the registry)."""

import ast
import collections
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "src" / "optrules"
#: the modules that must run a certified search without the data layer's heavy dependencies
SEARCH_CORES = ("optrules.corels.search", "optrules.frl.search", "optrules.bnb", "optrules.fairness.search")
#: the modules a user reaches the families through, which must read the registry, never a family's name
FRONT_ENDS = (*(f"cli/{path.name}" for path in sorted((ROOT / "cli").glob("*.py"))), "report.py", "export.py",
              "web/app.py", "web/runs.py", "web/uploads.py", "web/static/app.js")


@pytest.mark.parametrize("module", SEARCH_CORES)
def test_a_search_core_loads_neither_pandas_nor_scikit_learn(module):
    code = (f"import sys, {module}; heavy = [n for n in ('pandas', 'sklearn') if n in sys.modules]; "
            "print(','.join(heavy))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert loaded == "", f"importing {module} loads {loaded}"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """The optrules modules ``path`` imports, at its top or inside functions (lazily), leaving out what runs
    only as a script (``if __name__ == "__main__":``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    scripts = [node for node in tree.body if isinstance(node, ast.If) and "__main__" in ast.unparse(node.test)]
    skipped = {id(inner) for block in scripts for inner in ast.walk(block)}
    package = _module_name(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    found = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            found.add(".".join(base + ([node.module] if node.module else [])))
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name.startswith("optrules")}


def _package_graph() -> dict[str, set[str]]:
    """Which of optrules's packages and top modules (``optrules.corels``, ``optrules.cli``) import which."""
    def unit(name: str) -> str:
        return ".".join(name.split(".")[:2])

    graph = collections.defaultdict(set)
    for path in ROOT.rglob("*.py"):
        if path.name == "__main__.py":  # a script (python -m), as an `if __name__ == "__main__"` block
            continue
        source = unit(_module_name(path))
        for target in _imports(path):
            if unit(target) not in (source, "optrules"):
                graph[source].add(unit(target))
    return graph


def test_no_package_imports_one_that_imports_it_back():
    graph = _package_graph()

    def reaches(start: str, goal: str) -> bool:
        seen, todo = set(), [start]
        while todo:
            node = todo.pop()
            if node == goal:
                return True
            if node not in seen:
                seen.add(node)
                todo.extend(graph.get(node, ()))
        return False

    cycles = sorted((a, b) for a in graph for b in graph[a] if a < b and reaches(b, a))
    assert not cycles, f"packages importing each other (directly or through others): {cycles}"


def test_no_family_package_imports_a_sibling():
    from optrules.families import FAMILY_MODULES

    families = {".".join(module.split(".")[:2]) for module in FAMILY_MODULES}
    graph = _package_graph()
    crossing = sorted((a, b) for a in families for b in graph.get(a, ()) if b in families)
    assert not crossing, f"family packages importing a sibling: {crossing} (shared code goes a layer down)"


@pytest.mark.parametrize("front_end", FRONT_ENDS)
def test_a_front_end_names_no_family(front_end):
    from optrules.families import families

    text = (ROOT / front_end).read_text(encoding="utf-8")
    named = sorted({name for name in families() if re.search(rf"""["']{name}["']|--model {name}\b""", text)})
    assert not named, f"{front_end} names the families {named}: read the registry (optrules.families) instead"


def test_the_benchmarks_page_stays_a_summary():
    """BENCHMARKS.md holds the headlines; every table in full lives in its history file beside the scripts."""
    page = ROOT.parent.parent / "BENCHMARKS.md"
    lines = page.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 300, f"BENCHMARKS.md has {len(lines)} lines: move tables to benchmarks/history/"
    history = ROOT.parent.parent / "benchmarks" / "history"
    for name in re.findall(r"benchmarks/history/([\w.-]+\.md)", "\n".join(lines)):
        assert (history / name).exists(), f"BENCHMARKS.md links to a missing history file {name}"


def test_the_linter_is_clean():
    """ruff, configured in pyproject.toml (pyflakes, pycodestyle, import order), finds nothing."""
    ruff = Path(sys.executable).with_name("ruff")
    if not ruff.exists():
        pytest.skip("ruff is not installed (make test installs it with the test extra)")
    project = ROOT.parent.parent
    found = subprocess.run([str(ruff), "check", "--no-cache", "src", "tests", "benchmarks"], cwd=project,
                           capture_output=True, text=True)
    assert found.returncode == 0, found.stdout[-3000:] + found.stderr[-1000:]
