"""The indexing engine behind ``funes index``: sources → validated turns → chunks → store → embeddings.

Sources are a named turns file (re-read every run), a directory (walked recursively; unchanged
files skipped by their ``size:mtime`` stamp) or the spools ``$FUNES_HOME/spool/<id>/`` (drained:
a file is deleted once all of it is stored). The run is **tier-major**: the text/thinking rows
of every pending file are written first (searchable by BM25 at once), then tool calls, then tool
results, and only then are embeddings computed, oldest owed first. Embeddings never block storage:
a row without a vector is found by BM25 and gets its vector later. ``funes index`` hands them to
the background worker (:mod:`funes_core.ingest.worker`) and returns; the library default
(``IndexOptions.embed="here"``) computes them in this run, under the lock, for as long as the
budget allows, which is what benchmarks and tests that want a finished memory use.

Crash safety comes from ordering, not from transactions spanning two systems:

1. each store commit is atomic and deduplicated by chunk id (re-running it is a no-op);
2. ``state.json`` is rewritten atomically *after* the commit it describes (a crash in between
   only means the next run re-reads a file and stores nothing new);
3. a spool file is removed only after its last tier is committed and recorded, and only if it
   is still the very file that was read (a producer may have replaced it meanwhile).

So ``kill -9`` at any instant leaves a memory that the next run completes, with no duplicates.
One writer at a time holds ``$FUNES_HOME/store.lock``; readers never take it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, TextIO

from funes_core.home import FileState, Home, LockBusyError, RefusedFile, State, write_lock
from funes_core.ingest.chunking import Chunk, Redactor, Tier, chunk_id, chunk_turn, render_block, tier_of
from funes_core.ingest.discovery import (
    LAST_TIER,
    Discovery,
    SourceFile,
    _file_sha256,
    _prune_state,
    _remove_if_unchanged,
    discover,
)
from funes_core.ingest.facets import RepoResolver, workdir_of
from funes_core.ingest.markers import serve_markers
from funes_core.ingest.native import bound_native_memory, release_native_memory
from funes_core.ingest.notes import notes_file, reserved_for_notes
from funes_core.ingest.rebuild import copy_rows, rebuild_memory, settle_rebuild
from funes_core.ingest.report import IndexOptions, IndexProgress, IndexReport, IndexRunError, _NoProgress
from funes_core.ingest.sources import TURNS_SUFFIX, load_redactor
from funes_core.models.vectors import Vector
from funes_core.safetext import one_line, shorten
from funes_core.store.base import Row, Store
from funes_core.turns.format import (
    ParsedFile,
    Turn,
    TurnCheck,
    TurnsFormatError,
    format_ts,
    iter_turns,
    read_turns_file,
)
from funes_core.version import __version__

if TYPE_CHECKING:
    from funes_core.models.embed import Embedder

__all__ = [
    "EMBED_BATCH",
    "VECTOR_COMMIT_ROWS",
    "WRITE_BATCH_ROWS",
    "IndexOptions",
    "IndexProgress",
    "IndexReport",
    "IndexRunError",
    "Indexer",
    "SourceFile",
    "bound_native_memory",
    "discover",
    "load_redactor",
    "rebuild_memory",
    "release_native_memory",
    "run_index",
]

#: Rows per store commit while writing text. Big enough that a whole history is a few dozen
#: commits (each one a Lance version and a fragment that ``optimize`` merges again; 300,000
#: chunks were 150 commits at 2,000), small enough that a crash loses little work ...
WRITE_BATCH_ROWS = 10_000
#: ... or this many characters of text, whichever comes first: a batch of large blocks (a
#: 100 MB transcript) then holds no more text than 2,000 rows of 4,000 characters did.
WRITE_BATCH_CHARS = 8_000_000
#: Files per store commit, so a spool of many tiny files is not one commit per file.
WRITE_BATCH_FILES = 1_000
#: ``state.json`` is rewritten after a commit only once this long has passed since it last was
#: (and always at the end of a run). It is a crash's shortcut, not its safety: a file whose
#: commit it does not record yet is read again by the next run, which stores nothing twice. At
#: 19,000 files a rewrite after each of 100 commits was a 2 MB file written and fsynced 100 times.
STATE_SAVE_SECONDS = 5.0
#: Texts per embedding call (the model's batch); the budget is checked between calls.
EMBED_BATCH = 64
#: Vectors per store commit at least (~3 s of CPU embedding with the real model) ...
VECTOR_COMMIT_ROWS = 64
#: ... and a commit only once this much time has passed since the last one, so a fast embedder
#: does not turn into one Lance version per 64 rows (each commit costs tens of milliseconds).
VECTOR_COMMIT_SECONDS = 2.0
#: Owed rows fetched per round trip to the store.
OWED_FETCH = 256
#: Owed embeddings from which the embedding phase optimizes first (folds the rows just written into
#: the indexes), and vectors committed between two optimizes during it; a per-turn run owes a few.
#: Each vector commit looks its rows up through the id index, and rows outside it (written since
#: the last optimize, or moved by earlier commits) are scanned: without the optimizes the commits
#: get slower and hungrier as the phase goes on (7× the CPU after 19k vectors at 40k chunks).
OPTIMIZE_EVERY_VECTORS = 2_048
#: Parsed files kept in memory between tier passes (bytes of source); beyond it, files are re-read.
PARSE_CACHE_BYTES = 32 * 1024 * 1024
#: A file is chunked in slices of at most this many turns (one store probe each) ...
GROUP_TURNS = 256
#: ... or this many characters of block text, so that a huge file costs memory for one slice and
#: one batch of rows, never for all of it.
GROUP_CHARS = 4_000_000
#: Errors a store raises for rows it cannot take (a value out of range, text it cannot encode): they
#: are the file's fault, so that file is refused and the others commit. Anything else (a full disk,
#: a lost lock, a permission) is not a file's fault and stops the run with nothing recorded for it.
_ROW_ERRORS: tuple[type[Exception], ...] = (ValueError, TypeError, OverflowError, UnicodeError)

TIERS: tuple[Tier, ...] = (Tier.TEXT, Tier.TOOL_USE, Tier.TOOL_RESULT)


# --------------------------------------------------------------------------- the engine


@dataclass(slots=True)
class _Batch:
    """Rows waiting for one store commit, grouped by the file they come from."""

    #: Files all of whose rows at this tier are in this batch or in an earlier commit.
    files: list[SourceFile] = field(default_factory=list)
    by_file: dict[str, tuple[SourceFile, list[Row]]] = field(default_factory=dict)
    rows: int = 0
    chars: int = 0
    turns: set[tuple[str, str]] = field(default_factory=set)
    redactions: Counter[str] = field(default_factory=Counter)
    #: Chunk ids already in this batch (two files may hold the same turn).
    seen: set[str] = field(default_factory=set)

    def add(self, src: SourceFile, rows: list[Row]) -> None:
        self.by_file.setdefault(src.key, (src, []))[1].extend(rows)
        self.rows += len(rows)
        self.chars += sum(len(r.text) for r in rows)


class _FileChanged(Exception):
    """A file validated earlier in this run no longer reads the same (edited in place meanwhile)."""


def _slices(turns: Iterable[Turn]) -> Iterator[list[Turn]]:
    """``turns`` in slices of at most :data:`GROUP_TURNS` turns or :data:`GROUP_CHARS` characters."""
    group: list[Turn] = []
    chars = 0
    for turn in turns:
        group.append(turn)
        chars += sum(len(b.text) for b in turn.blocks)
        if len(group) >= GROUP_TURNS or chars >= GROUP_CHARS:
            yield group
            group, chars = [], 0
    if group:
        yield group


def _restream(src: SourceFile, check: TurnCheck | None) -> Iterator[Turn]:
    """Read a file validated earlier in this run again, turn by turn."""
    try:
        yield from iter_turns(src.path, display=str(src.path), check=check)
    except TurnsFormatError as err:
        raise _FileChanged(str(err)) from None


class Indexer:
    """Runs one index pass over discovered files against an open store, under the caller's lock.

    ``clock`` is injectable so budget behaviour is testable without sleeping.
    """

    def __init__(
        self,
        home: Home,
        store: Store,
        embedder: Embedder,
        *,
        state: State,
        redactor: Redactor | None,
        include_thinking: bool = True,
        progress: IndexProgress | None = None,
        warn: Callable[[str], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
        repo_of: Callable[[str | None], str] | None = None,
        write_batch_rows: int = WRITE_BATCH_ROWS,
        write_batch_files: int = WRITE_BATCH_FILES,
        vector_commit_rows: int = VECTOR_COMMIT_ROWS,
    ) -> None:
        self.home = home
        self.store = store
        self.embedder = embedder
        self.state = state
        self.redactor = redactor
        self.include_thinking = include_thinking
        self.progress: IndexProgress = progress or _NoProgress()
        self.warn = warn or (lambda msg: print(msg, file=sys.stderr))
        self.clock = clock
        self.repo_of = repo_of or RepoResolver()
        self.write_batch_rows = write_batch_rows
        self.write_batch_files = write_batch_files
        self.vector_commit_rows = vector_commit_rows
        self._cache: dict[str, ParsedFile] = {}
        self._cache_bytes = 0
        #: Files too large for the cache that were read through whole and found valid this run.
        self._validated: set[str] = set()
        self._deadline: float | None = None
        self.report = IndexReport()
        self._wrote = False
        self._since_optimize = 0
        self._turns: set[tuple[str, str]] = set()
        self._last_flush = clock()
        self._last_state_save = clock()
        #: Asked between embedding batches: true when new text waits (a producer marked a spool
        #: dirty), so the run stops embedding and stores that text first (see :func:`run_index`).
        self.interrupt: Callable[[], bool] = lambda: False
        self.interrupted = False

    # -- budget ---------------------------------------------------------------------------
    def _over_budget(self) -> bool:
        if self._deadline is not None and self.clock() >= self._deadline:
            self.report.budget_hit = True
            return True
        return False

    # -- parsing --------------------------------------------------------------------------
    def _turns_of(self, src: SourceFile) -> Iterable[Turn] | None:
        """The validated turns of ``src``, or ``None`` if it is refused.

        A file is validated whole before anything of it is stored. One that fits the parse cache is
        kept in memory for the later tiers; a larger one is read through once to validate it (nothing
        kept), then streamed again for each tier, so memory never grows with a file's size.
        """
        cached = self._cache.get(src.key)
        if cached is not None:
            return cached.turns
        # Only funes' own notes file may hold keyword-trigger notes (recall prints them unmarked).
        check = None if src.path == notes_file(self.home) else reserved_for_notes
        if src.key in self._validated:
            return _restream(src, check)
        warnings: list[str] = []
        try:
            if src.size <= PARSE_CACHE_BYTES:
                parsed = read_turns_file(src.path, display=str(src.path), check=check)
                warnings = parsed.warnings
            else:
                for _ in iter_turns(src.path, display=str(src.path), warnings=warnings, check=check):
                    pass
        except TurnsFormatError as err:
            self._refuse(src, err.line, str(err))
            return None
        for note in warnings:
            self.report.warnings.append(note)
            self.warn(f"warning: {note}")
        if src.size > PARSE_CACHE_BYTES:
            self._validated.add(src.key)
            return _restream(src, check)
        if self._cache_bytes + src.size <= PARSE_CACHE_BYTES:
            self._cache[src.key] = parsed
            self._cache_bytes += src.size
        return parsed.turns

    def _refuse(self, src: SourceFile, line: int, message: str) -> None:
        """Refuse a file: reported now, remembered in the state (by content) and skipped until it changes."""
        if not src.path.name.endswith(TURNS_SUFFIX) and line <= 1:
            message += " (not a turns file? convert agent transcripts with `funes integrations convert`)"
        src.refused = True
        self.report.rejected.append(message)
        self.warn(message)
        if src.signed:
            with contextlib.suppress(OSError):
                self.state.refused[src.key] = RefusedFile(
                    sig=src.sig, sha256=_file_sha256(src.path), funes_version=__version__, error=message
                )
            self.state.files.pop(src.key, None)

    def _refuse_rows(self, src: SourceFile, exc: Exception) -> None:
        from funes_core.redact import redact

        reason = redact(str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__)[0]
        self._refuse(src, 0, f"{src.path}: the memory refused its rows: {shorten(one_line(reason), 200)}")

    def _skip(self, src: SourceFile, reason: str) -> None:
        src.skipped = True
        self.warn(f"{src.path}: changed while it was being indexed ({reason}); it is read again next run")

    # -- chunking -------------------------------------------------------------------------
    def _wanted_blocks(self, turn: Turn, tier: Tier) -> list[int]:
        """Indexes of the blocks of ``turn`` this tier stores (non-empty, thinking allowed)."""
        out = []
        for idx, block in enumerate(turn.blocks):
            if tier_of(block.block_type) != tier:
                continue
            if block.block_type == "thinking" and not self.include_thinking:
                continue
            if not render_block(block).strip():
                continue  # yields no chunk, so its id can never be found stored
            out.append(idx)
        return out

    def _rows_for(self, src: SourceFile, chunks: Sequence[Chunk]) -> list[Row]:
        path = str(src.path)
        return [
            c.to_row(workdir=workdir_of(c.cwd), repo=self.repo_of(c.cwd), source_path=path) for c in chunks
        ]

    def _fill(self, batch: _Batch, src: SourceFile, turns: Sequence[Turn], tier: Tier) -> None:
        """Chunk the turns of one slice of ``src`` at ``tier`` that are not stored yet, into ``batch``.

        A turn is immutable (an edit is a new turn), and all of a block's pieces are committed
        together, so a turn whose wanted blocks all have their first piece stored is complete:
        it is skipped without redacting or splitting it again. That keeps re-reading a grown
        session cheap: only its new turns are processed.
        """
        wanted: list[tuple[Turn, list[int]]] = []
        probe: list[str] = []
        for turn in turns:
            blocks = self._wanted_blocks(turn, tier)
            if blocks:
                wanted.append((turn, blocks))
                probe.extend(chunk_id(turn.session_id, turn.turn_uuid, b, 0) for b in blocks)
        stored = self.store.existing_ids(probe) if probe else set()
        for turn, blocks in wanted:
            if all(chunk_id(turn.session_id, turn.turn_uuid, b, 0) in stored for b in blocks):
                continue
            chunks, found = chunk_turn(
                turn, tiers=(tier,), include_thinking=self.include_thinking, redactor=self.redactor
            )
            fresh = [c for c in chunks if c.id not in stored and c.id not in batch.seen]
            if not fresh:
                continue
            batch.seen.update(c.id for c in fresh)
            batch.add(src, self._rows_for(src, fresh))
            batch.turns.add((turn.session_id, turn.turn_uuid))
            batch.redactions.update(found)

    def _add_rows(self, batch: _Batch) -> int:
        """Commit the batch's rows; rows a store refuses refuse their file, and the other files commit."""
        groups = list(batch.by_file.values())
        rows = [row for _, file_rows in groups for row in file_rows]
        if not rows:
            return 0
        try:
            return self.store.add(rows)
        except _ROW_ERRORS as exc:
            if len(groups) == 1:
                self._refuse_rows(groups[0][0], exc)
                return 0
            first = exc
        added = failed = 0
        for src, file_rows in groups:
            try:
                added += self.store.add(file_rows)
            except _ROW_ERRORS as exc:
                failed += 1
                self._refuse_rows(src, exc)
        if failed == len(groups):
            raise first  # every file at once: the store, not the rows
        return added

    def _commit(self, batch: _Batch, tier: Tier) -> None:
        if not batch.files and not batch.rows:
            return
        added = self._add_rows(batch)
        self._wrote = self._wrote or added > 0
        for src in batch.files:
            if src.refused or src.skipped:
                continue
            src.done = max(src.done, int(tier))
            if src.signed:
                self.state.files[src.key] = FileState(src.sig, src.done, self.include_thinking)
        if self.clock() - self._last_state_save >= STATE_SAVE_SECONDS:
            self.state.save(self.home.state_path)  # strictly after the store commit
            self._last_state_save = self.clock()
        new_turns = batch.turns - self._turns
        self._turns |= new_turns
        self.report.chunks += added
        self.report.turns = len(self._turns)
        self.report.redactions.update(batch.redactions)
        self.progress.wrote(steps=len(batch.files), turns=len(new_turns), chunks=added)
        release_native_memory()

    # -- phases ---------------------------------------------------------------------------
    def write(self, files: list[SourceFile]) -> None:
        """Store every tier of ``files``, tier by tier, in batched commits, until done or out of budget.

        A commit holds about :data:`WRITE_BATCH_ROWS` rows, from several small files or from a
        slice of a large one; a file is recorded as done at a tier only by the commit that holds
        its last rows. The budget is checked after each commit, so every run makes progress (at
        least one batch), and a stop always falls on a commit boundary.
        """
        steps = sum(len([t for t in TIERS if int(t) > f.done]) for f in files)
        self.progress.writing(steps)
        read: set[str] = set()
        for tier in TIERS:
            batch = _Batch()
            for src in files:
                if src.refused or src.skipped or src.done >= int(tier):
                    continue
                turns = self._turns_of(src)
                if turns is None:
                    continue
                read.add(src.key)
                self.report.files = len(read)
                try:
                    for group in _slices(turns):
                        self._fill(batch, src, group, tier)
                        if batch.rows >= self.write_batch_rows or batch.chars >= WRITE_BATCH_CHARS:
                            self._commit(batch, tier)
                            batch = _Batch()
                            if self._over_budget():
                                return
                            if src.refused:
                                break
                except _FileChanged as exc:
                    self._skip(src, str(exc))
                    continue
                if src.refused:
                    continue
                batch.files.append(src)
                if len(batch.files) >= self.write_batch_files:
                    self._commit(batch, tier)
                    batch = _Batch()
                    if self._over_budget():
                        return
            self._commit(batch, tier)
            if (batch.files or batch.rows) and self._over_budget():
                return

    def embed(self) -> None:
        """Give owed rows their vectors, oldest first, committing every few batches, within the budget.

        Skipped when the budget is already spent; otherwise the budget is checked after each
        model batch, and vectors computed so far are committed before stopping.
        """
        if self.report.budget_hit or self._over_budget():
            return
        done_ids: set[str] = set()
        total = self._owed_count()
        if total == 0:
            return
        self.progress.embedding(total)
        if self._wrote and total >= OPTIMIZE_EVERY_VECTORS:
            self._optimize_for_vectors()
        while True:
            rows = [r for r in self.store.owed(OWED_FETCH) if r.id not in done_ids]
            if not rows:
                return
            pending: dict[str, Vector] = {}
            stop = False
            for start in range(0, len(rows), EMBED_BATCH):
                batch = rows[start : start + EMBED_BATCH]
                vectors = self.embedder.embed_documents([r.text for r in batch])
                pending.update((r.id, v) for r, v in zip(batch, vectors, strict=True))
                if len(pending) >= self.vector_commit_rows and (
                    self.clock() - self._last_flush >= VECTOR_COMMIT_SECONDS
                ):
                    self._flush_vectors(pending, done_ids)
                    pending = {}
                if self._over_budget():
                    stop = True
                    break
                if self.interrupt():
                    self.interrupted = stop = True
                    break
            self._flush_vectors(pending, done_ids)
            if stop:
                return

    def _flush_vectors(self, pending: dict[str, Vector], done_ids: set[str]) -> None:
        if not pending:
            return
        self.store.set_vectors(pending)
        self._last_flush = self.clock()
        self._wrote = True
        self._since_optimize += len(pending)
        if self._since_optimize >= OPTIMIZE_EVERY_VECTORS:
            self._optimize_for_vectors()
        done_ids.update(pending)
        self.report.embedded += len(pending)
        self.progress.embedded(len(pending))

    def _optimize_for_vectors(self) -> None:
        """Fold every row into the indexes so the next vector commits find theirs through the id
        index instead of scanning (see :data:`OPTIMIZE_EVERY_VECTORS`); new text is also indexed."""
        self.release_parsed()
        self.store.optimize()
        self._since_optimize = 0

    def _owed_count(self) -> int:
        return self.store.owed_count()

    def release_parsed(self) -> None:
        """Drop the parsed files kept between tiers and give the memory back before ``optimize``."""
        self._cache.clear()
        self._cache_bytes = 0
        release_native_memory()

    def drain_finished(self, files: Iterable[SourceFile]) -> None:
        """Delete spool files whose every tier is stored (and forget their state entries)."""
        changed = False
        for src in files:
            if src.kind != "spool" or src.refused or src.skipped or src.done < LAST_TIER:
                continue
            if _remove_if_unchanged(src):
                self.report.spool_deleted += 1
                self.state.files.pop(src.key, None)
                changed = True
        if changed:
            self.state.save(self.home.state_path)

    def run(
        self,
        discovery: Discovery,
        *,
        budget: float | None = None,
        embed: bool = True,
        defer_upkeep: bool = False,
    ) -> IndexReport:
        """Write, drain, embed (unless ``embed`` is false), optimize; returns the report (also kept
        on ``self.report``).

        Without ``embed``, what is owed is not counted when this run stored rows: every row it
        stored is owed, which is all a caller needs to wake the worker, and the count reads the
        whole vector column (2-3 s at a million rows, on every hook's append). The report then
        holds those rows with ``owed_counted`` false; a run that stored nothing counts, so that
        rows left owed by a worker that died still get one.

        ``defer_upkeep``: the background worker will embed what this run stores, and it optimizes
        after each commit, so this run does not (2-4 s at a million rows: compaction and the
        index deltas) unless :meth:`Store.needs_upkeep` says reads are slowing down meanwhile (a
        large run, or appends piling up with no worker able to fold them in). Until then the new
        rows are found by BM25 and by id all the same (LanceDB searches unindexed fragments flat).
        """
        self.report.budget = budget
        self._deadline = None if budget is None else self.clock() + budget
        try:
            self.drain_finished(discovery.finished_spool)
            self.write(discovery.files)
            self.drain_finished(discovery.files)
            if embed:
                self.embed()
        finally:
            self.progress.close()
        self.report.files_left = sum(
            1 for f in discovery.files if not f.refused and (f.skipped or f.done < LAST_TIER)
        )
        self.release_parsed()
        if self._wrote:
            if not defer_upkeep or self.store.needs_upkeep():
                self.store.optimize()
            self.state.last_indexed = format_ts(datetime.now(UTC))
        _prune_state(self.state, discovery.roots)
        self.state.save(self.home.state_path)
        if embed or not self.report.chunks:
            self.report.owed = self._owed_count()
        else:
            self.report.owed, self.report.owed_counted = self.report.chunks, False
        return self.report


