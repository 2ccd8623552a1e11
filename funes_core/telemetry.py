"""Local usage figures behind ``funes stats``: numbers only, kept under ``$FUNES_HOME``, never sent.

Why it exists: a person tuning budgets or wondering whether the MCP server is slow needs figures
(how many recalls, from which face, how fast, how many hits, how much of the budget, how fast
indexing runs) without anything leaving the machine and without a service to run.

How it is written, with as little coupling as possible:

* a *face* (the CLI, the MCP server, ``funes ask``) opens a measurement around one call,
  ``with measure("recall", face="cli"): ...``, which times it and appends one event line;
* the code doing the work adds the figures only it knows, ``add(hits=8, triggers=1)``, without
  knowing who measures: outside a measurement :func:`add` does nothing.

What is kept: ``$FUNES_HOME/stats/events.jsonl``, one JSON object per line (``v``, ``at`` epoch
seconds, ``kind``, ``face``, ``ms``, ``ok`` and numeric figures). Values that are not numbers are
dropped, so no text can slip in by mistake; the one exception is a recall's query, kept only when
the user turned it on (``funes stats --queries on``). The file is bounded: past
:data:`MAX_BYTES` it becomes ``events.1.jsonl`` (replacing the previous one) and a new file
starts, so the figures never take more than about twice that. ``funes stats --record off`` (or
``FUNES_STATS=off`` in the environment) stops recording altogether.

Recording never fails a command: a full disk or an unwritable folder loses the event silently.
Reading is strict: a file with a line that is not an event is corrupt; ``funes stats`` moves it
aside (``<name>.corrupt-<time>``), starts afresh and says so.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import math
import os
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from funes_core.files import atomic_write_text

__all__ = [
    "FACES",
    "MAX_BYTES",
    "SCHEMA",
    "Settings",
    "StatsCorruptError",
    "Summary",
    "add",
    "forget_queries",
    "load",
    "measure",
    "percentile",
    "read_settings",
    "render",
    "reset",
    "set_aside",
    "stats_dir",
    "summarise",
    "summary_json",
    "write_settings",
]

#: Version of an event line.
SCHEMA = 1
#: The faces a recall can come from, in display order.
FACES = ("cli", "mcp", "ask")
#: Size past which ``events.jsonl`` is rotated to ``events.1.jsonl``.
MAX_BYTES = 512 * 1024
EVENTS = "events.jsonl"
OLDER = "events.1.jsonl"
SETTINGS = "settings.json"
#: Keys every event carries; everything else is a numeric figure (or the opt-in ``query``).
_HEAD = ("v", "at", "kind", "face", "ms", "ok")
#: Longest query kept when queries are recorded (a recall query is a line, not a document).
QUERY_CHARS = 500


class StatsCorruptError(Exception):
    """A stats file could not be read; it has been moved aside. ``str()`` is the one line to show."""


@dataclass(frozen=True, slots=True)
class Settings:
    """What the user chose: whether to record at all, and whether to keep recall queries."""

    record: bool = True
    queries: bool = False


def stats_dir(root: Path | None = None) -> Path:
    """``$FUNES_HOME/stats`` (``root`` is the FUNES_HOME; ``None`` resolves it from the environment)."""
    if root is None:
        from funes_core.home import Home

        root = Home.resolve().root
    return root / "stats"


# -- settings ---------------------------------------------------------------------------------------


def _parse_settings(text: str) -> Settings:
    data = json.loads(text)
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    record, queries = data.get("record", True), data.get("queries", False)
    if not isinstance(record, bool) or not isinstance(queries, bool):
        raise ValueError("record and queries must be true or false")
    return Settings(record=record, queries=queries)


def read_settings(folder: Path) -> Settings:
    """The settings in ``folder``; defaults when there is no file. Raises ``ValueError`` when unreadable."""
    try:
        text = (folder / SETTINGS).read_text(encoding="utf-8")
    except FileNotFoundError:
        return Settings()
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(str(exc)) from None
    return _parse_settings(text)


def write_settings(folder: Path, settings: Settings) -> None:
    from funes_core.home import ensure_private_dir

    ensure_private_dir(folder)
    text = json.dumps({"record": settings.record, "queries": settings.queries}, indent=2) + "\n"
    atomic_write_text(folder / SETTINGS, text)


def _recording(folder: Path, environ: Mapping[str, str]) -> Settings | None:
    """The settings to record with, or ``None`` when nothing may be recorded.

    Unreadable settings record nothing: the user may have turned recording off, and a broken
    file must not turn it back on. ``funes stats`` repairs it (and says so).
    """
    if environ.get("FUNES_STATS", "").strip().lower() in ("0", "off", "no", "false"):
        return None
    try:
        settings = read_settings(folder)
    except ValueError:
        return None
    return settings if settings.record else None


# -- writing ------------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Measurement:
    kind: str
    face: str
    figures: dict[str, float | int | str] = field(default_factory=dict)


_current: contextvars.ContextVar[_Measurement | None] = contextvars.ContextVar("funes_measure", default=None)


def add(**figures: object) -> None:
    """Add figures to the measurement in progress (a no-op outside one).

    Numbers only (``bool`` counts as a number); anything else is dropped, except ``query``,
    which is kept as text and later written only if the user turned query recording on.
    """
    current = _current.get()
    if current is None:
        return
    for name, value in figures.items():
        if name == "query" and isinstance(value, str):
            current.figures[name] = value
        elif isinstance(value, bool):
            current.figures[name] = int(value)
        elif isinstance(value, int | float) and math.isfinite(value):
            current.figures[name] = value


@contextlib.contextmanager
def measure(
    kind: str,
    *,
    face: str,
    root: Path | None = None,
    environ: Mapping[str, str] | None = None,
    unrecorded: tuple[type[BaseException], ...] = (),
) -> Iterator[None]:
    """Time one call of ``kind`` made through ``face`` and append its event when it ends.

    The event says whether the call succeeded (``ok``); an exception passes through unchanged,
    and one of the ``unrecorded`` types (a call that never ran, such as an index run that found
    the write lock taken) leaves no event. ``root`` is the FUNES_HOME (``None``: from the
    environment).
    """
    measurement = _Measurement(kind, face)
    token: contextvars.Token[_Measurement | None] | None = _current.set(measurement)
    started = time.perf_counter()
    ok = False
    try:
        yield
        ok = True
    except unrecorded:
        assert token is not None
        _current.reset(token)
        token = None
        raise
    finally:
        if token is not None:
            _current.reset(token)
            elapsed_ms = (time.perf_counter() - started) * 1000.0
            _record(measurement, elapsed_ms, ok, root, os.environ if environ is None else environ)


def _record(m: _Measurement, ms: float, ok: bool, root: Path | None, environ: Mapping[str, str]) -> None:
    try:
        folder = stats_dir(root)
        settings = _recording(folder, environ)
        if settings is None:
            return
        event: dict[str, Any] = {
            "v": SCHEMA,
            "at": round(time.time(), 3),
            "kind": m.kind,
            "face": m.face,
            "ms": round(ms, 3),
            "ok": ok,
        }
        for name, value in m.figures.items():
            if name == "query":
                if settings.queries and isinstance(value, str):
                    event["query"] = value[:QUERY_CHARS]
            elif name not in _HEAD:
                event[name] = value
        _append(folder, json.dumps(event, ensure_ascii=False, separators=(",", ":")) + "\n")
    except Exception:  # broad on purpose: a figure is never worth a failed command
        return


def _append(folder: Path, line: str) -> None:
    """Append one line (a single ``write`` on an ``O_APPEND`` file), rotating past :data:`MAX_BYTES`."""
    from funes_core.home import ensure_private_dir

    ensure_private_dir(folder)
    path = folder / EVENTS
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        os.write(fd, line.encode("utf-8"))
        size = os.fstat(fd).st_size
    finally:
        os.close(fd)
    if size > MAX_BYTES:
        _rotate(folder)


def _rotate(folder: Path) -> None:
    """Move ``events.jsonl`` to ``events.1.jsonl`` under a lock, so two writers rotate once."""
    from funes_core.portable import file_lock

    with file_lock(folder / "rotate.lock"):
        path = folder / EVENTS
        try:
            if path.stat().st_size <= MAX_BYTES:
                return  # another writer rotated it meanwhile
        except FileNotFoundError:
            return
        os.replace(path, folder / OLDER)


# -- reading ------------------------------------------------------------------------------------------


def _check_event(value: object) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ValueError("not a JSON object")
    if value.get("v") != SCHEMA:
        raise ValueError(f"unknown version {value.get('v')!r}")
    for key, kind in (("kind", str), ("face", str)):
        if not isinstance(value.get(key), kind):
            raise ValueError(f"{key} is missing")
    for key in ("at", "ms"):
        number = value.get(key)
        if isinstance(number, bool) or not isinstance(number, int | float):
            raise ValueError(f"{key} is not a number")
    return value


def _read_events(path: Path) -> list[dict[str, Any]]:
    """The events of one file; ``ValueError`` naming the line when one is not an event."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"not UTF-8 text (byte {exc.start})") from None
    events = []
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            events.append(_check_event(json.loads(line)))
        except ValueError as exc:
            raise ValueError(f"line {number}: {exc}") from None
    return events


