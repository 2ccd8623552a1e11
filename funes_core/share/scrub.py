"""``funes scrub`` and ``funes purge``: the two explicit exceptions to append-only.

- **scrub** applies today's redaction rules to every stored block. Rules improve; a row indexed
  last month may hold a token today's rules catch. A changed block is split again and embedded
  again; its old rows are replaced.
- **purge** deletes turns for privacy: every turn of the sessions named (``--session``), or every
  turn with a block containing a text (``--match``, case-insensitive, never logged).

Both run under the store lock and leave **no copy** of what they removed under ``$FUNES_HOME``:
the memory is rewritten in place (:mod:`funes_core.store.rewrite`: new files only, every old
version, transaction and index deleted); old memories ``memory.old-*`` that ``index --rebuild``
kept (holding turns the new memory lacks) are deleted (they hold the old text); the remote mirrors under
``cache/remotes/`` are dropped (rebuilt from the bucket on the next read, which ``funes push``
rewrites the same way); spool files holding the purged turns are deleted, and so are the lines of
``logs/`` and the refusal records of ``state.json`` that quote them or whose file held them.
Finally one line is added to the purge log (ids and counts, no text), which keeps purged turns from
coming back when a transcript is converted again and tells the next push what to remove from each
remote.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from funes_core.ingest.chunking import chunk_id, split_text, stitch
from funes_core.redact import redact

if TYPE_CHECKING:
    from funes_core.home import Home
    from funes_core.models.embed import Embedder
    from funes_core.store.base import Row

__all__ = ["PurgeError", "PurgeReport", "ScrubReport", "purge", "scrub"]


class PurgeError(ValueError):
    """Purge refused (unknown session, empty text); ``str()`` is the one line, nothing was changed."""


@dataclass(slots=True)
class ScrubReport:
    blocks: int = 0
    changed_blocks: int = 0
    rows_before: int = 0
    rows_after: int = 0
    by_kind: Counter[str] = field(default_factory=Counter)
    cleaned: list[str] = field(default_factory=list)


@dataclass(slots=True)
class PurgeReport:
    rows: int = 0
    turns: int = 0
    sessions: int = 0
    cleaned: list[str] = field(default_factory=list)


BlockKey = tuple[str, str, int]


def _blocks(rows: Iterable[Row]) -> dict[BlockKey, list[Row]]:
    out: dict[BlockKey, list[Row]] = defaultdict(list)
    for row in rows:
        out[(row.session_id, row.turn_uuid, row.block_idx)].append(row)
    for parts in out.values():
        parts.sort(key=lambda r: r.split_idx)
    return out


def _stitched(parts: Sequence[Row]) -> str:
    text = ""
    for row in parts:
        text = stitch(text, row.text) if text else row.text
    return text


def scrub(home: Home, *, embedder: Embedder, say: Callable[[str], None] = lambda _m: None) -> ScrubReport:
    """Redact the whole local memory with today's rules; the caller holds the write lock."""
    from dataclasses import replace

    from funes_core.store import open_store
    from funes_core.store.purgelog import append_event

    store = open_store(None, home=home, create=False, expect=embedder.stamp)
    report = ScrubReport()
    rows = store.scan()
    report.rows_before = len(rows)
    blocks = _blocks(rows)
    report.blocks = len(blocks)
    dropped: list[str] = []
    new_rows: list[Row] = []
    for (session_id, turn_uuid, block_idx), parts in sorted(blocks.items()):
        text = _stitched(parts)
        redacted, kinds = redact(text)
        if not kinds:
            continue
        report.changed_blocks += 1
        report.by_kind.update(kinds)
        dropped.extend(r.id for r in parts)
        first = parts[0]
        for split_idx, piece in enumerate(split_text(redacted)):
            new_rows.append(
                replace(
                    first,
                    id=chunk_id(session_id, turn_uuid, block_idx, split_idx),
                    text=piece,
                    split_idx=split_idx,
                    vector=None,
                )
            )
    if new_rows:
        vectors = embedder.embed_documents([r.text for r in new_rows])
        new_rows = [r.with_vector(v) for r, v in zip(new_rows, vectors, strict=True)]
    if dropped:
        store.rewrite(drop_ids=dropped, replacements=new_rows, spool_dir=home.cache_dir)
        append_event(home, op="scrub", by="rules", rows=len(dropped), ids=dropped, changed=len(new_rows))
    report.cleaned = clean_leftovers(home) if dropped else []
    report.cleaned += _redact_files(home)
    report.rows_after = store.count()
    return report


def _redact_files(home: Home) -> list[str]:
    """Apply today's rules to the text files under ``$FUNES_HOME`` that may quote transcripts:
    pending or refused spool files, logs, and state.json's refusal messages."""
    from funes_core.files import atomic_write_text
    from funes_core.home import State

    changed = 0
    for folder in (home.spool_dir, home.root / "logs"):
        if not folder.is_dir():
            continue
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            redacted, kinds = redact(text)
            if kinds:
                atomic_write_text(path, redacted)
                changed += 1
    out = [f"redacted {changed} spool or log file(s)"] if changed else []
    if home.state_path.exists():
        # Loading already redacts the messages an older funes wrote, so look at the file itself too.
        on_disk = home.state_path.read_text(encoding="utf-8", errors="replace")
        state = State.load(home.state_path)
        dirty = bool(redact(on_disk)[1])
        for item in state.refused.values():
            redacted, kinds = redact(item.error)
            if kinds:
                item.error = redacted
                dirty = True
        if dirty:
            state.save(home.state_path)
            out.append("redacted state.json refusal messages")
    return out


