"""The notes integration (plugins/funes-notes) through ``funes``, in a throwaway HOME and FUNES_HOME.

``funes integrations install notes --path DIR`` registers a folder; ``funes index`` picks up what
changed (no watcher); recall finds notes by harness with their file and heading; an edited section
is stored as a new turn and the old text stays findable; a non-UTF-8 note is refused with one line,
once. The hash embedder keeps it fast; ranking quality is not what is tested here.
"""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

import funes_notes
from funes_core.faces.cli.app import make_app
from funes_core.host.manager import FunesPluginManager, load_plugins

VAULT = Path(funes_notes.__file__).parent / "contract_fixtures" / "cases" / "vault"


@pytest.fixture
def pm() -> FunesPluginManager:
    return load_plugins(environ={"FUNES_LOAD_PLUGINS": "notes"}, stderr=io.StringIO())


@pytest.fixture
def notes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("FUNES_HOME", str(tmp_path / "funes-home"))
    monkeypatch.setenv("FUNES_EMBEDDER", "hash")
    monkeypatch.setenv("FUNES_STATS", "off")
    return shutil.copytree(VAULT, tmp_path / "home" / "notes", ignore=shutil.ignore_patterns("expected*"))


def cli(pm: FunesPluginManager, *args: str) -> tuple[int, str, str]:
    """``funes ARGS…``; ``index`` embeds here (``--wait``), so that no background worker holds the
    store lock when the next step indexes again (a non-interactive run then exits 75)."""
    if args[:1] == ("index",):
        args = (*args, "--wait")
    result = CliRunner().invoke(make_app(pm), list(args))
    return result.exit_code, result.stdout, result.stderr


def hits(pm: FunesPluginManager, query: str, *extra: str) -> list[dict[str, object]]:
    code, out, err = cli(pm, "recall", query, "--json", "--profile", "lexical", *extra)
    assert code == 0, err
    found: list[dict[str, object]] = json.loads(out)["hits"]
    return found


def test_install_index_recall_edit_and_refuse(pm: FunesPluginManager, notes: Path, tmp_path: Path) -> None:
    code, out, err = cli(pm, "integrations", "install", "notes", "--no-index", "--path", str(notes))
    assert code == 0, err
    assert "notes: converted 3 sessions into" in out

    code, out, err = cli(pm, "index")
    assert code == 0, err
    assert out.startswith("indexed 3 files: 9 turns, 9 chunks")

    # Filterable by harness, shown by file and heading.
    code, out, err = cli(
        pm, "recall", "rollback tag", "--harness", "notes", "--profile", "lexical", "-k", "1"
    )
    assert code == 0, err
    header, get_line, *text = out.splitlines()
    assert header.startswith("[2026-02-11T08:30:00Z] notes notes/projects/tidepool-runbook.md text")
    assert get_line.strip().startswith("→ get notes/projects/tidepool-runbook.md --from 0 --to 5")
    assert text[:3] == ["# Tidepool runbook", "## Deploy", "### Rollback"]
    assert {h["harness"] for h in hits(pm, "tidepool", "--harness", "notes", "-k", "20")} == {"notes"}
    assert hits(pm, "tidepool", "--harness", "note") == [], "the keyword triggers' harness is another"

    # Nothing changed: nothing is converted or stored.
    code, out, err = cli(pm, "index")
    assert (code, err) == (0, "")
    assert out.startswith("indexed 0 files")

    # An edit, a new note, a hidden one, a link and a note in Latin-1.
    runbook = notes / "projects" / "tidepool-runbook.md"
    runbook.write_text(
        runbook.read_text(encoding="utf-8").replace(
            "3. Post in #ops-tidepool.", "3. Page the on-call quokka."
        ),
        encoding="utf-8",
    )
    (notes / "MEMORY.md").write_text(
        "# Memory\n\nThe staging password rotates on Mondays.\n", encoding="utf-8"
    )
    (notes / ".obsidian").mkdir()
    (notes / ".obsidian" / "cache.md").write_text("# Cache\n\nobsidian internals\n", encoding="utf-8")
    (tmp_path / "outside.md").write_text("# Outside\n\nreached through a link\n", encoding="utf-8")
    (notes / "link.md").symlink_to(tmp_path / "outside.md")
    (notes / "legacy.md").write_bytes("# Réunion\n\ncafé\n".encode("latin-1"))

    code, out, err = cli(pm, "index")
    assert code == 0, err
    assert out.startswith("indexed 2 files: 2 turns, 2 chunks"), "the edited section and the new note"
    assert err.splitlines() == [
        f"funes: notes: refused {notes / 'legacy.md'}: not UTF-8 text (byte 0xe9 at offset 3); "
        "save it as UTF-8 to index it",
        "funes: notes: 2 changed sessions converted into the spool",
    ]
    assert [h["session_id"] for h in hits(pm, "quokka")][:1] == ["notes/projects/tidepool-runbook.md"]
    old = [
        h for h in hits(pm, "Post in ops-tidepool", "-k", "20") if "Post in #ops-tidepool" in str(h["text"])
    ]
    assert old, "the old text of the edited section stays findable"
    sessions = {h["session_id"] for h in hits(pm, "tidepool memory outside obsidian", "-k", "50")}
    assert "notes/MEMORY.md" in sessions
    assert not {"notes/.obsidian/cache.md", "notes/link.md"} & sessions

    # The refusal is said once; the file is tried again when it changes.
    code, _, err = cli(pm, "index")
    assert (code, err) == (0, "")
    (notes / "legacy.md").write_text("# Réunion\n\ncafé\n", encoding="utf-8")
    code, out, err = cli(pm, "index")
    assert code == 0 and out.startswith("indexed 1 file"), err

    code, out, _ = cli(pm, "integrations", "info", "notes")
    assert f"reads: {notes}" in out


