"""The chunks table's shape: its columns, its Arrow schema, SQL for its filters, rows from Arrow.

Apart from the store so that whoever builds or reads the table's Arrow data (the store, the push
and rewrite paths, a remote's upkeep) shares one definition of it without the store's machinery.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from funes_core.models.vectors import ModelStamp
from funes_core.store.base import RANK_FIELDS, Filters, Row, candidate_row

if TYPE_CHECKING:
    import pyarrow as pa


#: The element type of the ``vector`` column of a new memory (see "Half-precision vectors" above).
VECTOR_TYPE = "float16"

#: Every column in table order; ``vector`` is handled separately (never loaded into rows).
COLUMNS: tuple[str, ...] = (
    "id",
    "text",
    "session_id",
    "workdir",
    "turn_uuid",
    "parent_uuid",
    "seq",
    "ts",
    "role",
    "block_type",
    "tool_name",
    "source_path",
    "block_idx",
    "split_idx",
    "vector",
    "harness",
    "repo",
    "taint",
)
_ROW_COLUMNS = [c for c in COLUMNS if c != "vector"]
_NULLABLE = {"parent_uuid", "tool_name", "vector"}
_INT_COLUMNS = {"seq", "block_idx", "split_idx"}
_MODEL_KEY = b"embedding_model"
_DIM_KEY = b"embedding_dim"
_PK_KEY = b"lance-schema:unenforced-primary-key"


@dataclass(frozen=True, slots=True)
class IndexBacklog:
    """How far a table's indexes are behind its rows (what a remote's index upkeep decides on).

    Rows outside an index are still found: LanceDB scans them flat next to the index search,
    exactly, at a cost that grows with their number.
    """

    #: rows the full-text index does not cover
    text: int
    #: rows whose vector the ANN index does not cover; every vector when an ANN index is due
    #: (:attr:`LanceStore.ann_min_rows` of them) but none exists yet
    vector: int
    #: segments of the ANN index: 1 after a build, one more for each fold of new rows
    segments: int

    @property
    def rows(self) -> int:
        return max(self.text, self.vector)


def arrow_schema(
    dim: int, stamp: ModelStamp | None = None, *, primary_key: bool = False, vector_type: str = VECTOR_TYPE
) -> pa.Schema:
    """The table schema; the model stamp rides on the ``vector`` field's metadata.

    ``primary_key`` marks ``id`` as Lance's unenforced primary key. Remotes need it: with it, two
    writers inserting the same new id at the same moment conflict and the loser retries; without
    it, both inserts commit and the id is stored twice (lance-format/lance#4585, measured 100-450
    duplicates of 4000 in the tests of issue 12). The local memory has one writer and needs none.
    ``vector_type`` is ``float16`` (new memories) or ``float32`` (how older memories were built;
    benchmarks build one to compare).
    """
    import pyarrow as pa

    fields = []
    for name in COLUMNS:
        if name == "id" and primary_key:
            fields.append(pa.field("id", pa.utf8(), nullable=False, metadata={_PK_KEY: b"true"}))
        elif name == "vector":
            meta = {_MODEL_KEY: stamp.model.encode(), _DIM_KEY: str(stamp.dim).encode()} if stamp else None
            value = pa.float16() if vector_type == "float16" else pa.float32()
            fields.append(pa.field("vector", pa.list_(value, dim), nullable=True, metadata=meta))
        else:
            kind = pa.int64() if name in _INT_COLUMNS else pa.utf8()
            fields.append(pa.field(name, kind, nullable=name in _NULLABLE))
    return pa.schema(fields)


def sql_literal(value: str) -> str:
    """A SQL string literal: quoted, with ``'`` doubled (the only escape SQL string literals have)."""
    return "'" + value.replace("'", "''") + "'"


def filters_sql(filters: Filters | None) -> str | None:
    """Translate :class:`Filters` into a Lance SQL predicate with exactly ``Filters.matches``' semantics."""
    if filters is None or filters.empty:
        return None
    parts: list[str] = []
    if filters.harness is not None:
        parts.append(f"harness IN ({', '.join(sql_literal(v) for v in filters.harness_values())})")
    for column in ("role", "block_type", "session_id"):
        value = getattr(filters, column)
        if value is not None:
            parts.append(f"{column} = {sql_literal(value)}")
    if filters.repo is not None:
        # `repo` holds space-separated identities; match one whole identity, never a substring.
        parts.append(f"array_has(string_to_array(repo, ' '), {sql_literal(filters.repo)})")
    if filters.ts_lower is not None:
        parts.append(f"ts >= {sql_literal(filters.ts_lower)}")
    if filters.ts_upper is not None:
        parts.append(f"ts < {sql_literal(filters.ts_upper)}")
    return " AND ".join(f"({p})" for p in parts)


def windows_sql(windows: Mapping[str, tuple[int, int]]) -> str:
    """The predicate of :meth:`LanceStore.session_windows`: each session's rows with ``lo <= seq <= hi``.

    The leading ``session_id IN (...)`` is what the ``session_id`` BTREE index answers; the OR of
    (session AND seq) windows alone is not, and was a scan of the whole table (110-180 ms at 1M
    rows, twice a recall, against 25-30 ms through the index). The windows refine the index's rows.
    """
    names = ", ".join(sql_literal(sid) for sid in sorted(windows))
    spans = " OR ".join(
        f"(session_id = {sql_literal(sid)} AND seq >= {int(lo)} AND seq <= {int(hi)})"
        for sid, (lo, hi) in sorted(windows.items())
    )
    return f"session_id IN ({names}) AND ({spans})"


def _and(*clauses: str | None) -> str | None:
    present = [c for c in clauses if c]
    if not present:
        return None
    return " AND ".join(f"({c})" for c in present)


def _rows_from_arrow(table: pa.Table) -> list[Row]:
    return [Row(**{c: rec[c] for c in _ROW_COLUMNS}) for rec in table.select(_ROW_COLUMNS).to_pylist()]


def _candidate_rows(table: pa.Table) -> list[Row]:
    return [candidate_row(**rec) for rec in table.select(list(RANK_FIELDS)).to_pylist()]


def _dir_size(path: Path) -> int:
    total = 0
    for dirpath, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += (Path(dirpath) / name).stat().st_size
            except OSError:
                continue
    return total


class NotFunesMemoryError(ValueError):
    """A dataset named ``chunks`` that lacks funes' columns; ``str()`` is the one line."""

    def __init__(self, label: str, missing: Sequence[str]) -> None:
        super().__init__(f"{label} is not a funes memory (its table lacks {', '.join(missing[:3])})")
        self.label = label


class LanceParts:
    """The base of the mixins that hold parts of :class:`~funes_core.store.lance.LanceStore`.

    It declares, for the type checker alone, what the store itself provides and every part calls.
    """

    if TYPE_CHECKING:
        uri: str
        label: str

        def _tbl(self) -> Any: ...

        def _query(self, where: str | None, columns: Sequence[str]) -> pa.Table: ...
