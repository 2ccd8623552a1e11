"""Byte-exact edits of JSON configs: add or remove one member or array item, keep every other byte.

Agents' configs are the user's files: reformatting them (``json.load`` then ``json.dump``)
would reorder keys, change indentation and lose the user's layout, and no well-kept JSON library
round-trips text (they all re-serialise). So this module edits the *text*, locating values with
the standard decoder (nested braces and strings are handled), and checks every result by parsing
it again:

* :func:`append_item` appends one item to the array at a key path, creating the missing
  objects and the array as new members;
* :func:`remove_items` removes exactly the items of that array a predicate selects;
* :func:`set_member` and :func:`remove_member` add, replace or remove one member at a key path;
* :func:`value_at` reads what is at a key path; :func:`read_json_text` and
  :func:`write_json_text` read (validating) and atomically replace a config file;
* :class:`JsonFormat` is these functions as the adapter a
  :class:`~funes_core.wiring.configedit.ManagedEntry` edits through.

They all follow one rule, which is what makes an install followed by a removal give back the
original bytes: an entry is **added after the last entry** of its container (with the same
separator the container already uses between entries), and an entry is **removed together with
the separator before it** (or after it, when it is the first entry). What the caller marks as
removable with ``prune=True`` (arrays and objects left empty) goes too, so an object or array
that an insertion created disappears with its last entry. Every result is re-parsed and
compared with the same edit applied to the parsed data; any disagreement raises
:class:`EditError` and nothing is written.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from funes_core.files import atomic_write_text
from funes_core.wiring.configedit.base import Added, EditError, Place

__all__ = [
    "EditError",
    "JsonFormat",
    "KeyPath",
    "append_item",
    "read_json_text",
    "remove_items",
    "remove_member",
    "set_member",
    "value_at",
    "write_json_text",
]

#: A path into a JSON document: object keys (``str``) and array indexes (``int``).
KeyPath = Sequence[str | int]

_WS = " \t\r\n"
_DECODER = json.JSONDecoder()


def _skip_ws(text: str, i: int) -> int:
    while i < len(text) and text[i] in _WS:
        i += 1
    return i


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def _parse_object(text: str) -> dict[str, Any]:
    """``text`` parsed; :class:`EditError` unless it is valid JSON holding an object."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise EditError(f"is not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise EditError("does not hold a JSON object")
    return data


def read_json_text(path: Path) -> str | None:
    """The text of a JSON config file, ``None`` when it does not exist.

    Raises :class:`EditError` when the file is not UTF-8 or not a JSON object: a config that
    cannot be parsed must be reported, never "repaired" by overwriting it.
    """
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise EditError("is not UTF-8 text") from None
    _parse_object(text)
    return text


def write_json_text(path: Path, text: str) -> None:
    """Replace ``path`` atomically, keeping its permissions (new files are private, 0600).

    The text is re-parsed first, so a bug in an edit can never leave a broken config behind. A
    symlinked config (dotfiles kept in a repository) is written through the link: the link
    stays, its target gets the new text.
    """
    _parse_object(text)
    atomic_write_text(path.resolve() if path.is_symlink() else path, text, mode=None)


# -- path-based edits (arrays and members at a key path) -----------------------------------------


@dataclass(frozen=True, slots=True)
class _Entry:
    """One member of an object (``key`` set) or one item of an array (``key`` is ``None``)."""

    key: str | None
    #: Where the entry starts: its key for a member, its value for an item.
    start: int
    #: Where the key ends (``start`` for an item); the text up to ``value_start`` is ``: ``.
    key_end: int
    value_start: int
    value_end: int


@dataclass(frozen=True, slots=True)
class _Container:
    """An object or array in the text: its brackets and its entries, by offset."""

    kind: str  # "{" or "["
    open: int
    close: int
    entries: tuple[_Entry, ...]


