"""The read verbs as text, shared by the CLI and the MCP server so both say exactly the same thing.

Each function takes a :class:`~funes_core.store.handle.Memory` (a resolved, lazily opened memory) and
the verb's parameters, and returns the agent-format text (or its JSON form). Bad parameters raise
:class:`VerbError` with a one-line message; the CLI prints it and exits 1, the MCP server turns it
into an error result.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime
from typing import TYPE_CHECKING

from funes_core.read.recall import DEFAULT_FUSION, LEVELS, Leg, RecallParams, RecallResult, recall
from funes_core.read.render import pack_to_budget, recall_json
from funes_core.read.triggers import NOTES_SESSION, live_triggers, matching
from funes_core.store.base import Filters

if TYPE_CHECKING:
    from funes_core.store.handle import Memory

__all__ = ["VerbError", "parse_day", "recall_text", "triggers_text"]


class VerbError(ValueError):
    """A read verb could not run; the message is the one line shown to the user or agent."""


def parse_day(value: str | None, flag: str) -> date | None:
    """``YYYY-MM-DD`` → date, with an error naming the flag."""
    if value is None or value == "":
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise VerbError(f"{flag}: {value!r} is not a date (YYYY-MM-DD)") from None


def make_filters(
    *,
    harness: str | None = None,
    role: str | None = None,
    block_type: str | None = None,
    repo: str | None = None,
    since: str | None = None,
    until: str | None = None,
) -> Filters:
    lo, hi = parse_day(since, "--since"), parse_day(until, "--until")
    if lo and hi and lo > hi:
        raise VerbError(f"--since {lo} is after --until {hi}")
    if block_type is not None and block_type not in ("text", "thinking", "tool_use", "tool_result"):
        raise VerbError(f"--type: {block_type!r} is not one of text, thinking, tool_use, tool_result")
    return Filters(
        harness=harness or None,
        role=role or None,
        block_type=block_type or None,
        repo=repo or None,
        since=lo,
        until=hi,
    )


def recall_text(
    memory: Memory,
    query: str,
    *,
    k: int = 8,
    candidates: int = 30,
    neighbors: int = 1,
    harness: str | None = None,
    role: str | None = None,
    block_type: str | None = None,
    repo: str | None = None,
    since: str | None = None,
    until: str | None = None,
    half_life: float | None = None,
    profile: str = "balanced",
    budget: int | None = None,
    level: str | None = None,
    legs: tuple[Leg, ...] = (Leg.VECTOR, Leg.TEXT),
    fusion: str = DEFAULT_FUSION,
    as_json: bool = False,
    now: datetime | None = None,
) -> str:
    """``funes recall``: hybrid search, trigger lines first, packed into a token budget if asked."""
    if budget is not None and level is not None:
        raise VerbError("give --budget or --level, not both")
    if level is not None:
        if level not in LEVELS:
            raise VerbError(f"--level: {level!r} is not one of {', '.join(LEVELS)}")
        budget = LEVELS[level]
    filters = make_filters(
        harness=harness, role=role, block_type=block_type, repo=repo, since=since, until=until
    )
    try:
        params = RecallParams(
            k=k,
            candidates=candidates,
            neighbors=neighbors,
            filters=filters,
            profile=profile,
            half_life=half_life,
            budget=budget,
            legs=legs,
            fusion=fusion,
        )
    except ValueError as exc:
        raise VerbError(str(exc)) from None
    if not " ".join(query.split()):
        raise VerbError("the query is empty: say what to look for")
    store = memory.store()
    embed = memory.embed_query if Leg.VECTOR in legs else None
    result = recall(store, query, params, embed_query=embed, now=now)
    fired = matching(live_triggers(store.scan(Filters(session_id=NOTES_SESSION))), query)
    result = RecallResult(result.query, result.params, result.hits, tuple((t.keyword, t.hint) for t in fired))
    packed = pack_to_budget(result, memory.label, memory.count_tokens) if budget is not None else None
    if as_json:
        if packed is not None:
            return recall_json(result, memory.label, packed.shown, packed.left_out)
        return recall_json(result, memory.label)
    if packed is not None:
        return packed.text
    from funes_core.read.render import render_recall

    return render_recall(result, memory.label)


def triggers_text(memory: Memory, *, as_json: bool = False) -> str:
    """``funes triggers``: the live keyword triggers, newest first."""
    import json

    live = live_triggers(memory.store().scan(Filters(session_id=NOTES_SESSION)))
    if as_json:
        doc = [{"keyword": t.keyword, "hint": t.hint, "set": t.ts} for t in live]
        return json.dumps({"memory": memory.label, "triggers": doc}, ensure_ascii=False, indent=2) + "\n"
    if not live:
        return f"no triggers in {memory.label} — set one with: funes remember KEYWORD --hint TEXT\n"
    lines = [f"[{t.ts}] {t.keyword}: {t.hint}" for t in live]
    return "\n".join(lines) + f"\n---\n{len(live)} trigger(s)\n"


def _read(fn: Callable[[], str]) -> str:
    """Run a read renderer, turning its caller errors into :class:`VerbError`."""
    from funes_core.read.engine import ReadError

    try:
        return fn()
    except ReadError as exc:
        raise VerbError(str(exc)) from None


def get_text(
    memory: Memory, session_id: str, *, from_: int | None = None, to: int | None = None, as_json: bool = False
) -> str:
    """``funes get``: turns of one session, verbatim, splits stitched back."""
    from funes_core.read import render

    fn = render.get_json if as_json else render.render_get
    return _read(lambda: fn(memory.store(), memory.label, session_id, seq_from=from_, seq_to=to))


def sessions_text(
    memory: Memory,
    *,
    repo: str | None = None,
    harness: str | None = None,
    since: str | None = None,
    until: str | None = None,
    limit: int = 50,
    offset: int = 0,
    as_json: bool = False,
) -> str:
    """``funes sessions``: one entry per session, oldest first, with its opening request."""
    from funes_core.read import render

    lo, hi = parse_day(since, "--since"), parse_day(until, "--until")
    fn = render.sessions_json if as_json else render.render_sessions
    return _read(
        lambda: fn(
            memory.store(),
            memory.label,
            repo=repo,
            harness=harness,
            since=lo,
            until=hi,
            limit=limit,
            offset=offset,
        )
    )


def scan_text(
    memory: Memory,
    needle: str,
    session_id: str,
    *,
    from_: int | None = None,
    to: int | None = None,
    ignore_case: bool = False,
    context: int = 100,
    as_json: bool = False,
) -> str:
    """``funes scan``: every literal occurrence of ``needle`` in one session."""
    from funes_core.read import render

    fn = render.scan_json if as_json else render.render_scan
    return _read(
        lambda: fn(
            memory.store(),
            memory.label,
            needle,
            session_id,
            ignore_case=ignore_case,
            context=context,
            seq_from=from_,
            seq_to=to,
        )
    )


def sketch_text(
    memory: Memory,
    session_id: str,
    *,
    units: int = 8,
    max_chars: int = 8000,
    from_: int | None = None,
    to: int | None = None,
    as_json: bool = False,
) -> str:
    """``funes sketch``: the session's most distinctive passages, in reading order."""
    from funes_core.read import render

    fn = render.sketch_json if as_json else render.render_sketch
    return _read(
        lambda: fn(
            memory.store(),
            memory.label,
            session_id,
            units=units,
            max_chars=max_chars,
            seq_from=from_,
            seq_to=to,
        )
    )


def status_text(memory: Memory, *, as_json: bool = False) -> str:
    """``funes status``: health and size of the memory (no update check, ever)."""
    import json

    from funes_core.read.status import collect_status

    report = collect_status(memory.spec, home=memory.home)
    if as_json:
        return json.dumps(report.to_json(), ensure_ascii=False, indent=2) + "\n"
    return report.render()
