"""What each page of the viewer shows, gathered through the read verbs (never LanceDB by hand).

Each function takes the viewer's state and the page's query parameters and returns the template
context: plain data, no HTML (escaping is :mod:`funes_core.faces.web.render`'s job, always on).
A bad parameter becomes a :class:`~funes_core.read.common.VerbError` with the verb's own one-line
message, shown on the page.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from funes_core.read.common import VerbError, get_ref
from funes_core.read.sessions import DEFAULT_LIMIT, SessionsArgs, SessionSummary, page_of
from funes_core.safetext import shell_word

if TYPE_CHECKING:
    from funes_core.home import Home
    from funes_core.read.handle import Memory, MemorySet
    from funes_core.store.base import SessionFacet, Store

__all__ = [
    "PAGE_SIZE",
    "SessionCatalog",
    "Viewer",
    "health_page",
    "installed_integrations",
    "owed_now",
    "search_page",
    "session_page",
    "sessions_page",
]

#: Sessions per page of the timeline.
PAGE_SIZE = DEFAULT_LIMIT
#: Hits a search shows (the recall verb's ``k``; the box lets a person ask for up to 50).
SEARCH_K = 20
#: A turn higher than any real one: the reader reads a whole session.
_LAST_SEQ = 2**62
#: Pages whose newest live search is remembered, and the longest page id taken (see :meth:`Viewer.ask`).
_TABS = 64
_TAB_CHARS = 32


@dataclass(slots=True)
class SessionCatalog:
    """The sessions verb's facets per (agent, repo) filter, and openings, kept until the store changes.

    Why: :func:`funes_core.read.sessions.list_sessions` reads the memory on every call, which is
    right for a CLI command and wrong for a person paging through a timeline. A store that tells
    its data version (LanceDB does, for ~0.2 ms) has its sessions listed once per version and
    filter (:func:`~funes_core.read.sessions.facets`: a few columns, no text), every page is a
    slice of that list, and only the page's sessions have their opening request read, once; a
    store that cannot tell is read on every page.
    """

    _kept: dict[tuple[str, str | None, str | None], tuple[int, list[SessionFacet], bool]] = field(
        default_factory=dict
    )
    _openings: dict[tuple[str, SessionFacet], tuple[int, SessionSummary]] = field(default_factory=dict)

    def facets(
        self, store: Store, label: str, harness: str | None, repo: str | None
    ) -> tuple[list[SessionFacet], bool]:
        """``(sessions oldest first, memory_empty)`` for the filter, from the cache when still true."""
        from funes_core.read.sessions import facets
        from funes_core.store.base import Filters

        version = _version(store)
        key = (label, harness or None, repo or None)
        kept = self._kept.get(key)
        if kept is not None and version is not None and kept[0] == version:
            return kept[1], kept[2]
        filters = Filters(harness=harness or None, repo=repo or None)
        found = facets(store, None if filters.empty else filters)
        empty = not found and (filters.empty or store.count() == 0)
        if version is not None:
            self._kept = {k: v for k, v in self._kept.items() if k[0] != label or v[0] == version}
            self._kept[key] = (version, found, empty)
        return found, empty

    def summaries(self, store: Store, label: str, page: Sequence[SessionFacet]) -> list[SessionSummary]:
        """The page's sessions with their opening requests (read once per version for each)."""
        from funes_core.read.sessions import openings

        version = _version(store)
        if version is None:
            return openings(store, page)
        self._openings = {k: v for k, v in self._openings.items() if k[0] != label or v[0] == version}
        missing = [f for f in page if (label, f) not in self._openings]
        for facet, summary in zip(missing, openings(store, missing), strict=True):
            self._openings[(label, facet)] = (version, summary)
        return [self._openings[(label, f)][1] for f in page]


def _version(store: Store) -> int | None:
    from funes_core.store.base import Versioned

    return store.data_version() if isinstance(store, Versioned) else None


