"""``funes index --rebuild``: the memory moved aside, its rows copied for a new model, and settled.

Apart from the engine because a rebuild is about two memory folders (the old one kept intact until
the new one holds every turn it held), not about reading sources into one.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from funes_core.home import Home, State

if TYPE_CHECKING:
    from funes_core.models.embed import Embedder

__all__ = ["copy_rows", "rebuild_memory", "settle_rebuild"]


def rebuild_memory(home: Home) -> Path | None:
    """Move the current memory aside (atomic rename) and forget the index state; returns where it went.

    The old memory stays intact at ``memory.old-<UTC time>`` while the new one is built, so a
    rebuild that fails can be undone by renaming it back; :func:`settle_rebuild` deletes it once
    the new memory holds every turn it held.
    """
    # State first: a crash between the two steps then leaves a full state-less memory (re-read,
    # deduplicated) rather than a fresh memory whose state claims files are already stored.
    if home.state_path.exists():
        State().save(home.state_path)
    old: Path | None = None
    if home.memory_dir.exists():
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        old = home.root / f"memory.old-{stamp}"
        n = 1
        while old.exists():
            n += 1
            old = home.root / f"memory.old-{stamp}-{n}"
        os.rename(home.memory_dir, old)
    return old


def settle_rebuild(home: Home, old: Path, say: Callable[[str], None]) -> Path | None:
    """After a rebuild ran to its end: delete the old memory if nothing would be lost, else keep it.

    Why not always delete: spool files are deleted once stored, and agents delete old transcripts,
    so the old memory may be the only copy of turns no source supplies any more; deleting it would
    lose them silently. Why not always keep: a copy left in ``$FUNES_HOME`` keeps every passage
    (and any secret) the user meant to rebuild away. So the old memory is deleted exactly when the
    new one holds every turn it held (compared by session and turn id; owed embeddings do not
    matter), and otherwise kept with a note that says how much only it holds. Returns where it was
    kept, or ``None`` once deleted.
    """
    import shutil

    missing = _stored_turns(old) - _stored_turns(home.memory_dir)
    if missing:
        sessions = len({sid for sid, _turn in missing})
        turns = f"{len(missing)} of its turns" if len(missing) != 1 else "1 of its turns"
        in_sessions = f"{sessions} session" + ("" if sessions == 1 else "s")
        say(
            f"note: kept the old memory at {old}: {turns} ({in_sessions}) are not in the new one "
            "(their transcripts are gone, or the run stopped early); delete it once you no longer need them"
        )
        return old
    try:
        shutil.rmtree(old)
    except OSError as exc:
        say(f"note: could not delete the old memory at {old}: {exc.strerror or exc}; delete it by hand")
        return old
    say("note: rebuilt; deleted the old memory (the new one holds every turn it held)")
    return None


def _stored_turns(memory_dir: Path) -> set[tuple[str, str]]:
    """(session id, turn uuid) of every turn a memory folder holds (two columns read, no text)."""
    from funes_core.store.lance import LanceStore

    store = LanceStore(memory_dir, read_consistency_interval=None)
    if not store.exists():
        return set()
    table = store.arrow_rows(columns=("session_id", "turn_uuid"))
    return set(
        zip(table.column("session_id").to_pylist(), table.column("turn_uuid").to_pylist(), strict=True)
    )


_COPY_BATCH = 10_000


def copy_rows(old_memory: Path, home: Home, embedder: Embedder) -> int:
    """Copy every chunk of the memory moved aside into the new one, text only: re-embedding is owed.

    Used by ``funes index --rebuild --model NAME``: the text is searchable by BM25 at once, and the
    new model's vectors are computed by the background worker (or by this run, with ``--wait`` or
    ``IndexOptions(embed="here")``).
    """
    from funes_core.store import open_store

    old = open_store(old_memory, home=home, read_consistency_interval=None)
    rows = [row.with_vector(None) for row in old.scan()]
    if not rows:
        return 0
    new = open_store(home=home, create=True, read_consistency_interval=None)
    new.stamp_model(embedder.stamp)
    for start in range(0, len(rows), _COPY_BATCH):
        new.add(rows[start : start + _COPY_BATCH])
    return len(rows)
