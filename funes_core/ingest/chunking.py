"""From turns to chunks: render, elide, redact, split, tier and name. Pure functions, no I/O.

Every step is deterministic so the same turns always yield the same rows (no LLM in the ingest
path). Lengths are counted in Unicode code points, which is what Python's ``str`` indexes, so a
split can never cut a multi-byte character in half.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import IntEnum
from typing import TYPE_CHECKING

from funes_core.safetext import one_line
from funes_core.turns.format import Block, Turn

if TYPE_CHECKING:
    from funes_core.models.vectors import Vector
    from funes_core.store.base import Row

__all__ = [
    "MAX_BLOCK_CHARS",
    "MAX_CHARS",
    "OVERLAP",
    "Chunk",
    "Redactor",
    "Tier",
    "cap_block",
    "chunk_id",
    "chunk_turn",
    "elide_base64",
    "render_block",
    "split_text",
    "stitch",
    "tier_of",
]

#: Longest chunk, in code points. Small enough for the embedding model's context, large enough
#: that a typical message is one chunk.
MAX_CHARS = 1200
#: Characters repeated at the start of the next piece, so a phrase cut by a split is still whole
#: in one of the two pieces.
OVERLAP = 150
#: The most text one block stores (after base64 elision): a 30 MB tool output would otherwise
#: become 28,000 chunks and a gigabyte of memory. The head and the tail are kept (an error usually
#: ends a long output), with a marker in between saying how much was left out.
MAX_BLOCK_CHARS = 200_000
_BLOCK_HEAD = 150_000
_BLOCK_TAIL = MAX_BLOCK_CHARS - _BLOCK_HEAD
#: A newline (or space) is used as the split point only past this far into the window.
_MIN_BREAK = MAX_CHARS // 2

#: A redactor takes text and returns the redacted text and a count of redactions per kind.
Redactor = Callable[[str], tuple[str, Counter[str]]]


class Tier(IntEnum):
    """Indexing tiers, cheapest and most useful first: a budgeted run stores tier 1 before tier 3."""

    TEXT = 1
    TOOL_USE = 2
    TOOL_RESULT = 3


def tier_of(block_type: str) -> Tier:
    """The tier of a block type. Tiers key on block type, never on role."""
    if block_type == "tool_use":
        return Tier.TOOL_USE
    if block_type == "tool_result":
        return Tier.TOOL_RESULT
    return Tier.TEXT


def chunk_id(session_id: str, turn_uuid: str, block_idx: int, split_idx: int) -> str:
    """First 16 hex digits of sha1(``session_id:turn_uuid:block_idx:split_idx``).

    The text is deliberately not an input: a re-emitted turn keeps its ids and is deduplicated,
    and an edited turn must come as a new turn (append-only).
    """
    key = f"{session_id}:{turn_uuid}:{block_idx}:{split_idx}"
    return hashlib.sha1(key.encode("utf-8"), usedforsecurity=False).hexdigest()[:16]


def render_block(block: Block) -> str:
    """The text that is stored and embedded for a block.

    The tool name is escaped onto one line: it heads the passage, where a newline in it could
    forge the lines that follow.
    """
    if block.block_type == "tool_use":
        name = None if block.tool_name is None else one_line(block.tool_name)
        return f"[tool_use {name}] {block.text}".strip()
    if block.block_type == "tool_result":
        head = f"[tool_result {one_line(block.tool_name)}]" if block.tool_name else "[tool_result]"
        return f"{head} {block.text}".strip()
    return block.text


def _stores(block: Block, include_thinking: bool) -> bool:
    """Whether ``block`` yields a chunk at its tier (it is not blank and not a skipped thinking block)."""
    return bool(render_block(block).strip()) and (include_thinking or block.block_type != "thinking")


# `data:<media>;base64,<payload>`, not glued to a preceding identifier-ish character (so
# `metadata:image/png;base64,...` stays), media type without whitespace, commas or quotes.
_DATA_URI = re.compile(r"(?<![A-Za-z0-9+\-.])(data:[^\s,\"';]+;base64,)[A-Za-z0-9+/=]+")


def elide_base64(text: str) -> str:
    """Replace every base64 ``data:`` payload with ``[elided]``; it is noise to search and costly to embed."""
    return _DATA_URI.sub(r"\1[elided]", text)


def cap_block(text: str) -> str:
    """``text`` cut to :data:`MAX_BLOCK_CHARS`: its head and tail around a marker naming what was left out."""
    if len(text) <= MAX_BLOCK_CHARS:
        return text
    left_out = len(text) - MAX_BLOCK_CHARS
    marker = (
        f"\n[… funes left out {left_out:,} characters of this block: a block keeps {MAX_BLOCK_CHARS:,} …]\n"
    )
    return text[:_BLOCK_HEAD] + marker + text[-_BLOCK_TAIL:]


def split_text(text: str) -> list[str]:
    """Split a rendered block into pieces of at most :data:`MAX_CHARS` code points.

    Pieces overlap by up to :data:`OVERLAP` characters; a piece ends at the last newline past the
    middle of its window, else at the last space past the middle, else hard at the limit.
    """
    text = text.strip()
    if not text:
        return []
    n = len(text)
    if n <= MAX_CHARS:
        return [text]
    pieces: list[str] = []
    start = 0
    while True:
        end = min(start + MAX_CHARS, n)
        if end < n:
            brk = text.rfind("\n", start, end)
            if brk <= start + _MIN_BREAK:
                brk = text.rfind(" ", start, end)
            if brk > start + _MIN_BREAK:
                end = brk
        piece = text[start:end].strip()
        if piece:
            pieces.append(piece)
        if end >= n:
            return pieces
        start = max(end - OVERLAP, start + 1)


def stitch(a: str, b: str) -> str:
    """Join two consecutive pieces of one block, dropping their shared overlap once."""
    for k in range(min(OVERLAP, len(a), len(b)), 0, -1):
        if a.endswith(b[:k]):
            return a + b[k:]
    return a + b


@dataclass(frozen=True, slots=True)
class Chunk:
    """One piece of one block of one turn: the unit that is stored, embedded and recalled."""

    id: str
    text: str
    session_id: str
    turn_uuid: str
    parent_uuid: str | None
    seq: int
    ts: str
    role: str
    harness: str
    cwd: str | None
    block_idx: int
    split_idx: int
    block_type: str
    tool_name: str | None
    taint: str

    @property
    def tier(self) -> Tier:
        return tier_of(self.block_type)

    def to_row(
        self,
        *,
        workdir: str = "",
        repo: str = "",
        source_path: str = "",
        vector: Vector | None = None,
    ) -> Row:
        """The row that stores this chunk, with the facets only the indexer knows."""
        # Lazy: the store pulls in numpy, and the CLI's read verbs import this module at start.
        from funes_core.store.base import Row

        return Row(
            id=self.id,
            text=self.text,
            session_id=self.session_id,
            turn_uuid=self.turn_uuid,
            seq=self.seq,
            ts=self.ts,
            role=self.role,
            harness=self.harness,
            block_type=self.block_type,
            block_idx=self.block_idx,
            split_idx=self.split_idx,
            workdir=workdir,
            repo=repo,
            parent_uuid=self.parent_uuid,
            tool_name=self.tool_name,
            source_path=source_path,
            taint=self.taint,
            vector=vector,
        )


@functools.lru_cache(maxsize=4096)
def _redacted_field(redactor: Redactor, value: str) -> tuple[str, tuple[tuple[str, int], ...]]:
    found = redactor(value)
    return found[0], tuple(found[1].items())


def redact_field(redactor: Redactor, value: str) -> tuple[str, Counter[str]]:
    """``redactor(value)`` for a short field that repeats from turn to turn (a role, a ``cwd``, a
    tool name), remembered: the redactor is pure, and it costs about as much for ``"user"`` as
    for a paragraph (each of its rules looks at the text), so on a first index these fields were
    two thirds of its calls and a third of the whole run's time."""
    if len(value) > 512:
        return redactor(value)
    text, counts = _redacted_field(redactor, value)
    return text, Counter(dict(counts))


