"""Both stores pass the shared StoreContract; the LanceDB store also keeps what it promises on disk."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from funes_contracts import StoreContract
from funes_contracts.store import STAMP, make_row
from funes_core.home import Home
from funes_core.models.embed import HashEmbedder
from funes_core.models.vectors import ModelMismatchError, ModelStamp
from funes_core.store import NO_INDEX_MESSAGE, NoIndexError, open_store
from funes_core.store.base import Store
from funes_core.store.lance import LanceStore, filters_sql
from funes_core.store.reference import MemoryStore


class TestMemoryStore(StoreContract):
    @pytest.fixture
    def make_store(self) -> Callable[[], Store]:
        return MemoryStore


class TestLanceStore(StoreContract):
    @pytest.fixture
    def make_store(self, tmp_path: Path) -> Callable[[], Store]:
        counter = iter(range(1000))
        return lambda: LanceStore(tmp_path / f"memory{next(counter)}")


# ----------------------------------------------------------------------------- LanceDB only


def test_lance_persists_rows_and_stamp_across_opens(tmp_path: Path) -> None:
    first = LanceStore(tmp_path / "m")
    first.stamp_model(STAMP)
    first.add([make_row("a", "persisted text", vector=HashEmbedder().embed_query("x"))])
    again = LanceStore(tmp_path / "m")
    assert again.model_stamp() == STAMP
    assert [r.id for r in again.scan()] == ["a"]
    with pytest.raises(ModelMismatchError) as info:
        again.stamp_model(ModelStamp("another/model", 384))
    assert str(info.value) == (
        f"memory {tmp_path / 'm'} was built with {STAMP.model}; this funes embeds with another/model. "
        "Rebuild it with: funes index --rebuild"
    )


def test_lance_schema_order_nullable_vector_and_stamp_metadata(tmp_path: Path) -> None:
    store = LanceStore(tmp_path / "m")
    store.stamp_model(STAMP)
    schema = store._tbl().schema
    assert schema.names == [
        "id", "text", "session_id", "workdir", "turn_uuid", "parent_uuid", "seq", "ts", "role",
        "block_type", "tool_name", "source_path", "block_idx", "split_idx", "vector", "harness", "repo",
        "taint",
    ]  # fmt: skip
    vector = schema.field("vector")
    assert vector.nullable
    assert vector.type.list_size == 384
    assert str(vector.type.value_type) == "halffloat"  # 768 bytes a vector, not 1,536
    assert vector.metadata[b"embedding_model"] == STAMP.model.encode()
    assert (tmp_path / "m" / "chunks.lance").is_dir()


def test_lance_reader_sees_a_writers_new_rows(tmp_path: Path) -> None:
    writer = LanceStore(tmp_path / "m", read_consistency_interval=None)
    writer.stamp_model(STAMP)
    writer.add([make_row("a", "first")])
    reader = open_store(tmp_path / "m")
    assert reader.count() == 1
    writer.add([make_row("b", "second wombat")])
    writer.set_vectors({"a": HashEmbedder().embed_query("first")})
    assert reader.count() == 2
    assert [h.row.id for h in reader.text_search("wombat", 3)] == ["b"]
    assert reader.stats().owed == 1


@pytest.mark.parametrize("kind", ["lance", "reference"])
def test_text_search_says_which_hits_are_still_owed_their_embedding(tmp_path: Path, kind: str) -> None:
    store: Store = LanceStore(tmp_path / "m") if kind == "lance" else MemoryStore()
    store.stamp_model(STAMP)
    emb = HashEmbedder()
    store.add(
        [make_row("a", "wombat one", vector=emb.embed_query("wombat one")), make_row("b", "wombat two")]
    )
    assert {h.row.id: h.vector_owed for h in store.text_search("wombat", 5)} == {"a": False, "b": True}
    store.set_vectors({"b": emb.embed_query("wombat two")})
    assert {h.row.id: h.vector_owed for h in store.text_search("wombat", 5)} == {"a": False, "b": False}


def test_a_float32_memory_built_before_half_precision_keeps_working(tmp_path: Path) -> None:
    old = LanceStore(tmp_path / "m", vector_type="float32")
    old.stamp_model(STAMP)
    emb = HashEmbedder()
    old.add([make_row("a", "wombat burrow", vector=emb.embed_query("wombat burrow")), make_row("b", "owed")])
    store = LanceStore(tmp_path / "m")  # today's default would create float16; the table decides
    store.add([make_row("c", "koala tree", vector=emb.embed_query("koala tree"))])
    store.set_vectors({"b": emb.embed_query("owed")})
    assert str(store._tbl().schema.field("vector").type.value_type) == "float"
    assert store.stats().owed == 0
    assert store.vector_search(emb.embed_query("koala tree"), 1)[0].row.id == "c"
    got = store.session_vectors("s1")
    assert set(got) == {"a", "b", "c"} and got["a"].dtype == np.float32
    assert np.allclose(got["a"], emb.embed_query("wombat burrow"), atol=1e-6)  # float32 kept exactly
    with pytest.raises(ValueError, match="float16 or float32"):
        LanceStore(tmp_path / "x", vector_type="int8")


def test_lance_ann_index_only_from_the_threshold(tmp_path: Path) -> None:
    store = LanceStore(tmp_path / "m", ann_min_rows=300)
    store.stamp_model(STAMP)
    emb = HashEmbedder()
    texts = [f"passage number {i} about topic {i % 17}" for i in range(299)]
    store.add(
        [
            make_row(f"r{i}", t, vector=v)
            for i, (t, v) in enumerate(zip(texts, emb.embed_documents(texts), strict=True))
        ]
    )
    store.add([make_row("owed", "no vector yet")])
    store.optimize()
    assert not store.has_ann_index(), "299 vectors: brute force, no ANN index"
    store.add([make_row("r299", "passage number 299", vector=emb.embed_query("passage number 299"))])
    store.optimize()
    assert store.has_ann_index()
    hit = store.vector_search(emb.embed_query(texts[42]), 1)[0]
    assert hit.row.id == "r42"
    assert hit.score == pytest.approx(1.0, abs=0.02)


def test_lance_optimize_prunes_old_versions_but_not_recent_ones(tmp_path: Path) -> None:
    store = LanceStore(tmp_path / "m")
    store.stamp_model(STAMP)
    for i in range(5):
        store.add([make_row(f"r{i}")])
    before = len(store._tbl().list_versions())
    store.optimize()
    # versions younger than the grace period survive (a reader may be on them); data is intact
    assert len(store._tbl().list_versions()) >= before
    assert store.count() == 5


def test_lance_set_vectors_through_the_id_index_on_indexed_and_newer_rows(tmp_path: Path) -> None:
    """optimize builds a BTREE index on id; vector commits then send whole rows (an (id, vector)
    source makes LanceDB panic once that index exists). Rows in the index, rows written after it,
    rows a previous commit moved: each gets its vector once, and nothing is duplicated or lost."""
    store = LanceStore(tmp_path / "m", read_consistency_interval=None)
    store.stamp_model(STAMP)
    emb = HashEmbedder()
    store.add([make_row(f"old{i}", f"indexed passage {i}") for i in range(40)])
    store.optimize()
    assert any(ix.columns == ["id"] for ix in store._tbl().list_indices())
    store.add([make_row(f"new{i}", f"newer passage {i}") for i in range(10)])
    vec = emb.embed_query
    store.set_vectors({"old3": vec("old3"), "new4": vec("new4"), "absent": vec("x")})
    store.set_vectors({"old3": vec("other"), "old5": vec("old5")})  # old3 keeps its first vector
    store.optimize()
    store.set_vectors({"old3": emb.embed_query("again"), "new6": emb.embed_query("new6")})
    assert store.count() == 50
    assert store.stats().owed == 46
    assert len(store.all_ids()) == 50
    for rid in ("old3", "new4", "old5", "new6"):
        assert store.vector_search(emb.embed_query(rid), 1)[0].row.id == rid
    assert store.vector_search(emb.embed_query(rid), 1)[0].row.text == "newer passage 6"
    with pytest.raises(ValueError):
        store.set_vectors({"absent": np.ones(7, dtype=np.float32)})


def test_lance_a_memory_without_the_id_index_gets_it_at_optimize(tmp_path: Path) -> None:
    store = LanceStore(tmp_path / "m", read_consistency_interval=None)
    store.stamp_model(STAMP)
    store.add([make_row(f"r{i}", f"passage {i}") for i in range(5)])
    store.set_vectors({"r1": HashEmbedder().embed_query("r1")})  # no index yet: the scan path
    assert not any(ix.columns == ["id"] for ix in store._tbl().list_indices())
    store.optimize()
    assert any(ix.columns == ["id"] for ix in store._tbl().list_indices())
    store.set_vectors({"r2": HashEmbedder().embed_query("r2")})
    assert store.stats().owed == 3


def test_lance_a_primary_key_store_adds_through_merge_insert(tmp_path: Path) -> None:
    """A remote (primary key, several writers) keeps ids unique through merge_insert's conflicts;
    the local store's look-up-then-append relies on the store lock."""
    store = LanceStore(tmp_path / "m", primary_key=True)
    store.stamp_model(STAMP)
    assert store.add([make_row("a"), make_row("b")]) == 2
    assert store.add([make_row("b"), make_row("c")]) == 1
    assert sorted(store.all_ids()) == ["a", "b", "c"]