def set_aside(path: Path, now: datetime | None = None) -> Path:
    """Rename a corrupt file to ``<name>.corrupt-<UTC time>`` (kept for a person to look at)."""
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%SZ")
    target = path.with_name(f"{path.name}.corrupt-{stamp}")
    os.replace(path, target)
    return target


def load(folder: Path) -> tuple[list[dict[str, Any]], Settings]:
    """Every event kept (older file first) and the settings.

    A corrupt file is moved aside before :class:`StatsCorruptError` is raised, so the next
    command starts afresh; the error's message says which file, why, and where it went.
    """
    problems: list[str] = []
    events: list[dict[str, Any]] = []
    for name in (OLDER, EVENTS):
        path = folder / name
        try:
            events.extend(_read_events(path))
        except ValueError as exc:
            moved = set_aside(path)
            problems.append(f"{path} is corrupt ({exc}); moved it aside to {moved.name} and started afresh")
    try:
        settings = read_settings(folder)
    except ValueError as exc:
        path = folder / SETTINGS
        moved = set_aside(path)
        problems.append(
            f"{path} is corrupt ({exc}); moved it aside to {moved.name}: recording and query "
            "recording are back to their defaults (on, off)"
        )
        settings = Settings()
    if problems:
        raise StatsCorruptError("; ".join(problems))
    return events, settings


