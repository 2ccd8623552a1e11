"""Vibe re-writes ``messages.jsonl`` whole after a compaction: the turns left keep their ids."""

from __future__ import annotations

import json
import shutil
from importlib.resources import files
from pathlib import Path

from funes_vibe import VibeConverter


def test_a_rewritten_session_keeps_the_ids_of_the_messages_it_still_has(tmp_path: Path) -> None:
    case = Path(str(files("funes_vibe.contract_fixtures") / "cases" / "basic"))
    shutil.copytree(case, tmp_path / "case")
    converter = VibeConverter()
    (ref,) = converter.sessions_in(tmp_path / "case")
    before = {t.turn_uuid: t.blocks for t in converter.convert(ref)}

    lines = ref.path.read_text(encoding="utf-8").splitlines()
    summary = {"role": "user", "content": "Summary of the earlier talk.", "message_id": "summary-1"}
    ref.path.write_text("\n".join([json.dumps(summary), *lines[2:]]) + "\n", encoding="utf-8")
    after = {t.turn_uuid: t.blocks for t in converter.convert(ref)}

    kept = set(before) & set(after)
    assert len(kept) == len(before) - 1, (before.keys(), after.keys())
    assert all(before[uuid] == after[uuid] for uuid in kept)
    assert "summary-1" in after
