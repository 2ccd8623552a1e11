"""Converts aider's chat histories (``.aider.chat.history.md``, in the repository aider ran in) into turns.

aider appends everything it shows to one markdown file per repository (its git root, else the
folder it started in; ``--chat-history-file`` / ``AIDER_CHAT_HISTORY_FILE`` move it):

    # aider chat started at 2026-12-03 14:21:28      <- a session starts (local time, no offset)

    > Aider v0.86.2                                   <- aider's own notices: "> " ... "  "
    > Model: openai/fake-model with whole edit format

    #### why does the CSV parser drop quoted commas?  <- what the user typed: "#### " ... "  "

    The parser resets in_quotes at every comma.      <- the model's answer, verbatim

    > Tokens: 10 sent, 5 received.

The mapping:

* a session is the text between two ``# aider chat started at`` headers; its ``session_id`` is
  ``aider-<folder>-<start>`` (the history file's folder name and the header's wall-clock time,
  ``YYYYMMDDTHHMMSS``; a second header with the same time in one file gets ``-2``, …): aider has
  no session id of its own, and both are what the file says;
* each run of lines of one kind is a turn: ``####`` lines are the ``user``'s (one turn per input,
  lines joined by newlines), ``>`` notices are aider's own (``system``), anything else is the
  model's answer (``assistant``), blank lines inside it kept. A notice or input line is one that
  also ends with aider's markdown line break (two spaces), so a quote in an answer stays in the
  answer (aider prefixes only the first line of a notice of several lines: the lines up to the
  one ending with the break belong to it, when it follows another notice);
* ``ts`` is the session's start for every turn (aider writes no other time), read as the
  machine's **local** time (``Capabilities(local_time=True)``);
* ``cwd`` is the history file's folder, which is where aider ran;
* ``turn_uuid`` is ``<session_id>-<seq>``: aider only appends, so a turn keeps its place;
* the file's **last** run of lines is not a turn yet: aider may still be appending to it (the
  lines of a notice arrive one by one, an answer may be half written). It becomes one as soon as
  anything follows it: the next input, a notice, or the next session's header. aider ends every
  answer with a notice (``> Tokens: …``), so only that notice waits;
* a line that is not UTF-8 is skipped (aider writes UTF-8 and drops what it cannot encode).

Standard library and the core's helpers only.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from funes_aider.agent import AGENT, HISTORY_NAME
from funes_core import Block, Converter, SessionRef, Turn, is_blank, parse_ts, safe_id

__all__ = ["AiderConverter", "Session", "parse_history"]

_HEADER = re.compile(r"^# aider chat started at (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\s*$")
#: aider's markdown line break, at the end of every input and notice line.
_BREAK = "  "
#: Folders a search for history files never enters (they hold no repository of the user's).
_PRUNED = frozenset({"node_modules", "__pycache__", "site-packages", ".git", ".venv", "venv", ".tox"})


@dataclass(frozen=True, slots=True)
class Session:
    """One ``# aider chat started at`` section: its id, start time as written, and its runs of lines."""

    session_id: str
    started: str
    runs: tuple[tuple[str, str], ...]  # (role, text), the file's last run left out when unfinished


def _kind(line: str) -> str:
    if line.startswith("####") and line.endswith(_BREAK):
        return "user"
    if line.startswith(">") and line.endswith(_BREAK):
        return "system"
    return "assistant"


def _content(kind: str, line: str) -> str:
    if kind == "user":
        return line[4:].removeprefix(" ").removesuffix(_BREAK)
    if kind == "system":
        return line[1:].removeprefix(" ").removesuffix(_BREAK)
    return line


def _lines(path: Path) -> list[str]:
    """The file's readable lines (a line that is not UTF-8 is left out); ``[]`` if unreadable."""
    try:
        data = path.read_bytes()
    except OSError:
        return []
    out: list[str] = []
    for raw in data.split(b"\n"):
        try:
            out.append(raw.decode("utf-8").removesuffix("\r"))
        except UnicodeDecodeError:
            continue
    return out


