"""The Hermes converter on small databases written here, and on a real Hermes session.

Each test builds its ``state.db`` from SQL (``funes_hermes.fixtures.build_db``), so what is
being converted is readable right in the test.
"""

from __future__ import annotations

import ast
import hashlib
import json
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from funes_core import Block, Turn, parse_line, read_turns_file, turns_to_jsonl
from funes_hermes import HermesConverter
from funes_hermes.fixtures import FIXTURES, build_db, script_for

SID = "20260302_091500_a1b2c3"
SAMPLE = Path(__file__).resolve().parents[3].parent / "shared" / "corpus" / "harness-samples"
SAMPLE_DUMP = SAMPLE / "hermes_state_db_dump.txt"


def q(value: object) -> str:
    """An SQL literal."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, int | float):
        return repr(value)
    parts = ["'" + part.replace("'", "''") + "'" for part in str(value).split("\x00")]
    return " || char(0) || ".join(parts)


def rows_sql(rows: list[dict[str, object]]) -> str:
    return "".join(
        f"INSERT INTO messages ({', '.join(r)}) VALUES ({', '.join(q(v) for v in r.values())});\n"
        for r in rows
    )


def session_sql(session_id: str = SID, cwd: str | None = "/work/app", parent: str | None = None) -> str:
    return (
        "INSERT INTO sessions (id, source, started_at, cwd, parent_session_id) "
        f"VALUES ({q(session_id)}, 'cli', 1772442900, {q(cwd)}, {q(parent)});\n"
    )


def convert(db: Path) -> list[Turn]:
    converter = HermesConverter()
    return [turn for ref in converter.sessions_in(db) for turn in converter.convert(ref)]


def one(tmp_path: Path, *rows: dict[str, object], cwd: str | None = "/work/app") -> list[Turn]:
    db = build_db(
        session_sql(cwd=cwd) + rows_sql([{"session_id": SID, **r} for r in rows]), tmp_path / "state.db"
    )
    return convert(db)


# -- the mapping, one rule at a time --------------------------------------------------------------


def test_each_role_becomes_its_blocks(tmp_path: Path) -> None:
    calls = [
        {"id": "c1", "type": "function", "function": {"name": "terminal", "arguments": '{"command": "ls"}'}},
        {"id": "c2", "type": "function", "function": {"name": "patch", "arguments": {"path": "a", "n": 1}}},
        {"id": "c3", "type": "function", "function": {"name": "todo"}},
    ]
    turns = one(
        tmp_path,
        {"id": 1, "role": "user", "content": "hi ✓", "timestamp": 1772442901.5},
        {
            "id": 2,
            "role": "assistant",
            "content": "Looking.",
            "reasoning": "ignored: reasoning_content wins",
            "reasoning_content": "think",
            "tool_calls": json.dumps(calls),
            "timestamp": 1772442902,
        },
        {
            "id": 3,
            "role": "tool",
            "content": "a.py",
            "tool_call_id": "c1",
            "tool_name": "terminal",
            "timestamp": 3,
        },
        {"id": 4, "role": "tool", "content": "ok", "tool_call_id": "c2", "timestamp": 1772442904},
        {"id": 5, "role": "system", "content": "not a turn", "timestamp": 1772442905},
    )
    assert [(t.turn_uuid, t.seq, t.role, t.ts) for t in turns] == [
        ("1", 0, "user", "2026-03-02T09:15:01.500000Z"),
        ("2", 1, "assistant", "2026-03-02T09:15:02Z"),
        ("3", 2, "tool", "1970-01-01T00:00:03Z"),
        ("4", 3, "tool", "2026-03-02T09:15:04Z"),
    ]
    assert all(t.cwd == "/work/app" and t.harness == "hermes" and t.session_id == SID for t in turns)
    assert turns[0].blocks == (Block("text", "hi ✓"),)
    assert turns[1].blocks == (
        Block("thinking", "think"),
        Block("text", "Looking."),
        Block("tool_use", '{"command": "ls"}', "terminal", "c1"),
        Block("tool_use", '{"path":"a","n":1}', "patch", "c2"),
        Block("tool_use", "{}", "todo", "c3"),
    )
    assert turns[2].blocks == (Block("tool_result", "a.py", "terminal", "c1"),)
    assert turns[3].blocks == (Block("tool_result", "ok", "patch", "c2"),), "name from the call"


def test_missing_and_invalid_times_take_the_previous_turns(tmp_path: Path) -> None:
    schema = (FIXTURES / "schema.sql").read_text().replace("timestamp REAL NOT NULL", "timestamp REAL")
    rows = rows_sql(
        [
            {"id": 1, "session_id": SID, "role": "user", "content": "a", "timestamp": None},
            {"id": 2, "session_id": SID, "role": "assistant", "content": "b", "timestamp": 1772442901},
            {"id": 3, "session_id": SID, "role": "user", "content": "c", "timestamp": "soon"},
            {"id": 4, "session_id": SID, "role": "user", "content": " ", "timestamp": 1772442999},
            {"id": 5, "session_id": SID, "role": "assistant", "content": "d", "timestamp": 1e300},
        ]
    )
    turns = convert(build_db(schema + session_sql() + rows, tmp_path / "state.db"))
    assert [(t.turn_uuid, t.ts) for t in turns] == [
        ("1", "1970-01-01T00:00:00Z"),
        ("2", "2026-03-02T09:15:01Z"),
        ("3", "2026-03-02T09:15:01Z"),
        ("5", "2026-03-02T09:15:01Z"),  # row 4 was blank: dropped, and its time with it
    ]
    assert [t.seq for t in turns] == [0, 1, 2, 3]


def test_content_is_read_never_api_content(tmp_path: Path) -> None:
    turns = one(
        tmp_path,
        {
            "id": 1,
            "role": "user",
            "content": "fix it",
            "api_content": "<memory>recalled</memory>\nfix it",
            "timestamp": 1,
        },
    )
    assert turns[0].blocks == (Block("text", "fix it"),)


def test_every_row_whatever_its_active_state(tmp_path: Path) -> None:
    turns = one(
        tmp_path,
        {"id": 1, "role": "user", "content": "old", "active": 0, "compacted": 1, "timestamp": 1},
        {"id": 2, "role": "assistant", "content": "[summary of old]", "timestamp": 2},
    )
    assert [t.turn_uuid for t in turns] == ["1", "2"]


def test_rows_are_read_in_id_order_not_by_time(tmp_path: Path) -> None:
    turns = one(
        tmp_path,
        {"id": 7, "role": "user", "content": "first", "timestamp": 50},
        {"id": 9, "role": "assistant", "content": "second", "timestamp": 10},
    )
    assert [(t.turn_uuid, t.seq, t.blocks[0].text) for t in turns] == [("7", 0, "first"), ("9", 1, "second")]


def test_structured_content_keeps_its_text_parts(tmp_path: Path) -> None:
    parts = [{"type": "text", "text": "look"}, {"type": "image_url", "image_url": {"url": "data:,"}}, "plain"]
    turns = one(
        tmp_path, {"id": 1, "role": "user", "content": "\x00json:" + json.dumps(parts), "timestamp": 1}
    )
    assert turns[0].blocks == (Block("text", "look"), Block("text", "plain"))


def test_lone_surrogates_from_json_escapes_become_replacement_characters(tmp_path: Path) -> None:
    calls = '[{"id": "c", "function": {"name": "x", "arguments": {"s": "\\ud800!"}}}]'
    turns = one(tmp_path, {"id": 1, "role": "assistant", "tool_calls": calls, "timestamp": 1})
    assert turns[0].blocks[0].text == '{"s":"\ufffd!"}'
    assert parse_line(turns_to_jsonl(turns).split("\n")[0]) == turns[0]


def test_blank_means_unicode_white_space(tmp_path: Path) -> None:
    turns = one(
        tmp_path,
        {"id": 1, "role": "user", "content": "\u2003\u3000\n\t", "timestamp": 1},
        {"id": 2, "role": "user", "content": "\x1c", "timestamp": 2},  # isspace(), but not White_Space
    )
    assert [t.turn_uuid for t in turns] == ["2"]


def test_sessions_table_without_cwd_and_empty_cwd(tmp_path: Path) -> None:
    assert one(tmp_path, {"id": 1, "role": "user", "content": "a", "timestamp": 1}, cwd="")[0].cwd is None
    old = (
        "CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT);\n"
        "CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id TEXT, role TEXT, content TEXT);\n"
        f"INSERT INTO sessions VALUES ({q(SID)}, 'cli');\n"
        f"INSERT INTO messages VALUES (1, {q(SID)}, 'user', 'hello');\n"
    )
    turns = convert(build_db(old, tmp_path / "old" / "state.db"))
    assert [(t.turn_uuid, t.ts, t.cwd) for t in turns] == [("1", "1970-01-01T00:00:00Z", None)]


def test_session_ids_that_cannot_name_a_file_are_skipped(tmp_path: Path) -> None:
    sql = session_sql() + rows_sql(
        [
            {"id": 1, "session_id": "../escape", "role": "user", "content": "x", "timestamp": 1},
            {"id": 2, "session_id": "a:b", "role": "user", "content": "x", "timestamp": 1},
            {"id": 3, "session_id": SID, "role": "user", "content": "kept", "timestamp": 1},
        ]
    )
    db = build_db(sql, tmp_path / "state.db")
    assert [r.session_id for r in HermesConverter().sessions_in(db)] == [SID]


def test_what_is_not_a_hermes_database_gives_nothing(tmp_path: Path) -> None:
    converter = HermesConverter()
    (tmp_path / "notes.txt").write_text("hello")
    (tmp_path / "state.db").write_bytes(b"SQLite format 3\x00 torn")
    other = tmp_path / "other.db"
    with closing(sqlite3.connect(other)) as conn:
        conn.execute("CREATE TABLE messages (id INTEGER, body TEXT)")
    for path in (tmp_path / "notes.txt", tmp_path / "state.db", other, tmp_path / "missing.db", tmp_path):
        assert converter.sessions_in(path) == []


# -- reading in place -------------------------------------------------------------------------


def test_reading_never_changes_the_database(tmp_path: Path) -> None:
    db = build_db((FIXTURES / "cases" / "basic" / "state.sql").read_text(), tmp_path / "state.db")
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    convert(db)
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before


def test_rows_hermes_is_still_writing_are_not_seen_until_committed(tmp_path: Path) -> None:
    db = build_db(
        session_sql()
        + rows_sql([{"id": 1, "session_id": SID, "role": "user", "content": "a", "timestamp": 1}]),
        tmp_path / "state.db",
    )
    with closing(sqlite3.connect(db)) as writer:
        writer.execute("PRAGMA journal_mode = WAL")
        writer.execute("BEGIN")
        writer.execute(
            rows_sql(
                [{"id": 2, "session_id": SID, "role": "assistant", "content": "b", "timestamp": 2}]
            ).rstrip(";\n")
        )
        assert [t.turn_uuid for t in convert(db)] == ["1"]
        writer.commit()
        assert [t.turn_uuid for t in convert(db)] == ["1", "2"]


def test_a_folder_is_searched_for_state_databases(tmp_path: Path) -> None:
    build_db(
        session_sql("20260101_000000_aaaaaa")
        + rows_sql(
            [
                {
                    "id": 1,
                    "session_id": "20260101_000000_aaaaaa",
                    "role": "user",
                    "content": "a",
                    "timestamp": 1,
                }
            ]
        ),
        tmp_path / "a" / "state.db",
    )
    build_db(
        session_sql("20260101_000000_bbbbbb")
        + rows_sql(
            [
                {
                    "id": 1,
                    "session_id": "20260101_000000_bbbbbb",
                    "role": "user",
                    "content": "b",
                    "timestamp": 2,
                }
            ]
        ),
        tmp_path / "b" / "deeper" / "state.db",
    )
    assert [r.session_id for r in HermesConverter().sessions_in(tmp_path)] == [
        "20260101_000000_aaaaaa",
        "20260101_000000_bbbbbb",
    ]


def test_discover_honours_hermes_home_only_for_the_process_own_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home, elsewhere = tmp_path / "home", tmp_path / "profiles" / "work"
    build_db(
        session_sql()
        + rows_sql([{"id": 1, "session_id": SID, "role": "user", "content": "a", "timestamp": 1}]),
        elsewhere / "state.db",
    )
    home.mkdir()
    monkeypatch.setenv("HERMES_HOME", str(elsewhere))
    monkeypatch.setenv("HOME", str(home))
    assert [r.session_id for r in HermesConverter().discover(home)] == [SID]
    assert HermesConverter().discover(tmp_path / "another-home") == []


# -- growth and determinism -------------------------------------------------------------------


def test_a_grown_session_keeps_its_earlier_turns_byte_for_byte(tmp_path: Path) -> None:
    rows = [
        {"id": 1, "session_id": SID, "role": "user", "content": "start", "timestamp": 1772442901},
        {
            "id": 2,
            "session_id": SID,
            "role": "assistant",
            "content": "",
            "timestamp": 1772442902,
            "tool_calls": '[{"id": "c1", "function": {"name": "terminal", "arguments": "{}"}}]',
        },
        {
            "id": 3,
            "session_id": SID,
            "role": "tool",
            "content": "out",
            "tool_call_id": "c1",
            "timestamp": None,
        },
    ]
    later = [
        {
            "id": 4,
            "session_id": SID,
            "role": "tool",
            "content": "late",
            "tool_call_id": "c1",
            "timestamp": 1772442990,
        },
        {"id": 6, "session_id": SID, "role": "assistant", "content": "done", "timestamp": 1772442999},
    ]
    schema = (FIXTURES / "schema.sql").read_text().replace("timestamp REAL NOT NULL", "timestamp REAL")
    db = build_db(schema + session_sql() + rows_sql(rows), tmp_path / "state.db")
    first = turns_to_jsonl(convert(db))
    assert first == turns_to_jsonl(convert(db)), "deterministic"
    with closing(sqlite3.connect(db)) as conn:
        conn.executescript(rows_sql(later))
    grown = turns_to_jsonl(convert(db))
    assert grown.startswith(first)
    assert [json.loads(line)["turn_uuid"] for line in grown.split("\n") if line] == ["1", "2", "3", "4", "6"]


# -- the contract fixtures are built from their SQL ----------------------------------------------


def _dump(db: Path) -> list[str]:
    with closing(sqlite3.connect(f"{db.absolute().as_uri()}?mode=ro", uri=True)) as conn:
        return list(conn.iterdump())


@pytest.mark.parametrize("source", sorted(FIXTURES.rglob("state.sql")), ids=lambda p: p.parent.name)
def test_fixture_databases_match_their_sql(source: Path, tmp_path: Path) -> None:
    shipped = tmp_path / "shipped.db"
    shipped.write_bytes(source.with_name("state.db").read_bytes())
    rebuilt = build_db(source.read_text(encoding="utf-8"), tmp_path / "rebuilt.db")
    assert _dump(shipped) == _dump(rebuilt), (
        f"{source.with_name('state.db')} is stale: run `uv run python -m funes_hermes.fixtures`"
    )


# -- a real Hermes session ------------------------------------------------------------------------


def _sample_rows() -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    sessions: list[tuple[object, ...]] = []
    messages: list[tuple[object, ...]] = []
    for line in SAMPLE_DUMP.read_text(encoding="utf-8").splitlines():
        kind, _, literal = line.partition(" ")
        (sessions if kind == "session" else messages).append(ast.literal_eval(literal))
    return sessions, messages


def _sample_db(path: Path, messages: list[tuple[object, ...]]) -> Path:
    """A state.db holding the dumped rows (the dump has no message times: the session start is used)."""
    sessions, _ = _sample_rows()
    sql = ""
    columns = "id, source, model, started_at, ended_at, end_reason, message_count, tool_call_count, cwd"
    for session in sessions:
        sql += f"INSERT INTO sessions ({columns}) VALUES ({', '.join(q(v) for v in session)});\n"
    starts = {s[0]: s[3] for s in sessions}
    columns = "id, session_id, role, content, tool_call_id, tool_calls, tool_name, timestamp"
    for message in messages:
        values = (*message, starts[message[1]])
        sql += f"INSERT INTO messages ({columns}) VALUES ({', '.join(q(v) for v in values)});\n"
    with closing(sqlite3.connect(":memory:")) as check:
        check.executescript(script_for(sql))  # the rebuilt script runs as a whole
    return build_db(sql, path)


needs_sample = pytest.mark.skipif(
    not SAMPLE_DUMP.is_file(), reason=f"the real Hermes sample is not here ({SAMPLE_DUMP} is absent)"
)


@needs_sample
def test_real_session_converts_completely_and_validly(tmp_path: Path) -> None:
    _, messages = _sample_rows()
    db = _sample_db(tmp_path / "state.db", messages)
    converter = HermesConverter()
    refs = converter.sessions_in(db)
    assert [r.session_id for r in refs] == sorted({str(m[1]) for m in messages})
    writes = [w for ref in refs for w in converter.write_spool(ref, tmp_path / "funes-home")]
    turns = [t for w in writes for t in read_turns_file(w.path).turns]  # validates every line

    # Counted from the SQL rows alone: every non-blank content, and every tool call, is there.
    by_uuid = {t.turn_uuid: t for t in turns}
    expected_blocks = 0
    for mid, _sid, role, content, call_id, tool_calls, tool_name in messages:
        if role not in ("user", "assistant", "tool"):
            continue
        turn = by_uuid[str(mid)]
        texts = [b.text for b in turn.blocks]
        if isinstance(content, str) and content.strip():
            expected_blocks += 1
            assert content in texts, f"row {mid}: its content is missing"
        if role == "tool":
            assert turn.blocks[0].tool_use_id == call_id and turn.blocks[0].tool_name == tool_name
        if isinstance(tool_calls, str) and tool_calls.strip():
            try:
                expected_blocks += len(json.loads(tool_calls))
            except ValueError:  # the dump cut it off mid-JSON: kept verbatim
                expected_blocks += 1
                assert tool_calls in texts
    assert sum(len(t.blocks) for t in turns) == expected_blocks
    assert len(turns) == sum(1 for m in messages if m[2] in ("user", "assistant", "tool"))


@needs_sample
def test_real_session_ids_are_stable_across_runs_and_growth(tmp_path: Path) -> None:
    _, messages = _sample_rows()
    half = len(messages) // 2
    early = convert(_sample_db(tmp_path / "early" / "state.db", messages[:half]))
    full = convert(_sample_db(tmp_path / "full" / "state.db", messages))
    again = convert(_sample_db(tmp_path / "again" / "state.db", messages))
    assert turns_to_jsonl(full) == turns_to_jsonl(again)
    assert early == full[: len(early)], "the earlier turns come back identical"
    assert len(full) > len(early) > 0
