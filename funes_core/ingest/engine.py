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
import hashlib
import os
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol, TextIO

from funes_core import portable
from funes_core.home import FileState, Home, LockBusyError, RefusedFile, State, write_lock
from funes_core.ingest.chunking import Chunk, Redactor, Tier, chunk_id, chunk_turn, render_block, tier_of
from funes_core.ingest.facets import RepoResolver, workdir_of
from funes_core.ingest.markers import serve_markers
from funes_core.ingest.notes import notes_file, reserved_for_notes
from funes_core.ingest.sources import TURNS_SUFFIX, format_counts, iter_turns_files
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
    from funes_core.ingest.worker import WorkerStart
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

SourceKind = Literal["file", "dir", "spool"]
EmbedMode = Literal["here", "background", "none"]
TIERS: tuple[Tier, ...] = (Tier.TEXT, Tier.TOOL_USE, Tier.TOOL_RESULT)
LAST_TIER = int(Tier.TOOL_RESULT)


class IndexRunError(RuntimeError):
    """A run that cannot start (bad arguments, unknown spool); ``str()`` is the one line to show."""


# --------------------------------------------------------------------------- options and report


@dataclass(slots=True)
class IndexOptions:
    """What ``funes index`` was asked to do.

    ``embed`` says who computes owed embeddings: ``here`` (this run, under the lock, within the
    budget), ``background`` (the background worker, started if none runs; this run returns once
    the text is stored, and leaves compaction and index upkeep to the worker's commits) or
    ``none`` (nobody, yet: ``funes index --wait`` embeds after the run).
    """

    path: Path | None = None
    harness: str | None = None
    limit: int | None = None
    budget: float | None = None
    include_thinking: bool = True
    rebuild: bool = False
    #: ``--model NAME``: the embedding model (with ``rebuild``, the memory is re-embedded with it).
    model: str | None = None
    embed: EmbedMode = "here"


@dataclass(slots=True)
class IndexReport:
    """What a run did; :meth:`summary` is the one line printed on stdout."""

    files: int = 0
    turns: int = 0
    chunks: int = 0
    redactions: Counter[str] = field(default_factory=Counter)
    rejected: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    embedded: int = 0
    #: embeddings owed after the run: the memory's count, or (``owed_counted`` false) the rows this
    #: run stored, every one of them owed, when the run left counting to whoever embeds them
    owed: int = 0
    owed_counted: bool = True
    files_left: int = 0
    budget: float | None = None
    budget_hit: bool = False
    spool_deleted: int = 0
    #: where a rebuild kept the old memory (``None``: no rebuild, or the old memory was deleted)
    rebuilt_from: Path | None = None
    #: the background worker embedding what is owed (``embed="background"`` only)
    worker: WorkerStart | None = None
    #: its rate so far (``None``: not measured on this machine yet)
    worker_rate: float | None = None

    def merge(self, later: IndexReport) -> None:
        """Add a later pass of the same run (the pass a dirty spool asked for) to this report."""
        self.files += later.files
        self.turns += later.turns
        self.chunks += later.chunks
        self.redactions.update(later.redactions)
        self.rejected.extend(later.rejected)
        self.warnings.extend(later.warnings)
        self.embedded += later.embedded
        self.spool_deleted += later.spool_deleted
        if later.owed_counted:
            self.owed, self.owed_counted = later.owed, True  # a count after everything stored
        else:
            # Rows stored by the later pass, plus those of earlier passes that did not count; an
            # earlier count is dropped rather than added to: "new" is all this report then claims.
            self.owed = later.owed + (0 if self.owed_counted else self.owed)
            self.owed_counted = False
        self.files_left = later.files_left
        self.budget_hit = self.budget_hit or later.budget_hit

    def summary(self) -> str:
        files = f"{self.files} file" + ("" if self.files == 1 else "s")
        line = f"indexed {files}: {self.turns} turns, {self.chunks} chunks"
        total = sum(self.redactions.values())
        if total:
            noun = "redaction" if total == 1 else "redactions"
            line += f" ({total} {noun}: {format_counts(self.redactions)})"
        line += f"; {len(self.rejected)} rejected; embeddings owed: {self.owed}"
        if not self.owed_counted:
            line += " new"
        if self.owed and self.worker is not None:
            line += f" ({background_note(self.owed, self.worker, self.worker_rate)})"
        if self.budget_hit and (self.files_left or self.owed):
            left = []
            if self.files_left:
                left.append(
                    f"{self.files_left} file" + ("" if self.files_left == 1 else "s") + " not fully stored"
                )
            if self.owed and self.worker is None:
                left.append(f"{self.owed} embeddings")
            if left:
                what = " and ".join(left)
                line += f" — stopped at the {self.budget:g} s budget with {what} left"
                line += "; run `funes index` again to continue"
        return line


