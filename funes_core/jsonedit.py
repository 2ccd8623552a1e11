"""Add and remove one member of a JSON config without touching any other byte.

Agents' configs are the user's files: reformatting them (``json.load`` then ``json.dump``)
would reorder keys, change indentation and lose the user's layout. Integrations (funes-echo is
the worked example) use this module, part of the core's public API, to insert
its member as **one new line right after the opening brace** of the target object::

    {
      "hooks": {"funes": {"on": "turn_end", "run": [...], "managed_by": "funes-echo"}},
      "theme": "dark",
      ...

and removes exactly that line again (the JSON value is measured with the standard decoder, so
nested braces and strings are handled). The ``managed_by`` marker, always the value's last key,
is how removal finds the line and knows it is ours. If the user reformatted the file since, the
member is removed structurally instead (their other members untouched), and the result is
always re-parsed and compared before anything is written.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["EditError", "JsonFile", "Member"]

_WS = " \t\r\n"
_DECODER = json.JSONDecoder()


class EditError(ValueError):
    """The file is not a JSON object we can edit safely; the message says why (no path)."""


@dataclass(frozen=True, slots=True)
class Member:
    """One ``"key": value`` of an object, as offsets into the text."""

    key: str
    key_start: int
    value_start: int
    value_end: int


def _skip_ws(text: str, i: int) -> int:
    while i < len(text) and text[i] in _WS:
        i += 1
    return i


def _members(text: str, open_brace: int) -> tuple[list[Member], int]:
    """The members of the object whose ``{`` is at ``open_brace``, and the index of its ``}``."""
    members: list[Member] = []
    i = _skip_ws(text, open_brace + 1)
    if text[i] == "}":
        return members, i
    while True:
        key_start = i
        key, i = _DECODER.raw_decode(text, i)
        i = _skip_ws(text, i)
        if text[i] != ":":
            raise EditError("expected ':' after a key")
        value_start = _skip_ws(text, i + 1)
        _, value_end = _DECODER.raw_decode(text, value_start)
        members.append(Member(key, key_start, value_start, value_end))
        i = _skip_ws(text, value_end)
        if text[i] == ",":
            i = _skip_ws(text, i + 1)
            continue
        if text[i] == "}":
            return members, i
        raise EditError("expected ',' or '}' after a value")


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


class JsonFile:
    """Byte-preserving edits of one member ``parent.key`` in a JSON config file.

    ``marker`` is a ``(key, value)`` pair that every value we write ends with; it proves a member
    is ours. ``parent`` is a top-level key holding an object (created when missing).
    """

    def __init__(self, path: Path, parent: str, key: str, marker: tuple[str, str]) -> None:
        self.path = path
        self.parent = parent
        self.key = key
        self.marker = marker

    # -- reading -------------------------------------------------------------------------------

    def read(self) -> str | None:
        """The file's text, ``None`` when it does not exist; :class:`EditError` when unusable."""
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return None
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise EditError("is not UTF-8 text") from None
        self._parse(text)
        return text

    @staticmethod
    def _parse(text: str) -> dict[str, Any]:
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise EditError(f"is not valid JSON ({exc})") from None
        if not isinstance(data, dict):
            raise EditError("does not hold a JSON object")
        return data

    def current(self, text: str | None) -> Any:
        """The value at ``parent.key`` (``None`` when absent)."""
        if text is None:
            return None
        parent = self._parse(text).get(self.parent)
        if parent is not None and not isinstance(parent, dict):
            raise EditError(f"{self.parent!r} is not an object")
        return parent.get(self.key) if parent else None

    def is_ours(self, value: Any) -> bool:
        return isinstance(value, dict) and value.get(self.marker[0]) == self.marker[1]

    # -- editing -------------------------------------------------------------------------------

    def insert(self, text: str | None, value: dict[str, Any]) -> str:
        """``text`` with ``parent.key = value`` added as one line (the member must not exist)."""
        if text is None:
            text = "{}\n"
        data = self._parse(text)
        top = _skip_ws(text, 0)
        members, _close = _members(text, top)
        target = next((m for m in reversed(members) if m.key == self.parent), None)
        if target is None:
            key, item, brace, inner = self.parent, {self.key: value}, top, members
            indent = "  "
        else:
            if not isinstance(data[self.parent], dict):
                raise EditError(f"{self.parent!r} is not an object")
            key, item, brace = self.key, value, target.value_start
            inner, _ = _members(text, brace)
            indent = "    "
        if inner:
            first = inner[0].key_start
            line_start = text.rfind("\n", 0, first) + 1
            if line_start > brace and not text[line_start:first].strip():
                indent = text[line_start:first]
        line = f"\n{indent}{json.dumps(key, ensure_ascii=False)}: {_dump(item)}{',' if inner else ''}"
        result = text[: brace + 1] + line + text[brace + 1 :]
        self._parse(result)
        return result

    def remove(self, text: str) -> str:
        """``text`` without our ``parent.key`` member; exact when it is still on its own line."""
        data = self._parse(text)
        parent = data.get(self.parent)
        if not isinstance(parent, dict) or self.key not in parent:
            return text
        left = {k: v for k, v in parent.items() if k != self.key}
        rest = {k: v for k, v in data.items() if k != self.parent}
        acceptable = [{**rest, self.parent: left}]
        if not left:
            acceptable.append(rest)  # the whole parent line was ours
        exact = self._remove_line(text)
        if exact is not None and self._parse(exact) in acceptable:
            return exact
        return self._remove_structural(text, data, left)

    def _remove_line(self, text: str) -> str | None:
        """Remove the line we inserted (found through the marker); ``None`` when it is not intact."""
        needle = _dump(dict([self.marker]))[1:-1]  # '"managed_by": "funes-echo"'
        at = text.find(needle)
        while at != -1:
            newline = text.rfind("\n", 0, at)
            if newline != -1:
                start = _skip_ws(text, newline + 1)
                try:
                    key, after_key = _DECODER.raw_decode(text, start)
                except ValueError:
                    key, after_key = None, start
                if key in (self.parent, self.key) and text.startswith(": ", after_key):
                    try:
                        value, end = _DECODER.raw_decode(text, after_key + 2)
                    except ValueError:
                        value, end = None, after_key
                    if key == self.key:
                        ours = self.is_ours(value)
                    else:
                        ours = isinstance(value, dict) and list(value) == [self.key]
                        ours = ours and self.is_ours(value[self.key])
                    if ours and "\n" not in text[newline + 1 : end]:
                        if end < len(text) and text[end] == ",":
                            end += 1
                        return text[:newline] + text[end:]
            at = text.find(needle, at + 1)
        return None

    def _remove_structural(self, text: str, data: dict[str, Any], parent_left: dict[str, Any]) -> str:
        """Remove the member by offsets when the user reformatted the file since we wrote it."""
        top = _skip_ws(text, 0)
        members, _ = _members(text, top)
        holder = next((m for m in reversed(members) if m.key == self.parent), None)
        if holder is None:
            return text
        inner, close = _members(text, holder.value_start)
        index = next((i for i, m in enumerate(inner) if m.key == self.key), None)
        if index is None:
            return text
        me = inner[index]
        if index + 1 < len(inner):
            result = text[: me.key_start] + text[inner[index + 1].key_start :]
        elif index > 0:
            result = text[: inner[index - 1].value_end] + text[me.value_end :]
        else:
            result = text[: holder.value_start + 1] + text[close:]
        expected = dict(data)
        expected[self.parent] = parent_left
        if self._parse(result) != expected:
            raise EditError(f"cannot remove {self.parent}.{self.key} safely; edit the file by hand")
        return result

    # -- writing -------------------------------------------------------------------------------

    def write(self, text: str) -> None:
        """Replace the file atomically, keeping its permissions (new files are private, 0600)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            mode = self.path.stat().st_mode & 0o777
        except FileNotFoundError:
            mode = 0o600
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=f".{self.path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
            os.chmod(tmp, mode)
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