def _container(text: str, at: int) -> _Container:
    """The object or array whose opening bracket is at ``at``."""
    kind = text[at]
    if kind not in "{[":
        raise EditError("expected an object or an array")
    closer = "}" if kind == "{" else "]"
    entries: list[_Entry] = []
    i = _skip_ws(text, at + 1)
    if text[i] == closer:
        return _Container(kind, at, i, ())
    while True:
        start = i
        key: str | None = None
        key_end = start
        if kind == "{":
            key, key_end = _DECODER.raw_decode(text, i)
            if not isinstance(key, str):
                raise EditError("expected a string key")
            i = _skip_ws(text, key_end)
            if text[i] != ":":
                raise EditError("expected ':' after a key")
            i = _skip_ws(text, i + 1)
        _, value_end = _DECODER.raw_decode(text, i)
        entries.append(_Entry(key, start, key_end, i, value_end))
        i = _skip_ws(text, value_end)
        if text[i] == ",":
            i = _skip_ws(text, i + 1)
            continue
        if text[i] == closer:
            return _Container(kind, at, i, tuple(entries))
        raise EditError(f"expected ',' or {closer!r} after a value")


def _find(container: _Container, step: str | int) -> _Entry | None:
    """The entry ``step`` names: the *last* member with that key (as JSON parsers read it)."""
    if isinstance(step, str):
        if container.kind != "{":
            raise EditError(f"cannot look up {step!r} in an array")
        return next((e for e in reversed(container.entries) if e.key == step), None)
    if container.kind != "[":
        raise EditError(f"cannot look up item {step} in an object")
    return container.entries[step] if -len(container.entries) <= step < len(container.entries) else None


def _walk(text: str, path: KeyPath) -> tuple[list[_Container], _Entry | None]:
    """The containers along ``path`` (the root first) and the entry at its end (``None``: absent).

    Stops early, with ``None``, where a step is missing; raises :class:`EditError` where a step
    would have to go through something that is not an object or array.
    """
    chain = [_container(text, _skip_ws(text, 0))]
    entry: _Entry | None = None
    for number, step in enumerate(path):
        entry = _find(chain[-1], step)
        if entry is None:
            return chain, None
        if number < len(path) - 1:
            if text[entry.value_start] not in "{[":
                raise EditError(f"{_shown(path[: number + 1])} is not an object or an array")
            chain.append(_container(text, entry.value_start))
    return chain, entry


def _shown(path: KeyPath) -> str:
    return "".join(f"[{step}]" if isinstance(step, int) else f".{step}" for step in path).lstrip(".")


def _separator(text: str, container: _Container) -> str:
    """What goes between two entries of ``container``: the separator it already uses.

    With two entries or more that is the text between the last two (``",\n    "``); with one,
    a comma plus the whitespace before it when that spans lines, else ``", "``.
    """
    entries = container.entries
    if len(entries) >= 2:
        return text[entries[-2].value_end : entries[-1].start]
    lead = text[container.open + 1 : entries[0].start]
    return "," + lead if "\n" in lead else ", "


def _line_indent(text: str, at: int) -> str:
    """The leading whitespace of the line holding offset ``at``."""
    start = text.rfind("\n", 0, at) + 1
    end = start
    while end < len(text) and text[end] in " \t":
        end += 1
    return text[start:end]


def _render(value: Any, *, newline: str, indent: str, unit: str) -> str:
    """``value`` laid out like its neighbours: one line (``unit`` empty) or one member per line."""
    if not unit:
        return _dump(value)
    return json.dumps(value, ensure_ascii=False, indent=unit).replace("\n", newline + indent)


