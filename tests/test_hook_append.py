"""A hook's append (``funes index`` with the background worker): what it leaves off its path, and
why reads stay right and fast when it does.

A Stop hook stores one finished turn, a few rows. At a million rows, counting what is owed reads the
whole vector column (2-3 s) and ``optimize`` compacts and updates every index (2-4 s); the hook
needs neither: every row it stored is owed (so the worker is woken), and the worker optimizes after
its commits. The appends left unoptimized meanwhile must still be found (BM25 and id look-ups scan
unindexed fragments), and must never pile up: past a bound the hook optimizes itself.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from lancedb.table import LanceTable

from funes_core.home import Home
from funes_core.ingest import worker as worker_module
from funes_core.ingest.engine import IndexOptions, IndexReport, run_index
from funes_core.ingest.worker import WorkerOptions, WorkerStart, run_worker
from funes_core.models.embed import HashEmbedder
from funes_core.store import lance as lance_module
from funes_core.store import open_store
from funes_core.store.lance import LanceStore
from funes_core.turns.format import Block, Turn, write_turns_file


@pytest.fixture
def funes_home(funes_home: Home, monkeypatch: pytest.MonkeyPatch) -> Home:
    monkeypatch.setenv("FUNES_EMBEDDER", "hash")
    return funes_home


def _session(folder: Path, sid: str, turns: int = 3) -> Path:
    """A hook-sized session: ``turns`` text turns, each with a word no other session has."""
    return write_turns_file(
        folder / f"{sid}.funes.jsonl",
        [
            Turn(
                sid,
                f"{sid}-u{i}",
                i,
                f"2026-03-05T10:00:{i:02d}Z",
                "user" if i % 2 == 0 else "assistant",
                "claude",
                (Block("text", f"turn {i} of {sid}: flushed the cache, marker zq{sid}x{i}"),),
            )
            for i in range(turns)
        ],
    )


def _index(home: Home, path: Path, embed: str = "background") -> IndexReport:
    return run_index(
        IndexOptions(path=path, embed=embed),  # type: ignore[arg-type]
        home=home,
        embedder=HashEmbedder(),
        warn=lambda _m: None,
    )


@pytest.fixture
def woken(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Stands in for the detached worker: records the ``owed`` each run wakes it with."""
    calls: list[int] = []

    def ensure_worker(home: Home, *, owed: int, argv: Any = None) -> WorkerStart:
        calls.append(owed)
        return WorkerStart(pid=4242, started=True)

    monkeypatch.setattr(worker_module, "ensure_worker", ensure_worker)
    return calls


