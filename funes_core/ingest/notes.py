"""Keyword-trigger notes: build remember/forget turns and append them to the notes file.

``funes remember deploy --hint "run make check first"`` appends a *note turn*; ``funes forget
deploy`` appends a tombstone turn. Both are ordinary turns (harness ``note``) in an ordinary turns
file, ``$FUNES_HOME/notes/triggers.funes.jsonl``, indexed like any other: nothing is updated in
place, recall and get find them, and re-indexing (even ``--rebuild``) keeps them, because the notes
file is never drained like a spool. :mod:`funes_core.read.triggers` replays them at read time.
"""

from __future__ import annotations

import hashlib
import re
from datetime import UTC, datetime
from pathlib import Path

from funes_core.home import Home, ensure_private_dir
from funes_core.turns.format import Block, Turn, format_ts, read_turns_file, write_turns_file

__all__ = [
    "NOTES_SESSION",
    "NOTE_HARNESS",
    "append_note",
    "forget_turn",
    "notes_file",
    "remember_turn",
    "reserved_for_notes",
    "validate_keyword",
]

NOTE_HARNESS = "note"
NOTES_SESSION = "funes-triggers"


def validate_keyword(keyword: str) -> str:
    """Normalise a keyword (collapse whitespace) and refuse the ones that cannot round-trip."""
    cleaned = " ".join(keyword.split())
    if not cleaned:
        raise ValueError("the keyword is empty")
    if ":" in cleaned:
        raise ValueError(f"keyword {cleaned!r} must not contain ':'")
    if not re.search(r"\w", cleaned):
        raise ValueError(f"keyword {cleaned!r} needs at least one letter or digit")
    return cleaned


def _turn(text: str, keyword: str, seq: int, now: datetime) -> Turn:
    ts = format_ts(now)
    digest = hashlib.sha1(keyword.casefold().encode(), usedforsecurity=False).hexdigest()[:10]
    return Turn(
        session_id=NOTES_SESSION,
        turn_uuid=f"{digest}@{ts.replace(':', '')}-{seq}",
        seq=seq,
        ts=ts,
        role="note",
        harness=NOTE_HARNESS,
        blocks=(Block("text", text),),
    )


def remember_turn(keyword: str, hint: str, *, seq: int, now: datetime) -> Turn:
    keyword = validate_keyword(keyword)
    hint = hint.strip()
    if not hint:
        raise ValueError("the hint is empty: say what to surface with --hint")
    return _turn(f"trigger {keyword}: {hint}", keyword, seq, now)


def forget_turn(keyword: str, *, seq: int, now: datetime) -> Turn:
    keyword = validate_keyword(keyword)
    return _turn(f"forget trigger {keyword}", keyword, seq, now)


def notes_file(home: Home) -> Path:
    return home.root / "notes" / "triggers.funes.jsonl"


def reserved_for_notes(turn: Turn) -> tuple[str, str] | None:
    """Refuse a turn that would pass for a keyword-trigger note outside the notes file.

    Recall prints live triggers first and unmarked, as the user's own standing notes; a turns file
    from anywhere else (an import, a hostile transcript) must not be able to plant one.
    """
    if turn.session_id == NOTES_SESSION:
        return "session_id", f"'{NOTES_SESSION}' is reserved for the notes `funes remember` writes"
    if turn.harness == NOTE_HARNESS:
        return "harness", f"'{NOTE_HARNESS}' is reserved for the notes `funes remember` writes"
    return None


def append_note(home: Home, keyword: str, hint: str | None, *, now: datetime | None = None) -> Path:
    """Append a remember (``hint`` given) or forget (``hint`` None) turn; return the notes file.

    The whole file is rewritten atomically (it is small: one line per note), so a crash leaves
    either the old file or the new one.
    """
    path = notes_file(home)
    ensure_private_dir(path.parent)
    existing: list[Turn] = read_turns_file(path).turns if path.exists() else []
    seq = max((t.seq for t in existing), default=-1) + 1
    moment = now or datetime.now(UTC)
    if existing:
        # Never go back in time: the newest event must win even if the clock moved backwards.
        latest = max(datetime.fromisoformat(t.ts.replace("Z", "+00:00")) for t in existing)
        moment = max(moment, latest)
    turn = (
        remember_turn(keyword, hint, seq=seq, now=moment)
        if hint is not None
        else forget_turn(keyword, seq=seq, now=moment)
    )
    write_turns_file(path, [*existing, turn])
    path.chmod(0o600)
    return path
