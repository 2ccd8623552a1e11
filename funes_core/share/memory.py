"""A ``--memory`` value resolved once: the local memory, a folder, or a remote the user named.

Every opener takes what :func:`resolve_memory` returns, so a value is parsed in one place: the
read handle keeps the :class:`MemoryLocation` it resolved and opens it later with
:func:`open_memory`, and ``status`` labels what it reports from the same location. It sits in the
sharing room because a name may be a remote (read through :mod:`funes_core.share.mirror`); the
store below it only ever opens folders on this machine.
"""

from __future__ import annotations

import os
import re
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from funes_core.home import Home
from funes_core.models.vectors import ModelStamp
from funes_core.store import NoIndexError, check_model, open_store

if TYPE_CHECKING:
    from funes_core.share.remotes import Remote
    from funes_core.store.lance import LanceStore

__all__ = ["MemoryLocation", "UnknownMemoryError", "open_memory", "resolve_memory"]


class UnknownMemoryError(NoIndexError):
    """A ``--memory`` value that names nothing funes may read (an unknown remote, a raw URI)."""


class MemoryLocation:
    """Where a memory lives: a local folder (holding ``chunks.lance``), or a configured remote.

    A remote on object storage is read through its local mirror (``uri`` is the mirror's folder,
    filled by :func:`funes_core.share.mirror.sync_mirror` when the store is opened); a folder
    remote is read in place.
    """

    def __init__(self, uri: str, label: str, *, is_default: bool, remote: Remote | None = None) -> None:
        self.uri = uri
        self.label = label
        self.is_default = is_default
        self.remote = remote

    @property
    def table_path(self) -> Path:
        return Path(self.uri) / "chunks.lance"

    def __repr__(self) -> str:
        return f"MemoryLocation({self.uri!r})"


#: A ``--memory`` value is at most this long: a name, or a folder's path (``PATH_MAX`` is 4,096).
MAX_MEMORY_CHARS = 4096


def _exists(raw: str) -> bool:
    """Whether a path exists; a name the OS cannot take (too long, a NUL) does not."""
    try:
        return Path(raw).exists()
    except (OSError, ValueError):
        return False


def resolve_memory(
    memory: str | os.PathLike[str] | MemoryLocation | None = None, *, home: Home | None = None
) -> MemoryLocation:
    """Resolve one ``--memory`` value: ``None``/``local`` is ``$FUNES_HOME/memory``; a configured
    remote's name is that remote; else a path (the memory folder or its ``chunks.lance``). A
    location already resolved comes back as it is, so a value is parsed once, however many openers
    it passes through.

    A raw object-store URI is refused: remotes are named once with ``funes remote add`` (with
    their options), and an agent may only name what the user configured.
    """
    if isinstance(memory, MemoryLocation):
        return memory
    raw = os.fspath(memory) if memory is not None else None
    if raw is None or raw in ("", "local"):
        path = (home or Home.resolve()).memory_dir
        return MemoryLocation(str(path), str(path), is_default=True)
    from funes_core.safetext import one_line, shorten

    shown = f"'{shorten(one_line(raw), 60)}'"  # the value is the caller's, maybe an agent's: escaped, cut
    if len(raw) > MAX_MEMORY_CHARS:
        raise UnknownMemoryError(
            raw[:60],
            f"bad memory {shown}: at most {MAX_MEMORY_CHARS:,} characters (local, a remote or a folder)",
        )
    if "://" in raw:
        if re.fullmatch(r"[A-Za-z0-9+.\-]+://[\w.\-/]{0,200}", raw):
            hint = f" (funes remote add NAME {raw}, then --memory NAME)"
        else:
            hint = ""
        raise UnknownMemoryError(raw, f"{shown}: name a remote instead of a URI{hint}")
    if "/" not in raw and "\\" not in raw and not raw.startswith((".", "~")):
        from funes_core.share.remotes import load_remotes

        home = home or Home.resolve()
        remotes = load_remotes(home)
        if raw in remotes:
            remote = remotes[raw]
            if remote.is_folder:
                return MemoryLocation(str(remote.folder), remote.name, is_default=False, remote=remote)
            from funes_core.share.mirror import mirror_dir

            return MemoryLocation(str(mirror_dir(home, raw)), remote.name, is_default=False, remote=remote)
        if not _exists(raw):
            known = ", ".join(["local", *sorted(remotes)])
            raise UnknownMemoryError(
                raw, f"unknown memory {shown}: use one of {known}, or a path to a memory folder"
            )
    path = Path(raw).expanduser().absolute()
    if path.name == "chunks.lance":
        path = path.parent
    return MemoryLocation(str(path), str(path), is_default=False)


def open_memory(
    memory: str | os.PathLike[str] | MemoryLocation | None = None,
    *,
    home: Home | None = None,
    create: bool = False,
    expect: ModelStamp | None = None,
    read_consistency_interval: timedelta | None = timedelta(0),
) -> LanceStore:
    """Open the memory a ``--memory`` value names (or a location already resolved from one).

    A remote is read through its mirror (or in place, for a folder remote); everything else is a
    memory on this machine, opened by :func:`funes_core.store.open_store` with the same arguments.
    """
    location = resolve_memory(memory, home=home)
    if location.remote is not None:
        return _open_remote(location, home=home or Home.resolve(), expect=expect)
    return open_store(
        None if location.is_default else location.uri,
        home=home,
        create=create,
        expect=expect,
        read_consistency_interval=read_consistency_interval,
    )


def _open_remote(location: MemoryLocation, *, home: Home, expect: ModelStamp | None) -> LanceStore:
    """A remote for reading: its mirror brought up to date (or the folder itself), checked."""
    from funes_core.share.mirror import Failure, RemoteError, classify, sync_mirror
    from funes_core.store.lance import LanceStore, NotFunesMemoryError

    remote = location.remote
    assert remote is not None
    taint = "external" if remote.taint == "external" else None
    if remote.scheme == "hf":
        # The Hugging Face Hub: read in place by LanceDB (no mirror; untested here, unreachable).
        # It is reached now, so that an unreachable Hub is one line (not a Rust backtrace from the
        # first query) and a verb that can go on without it (local,hf) does.
        from funes_core.share.mirror import lance_options

        try:
            hub = LanceStore(
                remote.uri, label=remote.name, taint=taint, storage_options=lance_options(remote)
            )
            found = hub.exists()
        except Exception as exc:  # lancedb raises ValueError/OSError/RuntimeError with Rust text
            raise classify(remote.name, exc) from None
        if not found:
            raise RemoteError(
                remote.name, Failure.NOT_FUNES, f"remote {remote.name}: {remote.uri} is not a funes memory"
            )
        if expect is not None:
            check_model(hub, expect)
        return hub
    if not remote.is_folder:
        sync_mirror(remote, home)
    elif not location.table_path.is_dir():
        raise RemoteError(
            remote.name, Failure.MISSING, f"remote {remote.name}: no memory at {remote.uri} yet"
        )
    store = LanceStore(location.uri, label=remote.name, taint=taint)
    if not store.exists():
        raise RemoteError(
            remote.name, Failure.NOT_FUNES, f"remote {remote.name}: {remote.uri} is not a funes memory"
        )
    try:
        store.check_funes_schema()
    except NotFunesMemoryError:
        raise RemoteError(
            remote.name, Failure.NOT_FUNES, f"remote {remote.name}: {remote.uri} is not a funes memory"
        ) from None
    if expect is not None:
        check_model(store, expect)
    return store