def parse_history(path: Path) -> list[Session]:
    """The sessions of one history file, in order (see the module docstring)."""
    lines = _lines(path)
    folder = path.parent.name or "root"
    sections: list[tuple[str, list[str]]] = []
    for line in lines:
        found = _HEADER.match(line)
        if found:
            sections.append((found.group(1), []))
        elif sections:
            sections[-1][1].append(line)
    sessions: list[Session] = []
    seen: dict[str, int] = {}
    for number, (started, body) in enumerate(sections):
        runs: list[tuple[str, list[str]]] = []
        gap = False
        open_notice = False  # inside a notice of several lines: raw lines until one ends with a break
        for line in body:
            if open_notice:
                runs[-1][1].append(line.removesuffix(_BREAK))
                open_notice = not line.endswith(_BREAK)
                continue
            follows_notice = runs and runs[-1][0] == "system" and not gap
            if follows_notice and line.startswith(">") and not line.endswith(_BREAK):
                # A notice of several lines goes on (aider prefixes only its first line).
                runs[-1][1].append(line[1:].removeprefix(" "))
                open_notice = True
                continue
            if not line.strip():
                gap = True
                if runs and runs[-1][0] == "assistant":
                    runs[-1][1].append(line)  # a paragraph break inside an answer
                continue
            kind = _kind(line)
            # An answer goes on across blank lines; an input or a notice ends at one.
            if runs and runs[-1][0] == kind and (kind == "assistant" or not gap):
                runs[-1][1].append(_content(kind, line))
            else:
                runs.append((kind, [_content(kind, line)]))
            gap = False
        if number == len(sections) - 1 and runs:
            runs.pop()  # the file's last run may still be growing
        stamp = started.replace("-", "").replace(":", "").replace(" ", "T")
        base = f"aider-{folder}-{stamp}"
        seen[base] = seen.get(base, 0) + 1
        session_id = safe_id(base if seen[base] == 1 else f"{base}-{seen[base]}")
        texts = tuple((kind, "\n".join(part).strip("\n")) for kind, part in runs)
        sessions.append(Session(session_id, started, texts))
    return sessions


def _is_history(path: Path) -> bool:
    """Whether a file starts like an aider history (its first non-blank line is a session header)."""
    try:
        with path.open("rb") as fh:
            head = fh.read(4096)
    except OSError:
        return False
    for raw in head.split(b"\n"):
        if raw.strip():
            return _HEADER.match(raw.decode("utf-8", "replace").rstrip("\r")) is not None
    return False


def history_files(path: Path) -> list[Path]:
    """``path`` itself when it is an aider history, else every ``.aider.chat.history.md`` under it."""
    if path.is_file():
        return [path] if _is_history(path) else []
    found: list[Path] = []
    for root, dirs, files in os.walk(path):
        dirs[:] = sorted(d for d in dirs if d not in _PRUNED)
        if HISTORY_NAME in files:
            candidate = Path(root) / HISTORY_NAME
            if _is_history(candidate):
                found.append(candidate)
    return sorted(found)


class AiderConverter(Converter, agent=AGENT):
    """Finds aider's history files under a registered path and converts their sessions (module docstring)."""

    contract_fixtures = "funes_aider.contract_fixtures"

    def session_roots(self, home: Path) -> list[Path]:
        # Histories live in each repository, not under the HOME: users register them with --path.
        return []

    def retention(self, home: Path) -> str:
        return "aider never deletes its chat histories (only you do, or a fresh clone has none)"

    def sessions_in(self, path: Path) -> list[SessionRef]:
        refs: list[SessionRef] = []
        for candidate in history_files(path):
            try:
                mtime = candidate.stat().st_mtime
            except OSError:
                continue
            sessions = parse_history(candidate)
            refs.extend(SessionRef(s.session_id, candidate, mtime) for s in sessions if s.runs)
        return refs

    def convert(self, ref: SessionRef) -> list[Turn]:
        session = next((s for s in parse_history(ref.path) if s.session_id == ref.session_id), None)
        if session is None:
            return []
        ts = parse_ts(session.started, naive="local") or "1970-01-01T00:00:00Z"
        cwd = str(ref.path.parent)
        turns: list[Turn] = []
        for role, text in session.runs:
            if is_blank(text):
                continue
            turns.append(
                Turn(
                    session_id=session.session_id,
                    turn_uuid=safe_id(f"{session.session_id}-{len(turns)}"),
                    seq=len(turns),
                    ts=ts,
                    role=role,
                    harness=self.id,
                    blocks=(Block(block_type="text", text=text),),
                    cwd=cwd,
                )
            )
        return turns
