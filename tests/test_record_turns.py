"""The public helpers for transcripts in Anthropic's message form whose records carry their own id.

``RecordTurns`` keeps a record written twice once, and a repeated id with other content as
``<id>@<n>``; ``anthropic_blocks`` reads one message's content. funes-claude and funes-droid build
on both, so their own tests cover the agents' files; these pin the helpers' rules alone.
"""

from __future__ import annotations

from funes_core import Block, RecordTurns, anthropic_blocks

TS = "2026-03-02T09:00:00Z"


def test_a_record_written_again_yields_its_turn_once() -> None:
    turns = RecordTurns("s1", "acme", cwd="/w")
    assert turns.add("u1", TS, "user", [Block("text", "hi")])
    assert not turns.add("u1", TS, "user", [Block("text", "hi")])
    assert [(t.turn_uuid, t.seq, t.cwd, t.harness, t.session_id) for t in turns.turns] == [
        ("u1", 0, "/w", "acme", "s1")
    ]


def test_a_repeated_id_with_other_content_is_kept_as_its_nth_occurrence() -> None:
    turns = RecordTurns("s1", "acme")
    turns.add("u1", TS, "user", [Block("text", "first")])
    assert not turns.add("u1", TS, "user", [])  # no block: no turn, but the second occurrence
    assert turns.add("u1", TS, "assistant", [Block("text", "first")], parent_uuid="u0")
    assert turns.add("u2", TS, "user", [Block("text", "other")])
    assert [(t.turn_uuid, t.seq, t.role, t.parent_uuid) for t in turns.turns] == [
        ("u1", 0, "user", None),
        ("u1@3", 1, "assistant", "u0"),
        ("u2", 2, "user", None),
    ]


def test_anthropic_blocks_reads_each_part_and_names_a_result_after_the_call_before_it() -> None:
    names: dict[str, str] = {}
    call = [
        {"type": "text", "text": "looking"},
        {"type": "thinking", "thinking": "hmm"},
        {"type": "tool_use", "id": "t:1", "name": "Read", "input": {"b": 1, "a": "é"}},
        {"type": "image", "source": {}},
        {"type": "text", "text": " \u2003"},
    ]
    assert anthropic_blocks(call, names) == [
        Block("text", "looking"),
        Block("thinking", "hmm"),
        Block("tool_use", '{"b":1,"a":"é"}', tool_name="Read", tool_use_id="t:1"),
    ]
    result = [{"type": "tool_result", "tool_use_id": "t:1", "content": [{"type": "text", "text": "x"}] * 2}]
    assert anthropic_blocks(result, names) == [
        Block("tool_result", "x\nx", tool_name="Read", tool_use_id="t:1")
    ]
    assert anthropic_blocks("plain", names) == [Block("text", "plain")]
    assert anthropic_blocks("  ", names) == []


def test_anthropic_blocks_cleans_ids_and_skips_bare_strings_when_asked() -> None:
    names: dict[str, str] = {}
    content = ["bare", {"type": "tool_use", "id": " t:1 ", "name": "Bash", "input": {}}]
    assert anthropic_blocks(content, names) == [
        Block("text", "bare"),
        Block("tool_use", "{}", tool_name="Bash", tool_use_id=" t:1 "),
    ]
    assert anthropic_blocks(content, {}, clean_ids=True, bare_strings=False) == [
        Block("tool_use", "{}", tool_name="Bash", tool_use_id="t-1")
    ]
    result = [{"type": "tool_result", "tool_use_id": "t-1", "content": {"ok": True}}]
    assert anthropic_blocks(result, {"t-1": "Bash"}, clean_ids=True) == [
        Block("tool_result", '{"ok":true}', tool_name="Bash", tool_use_id="t-1")
    ]