def _add_entry(text: str, container: _Container, key: str | None, value: Any) -> str:
    """``text`` with ``value`` (under ``key`` in an object) added as the container's last entry.

    In a container laid out one entry per line the new entry is too, indented like its
    neighbours (so a Claude Code ``settings.json`` still looks hand-written); in a one-line or
    empty container it is written on one line. Either way it is one span of text, which is
    what lets :func:`_drop_entry` take it out again exactly.
    """
    entries = container.entries
    if not entries:
        head = f"{json.dumps(key, ensure_ascii=False)}: " if key is not None else ""
        at = container.open + 1
        return text[:at] + head + _dump(value) + text[at:]
    sep = _separator(text, container)
    colon = ": "
    if key is not None:
        last = entries[-1]
        between = text[last.key_end : last.value_start]
        colon = between if "\n" not in between else ": "
    head = f"{json.dumps(key, ensure_ascii=False)}{colon}" if key is not None else ""
    unit = ""
    newline = "\r\n" if "\r\n" in sep else "\n"
    indent = sep[sep.rfind("\n") + 1 :] if "\n" in sep else ""
    if "\n" in sep:
        base = _line_indent(text, container.open)
        unit = indent[len(base) :] if indent.startswith(base) and len(indent) > len(base) else "  "
    body = _render(value, newline=newline, indent=indent, unit=unit)
    at = entries[-1].value_end
    return text[:at] + sep + head + body + text[at:]


def _replace_value(text: str, entry: _Entry, value: Any) -> str:
    """``text`` with ``entry``'s value replaced, laid out as the old one was (one line or many)."""
    old = text[entry.value_start : entry.value_end]
    if "\n" not in old:
        return text[: entry.value_start] + _dump(value) + text[entry.value_end :]
    indent = _line_indent(text, entry.start)
    inner = old.split("\n", 2)[1] if old.count("\n") >= 1 else ""
    inner_indent = inner[: len(inner) - len(inner.lstrip(" \t"))]
    unit = (
        inner_indent[len(indent) :]
        if inner_indent.startswith(indent) and len(inner_indent) > len(indent)
        else "  "
    )
    newline = "\r\n" if "\r\n" in old else "\n"
    body = _render(value, newline=newline, indent=indent, unit=unit)
    return text[: entry.value_start] + body + text[entry.value_end :]


def _drop_entry(text: str, container: _Container, entry: _Entry) -> str:
    """``text`` without ``entry``: with the separator before it, else the one after it."""
    index = container.entries.index(entry)
    if index > 0:
        return text[: container.entries[index - 1].value_end] + text[entry.value_end :]
    if index + 1 < len(container.entries):
        return text[: entry.start] + text[container.entries[index + 1].start :]
    return text[: entry.start] + text[entry.value_end :]


def _nest(path: KeyPath, leaf: Any) -> Any:
    """``leaf`` wrapped in new objects, one per key of ``path``."""
    value = leaf
    for step in reversed(path):
        if not isinstance(step, str):
            raise EditError(f"cannot create array item {step}: only object members are created")
        value = {step: value}
    return value


def _create(text: str, path: KeyPath, chain: list[_Container], leaf: Any) -> str:
    """Create the missing tail of ``path`` (below the last container found) holding ``leaf``."""
    missing = path[len(chain) - 1 :]
    first = missing[0]
    if not isinstance(first, str):
        raise EditError(f"{_shown(path[: len(chain)])} has no item {first}")
    return _add_entry(text, chain[-1], first, _nest(missing[1:], leaf))


# -- the same edits on parsed data, to check the text edits against ------------------------------


def _get(data: Any, path: KeyPath) -> Any:
    for step in path:
        data = data[step]
    return data


def _data_set(data: dict[str, Any], path: KeyPath, value: Any) -> None:
    holder: Any = data
    for step in path[:-1]:
        if isinstance(step, str) and step not in holder:
            holder[step] = {}
        holder = holder[step]
    holder[path[-1]] = value


def _data_prune(data: dict[str, Any], path: KeyPath) -> None:
    """Delete ``path`` from ``data``, then every container above it left empty (never the root)."""
    while path:
        holder = _get(data, path[:-1])
        del holder[path[-1]]
        if holder or len(path) == 1:
            return
        path = path[:-1]