def purge(
    home: Home,
    *,
    sessions: Sequence[str] = (),
    match: str | None = None,
    say: Callable[[str], None] = lambda _m: None,
) -> PurgeReport:
    """Delete turns by session or by text; the caller holds the write lock."""
    from funes_core.store import open_store
    from funes_core.store.base import Filters
    from funes_core.store.purgelog import append_event

    if not sessions and match is None:
        raise PurgeError("name what to purge: --session ID or --match TEXT")
    if match is not None and not match.strip():
        raise PurgeError("--match needs a non-empty text")
    store = open_store(None, home=home, create=False)
    report = PurgeReport()
    drop: set[str] = set()
    turns: set[tuple[str, str]] = set()
    if sessions:
        missing = [s for s in dict.fromkeys(sessions) if store.count(Filters(session_id=s)) == 0]
        if missing:
            raise PurgeError(f"no session {missing[0]} in the local memory; nothing was purged")
        for sid in dict.fromkeys(sessions):
            for row in store.session_rows(sid):
                drop.add(row.id)
                turns.add((row.session_id, row.turn_uuid))
        report.sessions = len(set(sessions))
    needle = match.lower() if match is not None else None
    if needle is not None:
        rows = store.scan()
        blocks = _blocks(rows)
        hit_turns = {
            (sid, tid) for (sid, tid, _b), parts in blocks.items() if needle in _stitched(parts).lower()
        }
        for row in rows:
            if (row.session_id, row.turn_uuid) in hit_turns:
                drop.add(row.id)
        turns |= hit_turns
        report.sessions = len({sid for sid, _t in hit_turns})
    report.rows = len(drop)
    report.turns = len(turns)
    if not drop:
        return report
    store.rewrite(drop_ids=drop, spool_dir=home.cache_dir)
    append_event(
        home,
        op="purge",
        by="session" if sessions else "match",
        rows=len(drop),
        ids=drop,
        sessions=sessions,
    )
    report.cleaned = clean_leftovers(
        home, sessions=[*sessions, *(s for s, _t in turns)] if sessions else [], needle=match
    )
    return report


def clean_leftovers(home: Home, *, sessions: Sequence[str] = (), needle: str | None = None) -> list[str]:
    """Delete every other copy under ``$FUNES_HOME``; returns what was cleaned, one phrase each."""
    cleaned: list[str] = []
    for old in sorted(home.root.glob("memory.old-*")):
        shutil.rmtree(old, ignore_errors=True)
        cleaned.append(f"deleted {old.name} (the copy index --rebuild kept)")
    mirrors = home.cache_dir / "remotes"
    if mirrors.is_dir() and any(mirrors.iterdir()):
        shutil.rmtree(mirrors, ignore_errors=True)
        cleaned.append("dropped the remote caches (refilled on the next read)")
    for stray in sorted(home.cache_dir.glob("rewrite-*.arrow")) if home.cache_dir.is_dir() else []:
        stray.unlink(missing_ok=True)
    marks = [s for s in sessions if s]
    low = needle.lower() if needle else None
    spooled = _clean_spool(home, marks, low)
    if spooled:
        cleaned.append(f"deleted {spooled} spool file(s) holding purged turns")
    logs = _clean_logs(home, marks, low)
    if logs:
        cleaned.append(f"removed {logs} log line(s) quoting purged turns")
    if _clean_state(home, marks, low):
        cleaned.append("dropped state.json records quoting purged turns")
    return cleaned


def _mentions(text: str, sessions: Sequence[str], needle: str | None) -> bool:
    if needle is not None and needle in text.lower():
        return True
    return any(s in text for s in sessions)


def _clean_spool(home: Home, sessions: Sequence[str], needle: str | None) -> int:
    removed = 0
    if not home.spool_dir.is_dir() or (not sessions and needle is None):
        return 0
    for path in home.spool_dir.rglob("*"):
        if not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if _mentions(text, [f'"{s}"' for s in sessions], needle):
            path.unlink(missing_ok=True)
            removed += 1
    return removed


def _clean_logs(home: Home, sessions: Sequence[str], needle: str | None) -> int:
    from funes_core.files import atomic_write_text

    logs = home.root / "logs"
    if not logs.is_dir() or (not sessions and needle is None):
        return 0
    dropped = 0
    for path in logs.rglob("*"):
        if not path.is_file():
            continue
        try:
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)
        except OSError:
            continue
        kept = [ln for ln in lines if not _mentions(ln, sessions, needle)]
        if len(kept) != len(lines):
            dropped += len(lines) - len(kept)
            atomic_write_text(path, "".join(kept))
    return dropped


def _clean_state(home: Home, sessions: Sequence[str], needle: str | None) -> bool:
    from funes_core.home import State

    if not home.state_path.exists() or (not sessions and needle is None):
        return False
    state = State.load(home.state_path)
    doomed = [
        k
        for k, v in state.refused.items()
        if _mentions(v.error, sessions, needle)
        or _mentions(k, sessions, needle)
        or _refused_file_mentions(Path(k), sessions, needle)
    ]
    for key in doomed:
        del state.refused[key]
    if doomed:
        state.save(home.state_path)
    return bool(doomed)


def _refused_file_mentions(path: Path, sessions: Sequence[str], needle: str | None) -> bool:
    """Whether a refused file holds a purged session or the match, so its message may quote their text.

    A message quotes a value of the file, not always the session id, and the file may be named after
    nothing in it. A file already gone (the spool copy this purge deleted) counts too: its record
    could only quote what it held, and a record of a file that is not there serves nothing.
    """
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return _mentions(text, [f'"{s}"' for s in sessions], needle)


def _unused(*_a: Any) -> None:  # pragma: no cover
    return None


_ = (contextlib, json, os, Path)
