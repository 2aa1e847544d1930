"""Files we write never lose what they replace.

Every file optrules writes (a model, an export, a report, a figure, a table of predictions, benchmark
rows) goes through :func:`replacing`: the new content is written to a temporary file in the same
folder, flushed and synced to disk, then renamed over the target in one step (``os.replace``, atomic on
POSIX and Windows within one file system). What must hold: a write that fails part-way (disk full, a
file-size limit, a writer that raises, Ctrl-C) leaves the previous file byte for byte and no temporary
file behind; a write that succeeds leaves the whole new file, with the permissions the old one had (a
new file gets the usual ones: 0666 less the umask).

A target that exists and is not a regular file (``/dev/stdout``, a named pipe) is written directly:
there is nothing to replace, and renaming over it would be wrong.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path


def _fsync_folder(folder: Path) -> None:
    """Make the rename itself durable (POSIX; elsewhere a folder cannot be opened, and need not be)."""
    try:
        descriptor = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)


def _temporary_beside(target: Path) -> Path:
    """A new, empty file beside ``target`` (same folder, same suffix, so that writers that read the format
    from the name still can), created exclusively with the permissions a new file would get."""
    for _ in range(100):
        candidate = target.with_name(f".{target.name}.{secrets.token_hex(4)}.part{target.suffix}")
        try:
            os.close(os.open(candidate, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
        except FileExistsError:
            continue
        return candidate
    raise FileExistsError(f"could not create a temporary file beside {target}")  # pragma: no cover


@contextlib.contextmanager
def replacing(path):
    """Yield a temporary path to write the new content of ``path`` to; once the block ends without an
    error, the temporary file is synced and renamed over ``path``; on any error (Ctrl-C included) it is
    removed and ``path`` is left as it was."""
    target = Path(os.path.realpath(path))  # (through a symbolic link: the file it names is replaced)
    try:
        existing = os.stat(target)
    except FileNotFoundError:
        existing = None
    if existing is not None and not stat.S_ISREG(existing.st_mode):
        yield target
        return
    temporary = _temporary_beside(target)
    try:
        yield temporary
        with open(temporary, "rb+") as handle:
            os.fsync(handle.fileno())
        if existing is not None:
            os.chmod(temporary, stat.S_IMODE(existing.st_mode))
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    _fsync_folder(target.parent)


def write_text(path, text: str, encoding: str = "utf-8") -> None:
    """Write ``text`` to ``path`` through :func:`replacing`."""
    with replacing(path) as temporary, open(temporary, "w", encoding=encoding, newline="") as handle:
        handle.write(text)