def background_note(owed: int, worker: WorkerStart, rate: float | None) -> str:
    """What a run that handed ``owed`` embeddings to the background worker says about them."""
    from funes_core.ingest.worker import estimate_seconds

    who = "a background worker" if worker.started else "the running background worker"
    pid = f", pid {worker.pid}," if worker.pid else ""
    minutes = max(1, round(estimate_seconds(owed, rate) / 60))
    return (
        f"{who}{pid} is embedding them: about {minutes} min; `funes status` shows progress, "
        "`funes index --wait` waits for it"
    )


class IndexProgress(Protocol):
    """Where the engine reports progress (a rich bar at a terminal, nothing otherwise)."""

    def writing(self, total_steps: int) -> None: ...

    def wrote(self, *, steps: int, turns: int, chunks: int) -> None: ...

    def embedding(self, total: int) -> None: ...

    def embedded(self, n: int) -> None: ...

    def close(self) -> None: ...


class _NoProgress:
    def writing(self, total_steps: int) -> None:
        pass

    def wrote(self, *, steps: int, turns: int, chunks: int) -> None:
        pass

    def embedding(self, total: int) -> None:
        pass

    def embedded(self, n: int) -> None:
        pass

    def close(self) -> None:
        pass


# --------------------------------------------------------------------------- sources


def _sig(st: os.stat_result) -> str:
    return f"{st.st_size}:{st.st_mtime_ns}"


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@dataclass(slots=True)
class SourceFile:
    """One turns file to read this run, with the stamp it had when it was found."""

    path: Path
    kind: SourceKind
    sig: str
    ino: int
    mtime_ns: int
    size: int
    #: highest tier already stored for this content (0 = nothing yet)
    done: int = 0
    refused: bool = False
    #: changed while it was being read: left for the next run, neither recorded nor refused
    skipped: bool = False

    @property
    def key(self) -> str:
        return str(self.path)

    @property
    def signed(self) -> bool:
        """Directory and spool files are remembered in state.json; a named file is re-read every run."""
        return self.kind != "file"


@dataclass(slots=True)
class Discovery:
    """The files a run will read, plus what discovery already settled."""

    files: list[SourceFile]
    #: spool files found fully stored by an earlier (interrupted) run: delete, don't re-read
    finished_spool: list[SourceFile] = field(default_factory=list)
    #: roots whose state entries for vanished files should be dropped
    roots: list[Path] = field(default_factory=list)


def _stat_source(path: Path, kind: SourceKind) -> SourceFile | None:
    try:
        st = path.stat()
    except OSError:
        return None  # vanished between listing and stat (a spool being drained by someone else)
    return SourceFile(
        path=path, kind=kind, sig=_sig(st), ino=st.st_ino, mtime_ns=st.st_mtime_ns, size=st.st_size
    )


def _settle_signed(src: SourceFile, state: State, include_thinking: bool) -> Literal["read", "skip", "done"]:
    """Decide from the state whether a signed file needs reading; updates ``src.done``."""
    refused = state.refused.get(src.key)
    if refused is not None:
        if refused.funes_version == __version__:
            if refused.sig == src.sig:
                return "skip"
            with contextlib.suppress(OSError):
                if _file_sha256(src.path) == refused.sha256:
                    refused.sig = src.sig  # touched, not changed: still the same bad content
                    return "skip"
        del state.refused[src.key]
    known = state.files.get(src.key)
    if known is not None and known.sig == src.sig and (known.thinking or not include_thinking):
        src.done = min(known.tier, LAST_TIER)
        if src.done >= LAST_TIER:
            return "done"
    return "read"


