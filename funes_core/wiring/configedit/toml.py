"""Byte-exact edits of TOML configs (Codex's ``config.toml``): add and remove funes' entries.

Re-serialising a TOML document, even with a style-preserving library, moves things: tomlkit
puts a new table straight against the next header, adds or drops blank lines at the end of the
file, and mixes line endings; ``codex mcp add`` itself rewrites every ``[mcp_servers.*]`` table
and loses the comments in them. So funes-codex edits the *text*, in two shapes it can always
find and take out again exactly (measured: tomlkit's own add-then-remove changed 3 of 5 sample
files):

* a **block**: one table (``[mcp_servers.funes]``) appended at the end of the file, after a
  blank line, headed by a marker comment line that proves it is ours;
* a **marked line**: one top-level ``key = value  # <marker>`` inserted after the last
  top-level key (top-level keys must come before the first table header);
* an **item**: one ``[[header]]`` table of an array of tables (Mistral Vibe's
  ``[[mcp_servers]]``), appended at the end like a block, with the same marker comment.

Every edit is checked with tomlkit (a round-tripping TOML parser): the result must parse and
mean exactly the original document plus (or minus) our entry, or :class:`TomlEditError` is
raised and nothing is written. A file that does not parse is refused, never repaired.
:class:`TomlFormat` is the adapter a :class:`~funes_core.wiring.configedit.ManagedEntry` edits
through: a member of a table (``Place(("mcp_servers",), "funes")``) is a block, a top-level key
(``Place((), "mcp_optional_startup_grace_ms")``) a marked line, an item of a list
(``Place(("mcp_servers",))``) an item.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import tomlkit
from tomlkit.exceptions import TOMLKitError

from funes_core.wiring.configedit.base import Added, EditError, Place

__all__ = ["Block", "Item", "MarkedLine", "TomlEditError", "TomlFormat", "parse"]

_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


#: The name this module's refusals had before it moved into the core.
TomlEditError = EditError


def parse(text: str) -> dict[str, Any]:
    """``text`` as plain Python data; :class:`TomlEditError` when it is not valid TOML."""
    try:
        return tomlkit.parse(text).unwrap()
    except (TOMLKitError, ValueError) as exc:
        raise TomlEditError(f"is not valid TOML ({exc})") from None


def _newline(text: str) -> str:
    """The file's line ending, judged by its first line (new files get ``\\n``)."""
    first = text.find("\n")
    return "\r\n" if first > 0 and text[first - 1] == "\r" else "\n"


def _key(name: str) -> str:
    return name if _BARE_KEY.fullmatch(name) else tomlkit.string(name).as_string()


def render_value(value: Any) -> str:
    """One TOML value on one line (a mapping becomes an inline table)."""
    if isinstance(value, Mapping):
        table = tomlkit.inline_table()
        table.update(value)
        return str(table.as_string())
    return str(tomlkit.item(value).as_string())


def _lines(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, content)`` of every line; ``end`` is past its newline, ``content`` has none."""
    out: list[tuple[int, int, str]] = []
    start = 0
    while start < len(text):
        newline = text.find("\n", start)
        end = len(text) if newline == -1 else newline + 1
        out.append((start, end, text[start:end].rstrip("\r\n")))
        start = end
    return out


def _get(data: Mapping[str, Any], path: Sequence[str]) -> Any:
    value: Any = data
    for step in path:
        if not isinstance(value, Mapping) or step not in value:
            return None
        value = value[step]
    return value


def _without(data: dict[str, Any], path: Sequence[str], *, prune: bool) -> dict[str, Any]:
    """A copy of ``data`` without ``path``; with ``prune``, tables left empty above it go too."""
    copy: dict[str, Any] = dict(data)
    holder = copy
    chain: list[tuple[dict[str, Any], str]] = []
    for step in path[:-1]:
        inner = dict(holder[step])
        holder[step] = inner
        chain.append((holder, step))
        holder = inner
    holder.pop(path[-1], None)
    if prune:
        for parent, step in reversed(chain):
            if parent[step]:
                break
            del parent[step]
    return copy


def _with(data: dict[str, Any], path: Sequence[str], value: Any) -> dict[str, Any]:
    copy: dict[str, Any] = dict(data)
    holder = copy
    for step in path[:-1]:
        inner = dict(holder.get(step) or {})
        holder[step] = inner
        holder = inner
    holder[path[-1]] = value
    return copy


def _marker_line(marker: str) -> str:
    if not marker.startswith("#") or "\n" in marker:
        raise ValueError("the marker must be one TOML comment line")
    return marker


def _append(text: str, block: str, newline: str) -> str:
    """``text`` with ``block`` at its end after one blank line, in the file's own end-of-file style."""
    if not text:
        return block
    if text.endswith("\n"):
        return text + newline + block
    return text + newline + newline + block[: -len(newline)]  # no newline at the very end, as before