def test_lance_a_writer_that_found_the_table_empty_deduplicates_from_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A first index (one writer, an empty table) never reads the table to deduplicate: it knows
    every id it wrote. A writer that opens a table with rows asks the table, and finds them."""
    writer = LanceStore(tmp_path / "m", read_consistency_interval=None)
    writer.stamp_model(STAMP)
    reads: list[str | None] = []
    real_query = LanceStore._query

    def counting(self: LanceStore, where: str | None, columns: object) -> object:
        reads.append(where)
        return real_query(self, where, columns)  # type: ignore[arg-type]

    monkeypatch.setattr(LanceStore, "_query", counting)
    assert writer.add([make_row("a"), make_row("b")]) == 2
    assert writer.add([make_row("b"), make_row("c")]) == 1
    assert writer.existing_ids(["a", "c", "z"]) == {"a", "c"}
    assert reads == []
    assert sorted(writer.all_ids()) == ["a", "b", "c"]

    later = LanceStore(tmp_path / "m", read_consistency_interval=None)
    reads.clear()
    assert later.existing_ids(["a", "z"]) == {"a"}
    assert later.add([make_row("a"), make_row("d")]) == 1
    assert reads, "a table that had rows is asked"
    assert sorted(later.all_ids()) == ["a", "b", "c", "d"]


def test_filters_sql_escapes_literals() -> None:
    from funes_core.store.base import Filters

    sql = filters_sql(Filters(role="it's", repo="o'wn/er"))
    assert sql == "(role = 'it''s') AND (array_has(string_to_array(repo, ' '), 'o''wn/er'))"
    assert filters_sql(Filters()) is None


def test_open_store_messages(tmp_path: Path) -> None:
    home = Home(tmp_path / "home")
    with pytest.raises(NoIndexError) as info:
        open_store(home=home)
    assert str(info.value) == NO_INDEX_MESSAGE
    with pytest.raises(NoIndexError) as info:
        open_store(tmp_path / "elsewhere")
    assert str(info.value) == f"no index found at {tmp_path / 'elsewhere'}"
    store = open_store(home=home, create=True)
    store.stamp_model(STAMP)
    with pytest.raises(ModelMismatchError):
        open_store(home=home, expect=ModelStamp("other", 384))
    assert open_store(home.memory_dir / "chunks.lance").model_stamp() == STAMP
    assert oct(home.memory_dir.stat().st_mode & 0o777) == "0o700"
    assert np.isclose(1.0, 1.0)
