"""The LanceDB store's plain reads: a session's rows and vectors, scans, counts, the memory's figures.

Apart from :mod:`funes_core.store.lance` (the table, its writes, indexes and searches) so that
each stays under one reading; the methods are the store's own, mixed into it.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from funes_core.models.vectors import Vector
from funes_core.store.base import Filters, Row, StoreStats
from funes_core.store.lance_table import (
    _ROW_COLUMNS,
    LanceParts,
    _and,
    _dir_size,
    filters_sql,
    sql_literal,
    windows_sql,
)

if TYPE_CHECKING:
    import pyarrow as pa

    from funes_core.store.base import SessionFacet


class LanceReads(LanceParts):
    """Reads that return rows, vectors or figures; mixed into the store, whose helpers they call."""

    if TYPE_CHECKING:  # the store's own helpers these reads use

        def _rows(self, table: pa.Table) -> list[Row]: ...

        def _vector_dim(self, table: Any) -> int: ...

        @property
        def table_path(self) -> Path: ...

    def session_rows(
        self, session_id: str, seq_from: int | None = None, seq_to: int | None = None
    ) -> list[Row]:
        if self._tbl() is None:
            return []
        where = _and(
            f"session_id = {sql_literal(session_id)}",
            f"seq >= {int(seq_from)}" if seq_from is not None else None,
            f"seq <= {int(seq_to)}" if seq_to is not None else None,
        )
        rows = self._rows(self._query(where, _ROW_COLUMNS))
        rows.sort(key=lambda r: (r.seq, r.block_idx, r.split_idx))
        return rows

    def session_windows(self, windows: Mapping[str, tuple[int, int]]) -> list[Row]:
        if self._tbl() is None or not windows:
            return []
        # One query for every window: per-session queries cost a scan each (~8 ms at 100k rows).
        rows = self._rows(self._query(windows_sql(windows), _ROW_COLUMNS))
        rows.sort(key=lambda r: (r.session_id, r.seq, r.block_idx, r.split_idx))
        return rows

    def session_vectors(self, session_id: str) -> dict[str, Vector]:
        table = self._tbl()
        if table is None:
            return {}
        where = f"session_id = {sql_literal(session_id)} AND vector IS NOT NULL"
        found = self._query(where, ["id", "vector"])
        if found.num_rows == 0:
            return {}
        dim = self._vector_dim(table)
        flat = found.column("vector").combine_chunks().flatten().to_numpy().astype(np.float32)
        matrix = flat.reshape(-1, dim)
        return {
            row_id: np.array(matrix[i], dtype=np.float32)
            for i, row_id in enumerate(found.column("id").to_pylist())
        }

    def scan(self, filters: Filters | None = None) -> list[Row]:
        if self._tbl() is None:
            return []
        return self._rows(self._query(filters_sql(filters), _ROW_COLUMNS))

    def session_facets(self, filters: Filters | None = None) -> list[SessionFacet]:
        """``SessionFacets``: :data:`FACET_FIELDS` alone, grouped in Arrow (no text is read)."""
        if self._tbl() is None:
            return []
        from funes_core.store.base import FACET_FIELDS
        from funes_core.store.facets import facets_from_arrow

        return facets_from_arrow(self._query(filters_sql(filters), FACET_FIELDS))

    def count(self, filters: Filters | None = None) -> int:
        table = self._tbl()
        if table is None:
            return 0
        return int(table.count_rows(filters_sql(filters)))

    def stats(self) -> StoreStats:
        table = self._tbl()
        if table is None:
            return StoreStats(chunks=0, sessions=0, owed=0, harnesses={}, disk_bytes=self.disk_bytes())
        import pyarrow.compute as pc

        facets = self._query(None, ["session_id", "harness"])
        harnesses: dict[str, int] = {}
        if facets.num_rows:
            for item in pc.value_counts(facets.column("harness")).to_pylist():
                harnesses[str(item["values"])] = int(item["counts"])
        return StoreStats(
            chunks=facets.num_rows,
            sessions=int(pc.count_distinct(facets.column("session_id")).as_py()) if facets.num_rows else 0,
            owed=self.owed_count(),
            harnesses=dict(sorted(harnesses.items(), key=lambda kv: (-kv[1], kv[0]))),
            disk_bytes=self.disk_bytes(),
        )

    def owed_count(self) -> int:
        """Rows whose vector is null: a read of the whole vector column (1.4-2.9 s at 1M rows)."""
        table = self._tbl()
        return 0 if table is None else int(table.count_rows("vector IS NULL"))

    def disk_bytes(self) -> int:
        """Bytes on disk of the table (data, indexes, manifests); 0 for a remote URI."""
        path = self.table_path
        return _dir_size(path) if "://" not in self.uri and path.exists() else 0

    def last_write(self) -> datetime | None:
        """When the latest version was committed (UTC), or ``None`` for an empty memory."""
        table = self._tbl()
        if table is None:
            return None
        versions = table.list_versions()
        if not versions:
            return None
        latest = max(versions, key=lambda v: v["version"])["timestamp"]
        if not isinstance(latest, datetime):
            return None
        # lancedb hands back a naive local time; astimezone() reads a naive value as local.
        return latest.astimezone(UTC)
