"""Chunk stores: the :class:`Store` protocol, the LanceDB store (default) and the in-memory reference.

Open the memory with :func:`open_store`; it resolves ``--memory`` values, refuses a memory that
does not exist (with the message users see) and, given the embedder's stamp, one built with
another model. This package's ``__init__`` imports nothing heavy: lancedb loads only when a
:class:`~funes_core.store.lance.LanceStore` is actually constructed.
"""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from funes_core.home import Home, ensure_private_dir
from funes_core.store.base import (
    Filters,
    Hit,
    ModelMismatchError,
    ModelStamp,
    Row,
    Store,
    StoreStats,
    Vector,
)

if TYPE_CHECKING:
    from funes_core.store.lance import LanceStore

__all__ = [
    "NO_INDEX_MESSAGE",
    "Filters",
    "Hit",
    "MemoryLocation",
    "ModelMismatchError",
    "ModelStamp",
    "NoIndexError",
    "Row",
    "Store",
    "StoreStats",
    "Vector",
    "check_model",
    "open_store",
    "resolve_memory",
]

NO_INDEX_MESSAGE = (
    "no index yet — run `funes integrations install <agent>` to build one (or `funes index PATH`), "
    "then recall your own history."
)


class NoIndexError(FileNotFoundError):
    """The memory to read does not exist; ``str()`` is the one line to show the user."""

    def __init__(self, label: str, message: str) -> None:
        self.label = label
        super().__init__(message)

    def __str__(self) -> str:
        return str(self.args[0])


class MemoryLocation:
    """Where a memory lives: a local folder (holding ``chunks.lance``) or an object-store URI."""

    def __init__(self, uri: str, label: str, *, is_default: bool) -> None:
        self.uri = uri
        self.label = label
        self.is_default = is_default

    @property
    def is_local(self) -> bool:
        return "://" not in self.uri

    @property
    def table_path(self) -> Path:
        return Path(self.uri) / "chunks.lance"

    def exists(self) -> bool | None:
        """For a local folder, whether the table exists (cheap, no lancedb); ``None`` when unknown."""
        return self.table_path.is_dir() if self.is_local else None

    def __repr__(self) -> str:
        return f"MemoryLocation({self.uri!r})"


def resolve_memory(
    memory: str | os.PathLike[str] | None = None, *, home: Home | None = None
) -> MemoryLocation:
    """Resolve a ``--memory`` value: ``None``/``local`` is ``$FUNES_HOME/memory``; a URI is kept; else a path.

    A path may name the memory folder or the ``chunks.lance`` table inside it.
    """
    raw = os.fspath(memory) if memory is not None else None
    if raw is None or raw in ("", "local"):
        path = (home or Home.resolve()).memory_dir
        return MemoryLocation(str(path), str(path), is_default=True)
    if "://" in raw:
        return MemoryLocation(raw, raw, is_default=False)
    path = Path(raw).expanduser().absolute()
    if path.name == "chunks.lance":
        path = path.parent
    return MemoryLocation(str(path), str(path), is_default=False)


def check_model(store: Store, expected: ModelStamp) -> None:
    """Raise :class:`ModelMismatchError` if the store was built with another model than ``expected``."""
    stored = store.model_stamp()
    if stored is not None and stored != expected:
        raise ModelMismatchError(store.label, stored, expected)


def open_store(
    memory: str | os.PathLike[str] | None = None,
    *,
    home: Home | None = None,
    create: bool = False,
    expect: ModelStamp | None = None,
    read_consistency_interval: timedelta | None = timedelta(0),
) -> LanceStore:
    """Open the memory for reading (default) or, with ``create=True``, for the one writer.

    Readers get ``NoIndexError`` when there is no memory (the default one says how to build it)
    and, when ``expect`` is given, ``ModelMismatchError`` for a memory built with another model.
    Readers see a concurrent writer's commits on every call (``read_consistency_interval=0``).
    """
    location = resolve_memory(memory, home=home)
    if not create and location.exists() is False:
        message = NO_INDEX_MESSAGE if location.is_default else f"no index found at {location.label}"
        raise NoIndexError(location.label, message)
    if create and location.is_local:
        if location.is_default:
            (home or Home.resolve()).ensure()
        ensure_private_dir(Path(location.uri))
    from funes_core.store.lance import LanceStore

    store = LanceStore(
        location.uri, label=location.label, read_consistency_interval=read_consistency_interval
    )
    if not create and not store.exists():
        message = NO_INDEX_MESSAGE if location.is_default else f"no index found at {location.label}"
        raise NoIndexError(location.label, message)
    if expect is not None:
        check_model(store, expect)
    return store