def discover(home: Home, options: IndexOptions, state: State) -> Discovery:
    """List what this run reads, newest mtime first, with ``--limit`` applied to files that need work."""
    found: list[SourceFile] = []
    finished: list[SourceFile] = []
    roots: list[Path] = []
    if options.path is not None:
        target = options.path.expanduser().absolute()
        if not target.exists():
            raise IndexRunError(f"no such file or folder: {options.path}")
        if target.is_file():
            src = _stat_source(target, "file")
            if src is not None:
                found.append(src)
        else:
            roots.append(target)
            for path in iter_turns_files(target):
                src = _stat_source(path, "dir")
                if src is not None and _settle_signed(src, state, options.include_thinking) == "read":
                    found.append(src)
    else:
        ids = home.spool_ids()
        if options.harness is not None:
            if options.harness not in ids:
                raise IndexRunError(f"no {options.harness} spool")
            ids = [options.harness]
        for spool_id in ids:
            root = home.spool_dir / spool_id
            roots.append(root)
            for path in iter_turns_files(root):
                src = _stat_source(path, "spool")
                if src is None:
                    continue
                verdict = _settle_signed(src, state, options.include_thinking)
                if verdict == "read":
                    found.append(src)
                elif verdict == "done":
                    finished.append(src)
    found.sort(key=lambda s: (-s.mtime_ns, s.key))
    if options.limit is not None:
        found = found[: max(0, options.limit)]
    return Discovery(files=found, finished_spool=finished, roots=roots)


def _prune_state(state: State, roots: Iterable[Path]) -> None:
    """Forget state entries for files under ``roots`` that no longer exist."""
    prefixes = [str(r).rstrip(os.sep) + os.sep for r in roots]
    if not prefixes:
        return
    for table in (state.files, state.refused):
        for key in [k for k in table if any(k.startswith(p) for p in prefixes)]:
            if not os.path.exists(key):
                del table[key]


def _remove_if_unchanged(src: SourceFile) -> bool:
    """Delete a drained spool file, but only if it is still the file that was read.

    The file is first renamed to a private name (never ``*.jsonl``), then checked: if a
    producer replaced it after it was read, the newer content is put back under its name
    (unless an even newer one already arrived there) so that nothing unstored is lost.
    """
    private = src.path.with_name(f".{src.path.name}.{os.getpid()}.drained")
    try:
        os.rename(src.path, private)
    except FileNotFoundError:
        return False
    try:
        st = private.stat()
        if st.st_ino == src.ino and _sig(st) == src.sig:
            private.unlink()
            return True
        with contextlib.suppress(FileExistsError):
            os.link(private, src.path)
        private.unlink()
    except OSError:
        with contextlib.suppress(OSError):
            if not src.path.exists():
                os.rename(private, src.path)
    return False


# --------------------------------------------------------------------------- native memory


def bound_native_memory() -> None:
    """Cap glibc at two malloc arenas for this process (a no-op elsewhere).

    LanceDB runs its work on a pool of threads, and glibc gives each contending thread an arena of
    its own that keeps what it freed: on a 50 MB transcript that is ~70 MB of resident memory
    holding nothing (measured: peak 464 MB with the default, 426 MB with two arenas). Called
    before the store is opened, so the threads it starts share two arenas.
    """
    portable.limit_malloc_arenas(2)


def release_native_memory() -> None:
    """Give the memory freed since the last call back to the system (glibc only).

    Called after each store commit and before ``optimize``: batches come and go, and without a trim
    the freed pages of every batch stay resident until the process ends.
    """
    portable.trim_malloc()


# --------------------------------------------------------------------------- redaction


def load_redactor(warn: Callable[[str], None] | None = None) -> Redactor | None:
    """The index-time secret redactor, or ``None`` (with a note) if this build has none."""
    from funes_core.ingest.sources import default_redactor

    try:
        return default_redactor()
    except ModuleNotFoundError as exc:
        if exc.name != "funes_core.redact":
            raise
        if warn is not None:
            warn("note: secret redaction disabled — funes_core.redact is not available in this build")
        return None


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


