"""Golden tests of the read verbs (get, sessions, scan, sketch): every text form byte for byte,
and the keys of every ``--json`` form. Rows are made by the real chunker, so splits are real."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pytest

from funes_core.ingest.chunking import chunk_turn
from funes_core.models.vectors import Vector
from funes_core.read import get, scan, sessions, sketch
from funes_core.read.common import VerbError
from funes_core.read.get import GetArgs
from funes_core.read.scan import ScanArgs, debug_quote, find_literal
from funes_core.read.sessions import SessionsArgs
from funes_core.read.sketch import SketchArgs
from funes_core.store.base import Row
from funes_core.store.reference import MemoryStore
from funes_core.turns.format import Block, Turn

LABEL = "local"
CLOSING = (
    "a sketch samples: it shows what it selected, so it cannot show that anything is absent"
    " — scan a literal for that"
)

# -- fixtures ----------------------------------------------------------------------------------------


def turn(
    seq: int,
    role: str,
    *blocks: Block,
    sid: str = "s1",
    ts: str | None = None,
    harness: str = "claude",
) -> Turn:
    return Turn(
        session_id=sid,
        turn_uuid=f"{sid}-t{seq}",
        seq=seq,
        ts=ts or f"2026-03-02T09:{seq // 60:02d}:{seq % 60:02d}Z",
        role=role,
        harness=harness,
        blocks=blocks,
    )


def text(body: str) -> Block:
    return Block("text", body)


def rows_of(
    turns: Iterable[Turn],
    *,
    workdir: str = "-home-dev-tidepool",
    repo: str = "",
    vectors: Mapping[tuple[int, int], Sequence[float]] | None = None,
) -> list[Row]:
    """Rows as indexing stores them; ``vectors`` maps (seq, block_idx) to every split's vector."""
    out: list[Row] = []
    for t in turns:
        chunks, _ = chunk_turn(t)
        for c in chunks:
            vec: Vector | None = None
            if vectors is not None and (c.seq, c.block_idx) in vectors:
                raw = np.asarray(vectors[(c.seq, c.block_idx)], dtype=np.float32)
                vec = raw / np.linalg.norm(raw)
            out.append(c.to_row(workdir=workdir, repo=repo, vector=vec))
    return out


def store_of(*groups: list[Row]) -> MemoryStore:
    store = MemoryStore(LABEL)
    for rows in groups:
        store.add(rows)
    return store


def long_text(words: int, tag: str) -> str:
    """Text long enough to be split (newlines every 12 words, so splits end on lines)."""
    parts = [f"{tag}{i}" for i in range(words)]
    return "\n".join(" ".join(parts[i : i + 12]) for i in range(0, words, 12))


SMALL = [
    turn(0, "user", text("Why does the   flush\ntest fail on ARM?")),
    turn(
        1,
        "assistant",
        Block("thinking", "Probably a timeout."),
        text("Let me run it."),
        Block("tool_use", '{"command": "pytest -k flush"}', tool_name="Bash"),
    ),
    turn(2, "tool", Block("tool_result", "1 failed: database is locked", tool_name="Bash")),
]


# -- get ---------------------------------------------------------------------------------------------


def test_get_whole_short_session() -> None:
    store = store_of(rows_of(SMALL))
    assert (
        get.text(store, LABEL, GetArgs("s1"))
        == """\
[2026-03-02T09:00:00Z] user seq0 turn=s1-t0
Why does the   flush
test fail on ARM?
---
[2026-03-02T09:00:01Z] assistant seq1 turn=s1-t1
Probably a timeout.

Let me run it.

[tool_use Bash] {"command": "pytest -k flush"}
---
[2026-03-02T09:00:02Z] tool seq2 turn=s1-t2
[tool_result Bash] 1 failed: database is locked
---
turns 0-2 of 3
"""
    )


def test_get_window() -> None:
    store = store_of(rows_of(SMALL))
    assert (
        get.text(store, LABEL, GetArgs("s1", from_=2))
        == """\
[2026-03-02T09:00:02Z] tool seq2 turn=s1-t2
[tool_result Bash] 1 failed: database is locked
---
turns 2-2 of 3
"""
    )
    assert get.text(store, LABEL, GetArgs("s1", from_=1, to=1)).endswith("---\nturns 1-1 of 3\n")


def test_get_default_span_is_twenty_seqs() -> None:
    store = store_of(rows_of(turn(i, "user", text(f"msg {i}")) for i in range(30)))
    assert get.text(store, LABEL, GetArgs("s1")).endswith("msg 19\n---\nturns 0-19 of 30\n")
    assert get.text(store, LABEL, GetArgs("s1", from_=25)).endswith("msg 29\n---\nturns 25-29 of 30\n")


def test_get_stitches_splits_back() -> None:
    body = long_text(600, "w")
    rows = rows_of([turn(0, "user", text(body), text("after"))])
    assert sum(1 for r in rows if r.block_idx == 0) > 2  # really split
    store = store_of(list(reversed(rows)))  # store order must not matter
    assert get.text(store, LABEL, GetArgs("s1")) == (
        f"[2026-03-02T09:00:00Z] user seq0 turn=s1-t0\n{body}\n\nafter\n---\nturns 0-0 of 1\n"
    )