# --------------------------------------------------------------------------- entry points


#: Passes one holder of the store lock makes for dirty spools before it lets go (then it looks again).
MAX_PASSES = 50


def run_index(
    options: IndexOptions,
    *,
    home: Home | None = None,
    embedder: Embedder | None = None,
    progress: IndexProgress | None = None,
    warn: Callable[[str], None] | None = None,
    lock_wait: float = 0.0,
    lock_notify: TextIO | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> IndexReport:
    """Run ``funes index`` under the write lock; raises ``LockBusyError``, ``ModelMismatchError``,
    :class:`IndexRunError` for the caller to report. Redaction uses :func:`load_redactor`.

    A run also serves producers that wrote *while* it ran (the dirty markers of
    :meth:`Home.mark_dirty`, :mod:`funes_core.ingest.markers`): a run over the spools clears the
    markers of the spools it is about to list before listing them and stops embedding to store new
    text as soon as a marker appears; and every run, a ``PATH`` one too, looks once more after it
    releases the store lock (:func:`_serve_after_release`). So a hook whose own indexer exits 75
    never leaves its turn waiting for an unrelated next turn.

    With ``options.embed == "background"`` the background worker is started (unless one runs)
    once the lock is released, when anything is owed; the report names it.
    """
    if options.harness is not None and options.path is not None:
        raise IndexRunError("--harness selects a spool; it cannot be combined with PATH")
    home = (home or Home.resolve()).ensure()
    say = warn or (lambda msg: print(msg, file=sys.stderr))
    from funes_core.store.trash import prune

    prune(home)  # trash entries past their week
    bound_native_memory()  # before LanceDB starts its threads
    if embedder is None:
        # Before the lock and before anything is created: an unknown model, a memory built with
        # another one, or missing weights is one line and an untouched memory.
        embedder = index_embedder(home, options)
    report = _holding_lock(
        options, home, embedder, wait=lock_wait, notify=lock_notify, progress=progress, say=say, clock=clock
    )
    _serve_after_release(options, home, embedder, report, say=say, clock=clock)
    if options.embed == "background" and report.owed:
        from funes_core.ingest.worker import Progress, ensure_worker, progress_path

        report.worker = ensure_worker(home, owed=report.owed)
        known = Progress.load(progress_path(home))
        report.worker_rate = known.rate if known else None
    return report


def _holding_lock(
    options: IndexOptions,
    home: Home,
    embedder: Embedder,
    *,
    wait: float,
    notify: TextIO | None,
    progress: IndexProgress | None,
    say: Callable[[str], None],
    clock: Callable[[], float],
) -> IndexReport:
    """:func:`_locked_run` under the store lock. ``LockBusyError`` when it is taken (its holder
    serves the markers); a run that fails still has the markers set meanwhile served, detached."""
    try:
        with write_lock(home, wait=wait, notify=notify):
            return _locked_run(options, home, embedder, progress=progress, say=say, clock=clock)
    except LockBusyError:
        raise
    except Exception:
        serve_markers(home)
        raise


def _serve_after_release(
    options: IndexOptions,
    home: Home,
    embedder: Embedder,
    report: IndexReport,
    *,
    say: Callable[[str], None],
    clock: Callable[[], float],
) -> None:
    """Serve the markers set while the lock was held, merging what that does into ``report``.

    In this process, for as long as the lock is free and the budget lasts. Once the budget is
    spent they get a detached run of their own (the caller asked for a bounded run, and nobody
    else is coming for them); when another holder took the lock, it looks after its release.
    """
    follow_up = dataclasses.replace(options, path=None, harness=None, limit=None, rebuild=False)
    while home.dirty_ids():
        if report.budget_hit:
            serve_markers(home)
            return
        try:
            more = _holding_lock(
                follow_up, home, embedder, wait=0.0, notify=None, progress=None, say=say, clock=clock
            )
        except LockBusyError:
            return
        report.merge(more)


def _locked_run(
    options: IndexOptions,
    home: Home,
    embedder: Embedder,
    *,
    progress: IndexProgress | None,
    say: Callable[[str], None],
    clock: Callable[[], float],
) -> IndexReport:
    """One holding of the store lock: the asked-for run, then passes for spools marked meanwhile."""
    from funes_core.store import open_store

    if options.rebuild:
        from funes_core.ingest.worker import stop_worker

        stop_worker(home)  # it would go on embedding into the memory being moved aside
    rebuilt_from = rebuild_memory(home) if options.rebuild else None
    if rebuilt_from is not None:
        say(f"note: moved the old memory aside to {rebuilt_from} while the new one is built")
        try:
            if options.model is not None:
                copied = copy_rows(rebuilt_from, home, embedder)
                say(f"note: copied {copied} chunks to re-embed with {embedder.model}")
            built = _locked_run(
                dataclasses.replace(options, rebuild=False),
                home,
                embedder,
                progress=progress,
                say=say,
                clock=clock,
            )
        except BaseException:
            say(f"note: the rebuild did not finish; the old memory is intact at {rebuilt_from}")
            raise
        built.rebuilt_from = settle_rebuild(home, rebuilt_from, say)
        return built
    state = State.load(home.state_path)
    if not (home.memory_dir / "chunks.lance").exists():
        state.files.clear()  # the memory was deleted: what the state says was stored is gone
    spools = options.path is None
    if spools:
        home.clear_dirty([options.harness] if options.harness else home.spool_ids())
    # Validate the request before creating anything: a typo'd spool id must not create a memory.
    discovery = discover(home, options, state)
    if not (discovery.files or discovery.finished_spool) and not (home.memory_dir / "chunks.lance").exists():
        # Nothing to read and no memory: do not leave an empty memory behind (status would then
        # report "0 chunks" instead of telling the user how to build one).
        return IndexReport(rebuilt_from=rebuilt_from)
    store = open_store(home=home, create=True, read_consistency_interval=None)
    store.stamp_model(embedder.stamp)
    redactor = load_redactor(say)
    report: IndexReport | None = None
    for _ in range(MAX_PASSES):
        indexer = Indexer(
            home,
            store,
            embedder,
            state=state,
            redactor=redactor,
            include_thinking=options.include_thinking,
            progress=progress,
            warn=say,
            clock=clock,
        )
        if spools:
            indexer.interrupt = lambda: bool(home.dirty_ids())
        done = indexer.run(
            discovery,
            budget=options.budget,
            embed=options.embed == "here",
            defer_upkeep=options.embed == "background",
        )
        if report is None:
            report = done
        else:
            report.merge(done)
        if not indexer.interrupted or done.budget_hit:
            break
        # New text arrived while embedding: store it first, then carry on embedding.
        options = dataclasses.replace(options, harness=None, limit=None, rebuild=False)
        home.clear_dirty(home.dirty_ids())
        discovery = discover(home, options, state)
        progress = None
    assert report is not None
    report.rebuilt_from = rebuilt_from
    return report


def index_embedder(home: Home, options: IndexOptions) -> Embedder:
    """The embedder this run uses (see :func:`funes_core.models.registry.choose_embedder`), checked.

    Raises :class:`IndexRunError` with one line for an unknown model, a memory built with another
    one (without ``--rebuild``), a dimension that changed, or weights that are not on this machine.
    """
    from funes_core.models.base import ModelError
    from funes_core.models.registry import choose_embedder

    stored = None
    if not options.rebuild and (home.memory_dir / "chunks.lance").exists():
        from funes_core.store import open_store

        stored = open_store(home=home, read_consistency_interval=None).model_stamp()
    try:
        embedder = choose_embedder(home, stored, requested=options.model, label=str(home.memory_dir))
        embedder.check()
    except ModelError as exc:
        raise IndexRunError(str(exc)) from None
    return embedder


#: Rows per write when a rebuild copies the old memory.
