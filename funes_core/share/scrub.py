"""``funes scrub`` and ``funes purge``: the two explicit exceptions to append-only.

- **scrub** applies today's redaction rules to every stored block. Rules improve; a row indexed
  last month may hold a token today's rules catch. A changed block is split again and embedded
  again; its old rows are replaced.
- **purge** deletes turns for privacy: every turn of the sessions named (``--session``), or every
  turn with a block containing a text (``--match``, case-insensitive, literal, never logged).

Both are planned first (:func:`plan_scrub`, :func:`plan_purge`: nothing changes), so the command
can show a preview and ask (:mod:`funes_core.share.brakes`); then they run under the store lock in
an order that a kill at any point leaves finishable:

1. the rows to be removed are exported to the trash (:mod:`funes_core.store.trash`), unless the
   user asked for ``--no-trash``;
2. the event is appended to the purge log as an **intent** (ids and counts, no text): from here
   on the store refuses the purged rows, and the next push removes them from each remote;
3. (purge) spool files, log lines and ``state.json`` refusal records quoting the turns (or whose
   file held them) are deleted, while the match text is still known (it is never written down);
4. the memory is rewritten in place (:mod:`funes_core.store.rewrite`: new files only, every old
   version, transaction and index deleted); old memories ``memory.old-*`` that
   ``index --rebuild`` kept and the remote mirrors under ``cache/remotes/`` are deleted (the
   mirrors are rebuilt from the bucket on the next read, which ``funes push`` rewrites the same way);
5. the event is closed (``done``).

A run killed before step 5 is finished by the next ``funes purge`` or ``funes scrub``
(:func:`finish_interrupted`): the rows still there are removed, old versions are deleted, the
indexes are built again if the kill came between the rewrite and its index build.
``funes purge --undo`` puts a trash entry back (:func:`undo`).
"""

from __future__ import annotations

import shutil
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from funes_core.ingest.chunking import chunk_id, split_text, stitch
from funes_core.redact import redact
from funes_core.share.brakes import Preview, check_match, preview_rows

if TYPE_CHECKING:
    import pyarrow as pa

    from funes_core.home import Home
    from funes_core.models.embed import Embedder
    from funes_core.store.base import Row
    from funes_core.store.lance import LanceStore

__all__ = [
    "PurgeError",
    "PurgePlan",
    "PurgeReport",
    "ScrubPlan",
    "ScrubReport",
    "UndoReport",
    "finish_interrupted",
    "plan_purge",
    "plan_scrub",
    "purge",
    "scrub",
    "undo",
]


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
    trash: str | None = None


@dataclass(slots=True)
class PurgeReport:
    rows: int = 0
    turns: int = 0
    sessions: int = 0
    cleaned: list[str] = field(default_factory=list)
    trash: str | None = None


@dataclass(slots=True)
class PurgePlan:
    """What a purge would remove; nothing is changed until :func:`purge` is given it."""

    sessions: list[str]
    match: str | None
    rows: list[Row]
    preview: Preview
    #: a note to print (the match is literal), or ``None``
    note: str | None = None

    @property
    def drop(self) -> set[str]:
        return {r.id for r in self.rows}


@dataclass(slots=True)
class ScrubPlan:
    """What a scrub would change: the old rows of each changed block, and their replacements."""

    blocks: int
    rows_before: int
    old: list[Row]
    new: list[Row]
    by_kind: Counter[str]
    preview: Preview


@dataclass(slots=True)
class UndoReport:
    event: str
    op: str
    at: str
    rows: int
    #: the memory changed model since: the rows came back without vectors, owed to the worker
    reembed: str | None = None


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


def _turn_count(rows: Iterable[Row]) -> int:
    return len({(r.session_id, r.turn_uuid) for r in rows})


def plan_scrub(home: Home, *, embedder: Embedder) -> ScrubPlan:
    """Find every block today's rules would change (reads the memory, writes nothing)."""
    from funes_core.store import open_store

    store = open_store(None, home=home, create=False, expect=embedder.stamp)
    rows = store.scan()
    blocks = _blocks(rows)
    old: list[Row] = []
    new: list[Row] = []
    kinds_seen: Counter[str] = Counter()
    for (session_id, turn_uuid, block_idx), parts in sorted(blocks.items()):
        redacted, kinds = redact(_stitched(parts))
        if not kinds:
            continue
        kinds_seen.update(kinds)
        old.extend(parts)
        first = parts[0]
        for split_idx, piece in enumerate(split_text(redacted)):
            new.append(
                replace(
                    first,
                    id=chunk_id(session_id, turn_uuid, block_idx, split_idx),
                    text=piece,
                    split_idx=split_idx,
                    vector=None,
                )
            )
    preview = preview_rows(old, total_turns=_turn_count(rows), total_rows=len(rows))
    return ScrubPlan(len(blocks), len(rows), old, new, kinds_seen, preview)


