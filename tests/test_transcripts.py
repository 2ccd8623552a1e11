"""``read_json_array``: the complete items of a one-array export survive a tear, and ids never shift."""

from __future__ import annotations

from pathlib import Path

import pytest

from funes_core import export_problem, read_json_array


def _read(
    tmp_path: Path, text: str | bytes
) -> tuple[list[tuple[int, dict[str, object]]], list[tuple[int, str]]]:
    path = tmp_path / "conversations.json"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    out = read_json_array(path)
    return out.records, [(s.line, s.reason) for s in out.skipped]


def test_every_object_item_is_read_in_order(tmp_path: Path) -> None:
    records, skipped = _read(tmp_path, '[\n  {"a": 1},\n  {"b": [1, {"c": "]"}]}\n]\n')
    assert records == [(1, {"a": 1}), (2, {"b": [1, {"c": "]"}]})]
    assert skipped == []


def test_an_item_that_is_not_an_object_is_skipped_and_shifts_nobody(tmp_path: Path) -> None:
    records, skipped = _read(tmp_path, '[{"a": 1}, "junk", 3, {"b": 2}]')
    assert records == [(1, {"a": 1}), (2, {"b": 2})]
    assert skipped == [(2, "a JSON str, not an object"), (3, "a JSON int, not an object")]


@pytest.mark.parametrize("tail", ['{"b": [1, "tw', '{"b": 1}', '{"b": 1},', "", " "])
def test_the_items_before_a_tear_are_kept(tmp_path: Path, tail: str) -> None:
    records, skipped = _read(tmp_path, '[{"a": "é"}, ' + tail)
    assert records[0] == (1, {"a": "é"})
    assert skipped and skipped[-1][1] == "torn"


def test_a_file_that_is_not_an_array_gives_nothing(tmp_path: Path) -> None:
    assert _read(tmp_path, '{"conversations": []}') == ([], [(0, "not a JSON array")])
    assert _read(tmp_path, "[]") == ([], [])


def test_bytes_that_are_not_utf8_spoil_only_their_string(tmp_path: Path) -> None:
    records, _ = _read(tmp_path, b'[{"a": "x\xffy"}, {"b": 1}]')
    assert records == [(1, {"a": "x\ufffdy"}), (2, {"b": 1})]


@pytest.mark.parametrize(
    ("text", "kept", "says"),
    [
        ('[{"a": 1}, {"b": ', 1, "cut short (a download or unzip not finished?): read the 1 complete"),
        ('{"user": "me"}', 0, "not a JSON array: not an export of"),
        ('[{"a": 1}]', 0, "holds no"),
    ],
)
def test_a_torn_or_wrong_export_is_said_in_one_line(tmp_path: Path, text: str, kept: int, says: str) -> None:
    path = tmp_path / "conversations.json"
    path.write_text(text, encoding="utf-8")
    problem = export_problem(read_json_array(path), kept, "ChatGPT conversations")
    assert problem is not None and says in problem and "\n" not in problem


def test_a_sound_export_has_no_problem(tmp_path: Path) -> None:
    path = tmp_path / "conversations.json"
    path.write_text('[{"a": 1}]', encoding="utf-8")
    assert export_problem(read_json_array(path), 1, "ChatGPT conversations") is None
    path.write_text("[]", encoding="utf-8")
    assert export_problem(read_json_array(path), 0, "ChatGPT conversations") is None


def test_sqlite_readonly_reads_a_store_and_leaves_no_trace(tmp_path: Path) -> None:
    import sqlite3
    from contextlib import closing

    from funes_core import sqlite_readonly

    store = tmp_path / "agent.db"
    with closing(sqlite3.connect(store)) as conn:
        conn.execute("CREATE TABLE t (v TEXT)")
        conn.execute("INSERT INTO t VALUES ('caf\u00e9')")
        conn.commit()
    before = sorted(p.name for p in tmp_path.iterdir())
    with sqlite_readonly(store) as conn:
        assert conn is not None
        rows = conn.execute("SELECT v FROM t").fetchall()
        assert rows == [("caf\u00e9".encode(),)], "rows come back as bytes"
        with pytest.raises(sqlite3.OperationalError):
            conn.execute("INSERT INTO t VALUES ('x')")
    assert sorted(p.name for p in tmp_path.iterdir()) == before, "no -wal, -shm or journal left beside it"
    with sqlite_readonly(tmp_path / "missing.db") as conn:
        assert conn is None
    assert not (tmp_path / "missing.db").exists()