def test_get_missing_split_shows_a_gap_and_duplicates_read_once() -> None:
    body = long_text(500, "g")
    rows = rows_of([turn(0, "user", text(body))])
    assert [r.split_idx for r in rows] == [0, 1, 2]
    # split 1 lost (as a scrub can do), split 0 stored twice: the gap is shown, never glued over,
    # and the duplicate is read once
    store = store_of([rows[0], rows[2], dataclasses.replace(rows[0], id="dup")])
    assert get.text(store, LABEL, GetArgs("s1")) == (
        f"[2026-03-02T09:00:00Z] user seq0 turn=s1-t0\n{rows[0].text}\n…\n{rows[2].text}\n"
        "---\nturns 0-0 of 1\n"
    )


def test_get_cap_with_continuation() -> None:
    bodies = [long_text(2000, f"t{i}w") for i in range(4)]
    assert all(13_000 < len(b) < 20_000 for b in bodies)
    store = store_of(rows_of(turn(i, "assistant", text(b)) for i, b in enumerate(bodies)))
    out = get.text(store, LABEL, GetArgs("s1"))
    expected_turns = "".join(
        f"[2026-03-02T09:00:0{i}Z] assistant seq{i} turn=s1-t{i}\n{bodies[i]}\n---\n" for i in range(2)
    )
    assert out == expected_turns + (
        "turns 0-1 of 4\n2 more turn(s) in range not shown — read them with --from 2\n"
    )
    assert len(expected_turns) <= 40_000 < len(expected_turns) + len(bodies[2])


def test_get_first_turn_always_renders() -> None:
    huge = long_text(7000, "h")
    assert len(huge) > 40_000
    store = store_of(rows_of([turn(0, "user", text(huge)), turn(1, "assistant", text("ok"))]))
    assert get.text(store, LABEL, GetArgs("s1")) == (
        f"[2026-03-02T09:00:00Z] user seq0 turn=s1-t0\n{huge}\n---\n"
        "turns 0-0 of 2\n1 more turn(s) in range not shown — read them with --from 1\n"
    )


def test_get_range_outside() -> None:
    store = store_of(rows_of(SMALL))
    assert (
        get.text(store, LABEL, GetArgs("s1", from_=7))
        == "no turns in that range of session s1 (it holds 3)\n"
    )


def test_get_unknown_session_and_bad_ranges() -> None:
    store = store_of(rows_of(SMALL))
    with pytest.raises(VerbError, match=r"^no session nope in local$"):
        get.text(store, LABEL, GetArgs("nope"))
    with pytest.raises(VerbError, match=r"^no session nope in local$"):
        get.text(store, LABEL, GetArgs("nope"), as_json=True)
    with pytest.raises(VerbError, match=r"^--from 3 is after --to 1$"):
        get.text(store, LABEL, GetArgs("s1", from_=3, to=1))
    with pytest.raises(VerbError, match=r"^--from must be 0 or more \(got -1\)$"):
        get.text(store, LABEL, GetArgs("s1", from_=-1))


def test_get_json() -> None:
    store = store_of(rows_of(SMALL))
    doc = json.loads(get.text(store, LABEL, GetArgs("s1", to=1), as_json=True))
    assert list(doc) == [
        "memory",
        "session_id",
        "from",
        "to",
        "total",
        "turns",
        "not_shown",
        "next_from",
        "message",
    ]
    assert (doc["memory"], doc["from"], doc["to"], doc["total"], doc["not_shown"]) == ("local", 0, 1, 3, 0)
    assert doc["next_from"] is None and doc["message"] is None
    assert list(doc["turns"][1]) == ["seq", "turn_uuid", "ts", "role", "harness", "blocks"]
    assert doc["turns"][1]["blocks"][2] == {
        "block_idx": 2,
        "block_type": "tool_use",
        "tool_name": "Bash",
        "taint": "internal",
        "text": '[tool_use Bash] {"command": "pytest -k flush"}',
    }
    empty = json.loads(get.text(store, LABEL, GetArgs("s1", from_=9), as_json=True))
    assert empty["turns"] == [] and empty["message"] == "no turns in that range of session s1 (it holds 3)"


# -- sessions ----------------------------------------------------------------------------------------


#: Longer than 120 characters: printed as its first 120 (which end in "the inges") and "…".
B2_OPENING = "Please " + "rewrite the ingest loop " * 8


def sessions_store() -> MemoryStore:
    a = [
        turn(0, "user", text("<command-name>/clear</command-name>"), sid="a1", ts="2026-03-02T09:00:00Z"),
        turn(
            1,
            "user",
            text("Caveat: the messages below were generated by the user"),
            sid="a1",
            ts="2026-03-02T09:00:01Z",
        ),
        turn(
            2,
            "user",
            text("  <system-reminder>be brief</system-reminder>"),
            sid="a1",
            ts="2026-03-02T09:00:02Z",
        ),
        turn(
            3,
            "user",
            text("Why does the\n\n  flush test   fail on ARM?"),
            sid="a1",
            ts="2026-03-02T09:00:03Z",
        ),
        turn(4, "assistant", text("Looking."), sid="a1", ts="2026-03-02T09:01:00Z"),
    ]
    b = [
        turn(
            0,
            "user",
            text("<environment_context>cwd=/x</environment_context>"),
            sid="b2",
            harness="codex",
            ts="2026-03-05T10:00:00Z",
        ),
        turn(
            1,
            "user",
            text(B2_OPENING),
            sid="b2",
            harness="codex",
            ts="2026-03-05T10:00:05Z",
        ),
    ]
    c = [
        turn(0, "assistant", text("Resuming the storage work."), sid="c3", ts="2026-03-09T23:00:00Z"),
        turn(1, "assistant", text("Done."), sid="c3", ts="2026-03-12T08:00:00Z"),
    ]
    d = [turn(0, "tool", Block("tool_result", "ok", tool_name="Bash"), sid="d4", ts="2026-03-10T00:00:00Z")]
    return store_of(
        rows_of(a, repo="acme/tidepool"),
        rows_of(b, workdir="-home-dev-ingest"),
        rows_of(c, repo="acme/other acme/tidepool-fork"),
        rows_of(d, workdir=""),
    )


