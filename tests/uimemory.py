"""Memories for the viewer's tests, built the cheap way: turns written by hand, indexed on the hash
test double (or left owed), never the real model. Shared by test_ui.py and test_ui_browser.py."""

from __future__ import annotations

import json
from pathlib import Path

from funes_core.home import Home
from funes_core.ingest.engine import IndexOptions, IndexReport, run_index
from funes_core.models.embed import HashEmbedder
from funes_core.turns.format import Block, Turn, write_turns_file

#: Each payload would do something if the viewer interpreted it; every one sets ``window.pwned``.
HOSTILE = (
    "<script>window.pwned = 'script'</script>",
    "<img src=x onerror=\"window.pwned = 'onerror'\">",
    "[click me](javascript:window.pwned='link')",
    "![pic](javascript:window.pwned='md-image') ![track](http://127.0.0.1:9/pixel.png)",
    "<a href=\"javascript:window.pwned='anchor'\">anchor</a>",
    '"><svg onload="window.pwned=\'svg\'"></svg>',
    "<iframe src=\"javascript:parent.pwned='iframe'\"></iframe>",
)
XSS_SESSION = "xss-0001"
AGENTS = ("claude", "codex")


def _ts(day: int, minute: int) -> str:
    return f"2026-03-{day:02d}T{9 + minute // 60:02d}:{minute % 60:02d}:00Z"


def session_turns(sid: str, day: int, *, agent: str, n: int = 6, topic: str = "parser") -> list[Turn]:
    """A small session: user asks, assistant thinks + answers + calls a tool, the tool returns."""
    turns = []
    for seq in range(n):
        kind = seq % 3
        if kind == 0:
            role, blocks = (
                "user",
                (Block("text", f"why does the {topic} flush fail in session {sid} step {seq}"),),
            )
        elif kind == 1:
            role = "assistant"
            blocks = (
                Block("thinking", f"the {topic} holds a lock during flush, step {seq}"),
                Block("text", f"the {topic} flush holds the write lock; step {seq}"),
                Block("tool_use", json.dumps({"command": f"pytest -k flush{seq}"}), tool_name="Bash"),
            )
        else:
            role, blocks = "tool", (Block("tool_result", f"{seq} passed, 0 failed\n" * 40, tool_name="Bash"),)
        turns.append(Turn(sid, f"{sid}-u{seq}", seq, _ts(day, seq), role, agent, blocks, cwd=f"/src/{topic}"))
    return turns


def hostile_turns(sid: str = XSS_SESSION) -> list[Turn]:
    body = "\n".join(HOSTILE)
    return [
        Turn(
            sid,
            f"{sid}-u0",
            0,
            _ts(20, 0),
            "user",
            "claude",
            (Block("text", f"xsscheck {body}"),),
            cwd="/src/x",
        ),
        Turn(
            sid,
            f"{sid}-u1",
            1,
            _ts(20, 1),
            "assistant",
            "claude",
            (
                Block("thinking", f"xsscheck thinking {body}"),
                Block("text", "xsscheck my key is export GITHUB_TOKEN=ghp_" + "a1B2c3D4e5" * 4),
                Block("tool_use", json.dumps({"command": HOSTILE[0]}), tool_name="Bash"),
            ),
            cwd="/src/x",
        ),
        Turn(
            sid,
            f"{sid}-u2",
            2,
            _ts(20, 2),
            "tool",
            "claude",
            (Block("tool_result", body, tool_name="Bash"),),
            cwd="/src/x",
        ),
    ]


def write_corpus(
    folder: Path, sessions: int = 12, *, hostile: bool = True, turns: int = 6, prefix: str = "sess"
) -> list[Path]:
    """``sessions`` sessions (``<prefix>-0000``…) over days 1.., alternating agents, plus the hostile one."""
    paths = []
    for i in range(sessions):
        sid = f"{prefix}-{i:04d}"
        topic = "parser" if i % 2 == 0 else "arm build"
        t = session_turns(sid, 1 + i % 18, agent=AGENTS[i % 2], n=turns, topic=topic)
        paths.append(write_turns_file(folder / f"{sid}.funes.jsonl", t))
    if hostile:
        paths.append(write_turns_file(folder / f"{XSS_SESSION}.funes.jsonl", hostile_turns()))
    return paths


def build(home: Home, folder: Path, *, embed: bool = True) -> IndexReport:
    """Index ``folder`` into ``home`` on the hash double; ``embed=False`` leaves every embedding owed."""
    return run_index(
        IndexOptions(path=folder, embed="here" if embed else "none"),
        home=home,
        embedder=HashEmbedder(),
        warn=lambda _m: None,
    )
