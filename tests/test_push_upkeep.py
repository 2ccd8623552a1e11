"""A remote's index upkeep: by threshold, forced or skipped; rows outside the indexes still found.

The policy (``share.push.upkeep``) runs on a LanceDB table; a folder remote is one, so these tests
need no S3 server (``test_remote.py`` runs push end to end against one).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from funes_contracts.store import make_row
from funes_core.faces.cli.app import make_app
from funes_core.home import Home
from funes_core.ingest.engine import IndexOptions, run_index
from funes_core.models.embed import HashEmbedder
from funes_core.share import push as push_module
from funes_core.share.push import upkeep
from funes_core.store.base import Row
from funes_core.store.lance import IndexBacklog, LanceStore
from funes_core.turns.format import Block, Turn, write_turns_file

pytestmark = pytest.mark.slow

EMB = HashEmbedder()
#: Vectors before the ANN index is due in these tests.
ANN_ROWS = 300


def rows(n: int, start: int = 0) -> list[Row]:
    texts = [f"note {i} about topic{i} and word{i % 7}" for i in range(start, start + n)]
    vectors = EMB.embed_documents(texts)
    return [
        make_row(f"r{i:05d}", text, session_id=f"s{i // 10}", seq=i % 10, vector=vector)
        for i, text, vector in zip(range(start, start + n), texts, vectors, strict=True)
    ]


@pytest.fixture
def remote(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> LanceStore:
    """A remote-shaped table (``id`` primary key) whose thresholds are small enough to cross."""
    monkeypatch.setattr(push_module, "REINDEX_MIN_ROWS", 25)
    monkeypatch.setattr(push_module, "FOLD_AFTER", 2)
    # IVF_PQ trains 256 centroids per sub-vector: an index over fewer rows would hold none of them.
    store = LanceStore(tmp_path / "remote", primary_key=True, ann_min_rows=ANN_ROWS)
    store.stamp_model(EMB.stamp)
    return store


def found_by_both_legs(store: LanceStore, row: Row) -> bool:
    assert row.vector is not None
    by_text = [h.row.id for h in store.text_search(f"topic{row.text.split()[1]}", 3)]
    by_vector = [h.row.id for h in store.vector_search(row.vector, 1)]
    return row.id in by_text and by_vector == [row.id]


def test_rows_under_the_threshold_are_left_outside_the_indexes_and_still_found(remote: LanceStore) -> None:
    first = rows(10)
    remote.add(first)
    done = upkeep(remote)
    assert (done.action, done.before, done.after) == ("none", 10, 10)
    assert remote.index_backlog().text == 10
    assert found_by_both_legs(remote, first[4])


def test_past_the_threshold_rows_are_folded_in_and_the_ann_index_is_built_once_due(
    remote: LanceStore,
) -> None:
    remote.add(rows(30))
    done = upkeep(remote)
    assert (done.action, done.after) == ("folded", 0)
    assert not remote.has_ann_index()  # 30 vectors: under ann_min_rows, exact search is the plan
    remote.add(rows(ANN_ROWS - 30, 30))
    assert remote.index_backlog().vector == ANN_ROWS  # an ANN index is now due: every vector counts
    done = upkeep(remote)
    assert (done.action, done.before, done.after) == ("folded", ANN_ROWS, 0)
    assert remote.has_ann_index() and remote.index_backlog().segments == 1


def test_ann_segments_are_folded_into_one_after_fold_after(remote: LanceStore) -> None:
    remote.add(rows(ANN_ROWS))
    upkeep(remote)
    segments = []
    for n in range(3):
        remote.add(rows(25, 1000 + 25 * n))
        done = upkeep(remote)
        segments.append((done.action, remote.index_backlog().segments))
    assert segments == [("folded", 2), ("rebuilt", 1), ("folded", 2)]
    # With an ANN index in place, rows outside it are still found by both legs.
    late = rows(5, 2000)
    remote.add(late)
    assert upkeep(remote).action == "none"
    assert all(found_by_both_legs(remote, row) for row in late)


def test_reindex_forces_the_fold_and_no_reindex_skips_it(remote: LanceStore) -> None:
    remote.add(rows(ANN_ROWS))
    upkeep(remote)
    remote.add(rows(3, 1000))
    skipped = upkeep(remote, reindex=False)
    assert (skipped.action, skipped.after) == ("skipped", 3)
    forced = upkeep(remote, reindex=True)
    assert (forced.action, forced.before, forced.after) == ("rebuilt", 3, 0)
    assert remote.index_backlog().segments == 1


def test_push_says_what_it_did_to_the_indexes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, funes_home: Home
) -> None:
    """End to end on a folder remote: the note on stderr, --no-reindex, then --reindex."""
    monkeypatch.setenv("FUNES_EMBEDDER", "hash")
    turns = [
        Turn(
            "s",
            f"t{i}",
            i,
            "2026-05-01T10:00:00Z",
            "assistant",
            "claude",
            (Block("text", f"the parser fix number {i}"),),
        )
        for i in range(6)
    ]
    source = write_turns_file(tmp_path / "c" / "s.funes.jsonl", turns)
    run_index(IndexOptions(path=source), home=funes_home, embedder=EMB, warn=lambda _m: None)
    runner = CliRunner()
    assert runner.invoke(make_app(), ["remote", "add", "team", str(tmp_path / "team")]).exit_code == 0
    skipped = runner.invoke(make_app(), ["push", "team", "--no-reindex"])
    assert skipped.exit_code == 0, skipped.stderr
    assert skipped.stdout == "team: published 6 chunk(s), 0 already there\n"
    assert skipped.stderr == (
        "team: 6 row(s) are outside the remote's indexes (searched exactly meanwhile); "
        "`funes push team --reindex` folds them in\n"
    )
    forced = runner.invoke(make_app(), ["push", "team", "--reindex"])
    assert forced.exit_code == 0, forced.stderr
    assert forced.stdout == "team: published 0 chunk(s), 6 already there\n"
    assert re.fullmatch(r"team: folded 6 row\(s\) into its indexes in \d+\.\d s\n", forced.stderr)
    remote = LanceStore(tmp_path / "team")
    assert remote.index_backlog().rows == 0
    hits = runner.invoke(make_app(), ["recall", "parser fix number 3", "--memory", "team"])
    assert hits.exit_code == 0 and "the parser fix number 3" in hits.stdout


#: ``funes push`` killed with SIGKILL as its index step starts (after the upload), with the
#: threshold lowered as in these tests; the patch makes the kill point exact instead of a race.
KILL_AT_UPKEEP = """
import os, signal, sys
from funes_core.share import push
from funes_core.store.lance import LanceStore
from funes_core.faces.cli.main import main
push.REINDEX_MIN_ROWS = 25
LanceStore.optimize = lambda self, **options: os.kill(os.getpid(), signal.SIGKILL)
sys.argv = ["funes", "push", "team"]
main()
"""


def test_a_push_killed_in_its_index_step_is_finished_by_the_rerun(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, funes_home: Home
) -> None:
    """The rerun has nothing to upload, yet it notices the rows left outside and folds them in."""
    monkeypatch.setenv("FUNES_EMBEDDER", "hash")
    monkeypatch.setattr(push_module, "REINDEX_MIN_ROWS", 25)
    turns = [
        Turn("s", f"t{i}", i, "2026-05-01T10:00:00Z", "assistant", "claude", (Block("text", f"fix {i}"),))
        for i in range(30)
    ]
    source = write_turns_file(tmp_path / "c" / "s.funes.jsonl", turns)
    run_index(IndexOptions(path=source), home=funes_home, embedder=EMB, warn=lambda _m: None)
    runner = CliRunner()
    assert runner.invoke(make_app(), ["remote", "add", "team", str(tmp_path / "team")]).exit_code == 0
    killed = subprocess.run(
        [sys.executable, "-c", KILL_AT_UPKEEP],
        env={**os.environ, "FUNES_HOME": str(funes_home.root)},
        capture_output=True,
        timeout=600,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr.decode()
    assert LanceStore(tmp_path / "team").index_backlog().rows == 30  # uploaded, never indexed
    rerun = runner.invoke(make_app(), ["push", "team"])
    assert rerun.exit_code == 0, rerun.stderr
    assert rerun.stdout == "team: published 0 chunk(s), 30 already there\n"
    assert re.fullmatch(r"team: folded 30 row\(s\) into its indexes in \d+\.\d s\n", rerun.stderr)
    assert LanceStore(tmp_path / "team").index_backlog().rows == 0


# ----------------------------------------------------------------------------- two pushers at once


def pusher(path: Path) -> LanceStore:
    """The remote at ``path`` opened as ``funes push`` opens one: it never re-reads the table by itself."""
    return LanceStore(path, primary_key=True, ann_min_rows=ANN_ROWS, read_consistency_interval=None)


def indexes(store: LanceStore) -> dict[str, str | None]:
    store.refresh()
    return {ix.name: ix.index_uuid for ix in store._tbl().list_indices()}


@pytest.fixture
def two(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[LanceStore, LanceStore]:
    """Pushers A and B on one remote; B's last upload committed before A's upkeep, so B's view of the
    table lacks every index A's upkeep makes (what two processes racing on a bucket did, in order)."""
    monkeypatch.setattr(push_module, "REINDEX_MIN_ROWS", 25)
    a = pusher(tmp_path / "remote")
    a.stamp_model(EMB.stamp)
    a.add(rows(ANN_ROWS))
    b = pusher(tmp_path / "remote")
    b.add(rows(30, ANN_ROWS))
    return a, b