ALL_SESSIONS = f"""\
[2026-03-02] claude acme/tidepool 5 turns a1
  Why does the flush test fail on ARM?
[2026-03-05] codex -home-dev-ingest 2 turns b2
  {B2_OPENING[:120]}…
[2026-03-09] claude acme/other acme/tidepool-fork 2 turns c3
  Resuming the storage work.
[2026-03-10] claude - 1 turns d4
"""


def test_sessions_all_fit() -> None:
    # a1: scaffolding (<command-…>, Caveat:, <system-reminder>) skipped, whitespace collapsed;
    # b2: <environment_context> skipped, cut at 120 with …; c3: no user text, first text block;
    # d4: no text at all, so no second line, and no repo or workdir.
    assert sessions.text(sessions_store(), LABEL, SessionsArgs()) == ALL_SESSIONS + "---\n4 sessions\n"


class _PlainStore:
    """The reference store without its optional ``session_facets``: funes computes them from a scan."""

    def __init__(self, inner: MemoryStore) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> object:
        if name == "session_facets":
            raise AttributeError(name)
        return getattr(self._inner, name)


def test_sessions_opening_past_the_first_seqs_is_found_by_reading_the_session_whole() -> None:
    from funes_core.read.sessions import OPENING_WINDOW

    late = OPENING_WINDOW + 3
    # e5: assistant chatter, then the request late; f6: scaffolding past the window, then the request;
    # g7: no user text at all, so the first assistant text; h8: a request at once.
    e5 = [turn(i, "assistant", text(f"warming up {i}"), sid="e5") for i in range(late)]
    e5.append(turn(late, "user", text("Make the flush faster."), sid="e5"))
    f6 = [turn(i, "user", text(f"<system-reminder>{i}</system-reminder>"), sid="f6") for i in range(late)]
    f6.append(turn(late, "user", text("Rename the writer."), sid="f6"))
    g7 = [turn(i, "assistant", text(f"only me {i}"), sid="g7") for i in range(late)]
    h8 = [turn(0, "user", text("Hello there."), sid="h8"), turn(1, "assistant", text("Hi."), sid="h8")]
    store = store_of(rows_of(e5), rows_of(f6), rows_of(g7), rows_of(h8))
    out = sessions.text(store, LABEL, SessionsArgs())
    for expected in ("Make the flush faster.", "Rename the writer.", "only me 0", "Hello there."):
        assert f"  {expected}\n" in out
    assert sessions.text(_PlainStore(store), LABEL, SessionsArgs()) == out  # type: ignore[arg-type]
    assert f"{late + 1} turns e5" in out


def test_sessions_trailer_older_remain() -> None:
    assert sessions.text(sessions_store(), LABEL, SessionsArgs(limit=2)) == (
        ALL_SESSIONS.split("\n", 4)[4]
        + "---\n2 of 4 sessions — 2 older: continue with --offset 2, or narrow with --repo/--since/--until\n"
    )
    assert sessions.text(sessions_store(), LABEL, SessionsArgs(limit=1, offset=1)) == (
        "[2026-03-09] claude acme/other acme/tidepool-fork 2 turns c3\n  Resuming the storage work.\n"
        "---\n1 of 4 sessions — 2 older: continue with --offset 2, or narrow with --repo/--since/--until\n"
    )


def test_sessions_trailer_oldest_reached() -> None:
    head = "\n".join(ALL_SESSIONS.split("\n")[:4]) + "\n"
    expected = head + "---\n2 of 4 sessions — the oldest match reached\n"
    assert sessions.text(sessions_store(), LABEL, SessionsArgs(limit=2, offset=2)) == expected
    assert sessions.text(sessions_store(), LABEL, SessionsArgs(limit=50, offset=2)) == expected
    assert (
        sessions.text(sessions_store(), LABEL, SessionsArgs(offset=9))
        == "---\n0 of 4 sessions — the oldest match reached\n"
    )


def test_sessions_filters() -> None:
    store = sessions_store()
    assert sessions.text(store, LABEL, SessionsArgs(harness="codex")) == (
        "[2026-03-05] codex -home-dev-ingest 2 turns b2\n"
        "  Please rewrite the ingest loop rewrite the ingest loop rewrite the ingest loop "
        "rewrite the ingest loop rewrite the inges…\n---\n1 sessions\n"
    )
    # a repo is one of the space-separated identities, matched whole (not acme/tidepool-fork)
    assert sessions.text(store, LABEL, SessionsArgs(repo="acme/tidepool")) == (
        "[2026-03-02] claude acme/tidepool 5 turns a1\n  Why does the flush test fail on ARM?\n"
        "---\n1 sessions\n"
    )
    # since/until are inclusive and compare the START date: c3 started 03-09 and ran to 03-12
    assert sessions.text(store, LABEL, SessionsArgs(since="2026-03-05", until="2026-03-09")) == (
        "\n".join(ALL_SESSIONS.split("\n")[2:6]) + "\n---\n2 sessions\n"
    )
    assert sessions.text(store, LABEL, SessionsArgs(since="2026-03-11")) == "no session in local matches\n"
    assert sessions.text(store, LABEL, SessionsArgs(harness="pi")) == "no session in local matches\n"


