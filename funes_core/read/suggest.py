"""``suggest``: keyword triggers worth setting, proposed from what the memory holds (no model).

A good trigger keyword is a name the user will type again and that stands for one thing they
worked on: ``FLUSH_TIMEOUT``, ``ConverterContract``, ``tidepool/ingest.py``, ``--no-verify``,
``TIDE-142``. So ``suggest`` scans the stored text, tool calls and thinking (not tool results,
which are mostly logs and file dumps) for identifiers of five shapes, and ranks each one by how
many sessions it recurs in against how common it is:

    score = (df - 1) × ln(N / df)

where ``N`` is the number of sessions scanned and ``df`` the number of them that mention the
identifier. A name seen in one session only scores 0 (it did not recur); a name in every session
scores 0 too (it distinguishes nothing: a project's own name, say). In between, the score grows
with recurrence and falls as the name gets common; it peaks around ``df = N / e``. Ties go to the
name mentioned more often, then to alphabetical order, so the ranking is deterministic.

Names already live as triggers are left out, and so are the keyword-trigger notes themselves and
the agents' own tool vocabulary (:data:`AGENT_VOCABULARY`: ``old_string``, ``in_progress``, …).
Each suggestion carries the passage it came from (its first mention: when it entered the memory)
with a ``→ get`` line. The hint ``--apply`` pins to an accepted keyword points back there.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

from funes_core.host.transcripts import json_strings
from funes_core.read.common import Param, VerbError, collapse, dump, get_hint, get_ref, session8

if TYPE_CHECKING:
    from funes_core.read.handle import Memory
    from funes_core.store.base import Row, Store

__all__ = [
    "AGENT_VOCABULARY",
    "DEFAULT_LIMIT",
    "EXCERPT",
    "SCANNED_BLOCKS",
    "SHAPES",
    "SuggestArgs",
    "Suggestion",
    "format_suggestions",
    "hint_for",
    "identifiers",
    "run",
    "suggest",
    "suggestions_json",
]

DEFAULT_LIMIT = 10
#: Block types scanned: what was said, thought and called (tool results are mostly dumps).
SCANNED_BLOCKS = ("text", "thinking", "tool_use")
#: Characters of the passage shown around the first mention.
EXCERPT = 160
_MIN_LEN, _MAX_LEN = 4, 80

#: The shapes of identifier proposed, in the order a match is tried.
SHAPES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("ticket", re.compile(r"(?<![\w-])[A-Z][A-Z0-9]{1,9}-\d{1,6}(?![\w-])")),
    ("flag", re.compile(r"(?<![\w-])--[a-z][a-z0-9]*(?:-[a-z0-9]+)*(?![\w-])")),
    ("path", re.compile(r"(?<![\w/.~-])(?:[\w.-]+/)+[\w-][\w.-]*\.[A-Za-z][A-Za-z0-9]{0,5}(?![\w/])")),
    ("CONSTANT", re.compile(r"(?<![\w])[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+(?![\w])")),
    ("snake_case", re.compile(r"(?<![\w])[a-z][a-z0-9]*(?:_[a-z0-9]+)+(?![\w])")),
    ("CamelCase", re.compile(r"(?<![\w])(?:[A-Z][a-z0-9]+){2,}[A-Z]?(?![\w])")),
    ("camelCase", re.compile(r"(?<![\w])[a-z][a-z0-9]+(?:[A-Z][a-z0-9]+)+(?![\w])")),
)


@dataclass(frozen=True, slots=True)
class SuggestArgs:
    """``funes suggest``: how many suggestions to show."""

    limit: Annotated[int, Param("How many suggestions to show.", ("--limit", "-n"), ge=1, le=200)] = (
        DEFAULT_LIMIT
    )


@dataclass(frozen=True, slots=True)
class Suggestion:
    """One proposed keyword, its shape and figures, and the passage of its first mention."""

    keyword: str
    shape: str
    sessions: int
    mentions: int
    score: float
    row: Row


def identifiers(text: str) -> Iterable[tuple[str, str]]:
    """``(identifier, shape)`` for every identifier-shaped word in ``text``, left to right."""
    taken: list[tuple[int, int]] = []
    found: list[tuple[int, str, str]] = []
    for shape, pattern in SHAPES:
        for match in pattern.finditer(text):
            start, end = match.span()
            if any(start < b and a < end for a, b in taken):
                continue  # part of a longer identifier of another shape (a path's file name)
            word = match.group()
            if _MIN_LEN <= len(word) <= _MAX_LEN and not _looks_generated(word):
                taken.append((start, end))
                found.append((start, word, shape))
    for _, word, shape in sorted(found):
        yield word, shape


_HEXISH = re.compile(r"^[0-9a-fA-F_-]{12,}$")

#: Names from the agents' own tool schemas and transcripts (parameters, statuses, record types):
#: every session mentions them through its tool calls, so they say nothing about the user's work.
AGENT_VOCABULARY = frozenset(
    {
        "activeForm",
        "file_path",
        "in_progress",
        "new_string",
        "old_string",
        "replace_all",
        "run_in_background",
        "subagent_type",
        "tool_result",
        "tool_use",
        "tool_use_id",
    }
)


def _looks_generated(word: str) -> bool:
    """Hashes, uuids and the like: nobody types them as a keyword."""
    digits = sum(ch.isdigit() for ch in word)
    return bool(_HEXISH.match(word)) or 2 * digits >= len(word)


def _scannable(row: Row) -> str:
    """The text to look for names in: for a tool call, the values of its input, not its keys.

    A call's input is stored as ``[tool_use Edit] {"file_path": …, "old_string": …}``; the keys
    are the agent's tool schema (``old_string`` is in every edit of every session), the values
    (commands, paths, code) are the user's work.
    """
    if row.block_type != "tool_use":
        return row.text
    _, _, payload = row.text.partition("] ")
    try:
        return "\n".join(json_strings(json.loads(payload)))
    except ValueError:
        return row.text


def suggest(
    store: Store, *, limit: int = DEFAULT_LIMIT, exclude: Iterable[str] = ()
) -> tuple[list[Suggestion], int]:
    """The best ``limit`` suggestions and the number of sessions scanned (see the module docstring)."""
    from funes_core.ingest.notes import NOTE_HARNESS

    skip = {word.casefold() for word in (*exclude, *AGENT_VOCABULARY)}
    sessions_of: dict[str, set[str]] = {}
    mentions: dict[str, int] = {}
    shape_of: dict[str, str] = {}
    first: dict[str, Row] = {}
    scanned: set[str] = set()
    rows = [r for r in store.scan() if r.block_type in SCANNED_BLOCKS and r.harness != NOTE_HARNESS]
    rows.sort(key=lambda r: (r.ts, r.session_id, r.seq, r.block_idx, r.split_idx))
    for row in rows:
        scanned.add(row.session_id)
        for word, shape in identifiers(_scannable(row)):
            if word.casefold() in skip:
                continue
            sessions_of.setdefault(word, set()).add(row.session_id)
            mentions[word] = mentions.get(word, 0) + 1
            shape_of.setdefault(word, shape)
            first.setdefault(word, row)
    total = len(scanned)
    ranked: list[Suggestion] = []
    for word, seen in sessions_of.items():
        df = len(seen)
        if df < 2 or df >= total:
            continue
        score = (df - 1) * math.log(total / df)
        ranked.append(Suggestion(word, shape_of[word], df, mentions[word], score, first[word]))
    ranked.sort(key=lambda s: (-round(s.score, 12), -s.mentions, s.keyword))
    return ranked[:limit], total


def _excerpt(row: Row, keyword: str) -> str:
    text = collapse(row.text)
    at = text.find(keyword)
    if at < 0:
        return text[:EXCERPT]
    start = max(at - EXCERPT // 2, 0)
    end = min(start + EXCERPT, len(text))
    start = max(end - EXCERPT, 0)
    return ("…" if start else "") + text[start:end] + ("…" if end < len(text) else "")


def hint_for(s: Suggestion, label: str) -> str:
    """The hint ``--apply`` pins: how often it recurs and where it first came up, with the get call."""
    return (
        f"in {s.sessions} sessions; first on {s.row.ts[:10]}: {_excerpt(s.row, s.keyword)} "
        f"({get_ref(s.row.session_id, s.row.seq, label)})"
    )


def format_suggestions(found: Sequence[Suggestion], total: int, label: str) -> str:
    """The text of ``funes suggest``: one numbered block per suggestion, best first."""
    if not found:
        return (
            f"no suggestions from {total} sessions in {label}: no identifier recurs in more than one "
            "session without being in all of them\n"
        )
    noun = "trigger" if len(found) == 1 else "triggers"
    lines = [f"{len(found)} keyword {noun} suggested from {total} sessions in {label} (no model involved)"]
    width = len(str(len(found)))
    for number, s in enumerate(found, start=1):
        row = s.row
        where = row.session_id if row.role == "note" else f"{row.workdir or '-'}/{session8(row.session_id)}"
        lines += [
            f"{number:>{width}}. {s.keyword}  {s.shape} · {s.sessions} of {total} sessions · "
            f"{s.mentions} mentions · score {s.score:.2f}",
            f"   first: [{row.ts}] {row.harness} {where} {row.block_type}",
            f"   {_excerpt(row, s.keyword)}",
            f" {get_hint(row.session_id, row.seq, label)}",
        ]
    lines.append(
        "add them with `funes suggest --apply` (asks which), "
        "or one by one with `funes remember KEYWORD --hint TEXT`"
    )
    return "\n".join(lines) + "\n"


def suggestions_json(found: Sequence[Suggestion], total: int, label: str) -> str:
    """``funes suggest --json``."""
    doc: dict[str, Any] = {
        "memory": label,
        "sessions": total,
        "statistic": "(df - 1) * ln(N / df)",
        "suggestions": [
            {
                "keyword": s.keyword,
                "shape": s.shape,
                "sessions": s.sessions,
                "mentions": s.mentions,
                "score": round(s.score, 6),
                "first": {
                    "session_id": s.row.session_id,
                    "seq": s.row.seq,
                    "ts": s.row.ts,
                    "harness": s.row.harness,
                    "excerpt": _excerpt(s.row, s.keyword),
                    "get": get_ref(s.row.session_id, s.row.seq, label),
                },
                "hint": hint_for(s, label),
            }
            for s in found
        ],
    }
    return dump(doc)


def run(memory: Memory, args: SuggestArgs) -> tuple[list[Suggestion], int]:
    """Suggestions for ``memory``; :class:`VerbError` when it holds nothing to suggest from."""
    from funes_core.read.triggers import live

    store = memory.store()
    if store.count() == 0:
        raise VerbError(
            f"{memory.label} is empty: nothing to suggest from; index sessions first "
            "(funes index, or funes integrations install AGENT)"
        )
    return suggest(store, limit=args.limit, exclude=[t.keyword for t in live(store)])
