"""The LanceDB store's bulk access for push and rewrite: Arrow in and out, the rewrite that leaves no copy.

Apart from :mod:`funes_core.store.lance` because only the sharing paths (push, mirror, scrub,
purge) use it; the methods are the store's own, mixed into it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from funes_core.models.vectors import Vector
from funes_core.store.base import Row
from funes_core.store.lance_table import _ROW_COLUMNS, COLUMNS, LanceParts, NotFunesMemoryError, sql_literal
from funes_core.store.races import retry_lost_races

if TYPE_CHECKING:
    import pyarrow as pa

    from funes_core.store.rewrite import RewriteResult


class LanceBulk(LanceParts):
    """Arrow in and out for the sharing paths; mixed into the store, whose state it resets."""

    if TYPE_CHECKING:  # the store's state a rewrite resets, and the helpers it calls
        ann_min_rows: int
        primary_key: bool
        _table: Any
        _fts_checked: bool
        _ids: set[str] | None
        _ids_checked: bool

        def _build_ann(self, table: Any, with_vectors: int) -> None: ...

        def _vector_array(self, vectors: Sequence[Vector | None], field: pa.Field) -> pa.Array: ...

    # -- bulk access: push, rewrite -------------------------------------------------------
    def check_funes_schema(self) -> None:
        """Raise ``ValueError`` unless the table has every column funes writes (a funes memory)."""
        table = self._tbl()
        names = set(table.schema.names) if table is not None else set()
        missing = [c for c in COLUMNS if c not in names]
        if missing:
            raise NotFunesMemoryError(self.label, missing)

    def arrow_rows(
        self,
        *,
        where: str | None = None,
        with_vector: bool = False,
        columns: Sequence[str] | None = None,
    ) -> pa.Table:
        """Every row matching ``where`` as Arrow (without vectors unless asked; only ``columns`` if
        given): push's delta, a rebuild's comparison of turns."""
        import pyarrow as pa

        table = self._tbl()
        if columns is None:
            columns = [*_ROW_COLUMNS, "vector"] if with_vector else _ROW_COLUMNS
        if table is None:
            return pa.table({c: pa.array([], pa.utf8()) for c in columns})
        return self._query(where, columns)

    def arrow_rows_by_id(self, ids: Sequence[str], *, batch: int = 2000) -> Iterable[pa.Table]:
        """Whole rows (with vectors, in table order) for ``ids``, ``batch`` ids at a time."""
        table = self._tbl()
        if table is None:
            return
        names = list(table.schema.names)
        for start in range(0, len(ids), batch):
            chunk = ids[start : start + batch]
            where = f"id IN ({', '.join(sql_literal(i) for i in chunk)})"
            yield self._query(where, names)

    def all_ids(self) -> set[str]:
        """Every chunk id stored (one column read)."""
        table = self._tbl()
        if table is None:
            return set()
        return set(self._query(None, ["id"]).column("id").to_pylist())

    def count_where(self, where: str) -> int:
        table = self._tbl()
        return 0 if table is None else int(table.count_rows(where))

    def add_arrow(self, rows: pa.Table) -> int:
        """Insert Arrow rows whose ids are absent (one commit); the bulk twin of :meth:`add`."""
        table = self._tbl()
        if table is None:
            raise ValueError("the table does not exist yet: stamp_model first")
        schema = table.schema
        data = rows.select(schema.names).cast(schema)
        self._ids, self._ids_checked = None, True  # rows this store does not list one by one
        result = retry_lost_races(
            lambda: table.merge_insert("id").when_not_matched_insert_all().execute(data),
            table.checkout_latest,
        )
        return int(result.num_inserted_rows)

    def rebuild_indexes(self, table: Any | None = None) -> None:
        """Build every index again from the rows there are now (after a rewrite dropped them)."""
        table = table if table is not None else self._tbl()
        if table is None:
            return
        from lancedb.index import FTS

        table.create_index("text", config=FTS(with_position=False), replace=True)
        self._fts_checked = True
        from lancedb.index import BTree

        for column in ["session_id", "ts"] if self.primary_key else ["session_id", "ts", "id"]:
            table.create_index(column, config=BTree(), replace=True)
        with_vectors = table.count_rows("vector IS NOT NULL")
        if with_vectors >= self.ann_min_rows:
            self._build_ann(table, with_vectors)

    def table_schema(self) -> pa.Schema | None:
        """The table's Arrow schema, or ``None`` before it exists."""
        table = self._tbl()
        return None if table is None else table.schema

    def finish_rewrite(self) -> None:
        """Finish a rewrite that was killed after its overwrite committed: build the indexes again
        if the overwrite dropped them, and delete every older version (they hold the removed text)."""
        from funes_core.store.rewrite import drop_history

        table = self._tbl()
        if table is None:
            return
        if not any("text" in list(i.columns) for i in table.list_indices()):
            self.rebuild_indexes(table)
        drop_history(table)
        self._table = None

    def rewrite(
        self,
        *,
        drop_ids: Iterable[str],
        replacements: Sequence[Row] = (),
        spool_dir: Path,
        replacement_table: pa.Table | None = None,
    ) -> RewriteResult:
        """Rewrite the table without ``drop_ids`` (plus ``replacements``), leaving no old file behind.

        See :mod:`funes_core.store.rewrite`. The caller holds the write lock (local) or accepts
        that concurrent readers of old versions fail once (a remote: scrub and purge are rare,
        explicit acts).
        """
        import pyarrow as pa

        from funes_core.store.rewrite import rewrite_table

        table = self._tbl()
        if table is None:
            from funes_core.store.rewrite import RewriteResult

            return RewriteResult(0, 0, 0)
        schema = table.schema
        extra = replacement_table
        if replacements:
            items = list({r.id: r for r in replacements}.values())
            columns: dict[str, Any] = {c: [getattr(r, c) for r in items] for c in _ROW_COLUMNS}
            columns["vector"] = self._vector_array([r.vector for r in items], schema.field("vector"))
            extra = pa.table({c: columns[c] for c in schema.names}, schema=schema)
        result = rewrite_table(
            table,
            drop_ids=set(drop_ids),
            replacements=extra,
            rebuild_indexes=self.rebuild_indexes,
            spool_dir=spool_dir,
        )
        self._table = None
        self._ids, self._ids_checked = None, True
        return result
