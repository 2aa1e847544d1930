"""Module-level lazy exports (PEP 562), so that importing a package does not import pandas or sklearn,
and modules deferred until first used."""

import sys
import types
from importlib import import_module


def lazy_exports(package: str, exports: dict[str, str]):
    """A module ``__getattr__`` that imports ``exports[name]`` (a module path) on first use of ``name``."""

    def __getattr__(name):
        if name in exports:
            return getattr(import_module(exports[name]), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__


class _DeferredModule(types.ModuleType):
    """Stands in ``sys.modules`` for a module not imported yet; the first attribute asked of it imports
    the real module (which then replaces it there) and answers from it. ``__spec__`` is None, so the
    import machinery's own checks find it without importing anything."""

    def __getattr__(self, name):
        if sys.modules.get(self.__name__) is self:
            del sys.modules[self.__name__]
        real = import_module(self.__name__)
        self.__dict__.update(real.__dict__)  # references taken before the import keep working
        return getattr(real, name)


def defer_import(name: str) -> None:
    """Import the module ``name`` only when something first uses one of its attributes, not when a
    library merely imports it; does nothing if it is imported already."""
    if name not in sys.modules:
        sys.modules[name] = _DeferredModule(name)