def test_install_without_a_path_or_with_a_bad_one(
    pm: FunesPluginManager, notes: Path, tmp_path: Path
) -> None:
    code, out, err = cli(pm, "integrations", "install", "notes", "--no-index")
    assert (code, err) == (0, ""), "installed: the note says what is missing"
    assert (
        "notes: note: nothing is read yet: notes finds no sessions by itself; register where they "
        "are with `funes integrations install notes --path DIR`"
    ) in out.splitlines()
    code, _, err = cli(pm, "integrations", "install", "notes", "--path", str(tmp_path / "nope"))
    assert (code, err) == (1, f"funes: --path {tmp_path / 'nope'}: no such folder or file\n")


def test_a_single_file_can_be_registered(pm: FunesPluginManager, notes: Path) -> None:
    claude_md = notes / "CLAUDE.md"
    code, _, err = cli(pm, "integrations", "install", "notes", "--no-index", "--path", str(claude_md))
    assert code == 0, err
    assert cli(pm, "index")[0] == 0
    assert {h["session_id"] for h in hits(pm, "make check", "-k", "5")} == {"notes/CLAUDE.md"}


def test_notes_are_read_verbatim_by_get(pm: FunesPluginManager, notes: Path) -> None:
    assert cli(pm, "integrations", "install", "notes", "--no-index", "--path", str(notes))[0] == 0
    assert cli(pm, "index")[0] == 0
    code, out, err = cli(pm, "get", "notes/projects/tidepool-runbook.md")
    assert code == 0, err
    assert "| `FLUSH_TIMEOUT` | `30 s` | one fsync per batch of buoy readings |" in out
    assert "```bash\n# build both images first; the arm64 one takes ~6 minutes\n" in out
    assert "1. Find the last good tag:\n   - `git tag --sort=-creatordate | head -3`" in out
    assert out.rstrip().endswith("turns 0-4 of 5")


@pytest.mark.slow
def test_check_notes_passes_with_only_the_capability_skips(pm: FunesPluginManager) -> None:
    """``funes integrations check notes``: every requirement passes but ``discover`` (declared absent)
    and the agent's locations (notes has no folder a variable moves, and nothing to discover)."""
    code, out, err = cli(pm, "integrations", "check", "notes")
    assert code == 0, out + err
    lines = out.splitlines()
    assert lines[0] == "notes (funes-memory-notes 0.1.0): contract 2 conformance"
    verdicts = {line.split()[1]: (line.split()[0], line) for line in lines[1:-1]}
    skipped = {req: line for req, (verdict, line) in verdicts.items() if verdict != "PASS"}
    discovery = {"converter:discover", "converter:discover-empty-home", "location:every-session"}
    assert set(skipped) == discovery | {"location:env"}
    assert all("capability discover" in skipped[rid] for rid in discovery)
    assert "capability location-env" in skipped["location:env"]
    assert lines[-1].endswith("0 failed, 4 skipped, 0 provisional warnings"), lines[-1]
