"""Chunking: rendering, elision, splitting (with properties), tiers and chunk ids."""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
from collections import Counter
from functools import reduce

from hypothesis import assume, given
from hypothesis import strategies as st

from funes_core.ingest.chunking import (
    MAX_BLOCK_CHARS,
    MAX_CHARS,
    OVERLAP,
    Tier,
    cap_block,
    chunk_id,
    chunk_turn,
    elide_base64,
    render_block,
    split_text,
    stitch,
    tier_of,
)
from funes_core.turns.format import Block, Turn


def make_turn(*blocks: Block, session: str = "s", turn: str = "t") -> Turn:
    return Turn(
        session_id=session,
        turn_uuid=turn,
        seq=0,
        ts="2026-01-01T00:00:00Z",
        role="assistant",
        harness="x",
        blocks=blocks,
    )


# -- rendering ---------------------------------------------------------------------------------------


def test_render_each_block_type() -> None:
    assert render_block(Block("text", "  hi  ")) == "  hi  "
    assert render_block(Block("thinking", "hmm")) == "hmm"
    assert render_block(Block("tool_use", '{"a":1}', tool_name="Bash")) == '[tool_use Bash] {"a":1}'
    assert render_block(Block("tool_use", "{}")) == "[tool_use None] {}"
    assert render_block(Block("tool_result", "out\n", tool_name="Read")) == "[tool_result Read] out"
    assert render_block(Block("tool_result", "out")) == "[tool_result] out"


def test_base64_elision() -> None:
    png = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB+/=="
    assert elide_base64(f"see {png} here") == "see data:image/png;base64,[elided] here"
    assert elide_base64(f'"src":"{png}"') == '"src":"data:image/png;base64,[elided]"'
    # glued to an identifier: not a data URI
    assert elide_base64("metadata:image/png;base64,AAAA") == "metadata:image/png;base64,AAAA"
    # media type with a space is not a media type
    assert elide_base64("data:image png;base64,AAAA") == "data:image png;base64,AAAA"
    assert elide_base64("no uri") == "no uri"


# -- splitting ---------------------------------------------------------------------------------------


def test_short_text_is_one_trimmed_piece() -> None:
    assert split_text("  hello \n") == ["hello"]
    assert split_text(" \n\t ") == []
    assert split_text("x" * MAX_CHARS) == ["x" * MAX_CHARS]


def test_split_prefers_newline_past_half() -> None:
    text = "a" * 700 + "\n" + "b" * 700
    pieces = split_text(text)
    assert pieces[0] == "a" * 700
    assert pieces[1].endswith("b" * 700)


def test_split_falls_back_to_space_then_hard_cut() -> None:
    text = "a" * 100 + "\n" + "c" * 700 + " " + "d" * 700
    assert split_text(text)[0] == "a" * 100 + "\n" + "c" * 700
    hard = "z" * 3000
    pieces = split_text(hard)
    assert pieces[0] == "z" * MAX_CHARS
    assert reduce(stitch, pieces) == hard


def test_stitch_drops_overlap_once() -> None:
    assert stitch("hello wor", "world") == "hello world"
    assert stitch("abc", "xyz") == "abcxyz"


# Words separated by spaces and newlines: the shape of real text. Includes multi-byte letters,
# emoji and a flag (two code points) so boundaries land inside and around them.
_word = st.text(
    alphabet=st.sampled_from(list("abcdefghijklmnopqrstuvwxyzé日本語🙂👍🏽🇫🇷0123456789_-.")),
    min_size=1,
    max_size=30,
)
_sep = st.sampled_from([" ", " ", " ", "\n", "\n\n", "  "])
_texts = st.lists(st.tuples(_word, _sep), min_size=1, max_size=400).map(
    lambda parts: "".join(w + s for w, s in parts).strip()
)


@given(_texts)
def test_split_covers_text_exactly(text: str) -> None:
    pieces = split_text(text)
    assert pieces, "non-blank text yields at least one piece"
    assert all(len(p) <= MAX_CHARS for p in pieces)
    assert reduce(stitch, pieces) == text


@given(st.text(min_size=1, max_size=5000))
def test_pieces_never_exceed_limit_and_are_substrings(text: str) -> None:
    for piece in split_text(text):
        assert 0 < len(piece) <= MAX_CHARS
        assert piece in text
        piece.encode("utf-16", "surrogatepass")  # a whole sequence of code points


@given(
    st.integers(min_value=MAX_CHARS - 5, max_value=MAX_CHARS + 5), st.sampled_from(["🙂", "日", "é", "👍🏽"])
)
def test_multibyte_at_boundary_is_never_broken(prefix: int, char: str) -> None:
    text = "a" * prefix + char * 600
    pieces = split_text(text)
    assert reduce(stitch, pieces) == text
    for piece in pieces:
        # every piece is valid UTF-8 and made only of whole characters of the input
        assert set(piece) <= {"a", *char}
        piece.encode("utf-8")


