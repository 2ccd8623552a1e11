"""The kit's helpers for mutators of one-JSON-document formats (exports, session documents)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from funes_contracts.files import cut_documents, cut_inside, golden_texts, json_documents, lengthen_documents


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
