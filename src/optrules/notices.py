"""Warnings that point at the user's line.

``warnings.warn(..., stacklevel=k)`` counts frames from the library's own line, but how many library
frames lie between it and the user's call depends on the path (an estimator's ``fit``, a binarizer
called by it, scikit-learn's output wrapper around ``fit_transform``, a thread): a fixed ``k`` named a
line inside optrules or scikit-learn. :func:`warn` walks up to the first frame outside the packages below
(Python 3.12's ``skip_file_prefixes``, on 3.11)."""

from __future__ import annotations

import sys
import warnings

#: modules whose frames are never the user's line: ours, and the libraries we are called through
LIBRARY_MODULES = ("optrules", "sklearn", "pandas", "numpy", "joblib", "threading", "concurrent")


def _is_library(module: str) -> bool:
    return any(module == name or module.startswith(name + ".") for name in LIBRARY_MODULES)


def warn(message: str, category: type[Warning] = UserWarning) -> None:
    """``warnings.warn(message, category)``, attributed to the first caller outside :data:`LIBRARY_MODULES`
    (to the library's line when there is none: a fit in a thread of ours, the web app's)."""
    frame, level = sys._getframe(1), 1
    while frame is not None and _is_library(frame.f_globals.get("__name__", "")):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level + 1 if frame is not None else 2)
