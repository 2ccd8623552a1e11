"""``funes export``: the memory back to turns files, one per session.

Agents delete their transcripts (Claude Code after 30 days by default), so the memory is often
the only copy of what was said; without a way to get it out as data, a user could not back it up,
move it, or check it. The export writes the open turns format (``turns/turns.schema.json``), and
``funes index OUT`` into a fresh ``$FUNES_HOME`` stores the same chunk ids with the same texts:

- a turn is rebuilt from its rows (session, turn, seq, time, role, agent, workdir, parent, taint);
  each block from its pieces, stitched where the splitter overlapped them, with the
  ``[tool_use NAME]`` head the indexer put on tool blocks taken off again;
- ``block_idx`` counts every block of a turn, including those that stored nothing (blank, or
  removed by a purge), and chunk ids hash it: a gap is filled with an empty text block, which
  stores nothing and keeps the numbering;
- what the memory holds is what is exported: redacted secrets stay redacted, a capped block stays
  capped, embeddings are not exported (``funes index`` computes them again).

Byte-stable: turns sorted by ``seq`` then id, blocks by index, keys in the format's order, one
file per session named by its id (or, when the id cannot be a file name, by its hash). Every line
is checked against the schema before anything is written; OUT must be empty (or absent) and
outside ``$FUNES_HOME``.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from funes_core.ingest.chunking import stitch
from funes_core.safetext import one_line
from funes_core.turns.format import Block, Turn

if TYPE_CHECKING:
    from funes_core.home import Home
    from funes_core.store.base import Filters, Row

__all__ = ["ExportError", "ExportReport", "export_memory", "turns_from_rows"]


class ExportError(ValueError):
    """Export refused (OUT not empty or inside ``$FUNES_HOME``, unknown session); one line."""


@dataclass(slots=True)
class ExportReport:
    files: int = 0
    turns: int = 0
    rows: int = 0
    out: str = ""


def _block_text(block_type: str, tool_name: str | None, text: str) -> str:
    """The block's own text: the stored text without the head :func:`render_block` gave it."""
    if block_type not in ("tool_use", "tool_result"):
        return text
    heads = []
    if tool_name is not None:
        heads.append(f"[{block_type} {one_line(tool_name)}]")
    if block_type == "tool_result" and tool_name is None:
        heads.append("[tool_result]")
    if block_type == "tool_use" and tool_name is None:
        heads.append("[tool_use None]")
    for head in heads:
        if text == head:
            return ""
        if text.startswith(head + " "):
            return text[len(head) + 1 :]
    return text


def turns_from_rows(rows: Iterable[Row]) -> list[Turn]:
    """Rebuild the turns ``rows`` came from (see the module notes), sorted by session, seq, id."""
    by_turn: dict[tuple[str, str], list[Row]] = defaultdict(list)
    for row in rows:
        by_turn[(row.session_id, row.turn_uuid)].append(row)
    turns: list[Turn] = []
    for (session_id, turn_uuid), parts in by_turn.items():
        first = min(parts, key=lambda r: (r.block_idx, r.split_idx))
        blocks: dict[int, list[Row]] = defaultdict(list)
        for row in parts:
            blocks[row.block_idx].append(row)
        out_blocks: list[Block] = []
        for idx in range(max(blocks) + 1):
            pieces = sorted(blocks.get(idx, []), key=lambda r: r.split_idx)
            if not pieces:
                out_blocks.append(Block("text", ""))
                continue
            text = ""
            for piece in pieces:
                text = stitch(text, piece.text) if text else piece.text
            head = pieces[0]
            out_blocks.append(
                Block(head.block_type, _block_text(head.block_type, head.tool_name, text), head.tool_name)
            )
        turns.append(
            Turn(
                session_id=session_id,
                turn_uuid=turn_uuid,
                seq=first.seq,
                ts=first.ts,
                role=first.role,
                harness=first.harness,
                blocks=tuple(out_blocks),
                cwd=first.workdir or None,
                parent_uuid=first.parent_uuid,
                taint=first.taint,
                format=2 if first.taint != "internal" else 1,
            )
        )
    turns.sort(key=lambda t: (t.session_id, t.seq, t.turn_uuid))
    return turns


def _file_name(session_id: str) -> str:
    from funes_core.turns.format import is_safe_id

    safe = is_safe_id(session_id) and len(session_id) <= 120 and not session_id.startswith(".")
    stem = session_id if safe else "session-" + hashlib.sha1(session_id.encode()).hexdigest()[:16]
    return f"{stem}.funes.jsonl"


def _check_out(out: Path, home: Home) -> Path:
    target = out.expanduser().resolve()
    root = home.root.resolve()
    if target == root or root in target.parents:
        raise ExportError(f"{out} is inside $FUNES_HOME ({home.root}); export somewhere else")
    if target.exists() and not target.is_dir():
        raise ExportError(f"{out} is a file; export needs an empty folder")
    if target.is_dir() and any(target.iterdir()):
        raise ExportError(f"{out} is not empty; export needs an empty folder (nothing was written)")
    return target


def export_memory(
    home: Home,
    out: Path,
    *,
    memory: str | None = None,
    sessions: Sequence[str] = (),
    filters: Filters | None = None,
) -> ExportReport:
    """Write the memory (or the sessions named, within ``filters``) to ``out`` as turns files."""
    from funes_core.files import atomic_write_text
    from funes_core.home import ensure_private_dir
    from funes_core.share.memory import open_memory
    from funes_core.turns.format import parse_line, turns_to_jsonl

    target = _check_out(out, home)
    store = open_memory(memory, home=home)
    rows = store.scan(filters)
    if sessions:
        wanted = set(sessions)
        present = {r.session_id for r in rows}
        missing = [s for s in dict.fromkeys(sessions) if s not in present]
        if missing:
            raise ExportError(f"no session {one_line(missing[0])} in {store.label}; nothing was written")
        rows = [r for r in rows if r.session_id in wanted]
    turns = turns_from_rows(rows)
    by_session: dict[str, list[Turn]] = defaultdict(list)
    for turn in turns:
        by_session[turn.session_id].append(turn)
    bodies: dict[str, str] = {}
    for session_id, items in by_session.items():
        body = turns_to_jsonl(items)
        for number, line in enumerate(body.splitlines(), 1):
            parse_line(line, path=_file_name(session_id), line=number)  # the schema, before any write
        name = _file_name(session_id)
        if name in bodies:  # two ids that hash alike: never overwrite one with the other
            name = name.replace(".funes.jsonl", f"-{len(bodies)}.funes.jsonl")
        bodies[name] = body
    ensure_private_dir(target)
    for name in sorted(bodies):
        atomic_write_text(target / name, bodies[name])
    return ExportReport(files=len(bodies), turns=len(turns), rows=len(rows), out=str(target))
