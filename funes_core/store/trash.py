"""The trash: a restorable export of what purge and scrub remove, kept for a week.

Once an agent has deleted its old transcripts the memory is the only copy of them, so a removal
that took more than meant must be undoable. Before purge or scrub rewrites the memory, the rows it
removes (whole, vectors included) are written to ``$FUNES_HOME/trash/<event>.arrow`` (an Arrow IPC
file, mode 0600, folder 0700); the file's schema metadata names the purge log event, the operation,
when, and the embedding model the vectors belong to. ``funes purge --undo`` puts them back.

Entries older than :data:`KEEP_DAYS` days are deleted by the next purge, scrub or index run
(:func:`prune`). A privacy purge that must leave no bytes behind says ``--no-trash`` and writes no
entry at all.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow as pa

    from funes_core.home import Home
    from funes_core.models.vectors import ModelStamp

__all__ = ["KEEP_DAYS", "TrashEntry", "entries", "load", "prune", "trash_dir", "write_entry"]

KEEP_DAYS = 7
_META_KEY = b"funes_trash"
_SUFFIX = ".arrow"


def trash_dir(home: Home) -> Path:
    return home.root / "trash"


@dataclass(frozen=True, slots=True)
class TrashEntry:
    """One entry: which purge log event removed these rows, and what they were embedded with."""

    event: str
    at: str
    op: str
    by: str
    rows: int
    model: str | None
    dim: int | None
    path: Path

    def age_days(self, now: float | None = None) -> float:
        return ((now or time.time()) - self.path.stat().st_mtime) / 86400


def write_entry(
    home: Home,
    *,
    event: str,
    at: str,
    op: str,
    by: str,
    rows: pa.Table,
    stamp: ModelStamp | None,
) -> Path:
    """Write ``rows`` as one entry (temp file, fsync, rename: an entry is whole or absent)."""
    import pyarrow as pa

    from funes_core import portable
    from funes_core.home import FILE_MODE, ensure_private_dir

    folder = trash_dir(home)
    ensure_private_dir(folder)
    meta = {
        "event": event,
        "at": at,
        "op": op,
        "by": by,
        "rows": rows.num_rows,
        "model": stamp.model if stamp else None,
        "dim": stamp.dim if stamp else None,
    }
    schema = rows.schema.with_metadata({**(rows.schema.metadata or {}), _META_KEY: json.dumps(meta).encode()})
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".entry-", suffix=".tmp")
    try:
        portable.set_mode(fd, tmp, FILE_MODE)
        with os.fdopen(fd, "wb") as fh:
            sink = pa.PythonFile(fh, mode="w")
            with pa.ipc.new_file(sink, schema) as writer:
                for batch in rows.cast(schema).to_batches(4096):
                    writer.write_batch(batch)
            fh.flush()
            os.fsync(fh.fileno())
        path = folder / f"{event}{_SUFFIX}"
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def _read_meta(path: Path) -> dict[str, Any] | None:
    import pyarrow as pa

    try:
        with pa.memory_map(str(path)) as source:
            schema = pa.ipc.open_file(source).schema
    except (OSError, pa.ArrowInvalid):
        return None
    raw = (schema.metadata or {}).get(_META_KEY)
    try:
        meta = json.loads(raw) if raw else None
    except ValueError:
        return None
    return meta if isinstance(meta, dict) else None


def entries(home: Home) -> list[TrashEntry]:
    """Every readable entry, newest first (an unreadable file is skipped, and pruned with age)."""
    folder = trash_dir(home)
    if not folder.is_dir():
        return []
    out: list[TrashEntry] = []
    for path in folder.glob(f"*{_SUFFIX}"):
        meta = _read_meta(path)
        if meta is None:
            continue
        dim = meta.get("dim")
        out.append(
            TrashEntry(
                event=str(meta.get("event", path.stem)),
                at=str(meta.get("at", "")),
                op=str(meta.get("op", "")),
                by=str(meta.get("by", "")),
                rows=int(meta.get("rows", 0)),
                model=meta.get("model"),
                dim=int(dim) if dim is not None else None,
                path=path,
            )
        )
    out.sort(key=lambda e: (e.at, e.path.stat().st_mtime), reverse=True)
    return out


def load(entry: TrashEntry) -> pa.Table:
    """The entry's rows (metadata dropped)."""
    import pyarrow as pa

    with pa.memory_map(str(entry.path)) as source:
        table = pa.ipc.open_file(source).read_all()
    return table.replace_schema_metadata(None)


def prune(home: Home, *, now: float | None = None) -> int:
    """Delete entries (and stray temp files) older than :data:`KEEP_DAYS` days; returns how many."""
    folder = trash_dir(home)
    if not folder.is_dir():
        return 0
    limit = (now or time.time()) - KEEP_DAYS * 86400
    removed = 0
    for path in folder.iterdir():
        try:
            if path.is_file() and path.stat().st_mtime < limit:
                path.unlink()
                removed += 1
        except OSError:
            continue
    return removed