def _cut(text: str, start: int, stop: int) -> str:
    """``text`` without ``[start, stop)`` and the blank line :func:`_append` put before it."""
    newline = _newline(text[start:stop] or text)
    prefix, suffix = text[:start], text[stop:]
    if not suffix and not text.endswith("\n"):
        for cut in (newline + newline, newline):
            if prefix.endswith(cut):
                prefix = prefix[: -len(cut)]
                break
    elif start > 0 and prefix.endswith(newline):
        prefix = prefix[: -len(newline)]
    return prefix + suffix


class _Marked:
    """A table funes appended at the end: ``<marker line>``, the header, one ``key = value`` a line.

    There is no blank line inside; one blank line separates it from what comes before.
    """

    header: str

    def __init__(self, path: Sequence[str], marker: str) -> None:
        self.path = tuple(path)
        self.marker = _marker_line(marker)
        self.dotted = ".".join(_key(step) for step in self.path)

    def render(self, values: Mapping[str, Any], newline: str) -> str:
        lines = [self.marker, self.header, *(f"{_key(k)} = {render_value(v)}" for k, v in values.items())]
        return newline.join(lines) + newline

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Where our blocks are in ``text`` (start of the marker line, end of the last key line)."""
        lines = _lines(text)
        found: list[tuple[int, int]] = []
        for index, (start, _end, content) in enumerate(lines[:-1]):
            if content.rstrip() != self.marker or lines[index + 1][2].strip() != self.header:
                continue
            stop = lines[index + 1][1]
            for _s, end, body in lines[index + 2 :]:
                stripped = body.strip()
                if not stripped or stripped.startswith(("[", "#")):
                    break
                stop = end
            found.append((start, stop))
        return found


class Block(_Marked):
    """Our table at ``path`` (e.g. ``("mcp_servers", "funes")``), kept as a marked block at the end."""

    def __init__(self, path: Sequence[str], marker: str) -> None:
        super().__init__(path, marker)
        self.header = f"[{self.dotted}]"

    def span(self, text: str) -> tuple[int, int] | None:
        """Where our block is in ``text`` (start of its marker line, end of its last line)."""
        found = self.spans(text)
        return found[0] if found else None

    def value(self, text: str | None) -> Any:
        """What the file holds at our path (ours or not); ``None`` when absent."""
        return None if text is None else _get(parse(text), self.path)

    def is_ours(self, text: str | None) -> bool:
        """Whether the table at our path is the one in our marked block."""
        if text is None or self.value(text) is None:
            return False
        span = self.span(text)
        if span is None:
            return False
        start, stop = span
        return bool(_get(parse(text[start:stop]), self.path) == self.value(text))

    def insert(self, text: str | None, values: Mapping[str, Any]) -> str:
        """``text`` with our block appended (the table must not exist yet)."""
        text = text or ""
        before = parse(text)
        if _get(before, self.path) is not None:
            raise TomlEditError(f"{'.'.join(self.path)} is already there")
        result = _append(text, self.render(values, _newline(text)), _newline(text))
        try:
            ok = parse(result) == _with(before, self.path, dict(values))
        except TomlEditError:
            ok = False  # e.g. the parent is an inline table (mcp_servers = {...}): a header cannot extend it
        if not ok:
            raise TomlEditError(
                f"cannot add [{'.'.join(self.path)}] at the end of the file safely (is "
                f"{self.path[0]} an inline table?); add it by hand"
            )
        return result

    def remove(self, text: str) -> str:
        """``text`` without our block (and the blank line we put before it); unchanged if absent."""
        span = self.span(text)
        if span is None:
            return text
        result = _cut(text, *span)
        before = parse(text)
        acceptable = [_without(before, self.path, prune=prune) for prune in (False, True)]
        if parse(result) not in acceptable:
            raise TomlEditError(f"cannot remove [{'.'.join(self.path)}] safely; remove it by hand")
        return result


class Item(_Marked):
    """Our table in the array of tables at ``path`` (``[[mcp_servers]]``), a marked block at the end.

    The user's own items, before or after ours, stay where they are: TOML lets the items of one
    array be defined apart, so the array is the user's items with ours added where the file
    defines it.
    """

    def __init__(self, path: Sequence[str], marker: str) -> None:
        super().__init__(path, marker)
        self.header = f"[[{self.dotted}]]"

    def _array(self, data: Mapping[str, Any]) -> list[Any] | None:
        found = _get(data, self.path)
        if found is None:
            return None
        if not isinstance(found, list) or not all(isinstance(item, dict) for item in found):
            raise TomlEditError(f"{'.'.join(self.path)} is not an array of tables")
        return found

    def items(self, text: str | None) -> list[Any]:
        """The items in our marked blocks that the file's array holds (what is funes' to judge)."""
        if text is None:
            return []
        array = self._array(parse(text)) or []
        out: list[Any] = []
        for start, stop in self.spans(text):
            item = (_get(parse(text[start:stop]), self.path) or [None])[0]
            if item in array:
                out.append(item)
        return out

    def insert(self, text: str | None, values: Mapping[str, Any]) -> str:
        """``text`` with our item appended as the array's last."""
        text = text or ""
        before = parse(text)
        array = self._array(before)
        result = _append(text, self.render(values, _newline(text)), _newline(text))
        try:
            ok = parse(result) == _with(before, self.path, [*(array or []), dict(values)])
        except TomlEditError:
            ok = False  # e.g. an inline array (mcp_servers = [...]): a [[header]] cannot extend it
        if not ok:
            raise TomlEditError(
                f"cannot add [[{'.'.join(self.path)}]] at the end of the file safely (is "
                f"{'.'.join(self.path)} an inline array?); add it by hand"
            )
        return result

    def remove(self, text: str, ours: Callable[[Any], bool]) -> str:
        """``text`` without our blocks whose item ``ours`` accepts; unchanged if there are none."""
        for start, stop in reversed(self.spans(text)):
            item = (_get(parse(text[start:stop]), self.path) or [None])[0]
            before = parse(text)
            array = list(self._array(before) or [])
            if item not in array or not ours(item):
                continue
            array.remove(item)
            result = _cut(text, start, stop)
            if array:
                acceptable = [_with(before, self.path, array)]
            else:  # the last item: the array's key goes (and the tables it alone implied)
                acceptable = [_without(before, self.path, prune=prune) for prune in (False, True)]
            if parse(result) not in acceptable:
                raise TomlEditError(
                    f"cannot remove funes' [[{'.'.join(self.path)}]] safely; remove it by hand"
                )
            text = result
        return text


