"""Finding turns files and preparing them for the memory: validate whole, then chunk.

``funes index --check`` and ``funes index`` share this module, so what the check accepts is
exactly what indexing would store.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from funes_core.ingest.chunking import Chunk, Redactor, Tier, chunk_turn
from funes_core.ingest.notes import reserved_for_notes
from funes_core.turns.format import ParsedFile, TurnCheck, TurnsFormatError, iter_turns, read_turns_file

__all__ = [
    "TURNS_SUFFIX",
    "CheckReport",
    "CheckedFile",
    "PreparedFile",
    "check_file",
    "default_redactor",
    "iter_turns_files",
    "load_redactor",
    "prepare_file",
]

#: The suffix of a turns file. Spool producers write a temp name first, then rename to this.
TURNS_SUFFIX = ".funes.jsonl"


def default_redactor() -> Redactor:
    """The redactor used at index time (imported lazily: only indexing pays for detect-secrets)."""
    from funes_core.redact import redact

    return redact


def load_redactor(warn: Callable[[str], None] | None = None) -> Redactor | None:
    """The index-time secret redactor, or ``None`` (with a note) if this build has none."""
    try:
        return default_redactor()
    except ModuleNotFoundError as exc:
        if exc.name != "funes_core.redact":
            raise
        if warn is not None:
            warn("note: secret redaction disabled — funes_core.redact is not available in this build")
        return None


def iter_turns_files(root: Path) -> Iterator[Path]:
    """Every ``*.jsonl`` file under ``root`` (recursively, sorted), or ``root`` itself if it is a file.

    Any ``.jsonl`` is yielded, not only ``.funes.jsonl``: a folder of raw agent transcripts must
    be refused loudly rather than skipped silently. Names not ending in ``.jsonl`` (producers'
    temp files, notes) are never read.
    """
    if root.is_file():
        yield root
        return
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        found.extend(Path(dirpath) / name for name in filenames if name.endswith(".jsonl"))
    yield from sorted(found)


@dataclass(slots=True)
class PreparedFile:
    """A validated turns file and the chunks it yields."""

    parsed: ParsedFile
    chunks: list[Chunk]
    redactions: Counter[str]
    duplicate_ids: int

    @property
    def path(self) -> str:
        return self.parsed.path


def prepare_file(
    path: Path,
    *,
    display: str | None = None,
    tiers: Iterable[Tier] = tuple(Tier),
    include_thinking: bool = True,
    redactor: Redactor | None = None,
) -> PreparedFile:
    """Validate a whole turns file, then chunk every turn; raises :class:`TurnsFormatError`.

    Chunks whose id already appeared earlier in the same file are dropped (kept-first) and
    counted, so a turn emitted twice is stored once.
    """
    parsed = read_turns_file(path, display=display)
    chunks: list[Chunk] = []
    redactions: Counter[str] = Counter()
    seen: set[str] = set()
    duplicates = 0
    wanted = tuple(tiers)
    for turn in parsed.turns:
        turn_chunks, found = chunk_turn(
            turn, tiers=wanted, include_thinking=include_thinking, redactor=redactor
        )
        redactions.update(found)
        for chunk in turn_chunks:
            if chunk.id in seen:
                duplicates += 1
                continue
            seen.add(chunk.id)
            chunks.append(chunk)
    if duplicates:
        parsed.warnings.append(f"{parsed.path}: {duplicates} duplicate chunk id(s); kept the first of each")
    return PreparedFile(parsed=parsed, chunks=chunks, redactions=redactions, duplicate_ids=duplicates)


@dataclass(slots=True)
class CheckedFile:
    """A turns file that ``funes index --check`` accepted, with what indexing it would store."""

    path: str
    turns: int
    chunks: int
    redactions: Counter[str]
    duplicate_ids: int
    warnings: list[str]


def check_file(
    path: Path,
    *,
    display: str | None = None,
    redactor: Redactor | None = None,
    check: TurnCheck | None = None,
) -> CheckedFile:
    """Validate a whole turns file and count what it would store, one turn at a time.

    Nothing is kept but chunk ids (for the duplicate count), so checking a file costs the memory of
    one turn, like indexing it. Raises :class:`TurnsFormatError` at the first bad line.
    """
    shown = display if display is not None else str(path)
    warnings: list[str] = []
    seen: set[str] = set()
    redactions: Counter[str] = Counter()
    turns = chunks = duplicates = 0
    for turn in iter_turns(path, display=shown, warnings=warnings, check=check):
        turns += 1
        turn_chunks, found = chunk_turn(turn, redactor=redactor)
        redactions.update(found)
        for chunk in turn_chunks:
            if chunk.id in seen:
                duplicates += 1
            else:
                seen.add(chunk.id)
                chunks += 1
    if duplicates:
        warnings.append(f"{shown}: {duplicates} duplicate chunk id(s); kept the first of each")
    return CheckedFile(shown, turns, chunks, redactions, duplicates, warnings)


@dataclass(slots=True)
class CheckReport:
    """What ``funes index --check`` found under a path."""

    ok: list[CheckedFile] = field(default_factory=list)
    rejected: list[TurnsFormatError] = field(default_factory=list)

    @property
    def turns(self) -> int:
        return sum(f.turns for f in self.ok)

    @property
    def chunks(self) -> int:
        return sum(f.chunks for f in self.ok)

    @property
    def duplicate_ids(self) -> int:
        return sum(f.duplicate_ids for f in self.ok)

    @property
    def redactions(self) -> Counter[str]:
        total: Counter[str] = Counter()
        for f in self.ok:
            total.update(f.redactions)
        return total

    @classmethod
    def run(
        cls,
        root: Path,
        *,
        redactor: Redactor | None = None,
        on_file: Callable[[CheckedFile | TurnsFormatError], None] | None = None,
        notes: Path | None = None,
    ) -> CheckReport:
        """Validate and chunk every turns file under ``root`` without writing anything.

        The rules are the ones ``funes index`` applies, including that only ``notes`` (funes' own
        notes file) may hold keyword-trigger notes.
        """
        report = cls()
        for path in iter_turns_files(root):
            exempt = notes is not None and path.absolute() == notes.absolute()
            try:
                checked = check_file(path, redactor=redactor, check=None if exempt else reserved_for_notes)
            except TurnsFormatError as err:
                if not path.name.endswith(TURNS_SUFFIX) and err.line <= 1:
                    err.args = (
                        f"{err} (not a turns file? convert agent transcripts with "
                        "`funes integrations convert`)",
                    )
                report.rejected.append(err)
                if on_file:
                    on_file(err)
                continue
            report.ok.append(checked)
            if on_file:
                on_file(checked)
        return report


def format_counts(counts: Counter[str]) -> str:
    """``aws_key×2, github_token×1`` — the most frequent first, ties by name."""
    return ", ".join(f"{kind}×{n}" for kind, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