def test_sessions_claude_matches_claude_code() -> None:
    old = rows_of([turn(0, "user", text("old ask"), sid="z9", harness="claude_code")])
    store = store_of(old, rows_of([turn(0, "user", text("new ask"), sid="y8", ts="2026-04-01T00:00:00Z")]))
    assert sessions.text(store, LABEL, SessionsArgs(harness="claude")) == (
        "[2026-03-02] claude_code -home-dev-tidepool 1 turns z9\n  old ask\n"
        "[2026-04-01] claude -home-dev-tidepool 1 turns y8\n  new ask\n---\n2 sessions\n"
    )


def test_sessions_empty_memory() -> None:
    assert sessions.text(MemoryStore(LABEL), LABEL, SessionsArgs()) == "no sessions in local\n"
    assert sessions.text(MemoryStore(LABEL), LABEL, SessionsArgs(harness="codex")) == "no sessions in local\n"


def test_sessions_bad_parameters() -> None:
    store = sessions_store()
    with pytest.raises(VerbError, match=r"^--limit must be at least 1 \(got 0\)$"):
        sessions.text(store, LABEL, SessionsArgs(limit=0))
    with pytest.raises(VerbError, match=r"^--offset must be 0 or more \(got -1\)$"):
        sessions.text(store, LABEL, SessionsArgs(offset=-1))
    with pytest.raises(VerbError, match=r"^--since: 'yesterday' is not a date \(YYYY-MM-DD\)$"):
        sessions.text(store, LABEL, SessionsArgs(since="yesterday"))
    with pytest.raises(VerbError, match=r"^--since 2026-03-09 is after --until 2026-03-01$"):
        sessions.text(store, LABEL, SessionsArgs(since="2026-03-09", until="2026-03-01"))


def test_sessions_limit_clamped_to_200() -> None:
    store = store_of(
        *(
            rows_of(
                [
                    turn(
                        0,
                        "user",
                        text("go"),
                        sid=f"s{i:03d}",
                        ts=f"2026-01-01T00:{i // 60:02d}:{i % 60:02d}Z",
                    )
                ]
            )
            for i in range(230)
        )
    )
    out = sessions.text(store, LABEL, SessionsArgs(limit=500))
    assert out.count(" 1 turns ") == 200
    assert out.startswith("[2026-01-01] claude -home-dev-tidepool 1 turns s030\n  go\n")
    assert out.endswith(
        "1 turns s229\n  go\n---\n"
        "200 of 230 sessions — 30 older: continue with --offset 200, or narrow with --repo/--since/--until\n"
    )


def test_sessions_cap_keeps_most_recent() -> None:
    workdir = "-" + "x" * 400
    store = store_of(
        *(
            rows_of([turn(0, "user", text(f"ask {i:03d}"), sid=f"s{i:03d}")], workdir=workdir)
            for i in range(120)
        )
    )
    # every session prints the same 445 characters: 89 fit in 40,000
    entry = "[2026-03-02] claude {w} 1 turns s{i:03d}\n  ask {i:03d}\n"
    assert len(entry.format(w=workdir, i=100)) == 445 and 89 * 445 <= 40_000 < 90 * 445
    assert sessions.text(store, LABEL, SessionsArgs(limit=100)) == (
        "".join(entry.format(w=workdir, i=i) for i in range(31, 120))
        + "---\n89 of 120 sessions — 31 older: continue with --offset 89, "
        "or narrow with --repo/--since/--until\n"
    )


def test_sessions_json() -> None:
    doc = json.loads(sessions.text(sessions_store(), LABEL, SessionsArgs(limit=2), as_json=True))
    assert list(doc) == ["memory", "total", "offset", "limit", "older", "sessions", "message"]
    assert (doc["total"], doc["offset"], doc["limit"], doc["older"], doc["message"]) == (4, 0, 2, 2, None)
    assert doc["sessions"][1] == {
        "session_id": "d4",
        "date": "2026-03-10",
        "start_ts": "2026-03-10T00:00:00Z",
        "harness": "claude",
        "repo": "",
        "workdir": "",
        "turns": 1,
        "opening": None,
    }
    assert (
        json.loads(sessions.text(MemoryStore(LABEL), LABEL, SessionsArgs(), as_json=True))["message"]
        == "no sessions in local"
    )


# -- scan --------------------------------------------------------------------------------------------

SCAN = [
    turn(0, "user", text("flush is flaky: the Flush test fails under load.")),
    turn(
        1,
        "assistant",
        text("I will look at how\n\n   the writer calls flush() before closing the database handle."),
        Block("tool_use", '{"command": "grep -n \\"flush\\" store.py"}', tool_name="Bash"),
    ),
    turn(2, "tool", Block("tool_result", "12: def flush(self):", tool_name="Bash")),
    turn(3, "assistant", text("Straße and STRASSE are the same street; so is strasse.")),
]