def chunk_turn(
    turn: Turn,
    *,
    tiers: Iterable[Tier] = tuple(Tier),
    include_thinking: bool = True,
    redactor: Redactor | None = None,
) -> tuple[list[Chunk], Counter[str]]:
    """Chunk one turn's blocks of the requested tiers.

    ``block_idx`` counts every block of the turn, including those skipped here, so skipping a
    tier or thinking now never renumbers what a later run stores. Secrets are redacted before the
    block is capped (:func:`cap_block`) and split, so a secret can never straddle a cut and escape
    the detector.
    Returns the chunks and the number of redactions per kind.
    """
    wanted = set(tiers)
    counts: Counter[str] = Counter()
    out: list[Chunk] = []
    role, cwd = turn.role, turn.cwd
    if redactor is not None:
        # Every stored free-text field is redacted, not only the passage: ``cwd`` becomes the
        # ``workdir`` facet (where a token would survive as ``ghp-…``, matching no rule) and ``role``
        # is printed. Counted once per turn: by the call that stores its first block.
        role, found_role = redact_field(redactor, role)
        if cwd is not None:
            cwd, found_cwd = redact_field(redactor, cwd)
            found_role.update(found_cwd)
        first = next((i for i, b in enumerate(turn.blocks) if _stores(b, include_thinking)), None)
        if first is not None and tier_of(turn.blocks[first].block_type) in wanted:
            counts.update(found_role)
    for block_idx, block in enumerate(turn.blocks):
        if tier_of(block.block_type) not in wanted:
            continue
        if block.block_type == "thinking" and not include_thinking:
            continue
        text = elide_base64(render_block(block))
        tool_name = block.tool_name
        if redactor is not None:
            text, found = redactor(text)
            counts.update(found)  # the rendered text holds the tool name: its secrets count here
            if tool_name is not None:
                tool_name = redact_field(redactor, tool_name)[0]
        # Capped after redaction: a cut must never leave half a secret that no rule recognises.
        for split_idx, piece in enumerate(split_text(cap_block(text))):
            out.append(
                Chunk(
                    id=chunk_id(turn.session_id, turn.turn_uuid, block_idx, split_idx),
                    text=piece,
                    session_id=turn.session_id,
                    turn_uuid=turn.turn_uuid,
                    parent_uuid=turn.parent_uuid,
                    seq=turn.seq,
                    ts=turn.ts,
                    role=role,
                    harness=turn.harness,
                    cwd=cwd,
                    block_idx=block_idx,
                    split_idx=split_idx,
                    block_type=block.block_type,
                    tool_name=tool_name,
                    taint=turn.taint,
                )
            )
    return out, counts
