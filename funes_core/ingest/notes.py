"""Writing keyword-trigger notes: append a turn to the notes file, then index it.

The notes file (``$FUNES_HOME/notes/triggers.funes.jsonl``) is the durable record: it is never
drained like a spool, so a ``--rebuild`` re-indexes it and no trigger is ever lost. The memory
rows are what recall reads.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from funes_core.home import Home, ensure_private_dir
from funes_core.read.triggers import forget_turn, remember_turn
from funes_core.turns.format import Turn, read_turns_file, write_turns_file

__all__ = ["append_note", "notes_file"]


def notes_file(home: Home) -> Path:
    return home.root / "notes" / "triggers.funes.jsonl"


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