def test_scan_hits_with_and_without_ellipses() -> None:
    # one hit per occurrence, in reading order; splits of one block never double a hit; `… `/` …`
    # only where the block runs past the excerpt; whitespace in the excerpt collapsed
    assert (
        scan.text(store_of(rows_of(SCAN)), LABEL, ScanArgs("flush", "s1", context=12))
        == """\
scan "flush" in s1 — 4 hits
[2026-03-02T09:00:00Z] text seq0
  → get s1 --from 0 --to 3 --memory local
  flush is flaky: t …
[2026-03-02T09:00:01Z] text seq1
  → get s1 --from 0 --to 4 --memory local
  … riter calls flush() before cl …
[2026-03-02T09:00:01Z] tool_use seq1
  → get s1 --from 0 --to 4 --memory local
  … "grep -n \\"flush\\" store.py" …
[2026-03-02T09:00:02Z] tool_result seq2
  → get s1 --from 0 --to 5 --memory local
  … sh] 12: def flush(self):
---
"""
    )


def test_scan_whole_block_excerpt_and_window_header() -> None:
    store = store_of(rows_of(SCAN))
    assert (
        scan.text(store, LABEL, ScanArgs("Flush", "s1", from_=0, to=0))
        == """\
scan "Flush" in s1 turns 0-0 — 1 hits
[2026-03-02T09:00:00Z] text seq0
  → get s1 --from 0 --to 3 --memory local
  flush is flaky: the Flush test fails under load.
---
"""
    )
    assert scan.text(store, LABEL, ScanArgs("def", "s1", from_=2)).startswith(
        'scan "def" in s1 turns 2 on — 1 hits\n'
    )
    assert scan.text(store, LABEL, ScanArgs("def", "s1", to=2)).startswith(
        'scan "def" in s1 turns up to 2 — 1 hits\n'
    )


def test_scan_ignore_case() -> None:
    store = store_of(rows_of(SCAN))
    expected = """\
scan "{needle}" in s1 — 3 hits
[2026-03-02T09:00:03Z] text seq3
  → get s1 --from 0 --to 6 --memory local
  Straße and …
[2026-03-02T09:00:03Z] text seq3
  → get s1 --from 0 --to 6 --memory local
  … and STRASSE are …
[2026-03-02T09:00:03Z] text seq3
  → get s1 --from 0 --to 6 --memory local
  … o is strasse.
---
"""
    # casefolding maps ß to ss, both ways; offsets still point at the original text
    for needle in ("strasse", "STRAßE"):
        assert scan.text(
            store, LABEL, ScanArgs(needle, "s1", context=5, ignore_case=True)
        ) == expected.format(needle=needle)
    assert scan.text(store, LABEL, ScanArgs("strasse", "s1", context=5)).startswith(
        'scan "strasse" in s1 — 1 hits\n'
    )
    assert scan.text(store, LABEL, ScanArgs("flush", "s1", ignore_case=True)).startswith(
        'scan "flush" in s1 — 5 hits\n'
    )


def test_find_literal_edge_cases() -> None:
    assert find_literal("aaaa", "aa") == [(0, 2), (2, 4)]  # non-overlapping, left to right
    assert find_literal("a.c abc", ".") == [(1, 2)]  # literal, never a pattern
    assert find_literal("Straße", "SS", ignore_case=True) == [(4, 5)]  # the whole ß
    assert find_literal("Straße", "s", ignore_case=True) == [(0, 1)]  # never half of ß
    assert find_literal("ﬁx ﬁ", "FI", ignore_case=True) == [(0, 1), (3, 4)]  # ligature folds to "fi"
    assert find_literal("ﬁx", "f", ignore_case=True) == []
    assert find_literal("İstanbul", "i̇s", ignore_case=True) == [(0, 2)]
    assert find_literal("x", "", ignore_case=True) == []


def test_scan_needle_in_rust_debug_quoting() -> None:
    assert debug_quote('say "hi"\\now') == '"say \\"hi\\"\\\\now"'
    assert debug_quote("a\nb\tc\rd\0e") == '"a\\nb\\tc\\rd\\0e"'
    assert debug_quote("é ü \x1b \u200b \u00a0 \u0301'") == '"é ü \\u{1b} \\u{200b} \\u{a0} \\u{301}\'"'


def test_scan_zero_matches() -> None:
    store = store_of(rows_of(SCAN))
    assert scan.text(store, LABEL, ScanArgs('"flush"', "s1")) == 'no matches for "\\"flush\\"" in s1\n---\n'
    assert scan.text(store, LABEL, ScanArgs("a\tb", "s1", from_=1, to=2)) == (
        'no matches for "a\\tb" in s1 turns 1-2\n---\n'
    )


def test_scan_unknown_session_window_outside_and_bad_parameters() -> None:
    store = store_of(rows_of(SCAN))
    with pytest.raises(VerbError, match=r"^no session nope in local$"):
        scan.text(store, LABEL, ScanArgs("flush", "nope"))
    assert scan.text(store, LABEL, ScanArgs("flush", "s1", from_=9)) == "no turns in that range\n"
    with pytest.raises(VerbError, match=r"^the needle is empty$"):
        scan.text(store, LABEL, ScanArgs("", "s1"))
    with pytest.raises(VerbError, match=r"^--context must be 0 or more \(got -1\)$"):
        scan.text(store, LABEL, ScanArgs("flush", "s1", context=-1))


