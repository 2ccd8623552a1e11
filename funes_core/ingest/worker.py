"""Background embedding: what turns a keyword-searchable memory into a fully hybrid one.

``funes index`` stores text at thousands of rows per second, and every stored row is found by
BM25 at once; embedding on a CPU runs at tens of rows per second, so embedding a long history in
the foreground would hold the terminal for hours. Instead ``funes index`` (run by ``integrations
install`` and by every per-turn hook) starts this worker when embeddings are owed, and returns.
``funes index --wait`` waits for it (or, when none runs, does the same work in the foreground).

How the worker behaves, and why:

- **One at a time.** It holds ``$FUNES_HOME/embed.lock`` (``flock``) for its whole life. Whoever
  starts it takes the lock *first* and hands the locked descriptor to the child, so two installs
  or hooks racing each other can never both start one. The kernel drops a flock when its holder
  dies (even by ``kill -9``), so "is a worker alive?" is a non-blocking probe of that lock
  (:func:`worker_alive`), never a guess from a pid that may have been reused.
- **Resumable without bookkeeping of its own.** What is owed is exactly the rows whose vector is
  still null, which the store knows. A killed worker loses at most the vectors it had not
  committed yet; the next ``funes index`` or hook starts another, which carries on.
- **Gentle.** It lowers its CPU priority (``nice`` 19, plus the niceness of its *autogroup* on
  Linux: a process in a session of its own is its own scheduling group there, and plain ``nice``
  would only rank it against itself) and its I/O priority (idle class), and runs the model on
  :func:`worker_threads` threads, leaving a core to the agent.
- **Short lock holds, bounded index backlog.** Embedding happens outside the store lock. Vectors
  are committed in batches (:data:`COMMIT_ROWS` or :data:`COMMIT_SECONDS`), each followed, in the
  same short hold, by ``optimize()`` once :meth:`~funes_core.store.base.Store.needs_upkeep` says
  enough rows or fragments sit outside the indexes: a commit rewrites the rows it touches into new
  fragments, which drop out of the full-text index, and LanceDB answers BM25 over unindexed rows
  by tokenizing them at query time (~20 µs a row) and opens every fragment, so a backlog slows
  recall. A full batch always crosses that bound; the few rows of one hook's turn do not, and
  are folded in with those of later turns. Optimizing after each of them would give the vector
  index a segment per turn (it searches each one: at 1M rows the vector leg went from 46 to
  106 ms over 40 of them) and leave a fragment per turn that compaction cannot merge (Lance
  compacts only fragments indexed alike). ``funes index`` leaves the optimize of what it hands
  over to the worker on the same terms. Readers never take the lock.
- **Observable.** Progress (done, owed, rate, the error that stopped it) is kept in
  ``$FUNES_HOME/embedding.json`` (:class:`Progress`) for ``funes status`` and ``index --wait``.
- **Full disk.** A commit is atomic, so a failed one loses nothing stored; the worker records one
  line (``status`` shows it) and stops. The next ``funes index`` or hook tries again.
- **Tidy.** After a long run it waits out the store's version grace period (readers may still be
  on an old version) and optimizes once more, which deletes the old versions its batches left
  (they would otherwise double the memory's size until the next index run); while it waits it
  keeps watching for newly owed rows.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import sys
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from enum import IntEnum
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from funes_core import portable
from funes_core.files import atomic_write_text
from funes_core.home import FILE_MODE, Home, LockBusyError, ensure_private_dir
from funes_core.ingest.markers import serve_markers, store_lock

if TYPE_CHECKING:
    from funes_core.models.embed import Embedder
    from funes_core.models.vectors import ModelStamp, Vector
    from funes_core.store.base import Row, Store

__all__ = [
    "BUSY_SHARE",
    "COMMIT_ROWS",
    "COMMIT_SECONDS",
    "DEFAULT_RATE",
    "RECENT_SECONDS",
    "Outcome",
    "Progress",
    "WorkerOptions",
    "WorkerStart",
    "ensure_worker",
    "estimate_seconds",
    "is_disk_full",
    "progress_path",
    "run_worker",
    "start_indexer",
    "stop_worker",
    "wait_for_embeddings",
    "worker_alive",
    "worker_threads",
]

#: Vectors per commit at most. Each commit is followed by ``optimize()`` (1–3 s at 100k chunks on
#: 2 busy cores), so a commit every minute or two keeps that to a few per cent of the work, and a
#: ``kill -9`` loses at most that much.
COMMIT_ROWS = 2048
#: ... or this many seconds of embedding, whichever comes first (slow machines commit by time).
COMMIT_SECONDS = 120.0
#: Texts per call into the model; progress is reported after each.
EMBED_BATCH = 32
#: glibc's mmap threshold while embedding (see :meth:`_Worker.run`).
EMBED_MMAP_THRESHOLD = 128 * 1024
#: How long one attempt at the store lock waits before the worker logs and tries again.
LOCK_ATTEMPT_SECONDS = 30.0
#: Below this much free space no commit is attempted: the worker stops with a clear line.
MIN_FREE_BYTES = 64 * 1024 * 1024
#: Passages per second assumed before anything was measured on this machine (the background
#: worker, one model thread, ~700-byte passages on a busy 2-core machine: see docs/benchmarks.md).
DEFAULT_RATE = 10.0
#: A background run that committed at least this many vectors waits out the version grace period
#: and cleans up; a short run leaves that to the next index run (old versions are then small).
LINGER_MIN_ROWS = COMMIT_ROWS
#: How often a finished worker looks for newly owed rows while it waits to clean up.
LINGER_POLL_SECONDS = 15.0
#: The window of recent commits ``status`` checks the estimate against: 10 minutes.
RECENT_SECONDS = 600.0
#: The estimate stopped holding when the last window committed less than this share of what
#: the recorded rate promised (the machine is busy: the worker yields at nice 19).
BUSY_SHARE = 0.5
#: At most one ``funes index`` started for producers' dirty spools per this many seconds.
INDEXER_SPACING_SECONDS = 60.0

State = Literal["starting", "running", "done", "stopped"]


class Outcome(IntEnum):
    """How :func:`run_worker` ended (also the worker process's exit status)."""

    DONE = 0
    STOPPED = 1
    BUSY = 2  # another worker holds the lock: this one did nothing


def progress_path(home: Home) -> Path:
    """``$FUNES_HOME/embedding.json``: the worker's progress, read by ``status`` and ``index --wait``."""
    return home.root / "embedding.json"


def lock_path(home: Home) -> Path:
    """``$FUNES_HOME/embed.lock``: held by the one running worker."""
    return home.root / "embed.lock"


def log_path(home: Home) -> Path:
    """Where a detached worker's output goes."""
    return home.root / "logs" / "embed.log"


def _utc_now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(slots=True)
class Progress:
    """What the worker last said about itself (``embedding.json``); read it as possibly stale.

    ``done`` counts vectors committed by this run, ``owed`` what the store owed at the last count
    minus what was committed since, ``rate`` committed vectors per second over the last few
    commits (``None`` until measured), ``error`` the one line that stopped it.
    """

    state: State = "starting"
    pid: int | None = None
    started: str | None = None
    updated: str | None = None
    done: int = 0
    owed: int = 0
    rate: float | None = None
    error: str | None = None
    #: ``[UTC time, vectors]`` of each recent commit (the last :data:`RECENT_SECONDS` or so): what
    #: ``status`` checks the estimate against, since ``rate`` only counts time spent embedding
    commits: list[tuple[str, int]] = field(default_factory=list)

    def recent(self, now: datetime, window: float | None = None) -> int:
        """Vectors committed in the ``window`` seconds before ``now`` (default :data:`RECENT_SECONDS`)."""
        since = now.timestamp() - (RECENT_SECONDS if window is None else window)
        total = 0
        for at, rows in self.commits:
            try:
                stamp = datetime.strptime(at, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC).timestamp()
            except ValueError:
                continue
            if stamp >= since:
                total += rows
        return total

    def note_commit(self, rows: int, now: datetime | None = None) -> None:
        """Remember a commit, forgetting those older than twice the window."""
        moment = now or datetime.now(UTC)
        self.commits.append((moment.strftime("%Y-%m-%dT%H:%M:%SZ"), rows))
        horizon = moment.timestamp() - 2 * RECENT_SECONDS
        kept = []
        for at, n in self.commits[-256:]:
            try:
                stamp = datetime.strptime(at, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC).timestamp()
            except ValueError:
                continue
            if stamp >= horizon:
                kept.append((at, n))
        self.commits = kept

    @classmethod
    def load(cls, path: Path) -> Progress | None:
        """The progress file, or ``None`` when it is missing or unreadable (never an exception)."""
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(raw, dict):
            return None

        def text(key: str) -> str | None:
            value = raw.get(key)
            return value if isinstance(value, str) else None

        def number(key: str) -> int:
            value = raw.get(key)
            return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0

        state = raw.get("state")
        rate = raw.get("rate")
        pid = raw.get("pid")
        return cls(
            state=state if state in ("starting", "running", "done", "stopped") else "stopped",
            pid=pid if isinstance(pid, int) and not isinstance(pid, bool) else None,
            started=text("started"),
            updated=text("updated"),
            done=number("done"),
            owed=number("owed"),
            rate=float(rate)
            if isinstance(rate, int | float) and not isinstance(rate, bool) and rate > 0
            else None,
            error=text("error"),
            commits=_commits(raw.get("commits")),
        )

    def save(self, path: Path) -> bool:
        """Replace the file atomically; ``False`` (never an exception) when it cannot, e.g. disk full."""
        self.updated = _utc_now()
        try:
            atomic_write_text(path, json.dumps(asdict(self), indent=2) + "\n")
        except OSError:
            return False
        return True


def _commits(raw: object) -> list[tuple[str, int]]:
    """The ``commits`` list of a progress file, each entry checked (a hand-edited file is no error)."""
    out: list[tuple[str, int]] = []
    if isinstance(raw, list):
        for item in raw:
            if (
                isinstance(item, list | tuple)
                and len(item) == 2
                and isinstance(item[0], str)
                and isinstance(item[1], int)
                and not isinstance(item[1], bool)
                and item[1] >= 0
            ):
                out.append((item[0], item[1]))
    return out


def estimate_seconds(owed: int, rate: float | None) -> float:
    """Seconds to embed ``owed`` rows at ``rate`` a second (:data:`DEFAULT_RATE` when unmeasured)."""
    return owed / (rate if rate and rate > 0 else DEFAULT_RATE)


def worker_threads() -> int:
    """Model threads for the background worker: all cores but one, so the agent keeps a core."""
    return max(1, portable.usable_cores() - 1)


def is_disk_full(exc: BaseException) -> bool:
    """Whether ``exc`` says the disk is full (``ENOSPC``/``EDQUOT``, also when LanceDB wraps it in text)."""
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return True
    text = str(exc)
    return any(s in text for s in ("No space left on device", "os error 28", "Disk quota exceeded"))


# --------------------------------------------------------------------------- the lock


def worker_alive(home: Home) -> bool:
    """Whether a worker holds ``embed.lock`` now. Opens the lock file read-only: writes nothing."""
    return portable.lock_held(lock_path(home))


@dataclass(frozen=True, slots=True)
class WorkerStart:
    """What :func:`ensure_worker` found or did: the worker's pid (if known), whether it started it."""

    pid: int | None
    started: bool


def _funes_command(env: Mapping[str, str]) -> list[str]:
    """How to run this funes (``FUNES_BIN`` first), as an agent's hook would."""
    from funes_core.host.api import installed_funes_command

    return list(installed_funes_command(env))


def _spawn_funes(
    home: Home,
    args: Sequence[str],
    *,
    log: Path,
    pass_fds: Sequence[int] = (),
    argv: Sequence[str] | None = None,
) -> int:
    """Start ``funes ARGS…`` detached, as this installation runs it (``FUNES_BIN`` first); its pid.

    A ``FUNES_BIN`` that cannot be run here does not stop it: this very interpreter can run this
    very funes (``python -m funes_core``). ``argv`` replaces ``funes ARGS…`` entirely (tests).
    """
    from funes_core.wiring.hookrt import spawn_detached

    environ = dict(os.environ)
    environ["FUNES_HOME"] = str(home.root)
    ensure_private_dir(log.parent)
    if argv is not None:
        return spawn_detached(list(argv), env=environ, log=log, pass_fds=pass_fds)
    try:
        return spawn_detached([*_funes_command(environ), *args], env=environ, log=log, pass_fds=pass_fds)
    except OSError:
        fallback = [sys.executable, "-m", "funes_core", *args]
        return spawn_detached(fallback, env=environ, log=log, pass_fds=pass_fds)


def start_indexer(home: Home) -> int:
    """``funes index`` detached: what the worker does when producers marked spools dirty while it
    held the store lock (their own indexers then exited 75; see :mod:`funes_core.wiring.spooling`)."""
    return _spawn_funes(home, ["index"], log=home.root / "logs" / "index.log")


def ensure_worker(home: Home, *, owed: int, argv: Sequence[str] | None = None) -> WorkerStart:
    """Start the background worker unless one is running; returns at once either way.

    The lock is taken here and its descriptor passed to the child, which owns it from its first
    instruction: between this check and the child's start nobody can start a second worker.
    ``argv`` replaces ``funes index --worker`` (tests).
    """
    home.ensure()
    fd = os.open(lock_path(home), os.O_RDWR | os.O_CREAT, FILE_MODE)
    try:
        if not portable.try_lock(fd):
            known = Progress.load(progress_path(home))
            return WorkerStart(pid=known.pid if known else None, started=False)
        previous = Progress.load(progress_path(home))
        starting = Progress(
            state="starting", started=_utc_now(), owed=owed, rate=previous.rate if previous else None
        )
        starting.save(progress_path(home))
        if portable.can_pass_fds():
            locked = ["--lock-fd", str(fd)]
            full = [*argv, *locked] if argv is not None else None
            pid = _spawn_funes(
                home, ["index", "--worker", *locked], log=log_path(home), pass_fds=(fd,), argv=full
            )
        else:  # Windows: no descriptor passing, the child takes the lock itself
            os.close(fd)
            fd = -1
            pid = _spawn_funes(home, ["index", "--worker"], log=log_path(home), argv=argv)
        if (Progress.load(progress_path(home)) or starting).pid is None:
            starting.pid = pid  # unless the child already wrote its own record
            starting.save(progress_path(home))
        return WorkerStart(pid=pid, started=True)
    finally:
        if fd >= 0:
            os.close(fd)  # the child keeps the lock through its own copy of the descriptor


def stop_worker(home: Home, *, patience: float = 10.0) -> bool:
    """Stop the running worker (``SIGTERM``) and wait for it to let go of its lock; ``True`` if one ran.

    Used by ``funes index --rebuild``: a worker must not go on embedding into a memory that is
    being moved aside. Only a live lock holder is signalled, and only by the pid it recorded.
    """
    if not worker_alive(home):
        return False
    known = Progress.load(progress_path(home))
    if known is not None and known.pid:
        portable.terminate(known.pid)
    deadline = time.monotonic() + patience
    while worker_alive(home) and time.monotonic() < deadline:
        time.sleep(0.05)
    return True


# --------------------------------------------------------------------------- priority


def lower_priority() -> list[str]:
    """Make this process yield CPU and disk to everything else (:func:`funes_core.portable.lower_priority`);
    returns what could not be done."""
    missed = portable.lower_priority()
    # The tokenizer would otherwise start a thread per core for every batch.
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    return missed


# --------------------------------------------------------------------------- the worker


class _DiskFull(Exception):
    """Raised inside the worker when a commit cannot (or must not) be attempted for lack of space."""


@dataclass(slots=True)
class _Throughput:
    """Committed vectors per second over the last few batches (a window, so it follows the load)."""

    batches: deque[tuple[float, int]] = field(default_factory=lambda: deque(maxlen=8))

    def add(self, seconds: float, rows: int) -> None:
        self.batches.append((seconds, rows))

    def value(self) -> float | None:
        seconds = sum(s for s, _ in self.batches)
        rows = sum(n for _, n in self.batches)
        return rows / seconds if seconds > 0 and rows > 0 else None


@dataclass(slots=True)
class WorkerOptions:
    """How a worker runs: the detached one is gentle; ``index --wait`` embedding in front of a
    person uses every core at normal priority and does not linger."""

    commit_rows: int = COMMIT_ROWS
    commit_seconds: float = COMMIT_SECONDS
    background: bool = True
    #: seconds to wait after the last commit before cleaning up; ``None``: the store's grace period
    #: after a long background run, nothing otherwise
    linger: float | None = None


ProgressCallback = Callable[[Progress], None]


def run_worker(
    home: Home,
    *,
    embedder: Embedder | None = None,
    lock_fd: int | None = None,
    options: WorkerOptions | None = None,
    on_progress: ProgressCallback | None = None,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
    log: Callable[[str], None] | None = None,
) -> Outcome:
    """Embed every owed row in committed batches, then clean up.

    ``lock_fd`` is the descriptor :func:`ensure_worker` handed over (already locked); without it
    the lock is taken here, and a busy lock means another worker runs: :attr:`Outcome.BUSY`.
    """
    say = log or _stderr_log
    fd = (
        lock_fd
        if lock_fd is not None
        else os.open(lock_path(home.ensure()), os.O_RDWR | os.O_CREAT, FILE_MODE)
    )
    try:
        if not portable.try_lock(fd):  # an inherited descriptor already holds it: this succeeds
            say("another worker is running; nothing to do")
            return Outcome.BUSY
        worker = _Worker(home, embedder, options or WorkerOptions(), on_progress, clock, sleep, say)
        try:
            return worker.run()
        finally:
            worker.serve_before_exit()
    finally:
        os.close(fd)


def _stderr_log(message: str) -> None:
    print(f"{_utc_now()} funes embedding worker {os.getpid()}: {message}", file=sys.stderr, flush=True)


class _Worker:
    def __init__(
        self,
        home: Home,
        embedder: Embedder | None,
        options: WorkerOptions,
        on_progress: ProgressCallback | None,
        clock: Callable[[], float],
        sleep: Callable[[float], None],
        log: Callable[[str], None],
    ) -> None:
        self.home = home
        self._embedder = embedder
        self._own_embedder = embedder is None
        self.options = options
        self.on_progress = on_progress
        self.clock = clock
        self.sleep = sleep
        self.log = log
        #: how producers' dirty spools get an indexer (a module attribute, so tests can watch it)
        self.start_indexer: Callable[[Home], int] = start_indexer
        self._indexer_started = -INDEXER_SPACING_SECONDS
        #: a look at the markers found one but the spacing held its indexer back
        self._held_back = False
        self.path = progress_path(home)
        previous = Progress.load(self.path)
        self.progress = Progress(
            state="running", pid=os.getpid(), started=_utc_now(), rate=previous.rate if previous else None
        )
        self.throughput = _Throughput()
        self.last_commit = clock()
        self.stamp: ModelStamp | None = None

    def report(self) -> None:
        self.progress.save(self.path)
        if self.on_progress is not None:
            self.on_progress(self.progress)

    def embedder(self) -> Embedder:
        """The model the memory is stamped with (the background worker's on fewer threads)."""
        if self._embedder is None:
            from funes_core.models.embed import FastEmbedder
            from funes_core.models.registry import choose_embedder

            chosen = choose_embedder(self.home, self.stamp, label=str(self.home.memory_dir))
            if isinstance(chosen, FastEmbedder) and self.options.background:
                chosen = FastEmbedder(chosen.cache_dir, threads=worker_threads())
            self._embedder = chosen
        return self._embedder

    def stop(self, message: str) -> Outcome:
        self.progress.state = "stopped"
        self.progress.error = message
        self.report()
        self.log(message)
        return Outcome.STOPPED

    # -- the run ----------------------------------------------------------------------------
    def run(self) -> Outcome:
        from funes_core.models.base import ModelError
        from funes_core.models.vectors import ModelMismatchError
        from funes_core.store import NoIndexError, open_store

        # The model's tensors (hundreds of KB each, a new size with every batch) go back to the
        # system when freed instead of fragmenting the heap: 451 -> 386 MB peak for the same CPU
        # (issue 29, docs/benchmarks.md). Before the store opens, so its buffers follow it too.
        portable.set_mmap_threshold(EMBED_MMAP_THRESHOLD)
        # Two malloc arenas, as an index run has: each commit's merge_insert and optimize run on
        # LanceDB's thread pool, and glibc's per-thread arenas kept what every commit freed (a
        # bare loop of 2,048-row commits on 40k rows: 536 MB after 15 with the default, 371 MB
        # with two). The background worker is a process of its own and never had the cap.
        portable.limit_malloc_arenas(2)
        portable.trim_malloc()  # what `index --wait` freed while storing, before the model loads
        try:
            store = open_store(home=self.home)
        except NoIndexError:
            self.progress.state = "done"
            self.report()
            return Outcome.DONE
        if self.options.background:
            missed = lower_priority()
            if missed:
                self.log(f"could not lower its priority ({', '.join(missed)}); carrying on")
        self.report()
        try:
            self.stamp = store.model_stamp()
            ours = self.embedder().stamp
            if self.stamp is not None and self.stamp != ours:
                raise ModelMismatchError(store.label, self.stamp, ours)
            self.log(f"embedding what {store.label} owes with {ours.model}")
            while True:
                self._embed_all(store)
                if not self._linger(store):
                    break
        except (ModelMismatchError, ModelError) as exc:
            return self.stop(str(exc))
        except Exception as exc:  # broad on purpose: the last word of a detached process is recorded
            if isinstance(exc, _DiskFull) or is_disk_full(exc):
                first = (str(exc).strip().splitlines() or ["no space left on device"])[0]
                return self.stop(f"disk full ({first}); free some space, then run `funes index` to resume")
            return self.stop(f"{type(exc).__name__}: {exc}")
        self.progress.state = "done"
        self.progress.owed = 0
        self.report()
        self.log(f"done: {self.progress.done} embeddings")
        return Outcome.DONE

    def _embed_all(self, store: Store) -> None:
        while True:
            self.progress.owed = store.owed_count()
            self.report()
            if self.progress.owed == 0:
                return
            rows = store.owed(self.options.commit_rows)
            if not rows:
                return
            self._batch(store, rows)

    def _batch(self, store: Store, rows: Sequence[Row]) -> None:
        """Embed ``rows`` (or as many as fit in :attr:`WorkerOptions.commit_seconds`), then commit.

        Each batch is one ``index`` event of ``funes stats`` (``embedded``, timed from the first
        vector to the commit): the embedding half of what an index run recorded when it embedded
        in the foreground, so the stats' throughput keeps its meaning.
        """
        from funes_core import telemetry

        with telemetry.measure("index", face="cli", root=self.home.root):
            done = self._embed_and_commit(store, rows)
            telemetry.add(embedded=done)

    def _embed_and_commit(self, store: Store, rows: Sequence[Row]) -> int:
        embedder = self.embedder()
        pending: dict[str, Vector] = {}
        began = self.clock()
        for start in range(0, len(rows), EMBED_BATCH):
            part = rows[start : start + EMBED_BATCH]
            vectors = embedder.embed_documents([r.text for r in part])
            pending.update((r.id, v) for r, v in zip(part, vectors, strict=True))
            elapsed = self.clock() - began
            if not self.throughput.batches and elapsed > 0:
                self.progress.rate = len(pending) / elapsed  # a first figure before the first commit
                self.report()
            if elapsed >= self.options.commit_seconds:
                break
        self._commit(store, pending)
        self.last_commit = self.clock()
        self.throughput.add(self.last_commit - began, len(pending))
        self.progress.done += len(pending)
        self.progress.note_commit(len(pending))
        self.progress.owed = max(0, self.progress.owed - len(pending))
        self.progress.rate = self.throughput.value() or self.progress.rate
        self.report()
        return len(pending)

    def _commit(self, store: Store, vectors: Mapping[str, Vector]) -> None:
        """Store ``vectors`` and re-index under the write lock, waiting for it as long as it takes."""
        try:
            free = shutil.disk_usage(self.home.root).free
        except OSError:
            free = MIN_FREE_BYTES
        if free < MIN_FREE_BYTES:
            raise _DiskFull(f"{free // (1024 * 1024)} MB free on the disk holding {self.home.root}")
        while True:
            try:
                with self._store_lock():
                    store.set_vectors(vectors)
                    self._optimize(store)
                break
            except LockBusyError as busy:
                self.log(f"{busy}; still waiting to commit {len(vectors)} embeddings")

    def _store_lock(self) -> contextlib.AbstractContextManager[None]:
        """The store lock, with a look at the producers' markers each time it is let go."""
        return store_lock(self.home, wait=LOCK_ATTEMPT_SECONDS, serve=self._serve_producers)

    def _optimize(self, store: Store) -> None:
        """Re-index after a commit once the backlog calls for it (see the module's notes). The
        vectors are committed already: a failure here (other than a full disk) is logged and left
        to the next commit's optimize, never a reason to stop."""
        try:
            if store.needs_upkeep():
                store.optimize()
        except Exception as exc:  # broad on purpose: see the docstring
            if is_disk_full(exc):
                raise
            self.log(f"optimize failed, retried after the next batch: {type(exc).__name__}: {exc}")

    def _serve_producers(self, *, spaced: bool = True) -> None:
        """Spools marked dirty while the lock was ours had their indexer refused: start one now.

        At most one a minute while the worker runs (the one started clears the markers when it
        runs); a look the spacing held back is made up for before the worker exits
        (:meth:`serve_before_exit`), or a turn marked during its last commits would wait for an
        unrelated next one.
        """
        if not self.home.dirty_ids():
            self._held_back = False  # an index run took them after they were set
            return
        now = self.clock()
        if spaced and now - self._indexer_started < INDEXER_SPACING_SECONDS:
            self._held_back = True
            return
        self._indexer_started = now
        self._held_back = False
        pid = serve_markers(self.home, self.start_indexer)
        if pid is not None:
            self.log(f"new turns arrived while the store was busy; started funes index (pid {pid})")

    def serve_before_exit(self) -> None:
        """The look the spacing held back, made now: no other holder of the lock will make it."""
        if self._held_back:
            self._serve_producers(spaced=False)

    def _linger(self, store: Store) -> bool:
        """After a long run, wait out the version grace period and clean up; ``True`` when new rows
        became owed meanwhile (the caller then embeds them)."""
        from funes_core.store.lance import VERSION_GRACE

        linger = self.options.linger
        if linger is None:
            long_run = self.options.background and self.progress.done >= LINGER_MIN_ROWS
            linger = VERSION_GRACE.total_seconds() + 5 if long_run else 0.0
        if linger <= 0:
            return False
        self.progress.state = "done"
        self.report()
        if self._own_embedder:
            self._embedder = None  # give the model's memory back while waiting
        deadline = self.last_commit + linger
        while (left := deadline - self.clock()) > 0:
            self.sleep(min(LINGER_POLL_SECONDS, left))
            self._serve_producers()
            if store.owed_count():
                self.progress.state = "running"
                return True
        with contextlib.suppress(LockBusyError), self._store_lock():
            store.optimize()  # past the grace period now: drops the versions the batches left
        return False


# --------------------------------------------------------------------------- waiting


def _owed_now(home: Home) -> int:
    """What the store owes now (0 when there is no memory)."""
    from funes_core.store import NoIndexError, open_store

    try:
        return open_store(home=home).owed_count()
    except NoIndexError:
        return 0


def wait_for_embeddings(
    home: Home,
    *,
    on_progress: ProgressCallback | None = None,
    poll: float = 1.0,
    sleep: Callable[[float], None] = time.sleep,
    embedder: Embedder | None = None,
    take_over: bool = False,
) -> Progress:
    """Block until nothing is owed: watch the running worker, or embed here when none runs.

    A worker that dies while watched (``kill -9``) is replaced by this process itself. With
    ``take_over`` (``index --wait``, ``push``: a person is waiting) a background worker still
    embedding is stopped and the work is done here, at normal priority on every core: the worker
    runs at nice 19 and on a busy machine may barely move. Returns the last progress; its
    ``error`` says why it stopped early (e.g. a full disk).
    """
    if take_over and worker_alive(home) and _owed_now(home):
        stop_worker(home)
    while True:
        if worker_alive(home):
            seen = Progress.load(progress_path(home)) or Progress(state="running")
            if on_progress is not None:
                on_progress(seen)
            if seen.state == "stopped":
                return seen  # it just stopped on an error: its line says why
            if seen.state == "done" and _owed_now(home) == 0:
                return seen  # a finished worker waiting to clean up
            # "done" with rows owed: stored after its last look (e.g. by this very `index --wait`);
            # a lingering worker takes them within LINGER_POLL_SECONDS, an exiting one is replaced
            sleep(poll)
            continue
        outcome = run_worker(
            home,
            embedder=embedder,
            options=WorkerOptions(background=False, linger=0),
            on_progress=on_progress,
            log=lambda _message: None,
        )
        if outcome is not Outcome.BUSY:
            return Progress.load(progress_path(home)) or Progress(state="done")
