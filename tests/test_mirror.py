"""The manifest reader the remote mirror prunes by: the files it names are all a reader needs.

The oracle is LanceDB itself: a copy of a table holding only the newest manifest and the files
the reader names must answer every read (a full scan, which opens every data and deletion file;
full-text and vector search, which open the indexes) exactly as the whole table does.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from funes_contracts.store import make_row
from funes_core.models.embed import HashEmbedder
from funes_core.share.manifest import manifest_version, newest_manifest, referenced_files
from funes_core.store.base import Row
from funes_core.store.lance import LanceStore

pytestmark = pytest.mark.slow

EMB = HashEmbedder()


def rows(n: int, start: int) -> list[Row]:
    texts = [f"row {i} about topic{i}" for i in range(start, start + n)]
    return [
        make_row(f"r{i:04d}", text, session_id=f"s{i // 10}", seq=i % 10, vector=vector)
        for i, text, vector in zip(range(start, start + n), texts, EMB.embed_documents(texts), strict=True)
    ]


def files_of(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


def answers(store: LanceStore) -> tuple[object, ...]:
    probe = rows(1, 42)[0]
    assert probe.vector is not None
    return (
        sorted(r.id for r in store.scan()),
        [h.row.id for h in store.text_search("topic42", 5)],
        [h.row.id for h in store.vector_search(probe.vector, 5)],
        [h.row.id for h in store.vector_search(rows(1, 1005)[0].vector, 3)],  # type: ignore[arg-type]
    )


def test_a_copy_with_only_the_named_files_reads_like_the_whole_table(tmp_path: Path) -> None:
    """Versions, compaction, deletion files, an ANN index with a second segment: all in one table."""
    # 320 rows: IVF_PQ trains 256 centroids per sub-vector, so its index holds rows from ~256 on.
    store = LanceStore(tmp_path / "whole", ann_min_rows=300)
    store.stamp_model(EMB.stamp)
    for k in range(4):
        store.add(rows(80, 80 * k))
    store.optimize()  # compaction supersedes the four fragments; the ANN index is built
    store._tbl().delete("id IN ('r0003', 'r0005', 'r0007')")
    store.add(rows(10, 1000))
    store.optimize()  # a second ANN segment; old versions stay (the grace period)
    assert store.index_backlog().segments == 2 and store.index_backlog().rows == 0
    store._tbl().delete("id = 'r1001'")
    root = store.table_path
    everything = files_of(root)
    newest = newest_manifest(everything)
    assert newest is not None
    named = referenced_files((root / newest).read_bytes())
    assert named is not None
    assert any(n.startswith("_deletions/") for n in named)  # positive control: deletions are read
    pruned_root = tmp_path / "pruned" / "chunks.lance"
    shutil.copytree(root, pruned_root)
    for rel in everything:
        folder = rel[: rel.find("/", len("_indices/")) + 1] if rel.startswith("_indices/") else None
        if rel != newest and rel not in named and folder not in named:
            (pruned_root / rel).unlink()
    kept = files_of(pruned_root)
    assert len(kept) < len(everything) / 2  # most files were superseded
    assert [k for k in kept if k.startswith("_versions/")] == [newest]
    pruned = LanceStore(tmp_path / "pruned", ann_min_rows=300)
    assert pruned.has_ann_index() and pruned.count() == store.count() == 326
    assert answers(pruned) == answers(store)


def test_the_reader_answers_none_for_what_it_cannot_read(tmp_path: Path) -> None:
    store = LanceStore(tmp_path / "m")
    store.stamp_model(EMB.stamp)
    store.add(rows(3, 0))
    newest = newest_manifest(files_of(store.table_path))
    assert newest is not None
    data = (store.table_path / newest).read_bytes()
    assert referenced_files(data)
    assert referenced_files(b"") is None
    assert referenced_files(b"not a manifest at all") is None
    assert referenced_files(data[len(data) // 2 :]) is None  # the position points past the end
    assert referenced_files(data[:20] + data[-16:]) is None  # a message cut short


def test_manifest_names_count_down_from_u64_max_in_the_v2_naming() -> None:
    assert manifest_version("_versions/18446744073709551614.manifest") == 1
    assert manifest_version("_versions/7.manifest") == 7
    assert manifest_version("_versions/latest_version_hint.json") is None
    names = ["_versions/18446744073709551613.manifest", "_versions/18446744073709551606.manifest"]
    assert newest_manifest([*names, "data/x.lance"]) == "_versions/18446744073709551606.manifest"
