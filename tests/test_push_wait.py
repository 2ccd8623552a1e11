"""``funes push`` right after ``funes index`` publishes what was indexed: it waits for the owed
embeddings (embedding them itself), or with ``--no-wait`` says how many it left behind; it never
ends 0 having done nothing without a warning."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from funes_core.home import Home
from funes_core.ingest.engine import IndexOptions, run_index
from funes_core.models.embed import HashEmbedder
from funes_core.store import open_store
from funes_core.turns.format import Block, Turn, write_turns_file

sys.path.insert(0, str(Path(__file__).resolve().parent))
from s3server import Bucket, bucket_fixture, s3_fixture
from test_share_safety import add_remote, cli, home, remote_rows

pytestmark = pytest.mark.slow
s3 = s3_fixture
bucket = bucket_fixture
_ = home


def index_owed(home: Home, tmp_path: Path, turns: int = 16) -> int:
    """Index ``turns`` turns with every embedding still owed, as `funes index` leaves them."""
    path = tmp_path / "s.funes.jsonl"
    write_turns_file(
        path,
        [
            Turn(
                "sess",
                f"u{i}",
                i,
                f"2026-06-01T10:00:{i:02d}Z",
                "user",
                "claude",
                (Block("text", f"turn {i} on flushing"),),
            )
            for i in range(turns)
        ],
    )
    report = run_index(
        IndexOptions(path=path, embed="none"), home=home, embedder=HashEmbedder(), warn=lambda _m: None
    )
    assert report.owed == turns
    return turns


def test_push_right_after_index_waits_and_publishes_everything(
    home: Home, bucket: Bucket, tmp_path: Path
) -> None:
    n = index_owed(home, tmp_path)
    add_remote(bucket)
    code, out, err = cli("push", "team")
    assert code == 0, err
    assert f"embedding {n} owed row(s) first" in err
    assert f"published {n} chunk(s)" in out and "wait for their embedding" not in out
    assert len(remote_rows(home)) == n
    assert open_store(home=home).owed_count() == 0


def test_push_no_wait_says_what_it_left_and_warns_when_nothing_went(
    home: Home, bucket: Bucket, tmp_path: Path
) -> None:
    n = index_owed(home, tmp_path)
    add_remote(bucket)
    code, out, err = cli("push", "team", "--no-wait")
    assert code == 0, err
    assert f"published 0 chunk(s), 0 already there; {n} row(s) wait for their embedding" in out
    assert "warning: nothing was published" in err and "without --no-wait" in err
    assert open_store(home=home).owed_count() == n
