"""Every real Claude Code transcript of the shared corpus converts, completely and stably.

The corpus (``shared/corpus`` in the folder beside the checkout: sessions written by Claude
Code 1.0.117 to 2.1.197, subagents and compaction agents included) is not part of the project,
so these tests skip, saying why, where it is absent. What they prove, file by file:

* the conversion validates against the turns format (``parse_line`` and ``read_turns_file``);
* every non-blank text and thinking block of every user/assistant record is in the output, in
  the turn with the record's uuid (counted here independently, from the raw JSON);
* two fresh conversions give the same bytes;
* the transcript cut after any line N, then completed, gives the same ids and seqs for the
  turns it had (sampled cut points on long files).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from funes_claude.converter import ClaudeConverter
from funes_core import Turn, parse_line, read_turns_file, turns_to_jsonl

REPO = Path(__file__).resolve().parents[3]
SHARED = REPO / ".." / "shared"
CORPUS = SHARED / "corpus"


def _transcripts() -> list[Path]:
    found = sorted((CORPUS / "claude").rglob("*.jsonl")) if (CORPUS / "claude").is_dir() else []
    sample = CORPUS / "harness-samples" / "claude_transcript.jsonl"
    return [*found, *([sample] if sample.is_file() else [])]


TRANSCRIPTS = _transcripts()
pytestmark = pytest.mark.skipif(
    not TRANSCRIPTS, reason=f"the shared corpus is absent ({CORPUS.resolve()} holds no Claude transcript)"
)


def _id(path: Path) -> str:
    return path.relative_to(CORPUS).as_posix() if path.is_relative_to(CORPUS) else path.name


def convert(path: Path) -> list[Turn]:
    converter = ClaudeConverter()
    return [turn for ref in converter.sessions_in(path) for turn in converter.convert(ref)]


def _source_blocks(path: Path) -> set[tuple[str, str, str]]:
    """(uuid, kind, text) of every non-blank text/thinking block, read straight from the JSON."""
    wanted: set[tuple[str, str, str]] = set()
    for raw in path.read_bytes().split(b"\n"):
        try:
            record = json.loads(raw)
        except ValueError:
            continue
        if not isinstance(record, dict) or record.get("type") not in ("user", "assistant"):
            continue
        message = record.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        uuid = str(record.get("uuid"))
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        for part in content if isinstance(content, list) else []:
            if not isinstance(part, dict):
                continue
            for kind, key in (("text", "text"), ("thinking", "thinking")):
                text = part.get(key)
                if part.get("type") == kind and isinstance(text, str) and text.strip():
                    wanted.add((uuid, kind, text))
    return wanted


def test_the_corpus_is_all_there() -> None:
    names = {p.name for p in TRANSCRIPTS}
    assert len(TRANSCRIPTS) >= 14, names
    assert any(p.parent.name == "subagents" for p in TRANSCRIPTS), "subagent files are covered"


@pytest.mark.parametrize("path", TRANSCRIPTS, ids=[_id(p) for p in TRANSCRIPTS])
def test_every_transcript_converts_validly_and_completely(path: Path, tmp_path: Path) -> None:
    turns = convert(path)
    source = _source_blocks(path)
    if not source:
        assert turns == [], "a file without messages (summaries, snapshots) yields no turn"
        return
    assert turns, f"{path.name} holds messages but converted to nothing"
    for turn in turns:
        assert parse_line(turns_to_jsonl([turn]), path=path.name) == turn
    writes = ClaudeConverter().write_turns(turns, tmp_path)
    for write in writes:
        assert read_turns_file(write.path).turns == [t for t in turns if t.session_id == write.session_id]
    emitted = {
        (turn.turn_uuid.split("@")[0], block.block_type, block.text)
        for turn in turns
        for block in turn.blocks
        if block.block_type in ("text", "thinking")
    }
    missing = source - emitted
    assert not missing, f"{len(missing)} blocks the agent wrote are missing, e.g. {next(iter(missing))}"
    by_session: dict[str, list[int]] = {}
    for turn in turns:
        by_session.setdefault(turn.session_id, []).append(turn.seq)
    assert all(seqs == list(range(len(seqs))) for seqs in by_session.values())


@pytest.mark.parametrize("path", TRANSCRIPTS, ids=[_id(p) for p in TRANSCRIPTS])
def test_ids_are_stable_across_runs_and_growth(path: Path, tmp_path: Path) -> None:
    first = convert(path)
    assert turns_to_jsonl(convert(path)) == turns_to_jsonl(first), "two runs, the same bytes"
    keys = [(t.session_id, t.turn_uuid, t.seq) for t in first]
    lines = path.read_bytes().splitlines(keepends=True)
    step = max(1, len(lines) // 25)
    grown = tmp_path / path.relative_to(path.parents[2] if path.parent.name == "subagents" else path.parent)
    grown.parent.mkdir(parents=True, exist_ok=True)
    for cut in [*range(0, len(lines), step), len(lines) - 1]:
        grown.write_bytes(b"".join(lines[:cut]) + lines[cut][: len(lines[cut]) // 2])  # mid-write
        earlier = [(t.session_id, t.turn_uuid, t.seq) for t in convert(grown)]
        assert earlier == keys[: len(earlier)], f"cut after line {cut}: earlier turns changed ids or seqs"
    grown.write_bytes(b"".join(lines))
    assert [(t.session_id, t.turn_uuid, t.seq) for t in convert(grown)] == keys, "completed: the same"