def forget_queries(folder: Path) -> int:
    """Remove the recall queries from the kept events (when query recording is turned off).

    Returns how many were removed. Lines that are not events are kept as they are: this is not
    the place to judge them (``funes stats`` does).
    """
    removed = 0
    for name in (OLDER, EVENTS):
        path = folder / name
        try:
            text = path.read_text(encoding="utf-8")
        except (FileNotFoundError, UnicodeDecodeError):
            continue
        out = []
        for line in text.split("\n"):
            try:
                event = json.loads(line) if line.strip() else None
            except ValueError:
                event = None
            if isinstance(event, dict) and "query" in event:
                del event["query"]
                removed += 1
                line = json.dumps(event, ensure_ascii=False, separators=(",", ":"))
            out.append(line)
        atomic_write_text(path, "\n".join(out))
    return removed


def reset(folder: Path) -> int:
    """Delete the recorded events (the settings stay); returns how many files were removed."""
    removed = 0
    for name in (EVENTS, OLDER):
        with contextlib.suppress(FileNotFoundError):
            (folder / name).unlink()
            removed += 1
    return removed


# -- summary ------------------------------------------------------------------------------------------


def percentile(values: Sequence[float], q: float) -> float | None:
    """Nearest-rank percentile (the smallest value with at least ``q`` of them at or below it)."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(math.ceil(q * len(ordered)), 1)
    return ordered[rank - 1]


def _num(event: Mapping[str, Any], key: str) -> float:
    value = event.get(key, 0)
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


@dataclass(frozen=True, slots=True)
class Summary:
    """What ``funes stats`` shows, computed from the kept events."""

    events: int
    since: float | None
    recalls: dict[str, int]
    recall_errors: int
    latency_p50: float | None
    latency_p95: float | None
    latency_by_face: dict[str, tuple[float | None, float | None]]
    hits: int
    budgeted: int
    budget_tokens: int
    budget_used_tokens: int
    triggers: int
    recalls_with_triggers: int
    verbs: dict[str, dict[str, int]]
    index_runs: int
    index_failed: int
    #: Runs that stored or embedded something; the throughput figures are over these.
    index_busy: int
    index_files: int
    index_chunks: int
    index_embedded: int
    index_seconds: float
    queries: dict[str, int]
    recording: Settings


def summarise(events: Sequence[Mapping[str, Any]], settings: Settings) -> Summary:
    """Counts, nearest-rank p50/p95 latencies and throughput over ``events``."""
    recalls = [e for e in events if e.get("kind") == "recall"]
    done = [e for e in recalls if e.get("ok", True)]
    by_face: dict[str, int] = dict.fromkeys(FACES, 0)
    for e in recalls:
        by_face[str(e["face"])] = by_face.get(str(e["face"]), 0) + 1
    latency = [float(e["ms"]) for e in done]
    per_face = {
        face: (
            percentile([float(e["ms"]) for e in done if e["face"] == face], 0.5),
            percentile([float(e["ms"]) for e in done if e["face"] == face], 0.95),
        )
        for face in by_face
    }
    budgeted = [e for e in done if _num(e, "budget") > 0]
    verbs: dict[str, dict[str, int]] = {}
    for e in events:
        kind = str(e.get("kind"))
        if kind in ("recall", "index"):
            continue
        faces = verbs.setdefault(kind, {})
        faces[str(e["face"])] = faces.get(str(e["face"]), 0) + 1
    runs = [e for e in events if e.get("kind") == "index"]
    good_runs = [e for e in runs if e.get("ok", True)]
    # Throughput over the runs that stored or embedded something: a run that found nothing new
    # (most per-turn runs) measures start-up, not indexing.
    busy = [e for e in good_runs if _num(e, "chunks") > 0 or _num(e, "embedded") > 0]
    queries: dict[str, int] = {}
    for e in recalls:
        q = e.get("query")
        if isinstance(q, str) and q:
            queries[q] = queries.get(q, 0) + 1
    return Summary(
        events=len(events),
        since=min((float(e["at"]) for e in events), default=None),
        recalls=by_face,
        recall_errors=len(recalls) - len(done),
        latency_p50=percentile(latency, 0.5),
        latency_p95=percentile(latency, 0.95),
        latency_by_face=per_face,
        hits=int(sum(_num(e, "hits") for e in done)),
        budgeted=len(budgeted),
        budget_tokens=int(sum(_num(e, "budget") for e in budgeted)),
        budget_used_tokens=int(sum(_num(e, "tokens") for e in budgeted)),
        triggers=int(sum(_num(e, "triggers") for e in done)),
        recalls_with_triggers=sum(1 for e in done if _num(e, "triggers") > 0),
        verbs=verbs,
        index_runs=len(runs),
        index_failed=len(runs) - len(good_runs),
        index_busy=len(busy),
        index_files=int(sum(_num(e, "files") for e in busy)),
        index_chunks=int(sum(_num(e, "chunks") for e in busy)),
        index_embedded=int(sum(_num(e, "embedded") for e in busy)),
        index_seconds=sum(float(e["ms"]) for e in busy) / 1000.0,
        queries=queries,
        recording=settings,
    )


def _ms(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.0f} ms" if value >= 10 else f"{value:.1f} ms"


def _day(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%d %H:%M UTC")


def render(s: Summary, folder: Path) -> str:
    """The text of ``funes stats``."""
    total = sum(s.recalls.values())
    lines = [f"funes stats: local figures from {folder} (never sent anywhere)"]
    if not s.events:
        lines.append("nothing recorded yet: figures appear after the first recall or index run")
    else:
        lines.append(f"since {_day(s.since or 0)}: {s.events} events")
    faces = ", ".join(f"{face} {n}" for face, n in s.recalls.items())
    errors = f"; {s.recall_errors} failed" if s.recall_errors else ""
    lines.append(f"recalls: {total} ({faces}){errors}")
    if s.latency_p50 is not None:
        lines.append(f"  latency: p50 {_ms(s.latency_p50)}, p95 {_ms(s.latency_p95)}")
        for face, (p50, p95) in s.latency_by_face.items():
            if p50 is not None:
                lines.append(f"    {face}: p50 {_ms(p50)}, p95 {_ms(p95)}")
        answered = total - s.recall_errors
        lines.append(f"  hits returned: {s.hits} ({s.hits / answered:.1f} per recall)")
        if s.budgeted:
            share = 100.0 * s.budget_used_tokens / s.budget_tokens if s.budget_tokens else 0.0
            lines.append(
                f"  budget used: {s.budget_used_tokens} of {s.budget_tokens} tokens ({share:.0f}%) "
                f"over {s.budgeted} budgeted recalls"
            )
        else:
            lines.append("  budget used: no recall had a budget (--budget or --level)")
        lines.append(f"  triggers fired: {s.triggers} (in {s.recalls_with_triggers} recalls)")
    for verb, faces_ in sorted(s.verbs.items()):
        counts = ", ".join(f"{face} {n}" for face, n in sorted(faces_.items()))
        lines.append(f"{verb}: {sum(faces_.values())} ({counts})")
    failed = f", {s.index_failed} failed" if s.index_failed else ""
    lines.append(f"index runs: {s.index_runs} ({s.index_busy} found something new){failed}")
    if s.index_busy:
        seconds = s.index_seconds
        rate = f"{s.index_chunks / seconds:.1f} chunks/s" if seconds > 0 else "-"
        embed = f"{s.index_embedded / seconds:.1f}/s" if seconds > 0 else "-"
        lines.append(
            f"  {s.index_files} files, {s.index_chunks} chunks stored, {s.index_embedded} embedded "
            f"in {seconds:.1f} s ({rate}; embeddings {embed})"
        )
    if s.queries:
        top = sorted(s.queries.items(), key=lambda kv: (-kv[1], kv[0]))[:5]
        lines.append("most frequent queries: " + "; ".join(f"{q!r} ×{n}" for q, n in top))
    record = "on" if s.recording.record else "off"
    queries = "on" if s.recording.queries else "off"
    lines.append(f"recording: {record}; query text: {queries} (funes stats --record/--queries on|off)")
    return "\n".join(lines) + "\n"


def summary_json(s: Summary, folder: Path) -> str:
    """``funes stats --json``: the same figures, milliseconds and seconds as numbers."""
    total = sum(s.recalls.values())
    doc: dict[str, Any] = {
        "folder": str(folder),
        "events": s.events,
        "since": s.since,
        "recording": {"record": s.recording.record, "queries": s.recording.queries},
        "recalls": {
            "total": total,
            "by_face": s.recalls,
            "failed": s.recall_errors,
            "latency_ms": {"p50": s.latency_p50, "p95": s.latency_p95},
            "latency_ms_by_face": {f: {"p50": a, "p95": b} for f, (a, b) in s.latency_by_face.items()},
            "hits": s.hits,
            "budgeted": s.budgeted,
            "budget_tokens": s.budget_tokens,
            "budget_used_tokens": s.budget_used_tokens,
            "triggers_fired": s.triggers,
            "recalls_with_triggers": s.recalls_with_triggers,
        },
        "verbs": s.verbs,
        "index": {
            "runs": s.index_runs,
            "failed": s.index_failed,
            "busy_runs": s.index_busy,
            "files": s.index_files,
            "chunks": s.index_chunks,
            "embedded": s.index_embedded,
            "seconds": round(s.index_seconds, 3),
            "chunks_per_second": round(s.index_chunks / s.index_seconds, 3) if s.index_seconds else None,
            "embedded_per_second": (
                round(s.index_embedded / s.index_seconds, 3) if s.index_seconds else None
            ),
        },
        "queries": s.queries,
    }
    return json.dumps(doc, ensure_ascii=False, indent=2) + "\n"
