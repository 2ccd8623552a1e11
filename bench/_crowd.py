"""Distractor sessions for the whole-history benchmarks: a deterministic crowd of other work.

A real memory is a whole history: thousands of sessions, most about something else. The crowd that
``bench/quality.py --bench whole`` mixes into the agent benchmark's 13 sessions is made of two kinds of
session, alternating (code, chat, code, chat, …) so that any prefix of it has the same mix:

- **code**: one session per (commit, file) of this repository's own history up to :data:`CROWD_COMMIT`
  (a commit on main, so every clone has it, and the crowd never changes): the user asks for the
  commit's subject, the assistant reads the file, the tool returns the commit's diff of that file
  (real code and prose, cut at :data:`DIFF_CHARS`), and the assistant says what it did (the commit's
  body). Real coding talk about other things than the benchmark's projects (funes is Python; the
  benchmark's sessions are Elixir and TypeScript), with identifiers, paths, errors and decisions;
- **chat**: a LoCoMo session under a new id (speaker-prefixed utterances, as the LoCoMo benchmark
  indexes them), so its embeddings are the ones that benchmark has already computed.

Every session gets a new id (``crowd-00042``) and a start time spread over the 400 days before the
benchmark's "now" (a hash of the id decides it), turns 40 s apart. Nothing in the crowd is an answer:
no turn of it is copied from the benchmark's sessions.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
from collections.abc import Iterator, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from _common import ROOT, TextOptions, sessions_of, turn_text

from funes_core.turns.format import Block, Turn

#: The crowd's code sessions come from this repository's history up to this commit (main, 2026-12-03).
CROWD_COMMIT = "aab1fa25636c9b0aeecb33bb6c617de578670c56"
#: A diff longer than this is cut (a tool result of about two chunks).
DIFF_CHARS = 2000
#: Files whose diffs are data, not talk (lock files, recorded snapshots).
_SKIP = re.compile(r"(uv\.lock|\.json|\.jsonl|\.svg|\.png)$")
SPREAD_DAYS = 400


def _git(*args: str, repo: Path = ROOT) -> str:
    try:
        out = subprocess.run(
            ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True, errors="replace"
        )
    except (OSError, subprocess.CalledProcessError) as exc:
        raise SystemExit(
            f"the crowd is made from this repository's git history ({CROWD_COMMIT[:7]}): {exc}"
        ) from None
    return out.stdout


def commit_work(limit: int, repo: Path = ROOT, commit: str = CROWD_COMMIT) -> list[dict[str, str]]:
    """Up to ``limit`` (commit, file) pieces of work, oldest commit first: subject, body, path, diff."""
    out: list[dict[str, str]] = []
    for sha in _git("rev-list", "--reverse", commit, repo=repo).split():
        message = _git("show", "-s", "--format=%s%x00%b", sha, repo=repo)
        subject, _, body = message.partition("\x00")
        files = [f for f in _git("show", "--format=", "--name-only", sha, repo=repo).splitlines() if f]
        for path in files:
            if _SKIP.search(path):
                continue
            diff = _git("show", "--format=", "--unified=2", sha, "--", path, repo=repo)
            if not diff.strip():
                continue
            out.append({"subject": subject.strip(), "body": body.strip(), "path": path, "diff": diff})
            if len(out) >= limit:
                return out
    return out


def _start(sid: str, now: datetime) -> datetime:
    digest = hashlib.sha1(sid.encode(), usedforsecurity=False).digest()
    days = 1 + int.from_bytes(digest[:4], "big") % SPREAD_DAYS
    seconds = int.from_bytes(digest[4:8], "big") % 86400
    return now - timedelta(days=days, seconds=seconds)


def _turns(sid: str, now: datetime, parts: Sequence[tuple[str, Block]]) -> list[Turn]:
    start = _start(sid, now)
    turns: list[Turn] = []
    for seq, (role, block) in enumerate(parts):
        turns.append(
            Turn(
                session_id=sid,
                turn_uuid=f"{sid}-t{seq:03d}",
                seq=seq,
                ts=(start + timedelta(seconds=40 * seq)).strftime("%Y-%m-%dT%H:%M:%SZ"),
                role=role,
                harness="claude",
                blocks=(block,),
                parent_uuid=turns[-1].turn_uuid if turns else None,
            )
        )
    return turns


def code_session(sid: str, now: datetime, work: dict[str, str]) -> list[Turn]:
    diff = work["diff"]
    if len(diff) > DIFF_CHARS:
        diff = diff[:DIFF_CHARS] + "\n[…]"
    said = work["body"] or f"Done: {work['subject']}."
    parts = [
        ("user", Block("text", work["subject"])),
        ("assistant", Block("tool_use", f'{{"file_path": "{work["path"]}"}}', tool_name="Read")),
        ("tool", Block("tool_result", diff, tool_name="Read")),
        ("assistant", Block("text", said)),
    ]
    return _turns(sid, now, parts)


def chat_session(sid: str, now: datetime, utterances: Sequence[dict[str, Any]], date_text: str) -> list[Turn]:
    opts = TextOptions()
    first = str(utterances[0].get("speaker", ""))
    parts = [
        (
            "user" if str(u.get("speaker", "")) == first else "assistant",
            Block("text", turn_text(u, date_text, opts)),
        )
        for u in utterances
        if str(u.get("text", "")).strip()
    ]
    return _turns(sid, now, parts)


def _chats(locomo: Sequence[dict[str, Any]]) -> Iterator[tuple[list[dict[str, Any]], str]]:
    pool = [(utts, date_text) for sample in locomo for _n, date_text, utts in sessions_of(sample)]
    while True:  # LoCoMo has 272 sessions: a crowd larger than that reuses them under other ids
        yield from pool


def crowd(n: int, now: datetime, locomo: Sequence[dict[str, Any]], repo: Path = ROOT) -> list[list[Turn]]:
    """``n`` distractor sessions, code and chat alternating (chat only once the history runs out)."""
    work = iter(commit_work((n + 1) // 2, repo))
    chats = _chats(locomo)
    out: list[list[Turn]] = []
    for i in range(n):
        sid = f"crowd-{i:05d}"
        piece = next(work, None) if i % 2 == 0 else None
        if piece is not None:
            out.append(code_session(sid, now, piece))
        else:
            utterances, date_text = next(chats)
            out.append(chat_session(sid, now, utterances, date_text))
    return out
