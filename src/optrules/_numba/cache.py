"""numba's on-disk cache, dropped when a file a module inlines from changed."""

from __future__ import annotations

import hashlib
from pathlib import Path


def _sources(path: Path) -> list[Path]:
    """A file, or a folder's Python files (sorted: one digest on every machine)."""
    return sorted(path.glob("*.py")) if path.is_dir() else [path]


def drop_stale_cache(module_file: str, dependencies: list[str]) -> None:
    """numba's on-disk cache of a module's functions notices edits to that file only, not to functions
    it inlines from other files: drop the module's cache when one of ``dependencies`` (paths relative
    to the module: files, or folders meaning every Python file in them, ``"."`` the module's own package)
    changed since the cache was written."""
    try:
        here = Path(module_file).resolve()
        cache_dir = here.parent / "__pycache__"
        files = [f for d in dependencies for f in _sources((here.parent / d).resolve())]
        digest = hashlib.sha256(b"".join(f.read_bytes() for f in files)).hexdigest()
        stamp = cache_dir / f"{here.stem}.dependencies-sha256"
        if stamp.exists() and stamp.read_text() == digest:
            return
        for stale in cache_dir.glob(f"{here.stem}.*.nb[ic]"):
            stale.unlink(missing_ok=True)  # (another process may be dropping it too)
        cache_dir.mkdir(exist_ok=True)
        from ..files import write_text

        write_text(stamp, digest)  # whole or not at all: a process reading it half-written would drop the cache
    except OSError:  # read-only install: the cache cannot be stale relative to files nobody edits
        pass
