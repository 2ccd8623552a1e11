"""A file that is not Cursor's chat store gives no sessions and one line saying why, on stderr."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from funes_cursor import CursorConverter


def test_a_file_that_is_not_sqlite_is_said_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "state.vscdb"
    store.write_text("not a database\n", encoding="utf-8")
    assert CursorConverter().sessions_in(store) == []
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1 and f"{store}: not a SQLite database" in err


def test_a_database_without_chats_is_said_when_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "workspaceStorage" / "ab12").mkdir(parents=True)
    store = tmp_path / "workspaceStorage" / "ab12" / "state.vscdb"
    with closing(sqlite3.connect(store)) as db:
        db.execute("CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
        db.commit()
    assert CursorConverter().sessions_in(store) == []
    assert "has no cursorDiskKV table" in capsys.readouterr().err
    # Found in a folder search (a workspace store beside the global one), it is passed over quietly.
    assert CursorConverter().sessions_in(tmp_path) == []
    assert capsys.readouterr().err == ""
