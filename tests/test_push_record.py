"""``funes push`` records its outcome per remote in ``$FUNES_HOME`` (``share.lastpush``): a push that
finished replaces the record, a failed or refused one is kept beside it, an unreadable record is
reported in one line and replaced, never failing the push. Folder remotes: no S3 server needed."""

from __future__ import annotations

import json
import re
import stat
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from funes_core.faces.cli.app import make_app
from funes_core.home import Home
from funes_core.ingest.engine import IndexOptions, run_index
from funes_core.models.embed import HashEmbedder
from funes_core.share.lastpush import PushRecordError, load_record, record_failure, record_path
from funes_core.store.lance import LanceStore
from funes_core.turns.format import Block, Turn, write_turns_file

#: Shaped like a GitHub token: the gate finds it in a session id (ids are not redacted at index time).
TOKEN = "ghp_" + "Zq8vR2mK7pW4xT9bN3cL6hJ1dF5gS0aY2eU8"


def cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(make_app(), list(args))
    return result.exit_code, result.stdout, result.stderr


def index_session(home: Home, folder: Path, sid: str, texts: list[str]) -> None:
    turns = [
        Turn(sid, f"{sid}-t{i}", i, f"2026-05-01T10:0{i}:00Z", "user", "claude", (Block("text", text),))
        for i, text in enumerate(texts)
    ]
    path = write_turns_file(folder / f"{len(list(folder.glob('*')))}.funes.jsonl", turns)
    run_index(IndexOptions(path=path), home=home, embedder=HashEmbedder(), warn=lambda _m: None)


@pytest.fixture
def home(funes_home: Home, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Home:
    """A memory of one two-turn session and a folder remote ``team``."""
    monkeypatch.setenv("FUNES_EMBEDDER", "hash")
    (tmp_path / "in").mkdir()
    index_session(funes_home, tmp_path / "in", "first-session", ["the wal checkpoint", "the fsync order"])
    assert cli("remote", "add", "team", str(tmp_path / "team"))[0] == 0
    return funes_home


def test_a_push_records_when_it_finished_what_it_sent_and_the_remotes_version(
    home: Home, tmp_path: Path
) -> None:
    assert load_record(home, "team").success is None, "nothing recorded before the first push"
    before = datetime.now(UTC) - timedelta(seconds=1)
    code, out, err = cli("push", "team")
    assert code == 0, err
    sent = int(re.search(r"published (\d+) chunk", out)[1])  # type: ignore[index]
    assert sent >= 2
    path = record_path(home, "team")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    ok = load_record(home, "team").success
    assert ok is not None and (ok.chunks, ok.turns) == (sent, 2)
    assert before <= ok.when <= datetime.now(UTC) and ok.when.tzinfo is not None
    assert ok.table_version == LanceStore(tmp_path / "team", read_consistency_interval=None).data_version()
    # Nothing new: still a push that finished, and it sent nothing.
    assert cli("push", "team")[0] == 0
    again = load_record(home, "team").success
    assert again is not None and (again.chunks, again.turns) == (0, 0) and again.when >= ok.when
    # Removing the remote forgets its record.
    assert cli("remote", "remove", "team")[0] == 0
    assert not path.exists()


def test_a_refused_or_failed_push_leaves_the_last_successful_one(home: Home, tmp_path: Path) -> None:
    assert cli("push", "team")[0] == 0
    ok = load_record(home, "team").success
    index_session(home, tmp_path / "in", f"leak-{TOKEN}", ["hello"])
    code, out, _err = cli("push", "team")
    assert code == 2 and "nothing published" in out, "positive control: the gate held it all back"
    record = load_record(home, "team")
    assert record.success == ok, "a refused push does not replace the last one that finished"
    assert record.failure is not None and "secret gate held back all 1 block(s)" in record.failure.error
    assert TOKEN not in record_path(home, "team").read_text()
    # A remote that is not a funes memory: the push fails, and only a failure is recorded.
    (tmp_path / "junk" / "chunks.lance").mkdir(parents=True)
    (tmp_path / "junk" / "chunks.lance" / "notes.txt").write_text("not lance")
    assert cli("remote", "add", "junk", str(tmp_path / "junk"))[0] == 0
    code, _out, err = cli("push", "junk")
    assert code == 1 and "is not a funes memory" in err
    junk = load_record(home, "junk")
    assert junk.success is None and junk.failure is not None and "is not a funes memory" in junk.failure.error


def test_a_corrupt_record_is_reported_in_one_line_and_replaced_never_failing_the_push(home: Home) -> None:
    path = record_path(home, "team")
    path.parent.mkdir(parents=True)
    for garbage in ("{not json", json.dumps({"version": 1, "last_success": {"finished": "yesterday"}}), "[]"):
        path.write_text(garbage)
        with pytest.raises(PushRecordError, match="the next push to team replaces it"):
            load_record(home, "team")
        code, _out, err = cli("push", "team")
        assert code == 0, err
        notes = [line for line in err.splitlines() if str(path) in line]
        assert len(notes) == 1 and notes[0].startswith("funes: warning: "), err
        assert load_record(home, "team").success is not None, "the push replaced the record"
    # A failure over a corrupt record: recorded, the corrupt part dropped.
    path.write_text("{not json")
    record_failure(home, "team", "remote team: unreachable")
    record = load_record(home, "team")
    assert record.success is None and record.failure is not None


def test_a_record_that_cannot_be_written_never_fails_the_push(home: Home) -> None:
    folder = record_path(home, "team").parent
    folder.parent.mkdir(parents=True, exist_ok=True)
    folder.write_text("a file where the folder goes")
    code, out, err = cli("push", "team")
    assert code == 0 and "published" in out, err
    assert "could not record this push" in err