def test_overlap_is_at_most_overlap() -> None:
    text = " ".join(f"w{i:04d}" for i in range(1000))
    pieces = split_text(text)
    for a, b in itertools.pairwise(pieces):
        shared = max(k for k in range(0, OVERLAP + 1) if k == 0 or a.endswith(b[:k]))
        assert 0 < shared <= OVERLAP


# -- tiers and ids --------------------------------------------------------------------------------


def test_tiers_key_on_block_type() -> None:
    assert tier_of("text") is Tier.TEXT
    assert tier_of("thinking") is Tier.TEXT
    assert tier_of("tool_use") is Tier.TOOL_USE
    assert tier_of("tool_result") is Tier.TOOL_RESULT


def test_chunk_id_is_sha1_prefix() -> None:
    expected = hashlib.sha1(b"sess:turn:2:1").hexdigest()[:16]
    assert chunk_id("sess", "turn", 2, 1) == expected
    assert len(expected) == 16


@given(st.text(max_size=3000), st.text(max_size=3000))
def test_ids_do_not_depend_on_text(a: str, b: str) -> None:
    assume(a.strip() and b.strip())
    ids_a = [c.id for c in chunk_turn(make_turn(Block("text", a)))[0]]
    ids_b = [c.id for c in chunk_turn(make_turn(Block("text", b)))[0]]
    common = min(len(ids_a), len(ids_b))
    assert ids_a[:common] == ids_b[:common]


def test_skipped_blocks_keep_numbering() -> None:
    turn = make_turn(Block("thinking", "plan"), Block("tool_use", "{}", "Bash"), Block("text", "done"))
    all_chunks, _ = chunk_turn(turn)
    text_only, _ = chunk_turn(turn, tiers=[Tier.TEXT], include_thinking=False)
    assert [c.block_idx for c in all_chunks] == [0, 1, 2]
    assert [(c.block_idx, c.id) for c in text_only] == [(2, all_chunks[2].id)]


def test_blank_blocks_yield_nothing_and_provenance_is_carried() -> None:
    turn = dataclasses.replace(
        make_turn(Block("text", "   "), Block("text", "x")), cwd="/w", taint="external"
    )
    chunks, _ = chunk_turn(turn)
    assert len(chunks) == 1
    c = chunks[0]
    assert (c.block_idx, c.cwd, c.taint, c.role, c.seq) == (1, "/w", "external", "assistant", 0)


def test_redaction_happens_before_splitting_and_is_counted() -> None:
    secret = "SECRET" * 10
    text = "x " * 580 + secret + " y" * 600  # the secret straddles the first split point

    def redactor(t: str) -> tuple[str, Counter[str]]:
        n = t.count(secret)
        return t.replace(secret, "[REDACTED:test]"), Counter({"test": n} if n else {})

    chunks, counts = chunk_turn(make_turn(Block("text", text)), redactor=redactor)
    assert counts == Counter({"test": 1})
    assert all("SECRET" not in c.text for c in chunks)
    assert any("[REDACTED:test]" in c.text for c in chunks)


# -- resource bounds (issue 13 item 9) ----------------------------------------------------------------


def test_a_huge_block_is_capped_with_a_marker_and_keeps_head_and_tail() -> None:
    """A 30 MB tool output became 28,000 chunks; now a block stores at most 200,000 characters."""
    body = "".join(f"line {i:07d} of a very long tool output\n" for i in range(30_000))  # 1.2 M chars
    turn = Turn("s", "t", 0, "2026-01-01T00:00:00Z", "tool", "claude", (Block("tool_result", body, "Bash"),))
    chunks, _ = chunk_turn(turn)
    stored = reduce(stitch, [c.text for c in chunks])
    rendered = render_block(turn.blocks[0])
    left_out = len(rendered) - MAX_BLOCK_CHARS
    marker = f"[… funes left out {left_out:,} characters of this block: a block keeps 200,000 …]"
    assert marker in stored
    assert stored.startswith(rendered[:150_000].strip()) and stored.endswith(rendered[-50_000:].strip())
    assert len(chunks) <= MAX_BLOCK_CHARS // (MAX_CHARS // 2 - OVERLAP) + 2  # each split moves >= 450
    assert cap_block("short") == "short"


def test_a_secret_across_the_cap_boundary_is_redacted_before_the_cut() -> None:
    from funes_core.redact import redact

    token = "ghp_" + "Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6"
    text = "x " * 74_990 + "export GITHUB_TOKEN=" + token + "\n" + "y " * 200_000
    turn = Turn("s", "t", 0, "2026-01-01T00:00:00Z", "user", "claude", (Block("text", text),))
    chunks, counts = chunk_turn(turn, redactor=redact)
    assert counts == Counter({"github_token": 1})
    joined = "".join(c.text for c in chunks)
    assert token[:12] not in joined and token[-12:] not in joined