def scrub(
    home: Home,
    *,
    embedder: Embedder,
    plan: ScrubPlan | None = None,
    trash: bool = True,
    say: Callable[[str], None] = lambda _m: None,
) -> ScrubReport:
    """Redact the whole local memory with today's rules; the caller holds the write lock."""
    from funes_core.store import open_store
    from funes_core.store.purgelog import append_event, mark_done, new_event_id, now_iso

    plan = plan or plan_scrub(home, embedder=embedder)
    store = open_store(None, home=home, create=False, expect=embedder.stamp)
    report = ScrubReport(
        blocks=plan.blocks, changed_blocks=0, rows_before=plan.rows_before, by_kind=Counter(plan.by_kind)
    )
    report.changed_blocks = len({(r.session_id, r.turn_uuid, r.block_idx) for r in plan.old})
    dropped = [r.id for r in plan.old]
    new_rows = plan.new
    if new_rows:
        vectors = embedder.embed_documents([r.text for r in new_rows])
        new_rows = [r.with_vector(v) for r, v in zip(new_rows, vectors, strict=True)]
    if dropped:
        event_id, at = new_event_id(), now_iso()
        if trash:
            report.trash = str(_to_trash(home, store, dropped, event=event_id, at=at, op="scrub", by="rules"))
        append_event(
            home,
            op="scrub",
            by="rules",
            rows=len(dropped),
            ids=dropped,
            changed=len(new_rows),
            event_id=event_id,
            intent=True,
            trash=trash,
            at=at,
        )
        store.rewrite(drop_ids=dropped, replacements=new_rows, spool_dir=home.cache_dir)
        report.cleaned = _clean_copies(home)
        mark_done(home, event_id)
    report.cleaned += _redact_files(home)
    report.rows_after = store.count()
    return report


def _to_trash(
    home: Home, store: LanceStore, ids: Sequence[str], *, event: str, at: str, op: str, by: str
) -> Any:
    """Export the whole rows ``ids`` (vectors too) to the trash before they are rewritten away."""
    import pyarrow as pa

    from funes_core.store.trash import write_entry

    parts = list(store.arrow_rows_by_id(sorted(set(ids))))
    rows: pa.Table = pa.concat_tables(parts) if parts else pa.table({})
    return write_entry(home, event=event, at=at, op=op, by=by, rows=rows, stamp=store.model_stamp())


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


def plan_purge(home: Home, *, sessions: Sequence[str] = (), match: str | None = None) -> PurgePlan:
    """What purging ``sessions`` or the turns containing ``match`` would remove; writes nothing.

    Raises :class:`PurgeError` (nothing named, an unknown session) or
    :class:`~funes_core.share.brakes.BrakeError` (a match too short)."""
    from funes_core.store import open_store
    from funes_core.store.base import Filters

    if not sessions and match is None:
        raise PurgeError("name what to purge: --session ID or --match TEXT")
    note = check_match(match) if match is not None else None
    store = open_store(None, home=home, create=False)
    rows = store.scan()
    chosen: dict[str, Row] = {}
    if sessions:
        missing = [s for s in dict.fromkeys(sessions) if store.count(Filters(session_id=s)) == 0]
        if missing:
            raise PurgeError(f"no session {missing[0]} in the local memory; nothing was purged")
        wanted = set(sessions)
        chosen.update((r.id, r) for r in rows if r.session_id in wanted)
    if match is not None:
        needle = match.lower()
        blocks = _blocks(rows).items()
        hit_turns = {(sid, tid) for (sid, tid, _b), parts in blocks if needle in _stitched(parts).lower()}
        chosen.update((r.id, r) for r in rows if (r.session_id, r.turn_uuid) in hit_turns)
    picked = sorted(chosen.values(), key=lambda r: (r.session_id, r.seq, r.block_idx, r.split_idx))
    preview = preview_rows(picked, total_turns=_turn_count(rows), total_rows=len(rows))
    return PurgePlan(list(dict.fromkeys(sessions)), match, picked, preview, note)


def purge(
    home: Home,
    plan: PurgePlan | None = None,
    *,
    sessions: Sequence[str] = (),
    match: str | None = None,
    trash: bool = True,
    say: Callable[[str], None] = lambda _m: None,
) -> PurgeReport:
    """Delete the turns ``plan`` names (or plan them from ``sessions``/``match``); the caller holds
    the write lock. See the module notes for the order of the steps."""
    from funes_core.store import open_store
    from funes_core.store.purgelog import append_event, mark_done, new_event_id, now_iso

    plan = plan or plan_purge(home, sessions=sessions, match=match)
    report = PurgeReport(rows=plan.preview.rows, turns=plan.preview.turns, sessions=plan.preview.sessions)
    drop = plan.drop
    if not drop:
        return report
    store = open_store(None, home=home, create=False)
    event_id, at = new_event_id(), now_iso()
    by = "session" if plan.sessions else "match"
    if trash:
        report.trash = str(_to_trash(home, store, sorted(drop), event=event_id, at=at, op="purge", by=by))
    append_event(
        home,
        op="purge",
        by=by,
        rows=len(drop),
        ids=drop,
        sessions=plan.sessions,
        event_id=event_id,
        intent=True,
        trash=trash,
        at=at,
    )
    marks = [*plan.sessions, *(r.session_id for r in plan.rows)] if plan.sessions else []
    report.cleaned = _clean_texts(home, sessions=marks, needle=plan.match)
    store.rewrite(drop_ids=drop, spool_dir=home.cache_dir)
    report.cleaned = _clean_copies(home) + report.cleaned
    mark_done(home, event_id)
    return report


