"""The LanceDB store: the default memory, an embedded table ``chunks`` in a folder (or object store URI).

Design notes (each one is a reason, not a preference):

- **Schema.** Columns follow the reference order (``id, text, session_id, workdir, turn_uuid,
  parent_uuid, seq, ts, role, block_type, tool_name, source_path, block_idx, split_idx, vector``),
  then ``harness, repo, taint``. ``vector`` is a *nullable* ``FixedSizeList<float16, dim>``: rows
  are written text-first and their embedding is filled in later, so text is searchable by BM25
  seconds after a turn ends while the slow CPU embedding catches up.
- **Half-precision vectors.** A 384-d float32 vector is 1,536 bytes, two thirds of a chunk on disk
  (real agent transcripts: 2.3 KB a chunk with float32, 1.5 KB with float16). Half precision keeps
  about three significant digits, far below what separates two neighbours' cosines: on LoCoMo every
  retrieval figure came out identical (``docs/benchmarks.md``). Vectors go in and come out as
  float32; the store casts at its boundary. Memories built with float32 keep their column type
  (writes are cast to it), so nothing needs converting; ``funes index --rebuild`` converts one.
- **Model stamp.** Stored as metadata on the ``vector`` field (``embedding_model``,
  ``embedding_dim``), written when the table is created. It lives inside the dataset, so a copy of
  the table (to a bucket, to another machine) carries it; a sidecar file could be left behind.
  Tables that only carry the older table-level ``embedding_model`` key are read too.
- **Dedup.** :meth:`add` looks the batch's ids up, then appends the new rows in one commit: a
  re-run after a crash never duplicates anything. The local memory has one writer (the store
  lock), so nothing adds the same id between the look-up and the append; a ``merge_insert`` would
  join every batch against the whole table, at a cost growing with the memory. A store opened
  with ``primary_key`` (a remote: several writers) inserts through ``merge_insert("id")``. A
  writer (``read_consistency_interval=None``) that finds the table empty keeps the ids it adds
  in memory and looks them up there: a first index then never reads the table to deduplicate.
- **Indexes.** A native FTS (inverted) index on ``text`` exists from the table's creation; rows
  written since it was last refreshed are still found (scanned flat) and :meth:`optimize` folds
  them in. BTREE indexes on ``session_id`` (session reads), ``ts`` (date filters: recall's
  date windows, ``--since``/``--until``) and ``id`` (look-ups by id, and :meth:`set_vectors`,
  whose ``merge_insert`` then finds its rows through the index instead of joining against the
  whole table) are built by :meth:`optimize`, the last in the local memory only (a remote takes
  no vector commits, and its concurrent pushers' optimizes would conflict).
  An IVF_PQ index (cosine) on ``vector`` is created only once :data:`ANN_MIN_ROWS` rows
  carry a vector: below that, exact brute force is fast and exact. Queries re-rank the PQ
  candidates on the stored vectors (``refine_factor``), so scores are exact cosines and recall@10
  against exact search stays >= 0.95 (``bench/ann.py``). IVF_PQ, not IVF_HNSW_SQ: at 1M rows the
  HNSW graphs did not finish building in an hour on 2 cores; IVF_PQ trains in minutes. The index
  is rebuilt with more partitions when the rows grow :data:`ANN_REBUILD_GROWTH`-fold, and rebuilt
  as one segment once :meth:`optimize` has added more than :data:`ANN_FOLD_AFTER` (see there).
- **Versions.** Every commit is a version; :meth:`optimize` compacts and deletes versions older
  than :data:`VERSION_GRACE`. Not zero: a reader in another process may be mid-query on one.
- **Readers** connect with ``read_consistency_interval=0`` so every call sees the latest commit of
  a concurrent writer (a manifest check; measured at well under a millisecond locally).

lancedb is imported inside this module's functions only: importing it costs over a second, and
``funes --help`` must not pay for it. Never fork after it is imported (its runtime has threads).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from funes_core.models.vectors import ModelMismatchError, ModelStamp, Vector
from funes_core.store.base import RANK_FIELDS, Filters, Hit, Row
from funes_core.store.lance_bulk import LanceBulk
from funes_core.store.lance_reads import LanceReads
from funes_core.store.lance_table import (
    _DIM_KEY,
    _MODEL_KEY,
    _ROW_COLUMNS,
    COLUMNS,
    VECTOR_TYPE,
    IndexBacklog,
    NotFunesMemoryError,
    _candidate_rows,
    _rows_from_arrow,
    arrow_schema,
    filters_sql,
    sql_literal,
    windows_sql,
)
from funes_core.store.races import _unless_done, lost_commit_race, retry_lost_races

if TYPE_CHECKING:
    import pyarrow as pa

    from funes_core.store.purgelog import Denied

__all__ = [
    "ANN_MIN_ROWS",
    "COLUMNS",
    "DEFAULT_DIM",
    "EXACT_MAX_ROWS",
    "TABLE_NAME",
    "UPKEEP_FRAGMENTS",
    "UPKEEP_ROWS",
    "VECTOR_TYPE",
    "VERSION_GRACE",
    "IndexBacklog",
    "LanceStore",
    "NotFunesMemoryError",
    "arrow_schema",
    "filters_sql",
    "lost_commit_race",
    "retry_lost_races",
    "sql_literal",
    "windows_sql",
]

TABLE_NAME = "chunks"
DEFAULT_DIM = 384
#: Rows with a vector before an ANN index is worth building (brute force is exact and fast below).
ANN_MIN_ROWS = 20_000
#: Rows per IVF partition of the vector index: ~245 partitions at 1M rows.
ANN_ROWS_PER_PARTITION = 4096
#: Dimensions per PQ sub-vector (48 sub-vectors of a 384-d vector: 48 bytes a row).
ANN_DIMS_PER_SUB_VECTOR = 8
#: Partitions a query probes: at least this many, and at least :data:`ANN_PROBE_SHARE` of them.
ANN_MIN_PROBES = 20
ANN_PROBE_SHARE = 0.1
#: PQ candidates re-ranked on the stored vectors, per result asked for.
ANN_REFINE_FACTOR = 10
#: The index is built again, with more partitions, when the rows have grown this many times.
ANN_REBUILD_GROWTH = 4
#: Segments of the vector index :meth:`LanceStore.optimize` lets pile up before it builds the index
#: again as one. Every optimize that finds new vectors adds a segment (LanceDB 0.40 does not expose
#: merging them), a query searches each one (~1.5 ms a segment at 1M rows, for good), and Lance never
#: compacts fragments indexed by different segments. A rebuild costs minutes at 1M rows, so it is
#: not done per append; the original tool also folded its delta indexes after 8.
ANN_FOLD_AFTER = 8
#: The vector index's name records its partition count (``vector_ivfpq_p<N>``).
_ANN_PREFIX = "vector_ivfpq_p"
#: A date-filtered vector query over at most this many rows compares them all (exact, and faster
#: than the index's unlimited probing for a narrow filter: at 1M rows, 14 ms against 30 ms for one
#: day of 1.4k rows, 28 against 47 ms for 13.7k rows, 61 against 47 ms for 19k rows).
EXACT_MAX_ROWS = 10_000
#: Versions younger than this survive :meth:`LanceStore.optimize` (readers may still be on them).
VERSION_GRACE = timedelta(minutes=5)
#: Ids a writer that created (or found empty) the table keeps in memory at most (~100 bytes each):
#: past it, :meth:`LanceStore.existing_ids` asks the table again.
KNOWN_IDS_MAX = 4_000_000
#: Ids per ``IN (...)`` list, to keep generated SQL a reasonable size.
_IN_BATCH = 512
#: :meth:`LanceStore.needs_upkeep`: rows outside the full-text or vector index from which a writer
#: that left ``optimize`` to the background worker optimizes itself. LanceDB still finds those rows
#: (it tokenizes them at query time for BM25, ~20 µs a row, and compares their vectors one by one),
#: so reads stay right; this bounds what they cost when the worker is not there to fold them in.
UPKEEP_ROWS = 2_000
#: ... or fragments in the table: every append is one more (a hook's run writes one to three), and
#: each query opens every fragment, indexed or not (warm recall at 1M, 2 loaded cores: 117 ms, 158 ms
#: after 50 unoptimized hook appends, 359 ms after 200; 88 ms once optimized). ``optimize`` merges
#: the unindexed ones into one; fragments indexed by different segments of the vector index stay
#: apart (Lance compacts only fragments that share their indexes), so a memory that carries more
#: than this many already is optimized on every append, as before.
UPKEEP_FRAGMENTS = 64


def _lancedb() -> Any:
    # Lance logs (Rust env_logger) go straight to stderr; keep them to errors unless asked.
    os.environ.setdefault("LANCEDB_LOG", "error")
    from funes_core.store.lazy_namespace import install

    install()  # the REST namespace client's models wait until used (never, here): -26 MB, -0.4 s
    import lancedb

    return lancedb


def _drop_index(table: Any, name: str) -> None:
    """Drop index ``name``; a concurrent writer dropping it first is fine."""
    _unless_done(
        table, lambda: table.drop_index(name), lambda indexes: all(ix.name != name for ix in indexes)
    )


def _ann_partitions(table: Any) -> int | None:
    """The partition count of the vector index, 0 for an index of another scheme, None for none."""
    for ix in table.list_indices():
        if ix.columns == ["vector"]:
            digits = ix.name.removeprefix(_ANN_PREFIX)
            return int(digits) if ix.name.startswith(_ANN_PREFIX) and digits.isdigit() else 0
    return None


def _ann_outgrown(partitions: int | None, with_vectors: int) -> bool:
    """Build (again): no index, one of an older scheme (0), or rows grown ``ANN_REBUILD_GROWTH``-fold."""
    if partitions is None or partitions == 0:
        return True
    return with_vectors // ANN_ROWS_PER_PARTITION >= ANN_REBUILD_GROWTH * partitions


class LanceStore(LanceReads, LanceBulk):
    """A :class:`~funes_core.store.base.Store` on an embedded LanceDB table named ``chunks``.

    ``uri`` is the memory folder (``$FUNES_HOME/memory``; the table is ``chunks.lance`` inside)
    or an object-store URI. Opening never creates anything; the first :meth:`stamp_model` or
    :meth:`add` creates the table. ``read_consistency_interval`` is how stale a read may be:
    ``timedelta(0)`` (default) re-checks for new commits on every call, ``None`` never does
    (right for the single writer, which sees its own commits anyway). ``vector_type`` is the
    element type of a table this store creates; an existing table keeps its own.
    """

    def __init__(
        self,
        uri: str | os.PathLike[str],
        *,
        label: str | None = None,
        read_consistency_interval: timedelta | None = timedelta(0),
        ann_min_rows: int = ANN_MIN_ROWS,
        storage_options: Mapping[str, str] | None = None,
        primary_key: bool = False,
        taint: str | None = None,
        denied: Denied | None = None,
        vector_type: str = VECTOR_TYPE,
    ) -> None:
        if vector_type not in ("float16", "float32"):
            raise ValueError(f"vector_type must be float16 or float32, not {vector_type!r}")
        self.uri = os.fspath(uri)
        self.vector_type = vector_type
        self.label = label if label is not None else self.uri
        self.ann_min_rows = ann_min_rows
        #: Partitions a vector query probes (from the index's name; looked up on first use).
        self._ann_probes: int | None = None
        #: Create the table with ``id`` as its primary key (remotes; see :func:`arrow_schema`).
        self.primary_key = primary_key
        #: Read every row with this taint (a remote configured ``--taint external``).
        self.taint = taint
        #: Sessions and ids :meth:`add` refuses: they were purged (see ``store.purgelog``).
        self.denied = denied
        lancedb = _lancedb()
        self._db = lancedb.connect(
            self.uri,
            read_consistency_interval=read_consistency_interval,
            storage_options=dict(storage_options) if storage_options else None,
        )
        self._table: Any = None
        self._fts_checked = False
        #: Every id of the table, while this store wrote them all (see :meth:`existing_ids`).
        self._ids: set[str] | None = None
        self._ids_checked = False
        self._single_writer = read_consistency_interval is None and not primary_key

    def _rows(self, table: pa.Table) -> list[Row]:
        rows = _rows_from_arrow(table)
        if self.taint is not None:
            from dataclasses import replace

            rows = [r if r.taint == self.taint else replace(r, taint=self.taint) for r in rows]
        return rows

    # -- table plumbing -------------------------------------------------------------------
    @property
    def table_path(self) -> Path:
        return Path(self.uri) / f"{TABLE_NAME}.lance"

    def exists(self) -> bool:
        """True once the table has been created (a folder without it is an empty memory)."""
        return self._tbl() is not None

    def _tbl(self) -> Any:
        if self._table is None:
            try:
                self._table = self._db.open_table(TABLE_NAME)
            except (ValueError, FileNotFoundError):
                return None
        return self._table

    def data_version(self) -> int | None:
        """The table's version (``Versioned``): every commit makes a new one, and a store opened with
        ``read_consistency_interval=0`` sees another process's commits here as in its reads (a
        manifest check, ~0.2 ms). A rewrite (scrub, purge) is a commit too: versions keep rising."""
        table = self._tbl()
        return None if table is None else int(table.version)

    def _create(self, stamp: ModelStamp | None) -> Any:
        dim = stamp.dim if stamp else DEFAULT_DIM
        schema = arrow_schema(dim, stamp, primary_key=self.primary_key, vector_type=self.vector_type)
        if not self.primary_key:
            # One writer (the store lock): nobody can create the table between the look and the write.
            self._table = self._db.create_table(TABLE_NAME, schema=schema, exist_ok=True)
        else:
            self._table = self._create_shared(schema)
        self._ensure_fts()
        return self._table

    def _create_shared(self, schema: pa.Schema) -> Any:
        """Create the table of a memory several writers share (a remote), and lose nothing to a race.

        Lance looks for the dataset, writes, then commits the creation as an *overwrite*; when
        another pusher created the dataset and committed rows in between, that overwrite is
        rebased onto their latest version and hides every row they had published (seen: "Update
        transaction is incompatible with concurrent transaction Overwrite at version 6"). So a
        creation that did not land as version 1 puts the rows of the version it replaced back,
        through ``merge_insert`` on ``id``: an insert of what is missing, safe beside concurrent
        writers, where a ``restore`` would itself hide what they committed since.
        """
        try:
            table = self._db.create_table(TABLE_NAME, schema=schema)
        except (ValueError, OSError, RuntimeError) as exc:
            if "already exists" not in str(exc).lower():
                raise
            return self._db.open_table(TABLE_NAME)
        created = int(table.version)
        if created > 1:
            table.checkout(created - 1)
            hidden = table.to_arrow()
            table.checkout_latest()
            if hidden.num_rows:
                retry_lost_races(
                    lambda: table.merge_insert("id").when_not_matched_insert_all().execute(hidden),
                    table.checkout_latest,
                )
        return table

    def _ensure_fts(self) -> None:
        """Make sure the FTS index exists (a crash between table creation and indexing leaves none)."""
        if self._fts_checked:
            return
        from lancedb.index import FTS

        table = self._tbl()
        if table is None:
            return
        self._ensure_index(table, "text", FTS(with_position=False))
        self._fts_checked = True

    def _ensure_index(self, table: Any, column: str, config: Any) -> None:
        """Create ``config``'s index on ``column`` unless the table has one; another writer's counts.

        Two pushers keeping one remote's indexes up both find the index missing and both create it,
        under one name (``<column>_idx``): Lance refuses the later commit ("CreateIndex transaction
        was preempted by concurrent transaction CreateIndex"), and refuses it again on every retry
        from the same view (a remote store does not re-read the table by itself). So after a failed
        create the latest version decides: the other writer's index on the column, of the same
        kind, is the index this step was to make.
        """
        if any(ix.columns == [column] for ix in table.list_indices()):
            return
        kind = type(config).__name__  # FTS, BTree: also the index_type list_indices reports
        _unless_done(
            table,
            lambda: table.create_index(column, config=config, replace=False),
            lambda indexes: any(ix.columns == [column] and ix.index_type == kind for ix in indexes),
        )

    def refresh(self) -> None:
        """Look at the table's latest version: what concurrent writers committed since this store
        last did (a store opened with ``read_consistency_interval=None`` never looks by itself)."""
        table = self._tbl()
        if table is not None:
            table.checkout_latest()

    def _vector_dim(self, table: Any) -> int:
        return int(table.schema.field("vector").type.list_size)

    # -- model ----------------------------------------------------------------------------
    def model_stamp(self) -> ModelStamp | None:
        table = self._tbl()
        if table is None:
            return None
        schema = table.schema
        field_meta = schema.field("vector").metadata or {}
        table_meta = schema.metadata or {}
        model = field_meta.get(_MODEL_KEY) or table_meta.get(_MODEL_KEY)
        if not model:
            return None
        raw_dim = field_meta.get(_DIM_KEY)
        dim = int(raw_dim) if raw_dim else self._vector_dim(table)
        return ModelStamp(model.decode(), dim)

    def stamp_model(self, stamp: ModelStamp) -> None:
        table = self._tbl()
        if table is None:
            self._create(stamp)
            return
        stored = self.model_stamp()
        if stored is None:
            width = self._vector_dim(table)
            if width != stamp.dim:
                raise ModelMismatchError(self.label, ModelStamp(f"an unknown {width}-d model", width), stamp)
            table.update_field_metadata(
                {
                    "path": "vector",
                    "metadata": {_MODEL_KEY.decode(): stamp.model, _DIM_KEY.decode(): str(stamp.dim)},
                }
            )
        elif stored != stamp:
            raise ModelMismatchError(self.label, stored, stamp)

    # -- writes ---------------------------------------------------------------------------
    def _check_vector(self, vector: Vector, dim: int) -> Vector:
        arr = np.asarray(vector, dtype=np.float32).reshape(-1)
        if arr.shape[0] != dim:
            raise ValueError(f"vector has {arr.shape[0]} dimensions; this memory holds {dim}-d vectors")
        return arr

    def _vector_array(self, vectors: Sequence[Vector | None], field: pa.Field) -> pa.Array:
        """``vectors`` (``None`` for owed) as the ``vector`` column ``field`` stores them (float16 or 32)."""
        import pyarrow as pa

        dim = field.type.list_size

        flat = np.zeros((len(vectors), dim), dtype=np.float32)
        mask = np.zeros(len(vectors), dtype=bool)
        for i, vec in enumerate(vectors):
            if vec is None:
                mask[i] = True
            else:
                flat[i] = self._check_vector(vec, dim)
        value_type = field.type.value_type
        values = flat.reshape(-1).astype(np.float16 if value_type == pa.float16() else np.float32)
        return pa.FixedSizeListArray.from_arrays(pa.array(values, value_type), dim, mask=pa.array(mask))

    def add(self, rows: Sequence[Row]) -> int:
        unique: dict[str, Row] = {}
        deny = self.denied
        for row in rows:
            if deny and (row.id in deny.ids or row.session_id in deny.sessions):
                continue
            unique.setdefault(row.id, row)
        if not unique:
            return 0
        table = self._tbl()
        if table is None:
            table = self._create(None)
        self._ensure_fts()
        if self.primary_key:
            # Several writers (a remote): only merge_insert's commit conflict keeps ids unique.
            data = self._arrow_rows(table, list(unique.values()))
            result = retry_lost_races(
                lambda: (
                    table.merge_insert("id")
                    .when_not_matched_insert_all()
                    .execute(data, on_bad_vectors="null")
                ),
                table.checkout_latest,
            )
            return int(result.num_inserted_rows)
        self._known_ids(table)
        # Deduplicate against the memory with one look-up of the ids, then append. A
        # merge_insert on "id" would join the batch against the whole table on every commit, at a
        # cost that grows with the memory (about 200 MB more at 80k chunks); there is one writer
        # (the store lock), so nothing can add the same ids between the look-up and the append.
        for stored in self.existing_ids(unique):
            del unique[stored]
        if not unique:
            return 0
        table.add(self._arrow_rows(table, list(unique.values())), on_bad_vectors="null")
        if self._ids is not None:
            self._ids.update(unique)
            if len(self._ids) > KNOWN_IDS_MAX:
                self._ids = None
        return len(unique)

    def _arrow_rows(self, table: Any, items: Sequence[Row]) -> pa.Table:
        import pyarrow as pa

        schema = table.schema
        columns: dict[str, Any] = {c: [getattr(r, c) for r in items] for c in _ROW_COLUMNS}
        columns["vector"] = self._vector_array([r.vector for r in items], schema.field("vector"))
        return pa.table({c: columns[c] for c in schema.names}, schema=schema)

    def set_vectors(self, vectors: Mapping[str, Vector]) -> None:
        import pyarrow as pa

        table = self._tbl()
        if table is None or not vectors:
            return
        dim = self._vector_dim(table)
        for vector in vectors.values():
            self._check_vector(vector, dim)
        # Whole rows, not (id, vector). With the BTREE index on id (built by optimize) LanceDB
        # finds the rows to update through the index instead of joining the batch against the
        # whole table (~340 MB more per call at 42k chunks), and its indexed path needs the full
        # schema in the source: an (id, vector) source panics inside LanceDB once the index exists.
        names = list(table.schema.names)
        wanted = list(vectors)
        parts = [
            self._query(f"id IN ({', '.join(sql_literal(i) for i in wanted[at : at + _IN_BATCH])})", names)
            for at in range(0, len(wanted), _IN_BATCH)
        ]
        current = pa.concat_tables(parts)
        if current.num_rows == 0:
            return
        found = current.column("id").to_pylist()
        column = self._vector_array([vectors[i] for i in found], table.schema.field("vector"))
        data = current.set_column(names.index("vector"), table.schema.field("vector"), column)
        table.merge_insert("id").when_matched_update_all(where="target.vector IS NULL").execute(data)

    def optimize(self, *, fold: bool = True) -> None:
        """Fold new rows into the indexes, compact small fragments, drop versions past the grace period.

        Builds the ANN index the first time :attr:`ann_min_rows` rows carry a vector; after that,
        ``optimize`` keeps it current incrementally, one segment per call that finds new vectors,
        and builds it again as one segment (then compacts) past :data:`ANN_FOLD_AFTER` segments.
        ``fold=False`` leaves that to the caller (a push's upkeep folds a remote by its own rule,
        inside its retry of lost commit races).
        """
        table = self._tbl()
        if table is None:
            return
        self._ensure_fts()
        self._ensure_session_index(table)
        self._ensure_ts_index(table)
        if not self.primary_key:  # a remote takes no vector commits, and several writers optimize it
            self._ensure_id_index(table)
        table.optimize(cleanup_older_than=VERSION_GRACE)
        # Counting the rows with a vector reads the whole vector column (1.4-2.7 s at 1M rows, on
        # every hook's append); the row count is read from the manifest and bounds it, so the
        # vectors are counted only when a build may be due.
        rows = table.count_rows()
        partitions = _ann_partitions(table)
        if rows >= self.ann_min_rows and _ann_outgrown(partitions, rows):
            with_vectors = table.count_rows("vector IS NOT NULL")
            if with_vectors >= self.ann_min_rows and _ann_outgrown(partitions, with_vectors):
                self._build_ann(table, with_vectors)
                return
        if fold and partitions is not None and self._ann_segments(table) > ANN_FOLD_AFTER:
            self._build_ann(table, table.count_rows("vector IS NOT NULL"))
            # Fragments kept apart by the old segments can merge now: compact them at once, or a
            # memory past UPKEEP_FRAGMENTS would be optimized again on every append.
            table.optimize(cleanup_older_than=VERSION_GRACE)

    def needs_upkeep(self) -> bool:
        """More than :data:`UPKEEP_ROWS` rows outside an index, or :data:`UPKEEP_FRAGMENTS` fragments.

        Reads index statistics and the manifest only (well under a millisecond at a million rows),
        never a column: unlike :meth:`index_backlog`, a table without a vector index yet is not
        asked how many vectors it holds (no index means every vector is compared anyway, and the
        worker builds it once it has embedded enough).
        """
        table = self._tbl()
        if table is None:
            return False
        if int(table.stats()["fragment_stats"]["num_fragments"]) >= UPKEEP_FRAGMENTS:
            return True
        os.environ.setdefault("LANCE_INCLUDE_VECTOR_CENTROIDS", "false")
        names = {tuple(ix.columns): ix.name for ix in table.list_indices()}
        for column in ("text", "vector"):
            name = names.get((column,))
            if name is None:
                if column == "text" and table.count_rows() >= UPKEEP_ROWS:
                    return True  # no full-text index at all (a crash before it was built)
                continue
            if int(table.index_stats(name).num_unindexed_rows) >= UPKEEP_ROWS:
                return True
        return False

    def _build_ann(self, table: Any, with_vectors: int) -> None:
        """(Re)build the IVF_PQ index for ``with_vectors`` rows; see the module's design notes.

        Another writer building the same index at the same time (two pushers' upkeep of one remote)
        makes Lance refuse the later commit; its index has this one's name, so the partition count
        and the configuration, and it is kept instead (see :meth:`_ensure_index`).
        """
        from lancedb.index import IvfPq

        dim = self._vector_dim(table)
        partitions = max(1, with_vectors // ANN_ROWS_PER_PARTITION)
        sub_vectors = dim // ANN_DIMS_PER_SUB_VECTOR if dim % ANN_DIMS_PER_SUB_VECTOR == 0 else None
        config = IvfPq(distance_type="cosine", num_partitions=partitions, num_sub_vectors=sub_vectors)
        name = f"{_ANN_PREFIX}{partitions}"
        _unless_done(
            table,
            lambda: table.create_index("vector", config=config, replace=True, name=name),
            lambda indexes: any(ix.name == name and ix.columns == ["vector"] for ix in indexes),
        )
        # Another name (an older scheme, another partition count) is not replaced above; the other
        # writer may be dropping it too.
        for old in [ix.name for ix in table.list_indices() if ix.columns == ["vector"] and ix.name != name]:
            _drop_index(table, old)
        self._ann_probes = None

    def rebuild_vector_index(self) -> bool:
        """Build the ANN index again as one segment (folds the segments :meth:`optimize` added), if
        there are enough vectors for one; returns whether it was built."""
        table = self._tbl()
        if table is None:
            return False
        with_vectors = table.count_rows("vector IS NOT NULL")
        if with_vectors < self.ann_min_rows:
            return False
        self._build_ann(table, with_vectors)
        return True

    def _ann_segments(self, table: Any) -> int:
        """Segments of the vector index (index statistics only; 0 without one)."""
        os.environ.setdefault("LANCE_INCLUDE_VECTOR_CENTROIDS", "false")
        for ix in table.list_indices():
            if ix.columns == ["vector"]:
                return int(table.index_stats(ix.name).num_indices)
        return 0

    def index_backlog(self) -> IndexBacklog:
        """Rows outside the full-text and ANN indexes, and the ANN's segments (index statistics only)."""
        table = self._tbl()
        if table is None:
            return IndexBacklog(0, 0, 0)
        # Lance would otherwise load (and warn about) every centroid of the vector index.
        os.environ.setdefault("LANCE_INCLUDE_VECTOR_CENTROIDS", "false")
        names = {tuple(ix.columns): ix.name for ix in table.list_indices()}
        text_index = names.get(("text",))
        text = int(table.index_stats(text_index).num_unindexed_rows) if text_index else table.count_rows()
        vector_index = names.get(("vector",))
        if vector_index is None:
            with_vectors = int(table.count_rows("vector IS NOT NULL"))
            return IndexBacklog(text, with_vectors if with_vectors >= self.ann_min_rows else 0, 0)
        stats = table.index_stats(vector_index)
        return IndexBacklog(text, int(stats.num_unindexed_rows), int(stats.num_indices))

    def _ensure_session_index(self, table: Any) -> None:
        """A BTREE index on ``session_id``: get, scan, sketch and recall's neighbours filter on it."""
        from lancedb.index import BTree

        self._ensure_index(table, "session_id", BTree())

    def _ensure_id_index(self, table: Any) -> None:
        """A BTREE index on ``id``: deduplication and ``set_vectors`` look rows up by id through it.

        Without it each lookup scans the id column, and each ``set_vectors`` merge joins against
        the whole table; rows added since the last ``optimize`` are still found (scanned).
        """
        from lancedb.index import BTree

        self._ensure_index(table, "id", BTree())

    def _ensure_ts_index(self, table: Any) -> None:
        """A BTREE index on ``ts``: a date filter (recall's date windows, ``--since``/``--until``) is
        answered by it instead of a scan of every row's ``ts`` (36-42 ms at 1M rows, twice a recall
        that names a time; 1-4 ms through the index)."""
        from lancedb.index import BTree

        self._ensure_index(table, "ts", BTree())

    def has_ann_index(self) -> bool:
        table = self._tbl()
        return table is not None and any(ix.columns == ["vector"] for ix in table.list_indices())

    # -- reads ----------------------------------------------------------------------------
    def _query(self, where: str | None, columns: Sequence[str]) -> pa.Table:
        table = self._tbl()
        query = table.search()
        if where:
            query = query.where(where)
        return query.select(list(columns)).limit(None).to_arrow()

    def _known_ids(self, table: Any) -> set[str] | None:
        """The ids this store knows the table holds, all of them (``None``: it must ask the table).

        Looked at once: a single writer's store that finds the table empty knows every id from then
        on, because it writes them all (:meth:`add` records them); a table that had rows, a bulk
        insert or a rewrite leaves it asking.
        """
        if self._ids is None and not self._ids_checked and self._single_writer:
            self._ids_checked = True
            if int(table.count_rows()) == 0:
                self._ids = set()
        return self._ids

    def existing_ids(self, ids: Iterable[str]) -> set[str]:
        """The ids of ``ids`` that are stored.

        A writer that found the table empty (a first index) knows every id it holds, because it
        wrote them all: it answers from memory. Asking the table instead cost a scan of every row
        written since the id index was last built, for each slice of each file: a first index of
        20,000 turns spent half its time there, and the cost grew with the square of the history.
        """
        table = self._tbl()
        wanted = list(dict.fromkeys(ids))
        if table is None or not wanted:
            return set()
        known = self._known_ids(table)
        if known is not None:
            return {i for i in wanted if i in known}
        found: set[str] = set()
        for start in range(0, len(wanted), _IN_BATCH):
            batch = wanted[start : start + _IN_BATCH]
            where = f"id IN ({', '.join(sql_literal(i) for i in batch)})"
            found.update(self._query(where, ["id"]).column("id").to_pylist())
        return found

    def owed(self, limit: int) -> list[Row]:
        table = self._tbl()
        if table is None or limit <= 0:
            return []
        pending = self._query("vector IS NULL", ["id", "ts"])
        if pending.num_rows == 0:
            return []
        first = pending.sort_by([("ts", "ascending"), ("id", "ascending")]).slice(0, limit)
        ids = first.column("id").to_pylist()
        rows = self._rows(self._query(f"id IN ({', '.join(sql_literal(i) for i in ids)})", _ROW_COLUMNS))
        rows.sort(key=lambda r: (r.ts, r.id))
        return rows

    def vector_search(self, vector: Vector, k: int, filters: Filters | None = None) -> list[Hit]:
        return self._vector_hits(vector, k, filters, full=True)

    def vector_candidates(self, vector: Vector, k: int, filters: Filters | None = None) -> list[Hit]:
        """:meth:`vector_search` returning only :data:`RANK_FIELDS` (see ``CandidateSearch``)."""
        return self._vector_hits(vector, k, filters, full=False)

    def _vector_hits(self, vector: Vector, k: int, filters: Filters | None, *, full: bool) -> list[Hit]:
        table = self._tbl()
        if table is None or k <= 0:
            return []
        # The dimension is checked by LanceDB: reading it here (the table's schema) cost a manifest
        # check per query (~0.8 ms with read_consistency_interval=0), for nothing on the happy path.
        query_vec = np.asarray(vector, dtype=np.float32).reshape(-1)
        if not np.any(query_vec):
            self._check_vector(query_vec, self._vector_dim(table))  # a wrong size is still refused
            return []
        exact = False
        if filters is not None and (filters.since or filters.until):
            # A date filter (recall's date windows) is often empty ("yesterday" with no work done),
            # where the index's unlimited probing went through every partition (156 ms at 1M rows),
            # or narrow, where comparing every row is exact and faster. Counting is an index look-up.
            within = int(table.count_rows(filters_sql(filters)))
            if within == 0:
                return []
            exact = within <= EXACT_MAX_ROWS
        try:
            result = self._vector_query(table, query_vec, k, filters, full=full, exact=exact).to_arrow()
        except ValueError:
            self._check_vector(query_vec, self._vector_dim(table))  # funes' message for a wrong size
            raise
        distances = result.column("_distance").to_pylist()
        rows = self._rows(result) if full else _candidate_rows(result)
        return [Hit(row, 1.0 - float(d)) for row, d in zip(rows, distances, strict=True)]

    def _vector_query(
        self,
        table: Any,
        query_vec: np.ndarray,
        k: int,
        filters: Filters | None,
        *,
        full: bool = True,
        exact: bool = False,
    ) -> Any:
        """The LanceDB query of :meth:`vector_search` (``full``) or :meth:`vector_candidates` (not
        run); ``exact``: every row passing the filters compared, the index left aside."""
        query = table.search(query_vec, vector_column_name="vector").distance_type("cosine")
        where = filters_sql(filters)
        if exact:
            query = query.bypass_vector_index()
        else:
            if self._ann_probes is None:
                partitions = _ann_partitions(table)
                self._ann_probes = max(ANN_MIN_PROBES, round(ANN_PROBE_SHARE * (partitions or 0)))
            # Without an index these do nothing. With one: this many partitions, and the PQ
            # candidates re-ranked on the stored vectors. With a filter, more partitions while a
            # narrow one leaves fewer than k rows found (maximum 0: no limit). Not without one:
            # once optimize has folded appended rows into delta indexes, an unlimited search went
            # through every partition (measured at 1M rows with 4 index segments: 808 partitions
            # searched and 1.0M comparisons instead of 96 and 129k; 3x the time, for recall@10 vs
            # exact 0.98 instead of 0.97).
            query = query.minimum_nprobes(self._ann_probes)
            query = query.maximum_nprobes(0 if where else self._ann_probes)
            query = query.refine_factor(ANN_REFINE_FACTOR)
        if where:
            query = query.where(where, prefilter=True)
        return query.select([*(_ROW_COLUMNS if full else RANK_FIELDS), "_distance"]).limit(k)

    def text_search(self, query: str, k: int, filters: Filters | None = None) -> list[Hit]:
        return self._text_hits(query, k, filters, full=True)

    def text_candidates(self, query: str, k: int, filters: Filters | None = None) -> list[Hit]:
        """:meth:`text_search` returning only :data:`RANK_FIELDS` (see ``CandidateSearch``)."""
        return self._text_hits(query, k, filters, full=False)

    def _text_hits(self, query: str, k: int, filters: Filters | None, *, full: bool) -> list[Hit]:
        table = self._tbl()
        if table is None or k <= 0 or not query.strip():
            return []
        result = self._text_query(table, query, k, filters, full=full).to_arrow()
        scores = result.column("_score").to_pylist()
        owed = result.column("_owed").to_pylist()
        rows = self._rows(result) if full else _candidate_rows(result)
        return [Hit(row, float(s), bool(o)) for row, s, o in zip(rows, scores, owed, strict=True)]

    def _text_query(self, table: Any, query: str, k: int, filters: Filters | None, *, full: bool) -> Any:
        """The LanceDB query of :meth:`text_search` (``full``) or :meth:`text_candidates` (not run)."""
        from lancedb import query as lance_query

        # A MatchQuery is never parsed as query syntax: quotes, colons or AND in the user's words
        # cannot turn into a phrase or a boolean query (a phrase would need token positions).
        # (Called through Any: mypy cannot see the defaults of its pydantic fields.)
        match_query: Any = lance_query.MatchQuery
        search = table.search(match_query(query, "text"), query_type="fts")
        where = filters_sql(filters)
        if where:
            search = search.where(where, prefilter=True)
        # Whether each hit's embedding is still owed, computed in the same query (recall ranks an
        # owed row by the keyword leg alone: the vector leg cannot see it).
        columns = {c: c for c in (*(_ROW_COLUMNS if full else RANK_FIELDS), "_score")}
        return search.select(columns | {"_owed": "vector IS NULL"}).limit(k)
