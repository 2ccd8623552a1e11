"""The notes converter on real-world folders: what is read, what is skipped, what is refused.

Every case builds a throwaway folder the way people keep notes (front matter, code fences,
nested lists, tables, very long sections, editors' hidden folders, links, other encodings).
"""

from __future__ import annotations

import os
import shutil
from importlib import resources
from pathlib import Path

import pytest

from funes_core import IntegrationError, read_turns_file, turns_to_jsonl
from funes_notes.converter import MAX_BYTES, MAX_SECTIONS, NotesConverter, note_files, session_id_for

FIXTURES = Path(str(resources.files("funes_notes.contract_fixtures"))) / "cases"


@pytest.fixture
def converter() -> NotesConverter:
    return NotesConverter()


def write(path: Path, text: str, mtime: float | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def convert_all(converter: NotesConverter, folder: Path) -> list[tuple[str, int, str, str]]:
    out = []
    for ref in converter.sessions_in(folder):
        out.extend((t.session_id, t.seq, t.ts, t.blocks[0].text) for t in converter.convert(ref))
    return out


def test_the_vault_fixture_converts_as_its_golden(converter: NotesConverter, tmp_path: Path) -> None:
    # Copied as the contract suite does, into a folder named "case" (session ids start with it).
    vault = shutil.copytree(FIXTURES / "vault", tmp_path / "case", ignore=shutil.ignore_patterns("expected*"))
    turns = [t for ref in converter.sessions_in(vault) for t in converter.convert(ref)]
    assert turns_to_jsonl(turns) == (FIXTURES / "vault" / "expected.funes.jsonl").read_text(encoding="utf-8")
    assert {t.session_id for t in turns} == {
        "case/CLAUDE.md",
        "case/daily/2026-03-05.md",
        "case/projects/tidepool-runbook.md",
    }
    assert {(t.role, t.harness) for t in turns} == {("note", "notes")}
    assert all(t.cwd is None for t in turns)


def test_ts_comes_from_front_matter_else_the_modification_time(
    converter: NotesConverter, tmp_path: Path
) -> None:
    root = tmp_path / "notes"
    write(root / "dated.md", "---\nupdated: 2026-02-11T09:30:00+01:00\ndate: 2020-01-01\n---\n# A\nx\n")
    write(root / "undated.md", "# B\ny\n", mtime=1_767_225_600.75)  # 2026-01-01T00:00:00.75Z
    write(root / "plain.txt", "---\ndate: 2020-01-01\n---\nnot front matter in a .txt\n", mtime=1_767_225_600)
    write(root / "bad-date.md", "---\ndate: someday\n---\n# C\nz\n", mtime=1_767_312_000)
    write(root / "no-zone.md", '---\ncreated: "2026-01-05 08:15"\n---\n# D\nw\n')
    write(root / "impossible.md", "---\ndate: 2026-02-30\n---\n# E\nv\n", mtime=1_767_312_000)
    stamps = {sid.split("/")[-1]: ts for sid, _, ts, _ in convert_all(converter, root)}
    assert stamps == {
        "bad-date.md": "2026-01-02T00:00:00Z",
        "dated.md": "2026-02-11T08:30:00Z",
        "impossible.md": "2026-01-02T00:00:00Z",
        "no-zone.md": "2026-01-05T08:15:00Z",
        "plain.txt": "2026-01-01T00:00:00Z",
        "undated.md": "2026-01-01T00:00:00Z",
    }


def test_time_zone_of_the_machine_does_not_matter(
    converter: NotesConverter, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    root = tmp_path / "notes"
    write(root / "n.md", "---\ndate: 2026-03-01 10:00\n---\n# A\nx\n", mtime=1_767_225_600)
    first = convert_all(converter, root)
    monkeypatch.setenv("TZ", "Asia/Kathmandu")
    time.tzset()
    try:
        assert convert_all(converter, root) == first
    finally:
        monkeypatch.undo()
        time.tzset()
    assert first[0][2] == "2026-03-01T10:00:00Z"


def test_hidden_folders_links_and_node_modules_are_skipped(converter: NotesConverter, tmp_path: Path) -> None:
    root = tmp_path / "notes"
    write(root / "kept.md", "# Kept\nyes\n")
    write(root / "sub" / "deep.markdown", "# Deep\nyes\n")
    write(root / ".obsidian" / "workspace.md", "# Hidden folder\nno\n")
    write(root / ".trash" / "old.md", "# Trash\nno\n")
    write(root / ".draft.md", "# Hidden file\nno\n")
    write(root / "node_modules" / "pkg" / "README.md", "# Package\nno\n")
    outside = write(tmp_path / "elsewhere" / "secret.md", "# Elsewhere\nno\n")
    os.symlink(outside, root / "link.md")
    os.symlink(outside.parent, root / "linked-folder")
    write(root / "image.png", "not a note")
    assert [p.relative_to(root).as_posix() for p in note_files(root)] == ["kept.md", "sub/deep.markdown"]
    assert [sid for sid, *_ in convert_all(converter, root)] == ["notes/kept.md", "notes/sub/deep.markdown"]


def test_a_registered_file_is_named_with_its_folder(converter: NotesConverter, tmp_path: Path) -> None:
    claude_md = write(tmp_path / "tidepool" / "CLAUDE.md", "# Rules\nrun make check\n")
    refs = converter.sessions_in(claude_md)
    assert [(r.session_id, r.path) for r in refs] == [("tidepool/CLAUDE.md", claude_md)]
    assert converter.sessions_in(tmp_path / "missing") == []


def test_session_ids_stay_one_word(converter: NotesConverter, tmp_path: Path) -> None:
    assert (
        session_id_for("My Notes", "2026: plans/100% done.md")
        == "My%20Notes/2026%3A%20plans/100%25%20done.md"
    )
    assert session_id_for("Notizen", "Übersicht.md") == "Notizen/Übersicht.md"
    root = tmp_path / "My Notes"
    write(root / "a b.md", "# A\nx\n")
    assert [r.session_id for r in converter.sessions_in(root)] == ["My%20Notes/a%20b.md"]


def test_an_unchanged_section_keeps_its_id_an_edited_one_gets_a_new_one(
    converter: NotesConverter, tmp_path: Path
) -> None:
    root = tmp_path / "notes"
    note = write(root / "plan.md", "# Plan\n\n## Storage\nSQLite\n\n## Deploy\nmake deploy\n")
    (ref,) = converter.sessions_in(root)
    before = {t.turn_uuid for t in converter.convert(ref)}
    write(note, "# Plan\n\n## Storage\nSQLite with WAL\n\n## Deploy\nmake deploy\n\n## Alerts\npage me\n")
    (ref,) = converter.sessions_in(root)
    after = converter.convert(ref)
    kept = before & {t.turn_uuid for t in after}
    assert len(kept) == 1 and next(iter(kept)).startswith("deploy-")
    assert [t.turn_uuid.rsplit("-", 1)[0] for t in after] == ["storage", "deploy", "alerts"]
    assert [t.seq for t in after] == [0, 1, 2]


def test_the_same_section_twice_gets_two_ids(converter: NotesConverter, tmp_path: Path) -> None:
    root = tmp_path / "notes"
    write(root / "log.md", "## Standup\nnothing new\n\n## Standup\nnothing new\n")
    (ref,) = converter.sessions_in(root)
    ids = [t.turn_uuid for t in converter.convert(ref)]
    assert len(set(ids)) == 2 and ids[1] == ids[0] + "-2"


def test_a_very_long_section_is_one_whole_turn(converter: NotesConverter, tmp_path: Path) -> None:
    body = "\n\n".join(f"Paragraph {i}: " + "the buoy reported a reading. " * 30 for i in range(40))
    root = tmp_path / "notes"
    write(root / "long.md", f"# Journal\n\n{body}\n")
    (ref,) = converter.sessions_in(root)
    (turn,) = converter.convert(ref)
    assert len(turn.blocks[0].text) > 30_000
    assert turn.blocks[0].text == f"# Journal\n\n{body}"


@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        (
            "latin1.md",
            "# Réunion\ncafé\n".encode("latin-1"),
            r"latin1\.md: not UTF-8 text \(byte 0xe9 at offset 3\)",
        ),
        ("utf16.md", "# Hi\n".encode("utf-16"), r"utf16\.md: UTF-16 text, not UTF-8"),
        ("binary.md", b"# Hi\n\x00\x01\x02", r"binary\.md: holds NUL bytes"),
    ],
)
def test_files_that_are_not_utf8_text_are_refused_with_one_line(
    converter: NotesConverter, tmp_path: Path, name: str, data: bytes, message: str
) -> None:
    root = tmp_path / "notes"
    root.mkdir()
    (root / name).write_bytes(data)
    (ref,) = converter.sessions_in(root)
    with pytest.raises(IntegrationError, match=message) as err:
        converter.convert(ref)
    assert "\n" not in str(err.value)


