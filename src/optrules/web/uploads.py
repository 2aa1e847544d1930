"""Uploaded files on disk: streamed in under a size limit, kept in a private folder under a total cap.

A request body is read chunk by chunk; the limit is checked as the bytes arrive, so a chunked upload
without ``Content-Length`` is refused (413) once it passes the limit, not after it has been read
whole. The multipart body is parsed as it streams (``python-multipart``) and the file part goes
straight to disk, into a folder only this user can read (``tempfile.mkdtemp``: mode 0700), which is
deleted when the server stops (and when the interpreter exits, should the server not stop cleanly).
The folder holds at most ``max_total_bytes``: when a new upload needs room the oldest uploads that no
queued or running run needs are deleted; when none can go, the upload is refused.
"""

from __future__ import annotations

import itertools
import os
import shutil
import tempfile
import threading
import weakref
from pathlib import Path
from typing import AsyncIterator, Callable, Iterable

from python_multipart.multipart import FormParser, parse_options_header


class UploadRefused(ValueError):
    """An upload the server will not take; ``status`` is the HTTP status to answer with."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


def _mb(nbytes: float) -> str:
    return f"{nbytes / 2**20:.1f} MB"


class UploadStore:
    """Uploaded files by key (``upload-1``, ...), oldest first, with their sizes."""

    def __init__(self, max_file_bytes: int, max_total_bytes: int, max_files: int = 20):
        if max_total_bytes < max_file_bytes:
            raise ValueError("the total upload cap must be at least the size limit of one upload")
        self.max_file_bytes = int(max_file_bytes)
        self.max_total_bytes = int(max_total_bytes)
        self.max_files = int(max_files)
        self.folder = Path(tempfile.mkdtemp(prefix="optrules-uploads-"))
        self._cleanup = weakref.finalize(self, shutil.rmtree, str(self.folder), True)
        self._sizes: dict[str, int] = {}
        self._incoming: dict[int, int] = {}  # bytes of uploads still streaming, by their number
        self._numbers = itertools.count(1)
        self._lock = threading.RLock()

    # -- what is kept ------------------------------------------------------------------------------
    def __contains__(self, key: str) -> bool:
        return key in self._sizes

    def keys(self) -> list[str]:
        return list(self._sizes)

    def path(self, key: str) -> Path:
        return self.folder / f"{key}.csv"

    @property
    def total_bytes(self) -> int:
        return sum(self._sizes.values()) + sum(self._incoming.values())

    def remove(self, key: str) -> None:
        with self._lock:
            self._sizes.pop(key, None)
        self.path(key).unlink(missing_ok=True)

    def close(self) -> None:
        """Delete the folder and everything in it."""
        self._cleanup()

    def _make_room(self, needed: int, pinned: Callable[[], Iterable[str]], on_remove: Callable[[str], None]) -> bool:
        """Delete the oldest uploads not in ``pinned()`` until ``needed`` more bytes fit; False if they cannot."""
        if self.total_bytes + needed <= self.max_total_bytes:
            return True
        pinned = set(pinned())
        while self.total_bytes + needed > self.max_total_bytes:
            old = next((key for key in self._sizes if key not in pinned), None)
            if old is None:
                return False
            self.remove(old)
            on_remove(old)
        return True

    # -- receiving ---------------------------------------------------------------------------------
    async def receive(self, content_type: str, chunks: AsyncIterator[bytes], pinned: Callable[[], Iterable[str]],
                      on_remove: Callable[[str], None]) -> tuple[str, str, int]:
        """Stream a ``multipart/form-data`` body (field ``file``) to disk: ``(key, file name, size)``.

        ``pinned()`` names the uploads that must stay (runs need them); ``on_remove(key)`` is told of
        each old upload deleted to make room. Raises :class:`UploadRefused` (413 when too large)."""
        kind, options = parse_options_header(content_type)
        if kind != b"multipart/form-data" or b"boundary" not in options:
            raise UploadRefused("upload the file as multipart/form-data (form field 'file')", 415)
        number = next(self._numbers)
        partial = self.folder / f"incoming-{number}"
        partial.mkdir()
        files = []
        parser = FormParser("multipart/form-data", on_field=None, on_file=files.append,
                            boundary=options[b"boundary"],
                            config={"UPLOAD_DIR": str(partial), "UPLOAD_DELETE_TMP": False, "MAX_MEMORY_FILE_SIZE": 0})
        received = 0
        try:
            async for chunk in chunks:
                received += len(chunk)
                with self._lock:
                    self._incoming[number] = received
                    if received > self.max_file_bytes + 64 * 1024:  # the form's own headers are small
                        raise UploadRefused(f"the upload passed {_mb(received)}, over the limit of "
                                            f"{_mb(self.max_file_bytes)} (start the server with a larger "
                                            "--max-upload-mb)", 413)
                    if not self._make_room(0, pinned, on_remove):
                        raise UploadRefused(f"the server keeps at most {_mb(self.max_total_bytes)} of uploads and "
                                            "the runs waiting or running need them: wait for them to finish, or "
                                            "start the server with a larger --max-upload-total-mb", 413)
                try:
                    parser.write(chunk)
                except Exception as error:  # python-multipart's errors: a malformed body
                    raise UploadRefused(f"the upload is not a valid multipart form: {error}") from None
            parser.finalize()
            chosen = next((f for f in files if f.field_name == b"file"), None)
            if chosen is None:
                raise UploadRefused("no file in the upload (form field 'file')")
            if chosen.in_memory:  # an empty file never reached the disk
                chosen.flush_to_disk()
            chosen.close()
            size = os.path.getsize(chosen.actual_file_name)
            if size > self.max_file_bytes:
                raise UploadRefused(f"the file is {_mb(size)}, over the limit of {_mb(self.max_file_bytes)} "
                                    "(start the server with a larger --max-upload-mb)", 413)
            with self._lock:
                key = f"upload-{number}"
                os.replace(chosen.actual_file_name, self.path(key))
                self._sizes[key] = size
                if len(self._sizes) > self.max_files:
                    keep = set(pinned()) | {key}
                    for old in [k for k in self._sizes if k not in keep][: len(self._sizes) - self.max_files]:
                        self.remove(old)
                        on_remove(old)
            name = os.path.basename(chosen.file_name.decode("utf-8", "replace")) if chosen.file_name else "upload.csv"
            return key, name or "upload.csv", size
        finally:
            for file in files:
                file.close()
            with self._lock:
                self._incoming.pop(number, None)
            shutil.rmtree(partial, ignore_errors=True)
