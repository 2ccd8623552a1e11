"""Replacing a file atomically: the one way funes writes a file that someone may read meanwhile.

A temp file in the same folder is written, fsynced and renamed over the target, so a crash
leaves either the old content or the new, never a torn file. funes' own state, spool files and
the agents' configs an integration edits all go through :func:`atomic_write_text`.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from funes_core import portable

__all__ = [
    "PRIVATE_FILE_MODE",
    "atomic_write_bytes",
    "atomic_write_text",
    "missing_dirs",
    "snapshot_main",
    "synced_once",
]

#: The mode of files funes creates: only the owner may read what holds the memory or a config.
PRIVATE_FILE_MODE = 0o600


#: The files written inside :func:`synced_once` (``None``: outside it, each write is fsynced).
_UNSYNCED: ContextVar[list[Path] | None] = ContextVar("funes_unsynced_writes", default=None)


@contextlib.contextmanager
def synced_once() -> Iterator[None]:
    """Atomic writes inside this block skip their own fsync; they are made durable together at its end.

    For a bulk writer (an install converting thousands of sessions into the spool): the writes stay
    atomic (temp file, rename), and the block returns only once they are on disk
    (:func:`funes_core.portable.flush_to_disk`), so whatever the caller records after it (the
    install record that says those sessions were converted) never claims a file a power cut lost.
    """
    written: list[Path] = []
    token = _UNSYNCED.set(written)
    try:
        yield
    finally:
        _UNSYNCED.reset(token)
        if written:
            portable.flush_to_disk(written)


def atomic_write_text(
    path: Path, text: str, *, mode: int | None = PRIVATE_FILE_MODE, mtime: float | None = None
) -> None:
    """Write ``text`` to ``path`` (temp file in the same folder, fsync, rename); bytes as given.

    ``mode`` is the new file's permission bits; ``None`` keeps those of the file being replaced
    (a user's config keeps its mode), and a file that did not exist gets
    :data:`PRIVATE_FILE_MODE`. ``mtime``, when given, is stamped before the rename, so readers
    never see the new content with the old time. Line endings are written exactly as in ``text``.
    """
    atomic_write_bytes(path, text.encode("utf-8"), mode=mode, mtime=mtime)


def atomic_write_bytes(
    path: Path, data: bytes, *, mode: int | None = PRIVATE_FILE_MODE, mtime: float | None = None
) -> None:
    """:func:`atomic_write_text` for bytes: readers see the old file or the whole new one, never a part."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if mode is None:
        try:
            mode = stat.S_IMODE(path.stat().st_mode)
        except FileNotFoundError:
            mode = PRIVATE_FILE_MODE
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        portable.set_mode(fd, tmp, mode)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            unsynced = _UNSYNCED.get()
            if unsynced is None:
                os.fsync(fh.fileno())
            else:
                unsynced.append(path)
        if mtime is not None:
            os.utime(tmp, (mtime, mtime))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def missing_dirs(path: Path) -> list[Path]:
    """``path`` and those of its parents that do not exist yet, innermost first.

    For callers that create them one level at a time (outermost first) with a mode of their own:
    ``mkdir(parents=True)`` would give every parent the umask's mode.
    """
    missing: list[Path] = []
    probe = path
    while not probe.exists() and probe.parent != probe:
        missing.append(probe)
        probe = probe.parent
    return missing


def snapshot_main(path: Path, data: Any, argv: list[str]) -> int:
    """A checked-in snapshot's command: print ``data`` as its JSON, or write it to ``path`` (``--write``).

    The snapshots (the MCP handshake, the CLI fast path's verbs) are JSON with sorted keys, so a
    regenerated one differs from the file only where what it records changed.
    """
    import json
    import sys

    text = json.dumps(data, indent=1, ensure_ascii=False, sort_keys=True) + "\n"
    if argv == ["--write"]:
        path.write_text(text, encoding="utf-8")
        sys.stdout.write(f"wrote {path}\n")
    else:
        sys.stdout.write(text)
    return 0