def _checked(result: str, expected: Any) -> str:
    if _parse_object(result) != expected:
        raise EditError("the edit would change more than it should; edit the file by hand")
    return result


def _prune_up(text: str, path: KeyPath) -> str:
    """Remove the (empty) container at ``path``, then every container above it left empty."""
    while path:
        chain, entry = _walk(text, path)
        if entry is None:
            return text
        text = _drop_entry(text, chain[-1], entry)
        if len(chain) == 1 or len(chain[-1].entries) > 1:
            return text
        path = path[:-1]
    return text


def _new_file(path: KeyPath, leaf: Any) -> str:
    """The text of a new config holding only ``leaf`` at ``path``, laid out two spaces deep."""
    return json.dumps(_nest(path, leaf), ensure_ascii=False, indent=2) + "\n"


# -- the public functions ------------------------------------------------------------------------


def value_at(text: str | None, path: KeyPath) -> Any:
    """The value at ``path`` in ``text`` (``None`` when the file or any step is absent).

    Raises :class:`EditError` when ``text`` is not a JSON object or a step goes through a value
    that is not an object or array (``hooks`` holding a string, say).
    """
    if text is None:
        return None
    data: Any = _parse_object(text)
    for number, step in enumerate(path):
        if isinstance(step, str):
            if not isinstance(data, dict):
                raise EditError(f"{_shown(path[:number]) or 'the file'} is not an object")
            if step not in data:
                return None
        else:
            if not isinstance(data, list):
                raise EditError(f"{_shown(path[:number])} is not an array")
            if not -len(data) <= step < len(data):
                return None
        data = data[step]
    return data


def append_item(text: str | None, path: KeyPath, item: Any) -> str:
    """``text`` with ``item`` appended to the array at ``path`` (``None`` text: a new file).

    Missing objects along the path, and the array itself, are created as new members holding
    exactly what is needed, so :func:`remove_items` with ``prune=True`` removes them again.
    """
    if not path:
        raise EditError("append_item needs a path to an array")
    if text is None:
        return _new_file(path, [item])
    data = _parse_object(text)
    current = value_at(text, path)
    if current is not None and not isinstance(current, list):
        raise EditError(f"{_shown(path)} is not an array")
    chain, entry = _walk(text, path)
    if entry is None:
        result = _create(text, path, chain, [item])
        _data_set(data, path, [item])
    else:
        result = _add_entry(text, _container(text, entry.value_start), None, item)
        _get(data, path).append(item)
    return _checked(result, data)


def remove_items(text: str, path: KeyPath, predicate: Callable[[Any], bool], *, prune: bool = True) -> str:
    """``text`` without the items of the array at ``path`` for which ``predicate`` is true.

    Every other byte is kept. With ``prune``, an array left empty by the removal is removed,
    and so is every object above it left empty (never the top-level object). Nothing selected,
    or no array there: ``text`` comes back unchanged.
    """
    data = _parse_object(text)
    current = value_at(text, path)
    if not isinstance(current, list):
        if current is not None:
            raise EditError(f"{_shown(path)} is not an array")
        return text
    doomed = [index for index, value in enumerate(current) if predicate(value)]
    if not doomed:
        return text
    for index in reversed(doomed):
        chain, entry = _walk(text, [*path, index])
        assert entry is not None
        text = _drop_entry(text, chain[-1], entry)
    kept = [value for index, value in enumerate(current) if index not in doomed]
    if kept or not prune:
        _data_set(data, path, kept)
        return _checked(text, data)
    _data_prune(data, path)
    return _checked(_prune_up(text, path), data)


