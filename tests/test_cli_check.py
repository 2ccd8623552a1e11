"""`funes index --check`: per-file lines, the summary, exit codes, and a --help that stays light."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from funes_core.faces.cli.app import make_app

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples" / "sessions"
#: One valid turn.
TURN = {
    "session_id": "s",
    "turn_uuid": "t",
    "seq": 0,
    "ts": "2026-01-01T00:00:00Z",
    "role": "user",
    "harness": "x",
    "blocks": [{"block_type": "text", "text": "hi"}],
}


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(make_app(), list(args))
    return result.exit_code, result.stdout, result.stderr


def test_check_examples_all_ok() -> None:
    code, out, _ = run("index", "--check", str(EXAMPLES))
    assert code == 0, out
    lines = out.splitlines()
    files = sorted(EXAMPLES.glob("*.funes.jsonl"))
    assert len(files) >= 3
    for f in files:
        turns = sum(1 for line in f.read_text().splitlines() if line.strip())
        assert any(line.startswith(f"ok {f}: {turns} turns, ") for line in lines), (f, out)
    summary = lines[-1]
    assert summary.startswith(f"checked {len(files)} files: {len(files)} ok, 0 rejected; ")
    # the example sessions carry planted fake credentials in an env dump: they must be counted
    assert "0 redactions" not in summary


def test_check_bad_file_reports_first_bad_line_and_fails(tmp_path: Path) -> None:
    good = TURN
    bad = dict(good, turn_uuid="u", seq=1, blocks=[{"block_type": "image", "text": "x"}])
    (tmp_path / "exports").mkdir()
    (tmp_path / "exports" / "a.funes.jsonl").write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    (tmp_path / "b.funes.jsonl").write_text(json.dumps(good) + "\n")
    (tmp_path / "notes.txt").write_text("not read")
    (tmp_path / "exports" / ".a.funes.jsonl.123.tmp").write_text("{half")
    code, out, _ = run("index", "--check", str(tmp_path))
    assert code == 1
    assert (
        f"{tmp_path}/exports/a.funes.jsonl:2: blocks[0].block_type: 'image' is not one of text, thinking, "
        "tool_use, tool_result"
    ) in out.splitlines()
    assert f"ok {tmp_path}/b.funes.jsonl: 1 turns, 1 chunks" in out.splitlines()
    assert out.splitlines()[-1].startswith(
        "checked 2 files: 1 ok, 1 rejected; 1 turns, 1 chunks, 0 duplicate ids"
    )


def test_check_counts_duplicate_ids(tmp_path: Path) -> None:
    line = json.dumps(TURN)
    path = tmp_path / "d.funes.jsonl"
    path.write_text(line + "\n" + line + "\n")
    code, out, _ = run("index", "--check", str(path))
    assert code == 0
    assert f"ok {path}: 2 turns, 1 chunks" in out
    assert ", 1 duplicate ids," in out


def test_check_raw_transcript_folder_is_refused_with_hint(tmp_path: Path) -> None:
    (tmp_path / "abc.jsonl").write_text(json.dumps({"type": "user", "message": {"content": "hi"}}) + "\n")
    code, out, _ = run("index", "--check", str(tmp_path))
    assert code == 1
    assert "abc.jsonl:1: " in out and "funes integrations convert" in out


def test_check_missing_path() -> None:
    code, _, err = run("index", "--check", "/nonexistent/x")
    assert code == 1
    assert "no such file or folder: /nonexistent/x" in err


@pytest.mark.parametrize("argv", [["--help"], ["index", "--help"]])
def test_help_does_not_import_heavy_libraries(argv: list[str]) -> None:
    code = (
        "import sys\n"
        "from funes_core.faces.cli.app import make_app\n"
        f"try:\n    make_app()({argv!r})\nexcept SystemExit:\n    pass\n"
        "heavy = ('lancedb', 'fastembed', 'onnxruntime', 'mcp', 'pyarrow')\n"
        "heavy = sorted(m for m in heavy if m in sys.modules)\n"
        "print('HEAVY', heavy)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "HEAVY []" in out
    assert "Usage:" in out