def test_an_index_the_other_pusher_made_first_is_kept(two: tuple[LanceStore, LanceStore]) -> None:
    """B creates the session_id index A just made, from a view without it: Lance refuses B's commit
    ("CreateIndex ... preempted by concurrent transaction CreateIndex"), and B keeps A's index."""
    a, b = two
    a.optimize()
    made = indexes(a)
    assert {"session_id_idx", "text_idx", "vector_ivfpq_p1"} <= set(made)
    b.optimize()  # no retry around it: the index step itself accepts A's index
    assert indexes(b).keys() == made.keys()
    assert b.index_backlog() == IndexBacklog(0, 0, 1)  # B's rows folded into A's indexes


def test_an_ann_index_the_other_pusher_rebuilt_first_is_kept(two: tuple[LanceStore, LanceStore]) -> None:
    a, b = two
    a.optimize()
    b.refresh()  # both see the index A built; then both fold its segments into one at once
    assert a.rebuild_vector_index()
    rebuilt = indexes(a)
    assert b.rebuild_vector_index()  # same name from a stale view: refused, and A's index kept
    assert indexes(b) == rebuilt


def test_upkeep_redoes_a_lost_compaction_on_the_latest_version(
    two: tuple[LanceStore, LanceStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both compact the same small fragments: Lance refuses B's ("Rewrite ... preempted by concurrent
    transaction Rewrite"); B's upkeep runs its step again, on the latest version, once."""
    a, b = two
    upkeep(a, reindex=True)
    b.refresh()
    a.add(rows(30, 1000))
    b.add(rows(30, 2000))  # b's view now has a's new fragment, not a's next compaction
    upkeep(a, reindex=True)
    pauses: list[float] = []
    monkeypatch.setattr(push_module.time, "sleep", pauses.append)
    done = upkeep(b, reindex=True)
    assert len(pauses) == 1 and done.after == 0
    assert b.count() == ANN_ROWS + 90 and len(b.all_ids()) == ANN_ROWS + 90


def test_upkeep_raises_anything_but_a_lost_race_at_once(
    remote: LanceStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    remote.add(rows(30))
    pauses: list[float] = []
    monkeypatch.setattr(push_module.time, "sleep", pauses.append)

    def broken(**_: object) -> None:
        raise RuntimeError("lance error: not found: some object")

    monkeypatch.setattr(remote, "optimize", broken)
    with pytest.raises(RuntimeError, match="not found"):
        upkeep(remote, reindex=True)
    assert pauses == []


# ----------------------------------------------------------------------------- creation races


def test_a_creation_that_lost_the_race_puts_back_the_rows_it_would_have_hidden(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two pushers create one remote at once. Lance commits the later creation as an overwrite on
    top of the first pusher's published rows; the later store puts those rows back."""
    first = LanceStore(tmp_path / "remote", primary_key=True)
    first.stamp_model(EMB.stamp)
    published = rows(12)
    first.add(published[:6])
    first.add(published[6:])
    late = LanceStore(tmp_path / "remote", primary_key=True)
    real_open, real_create = late._db.open_table, late._db.create_table
    looks: list[str] = []

    def open_as_before_the_first_creation(name: str, **kwargs: object) -> object:
        looks.append(name)
        if len(looks) == 1:  # the late pusher looked before the first pusher's creation landed
            raise ValueError(f"Table '{name}' was not found")
        return real_open(name, **kwargs)

    def create_as_lance_does_after_a_lost_race(name: str, **kwargs: object) -> object:
        # What the lost race commits: the creation as an overwrite at the latest version + 1.
        return real_create(name, mode="overwrite", **kwargs)

    monkeypatch.setattr(late._db, "open_table", open_as_before_the_first_creation)
    monkeypatch.setattr(late._db, "create_table", create_as_lance_does_after_a_lost_race)
    late.stamp_model(EMB.stamp)
    late.add(rows(3, start=100))
    first.refresh()
    expected = {r.id for r in published} | {f"r{i:05d}" for i in range(100, 103)}
    assert first.all_ids() == expected


@pytest.mark.parametrize(
    "refusal",
    [
        "Retryable commit conflict for version 7",
        "lance error: Incompatible transaction: This Update transaction is incompatible with "
        "concurrent transaction Overwrite at version 6.",
        "Too many concurrent writers. ",
    ],
)
def test_a_commit_that_lost_a_race_is_done_again_on_the_latest_version(refusal: str) -> None:
    from funes_core.store.lance import retry_lost_races

    calls: list[str] = []

    def step() -> str:
        calls.append("commit")
        if len(calls) == 1:
            raise RuntimeError(refusal)
        return "committed"

    assert retry_lost_races(step, lambda: calls.append("refresh")) == "committed"
    assert calls == ["commit", "refresh", "commit"]


def test_any_other_commit_error_is_raised_at_once() -> None:
    from funes_core.store.lance import retry_lost_races

    calls: list[int] = []

    def step() -> None:
        calls.append(1)
        raise RuntimeError("LanceError(IO): disk full")

    with pytest.raises(RuntimeError, match="disk full"):
        retry_lost_races(step, lambda: None)
    assert calls == [1]


def test_a_table_another_pusher_is_creating_is_not_taken_for_foreign_data(tmp_path: Path) -> None:
    """Lance writes a new table's data before its first version: a push probing in between waits
    for nothing and creates the table too (the store settles that race); anything else is refused."""
    from funes_core.share.mirror import RemoteError
    from funes_core.share.remotes import Remote

    creating = tmp_path / "creating"
    (creating / "chunks.lance" / "data").mkdir(parents=True)
    (creating / "chunks.lance" / "data" / "0-a.lance").write_bytes(b"LANC")
    (creating / "chunks.lance" / "_transactions").mkdir()
    (creating / "chunks.lance" / "_transactions" / "0-b.txn").write_bytes(b"txn")
    assert push_module.probe(Remote("team", str(creating))) is False

    foreign = tmp_path / "foreign"
    (foreign / "chunks.lance").mkdir(parents=True)
    (foreign / "chunks.lance" / "notes.txt").write_text("not a table")
    with pytest.raises(RemoteError, match="is not a funes memory"):
        push_module.probe(Remote("team", str(foreign)))

    made = tmp_path / "made"
    store = LanceStore(made)
    store.stamp_model(EMB.stamp)
    store.add(rows(3))
    assert push_module.probe(Remote("team", str(made))) is True
