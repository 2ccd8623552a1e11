"""``funes export``: the memory back to turns files, byte-stable, and a round trip through
``funes index`` into a fresh home that gives the same chunk ids and texts."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from funes_core.home import Home
from funes_core.ingest.engine import IndexOptions, run_index
from funes_core.models.embed import HashEmbedder
from funes_core.store import open_store
from funes_core.turns.format import Block, Turn, read_turns_file, write_turns_file

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_share_safety import cli, home

pytestmark = pytest.mark.slow
_ = home
REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples" / "sessions"
CORPUS = REPO / ".." / "shared" / "corpus"


def index(home: Home, path: Path) -> None:
    run_index(IndexOptions(path=path, embed="none"), home=home, embedder=HashEmbedder(), warn=lambda _m: None)


def chunks(home: Home) -> dict[str, str]:
    return {r.id: r.text for r in open_store(home=home).scan()}


def round_trip(home: Home, source: Path, tmp_path: Path) -> None:
    index(home, source)
    before = chunks(home)
    assert before
    out = tmp_path / "export"
    code, text, err = cli("export", str(out))
    assert code == 0, err
    assert "exported" in text
    for path in sorted(out.glob("*.funes.jsonl")):
        read_turns_file(path)  # every file passes the format's parser and schema
    fresh = Home(tmp_path / "fresh-home")
    index(fresh, out)
    after = chunks(fresh)
    missing = sorted(set(before) - set(after))
    assert not missing, f"{len(missing)} chunk(s) lost, e.g. {before[missing[0]][:200]!r}"
    assert sorted(set(after) - set(before)) == []
    changed = [i for i in before if before[i] != after[i]]
    assert not changed, f"{len(changed)} text(s) differ, e.g. {before[changed[0]][:120]!r}"
    # Byte-stable: the fresh memory exports to the same bytes.
    again = tmp_path / "again"
    from funes_core.share.export import export_memory

    export_memory(fresh, again)
    first = {p.name: p.read_bytes() for p in out.iterdir()}
    assert first == {p.name: p.read_bytes() for p in again.iterdir()}
    assert (out.stat().st_mode & 0o777) == 0o700 and all(
        (p.stat().st_mode & 0o777) == 0o600 for p in out.iterdir()
    )


def test_round_trip_of_the_bundled_examples(home: Home, tmp_path: Path) -> None:
    round_trip(home, EXAMPLES, tmp_path)


def test_round_trip_of_tool_blocks_gaps_splits_and_taint(home: Home, tmp_path: Path) -> None:
    long = "\n".join(
        f"line {i} of a long tool result that the splitter must cut and overlap" for i in range(400)
    )
    turns = [
        Turn(
            "s-1",
            "u0",
            0,
            "2026-06-01T10:00:00Z",
            "user",
            "claude",
            (Block("text", "run the tests"),),
            cwd="/w/p",
        ),
        Turn(
            "s-1",
            "u1",
            1,
            "2026-06-01T10:00:01Z",
            "assistant",
            "claude",
            (
                Block("thinking", "let me think"),
                Block("text", "   "),  # blank: stores nothing, keeps its index
                Block("tool_use", '{"cmd": "pytest"}', "Bash", "t1"),
                Block("tool_result", long, "Bash", "t1"),
                Block("tool_result", "no name here"),
            ),
            parent_uuid="u0",
        ),
        Turn(
            "s-2",
            "v0",
            0,
            "2026-06-02T09:00:00Z",
            "user",
            "codex",
            (Block("text", "other people's text"),),
            taint="external",
            format=2,
        ),
    ]
    src = tmp_path / "src"
    src.mkdir()
    write_turns_file(src / "a.funes.jsonl", turns)
    round_trip(home, src, tmp_path)


@pytest.mark.skipif(
    not (CORPUS / "claude").is_dir(), reason=f"the shared corpus is absent ({CORPUS.resolve()})"
)
def test_round_trip_of_the_shared_corpus(home: Home, tmp_path: Path) -> None:
    from funes_claude.converter import ClaudeConverter

    src = tmp_path / "corpus-turns"
    src.mkdir()
    converter = ClaudeConverter()
    for n, path in enumerate(sorted((CORPUS / "claude").rglob("*.jsonl"))):
        turns = [t for ref in converter.sessions_in(path) for t in converter.convert(ref)]
        if turns:
            write_turns_file(src / f"{n:03d}.funes.jsonl", turns)
    assert list(src.iterdir())
    round_trip(home, src, tmp_path)


def test_export_filters_and_bad_input(home: Home, tmp_path: Path) -> None:
    index(home, EXAMPLES)
    sessions = sorted({r.session_id for r in open_store(home=home).scan()})
    out = tmp_path / "one"
    code, _t, err = cli("export", str(out), "--session", sessions[0])
    assert code == 0, err
    assert [p.name for p in out.iterdir()] == [f"{sessions[0]}.funes.jsonl"]
    code, _t, err = cli("export", str(out))
    assert code == 1 and "is not empty" in err and len(err.strip().splitlines()) == 1
    code, _t, err = cli("export", str(home.root / "inside"))
    assert code == 1 and "inside $FUNES_HOME" in err
    assert not (home.root / "inside").exists()
    code, _t, err = cli("export", str(tmp_path / "none"), "--session", "no-such")
    assert code == 1 and "no session no-such" in err and not (tmp_path / "none").exists()
    code, _t, err = cli("export", str(tmp_path / "d"), "--since", "soon")
    assert code == 1 and "--since needs a date" in err
    code, text, err = cli("export", str(tmp_path / "late"), "--since", "2099-01-01")
    assert code == 0 and "exported 0 turn(s)" in text, err


def test_export_from_a_remote(home: Home, tmp_path: Path) -> None:
    index(home, EXAMPLES)
    assert cli("remote", "add", "shelf", str(tmp_path / "shelf"))[0] == 0
    code, _t, err = cli("push", "shelf")
    assert code == 0, err
    local, remote = tmp_path / "local", tmp_path / "remote"
    assert cli("export", str(local))[0] == 0
    code, _t, err = cli("export", str(remote), "--memory", "shelf")
    assert code == 0, err
    assert {p.name: p.read_bytes() for p in local.iterdir()} == {
        p.name: p.read_bytes() for p in remote.iterdir()
    }