@dataclass(slots=True)
class Viewer:
    """The viewer's state: the memory it opened, how it opens others (``?memory=``), its caches.

    ``lock`` serialises reads of the memory handles (they open lazily and are not thread-safe);
    routes run the page functions in worker threads under it. A viewer the memory service hosts
    is given the service's own lock, since it reads the handles the service's sessions read.
    """

    memory: Memory | MemorySet
    open_memory: Callable[[str], Memory | MemorySet]
    #: Integrations installed on this machine (their ids), for the overdue-capture warning.
    installed: tuple[str, ...] = ()
    catalog: SessionCatalog = field(default_factory=SessionCatalog)
    lock: threading.Lock | threading.RLock = field(default_factory=threading.Lock)
    #: The newest live search of each page (its ``tab`` id): see :meth:`ask`.
    searches: dict[str, int] = field(default_factory=dict)
    _asked: Iterator[int] = field(default_factory=lambda: itertools.count(1))
    _opened: dict[str, Memory | MemorySet] = field(default_factory=dict)

    def ask(self, tab: str | None) -> tuple[str, int] | None:
        """A ticket for a live search from the page ``tab`` (a random id the page makes), taken
        as the request arrives; a newer ticket of the same page supersedes it.

        Why: the search page asks as you type. Each search waits for the lock, so keys coming
        faster than searches answer would queue searches whose answers the page no longer
        wants, and the one it wants would come last. :meth:`superseded` lets those be dropped.
        """
        if not tab or len(tab) > _TAB_CHARS:
            return None
        ticket = next(self._asked)
        self.searches.pop(tab, None)
        self.searches[tab] = ticket
        while len(self.searches) > _TABS:
            del self.searches[next(iter(self.searches))]
        return tab, ticket

    def superseded(self, ticket: tuple[str, int] | None) -> bool:
        """Whether a newer search from the same page came since ``ticket`` was taken."""
        return ticket is not None and self.searches.get(ticket[0], ticket[1]) != ticket[1]

    @property
    def primary(self) -> Memory:
        """The one memory the timeline and health read: the viewer's, or the first of a set."""
        from funes_core.read.handle import MemorySet

        return self.memory.members[0] if isinstance(self.memory, MemorySet) else self.memory

    def memory_for(self, spec: str | None) -> Memory | MemorySet:
        """The memory a page asks for (``--memory`` semantics), or the viewer's own."""
        spec = (spec or "").strip()
        if not spec or spec == self.memory.spec or spec == self.memory.label:
            return self.memory
        if spec not in self._opened:
            self._opened[spec] = self.open_memory(spec)
        return self._opened[spec]


def _param(params: Mapping[str, str], name: str) -> str | None:
    value = params.get(name, "").strip()
    return value or None