class MarkedLine:
    """One top-level ``key = value`` that ends with our marker comment."""

    def __init__(self, key: str, marker: str) -> None:
        self.key = key
        self.marker = _marker_line(marker)
        self._pattern = re.compile(rf"^{re.escape(_key(key))}\s*=.*{re.escape(marker)}\s*$")

    def span(self, text: str) -> tuple[int, int] | None:
        for start, end, content in _lines(text):
            if self._pattern.match(content):
                return start, end
        return None

    def is_ours(self, text: str | None) -> bool:
        if text is None or self.key not in parse(text):
            return False
        span = self.span(text)
        return span is not None and parse(text[span[0] : span[1]]).get(self.key) == parse(text)[self.key]

    @staticmethod
    def _first_header(text: str) -> int | None:
        """Offset of the first table header line (one that starts a valid document prefix)."""
        for start, _end, content in _lines(text):
            if content.lstrip().startswith("["):
                try:
                    tomlkit.parse(text[:start])
                except (TOMLKitError, ValueError):
                    continue  # inside a multi-line string or array
                return start
        return None

    def _after_last_key(self, text: str) -> int:
        """Where a new top-level key goes: after the last top-level line that is not a comment."""
        header = self._first_header(text)
        region = text if header is None else text[:header]
        spot = 0
        for _start, end, content in _lines(region):
            stripped = content.strip()
            if stripped and not stripped.startswith("#"):
                spot = end
        return spot

    def insert(self, text: str | None, value: Any) -> str:
        """``text`` with ``key = value  <marker>`` as a new top-level line (the key must be absent)."""
        text = text or ""
        before = parse(text)
        if self.key in before:
            raise TomlEditError(f"{self.key} is already set")
        newline = _newline(text)
        line = f"{_key(self.key)} = {render_value(value)}  {self.marker}"
        expected = _with(before, [self.key], value)
        for spot in dict.fromkeys((self._after_last_key(text), 0)):
            if spot == len(text) and text and not text.endswith("\n"):
                result = text + newline + line
            else:
                result = text[:spot] + line + newline + text[spot:]
            try:
                if parse(result) == expected:
                    return result
            except TomlEditError:
                continue
        raise TomlEditError(f"cannot add {self.key} safely; add it by hand")

    def remove(self, text: str) -> str:
        """``text`` without our line; unchanged when it is not there."""
        span = self.span(text)
        if span is None:
            return text
        start, stop = span
        if stop == len(text) and not text.endswith("\n"):
            newline = _newline(text)
            start = max(0, start - len(newline)) if text[:start].endswith(newline) else start
        result = text[:start] + text[stop:]
        before = parse(text)
        if parse(result) != _without(before, [self.key], prune=False):
            raise TomlEditError(f"cannot remove {self.key} safely; remove it by hand")
        return result