def finish_interrupted(home: Home, say: Callable[[str], None] = lambda _m: None) -> list[str]:
    """Finish every purge or scrub the log shows as begun and never closed (killed mid-way).

    The rows still stored are removed; when the rewrite had already committed, the old versions
    (which still hold the text) are deleted and the indexes built again if they were lost. The
    caller holds the write lock. Returns one line per event finished."""
    from funes_core.store import NoIndexError, open_store
    from funes_core.store.purgelog import mark_done, unfinished

    done: list[str] = []
    for event in unfinished(home):
        ids = [str(i) for i in event.get("ids") or ()]
        try:
            store: LanceStore | None = open_store(None, home=home, create=False)
        except NoIndexError:
            store = None
        if store is not None:
            present = store.existing_ids(ids) if event.get("op") == "purge" else set()
            if present:
                store.rewrite(drop_ids=present, spool_dir=home.cache_dir)
            else:
                store.finish_rewrite()
        sessions = [str(s) for s in event.get("sessions") or ()]
        _clean_texts(home, sessions=sessions, needle=None)
        _clean_copies(home)
        mark_done(home, str(event.get("event")))
        line = f"finished the interrupted {event.get('op')} of {event.get('at')} ({event.get('rows')} row(s))"
        if event.get("op") == "scrub":
            line += "; run `funes scrub` to redact any block it had not reached"
        done.append(line)
        say(line)
    return done


def undo(home: Home, *, event: str | None = None) -> UndoReport:
    """Put a trash entry back (the newest, or ``event``'s); the caller holds the write lock.

    Rows a scrub replaced get their old version back. When the memory was rebuilt with another
    model since, the rows come back without vectors (owed: the worker embeds them again), and the
    report says so. The entry is deleted once its rows are back."""
    import pyarrow as pa

    from funes_core.store import open_store
    from funes_core.store.purgelog import mark_undone, unfinished
    from funes_core.store.trash import entries, load

    items = entries(home)
    if event is not None:
        items = [e for e in items if e.event.startswith(event)] if event else []
        if not items:
            raise PurgeError(f"no trash entry {event!r} (funes purge --trash lists them)")
    if not items:
        raise PurgeError("the trash is empty: nothing to undo (entries are kept 7 days)")
    entry = items[0]
    if any(str(e.get("event")) == entry.event for e in unfinished(home)):
        raise PurgeError(f"the {entry.op} of {entry.at} did not finish: run `funes purge` first, then undo")
    rows = load(entry)
    store = open_store(None, home=home, create=True)
    stamp = store.model_stamp()
    reembed = None
    if stamp is not None and (entry.model, entry.dim) != (stamp.model, stamp.dim):
        reembed = f"the memory now embeds with {stamp.model}, not {entry.model}"
    schema = store.table_schema()
    if schema is None:
        raise PurgeError("the local memory is gone: run `funes index` first, then undo")
    missing = [n for n in schema.names if n not in rows.schema.names and n != "vector"]
    if missing:
        raise PurgeError(f"trash entry {entry.event} lacks the column {missing[0]}; it cannot be restored")
    vector_field = schema.field("vector")
    if reembed is not None or "vector" not in rows.schema.names:
        rows = rows.drop_columns([c for c in ("vector",) if c in rows.schema.names])
        rows = rows.append_column(vector_field, pa.nulls(rows.num_rows, vector_field.type))
    rows = rows.select(schema.names)
    store.rewrite(drop_ids=rows.column("id").to_pylist(), replacement_table=rows, spool_dir=home.cache_dir)
    mark_undone(home, entry.event, rows.num_rows)
    entry.path.unlink(missing_ok=True)
    return UndoReport(entry.event, entry.op, entry.at, rows.num_rows, reembed)


def clean_leftovers(home: Home, *, sessions: Sequence[str] = (), needle: str | None = None) -> list[str]:
    """Delete every other copy under ``$FUNES_HOME``; returns what was cleaned, one phrase each."""
    return _clean_copies(home) + _clean_texts(home, sessions=sessions, needle=needle)


def _clean_copies(home: Home) -> list[str]:
    """The copies of the whole memory: ``memory.old-*``, the remote mirrors, stray rewrite spools."""
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
    return cleaned


def _clean_texts(home: Home, *, sessions: Sequence[str], needle: str | None) -> list[str]:
    """The text files quoting the turns: spool files, log lines, state.json refusal records."""
    cleaned: list[str] = []
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
