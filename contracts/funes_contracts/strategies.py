"""Hypothesis strategies for the turns format, for property tests of converters and consumers.

``turns()`` draws one session's worth of valid turns (dense ``seq``, unique ``turn_uuid``,
non-decreasing UTC ``ts``), with awkward text on purpose: multi-byte characters, lone
surrogate-free astral symbols, blank-looking Unicode spaces, long lines::

    from hypothesis import given
    from funes_contracts.strategies import turns

    @given(turns())
    def test_round_trip(session):
        lines = turns_to_jsonl(session).split("\n")  # not splitlines(): U+2028 is legal inside JSON
        assert [parse_line(line) for line in lines if line] == session
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import cast

from hypothesis import strategies as st

from funes_core.turns.format import BLOCK_TYPES, Block, Turn, format_ts

__all__ = ["blocks", "config_documents", "harness_ids", "session_ids", "texts", "timestamps", "turns"]

_ID_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789_-"
_START = datetime(2000, 1, 1, tzinfo=UTC)
_END = datetime(2099, 12, 31, tzinfo=UTC)


def harness_ids() -> st.SearchStrategy[str]:
    """Valid integration / harness ids (``[a-z0-9_-]+``)."""
    return st.text(alphabet=_ID_ALPHABET, min_size=1, max_size=16)


def session_ids(max_size: int = 40) -> st.SearchStrategy[str]:
    """Ids as the format allows them (:data:`funes_core.turns.format.ID_PATTERN`): a letter or digit,
    then letters, digits, ``.``, ``_``, ``@``, ``-``. Used for ``turn_uuid`` too."""
    return st.from_regex(rf"\A[A-Za-z0-9][A-Za-z0-9._@-]{{0,{max_size - 1}}}\Z")


def texts(max_size: int = 120) -> st.SearchStrategy[str]:
    """Block text with the characters converters get wrong: CJK, emoji, combining marks, NBSP."""
    awkward = st.sampled_from(["é", "漢", "😀", "𝔘", "e\u0301", "\u00a0", "\u2028", "\t", "\n", "\\", '"'])
    plain = st.characters(codec="utf-8")  # every code point UTF-8 can encode: no lone surrogates
    return st.lists(st.one_of(plain, awkward), max_size=max_size).map("".join)


def timestamps() -> st.SearchStrategy[str]:
    """RFC 3339 UTC timestamps with a ``Z`` suffix, with and without fractional seconds."""
    return st.datetimes(
        min_value=_START.replace(tzinfo=None), max_value=_END.replace(tzinfo=None), timezones=st.just(UTC)
    ).map(format_ts)


@st.composite
def blocks(draw: st.DrawFn) -> Block:
    """One block of any type; tool blocks may carry a tool name and a tool use id."""
    block_type = draw(st.sampled_from(BLOCK_TYPES))
    tool = block_type in ("tool_use", "tool_result")
    return Block(
        block_type=block_type,
        text=draw(texts()),
        tool_name=draw(st.none() | st.text(_ID_ALPHABET, min_size=1, max_size=12)) if tool else None,
        tool_use_id=draw(st.none() | st.text(_ID_ALPHABET, min_size=1, max_size=12)) if tool else None,
    )


@st.composite
def turns(
    draw: st.DrawFn,
    *,
    session_id: str | None = None,
    harness: str | None = None,
    min_size: int = 0,
    max_size: int = 8,
) -> list[Turn]:
    """One session of valid turns: dense ``seq`` from 0, unique ``turn_uuid``, ``ts`` never going back."""
    sid = session_id if session_id is not None else draw(session_ids())
    producer = harness if harness is not None else draw(harness_ids())
    count = draw(st.integers(min_value=min_size, max_value=max_size))
    uuids = draw(st.lists(session_ids(max_size=20), min_size=count, max_size=count, unique=True))
    moment = draw(
        st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2090, 1, 1), timezones=st.just(UTC))
    )
    cwd = draw(st.none() | st.sampled_from(["/home/ada/parser", "C:\\Users\\ada\\funes", "/srv/ünïcode"]))
    out: list[Turn] = []
    parent: str | None = None
    for seq, uuid in enumerate(uuids):
        moment += timedelta(milliseconds=draw(st.integers(min_value=0, max_value=10**8)))
        out.append(
            Turn(
                session_id=sid,
                turn_uuid=uuid,
                seq=seq,
                ts=format_ts(moment),
                role=draw(st.sampled_from(["user", "assistant", "tool", "system"])),
                harness=producer,
                blocks=tuple(draw(st.lists(blocks(), max_size=4))),
                cwd=cwd,
                parent_uuid=parent,
            )
        )
        parent = uuid
    return out


# -- agent config documents (the config fuzz: install then remove restores the bytes) -----------

_KEY = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=8)
_SCALAR = st.one_of(
    st.integers(-1000, 1000),
    st.booleans(),
    st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cc", "Cs"]), max_size=12),
)


def _user_values() -> st.SearchStrategy[object]:
    """Values a user's config holds: scalars, lists of scalars, small tables."""
    return st.recursive(
        _SCALAR,
        lambda inner: st.one_of(st.lists(_SCALAR, max_size=3), st.dictionaries(_KEY, inner, max_size=3)),
        max_leaves=6,
    )


