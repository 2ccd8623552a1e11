"""The notes converter: a folder of Markdown and text files → turns, one session per file.

The integration indexes what a person writes for themselves (``MEMORY.md``, daily notes,
``CLAUDE.md`` / ``AGENTS.md``, a docs folder) beside what their agents said. Nothing is discovered
on its own (``Capabilities(discover=False)``): the folders and files come from
``funes integrations install notes --path DIR``, which records them, and every ``funes index``
re-reads the ones whose size or modification time changed.

One file is one session; one heading section (:mod:`funes_notes.markdown`) is one turn, role
``note``, harness ``notes``:

* ``session_id`` is the file's path from the registered folder, starting with that folder's name
  (``notes/daily/2026-03-01.md``); a registered single file is named with its folder
  (``tidepool/CLAUDE.md``). ``:``, ``%``, white space and control characters are percent-encoded so
  the id stays one word in a ``get`` line;
* ``turn_uuid`` is ``<ASCII slug of the heading>-<12 hex of sha1(heading trail + text)>``: an unchanged
  section keeps its id (and is stored once), an edited one gets a new id and is stored as a new
  turn, the old text staying findable (append-only);
* ``seq`` is the section's position in the file, ``ts`` the front matter's date
  (:data:`~funes_notes.markdown.FRONT_MATTER_DATE_KEYS`) or else the file's modification time.

Refused with one line (an :class:`~funes_core.IntegrationError` the host reports, skipping the file):
text that is not UTF-8 (a UTF-8 BOM is fine), NUL bytes, files over :data:`MAX_BYTES`, and files
of more than :data:`MAX_SECTIONS` sections.
Walking a folder skips hidden files and folders (``.git``, ``.obsidian``, ``.trash``),
``node_modules`` and every symbolic link, so a link cannot pull a file from elsewhere in twice.
"""

from __future__ import annotations

import codecs
import hashlib
import os
import re
import unicodedata
from pathlib import Path

from funes_core import Block, Converter, IntegrationError, SessionRef, Turn, parse_ts
from funes_notes.agent import NOTES
from funes_notes.markdown import FRONT_MATTER_DATE_KEYS, front_matter, sections

__all__ = [
    "HARNESS",
    "MARKDOWN_SUFFIXES",
    "MAX_BYTES",
    "MAX_SECTIONS",
    "NOTE_SUFFIXES",
    "ROLE",
    "SKIPPED_FOLDERS",
    "NotesConverter",
    "note_files",
    "session_id_for",
]

HARNESS = NOTES.id
ROLE = "note"
MARKDOWN_SUFFIXES = (".md", ".markdown", ".mdown", ".mkd")
NOTE_SUFFIXES = (*MARKDOWN_SUFFIXES, ".txt")
#: Folders never walked into (besides hidden ones): other people's READMEs by the thousand.
SKIPPED_FOLDERS = frozenset({"node_modules"})
#: Larger files are refused: a note is written by a person; a 50 MB "note" is an export or a log.
MAX_BYTES = 2 * 1024 * 1024
#: A file with more sections (headings) is refused: each is a turn to store and embed, and a person's
#: note has tens or hundreds of them; 200,000 headings (a 900 KB generated file) cost 6 minutes,
#: 569 MB and 200,000 embeddings owed.
MAX_SECTIONS = 2000

#: A turn id is ASCII (the turns format's id charset): accents are dropped, other letters become ``-``.
_SLUG = re.compile(r"[^a-z0-9_]+")


def _encode(name: str) -> str:
    """Percent-encode what may not (``:``, a leading ``-``, white space, what is not printable) or
    should not (``%``) be in a session id."""
    out = []
    for at, ch in enumerate(name):
        if ch in ":%" or ch.isspace() or not ch.isprintable() or (at == 0 and ch == "-"):
            out.append("".join(f"%{b:02X}" for b in ch.encode("utf-8", "surrogatepass")))
        else:
            out.append(ch)
    return "".join(out)


def session_id_for(root_name: str, relative: str) -> str:
    """``<root name>/<path inside it>``, percent-encoded where needed (module docstring)."""
    return _encode(f"{root_name}/{relative}")


def _root_name(path: Path) -> str:
    return path.absolute().name or "notes"