def hit_lines(seq: int) -> str:
    return (
        f"[2026-03-02T09:{seq // 60:02d}:{seq % 60:02d}Z] text seq{seq}\n"
        f"  → get s1 --from {max(seq - 3, 0)} --to {seq + 3} --memory local\n  x …\n"
    )


def x_session(*per_turn: int) -> MemoryStore:
    """Turn i holds per_turn[i] hits of "x" (in separate blocks, so every excerpt is "x …")."""
    return store_of(
        rows_of(turn(i, "user", *(text(f"x {j}") for j in range(n))) for i, n in enumerate(per_turn))
    )


def test_scan_cap_cuts_on_turn_boundary(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scan, "MAX_HITS", 3)
    assert scan.text(x_session(2, 2, 1, 2), LABEL, ScanArgs("x", "s1", context=0)) == (
        'scan "x" in s1 — 7 hits\n'
        + hit_lines(0) * 2
        + "5 more hits not shown — continue with --from 1\n---\n"
    )
    assert scan.text(x_session(1, 1, 2, 2), LABEL, ScanArgs("x", "s1", context=0)) == (
        'scan "x" in s1 — 6 hits\n'
        + hit_lines(0)
        + hit_lines(1)
        + "4 more hits not shown — continue with --from 2\n---\n"
    )


def test_scan_cap_rest_in_one_turn(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scan, "MAX_HITS", 3)
    assert scan.text(x_session(2, 3), LABEL, ScanArgs("x", "s1", context=0)) == (
        'scan "x" in s1 — 5 hits\n'
        + hit_lines(0) * 2
        + "3 more hits not shown, all in turn 1 — read it with --from 1 --to 1\n---\n"
    )


def test_scan_cap_first_turn_over_the_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    # no turn boundary to cut on: the first 3 hits are listed, the rest of turn 0 is pointed at for
    # reading, and the scan resumes after it (never --from 0 again, which would repeat the listing)
    monkeypatch.setattr(scan, "MAX_HITS", 3)
    assert scan.text(x_session(5, 1, 1), LABEL, ScanArgs("x", "s1", context=0)) == (
        'scan "x" in s1 — 7 hits\n'
        + hit_lines(0) * 3
        + "2 more hits not shown, all in turn 0 — read it with --from 0 --to 0\n"
        + "2 more hits not shown — continue with --from 1\n---\n"
    )
    assert scan.text(x_session(5), LABEL, ScanArgs("x", "s1", context=0)) == (
        'scan "x" in s1 — 5 hits\n'
        + hit_lines(0) * 3
        + "2 more hits not shown, all in turn 0 — read it with --from 0 --to 0\n---\n"
    )


def test_scan_real_cap_is_200() -> None:
    out = scan.text(x_session(*[3] * 67), LABEL, ScanArgs("x", "s1", context=0))  # 201 hits
    assert out.startswith('scan "x" in s1 — 201 hits\n')
    assert out.count("\n  x …\n") == 198  # cut before turn 66, whose 3 hits straddle the cap
    assert out.endswith("3 more hits not shown, all in turn 66 — read it with --from 66 --to 66\n---\n")
    exact = scan.text(x_session(*[2] * 100), LABEL, ScanArgs("x", "s1", context=0))  # 200 hits: no cut
    assert exact.count("\n  x …\n") == 200 and exact.endswith(hit_lines(99) + "---\n")


def test_scan_json() -> None:
    store = store_of(rows_of(SCAN))
    doc = json.loads(scan.text(store, LABEL, ScanArgs("flush", "s1", context=12, from_=2), as_json=True))
    assert list(doc) == [
        "memory",
        "session_id",
        "needle",
        "ignore_case",
        "context",
        "from",
        "to",
        "total",
        "hits",
        "more",
        "message",
    ]
    assert doc["hits"] == [
        {
            "seq": 2,
            "turn_uuid": "s1-t2",
            "ts": "2026-03-02T09:00:02Z",
            "role": "tool",
            "block_idx": 0,
            "block_type": "tool_result",
            "start": 27,
            "end": 32,
            "excerpt": "sh] 12: def flush(self):",
            "more_before": True,
            "more_after": False,
            "get": "get s1 --from 0 --to 5 --memory local",
        }
    ]
    assert (doc["total"], doc["more"], doc["message"], doc["from"], doc["to"]) == (1, [], None, 2, None)
    none = json.loads(scan.text(store, LABEL, ScanArgs("zzz", "s1"), as_json=True))
    assert none["hits"] == [] and none["message"] == 'no matches for "zzz" in s1'


# -- sketch ------------------------------------------------------------------------------------------

