"""The kit's helpers for mutators of one-document formats (exports, session documents) and SQLite stores."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

from funes_contracts.files import (
    corrupt_after_first,
    cut_documents,
    cut_inside,
    golden_texts,
    json_documents,
    lengthen_documents,
    tear_newest_row,
)


def _golden(path: Path, *texts: str) -> Path:
    lines = [json.dumps({"blocks": [{"block_type": "text", "text": t}]}) for t in texts]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_golden_texts_are_the_block_texts_and_none_without_a_golden(tmp_path: Path) -> None:
    golden = _golden(tmp_path / "expected.funes.jsonl", "first answer", "line\u2028with a separator")
    assert golden_texts(golden) == ["first answer", "line\u2028with a separator"]
    assert golden_texts(tmp_path / "missing.jsonl") == []


def test_cut_inside_cuts_halfway_through_the_last_place_of_the_value() -> None:
    text = json.dumps([{"t": "café au lait"}, {"t": "café au lait"}], ensure_ascii=False)
    torn = cut_inside(text, "café au lait")
    assert torn is not None
    assert torn == text[: text.rfind("café au lait") + len("café au lait") // 2]
    assert torn.count("café au lait") == 1, "the cut is in the last place, not the first"
    assert cut_inside(text, "absent") is None
    assert cut_inside(text, "") is None


def test_lengthen_documents_writes_the_first_document_holding_a_kept_string(tmp_path: Path) -> None:
    golden = _golden(tmp_path / "expected.funes.jsonl", "the long answer that is kept")
    for name, value in (("a", {"x": "dropped text"}), ("b", {"x": "the long answer that is kept"})):
        (tmp_path / name).mkdir()
        (tmp_path / name / "doc.json").write_text(json.dumps(value), encoding="utf-8")
    written: dict[Path, Any] = {}

    def write(path: Path, data: Any) -> None:
        written[path] = data

    documents = json_documents(tmp_path, "doc.json")
    assert [p.parent.name for p, _ in documents] == ["a", "b"]
    assert lengthen_documents(documents, "+FILLER", golden, write) is True
    assert written == {tmp_path / "b" / "doc.json": {"x": "the long answer that is kept+FILLER"}}
    assert lengthen_documents(documents[:1], "+FILLER", golden, write) is False


def test_cut_documents_cuts_each_file_inside_its_value_and_leaves_the_rest_whole(tmp_path: Path) -> None:
    one, two = tmp_path / "one.json", tmp_path / "two.json"
    one.write_text('[{"text": "the last words"}]', encoding="utf-8")
    two.write_text('[{"text": "kept whole"}]', encoding="utf-8")
    documents = [(one, [{"text": "the last words"}]), (two, [{"text": "kept whole"}])]
    assert cut_documents(documents, lambda data: "" if data[0]["text"] == "kept whole" else data[0]["text"])
    assert one.read_text(encoding="utf-8") == '[{"text": "the las'
    assert two.read_text(encoding="utf-8") == '[{"text": "kept whole"}]'
    assert not cut_documents([(two, [])], lambda data: "")


def test_the_sqlite_mutators_tear_the_newest_row_and_insert_an_unreadable_one(tmp_path: Path) -> None:
    db = tmp_path / "case" / "store.db"
    db.parent.mkdir()
    with closing(sqlite3.connect(db)) as conn:
        conn.execute("CREATE TABLE msg (id TEXT, session TEXT, body TEXT, t INTEGER, u INTEGER)")
        conn.executemany(
            "INSERT INTO msg VALUES (?, 's', ?, ?, ?)", [("a", '{"x": 1}', 1, 1), ("b", '{"y": 22}', 2, 2)]
        )
        conn.commit()
    assert tear_newest_row(tmp_path, "*.db", "msg", "body", "t DESC")
    first = "SELECT id, session, t FROM msg ORDER BY t LIMIT 1"
    insert = "INSERT INTO msg VALUES (?, ?, CAST(x'7bc328e2' AS TEXT), ?, ?)"
    assert corrupt_after_first(tmp_path, "*.db", first, insert)
    with closing(sqlite3.connect(db)) as conn:
        conn.text_factory = bytes
        rows = conn.execute("SELECT id, body, t FROM msg ORDER BY t, id").fetchall()
    assert rows == [(b"a", b'{"x": 1}', 1), (b"a0", b"\x7b\xc3\x28\xe2", 2), (b"b", b'{"y"', 2)]
    assert not tear_newest_row(tmp_path / "nothing", "*.db", "msg", "body", "t DESC")