@st.composite
def _around(draw: st.DrawFn, skeleton: object) -> object:
    """A value shaped like ``skeleton`` (what the part itself writes), emptied or filled by "the user"."""
    if isinstance(skeleton, dict):
        out: dict[str, object] = {}
        for key, value in skeleton.items():
            if draw(st.booleans()):
                out[key] = draw(_around(value))
        out.update(draw(st.dictionaries(_KEY.map(lambda k: "user_" + k), _user_values(), max_size=2)))
        return out
    if isinstance(skeleton, list):
        return draw(st.lists(st.dictionaries(_KEY, _SCALAR, min_size=1, max_size=2), max_size=2))
    return draw(_SCALAR)


def _toml_safe(value: object) -> object:
    """TOML has no null and no mixed arrays of tables and scalars: keep what it can say."""
    if isinstance(value, dict):
        return {k: _toml_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        items = [_toml_safe(v) for v in value]
        if any(isinstance(v, dict) for v in items) and not all(isinstance(v, dict) for v in items):
            return [v for v in items if not isinstance(v, dict)]
        return items
    return value


@st.composite
def config_documents(draw: st.DrawFn, suffix: str, skeleton: dict[str, object]) -> str:
    """A random valid config document for a file ending in ``suffix`` (``.json``, ``.toml``, ``.yaml``).

    Its data mixes the user's own settings with the key paths the part under test writes
    (``skeleton``, learnt from a fresh install): present, empty, or holding the user's entries.
    Its layout is drawn too: indentation, separators, flow or block style, comments, CRLF, a
    missing final newline.
    """
    data = draw(_around(skeleton))
    assert isinstance(data, dict)
    data.update(draw(st.dictionaries(_KEY.map(lambda k: "own_" + k), _user_values(), max_size=3)))
    if suffix == ".json":
        import json

        indent = draw(st.sampled_from([None, 0, 1, 2, 4, "\t"]))
        separators = draw(st.sampled_from([None, (",", ":"), (", ", ": ")]))
        text = json.dumps(data, indent=indent, separators=separators, ensure_ascii=draw(st.booleans()))
    elif suffix == ".toml":
        import tomlkit

        text = tomlkit.dumps(cast("dict[str, object]", _toml_safe(data)))
        if draw(st.booleans()):
            text = "# the user's own settings\n" + text
    else:
        import yaml  # type: ignore[import-untyped]

        text = yaml.safe_dump(
            data,
            default_flow_style=draw(st.sampled_from([None, True, False])),
            indent=draw(st.sampled_from([2, 4])),
            sort_keys=False,
            allow_unicode=draw(st.booleans()),
            explicit_start=draw(st.booleans()),
        )
        if draw(st.booleans()):
            text = "# the user's own settings\n" + text
    ending = draw(st.sampled_from(["keep", "strip", "add"]))
    if ending == "strip":
        text = text.rstrip("\n")
    elif ending == "add" and not text.endswith("\n"):
        text += "\n"
    if draw(st.booleans()) and "\n" in text:
        text = text.replace("\n", "\r\n")
    return text
