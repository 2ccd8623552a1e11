"""Add and remove one entry of the ``packages`` array of pi's ``settings.json``, byte for byte.

``pi install <dir>`` records a local package as a string in ``packages``, but it rewrites the
whole file as it does (``JSON.stringify`` with two-space indentation, no final newline) and
``pi remove`` leaves ``"packages": []`` behind, so neither can give the user their file back
unchanged. funes therefore makes the same edit itself, the way :mod:`funes_core.host.configedit.json` edits
objects: it inserts the entry as the array's first element (on its own line when the array is
laid out one element per line) and later removes exactly what it inserted. When the file did
not exist, or had no ``packages`` member, what funes created is recorded by the caller
(:class:`Created`) so removal can delete it again instead of leaving an empty member behind.

Every result is parsed again and compared with the intended data before it is returned, so an
edit can never silently damage the file; anything unexpected raises
:class:`funes_core.host.configedit.json.EditError`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from funes_core import EditError, atomic_write_text

__all__ = ["Created", "PackagesFile", "Span"]

_WS = " \t\r\n"
_DECODER = json.JSONDecoder()
KEY = "packages"


class Created(StrEnum):
    """What an insertion had to create, so the removal can take it away again."""

    NOTHING = "nothing"
    MEMBER = "member"  # the "packages" member did not exist
    FILE = "file"  # settings.json did not exist


@dataclass(frozen=True, slots=True)
class Span:
    """Where one JSON value sits in the text: ``text[start:end]``."""

    start: int
    end: int


def _skip_ws(text: str, i: int) -> int:
    while i < len(text) and text[i] in _WS:
        i += 1
    return i


def _value(text: str, i: int) -> int:
    """The end offset of the JSON value starting at ``i``."""
    try:
        _, end = _DECODER.raw_decode(text, i)
    except ValueError as exc:
        raise EditError(f"is not valid JSON ({exc})") from None
    return int(end)


def _members(text: str, brace: int) -> tuple[list[tuple[str, Span, Span]], int]:
    """``(key, key span, value span)`` of the object at ``brace``, and the offset of its ``}``."""
    members: list[tuple[str, Span, Span]] = []
    i = _skip_ws(text, brace + 1)
    if text[i] == "}":
        return members, i
    while True:
        key, key_end = _DECODER.raw_decode(text, i)
        colon = _skip_ws(text, key_end)
        if text[colon] != ":":
            raise EditError("expected ':' after a key")
        start = _skip_ws(text, colon + 1)
        end = _value(text, start)
        members.append((str(key), Span(i, key_end), Span(start, end)))
        i = _skip_ws(text, end)
        if text[i] == ",":
            i = _skip_ws(text, i + 1)
            continue
        if text[i] == "}":
            return members, i
        raise EditError("expected ',' or '}' after a value")


def _elements(text: str, bracket: int) -> list[Span]:
    """The spans of the elements of the array whose ``[`` is at ``bracket``."""
    spans: list[Span] = []
    i = _skip_ws(text, bracket + 1)
    if text[i] == "]":
        return spans
    while True:
        end = _value(text, i)
        spans.append(Span(i, end))
        i = _skip_ws(text, end)
        if text[i] == ",":
            i = _skip_ws(text, i + 1)
            continue
        if text[i] == "]":
            return spans
        raise EditError("expected ',' or ']' after an array element")


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


class PackagesFile:
    """Byte-preserving edits of one string entry of ``packages`` in pi's ``settings.json``."""

    def __init__(self, path: Path) -> None:
        self.path = path

    # -- reading -------------------------------------------------------------------------------

    def read(self) -> str | None:
        """The file's text (``None`` when missing); :class:`EditError` when it cannot be edited."""
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise EditError(f"cannot be read ({exc.strerror or exc})") from None
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise EditError("is not UTF-8 text") from None
        self.packages(text)
        return text

    @staticmethod
    def parse(text: str) -> dict[str, Any]:
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise EditError(f"is not valid JSON ({exc})") from None
        if not isinstance(data, dict):
            raise EditError("does not hold a JSON object")
        return data

    def packages(self, text: str | None) -> list[Any]:
        """The ``packages`` array (``[]`` when absent); :class:`EditError` when it is no array."""
        if text is None:
            return []
        value = self.parse(text).get(KEY, [])
        if not isinstance(value, list):
            raise EditError(f"{KEY!r} is not an array")
        return value

    def _locate(self, text: str) -> tuple[int, list[tuple[str, Span, Span]], Span | None]:
        """The top-level ``{``, its members, and the span of the (last) ``packages`` value."""
        top = _skip_ws(text, 0)
        members, _ = _members(text, top)
        holder = next((value for key, _, value in reversed(members) if key == KEY), None)
        return top, members, holder

    # -- editing -------------------------------------------------------------------------------

    @staticmethod
    def fresh(entry: str) -> str:
        """The whole file funes writes when pi has no ``settings.json`` yet."""
        return "{\n  " + _dump(KEY) + ": [" + _dump(entry) + "]\n}\n"

    def insert(self, text: str | None, entry: str) -> tuple[str, Created]:
        """``text`` with ``entry`` as the first element of ``packages``, and what was created."""
        if text is None:
            return self.fresh(entry), Created.FILE
        data = self.parse(text)
        before = self.packages(text)
        token = _dump(entry)
        top, members, holder = self._locate(text)
        if holder is None:
            indent = "  "
            if members:
                first = members[0][1].start
                line_start = text.rfind("\n", 0, first) + 1
                if line_start > top and not text[line_start:first].strip():
                    indent = text[line_start:first]
            line = f"\n{indent}{_dump(KEY)}: [{token}]{',' if members else ''}"
            result, created = text[: top + 1] + line + text[top + 1 :], Created.MEMBER
        else:
            bracket = holder.start
            elements = _elements(text, bracket)
            if not elements:
                piece = token
            else:
                first = elements[0].start
                gap = text[bracket + 1 : first]
                if "\n" in gap and not gap.strip():
                    piece = "\n" + gap[gap.rfind("\n") + 1 :] + token + ","
                else:
                    piece = token + ", "
            result, created = text[: bracket + 1] + piece + text[bracket + 1 :], Created.NOTHING
        expected = {**data, KEY: [entry, *before]}
        if self.parse(result) != expected:
            raise EditError(f"cannot add to {KEY!r} safely; edit the file by hand")
        return result, created

    def remove(self, text: str, matches: list[int], created: Created) -> str | None:
        """``text`` without the elements of ``packages`` at the indices ``matches``.

        ``None`` means the file should be deleted (funes created it and nothing else is left).
        With ``created`` = ``MEMBER`` (or ``FILE``) a ``packages`` member left empty is removed
        too, its line included.
        """
        data = self.parse(text)
        values = self.packages(text)
        if not matches:
            return text
        dropped = set(matches)
        kept = [v for i, v in enumerate(values) if i not in dropped]
        result = text
        for index in sorted(dropped, reverse=True):
            result = self._drop_element(result, index)
        if created is not Created.NOTHING and not kept:
            result = self._drop_member(result)
            rest = {k: v for k, v in data.items() if k != KEY}
            if created is Created.FILE and not rest:
                return None
            if self.parse(result) != rest:
                raise EditError(f"cannot remove {KEY!r} safely; edit the file by hand")
            return result
        if self.parse(result) != {**data, KEY: kept}:
            raise EditError(f"cannot remove an entry of {KEY!r} safely; edit the file by hand")
        return result

    def _drop_element(self, text: str, index: int) -> str:
        """Remove one element, undoing exactly what :meth:`insert` adds when the layout is intact."""
        _, _, holder = self._locate(text)
        if holder is None:
            return text
        bracket = holder.start
        elements = _elements(text, bracket)
        me = elements[index]
        after = _skip_ws(text, me.end)
        if index > 0:
            # Not where funes puts it (someone moved it): take it with the comma before it.
            return text[: elements[index - 1].end] + text[me.end :]
        if len(elements) == 1:
            gap = text[bracket + 1 : me.start]
            start = bracket + 1 if "\n" in gap and not gap.strip() else me.start
            return text[:start] + text[me.end :]
        # The first of several: undo "\n<indent><token>," or "<token>, ".
        gap = text[bracket + 1 : me.start]
        comma = after if text[after : after + 1] == "," else None
        if comma is not None and "\n" in gap and not gap.strip():
            return text[: bracket + 1] + text[comma + 1 :]
        if comma is not None and gap == "" and text[comma + 1 : comma + 2] == " ":
            return text[: me.start] + text[comma + 2 :]
        return text[: me.start] + text[elements[1].start :]

    def _drop_member(self, text: str) -> str:
        """Remove the whole ``packages`` member (its line too, when it is on a line of its own)."""
        top = _skip_ws(text, 0)
        members, close = _members(text, top)
        index = next((i for i in range(len(members) - 1, -1, -1) if members[i][0] == KEY), None)
        if index is None:
            return text
        key_span, value_span = members[index][1], members[index][2]
        end = _skip_ws(text, value_span.end)
        has_comma = text[end : end + 1] == ","
        line_start = text.rfind("\n", 0, key_span.start)
        if index == 0 and line_start > top and not text[line_start + 1 : key_span.start].strip():
            # What insert() wrote: "\n<indent>"packages": [...]", plus a comma when members follow.
            candidate = text[:line_start] + text[end + 1 if has_comma else value_span.end :]
            try:
                if self.parse(candidate) == {k: v for k, v in self.parse(text).items() if k != KEY}:
                    return candidate
            except EditError:
                pass
        if index + 1 < len(members):
            return text[: key_span.start] + text[members[index + 1][1].start :]
        if index > 0:
            return text[: members[index - 1][2].end] + text[value_span.end :]
        return text[: top + 1] + text[close:]

    # -- writing -------------------------------------------------------------------------------

    def write(self, text: str) -> None:
        """Replace the file atomically, keeping its permissions (a new file gets 0600)."""
        atomic_write_text(self.path, text, mode=None)
