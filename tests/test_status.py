"""``funes status``: the report, its age wording, --json, --memory, and a light --help."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from funes_core.faces.cli.app import make_app
from funes_core.home import Home
from funes_core.ingest.engine import IndexOptions, run_index
from funes_core.models.embed import HashEmbedder
from funes_core.read.status import age_words, collect_status, human_bytes
from funes_core.store import NO_INDEX_MESSAGE
from funes_core.turns.format import Block, Turn, write_turns_file

NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)


def cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(make_app(), list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def funes_home(funes_home: Home, monkeypatch: pytest.MonkeyPatch) -> Home:
    monkeypatch.setenv("FUNES_EMBEDDER", "hash")
    return funes_home


def _turns(sid: str, harness: str, n: int) -> list[Turn]:
    return [
        Turn(
            sid, f"{sid}-{i}", i, f"2026-03-05T10:00:{i:02d}Z", "user", harness, (Block("text", f"note {i}"),)
        )
        for i in range(n)
    ]


@pytest.mark.parametrize(
    ("delta", "words"),
    [
        (timedelta(seconds=0), "just now"),
        (timedelta(seconds=59), "just now"),
        (timedelta(minutes=-5), "just now"),  # the future
        (timedelta(minutes=1), "1 minute ago"),
        (timedelta(minutes=59, seconds=59), "59 minutes ago"),
        (timedelta(minutes=60), "1 hour ago"),
        (timedelta(minutes=2879), "47 hours ago"),
        (timedelta(minutes=2880), "2 days ago"),
        (timedelta(days=400), "400 days ago"),
    ],
)
def test_age_words(delta: timedelta, words: str) -> None:
    assert age_words(NOW - delta, NOW) == words


def test_human_bytes() -> None:
    assert [human_bytes(n) for n in (0, 1023, 1536, 5 * 1024**2, 3 * 1024**3)] == [
        "0 B",
        "1023 B",
        "1.5 KB",
        "5.0 MB",
        "3.0 GB",
    ]


def test_no_index_yet(funes_home: Home) -> None:
    code, out, _ = cli("status")
    assert code == 0
    assert out == f"memory: {funes_home.memory_dir}\n{NO_INDEX_MESSAGE}\n"
    assert NO_INDEX_MESSAGE == (
        "no index yet — run `funes integrations install <agent>` to build one (or `funes index PATH`), "
        "then recall your own history."
    )
    code, out, _ = cli("status", "--json")
    assert code == 0 and json.loads(out)["exists"] is False


def test_named_memory_that_does_not_exist_is_an_error(funes_home: Home, tmp_path: Path) -> None:
    code, out, _ = cli("status", "--memory", str(tmp_path / "nowhere"))
    assert code == 1
    assert out == f"memory: {tmp_path / 'nowhere'}\nno index found at {tmp_path / 'nowhere'}\n"


def test_status_reports_everything(funes_home: Home, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_turns_file(tmp_path / "c" / "a.funes.jsonl", _turns("a", "claude", 3))
    write_turns_file(tmp_path / "c" / "b.funes.jsonl", _turns("b", "codex", 2))
    run_index(
        IndexOptions(path=tmp_path / "c"), home=funes_home, embedder=HashEmbedder(), warn=lambda _m: None
    )
    write_turns_file(funes_home.spool_dir / "claude" / "later.funes.jsonl", _turns("later", "claude", 1))
    bad = funes_home.spool_dir / "pi" / "bad.funes.jsonl"
    bad.parent.mkdir(parents=True)
    bad.write_text("not json\n")
    run_index(IndexOptions(harness="pi"), home=funes_home, embedder=HashEmbedder(), warn=lambda _m: None)

    code, out, _ = cli("status")
    assert code == 0
    lines = out.splitlines()
    assert lines[:6] == [
        f"memory: {funes_home.memory_dir}",
        "model: funes-test/hash-embedder, 384-d",
        "chunks: 5",
        "sessions: 2",
        "harnesses: claude 3, codex 2",
        "embeddings owed: 0",
    ]
    assert "pending spool files: claude 1, pi 0 — run `funes index`" in lines
    assert any(line.startswith("refused files: 1 ") for line in lines)
    assert any(line.startswith(f"  {bad}:1: not valid JSON") for line in lines)
    assert any(line.startswith("last indexed: ") and line.endswith("(just now)") for line in lines)
    assert lines[-1].startswith("disk: ") and lines[-1].endswith("KB")

    code, out, _ = cli("status", "--json")
    doc = json.loads(out)
    assert doc["chunks"] == 5 and doc["sessions"] == 2 and doc["harnesses"] == {"claude": 3, "codex": 2}
    assert doc["pending_spool"] == {"claude": 1, "pi": 0}
    assert doc["refused"][0]["path"] == str(bad)
    assert doc["embeddings_owed"] == 0 and doc["disk_bytes"] > 0 and doc["last_indexed_age"] == "just now"
    assert doc["model"] == "funes-test/hash-embedder" and doc["model_matches"] is True  # FUNES_EMBEDDER=hash

    monkeypatch.delenv("FUNES_EMBEDDER")  # this funes now embeds with the real model
    code, out, _ = cli("status")
    assert out.splitlines()[1] == (
        "model: funes-test/hash-embedder, 384-d (this funes embeds with "
        "sentence-transformers/all-MiniLM-L6-v2 (int8 onnx): run `funes index --rebuild`)"
    )


def test_status_of_a_named_memory_and_owed_embeddings(funes_home: Home, tmp_path: Path) -> None:
    write_turns_file(tmp_path / "c" / "a.funes.jsonl", _turns("a", "claude", 2))
    run_index(
        IndexOptions(path=tmp_path / "c", budget=0),
        home=funes_home,
        embedder=HashEmbedder(),
        warn=lambda _m: None,
    )
    report = collect_status(str(funes_home.memory_dir / "chunks.lance"), home=Home(tmp_path / "elsewhere"))
    assert report.exists and not report.is_default
    assert report.owed == 2
    text = report.render(now=NOW + timedelta(days=365 * 5))
    assert "embeddings owed: 2 — run `funes index` to embed them" in text
    assert "pending spool" not in text  # spools belong to a FUNES_HOME, not to a named memory


def test_status_help_stays_light() -> None:
    code = (
        "import sys\n"
        "from funes_core.faces.cli.app import make_app\n"
        "try:\n    make_app()(['status', '--help'])\nexcept SystemExit:\n    pass\n"
        "heavy = ('lancedb', 'fastembed', 'onnxruntime', 'pyarrow')\n"
        "print('HEAVY', sorted(m for m in heavy if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "HEAVY []" in out


def test_status_of_an_opened_memory_reads_its_location_not_its_spec_again(
    funes_home: Home, monkeypatch: pytest.MonkeyPatch
) -> None:
    from funes_core.read import status
    from funes_core.read.handle import Memory
    from funes_core.share import memory as memories

    location = memories.resolve_memory(None, home=funes_home)
    assert memories.resolve_memory(location, home=funes_home) is location
    opened = Memory.resolve(None, home=funes_home)
    given: list[object] = []
    real = memories.resolve_memory

    def spy(memory: object = None, **kwargs: object) -> memories.MemoryLocation:
        given.append(memory)
        return real(memory, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(memories, "resolve_memory", spy)
    text = status.run(opened, status.StatusArgs())
    assert text.startswith(f"memory: {location.label}")
    assert given and all(m is opened.location for m in given)