def set_member(text: str | None, path: KeyPath, value: Any) -> str:
    """``text`` with the member at ``path`` set to ``value`` (``None`` text: a new file).

    An existing member keeps its place and key; only its value's text is replaced. A missing
    one is added as the last member of its object, creating missing objects above it.
    """
    if not path or not isinstance(path[-1], str):
        raise EditError("set_member needs a path ending in an object key")
    if text is None:
        return _new_file(path, value)
    data = _parse_object(text)
    parent = value_at(text, path[:-1])
    if parent is not None and not isinstance(parent, dict):
        raise EditError(f"{_shown(path[:-1])} is not an object")
    chain, entry = _walk(text, path)
    result = _create(text, path, chain, value) if entry is None else _replace_value(text, entry, value)
    _data_set(data, path, value)
    return _checked(result, data)


def remove_member(text: str, path: KeyPath, *, prune: bool = True) -> str:
    """``text`` without the member at ``path`` (unchanged when it is absent).

    With ``prune``, objects above it left empty are removed too (never the top-level object).
    """
    if not path or not isinstance(path[-1], str):
        raise EditError("remove_member needs a path ending in an object key")
    data = _parse_object(text)
    parent = value_at(text, path[:-1])
    if not isinstance(parent, dict):
        if parent is not None:
            raise EditError(f"{_shown(path[:-1])} is not an object")
        return text
    if path[-1] not in parent:
        return text
    if prune:
        _data_prune(data, path)
        return _checked(_prune_up(text, path), data)
    chain, entry = _walk(text, path)
    assert entry is not None
    del _get(data, path[:-1])[path[-1]]
    return _checked(_drop_entry(text, chain[-1], entry), data)


# -- the adapter (funes_core.wiring.configedit.base.Adapter) ---------------------------------------


def _present(data: Any, path: tuple[str, ...]) -> int:
    """How many steps of ``path`` exist in ``data`` (objects only)."""
    depth = 0
    for step in path:
        if not isinstance(data, dict) or step not in data:
            return depth
        data = data[step]
        depth += 1
    return depth


class JsonFormat:
    """JSON configs for :class:`~funes_core.wiring.configedit.managed.ManagedEntry` (the functions above).

    A member is set with :func:`set_member` (added as the object's last member), a list item is
    appended with :func:`append_item`; both create missing objects and report them, so removal can
    prune exactly what was created and nothing the user had, even when it is empty.
    """

    label = "JSON"

    def parse(self, text: str) -> dict[str, Any]:
        return _parse_object(text)

    def find(self, text: str, place: Place, *, note: str = "") -> list[Any]:
        holder = value_at(text, list(place.path))
        if holder is None:
            return []
        if place.key is None:
            if not isinstance(holder, list):
                raise EditError(f"{_shown(place.path)} is not an array")
            return list(holder)
        if not isinstance(holder, dict):
            raise EditError(f"{_shown(place.path) or 'the file'} is not an object")
        return [holder[place.key]] if place.key in holder else []

    def occupied(self, text: str, place: Place, *, note: str = "") -> bool:
        holder = value_at(text, list(place.path))
        return place.key is not None and isinstance(holder, dict) and place.key in holder

    def add(self, text: str | None, place: Place, value: Any, *, note: str) -> Added:
        depth = 0 if text is None else _present(self.parse(text), place.path)
        created = tuple(place.path[:n] for n in range(depth + 1, len(place.path) + 1))
        if place.key is None:
            return Added(append_item(text, list(place.path), value), created)
        return Added(set_member(text, [*place.path, place.key], value), created)

    def drop(self, text: str, place: Place, ours: Callable[[Any], bool], *, note: str) -> str:
        if place.key is None:
            return remove_items(text, list(place.path), ours, prune=False)
        found = self.find(text, place, note=note)
        if not found or not ours(found[0]):
            return text
        return remove_member(text, [*place.path, place.key], prune=False)

    def prune(self, text: str, container: tuple[str, ...]) -> str:
        if not container or value_at(text, list(container)) not in ({}, []):
            return text
        return remove_member(text, list(container), prune=False)

    def empty(self, text: str) -> bool:
        return self.parse(text) == {}
