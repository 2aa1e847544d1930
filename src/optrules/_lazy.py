"""Module-level lazy exports (PEP 562), so that importing a package does not import pandas or sklearn."""

from importlib import import_module


def lazy_exports(package: str, exports: dict[str, str]):
    """A module ``__getattr__`` that imports ``exports[name]`` (a module path) on first use of ``name``."""

    def __getattr__(name):
        if name in exports:
            return getattr(import_module(exports[name]), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__