TOOL_OUTPUT = "\n".join(f"line {i}: ok" for i in range(300))  # 3,289 chars
SKETCH = [
    turn(0, "user", text("<command-name>/clear</command-name>")),
    turn(1, "user", text("Please make the flush test reliable; it fails one run in five.")),
    turn(
        2,
        "assistant",
        Block("thinking", "The flush probably races the writer thread."),
        text("The flush probably races the writer thread, I think."),
        Block("tool_use", '{"command": "pytest -x tests/test_flush.py"}', tool_name="Bash"),
    ),
    turn(3, "tool", Block("tool_result", TOOL_OUTPUT, tool_name="Bash")),
    turn(4, "assistant", text("The writer holds the lock across the fsync. " * 20)),
    turn(5, "assistant", text("Moving the fsync out of the lock.")),
    turn(6, "user", text("ok, go ahead")),
    turn(7, "assistant", text("Fixed: flush now waits for the writer, 200 runs green.")),
]
#: (seq, block_idx) -> vector; the thinking and the text of turn 2 are near-duplicates
SKETCH_VECTORS: dict[tuple[int, int], list[float]] = {
    (0, 0): [0, 0, 0, 0, 0, 0, 1, 0],
    (1, 0): [1, 0, 0, 0, 0, 0, 0, 0],
    (2, 0): [0, 1, 0, 0, 0, 0, 0, 0],
    (2, 1): [0, 1, 0.1, 0, 0, 0, 0, 0],
    (2, 2): [0, 0.2, 1, 0, 0, 0, 0, 0],
    (3, 0): [0, 0, 0, 1, 0, 0, 0, 0],
    (4, 0): [0, 0, 0, 0.3, 1, 0, 0, 0],
    (5, 0): [0, 0, 0, 0, 0.9, 0.3, 0, 0],
    (6, 0): [0.5, 0, 0, 0, 0, 0, 0, 0.5],
    (7, 0): [0.3, 0.3, 0, 0, 0, 0, 0, 1],
}


def sketch_store(vectors: Mapping[tuple[int, int], Sequence[float]] | None = SKETCH_VECTORS) -> MemoryStore:
    return store_of(rows_of(SKETCH, vectors=vectors))


SKETCH_5 = f"""\
sketch s1 — 5 of 5 places · 519 of 1500 chars · 9 eligible units
[2026-03-02T09:00:01Z] user text seq1
  → get s1 --from 0 --to 4 --memory local
Please make the flush test reliable; it fails one run in five.
---
[2026-03-02T09:00:02Z] assistant thinking seq2
  → get s1 --from 0 --to 5 --memory local
The flush probably races the writer thread.
---
[2026-03-02T09:00:02Z] assistant tool_use seq2
  → get s1 --from 0 --to 5 --memory local
[tool_use Bash] {{"command": "pytest -x tests/test_flush.py"}}
---
[2026-03-02T09:00:03Z] tool tool_result seq3 · shortened
  → get s1 --from 0 --to 6 --memory local
{("[tool_result Bash] " + TOOL_OUTPUT)[:300]}
---
[2026-03-02T09:00:07Z] assistant text seq7
  → get s1 --from 4 --to 10 --memory local
Fixed: flush now waits for the writer, 200 runs green.
---
{CLOSING}
"""


def test_sketch_normal() -> None:
    # the opening ask (seq1: seq0 is scaffolding) and the last word (seq7) are kept; the vector step
    # adds the three most distinctive units; places print in reading order, each cut at 1500/5
    assert sketch.text(sketch_store(), LABEL, SketchArgs("s1", units=5, max_chars=1500)) == SKETCH_5


def test_sketch_is_deterministic() -> None:
    first = sketch.text(sketch_store(), LABEL, SketchArgs("s1", units=5, max_chars=1500))
    again = sketch.text(sketch_store(), LABEL, SketchArgs("s1", units=5, max_chars=1500))
    shuffled = store_of(list(reversed(rows_of(SKETCH, vectors=SKETCH_VECTORS))))
    assert (
        first == again == sketch.text(shuffled, LABEL, SketchArgs("s1", units=5, max_chars=1500)) == SKETCH_5
    )


def test_sketch_keeps_opening_ask_and_last_word() -> None:
    # without any vector nothing is eligible, yet the opening ask and the last word are there
    assert (
        sketch.text(sketch_store(None), LABEL, SketchArgs("s1"))
        == f"""\
sketch s1 — 2 of 8 places · 116 of 8000 chars · 0 eligible units
[2026-03-02T09:00:01Z] user text seq1
  → get s1 --from 0 --to 4 --memory local
Please make the flush test reliable; it fails one run in five.
---
[2026-03-02T09:00:07Z] assistant text seq7
  → get s1 --from 4 --to 10 --memory local
Fixed: flush now waits for the writer, 200 runs green.
---
{CLOSING}
"""
    )
    # they are kept even when the least distinctive (vectors at the session mean) ...
    bland = dict(SKETCH_VECTORS)
    bland[(1, 0)] = bland[(7, 0)] = list(np.mean(list(SKETCH_VECTORS.values()), axis=0))
    out = sketch.text(sketch_store(bland), LABEL, SketchArgs("s1", units=3, max_chars=900))
    assert out.count("\n  → get ") == 3
    assert "\nPlease make the flush test reliable" in out and "\nFixed: flush now waits" in out
    # ... and within a window: no user text in 2-5, so the first text block; the last text block
    windowed = sketch.text(sketch_store(), LABEL, SketchArgs("s1", units=2, max_chars=600, from_=2, to=5))
    assert windowed == (
        "sketch s1 — 2 of 2 places · 85 of 600 chars · 6 eligible units\n"
        "[2026-03-02T09:00:02Z] assistant text seq2\n  → get s1 --from 0 --to 5 --memory local\n"
        "The flush probably races the writer thread, I think.\n---\n"
        "[2026-03-02T09:00:05Z] assistant text seq5\n  → get s1 --from 2 --to 8 --memory local\n"
        f"Moving the fsync out of the lock.\n---\n{CLOSING}\n"
    )