def note_files(folder: Path) -> list[Path]:
    """The note files under ``folder``, sorted; hidden entries, ``node_modules`` and links skipped."""
    found: list[Path] = []

    def walk(directory: Path) -> None:
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError:
            return  # an unreadable subfolder holds nothing we can read
        for entry in entries:
            if entry.name.startswith(".") or entry.is_symlink():
                continue
            if entry.is_dir(follow_symlinks=False):
                if entry.name not in SKIPPED_FOLDERS:
                    walk(Path(entry.path))
            elif entry.is_file(follow_symlinks=False) and Path(entry.name).suffix.lower() in NOTE_SUFFIXES:
                found.append(Path(entry.path))

    walk(folder)
    return found


def _ref(path: Path, session_id: str) -> SessionRef | None:
    try:
        mtime = path.stat().st_mtime
    except OSError:
        return None
    return SessionRef(session_id=session_id, path=path, last_activity=mtime)


def _slug(title: str) -> str:
    plain = "".join(
        c for c in unicodedata.normalize("NFKD", title.casefold()) if not unicodedata.combining(c)
    )
    slug = _SLUG.sub("-", plain).strip("-_")[:40].strip("-_")
    return slug or "section"


def _text(path: Path) -> str:
    """The file as text, or :class:`IntegrationError` saying why it is refused."""
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            raise IntegrationError(
                f"{path}: {size / 1048576:.1f} MiB is more than a note ({MAX_BYTES // 1048576} MiB); "
                "split it to index it"
            )
        data = path.read_bytes()
    except OSError as exc:
        raise IntegrationError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        raise IntegrationError(f"{path}: UTF-16 text, not UTF-8; save it as UTF-8 to index it")
    data = data.removeprefix(codecs.BOM_UTF8)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise IntegrationError(
            f"{path}: not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start}); "
            "save it as UTF-8 to index it"
        ) from None
    if "\x00" in text:
        raise IntegrationError(f"{path}: holds NUL bytes, so it is not a text note")
    return text


class NotesConverter(Converter, agent=NOTES):
    """Markdown and text files → one session per file, one turn per heading section."""

    contract_fixtures = "funes_notes.contract_fixtures"

    def session_roots(self, home: Path) -> list[Path]:
        """None: notes are the folders named with ``--path``, never guessed from the HOME."""
        return []

    def sessions_in(self, path: Path) -> list[SessionRef]:
        """One ref per note under ``path`` (a folder) or for ``path`` itself (a file).

        Only ``stat`` is called: a folder of thousands of unchanged notes is listed in
        milliseconds, and the host skips those whose size and time it has seen.
        """
        if path.is_file():
            ref = _ref(path, session_id_for(_root_name(path.parent), path.name))
            return [ref] if ref else []
        if not path.is_dir():
            return []
        root = _root_name(path)
        refs = (_ref(f, session_id_for(root, f.relative_to(path).as_posix())) for f in note_files(path))
        return [ref for ref in refs if ref is not None]

    def convert(self, ref: SessionRef) -> list[Turn]:
        """The note's sections as turns; :class:`IntegrationError` for a file that is not a note."""
        text = _text(ref.path)
        markdown = ref.path.suffix.lower() != ".txt"
        ts = None
        if markdown:
            meta = front_matter(text.splitlines(keepends=True)).values
            # A date without a zone is read as UTC (parse_ts), so conversion is the same everywhere.
            dates = (parse_ts(meta[key], epoch="s") for key in FRONT_MATTER_DATE_KEYS if key in meta)
            ts = next((d for d in dates if d is not None), None)
        if ts is None:
            ts = parse_ts(int(ref.last_activity), epoch="s") or "1970-01-01T00:00:00Z"
        found = sections(text, markdown=markdown)
        if len(found) > MAX_SECTIONS:
            raise IntegrationError(
                f"{ref.path}: {len(found):,} headings is more than a note holds (at most {MAX_SECTIONS:,}); "
                "split it to index it"
            )
        turns: list[Turn] = []
        seen: dict[str, int] = {}
        for seq, section in enumerate(found):
            stored = section.stored_text()
            digest = hashlib.sha1(
                ("\n".join(section.trail) + "\x00" + stored).encode("utf-8", "surrogatepass"),
                usedforsecurity=False,
            ).hexdigest()[:12]
            uuid = f"{_slug(section.title) if section.trail else 'top'}-{digest}"
            seen[uuid] = seen.get(uuid, 0) + 1
            if seen[uuid] > 1:  # the same section twice in one file: a second, stable id
                uuid = f"{uuid}-{seen[uuid]}"
            turns.append(
                Turn(
                    session_id=ref.session_id,
                    turn_uuid=uuid,
                    seq=seq,
                    ts=ts,
                    role=ROLE,
                    harness=HARNESS,
                    blocks=(Block("text", stored),),
                )
            )
        return turns
