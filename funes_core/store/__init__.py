"""Chunk stores: the :class:`Store` protocol, the LanceDB store (default) and the in-memory reference.

Open a memory on this machine with :func:`open_store`; it refuses a memory that does not exist
(with the message users see) and, given the embedder's stamp, one built with another model. A
``--memory`` value that may name a remote is resolved in :mod:`funes_core.share.memory`. This
package's ``__init__`` imports nothing heavy: lancedb loads only when a
:class:`~funes_core.store.lance.LanceStore` is actually constructed.
"""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from funes_core.home import Home, ensure_private_dir
from funes_core.models.vectors import ModelMismatchError, ModelStamp, Vector
from funes_core.store.base import Filters, Hit, Row, Store, StoreStats

if TYPE_CHECKING:
    from funes_core.store.lance import LanceStore

__all__ = [
    "NO_INDEX_MESSAGE",
    "Filters",
    "Hit",
    "ModelMismatchError",
    "ModelStamp",
    "NoIndexError",
    "Row",
    "Store",
    "StoreStats",
    "Vector",
    "check_model",
    "default_memory_dir",
    "open_store",
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


def check_model(store: Store, expected: ModelStamp) -> None:
    """Raise :class:`ModelMismatchError` if the store was built with another model than ``expected``."""
    stored = store.model_stamp()
    if stored is not None and stored != expected:
        raise ModelMismatchError(store.label, stored, expected)


def _shown(label: str) -> str:
    """A memory's label as a message may quote it: one line, cut (it may be an agent's value)."""
    from funes_core.safetext import one_line, shorten

    return shorten(one_line(label), 200)


def _has_table(folder: Path) -> bool:
    """Whether ``folder`` holds a table; a path the OS cannot take (too long, a NUL) does not."""
    try:
        return (folder / "chunks.lance").is_dir()
    except (OSError, ValueError):
        return False


def default_memory_dir(home: Home | None = None) -> Path:
    """Where the local memory lives: ``$FUNES_HOME/memory``."""
    return (home or Home.resolve()).memory_dir


def open_store(
    memory: str | os.PathLike[str] | None = None,
    *,
    home: Home | None = None,
    create: bool = False,
    expect: ModelStamp | None = None,
    read_consistency_interval: timedelta | None = timedelta(0),
) -> LanceStore:
    """Open a memory on this machine for reading (default) or, with ``create=True``, for the one writer.

    ``memory`` is ``None`` (or ``local``) for ``$FUNES_HOME/memory``, else a memory folder or its
    ``chunks.lance``. A remote's *name* is resolved one floor up, by
    :func:`funes_core.share.memory.open_memory`, which comes back here for what is local.

    Readers get ``NoIndexError`` when there is no memory (the default one says how to build it)
    and, when ``expect`` is given, ``ModelMismatchError`` for a memory built with another model.
    Readers see a concurrent writer's commits on every call (``read_consistency_interval=0``).
    """
    raw = os.fspath(memory) if memory is not None else None
    is_default = raw is None or raw in ("", "local")
    if is_default:
        folder = default_memory_dir(home)
    else:
        assert raw is not None
        folder = Path(raw).expanduser().absolute()
        if folder.name == "chunks.lance":
            folder = folder.parent
    label = str(folder)
    if not create and not _has_table(folder):
        raise NoIndexError(label, NO_INDEX_MESSAGE if is_default else f"no index found at {_shown(label)}")
    if create:
        if is_default:
            (home or Home.resolve()).ensure()
        ensure_private_dir(folder)
    from funes_core.store.lance import LanceStore

    denied = None
    if create and is_default:
        # Purged sessions and chunks must not come back when a transcript is converted again.
        from funes_core.store.purgelog import denied as purged

        denied = purged(home or Home.resolve()) or None
    store = LanceStore(
        str(folder), label=label, read_consistency_interval=read_consistency_interval, denied=denied
    )
    if not create and not store.exists():
        raise NoIndexError(label, NO_INDEX_MESSAGE if is_default else f"no index found at {_shown(label)}")
    if expect is not None:
        check_model(store, expect)
    return store