def _int(params: Mapping[str, str], name: str, default: int, *, lo: int, hi: int) -> int:
    raw = _param(params, name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise VerbError(f"{name}: {raw!r} is not a whole number") from None
    if not lo <= value <= hi:
        raise VerbError(f"{name} must be between {lo} and {hi} (got {value})")
    return value


# -- sessions ------------------------------------------------------------------------------------------


def _span(s: SessionSummary) -> str:
    start, end = s.start_ts, s.end_ts or s.start_ts
    if start[:10] == end[:10]:
        return f"{start[11:16]}–{end[11:16]}" if end[11:16] != start[11:16] else start[11:16]
    return f"{start[11:16]} – {end[:10]} {end[11:16]}"


def sessions_page(viewer: Viewer, params: Mapping[str, str]) -> dict[str, Any]:
    """The timeline: one page of sessions, newest first, grouped by the day they started."""
    harness, repo = _param(params, "agent"), _param(params, "repo")
    since, until = _param(params, "since"), _param(params, "until")
    offset = _int(params, "offset", 0, lo=0, hi=10**9)
    memory = viewer.primary
    store = memory.store()
    args = SessionsArgs(repo=repo, harness=harness, since=since, until=until, limit=PAGE_SIZE, offset=offset)
    found, empty = viewer.catalog.facets(store, memory.label, harness, repo)
    total, page = page_of(found, args)
    everyone, _ = viewer.catalog.facets(store, memory.label, None, None)
    days: list[dict[str, Any]] = []
    for s in reversed(viewer.catalog.summaries(store, memory.label, page)):
        if not days or days[-1]["day"] != s.date:
            days.append({"day": s.date, "sessions": []})
        days[-1]["sessions"].append({"s": s, "span": _span(s)})
    shown = len(page)
    older = max(total - offset - shown, 0)
    return {
        "days": days,
        "total": total,
        "offset": offset,
        "shown": shown,
        "older_offset": offset + shown if older else None,
        "newer_offset": max(offset - PAGE_SIZE, 0) if offset else None,
        "memory_empty": empty,
        "agents": sorted({s.harness for s in everyone}),
        "repos": sorted({s.repo for s in everyone if s.repo}),
        "filters": {"agent": harness or "", "repo": repo or "", "since": since or "", "until": until or ""},
    }


# -- the reader ----------------------------------------------------------------------------------------


def session_page(viewer: Viewer, session_id: str, memory_spec: str | None) -> dict[str, Any]:
    """Every turn of one session, verbatim, in seq order (the ``get`` verb over the whole session)."""
    from funes_core.read.get import get_turns

    memory = viewer.memory_for(memory_spec)
    store = memory.store()
    result = get_turns(store, memory.label, session_id, seq_from=0, seq_to=_LAST_SEQ)
    turns = [
        {
            "t": t,
            "command": _get_one(session_id, t.seq, memory.label),
        }
        for t in result.turns
    ]
    first = result.turns[0] if result.turns else None
    last = result.turns[-1] if result.turns else None
    return {
        "session_id": session_id,
        "memory": memory.label,
        "memory_spec": memory_spec or "",
        "total": result.total,
        "turns": turns,
        "harness": first.harness if first else "",
        "start": first.ts if first else "",
        "end": last.ts if last else "",
    }


def _get_one(session_id: str, seq: int, label: str) -> str:
    """The ``funes get`` command that prints exactly this turn (shell-quoted, as the CLI's hints)."""
    return f"funes get {shell_word(session_id)} --from {seq} --to {seq} --memory {shell_word(label)}"


# -- search --------------------------------------------------------------------------------------------


def search_page(viewer: Viewer, params: Mapping[str, str]) -> dict[str, Any]:
    """The recall agents use (:func:`funes_core.read.recall.search`), with its filters and memories."""
    from funes_core.read.recall import RecallArgs, search

    form = {
        name: params.get(name, "").strip()
        for name in ("q", "agent", "role", "type", "repo", "since", "until", "memory")
    }
    k = _int(params, "k", SEARCH_K, lo=1, hi=50)
    form["k"] = str(k)
    context: dict[str, Any] = {"form": form, "hits": [], "searched": False, "notes": [], "triggers": []}
    query = form["q"]
    if not query:
        return context
    memory = viewer.memory_for(form["memory"] or None)
    args = RecallArgs(
        query=query,
        k=k,
        neighbors=0,  # the hits show no neighbouring turns (the reader does): do not read them
        harness=form["agent"] or None,
        role=form["role"] or None,
        block_type=form["type"] or None,
        repo=form["repo"] or None,
        since=form["since"] or None,
        until=form["until"] or None,
    )
    result, notes = search(memory, args)
    words = sorted(set(_words(result.query)), key=len, reverse=True)
    hits = []
    for hit in result.hits:
        row = hit.row
        label = hit.memory or memory.label
        hits.append(
            {
                "row": row,
                "score": hit.score,
                "memory": hit.memory,
                "label": label,
                "external": row.taint == "external",
                "command": "funes " + get_ref(row.session_id, row.seq, label),
            }
        )
    context.update(
        searched=True,
        hits=hits,
        words=words,
        notes=list(notes) + list(result.notes),
        triggers=list(result.triggers),
        label=memory.label,
        cut=result.cut,
    )
    return context


#: Words not highlighted: marking every "the" in a passage hides the words that matched.
_UNMARKED = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "did",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "how",
        "i",
        "if",
        "in",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "so",
        "that",
        "the",
        "this",
        "to",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "will",
        "with",
        "you",
    ]
)


def _words(query: str) -> list[str]:
    """The query's words to highlight: whole words and identifiers, common English words left out."""
    import re

    found = re.findall(r"[^\W_][\w.-]*", query)
    return [w for w in found if (len(w) > 1 or w.isdigit()) and w.lower() not in _UNMARKED]


# -- health --------------------------------------------------------------------------------------------


def owed_now(viewer: Viewer) -> dict[str, Any]:
    """Embeddings owed and what the worker says, for the health page's live figure."""
    from funes_core.read.status import collect_status

    memory = viewer.primary
    report = collect_status(memory.spec, home=memory.home)
    now = datetime.now(UTC)
    summary = report.embedding.describe(report.owed, now) if report.embedding and report.owed else ""
    return {"owed": report.owed, "summary": summary}


