"""``status``: what the memory holds and what is still waiting, in one screen (or one JSON object).

Collecting (:func:`collect_status`) is separate from rendering (:meth:`StatusReport.render`) so the
CLI, ``--json`` and the MCP ``status`` tool (:func:`run`) report the same facts.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from funes_core.home import Home, State
from funes_core.read.common import Verb, dump
from funes_core.safetext import one_line

if TYPE_CHECKING:
    from funes_core.read.handle import Memory
    from funes_core.share.memory import MemoryLocation

__all__ = [
    "STATUS_HELP",
    "VERB",
    "EmbeddingStatus",
    "StatusArgs",
    "StatusReport",
    "age_words",
    "collect_status",
    "human_bytes",
    "run",
]

STATUS_HELP = """\
Report on a memory: model, chunks, sessions, agents, embeddings still owed (and the background
worker embedding them: its rate and estimated finish, or why it stopped), spool files waiting to
be indexed, files refused by the indexer, when it was last written and its size on disk.
"""


def _plural(n: int, unit: str) -> str:
    return f"{n} {unit}" + ("" if n == 1 else "s")


def age_words(then: datetime, now: datetime) -> str:
    """``just now`` under a minute (or in the future), then minutes, hours (under 48) and days."""
    minutes = int((now - then).total_seconds() // 60)
    if minutes < 1:
        return "just now"
    if minutes < 60:
        return f"{_plural(minutes, 'minute')} ago"
    if minutes < 2880:
        return f"{_plural(minutes // 60, 'hour')} ago"
    return f"{_plural(minutes // 1440, 'day')} ago"


def human_bytes(n: int) -> str:
    """``512 B``, ``1.5 KB``, ``23.4 MB``… (powers of 1024, one decimal)."""
    value = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{int(value)} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} TB"  # pragma: no cover - unreachable


@dataclass(slots=True)
class StatusReport:
    """Everything ``funes status`` reports. Spool and refused files belong to ``$FUNES_HOME``, so
    they are only filled in for the default memory."""

    memory: str
    exists: bool
    is_default: bool = True
    model: str | None = None
    dim: int | None = None
    our_model: str | None = None
    chunks: int = 0
    sessions: int = 0
    harnesses: dict[str, int] = field(default_factory=dict)
    owed: int = 0
    pending_spool: dict[str, int] = field(default_factory=dict)
    refused: list[tuple[str, str]] = field(default_factory=list)
    last_indexed: datetime | None = None
    disk_bytes: int = 0
    #: the background embedding worker, for the default memory (``None``: it never ran)
    embedding: EmbeddingStatus | None = None
    #: why a remote could not be read (unreachable, access denied, ...), when it could not
    unavailable: str | None = None

    @property
    def model_matches(self) -> bool:
        return self.model is None or self.our_model is None or self.model == self.our_model

    def to_json(self, now: datetime | None = None) -> dict[str, Any]:
        now = now or datetime.now(UTC)
        return {
            "memory": self.memory,
            "exists": self.exists,
            "model": self.model,
            "dim": self.dim,
            "model_matches": self.model_matches,
            "chunks": self.chunks,
            "sessions": self.sessions,
            "harnesses": self.harnesses,
            "embeddings_owed": self.owed,
            "embedding": self.embedding.to_json(self.owed, now) if self.embedding else None,
            "pending_spool": self.pending_spool,
            "refused": [{"path": p, "error": e} for p, e in self.refused],
            "last_indexed": self.last_indexed.isoformat().replace("+00:00", "Z")
            if self.last_indexed
            else None,
            "last_indexed_age": age_words(self.last_indexed, now) if self.last_indexed else None,
            "disk_bytes": self.disk_bytes,
            **({"unavailable": self.unavailable} if self.unavailable else {}),
        }

    def render(self, now: datetime | None = None) -> str:
        now = now or datetime.now(UTC)
        lines = [f"memory: {self.memory}"]
        if not self.exists:
            from funes_core.store import NO_INDEX_MESSAGE

            if self.unavailable:
                lines.append(self.unavailable)
            else:
                lines.append(NO_INDEX_MESSAGE if self.is_default else f"no index found at {self.memory}")
            lines.extend(self._spool_lines())
            return "\n".join(lines) + "\n"
        if self.model is not None:
            model = f"model: {self.model}, {self.dim}-d"
            if not self.model_matches:
                model += f" (this funes embeds with {self.our_model}: run `funes index --rebuild`)"
            lines.append(model)
        else:
            lines.append("model: none recorded yet")
        lines.append(f"chunks: {self.chunks}")
        lines.append(f"sessions: {self.sessions}")
        if self.harnesses:
            lines.append("harnesses: " + ", ".join(f"{one_line(h)} {n}" for h, n in self.harnesses.items()))
        lines.append(f"embeddings owed: {self.owed}" + one_line(self._owed_note(now)))
        lines.extend(self._spool_lines())
        if self.last_indexed is not None:
            when = self.last_indexed.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
            lines.append(f"last indexed: {when} ({age_words(self.last_indexed, now)})")
        lines.append(f"disk: {human_bytes(self.disk_bytes)}")
        return "\n".join(lines) + "\n"

    def _owed_note(self, now: datetime) -> str:
        if not self.owed:
            return ""
        if self.embedding is None:
            return " — run `funes index` to embed them"
        return " — " + self.embedding.describe(self.owed, now)

    def _spool_lines(self) -> list[str]:
        if not self.is_default:
            return []
        lines = []
        if self.pending_spool:
            pending = ", ".join(f"{one_line(sid)} {n}" for sid, n in self.pending_spool.items())
            total = sum(self.pending_spool.values())
            hint = " — run `funes index`" if total else ""
            lines.append(f"pending spool files: {pending}{hint}")
        if self.refused:
            lines.append(
                f"refused files: {len(self.refused)} (fix or remove them; they are skipped until they change)"
            )
            lines.extend(f"  {one_line(error)}" for _path, error in self.refused)
        return lines


@dataclass(slots=True)
class EmbeddingStatus:
    """The background worker as ``status`` sees it: alive (its lock is held) or not, and what it
    last recorded. Collected without writing anything."""

    alive: bool
    state: str
    pid: int | None
    rate: float | None
    error: str | None
    #: free bytes on the disk holding ``$FUNES_HOME`` (to explain a worker that died of a full disk)
    free_bytes: int | None = None
    #: vectors the worker committed in the last 10 minutes, and how long it has run (seconds)
    recent: int | None = None
    running: float | None = None

    def busy(self) -> bool:
        """The estimate stopped holding: over the last 10 minutes the worker (alive that long)
        committed less than half of what its recorded rate promised: the machine is busy, and
        the worker, at nice 19, yields to everything else."""
        from funes_core.ingest.worker import BUSY_SHARE, RECENT_SECONDS

        if not self.alive or not self.rate or self.recent is None or self.running is None:
            return False
        return self.running >= RECENT_SECONDS and self.recent < BUSY_SHARE * self.rate * RECENT_SECONDS

    def eta_seconds(self, owed: int) -> float | None:
        from funes_core.ingest.worker import RECENT_SECONDS, estimate_seconds

        if not self.alive or not owed:
            return None
        if self.busy():
            return estimate_seconds(owed, (self.recent or 0) / RECENT_SECONDS) if self.recent else None
        return estimate_seconds(owed, self.rate)

    def describe(self, owed: int, now: datetime) -> str:
        """The rest of the ``embeddings owed`` line: who is on it, how fast, until when; or why not."""
        from funes_core.ingest.worker import MIN_FREE_BYTES

        pid = f" (pid {self.pid})" if self.pid else ""
        if self.alive:
            if self.rate is None:
                return f"the background worker{pid} is starting"
            if self.busy():
                return (
                    f"the machine is busy: the background worker{pid} embedded {self.recent} chunk(s) "
                    "in the last 10 minutes (it yields to other work), so no estimate holds; "
                    "`funes index --wait` embeds the rest at normal priority"
                )
            eta = self.eta_seconds(owed) or 0.0
            finish = (now + timedelta(seconds=eta)).astimezone(UTC).strftime("%H:%M UTC")
            return (
                f"the background worker{pid} is embedding {self.rate:.1f}/s, "
                f"done in about {_duration(eta)} (around {finish})"
            )
        if self.state == "stopped" and self.error:
            return f"background embedding stopped: {self.error}"
        if self.free_bytes is not None and self.free_bytes < MIN_FREE_BYTES:
            return (
                f"background embedding stopped: the disk is full ({human_bytes(self.free_bytes)} free); "
                "free some space, then run `funes index` to resume"
            )
        if self.state in ("starting", "running"):
            return f"the background worker{pid} stopped unexpectedly; run `funes index` to resume"
        return "run `funes index` to embed them"

    def to_json(self, owed: int, now: datetime) -> dict[str, Any]:
        eta = self.eta_seconds(owed)
        return {
            "worker_running": self.alive,
            "state": self.state,
            "pid": self.pid,
            "rate_per_second": round(self.rate, 2) if self.rate else None,
            "eta_seconds": round(eta) if eta is not None else None,
            "eta": (now + timedelta(seconds=eta)).strftime("%Y-%m-%dT%H:%M:%SZ") if eta is not None else None,
            "error": self.error,
            "recent_chunks_10min": self.recent,
            "busy": self.busy(),
            "summary": self.describe(owed, now) if owed else None,
        }


def _duration(seconds: float) -> str:
    """``under a minute``, ``12 min``, ``3 h 05 min``."""
    minutes = round(seconds / 60)
    if minutes < 1:
        return "under a minute"
    if minutes < 60:
        return f"{minutes} min"
    return f"{minutes // 60} h {minutes % 60:02d} min"


def collect_embedding(home: Home, now: datetime | None = None) -> EmbeddingStatus | None:
    """What the background worker last said, and whether it still runs; ``None`` if it never ran."""
    import shutil

    from funes_core.ingest.worker import Progress, progress_path, worker_alive

    now = now or datetime.now(UTC)
    recorded = Progress.load(progress_path(home))
    alive = worker_alive(home)
    if recorded is None and not alive:
        return None
    recorded = recorded or Progress(state="running")
    free: int | None = None
    if not alive:
        try:
            free = shutil.disk_usage(home.root).free
        except OSError:
            free = None
    return EmbeddingStatus(
        alive=alive,
        state=recorded.state,
        pid=recorded.pid,
        rate=recorded.rate,
        error=recorded.error,
        free_bytes=free,
        recent=recorded.recent(now),
        running=_since(recorded.started, now),
    )


def _since(stamp: str | None, now: datetime) -> float | None:
    """Seconds from a progress file's UTC time to ``now`` (``None`` when absent or unreadable)."""
    if not stamp:
        return None
    try:
        began = datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    except ValueError:
        return None
    return (now - began).total_seconds()


