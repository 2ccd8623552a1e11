"""Sample notes, their golden turns and the contract suite's mutators for Markdown.

Shipped inside the package so ``funes integrations check notes`` runs the golden tests, and finds
these mutators, on an installed funes-notes. A note has no records to append or tear the way a
transcript has: a note *grows* by new sections and is *written* section by section, so

* :func:`make_earlier` and :func:`make_torn` cut each note before its last section (the note as
  it was before that section was written; a save caught mid-section is a different text of that
  section, stored as one more version when the complete one follows, and is not what the
  prefix tests are about);
* :func:`make_corrupt` adds a note that is not UTF-8: the converter refuses that file with one
  line and every other note converts exactly as before;
* :func:`make_long` lengthens the last section of a note, which must be kept whole;
* :func:`foreign_files` writes files that are not notes (JSON, images, hidden and linked notes).
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["foreign_files", "make_corrupt", "make_earlier", "make_long", "make_torn"]

_HEADING_PREFIX = "#"


def _notes(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.md") if p.is_file() and not p.is_symlink())


def _cut_last_section(path: Path) -> bool:
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    fence = False
    headings = []
    for index, line in enumerate(lines):
        if line.lstrip().startswith(("```", "~~~")):
            fence = not fence
        elif not fence and line.startswith(_HEADING_PREFIX) and line.lstrip("#")[:1] in (" ", "\n"):
            headings.append(index)
    if len(headings) < 2:
        return False
    path.write_text("".join(lines[: headings[-1]]), encoding="utf-8")
    return True


def make_earlier(folder: Path) -> bool:
    """Each note as it was before its last section was written."""
    changed = [_cut_last_section(path) for path in _notes(folder)]
    return any(changed)


def make_torn(folder: Path) -> bool:
    """Each note caught while its newest section was being written (not there yet)."""
    return make_earlier(folder)


def make_corrupt(folder: Path) -> bool:
    """Add a note saved in Latin-1: the converter must refuse it alone."""
    (folder / "legacy-latin1.md").write_bytes("# Réunion\n\nCafé à 10 h.\n".encode("latin-1"))
    return True


def make_long(folder: Path, filler: str, expected: Path) -> bool:
    """Append ``filler`` to the last paragraph of the longest note (its last section grows)."""
    notes = _notes(folder)
    if not notes:
        return False
    longest = max(notes, key=lambda p: p.stat().st_size)
    text = longest.read_text(encoding="utf-8").rstrip("\n")
    longest.write_text(f"{text} {filler}\n", encoding="utf-8")
    return True


def foreign_files(folder: Path) -> None:
    """Files in a notes folder that are not notes, or that a walk must not enter."""
    (folder / "settings.json").write_text('{"theme": "dark"}\n', encoding="utf-8")
    (folder / "photo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    (folder / "export.csv").write_text("buoy,reading\n7,12.5\n", encoding="utf-8")
    hidden = folder / ".obsidian"
    hidden.mkdir()
    (hidden / "workspace.md").write_text("# Workspace\n\nlayout\n", encoding="utf-8")
    (folder / ".draft.md").write_text("# Draft\n\nnot yet\n", encoding="utf-8")
    modules = folder / "node_modules" / "left-pad"
    modules.mkdir(parents=True)
    (modules / "README.md").write_text("# left-pad\n\nPads strings.\n", encoding="utf-8")
    outside = folder.parent / f"{folder.name}-outside.md"
    outside.write_text("# Elsewhere\n\nreached through a link\n", encoding="utf-8")
    os.symlink(outside, folder / "linked.md")
