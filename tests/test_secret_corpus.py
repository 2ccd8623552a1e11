"""The labelled corpus of secret formats (``secret_corpus.py``) through the redactor and the push gate.

Issue 29's probe found 10 of 53 formats reaching the bucket, a token in a ``session_id`` pushed
unchecked, and a token glued to a tool name (``Bash_ghp_…``) stored unredacted. Each format here
must be replaced by its own kind's marker at index time, and held back by the gate at push time
(the gate also sees rows an older funes stored unredacted).
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from funes_core.faces.cli.app import make_app
from funes_core.home import Home
from funes_core.ingest.chunking import chunk_turn
from funes_core.ingest.engine import IndexOptions, run_index
from funes_core.models.embed import HashEmbedder
from funes_core.redact import FORMAT_KINDS, KINDS, redact
from funes_core.share.gate import scan_block
from funes_core.share.memory import open_memory
from funes_core.turns.format import Block, Turn, write_turns_file

sys.path.insert(0, str(Path(__file__).resolve().parent))
from secret_corpus import FORMATS, Format, SecretMaker

SEED = 29


def _case(fmt: Format) -> tuple[str, str]:
    return fmt.make(SecretMaker(SEED + FORMATS.index(fmt)))


@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f.name)
def test_each_format_is_redacted_as_its_kind(fmt: Format) -> None:
    text, secret = _case(fmt)
    assert secret in text
    out, kinds = redact(text)
    assert secret not in out, f"{fmt.name} stored as is"
    assert f"[REDACTED:{fmt.kind}]" in out and kinds[fmt.kind] >= 1, (out, kinds)


@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f.name)
def test_each_format_is_held_back_by_the_push_gate(fmt: Format) -> None:
    text, _secret = _case(fmt)
    assert not scan_block(text).clean, f"{fmt.name} would reach the bucket"


def test_the_corpus_counts() -> None:
    """The figure docs/security.md quotes; the probe's ten formats are all in it."""
    redacted = held = 0
    for fmt in FORMATS:
        text, secret = _case(fmt)
        redacted += secret not in redact(text)[0]
        held += not scan_block(text).clean
    probe = [f for f in FORMATS if f.probe]
    n = len(FORMATS)
    print(f"\nsecret corpus: {redacted}/{n} formats redacted, {held}/{n} held by the gate")
    assert len(FORMATS) >= 50 and len({f.name for f in FORMATS}) == len(FORMATS)
    assert len(probe) >= 10
    assert redacted == held == len(FORMATS)
    assert {f.kind for f in FORMATS} <= KINDS
    assert {f.kind for f in FORMATS} >= FORMAT_KINDS, "every rule of the data file has a case"


def test_a_token_glued_to_a_tool_name_is_redacted_in_the_stored_name_and_text() -> None:
    token = "ghp_" + SecretMaker(SEED).fake(36)
    turn = Turn(
        "s",
        "t0",
        0,
        "2026-05-01T10:00:00Z",
        "assistant",
        "claude",
        (Block("tool_use", '{"command": "ls"}', tool_name=f"Bash_{token}"),),
    )
    chunks, counts = chunk_turn(turn, redactor=redact)
    assert chunks and all(token not in c.text and token not in (c.tool_name or "") for c in chunks)
    assert chunks[0].tool_name == "Bash_[REDACTED:github_token]"
    assert counts == Counter({"github_token": 1})


def test_a_session_id_holding_a_secret_is_held_back_by_the_gate(
    funes_home: Home, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ids are not redacted at index time (they make chunk ids), so the gate scans them at push."""
    monkeypatch.setenv("FUNES_EMBEDDER", "hash")
    token = "ghp_" + SecretMaker(SEED + 1).fake(36)
    turns = {
        sid: [Turn(sid, f"{sid}-t0", 0, "2026-05-01T10:00:00Z", "user", "claude", (Block("text", "hello"),))]
        for sid in (f"leak-{token}", "clean-session")
    }
    for sid, session in turns.items():
        path = write_turns_file(tmp_path / "in" / f"{sid[:5]}.funes.jsonl", session)
        run_index(IndexOptions(path=path), home=funes_home, embedder=HashEmbedder(), warn=lambda _m: None)
    runner = CliRunner()
    assert runner.invoke(make_app(), ["remote", "add", "team", str(tmp_path / "team")]).exit_code == 0
    pushed = runner.invoke(make_app(), ["push", "team"])
    assert pushed.exit_code == 0, pushed.stderr
    assert "held back 1 row(s) in 1 block(s) with secrets (" in pushed.stdout, pushed.stdout
    assert {r.session_id for r in open_memory("team", home=funes_home).scan()} == {"clean-session"}