def rebuild_memory(home: Home) -> Path | None:
    """Move the current memory aside (atomic rename) and forget the index state; returns where it went.

    The old memory stays intact at ``memory.old-<UTC time>`` while the new one is built, so a
    rebuild that fails can be undone by renaming it back; :func:`settle_rebuild` deletes it once
    the new memory holds every turn it held.
    """
    # State first: a crash between the two steps then leaves a full state-less memory (re-read,
    # deduplicated) rather than a fresh memory whose state claims files are already stored.
    if home.state_path.exists():
        State().save(home.state_path)
    old: Path | None = None
    if home.memory_dir.exists():
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        old = home.root / f"memory.old-{stamp}"
        n = 1
        while old.exists():
            n += 1
            old = home.root / f"memory.old-{stamp}-{n}"
        os.rename(home.memory_dir, old)
    return old


def settle_rebuild(home: Home, old: Path, say: Callable[[str], None]) -> Path | None:
    """After a rebuild ran to its end: delete the old memory if nothing would be lost, else keep it.

    Why not always delete: spool files are deleted once stored, and agents delete old transcripts,
    so the old memory may be the only copy of turns no source supplies any more; deleting it would
    lose them silently. Why not always keep: a copy left in ``$FUNES_HOME`` keeps every passage
    (and any secret) the user meant to rebuild away. So the old memory is deleted exactly when the
    new one holds every turn it held (compared by session and turn id; owed embeddings do not
    matter), and otherwise kept with a note that says how much only it holds. Returns where it was
    kept, or ``None`` once deleted.
    """
    import shutil

    missing = _stored_turns(old) - _stored_turns(home.memory_dir)
    if missing:
        sessions = len({sid for sid, _turn in missing})
        turns = f"{len(missing)} of its turns" if len(missing) != 1 else "1 of its turns"
        in_sessions = f"{sessions} session" + ("" if sessions == 1 else "s")
        say(
            f"note: kept the old memory at {old}: {turns} ({in_sessions}) are not in the new one "
            "(their transcripts are gone, or the run stopped early); delete it once you no longer need them"
        )
        return old
    try:
        shutil.rmtree(old)
    except OSError as exc:
        say(f"note: could not delete the old memory at {old}: {exc.strerror or exc}; delete it by hand")
        return old
    say("note: rebuilt; deleted the old memory (the new one holds every turn it held)")
    return None


def _stored_turns(memory_dir: Path) -> set[tuple[str, str]]:
    """(session id, turn uuid) of every turn a memory folder holds (two columns read, no text)."""
    from funes_core.store.lance import LanceStore

    store = LanceStore(memory_dir, read_consistency_interval=None)
    if not store.exists():
        return set()
    table = store.arrow_rows(columns=("session_id", "turn_uuid"))
    return set(
        zip(table.column("session_id").to_pylist(), table.column("turn_uuid").to_pylist(), strict=True)
    )


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
_COPY_BATCH = 10_000


def copy_rows(old_memory: Path, home: Home, embedder: Embedder) -> int:
    """Copy every chunk of the memory moved aside into the new one, text only: re-embedding is owed.

    Used by ``funes index --rebuild --model NAME``: the text is searchable by BM25 at once, and the
    new model's vectors are computed by the background worker (or by this run, with ``--wait`` or
    ``IndexOptions(embed="here")``).
    """
    from funes_core.store import open_store

    old = open_store(old_memory, home=home, read_consistency_interval=None)
    rows = [row.with_vector(None) for row in old.scan()]
    if not rows:
        return 0
    new = open_store(home=home, create=True, read_consistency_interval=None)
    new.stamp_model(embedder.stamp)
    for start in range(0, len(rows), _COPY_BATCH):
        new.add(rows[start : start + _COPY_BATCH])
    return len(rows)


def iter_spool_files(home: Home, spool_id: str | None = None) -> Iterator[Path]:
    """The ``*.jsonl`` files waiting in one spool (or all), for ``funes status``."""
    ids = [spool_id] if spool_id else home.spool_ids()
    for sid in ids:
        root = home.spool_dir / sid
        if root.is_dir():
            yield from iter_turns_files(root)