def test_a_bom_is_not_part_of_the_text(converter: NotesConverter, tmp_path: Path) -> None:
    root = tmp_path / "notes"
    root.mkdir()
    (root / "bom.md").write_bytes(b"\xef\xbb\xbf# Title\nbody\n")
    (ref,) = converter.sessions_in(root)
    assert converter.convert(ref)[0].blocks[0].text == "# Title\nbody"


def test_a_huge_file_is_refused(converter: NotesConverter, tmp_path: Path) -> None:
    root = tmp_path / "notes"
    root.mkdir()
    with (root / "dump.md").open("wb") as fh:
        fh.truncate(MAX_BYTES + 1)
    (ref,) = converter.sessions_in(root)
    with pytest.raises(IntegrationError, match=r"dump\.md: 2\.0 MiB is more than a note \(2 MiB\)"):
        converter.convert(ref)


@pytest.mark.parametrize("headings", [MAX_SECTIONS + 1, 200_000])
def test_a_file_of_too_many_headings_is_refused_in_one_line(
    converter: NotesConverter, tmp_path: Path, headings: int
) -> None:
    """The probe's 900 KB note of 200,000 headings became 200,011 turns; it is refused whole."""
    root = tmp_path / "notes"
    root.mkdir()
    (root / "generated.md").write_text("#\nx\n" * headings)  # 800 KB at 200,000
    (ref,) = converter.sessions_in(root)
    with pytest.raises(IntegrationError) as err:
        converter.convert(ref)
    assert str(err.value) == (
        f"{ref.path}: {headings:,} headings is more than a note holds (at most {MAX_SECTIONS:,}); "
        "split it to index it"
    )


def test_a_file_of_as_many_headings_as_allowed_is_read(converter: NotesConverter, tmp_path: Path) -> None:
    root = tmp_path / "notes"
    root.mkdir()
    (root / "long.md").write_text("".join(f"# h{i}\nx\n" for i in range(MAX_SECTIONS)))
    (ref,) = converter.sessions_in(root)
    assert len(converter.convert(ref)) == MAX_SECTIONS


def test_turns_files_round_trip(converter: NotesConverter, tmp_path: Path) -> None:
    vault = shutil.copytree(FIXTURES / "vault", tmp_path / "vault")
    funes_home = tmp_path / "funes-home"
    for ref in converter.sessions_in(vault):
        for write_ in converter.write_spool(ref, funes_home):
            assert read_turns_file(write_.path).turns == converter.convert(ref)
