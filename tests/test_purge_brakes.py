"""Brakes on purge and scrub: preview, prompt or --yes, --dry-run, the size limit, the trash and
--undo, and a purge killed at any point finished by the next run, here and on the remote.

The memory is often the only copy of what was said (agents delete old transcripts), so each test
checks the memory itself after the command: what a refused or previewed command leaves is the
memory it found, row for row.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from funes_core.home import Home
from funes_core.models.embed import HashEmbedder
from funes_core.models.vectors import ModelStamp
from funes_core.share.memory import open_memory
from funes_core.store import open_store

sys.path.insert(0, str(Path(__file__).resolve().parent))
from s3server import Bucket, attacker_scan, bucket_fixture, bucket_scan, s3_fixture
from test_share_safety import FUNES, _env, add_remote, cli, fill, home, remote_rows

pytestmark = pytest.mark.slow
s3 = s3_fixture
bucket = bucket_fixture
_ = home

MARK = "quokkaledger4417"


def demo(home: Home, sessions: int = 4, turns: int = 10) -> None:
    """``sessions`` × ``turns`` turns; one turn of session 1 holds MARK, every turn says 'the'."""
    blocks = {
        f"s{i}": [f"the turn {j} of session {i} about flushing buffers" for j in range(turns)]
        for i in range(sessions)
    }
    blocks["s1"][3] = f"the plan is {MARK} and nothing else"
    fill(home, blocks)


def snapshot(home: Home) -> list[tuple[str, str, bool]]:
    return sorted((r.id, r.text, r.vector is not None) for r in open_store(home=home).scan())


def full_rows(home: Home) -> dict[str, tuple[str, list[float] | None]]:
    return {
        r.id: (r.text, None if r.vector is None else [round(float(x), 4) for x in r.vector])
        for r in open_store(home=home).scan()
    }


# ----------------------------------------------------------------------------- preview, prompt, brakes


def test_dry_run_previews_and_changes_nothing(home: Home) -> None:
    demo(home)
    before = snapshot(home)
    code, out, err = cli("purge", "--match", "the", "--dry-run")
    assert code == 0, err
    assert (
        "purge would remove: 40 turn(s), 40 row(s) in 4 session(s) (100% of the memory's 40 turn(s))" in out
    )
    assert "agents: claude (40); dates: 2026-05-01 to 2026-05-01" in out
    assert out.count("  e.g. ") == 3
    assert "dry run: nothing was purged" in out
    assert snapshot(home) == before
    assert not (home.root / "purge.log").exists() and not (home.root / "trash").exists()


def test_off_a_terminal_a_purge_needs_yes(home: Home) -> None:
    demo(home)
    before = snapshot(home)
    code, out, err = cli("purge", "--session", "s2")
    assert code == 1 and "rerun with --yes" in err and len(err.strip().splitlines()) == 1
    assert "purge would remove: 10 turn(s)" in out
    assert snapshot(home) == before


def test_at_a_terminal_the_purge_asks(home: Home, monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from funes_core.faces.cli.app import make_app

    demo(home)
    before = snapshot(home)
    monkeypatch.setattr("funes_core.home.stderr_is_interactive", lambda: True)
    no = CliRunner().invoke(make_app(), ["purge", "--session", "s2"], input="n\n")
    assert no.exit_code == 0 and "purge 10 turn(s)? [y/N]" in no.stderr and "nothing was purged" in no.stdout
    assert snapshot(home) == before
    yes = CliRunner().invoke(make_app(), ["purge", "--session", "s2"], input="y\n")
    assert yes.exit_code == 0, yes.stderr
    assert "purged 10 row(s) of 10 turn(s) in 1 session(s)" in yes.stdout
    assert {r.session_id for r in open_store(home=home).scan()} == {"s0", "s1", "s3"}


def test_a_match_past_five_percent_or_100_turns_needs_force(home: Home) -> None:
    demo(home, sessions=30, turns=100)  # 3,000 turns
    before = snapshot(home)
    # 'turn 1' is in turns 1 and 10-19 of every session: 330 turns, 11% of the memory
    code, out, err = cli("purge", "--match", "turn 1", "--yes")
    assert code == 1 and "more than 100 turns" in err and "--force" in err, err
    assert "purge would remove: 330 turn(s)" in out
    # 'turn 99 of session 1' matches 11 turns (99 of s1, s10..s19), 0.4%: fine
    code, out, err = cli("purge", "--match", "turn 99 of session 1", "--yes", "--no-trash")
    assert code == 0 and "purged 11 row(s) of 11 turn(s) in 11 session(s)" in out, err
    small_before = len(before) - 11
    code, out, err = cli("purge", "--match", "turn 1", "--yes", "--force", "--no-trash")
    assert code == 0, err
    assert len(open_store(home=home).scan()) == small_before - 330


def test_five_percent_brake_on_a_small_memory(home: Home) -> None:
    demo(home)  # 40 turns: 2 turns is 5%, 3 turns is past it
    code, _out, err = cli("purge", "--match", "turn 1 ", "--yes")  # turn 1 of 4 sessions: 10%
    assert code == 1 and "more than 5% of the memory" in err, err
    code, out, err = cli("purge", "--match", MARK, "--yes", "--no-trash")  # 1 turn, 2.5%
    assert code == 0 and "purged 1 row(s) of 1 turn(s)" in out, err


@pytest.mark.parametrize(
    ("match", "refusal"), [("", "non-empty"), ("  ", "non-empty"), ("e", "at least 3"), ("th", "at least 3")]
)
def test_empty_or_short_matches_are_refused(home: Home, match: str, refusal: str) -> None:
    demo(home)
    before = snapshot(home)
    code, _out, err = cli("purge", "--match", match, "--yes", "--force")
    assert code == 1 and refusal in err and len(err.strip().splitlines()) == 1
    assert snapshot(home) == before


def test_a_regex_looking_match_is_literal(home: Home) -> None:
    fill(home, {"a": ["call f(x.*) now", "call f(xyz) now", *[f"other {i}" for i in range(40)]]})
    code, out, err = cli("purge", "--match", "f(x.*)", "--dry-run")
    assert code == 0, err
    assert "purge would remove: 1 turn(s)" in out and "literal text, not a pattern" in out
    assert "match: 'f(x.*)'" in out


def test_scrub_previews_asks_and_dry_runs(home: Home) -> None:
    token = "ghp_" + "Zq8" * 12
    fill(home, {"s1": [f"export GITHUB_TOKEN={token}", "plain"], "s2": ["more plain"]})
    before = snapshot(home)
    code, out, err = cli("scrub", "--dry-run")
    assert code == 0, err
    assert "scrub would rewrite: 1 turn(s), 1 row(s) in 1 session(s)" in out and "github_token×1" in out
    assert token not in out and "[REDACTED:github_token]" in out  # the sample is redacted
    assert snapshot(home) == before
    code, _out, err = cli("scrub")
    assert code == 1 and "rerun with --yes" in err
    assert snapshot(home) == before


# ----------------------------------------------------------------------------- trash and undo


def test_trash_then_undo_after_a_restart_restores_every_row(home: Home) -> None:
    demo(home)
    before = full_rows(home)
    code, out, err = cli("purge", "--session", "s1", "--yes")
    assert code == 0, err
    assert "a copy is in the trash for 7 days" in out
    trash = home.root / "trash"
    entries = list(trash.glob("*.arrow"))
    assert len(entries) == 1
    assert entries[0].stat().st_mode & 0o777 == 0o600 and trash.stat().st_mode & 0o777 == 0o700
    found = attacker_scan(home.root, [MARK])[MARK]
    assert found and all(f.startswith("trash/") for f in found), found
    assert "s1" not in {r.session_id for r in open_store(home=home).scan()}
    code, out, _ = cli("purge", "--trash")
    assert code == 0 and "purge by session" in out and "10 row(s)" in out

    # A new process: nothing of the first one is remembered but the files.
    done = subprocess.run(
        [*FUNES, "purge", "--undo"], env=_env(home), capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert "restored 10 row(s) removed by the purge" in done.stdout
    assert full_rows(home) == before
    assert list(trash.glob("*.arrow")) == []
    code, out, _ = cli("purge", "--log")
    assert "(undone)" in out
    # The undone session is no longer refused: rows of it may be stored again.
    from funes_core.store.purgelog import denied

    assert "s1" not in denied(home).sessions
    code, _out, err = cli("purge", "--undo")
    assert code == 1 and "the trash is empty" in err


def test_undo_of_a_scrub_puts_the_old_rows_back(home: Home) -> None:
    token = "ghp_" + "Zq8" * 12
    fill(home, {"s1": [f"export GITHUB_TOKEN={token}", "plain"]})
    before = full_rows(home)
    assert cli("scrub", "--yes")[0] == 0
    assert any("[REDACTED" in t for t, _v in full_rows(home).values())
    code, out, err = cli("purge", "--undo")
    assert code == 0 and "removed by the scrub" in out, err
    assert full_rows(home) == before


def test_trash_older_than_7_days_is_deleted_by_the_next_run(home: Home) -> None:
    demo(home)
    assert cli("purge", "--session", "s1", "--yes")[0] == 0
    (old,) = (home.root / "trash").glob("*.arrow")
    week_ago = time.time() - 8 * 86400
    os.utime(old, (week_ago, week_ago))
    assert cli("purge", "--session", "s2", "--yes")[0] == 0
    left = list((home.root / "trash").glob("*.arrow"))
    assert old not in left and len(left) == 1


def test_undo_after_the_model_changed_reembeds(home: Home) -> None:
    from funes_core.share.scrub import undo
    from funes_core.store.trash import entries, load, write_entry

    demo(home)
    assert cli("purge", "--session", "s1", "--yes")[0] == 0
    (entry,) = entries(home)
    rows = load(entry)
    entry.path.unlink()
    write_entry(
        home,
        event=entry.event,
        at=entry.at,
        op="purge",
        by="session",
        rows=rows,
        stamp=ModelStamp("another-model", 8),
    )
    report = undo(home)
    assert report.rows == 10 and report.reembed is not None and "another-model" in report.reembed
    back = [r for r in open_store(home=home).scan() if r.session_id == "s1"]
    assert len(back) == 10 and all(r.vector is None for r in back)
    assert open_store(home=home).model_stamp() == HashEmbedder().stamp


def test_no_trash_leaves_no_copy(home: Home) -> None:
    demo(home)
    assert attacker_scan(home.root, [MARK])[MARK]
    code, out, err = cli("purge", "--match", MARK, "--yes", "--no-trash")
    assert code == 0, err
    assert "no restorable copy" in out and "trash" not in out.split("no restorable copy")[1]
    assert attacker_scan(home.root, [MARK]) == {}
    assert '"trash":false' in (home.root / "purge.log").read_text()


# ----------------------------------------------------------------------------- killed purges

#: ``funes purge`` or ``funes push`` killed with SIGKILL at a chosen point of the rewrite: right
#: after the overwrite committed, before the indexes were built again (``indexes``), or after them,
#: before the old versions were deleted (``history``). A patch in the child makes the point exact.
KILL_IN_REWRITE = """
import os, signal, sys
import funes_core.store.rewrite as rw
from funes_core.store.lance import LanceStore
from funes_core.faces.cli.main import main
point = sys.argv[1]
def die(*_a, **_k):
    os.kill(os.getpid(), signal.SIGKILL)
