"""Removing rows so that no copy is left: the one exception to append-only, used by scrub and purge.

A LanceDB ``delete`` only marks rows deleted; the text stays in its data file, and compaction
rewrites a fragment only when a tenth of it is deleted. Old versions keep their manifests and
transaction files, and the full-text index keeps every token in a compressed FST that no byte
grep would even notice. Measured (docs/sharing.md, research notes of issue 12): delete + optimize +
cleanup left the text in a data file.

So removal is a **rewrite in place**: the surviving rows (and any replacements) are written as one
``overwrite`` commit of the same dataset, which keeps its version numbers rising for readers that
hold it open; the indexes are built again from the new rows only; then every older version and
every file not referenced by the newest one is deleted (``cleanup_old_versions(0,
delete_unverified=True)``). What remains was all written after the removal, from rows that never
held the removed text. The same code rewrites the local memory and a remote bucket.

No predicate holding removed text is ever committed (a delete's predicate is kept in the
transaction file): rows are chosen by id, and ids are hashes.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Collection
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["RewriteResult", "drop_history", "rewrite_table"]

_BATCH = 4096


@dataclass(frozen=True, slots=True)
class RewriteResult:
    kept: int
    removed: int
    added: int


def rewrite_table(
    table: Any,
    *,
    drop_ids: Collection[str],
    replacements: pa.Table | None = None,
    rebuild_indexes: Callable[[Any], None],
    spool_dir: Path,
) -> RewriteResult:
    """Rewrite ``table`` without ``drop_ids`` (plus ``replacements``), rebuild its indexes, purge history.

    ``replacements`` rows must have the table's schema; their ids are dropped from the old rows
    first, so a replaced row appears once. ``rebuild_indexes(table)`` recreates every index.
    The surviving rows pass through an Arrow file in ``spool_dir`` (private, deleted at the end
    whatever happens): reading and overwriting one table in a single stream would run two LanceDB
    operations on its one event loop at once.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    from funes_core.home import ensure_private_dir

    schema: pa.Schema = table.schema
    replaced = set(replacements.column("id").to_pylist()) if replacements is not None else set()
    dropped = set(drop_ids) | replaced
    drop_array = pa.array(sorted(dropped), pa.utf8())
    kept = removed = 0
    ensure_private_dir(spool_dir)
    fd, name = tempfile.mkstemp(dir=spool_dir, prefix="rewrite-", suffix=".arrow")
    os.close(fd)
    spool = Path(name)
    try:
        with pa.OSFile(str(spool), "wb") as sink, pa.ipc.new_stream(sink, schema) as writer:
            for batch in table.search().select(list(schema.names)).limit(None).to_batches(_BATCH):
                keep = pc.invert(pc.is_in(batch.column("id"), value_set=drop_array))
                survivors = batch.filter(keep)
                kept += survivors.num_rows
                removed += batch.num_rows - survivors.num_rows
                if survivors.num_rows:
                    writer.write_batch(_conform(survivors, schema))
            if replacements is not None:
                for rb in replacements.to_batches(_BATCH):
                    writer.write_batch(_conform(rb, schema))
        with pa.OSFile(str(spool), "rb") as source:
            table.add(pa.ipc.open_stream(source), mode="overwrite", on_bad_vectors="null")
    finally:
        spool.unlink(missing_ok=True)
    rebuild_indexes(table)
    drop_history(table)
    added = replacements.num_rows if replacements is not None else 0
    return RewriteResult(kept=kept, removed=removed, added=added)


def _conform(batch: pa.RecordBatch, schema: pa.Schema) -> pa.RecordBatch:
    import pyarrow as pa

    columns = [batch.column(name).cast(schema.field(name).type) for name in schema.names]
    return pa.RecordBatch.from_arrays(columns, schema=schema)


def drop_history(table: Any) -> None:
    """Delete every version but the newest, and every file it does not reference.

    ``delete_unverified``: files of unfinished transactions (a writer killed mid-commit) go too;
    they may hold the very text being removed. LanceDB warns that readers of older versions fail:
    that is the point here, and scrub and purge hold the lock.
    """
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        table.optimize(cleanup_older_than=timedelta(0), delete_unverified=True)