def installed_integrations(home: Home) -> list[str]:
    """Ids that ``funes integrations install`` recorded (``$FUNES_HOME/integrations/<id>.json``)."""
    folder = home.root / "integrations"
    try:
        return sorted(p.stem for p in folder.glob("*.json"))
    except OSError:
        return []


def _usual_gap(starts: Sequence[datetime]) -> timedelta | None:
    """The usual time between an agent's sessions: the 90th percentile of the gaps (3+ sessions)."""
    if len(starts) < 3:
        return None
    ordered = sorted(starts)
    gaps = sorted((b - a).total_seconds() for a, b in itertools.pairwise(ordered))
    return timedelta(seconds=gaps[min(len(gaps) - 1, int(len(gaps) * 0.9))])


def _parse(ts: str) -> datetime | None:
    try:
        moment = datetime.fromisoformat(ts.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def captures(
    summaries: Sequence[SessionFacet], installed: Sequence[str], now: datetime
) -> list[dict[str, Any]]:
    """Last capture per agent, with a warning for an installed one silent past its usual gap.

    Overdue: nothing for longer than twice the usual gap between its sessions and at least a day
    (an agent used every ten minutes is not overdue after an hour's lunch).
    """
    from funes_core.read.status import age_words

    by_agent: dict[str, list[SessionFacet]] = {}
    for s in summaries:
        by_agent.setdefault(s.harness, []).append(s)
    rows = []
    for agent in sorted(set(by_agent) | set(installed)):
        mine = by_agent.get(agent, [])
        ends = [m for m in (_parse(s.end_ts or s.start_ts) for s in mine) if m is not None]
        starts = [m for m in (_parse(s.start_ts) for s in mine) if m is not None]
        last = max(ends) if ends else None
        gap = _usual_gap(starts)
        warning = None
        if agent in installed:
            if last is None:
                warning = "installed, but nothing captured yet"
            elif gap is not None and now - last > max(2 * gap, timedelta(days=1)):
                silent = age_words(last, now).removesuffix(" ago")
                warning = f"nothing captured for {silent}; usually every {_gap_words(gap)}"
        rows.append(
            {
                "agent": agent,
                "sessions": len(mine),
                "last": last.strftime("%Y-%m-%d %H:%M UTC") if last else "never",
                "age": age_words(last, now) if last else "",
                "installed": agent in installed,
                "warning": warning,
            }
        )
    return rows


def _gap_words(gap: timedelta) -> str:
    hours = gap.total_seconds() / 3600
    if hours < 1:
        return f"{max(1, round(hours * 60))} min"
    if hours < 48:
        return f"{round(hours)} h"
    return f"{round(hours / 24)} days"


def health_page(viewer: Viewer) -> dict[str, Any]:
    """What ``funes status`` reports, plus captures, remotes, triggers and the usage figures."""
    from funes_core.read.status import collect_status, human_bytes
    from funes_core.read.triggers import live

    memory = viewer.primary
    now = datetime.now(UTC)
    report = collect_status(memory.spec, home=memory.home)
    context: dict[str, Any] = {
        "report": report,
        "disk": human_bytes(report.disk_bytes),
        "owed_summary": report.embedding.describe(report.owed, now)
        if report.embedding and report.owed
        else "",
        "embedding": report.embedding.to_json(report.owed, now) if report.embedding else None,
        "captures": [],
        "triggers": [],
        "remotes": [],
        "stats": None,
    }
    if report.exists:
        store = memory.store()
        found, _ = viewer.catalog.facets(store, memory.label, None, None)
        context["captures"] = captures(found, viewer.installed, now)
        context["triggers"] = live(store)
    context["remotes"] = _remotes(memory, now)
    context["stats"] = _stats(memory, now)
    return context


def _remotes(memory: Memory | MemorySet, now: datetime) -> list[dict[str, str]] | str:
    from funes_core.share.remotes import RemoteConfigError, load_remotes

    try:
        remotes = load_remotes(memory.home)
    except (RemoteConfigError, OSError) as exc:
        return str(exc)
    return [
        {"name": r.name, "uri": r.uri, "taint": r.taint, **_last_push(memory, r.name, now)}
        for r in remotes.values()
    ]


def _last_push(memory: Memory | MemorySet, name: str, now: datetime) -> dict[str, str]:
    """The remote's last push from this machine, in words: ``pushed`` (or why it is not known) and
    ``failed`` (a failure or refusal since, or the last one when it never pushed)."""
    from funes_core.read.status import age_words
    from funes_core.share.lastpush import PushRecordError, load_record

    try:
        record = load_record(memory.home, name)
    except PushRecordError as exc:
        return {"pushed": "", "failed": "", "unreadable": str(exc)}
    ok, bad = record.success, record.failure
    pushed = "never pushed from this machine"
    if ok is not None:
        version = f", version {ok.table_version}" if ok.table_version is not None else ""
        pushed = (
            f"last push: {age_words(ok.when, now)} ({ok.chunks} chunk(s), {ok.turns} turn(s){version}; "
            f"{ok.when.strftime('%Y-%m-%d %H:%M UTC')})"
        )
    failed = ""
    if bad is not None and (ok is None or bad.when > ok.when):
        failed = f"last push failed {age_words(bad.when, now)}: {bad.error}"
    return {"pushed": pushed, "failed": failed, "unreadable": ""}


def _stats(memory: Memory | MemorySet, now: datetime) -> dict[str, Any] | str:
    """Recalls per day by interface and latency p50/p95 per day over the last 14 days, as chart data."""
    from funes_core import telemetry

    folder = telemetry.stats_dir(memory.home.root)
    try:
        events, settings = (
            telemetry.load(folder) if folder.exists() else ([], telemetry.read_settings(folder))
        )
    except (telemetry.StatsCorruptError, ValueError) as exc:
        return f"usage figures unreadable: {exc}"
    days = [(now - timedelta(days=i)).strftime("%Y-%m-%d") for i in range(13, -1, -1)]
    counts = {d: dict.fromkeys(telemetry.FACES, 0) for d in days}
    latency: dict[str, list[float]] = {d: [] for d in days}
    for e in events:
        if e.get("kind") != "recall":
            continue
        day = datetime.fromtimestamp(float(e["at"]), UTC).strftime("%Y-%m-%d")
        if day not in counts:
            continue
        face = str(e.get("face"))
        counts[day][face] = counts[day].get(face, 0) + 1
        if e.get("ok", True):
            latency[day].append(float(e["ms"]))
    return _charts(days, counts, latency, recording=settings.record, events=len(events))


def _charts(
    days: list[str],
    counts: dict[str, dict[str, int]],
    latency: dict[str, list[float]],
    *,
    recording: bool,
    events: int,
) -> dict[str, Any]:
    from funes_core import telemetry

    width, height, pad = 560, 160, 24
    slot = (width - pad) / len(days)
    top: float = max((sum(c.values()) for c in counts.values()), default=0) or 1
    bars = []
    for i, day in enumerate(days):
        y: float = height - pad
        for face, n in counts[day].items():
            if not n:
                continue
            h = (height - 2 * pad) * n / top
            y -= h
            bars.append(
                {
                    "x": round(pad + i * slot + 2, 1),
                    "y": round(y, 1),
                    "w": round(slot - 4, 1),
                    "h": round(h, 1),
                    "face": face,
                    "n": n,
                    "day": day,
                }
            )
    p50 = [telemetry.percentile(latency[d], 0.5) for d in days]
    p95 = [telemetry.percentile(latency[d], 0.95) for d in days]
    peak = max((v for v in p95 if v is not None), default=0.0) or 1.0

    def line(values: list[float | None]) -> dict[str, Any]:
        """A polyline's points, and each point with its value (a day alone still shows as a dot)."""
        dots = [
            {
                "x": round(pad + i * slot + slot / 2, 1),
                "y": round(height - pad - (height - 2 * pad) * v / peak, 1),
                "ms": round(v),
                "day": days[i],
            }
            for i, v in enumerate(values)
            if v is not None
        ]
        return {"points": " ".join(f"{d['x']},{d['y']}" for d in dots), "dots": dots}

    return {
        "width": width,
        "height": height,
        "pad": pad,
        "days": days,
        "labels": [
            {"x": round(pad + i * slot + slot / 2, 1), "text": d[5:]}
            for i, d in enumerate(days)
            if i % 2 == 0
        ],
        "bars": bars,
        "top": top,
        "p50": line(p50),
        "p95": line(p95),
        "peak": round(peak),
        "recording": recording,
        "events": events,
        "recalls": sum(sum(c.values()) for c in counts.values()),
    }