class _Spy:
    """What the store and LanceDB were asked during a run: optimizes, owed counts, vector reads."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.optimized = 0
        self.owed_counts = 0
        self.vector_reads: list[str] = []
        real_optimize = LanceStore.optimize
        real_owed_count = LanceStore.owed_count
        real_count_rows = LanceTable.count_rows
        real_query = LanceStore._query

        def optimize(store: LanceStore) -> None:
            self.optimized += 1
            real_optimize(store)

        def owed_count(store: LanceStore) -> int:
            self.owed_counts += 1
            return real_owed_count(store)

        def count_rows(table: LanceTable, filter: str | None = None) -> int:
            if filter and "vector" in filter:
                self.vector_reads.append(f"count_rows({filter})")
            return real_count_rows(table, filter)

        def query(store: LanceStore, where: str | None, columns: Any) -> Any:
            if "vector" in (where or "") or "vector" in columns:
                self.vector_reads.append(f"query({where}, {list(columns)})")
            return real_query(store, where, columns)

        monkeypatch.setattr(LanceStore, "optimize", optimize)
        monkeypatch.setattr(LanceStore, "owed_count", owed_count)
        monkeypatch.setattr(LanceTable, "count_rows", count_rows)
        monkeypatch.setattr(LanceStore, "_query", query)

    def reset(self) -> None:
        self.optimized = self.owed_counts = 0
        self.vector_reads.clear()


def _fragments(home: Home) -> int:
    store = open_store(home=home)
    return int(store._tbl().stats()["fragment_stats"]["num_fragments"])


def _embedded_memory(home: Home, folder: Path, sessions: int = 4) -> None:
    """A memory indexed, embedded and optimized in the foreground (the state a worker leaves)."""
    for s in range(sessions):
        _session(folder, f"base{s}", turns=6)
    _index(home, folder, embed="here")


def test_a_hook_sized_append_neither_counts_the_owed_rows_nor_optimizes(
    funes_home: Home, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, woken: list[int]
) -> None:
    _embedded_memory(funes_home, tmp_path / "base")
    spy = _Spy(monkeypatch)
    report = _index(funes_home, _session(tmp_path / "hook", "h1"))
    assert (report.chunks, report.owed, report.owed_counted) == (3, 3, False)
    assert spy.optimized == 0, "the worker optimizes after embedding these rows"
    assert spy.owed_counts == 0 and spy.vector_reads == [], "nothing read the vector column"
    assert woken == [3], "the worker is woken for the rows just stored"
    assert report.summary().startswith(
        "indexed 1 file: 3 turns, 3 chunks; 0 rejected; embeddings owed: 3 new ("
    )
    # and what was left undone is really owed, and really outside the indexes
    store = open_store(home=funes_home)
    assert store.owed_count() == 3
    assert store.index_backlog().text == 3


def test_a_run_that_stores_nothing_counts_what_is_owed_and_wakes_the_worker_for_it(
    funes_home: Home, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, woken: list[int]
) -> None:
    """Rows a worker left owed (it died) are embedded once any later run wakes a worker."""
    path = _session(tmp_path / "hook", "h1")
    _index(funes_home, path, embed="none")
    spy = _Spy(monkeypatch)
    again = _index(funes_home, path)
    assert (again.chunks, again.owed, again.owed_counted) == (0, 3, True)
    assert spy.owed_counts == 1 and spy.optimized == 0
    assert woken == [3]
    assert again.summary().endswith(
        "embeddings owed: 3 (a background worker, pid 4242, is embedding them: about 1 min; "
        "`funes status` shows progress, `funes index --wait` waits for it)"
    )


def test_merged_passes_say_new_rows_until_a_pass_counts() -> None:
    first = IndexReport(chunks=3, owed=3, owed_counted=False)
    first.merge(IndexReport(chunks=2, owed=2, owed_counted=False))
    assert (first.owed, first.owed_counted) == (5, False)
    first.merge(IndexReport(chunks=0, owed=40, owed_counted=True))
    assert (first.owed, first.owed_counted) == (40, True), "a count after everything was stored"
    first.merge(IndexReport(chunks=1, owed=1, owed_counted=False))
    assert (first.owed, first.owed_counted) == (1, False), "an older count is not passed off as new rows"


def test_appends_nobody_optimized_are_found_and_deduplicated_until_the_worker_folds_them_in(
    funes_home: Home, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, woken: list[int]
) -> None:
    _embedded_memory(funes_home, tmp_path / "base")
    base_fragments = _fragments(funes_home)
    spy = _Spy(monkeypatch)
    paths = [_session(tmp_path / "hook", f"h{i}") for i in range(12)]
    for path in paths:
        _index(funes_home, path)
    assert spy.optimized == 0
    reader = open_store(home=funes_home)
    assert _fragments(funes_home) >= base_fragments + 12, "each append is a fragment of its own"
    assert reader.index_backlog().text == 36, "every appended row is outside the full-text index"
    # BM25 searches the unindexed fragments flat: the first and the last append are found at once
    for sid in ("h0", "h11"):
        [hit] = reader.text_search(f"zq{sid}x1", 5)
        assert hit.row.session_id == sid and hit.vector_owed
    assert reader.session_rows("h5") and [r.seq for r in reader.session_rows("h5")] == [0, 1, 2]
    # the id look-up (dedup) sees them: indexing the same files again stores nothing
    assert sum(_index(funes_home, p).chunks for p in paths) == 0
    assert reader.count() == 4 * 6 + 36
    # the worker embeds them; a backlog this small is left for later turns to join: still found
    # by both legs (the vectors of unindexed rows are compared one by one)
    spy.reset()
    worker = WorkerOptions(background=False, linger=0)
    run_worker(funes_home, embedder=HashEmbedder(), options=worker)
    assert spy.optimized == 0 and reader.owed_count() == 0
    query = HashEmbedder().embed_query("turn 1 of h7: flushed the cache, marker zqh7x1")
    assert any(h.row.session_id == "h7" for h in reader.vector_search(query, 10))
    [hit] = reader.text_search("zqh7x1", 5)
    assert hit.row.session_id == "h7" and not hit.vector_owed
    # once the backlog reaches the bound (here: with the next turn), the worker's commit folds it all in
    _index(funes_home, _session(tmp_path / "hook", "h12"))
    assert spy.optimized == 0
    monkeypatch.setattr(lance_module, "UPKEEP_ROWS", 39)
    run_worker(funes_home, embedder=HashEmbedder(), options=worker)
    assert spy.optimized == 1
    assert reader.index_backlog().text == 0 and reader.owed_count() == 0
    assert _fragments(funes_home) < base_fragments + 3, "the appends' fragments were merged"
    [hit] = reader.text_search("zqh12x2", 5)
    assert hit.row.session_id == "h12" and not hit.vector_owed


@pytest.mark.parametrize("bound", ["fragments", "rows"])
def test_a_hook_optimizes_itself_once_unoptimized_appends_pile_up(
    funes_home: Home, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, woken: list[int], bound: str
) -> None:
    """No worker may ever come (its model cannot load, say): the appends must stay bounded."""
    _embedded_memory(funes_home, tmp_path / "base")
    base = _fragments(funes_home)
    if bound == "fragments":
        monkeypatch.setattr(lance_module, "UPKEEP_FRAGMENTS", base + 5)
    else:
        monkeypatch.setattr(lance_module, "UPKEEP_ROWS", 15)  # five appends of three rows
    spy = _Spy(monkeypatch)
    optimized_at: list[int] = []
    for i in range(12):
        before = spy.optimized
        _index(funes_home, _session(tmp_path / "hook", f"h{i}"))
        if spy.optimized > before:
            optimized_at.append(i)
    reader = open_store(home=funes_home)
    if bound == "fragments":
        assert optimized_at and optimized_at[0] == 4, "the fifth append reaches the bound"
        assert _fragments(funes_home) < base + 5
    else:
        assert optimized_at[:2] == [4, 9], "every fifth append, as the backlog reaches 15 rows"
        assert reader.index_backlog().text < 15
    assert reader.count() == 4 * 6 + 36 and reader.owed_count() == 36


def test_needs_upkeep_reads_statistics_not_columns(
    funes_home: Home, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _embedded_memory(funes_home, tmp_path / "base")
    store = open_store(home=funes_home)
    assert not store.needs_upkeep()
    store.add([dataclasses.replace(store.scan()[0], id="fresh-row", vector=None)])
    monkeypatch.setattr(lance_module, "UPKEEP_ROWS", 1)
    spy = _Spy(monkeypatch)
    reads: list[str] = []
    monkeypatch.setattr(LanceStore, "_query", lambda *a: reads.append("query"))
    assert store.needs_upkeep(), "one row outside the full-text index, at a bound of one"
    assert reads == [] and spy.vector_reads == []
