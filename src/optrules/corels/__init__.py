"""Certifiably optimal rule lists (Angelino et al., JMLR 2018)."""

from __future__ import annotations

from .._lazy import lazy_exports

# the search and its compiled kernels (numba) load on first use: the command line reads this package's
# family description for its help without them
__getattr__ = lazy_exports(__name__, {
    "Ablation": "optrules.corels.search",
    "SearchResult": "optrules.corels.search",
    "search": "optrules.corels.search",
    "Problem": "optrules.corels.problem",
})


def fit_reference(out_path, label_path, minor_path=None, regularization: float = 0.01, **search_options):
    """Run the search on the C++ reference's ``.out``/``.label``(/``.minor``) files directly.

    Returns ``(rule_list, certificate)``; the antecedents keep the names of the ``.out`` file, so the
    objective can be compared with the reference's exactly.
    """
    from ..data.formats import read_reference
    from .prefix import rule_list_from_prefix
    from .problem import Problem
    from .search import search

    reference = read_reference(out_path, label_path, minor_path)
    problem = Problem.from_reference(reference, regularization)
    result = search(problem, **search_options)
    classes = [name.split(":")[-1] if ":" in name else name for name in reference.label_names]
    rule_list = rule_list_from_prefix(reference.captures, reference.y, result.solution, problem.conditions, classes)
    return rule_list, result.certificate


__all__ = ["Ablation", "Problem", "SearchResult", "fit_reference", "search"]
