"""OpenCode rules the golden case does not isolate: the message still being written, the hook."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from funes_opencode import contract_fixtures as fixtures
from funes_opencode.converter import OpenCodeConverter
from funes_opencode.hook import locate

BASIC = fixtures.FIXTURES / "cases" / "basic" / "opencode.sql"
SID = "ses_1f2e3d4c5bffeA1b2C3d4E5f6G"
LAST = "msg_2a1b3c4d9001aAbBcCdDeEfF05"  # the assistant message still being written in the case


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return fixtures.build_db(BASIC.read_text(encoding="utf-8"), tmp_path / "opencode.db")


def uuids(db: Path) -> list[str]:
    converter = OpenCodeConverter()
    return [t.turn_uuid for t in converter.convert(converter.sessions_in(db)[0])]


def test_the_message_being_written_waits_until_it_completes(db: Path) -> None:
    assert LAST not in uuids(db)
    with closing(sqlite3.connect(db)) as conn:
        (data,) = conn.execute("SELECT data FROM message WHERE id = ?", (LAST,)).fetchone()
        info = json.loads(data)
        info["time"]["completed"] = info["time"]["created"] + 5000
        conn.execute("UPDATE message SET data = ? WHERE id = ?", (json.dumps(info), LAST))
        conn.commit()
    assert uuids(db)[-1] == LAST


def test_an_unfinished_message_followed_by_others_was_abandoned_and_is_kept(db: Path) -> None:
    with closing(sqlite3.connect(db)) as conn:
        conn.execute(
            "INSERT INTO message VALUES (?, ?, 1772441800000, 1772441800000, ?)",
            ("msg_2a1b3c4da001aAbBcCdDeEfF06", SID, json.dumps({"role": "user", "time": {"created": 1}})),
        )
        conn.commit()
    assert uuids(db)[-2:] == [LAST, "msg_2a1b3c4da001aAbBcCdDeEfF06"]


def test_the_hook_names_the_databases_opencode_used_and_the_session(db: Path, tmp_path: Path) -> None:
    data = tmp_path / "xdg-data"
    (data / "opencode").mkdir(parents=True)
    moved = data / "opencode" / "opencode-beta.db"
    db.rename(moved)
    home = tmp_path / "home"
    env = {"HOME": str(home), "XDG_DATA_HOME": str(data)}
    found = locate({"hook_event_name": "session.idle", "session_id": SID}, env)
    assert found is not None and found.paths == (str(moved),) and found.sessions == (SID,)
    assert locate({"session_id": "not-a-session; rm -rf /"}, env) is None
    assert locate({"session_id": SID}, {"HOME": str(home)}) is None, "no database under the default place"