def collect_status(
    memory: str | os.PathLike[str] | MemoryLocation | None = None, *, home: Home | None = None
) -> StatusReport:
    """Gather the status of a memory (default: ``$FUNES_HOME/memory``) without ever writing anything."""
    from funes_core.ingest.discovery import iter_spool_files
    from funes_core.models.embed import embedder_from_env
    from funes_core.share.memory import open_memory, resolve_memory
    from funes_core.store import NoIndexError

    home = home or Home.resolve()
    location = resolve_memory(memory, home=home)
    report = StatusReport(memory=location.label, exists=False, is_default=location.is_default)
    if location.is_default:
        state = State.load(home.state_path)
        refused_paths = set(state.refused)
        for sid in home.spool_ids():
            report.pending_spool[sid] = sum(
                1 for p in iter_spool_files(home, sid) if str(p) not in refused_paths
            )
        report.refused = [(path, item.error) for path, item in sorted(state.refused.items())]
    try:
        store = open_memory(location, home=home)
    except NoIndexError as exc:
        if getattr(exc, "failure", None) is not None:  # a remote that is there but cannot be read
            report.unavailable = str(exc)
        return report
    report.exists = True
    report.our_model = embedder_from_env(home).stamp.model
    stamp = store.model_stamp()
    if stamp is not None:
        report.model, report.dim = stamp.model, stamp.dim
    stats = store.stats()
    report.chunks = stats.chunks
    report.sessions = stats.sessions
    report.harnesses = dict(stats.harnesses)
    report.owed = stats.owed
    report.disk_bytes = stats.disk_bytes
    report.last_indexed = store.last_write()
    if location.is_default:
        report.embedding = collect_embedding(home)
    return report


@dataclass(frozen=True, slots=True)
class StatusArgs:
    """The ``status`` verb takes no parameter of its own."""


def run(memory: Memory, args: StatusArgs, *, as_json: bool = False) -> str:
    """The MCP ``status`` tool (and the text ``funes status`` prints): no update check, ever."""
    report = collect_status(memory.location or memory.spec, home=memory.home)
    if as_json:
        return dump(report.to_json())
    return report.render()


VERB = Verb(
    name="status",
    args=StatusArgs,
    run=run,
    cli_help=STATUS_HELP,
    tool_help=(
        "Health and size of the memory: chunks, sessions, agents, embeddings still owed, pending "
        "files, when it was last indexed. Call it when a read comes back empty or thin."
    ),
)