if point == "indexes":
    LanceStore.rebuild_indexes = die
else:
    rw.drop_history = die
sys.argv = ["funes", *sys.argv[2:]]
main()
"""


def _killed(home: Home, point: str, *args: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", KILL_IN_REWRITE, point, *args],
        env=_env(home),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == -signal.SIGKILL, (proc.returncode, proc.stderr)


@pytest.mark.parametrize("point", ["indexes", "history"])
def test_a_purge_killed_after_its_rewrite_is_finished_by_the_next_run(
    home: Home, point: str, bucket: Bucket
) -> None:
    demo(home)
    add_remote(bucket)
    assert cli("push", "team")[0] == 0
    assert bucket_scan(bucket, [MARK])
    _killed(home, point, "purge", "--session", "s1", "--yes", "--no-trash")
    assert attacker_scan(home.root, [MARK]), "the positive control: the old version still holds it"
    log = (home.root / "purge.log").read_text()
    assert '"state":"intent"' in log and '"done"' not in log
    # Meanwhile the store refuses the session, and a push neither publishes nor keeps it.
    code, out, err = cli("purge")
    assert code == 0, err
    assert "finished the interrupted purge" in out
    assert attacker_scan(home.root, [MARK]) == {}
    store = open_store(home=home)
    assert "s1" not in {r.session_id for r in store.scan()}
    assert store.text_search("flushing", 3), "the indexes are there again"
    code, _out, err = cli("purge")
    assert code == 1 and "name what to purge" in err
    assert cli("push", "team")[0] == 0
    assert bucket_scan(bucket, [MARK]) == {}
    assert "s1" not in {r.session_id for r in open_memory("team", home=home).scan()}


def test_a_push_killed_while_rewriting_the_remote_is_finished_by_the_next_push(
    home: Home, bucket: Bucket
) -> None:
    demo(home)
    add_remote(bucket)
    assert cli("push", "team")[0] == 0
    assert cli("purge", "--session", "s1", "--yes", "--no-trash")[0] == 0
    _killed(home, "history", "push", "team")
    assert bucket_scan(bucket, [MARK]), "the positive control: an old version in the bucket holds it"
    code, _out, err = cli("push", "team")
    assert code == 0, err
    assert bucket_scan(bucket, [MARK]) == {}
    assert len(remote_rows(home)) == 30
    assert "s1" not in {r.session_id for r in open_memory("team", home=home).scan()}


def test_index_rebuild_previews_and_needs_yes(home: Home, tmp_path: Path) -> None:
    demo(home)
    before = snapshot(home)
    code, out, err = cli("index", "--rebuild", "--dry-run")
    assert code == 0, err
    assert "rebuild would rewrite: 40 turn(s), 40 row(s) in 4 session(s)" in out and "dry run" in out
    code, _out, err = cli("index", "--rebuild")
    assert code == 1 and "rerun with --yes" in err
    assert snapshot(home) == before and not list(home.root.glob("memory.old-*"))


def test_the_preview_names_the_old_memories_a_purge_deletes(home: Home) -> None:
    demo(home)
    (home.root / "memory.old-20261201T000000Z").mkdir()
    code, out, err = cli("purge", "--session", "s1", "--dry-run")
    assert code == 0, err
    assert "also deletes memory.old-20261201T000000Z" in out
    assert (home.root / "memory.old-20261201T000000Z").is_dir()