class TomlFormat:
    """TOML configs for :class:`~funes_core.wiring.configedit.ManagedEntry` (see the module docstring).

    The entry's ``note`` is the marker comment that proves a block or line is funes'; only what
    carries it is reported by :meth:`find` and ever removed.
    """

    label = "TOML"

    def parse(self, text: str) -> dict[str, Any]:
        return parse(text)

    @staticmethod
    def _shape(place: Place, note: str) -> Block | MarkedLine | Item:
        marker = note if note.startswith("#") else f"# {note}"
        if place.key is None:
            if not place.path:
                raise EditError("a TOML document is a table, not a list")
            return Item(place.path, marker)
        if place.path:
            return Block((*place.path, place.key), marker)
        return MarkedLine(place.key, marker)

    def find(self, text: str, place: Place, *, note: str) -> list[Any]:
        shape = self._shape(place, note)
        if isinstance(shape, Item):
            return shape.items(text)
        if not shape.is_ours(text):
            return []
        if isinstance(shape, Block):
            return [shape.value(text)]
        return [parse(text)[shape.key]]

    def occupied(self, text: str, place: Place, *, note: str) -> bool:
        return place.key is not None and _get(parse(text), (*place.path, place.key)) is not None

    def add(self, text: str | None, place: Place, value: Any, *, note: str) -> Added:
        shape = self._shape(place, note)
        before = parse(text or "")
        created = tuple(
            place.path[:n] for n in range(1, len(place.path) + 1) if _get(before, place.path[:n]) is None
        )
        return Added(shape.insert(text, value), created)

    def drop(self, text: str, place: Place, ours: Callable[[Any], bool], *, note: str) -> str:
        shape = self._shape(place, note)
        if isinstance(shape, Item):
            return shape.remove(text, ours)
        found = self.find(text, place, note=note)
        if not found or not ours(found[0]):
            return text
        return shape.remove(text)

    def prune(self, text: str, container: tuple[str, ...]) -> str:
        # A block removes its own header; a super-table (``mcp_servers``) it implied has no text.
        return text

    def empty(self, text: str) -> bool:
        return not text.strip() or parse(text) == {}