def test_sketch_near_duplicates_share_one_place() -> None:
    out = sketch.text(sketch_store(), LABEL, SketchArgs("s1", units=12, max_chars=3600))
    assert out.startswith("sketch s1 — 7 of 12 places · 852 of 3600 chars · 9 eligible units\n")
    assert "\nThe flush probably races the writer thread.\n" in out  # the thinking is picked ...
    assert "I think." not in out  # ... so its near-duplicate text is not
    assert "<command-name>" not in out  # scaffolding is never a place
    assert "\nok, go ahead\n" not in out  # spanned by the places already chosen: selection stops


def test_sketch_shortened_and_tool_preview() -> None:
    out = sketch.text(sketch_store(), LABEL, SketchArgs("s1", units=8, max_chars=2400))
    writer = "The writer holds the lock across the fsync. " * 20
    assert (
        f"assistant text seq4 · shortened\n  → get s1 --from 1 --to 7 --memory local\n{writer[:300]}\n---\n"
        in out
    )
    # a tool result is previewed at min(per-unit cap, 2000), even when the per-unit cap is larger
    big = sketch.text(sketch_store(), LABEL, SketchArgs("s1", units=3, max_chars=9000))
    preview = ("[tool_result Bash] " + TOOL_OUTPUT)[:2000]
    assert big == (
        "sketch s1 — 3 of 3 places · 2116 of 9000 chars · 9 eligible units\n"
        "[2026-03-02T09:00:01Z] user text seq1\n  → get s1 --from 0 --to 4 --memory local\n"
        "Please make the flush test reliable; it fails one run in five.\n---\n"
        "[2026-03-02T09:00:03Z] tool tool_result seq3 · shortened\n"
        f"  → get s1 --from 0 --to 6 --memory local\n{preview}\n---\n"
        "[2026-03-02T09:00:07Z] assistant text seq7\n  → get s1 --from 4 --to 10 --memory local\n"
        f"Fixed: flush now waits for the writer, 200 runs green.\n---\n{CLOSING}\n"
    )


def test_sketch_clamps_are_reported() -> None:
    store = sketch_store()
    # 8000 // 240 = 33 places at most, each cut at 8000 // 33 = 242: 62+43+60+242+242+33+54 chars
    assert sketch.text(store, LABEL, SketchArgs("s1", units=50)).startswith(
        "sketch s1 — 7 of 33 places · 736 of 8000 chars · 9 eligible units\n  (units clamped to 33)\n[20"
    )
    # 40 places, each cut at 1000: 62+43+60+1000+879+33+54 (stored text is trimmed)
    assert sketch.text(store, LABEL, SketchArgs("s1", units=50, max_chars=90_000)).startswith(
        "sketch s1 — 7 of 40 places · 2131 of 40000 chars · 9 eligible units\n"
        "  (units clamped to 40)\n  (max-chars clamped to 40000)\n[20"
    )
    assert sketch.text(store, LABEL, SketchArgs("s1", units=1, max_chars=100)).startswith(
        "sketch s1 — 2 of 2 places · 116 of 480 chars · 9 eligible units\n"
        "  (units clamped to 2)\n  (max-chars clamped to 480)\n[20"
    )
    assert sketch.text(store, LABEL, SketchArgs("s1", units=8, max_chars=8000)).startswith(
        "sketch s1 — 7 of 8 places · 2131 of 8000 chars · 9 eligible units\n[20"
    )


def test_sketch_errors_and_window_outside() -> None:
    store = sketch_store()
    with pytest.raises(VerbError, match=r"^no session nope in local$"):
        sketch.text(store, LABEL, SketchArgs("nope"))
    with pytest.raises(VerbError, match=r"^--units must be at least 1 \(got 0\)$"):
        sketch.text(store, LABEL, SketchArgs("s1", units=0))
    with pytest.raises(VerbError, match=r"^--max-chars must be at least 1 \(got 0\)$"):
        sketch.text(store, LABEL, SketchArgs("s1", max_chars=0))
    assert (
        sketch.text(store, LABEL, SketchArgs("s1", from_=30))
        == "no turns in that range of session s1 (it holds 8)\n"
    )


def test_sketch_json() -> None:
    doc = json.loads(
        sketch.text(sketch_store(), LABEL, SketchArgs("s1", units=1, max_chars=100), as_json=True)
    )
    assert list(doc) == [
        "memory",
        "session_id",
        "from",
        "to",
        "units",
        "units_asked",
        "max_chars",
        "max_chars_asked",
        "eligible",
        "chars",
        "places",
        "message",
        "note",
    ]
    assert (doc["units"], doc["units_asked"], doc["max_chars"], doc["max_chars_asked"]) == (2, 1, 480, 100)
    assert (doc["eligible"], doc["chars"], doc["message"], doc["note"]) == (9, 116, None, CLOSING)
    assert [p["reason"] for p in doc["places"]] == ["opening", "last"]
    assert doc["places"][0] == {
        "seq": 1,
        "turn_uuid": "s1-t1",
        "ts": "2026-03-02T09:00:01Z",
        "role": "user",
        "block_idx": 0,
        "block_type": "text",
        "reason": "opening",
        "shortened": False,
        "get": "get s1 --from 0 --to 4 --memory local",
        "text": "Please make the flush test reliable; it fails one run in five.",
    }
    picked = json.loads(
        sketch.text(sketch_store(), LABEL, SketchArgs("s1", units=5, max_chars=1500), as_json=True)
    )["places"]
    assert [p["reason"] for p in picked] == ["opening", "picked", "picked", "picked", "last"]
