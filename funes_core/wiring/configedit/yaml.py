"""Byte-exact edits of YAML configs (Hermes' ``config.yaml``): add one funes-owned member, remove it.

A YAML library that re-emits the document (Hermes' own ``hermes mcp add`` does) loses the user's
comments, quoting and layout; even ruamel.yaml's round trip, the best there is, changed 6 of 8
sample files (sequence indentation, spacing before comments, CRLF, the final newline, ``---``).
funes instead parses the file only to *locate* things (PyYAML's node marks give exact character
offsets; PyYAML is also what Hermes loads its config with, so YAML 1.1 rules apply) and edits the
text around them:

* in a block collection, funes' member is one line, inserted right before the collection's first
  entry at the same indentation and ending with the mark comment (``# funes-hermes``); a missing
  parent is created as marked header lines;
* in a flow collection (``mcp_servers: {}``, ``on_session_end: [...]``) it is inserted right after
  the opening bracket, followed by ``", "`` when the collection was not empty.

The caller decides from a member's value (``ours``) whether it is funes', so its entries are found
even after Hermes re-wrote the file in its own style. Removal deletes exactly what insertion added,
including headers funes created that are empty again, so remove-after-add gives back the original
bytes; a member in another layout loses its whole lines. Every edit is checked by parsing the
result: unless the data changed by exactly funes' member, the edit is refused
(:class:`EditError`) and the file is left alone. :class:`YamlFormat` is the adapter a
:class:`~funes_core.wiring.configedit.ManagedEntry` edits through.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import yaml  # type: ignore[import-untyped]
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode  # type: ignore[import-untyped]

from funes_core.wiring.configedit.base import Added, EditError, Place

__all__ = [
    "MARK",
    "EditError",
    "Found",
    "Member",
    "find",
    "flow",
    "foreign",
    "insert",
    "parse",
    "remove",
]

#: Ends every block-style line funes writes (unless a member names another mark).
MARK = "# funes-hermes"

_STR = "tag:yaml.org,2002:str"
_NULL = "tag:yaml.org,2002:null"
_PLAIN_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
#: Plain words YAML 1.1 (PyYAML) would read as something other than a string.
_SPECIAL_WORDS = frozenset({"y", "n", "yes", "no", "on", "off", "true", "false", "null"})


class _NotOurs(Exception):
    pass


@dataclass(frozen=True, slots=True)
class Member:
    """One funes-owned member: ``key: value`` of a mapping, or (``key`` is ``None``) an item of a list.

    ``path`` names the containers from the top of the document, e.g. ``("mcp_servers",)`` or
    ``("hooks", "on_session_end")``; the innermost one is a mapping when ``key`` is set, else a list.
    """

    path: tuple[str, ...]
    key: str | None
    value: dict[str, Any]
    #: The comment ending every block-style line funes writes for this member.
    mark: str = MARK

    def text(self) -> str:
        """The member as funes writes it (flow style, one line)."""
        return _member_text(self.key, self.value)


@dataclass(frozen=True, slots=True)
class Found:
    """A funes-owned member in a file: its value and where its text starts."""

    value: dict[str, Any]
    start: int


# -- rendering ----------------------------------------------------------------------------------


def _scalar(text: str) -> str:
    """A double-quoted YAML scalar; everything outside printable ASCII is escaped."""
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif 0x20 <= code < 0x7F:
            out.append(ch)
        elif code <= 0xFF:
            out.append(f"\\x{code:02x}")
        elif code <= 0xFFFF:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    out.append('"')
    return "".join(out)


def _key(name: str) -> str:
    if _PLAIN_KEY.fullmatch(name) and name.lower() not in _SPECIAL_WORDS:
        return name
    return _scalar(name)


def flow(value: Any) -> str:
    """``value`` (strings, lists and string-keyed dicts of them) as one line of flow YAML."""
    if isinstance(value, str):
        return _scalar(value)
    if isinstance(value, list):
        return "[" + ", ".join(flow(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_key(k)}: {flow(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"cannot render {type(value).__name__} in flow YAML")


def _member_text(key: str | None, value: dict[str, Any]) -> str:
    return flow(value) if key is None else f"{_key(key)}: {flow(value)}"


def _flow_chain(rest: tuple[str, ...], member: Member) -> str:
    """The missing part of ``member``'s path, with the member inside, in flow style."""
    if not rest:
        return member.text()
    inner = _flow_chain(rest[1:], member)
    if len(rest) == 1 and member.key is None:
        return f"{_key(rest[0])}: [{inner}]"
    return f"{_key(rest[0])}: {{{inner}}}"


def _block_lines(rest: tuple[str, ...], member: Member) -> list[str]:
    """The missing part of ``member``'s path, with the member, as marked block lines (relative indent)."""
    lines = [" " * (2 * depth) + f"{_key(name)}:  {member.mark}" for depth, name in enumerate(rest)]
    prefix = "" if member.key is not None else "- "
    lines.append(" " * (2 * len(rest)) + f"{prefix}{member.text()}  {member.mark}")
    return lines


# -- parsing ------------------------------------------------------------------------------------


def _problem(exc: yaml.YAMLError) -> str:
    if isinstance(exc, yaml.MarkedYAMLError) and exc.problem:
        where = f" (line {exc.problem_mark.line + 1})" if exc.problem_mark is not None else ""
        return f"{exc.problem}{where}"
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def parse(text: str) -> tuple[MappingNode | None, dict[str, Any]]:
    """The top node (``None`` for an empty document) and the data Hermes would load from ``text``."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.load(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        raise EditError(f"is not valid YAML: {_problem(exc)}") from None
    if node is None:
        return None, {}
    if not isinstance(node, MappingNode) or not isinstance(data, dict):
        raise EditError("does not hold a YAML mapping (key: value settings)")
    return node, data


def _pair(mapping: MappingNode, key: str) -> tuple[ScalarNode, Node] | None:
    """The last ``key: value`` pair of ``mapping`` named ``key`` (the one YAML loaders keep)."""
    hit: tuple[ScalarNode, Node] | None = None
    for k, v in mapping.value:
        if isinstance(k, ScalarNode) and k.tag == _STR and k.value == key:
            hit = (k, v)
    return hit


def _empty(node: Node) -> bool:
    """An implicit null: ``key:`` with nothing after it."""
    return isinstance(node, ScalarNode) and node.tag == _NULL and node.value == ""


def _value(node: Node) -> Any:
    """What a YAML loader makes of ``node`` (``_NotOurs`` for anything PyYAML's safe loader refuses)."""
    try:
        return yaml.SafeLoader("").construct_object(node, deep=True)
    except yaml.YAMLError:
        raise _NotOurs from None


def _written_by_funes(key: str | None, value: Any) -> str | None:
    """The text funes writes for this member, or ``None`` when funes would never write ``value``."""
    try:
        return _member_text(key, value)
    except TypeError:
        return None


def _newline(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def _line_start(text: str, index: int) -> int:
    start = text.rfind("\n", 0, index) + 1
    return 1 if start == 0 and text.startswith("\ufeff") else start


def _line(text: str, index: int) -> str:
    end = text.find("\n", index)
    return text[_line_start(text, index) : len(text) if end < 0 else end].rstrip("\r")


def _drop_line(text: str, index: int) -> str:
    """``text`` without the line holding ``index`` (and its line break)."""
    start = _line_start(text, index)
    end = text.find("\n", index)
    if end >= 0:
        return text[:start] + text[end + 1 :]
    cut = start  # the last line, with no line break of its own: drop the one before it
    if cut > 0 and text[cut - 1] == "\n":
        cut -= 1
        if cut > 0 and text[cut - 1] == "\r":
            cut -= 1
    return text[:cut]


# -- finding ------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Hit:
    value: dict[str, Any]
    start: int
    end: int
    block: bool
    #: Exactly as funes writes it (one marked line in block style); otherwise the file was
    #: re-written since (Hermes' own config writer does that) and the member spans other lines.
    verbatim: bool
    container: Node


def _container(root: MappingNode | None, path: tuple[str, ...]) -> tuple[Node | None, list[Node]]:
    """The innermost container of ``path`` (``None`` if absent or empty) and the nodes above it."""
    node: Node | None = root
    chain: list[Node] = []
    for key in path:
        if not isinstance(node, MappingNode):
            return None, chain
        chain.append(node)
        hit = _pair(node, key)
        if hit is None:
            return None, chain
        node = hit[1]
    return node, chain


def _hits(
    text: str, root: MappingNode | None, member: Member, ours: Callable[[dict[str, Any]], bool]
) -> list[_Hit]:
    """funes-owned members at ``member``'s place: same key (or list) and a value ``ours`` accepts."""
    node, _ = _container(root, member.path)
    if member.key is not None and isinstance(node, MappingNode):
        candidates = [
            (k.start_mark.index, v)
            for k, v in node.value
            if isinstance(k, ScalarNode) and k.tag == _STR and k.value == member.key
        ]
    elif member.key is None and isinstance(node, SequenceNode):
        candidates = [(item.start_mark.index, item) for item in node.value]
    else:
        return []
    block = not node.flow_style
    found: list[_Hit] = []
    for start, value_node in candidates:
        try:
            value = _value(value_node)
        except _NotOurs:
            continue
        if not isinstance(value, dict) or not ours(value):
            continue
        end = value_node.end_mark.index
        written = _written_by_funes(member.key, value)
        verbatim = written is not None and text[start:end] == written
        if verbatim and block:
            prefix = "" if member.key is not None else "- "
            verbatim = _line(text, start).strip() == f"{prefix}{written}  {member.mark}"
        found.append(_Hit(value, start, end, block, verbatim, node))
    return found


def find(text: str, member: Member, ours: Callable[[dict[str, Any]], bool]) -> list[Found]:
    """Every funes-owned member at ``member``'s place in ``text`` (raises :class:`EditError`)."""
    root, _ = parse(text)
    return [Found(h.value, h.start) for h in _hits(text, root, member, ours)]


def foreign(text: str, member: Member, ours: Callable[[dict[str, Any]], bool]) -> bool:
    """Whether a member with ``member``'s key exists that funes did not write (mappings only)."""
    root, _ = parse(text)
    node, _ = _container(root, member.path)
    if member.key is None or not isinstance(node, MappingNode) or _pair(node, member.key) is None:
        return False
    return not _hits(text, root, member, ours)


# -- checking -----------------------------------------------------------------------------------


def _normal(data: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    """``data`` with empty containers along ``path`` dropped (``key:`` and no key read the same)."""
    out = copy.deepcopy(data)
    for depth in range(len(path), 0, -1):
        parent: Any = out
        for key in path[: depth - 1]:
            parent = parent.get(key) if isinstance(parent, dict) else None
        if isinstance(parent, dict) and path[depth - 1] in parent:
            value = parent[path[depth - 1]]
            if value is None or value == {} or value == []:
                del parent[path[depth - 1]]
    return out


def _with(data: dict[str, Any], member: Member) -> dict[str, Any]:
    out = copy.deepcopy(data)
    node: Any = out
    for depth, key in enumerate(member.path):
        last = depth == len(member.path) - 1
        if node.get(key) is None:
            node[key] = [] if last and member.key is None else {}
        node = node[key]
    if member.key is None:
        node.insert(0, copy.deepcopy(member.value))
    else:
        node[member.key] = copy.deepcopy(member.value)
    return out


def _without(data: dict[str, Any], member: Member, values: list[dict[str, Any]]) -> dict[str, Any]:
    out = copy.deepcopy(data)
    node: Any = out
    for key in member.path:
        node = node.get(key) if isinstance(node, dict) else None
    if member.key is None and isinstance(node, list):
        for value in values:
            if value in node:
                node.remove(value)
    elif member.key is not None and isinstance(node, dict):
        node.pop(member.key, None)
    return out


def _check(new_text: str, expected: dict[str, Any], path: tuple[str, ...]) -> None:
    try:
        _, got = parse(new_text)
    except EditError:
        got = None
    if got is None or _normal(got, path) != _normal(expected, path):
        raise EditError(
            "cannot be edited without rewriting it (an unusual layout around "
            f"'{'.'.join(path)}'); add funes' entry by hand or reformat that part"
        )


# -- inserting ----------------------------------------------------------------------------------


def _indent_of(text: str, index: int) -> int:
    return index - _line_start(text, index)


def insert(text: str, member: Member) -> str:
    """``text`` with ``member`` added (see the module docstring); raises :class:`EditError`."""
    root, data = parse(text)
    nl = _newline(text)
    new: str | None = None
    if root is None:
        lines = _block_lines(member.path, member)
        if text == "" or text.endswith("\n"):
            new = text + "".join(line + nl for line in lines)
        else:  # a comments-only file with no final line break: keep it that way
            new = text + nl + nl.join(lines)
    else:
        node: Node = root
        for depth, key in enumerate(member.path):
            hit = _pair(node, key)
            if hit is None:
                new = _add(text, node, member.path[depth:], member, nl)
                break
            k, v = hit
            if _empty(v):
                new = _add_under(text, k, member.path[depth + 1 :], member, nl)
                break
            want_list = depth == len(member.path) - 1 and member.key is None
            kind = SequenceNode if want_list else MappingNode
            if not isinstance(v, kind):
                shown = ".".join(member.path[: depth + 1])
                raise EditError(f"'{shown}' is not a {'list' if want_list else 'mapping'}")
            node = v
        else:
            new = _add(text, node, (), member, nl)
    assert new is not None
    _check(new, _with(data, member), member.path)
    return new


def _add(text: str, container: Node, rest: tuple[str, ...], member: Member, nl: str) -> str:
    """Add ``rest`` + ``member`` as the first entry of an existing mapping or list."""
    start = container.start_mark.index
    if container.flow_style:
        inner = _flow_chain(rest, member)
        at = start + 1
        separator = ", " if container.value else ""
        return text[:at] + inner + separator + text[at:]
    indent = " " * _indent_of(text, start)
    lines = _block_lines(rest, member)
    inserted = lines[0] + nl + "".join(indent + line + nl for line in lines[1:]) + indent
    return text[:start] + inserted + text[start:]


def _add_under(text: str, key: ScalarNode, rest: tuple[str, ...], member: Member, nl: str) -> str:
    """Add ``rest`` + ``member`` under ``key:`` that has no value yet."""
    indent = " " * (_indent_of(text, key.start_mark.index) + 2)
    lines = [indent + line for line in _block_lines(rest, member)]
    end = text.find("\n", key.end_mark.index)
    if end < 0:  # the last line, with no line break: keep the file without a final one
        return text + nl + nl.join(lines)
    return text[: end + 1] + "".join(line + nl for line in lines) + text[end + 1 :]


# -- removing -----------------------------------------------------------------------------------


def remove(
    text: str, member: Member, ours: Callable[[dict[str, Any]], bool], *, flow_pairs: bool = True
) -> str:
    """``text`` without any funes-owned member at ``member``'s place, nor headers funes created for it.

    ``flow_pairs``: a ``key: [member]`` pair of a flow parent that reads exactly as funes writes a
    pair it creates goes as a whole. That is a guess from the text (the user's own ``key: []``
    with funes' member in it reads the same), so a caller that records which containers it created
    (:class:`YamlFormat`, for managed wiring, prunes from its ledger) passes ``False``.
    """
    root, data = parse(text)
    removed: list[dict[str, Any]] = []
    new = text
    while True:
        hits = _hits(new, root, member, ours)
        if not hits:
            break
        hit = hits[0]
        removed.append(hit.value)
        if not hit.block:
            new = _drop_flow(new, root, member, hit, whole_pair=flow_pairs)
        elif hit.verbatim:
            new = _drop_line(new, hit.start)
        else:
            new = _drop_lines(new, hit.start, hit.end)
        root, _ = parse(new)
        if hit.block:
            new, root = _prune(new, root, member.path, member.mark)
    if removed:
        _check(new, _without(data, member, removed), member.path)
    return new


def _drop_lines(text: str, start: int, end: int) -> str:
    """``text`` without the whole lines from the one holding ``start`` to the one holding ``end``."""
    last = end - 1
    while last > start and text[last] in " \t\r\n":
        last -= 1
    first = _line_start(text, start)
    stop = text.find("\n", last)
    if stop >= 0:
        return text[:first] + text[stop + 1 :]
    cut = first  # it runs to the end of a file with no final line break: drop the break before it
    if cut > 0 and text[cut - 1] == "\n":
        cut -= 1
        if cut > 0 and text[cut - 1] == "\r":
            cut -= 1
    return text[:cut]


def _drop_flow(text: str, root: MappingNode | None, member: Member, hit: _Hit, *, whole_pair: bool) -> str:
    start, end = hit.start, hit.end
    container = hit.container
    # The whole `key: [member]` (or `{member}`) pair funes added to a flow parent goes as one.
    if whole_pair and len(container.value) == 1 and member.path:
        _, chain = _container(root, member.path)
        parent = chain[-1] if chain else None
        pair = _pair(parent, member.path[-1]) if isinstance(parent, MappingNode) else None
        if parent is not None and parent.flow_style and pair is not None:
            pair_start = pair[0].start_mark.index
            written = _flow_chain((member.path[-1],), Member(member.path, member.key, hit.value))
            if text[pair_start : container.end_mark.index] == written:
                start, end = pair_start, container.end_mark.index
    if text.startswith(", ", end):
        return text[:start] + text[end + 2 :]
    if text[:start].endswith(", "):
        return text[: start - 2] + text[end:]
    if text.startswith(",", end):
        return text[:start] + text[end + 1 :]
    return text[:start] + text[end:]


def _prune(
    text: str, root: MappingNode | None, path: tuple[str, ...], mark: str
) -> tuple[str, MappingNode | None]:
    """Drop the marked headers along ``path`` that were left with nothing under them."""
    for depth in range(len(path), 0, -1):
        node: Node | None = root
        for key in path[: depth - 1]:
            hit = _pair(node, key) if isinstance(node, MappingNode) else None
            node = hit[1] if hit else None
        pair = _pair(node, path[depth - 1]) if isinstance(node, MappingNode) else None
        if pair is None or not _empty(pair[1]):
            break
        key = pair[0]
        if _line(text, key.start_mark.index).strip() != f"{_key(path[depth - 1])}:  {mark}":
            break
        text = _drop_line(text, key.start_mark.index)
        root, _ = parse(text)
    return text, root


# -- the adapter --------------------------------------------------------------------------------


def _accept(value: dict[str, Any]) -> bool:
    return True


class YamlFormat:
    """YAML configs for :class:`~funes_core.wiring.configedit.ManagedEntry` (see the module docstring).

    The entry's ``note`` is the mark comment that ends the block-style lines funes writes.
    """

    label = "YAML"

    def parse(self, text: str) -> dict[str, Any]:
        return parse(text)[1]

    @staticmethod
    def _member(place: Place, value: Any, note: str) -> Member:
        mark = note if note.startswith("#") else f"# {note}"
        return Member(tuple(place.path), place.key, value if isinstance(value, dict) else {}, mark)

    def find(self, text: str, place: Place, *, note: str) -> list[Any]:
        return [found.value for found in find(text, self._member(place, {}, note), _accept)]

    def occupied(self, text: str, place: Place, *, note: str) -> bool:
        if place.key is None:
            return False
        data: Any = parse(text)[1]
        for step in place.path:
            data = data.get(step) if isinstance(data, dict) else None
        return isinstance(data, dict) and place.key in data

    def add(self, text: str | None, place: Place, value: Any, *, note: str) -> Added:
        if not isinstance(value, dict):
            raise EditError("YAML entries are mappings")
        base = text or ""
        data: Any = parse(base)[1]
        depth = 0
        for step in place.path:
            if not isinstance(data, dict) or step not in data:
                break  # a ``key:`` with no value is the user's: filled, never created
            data = data[step]
            depth += 1
        created = tuple(tuple(place.path[:n]) for n in range(depth + 1, len(place.path) + 1))
        return Added(insert(base, self._member(place, value, note)), created)

    def drop(self, text: str, place: Place, ours: Callable[[Any], bool], *, note: str) -> str:
        # The containers funes created are pruned from the ledger (prune), never guessed from text.
        return remove(text, self._member(place, {}, note), ours, flow_pairs=False)

    def prune(self, text: str, container: tuple[str, ...]) -> str:
        """Remove the pair at ``container`` when it holds nothing (``{}``, ``[]`` or no value)."""
        if not container:
            return text
        root, data = parse(text)
        _node, chain = _container(root, container)
        parent = chain[-1] if chain else None
        if not isinstance(parent, MappingNode) or len(chain) != len(container):
            return text
        pair = _pair(parent, container[-1])
        if pair is None:
            return text
        key, value = pair
        if not (_empty(value) or (isinstance(value, MappingNode | SequenceNode) and not value.value)):
            return text
        start, end = key.start_mark.index, value.end_mark.index
        if parent.flow_style:
            if text.startswith(", ", end):
                new = text[:start] + text[end + 2 :]
            elif text[:start].endswith(", "):
                new = text[: start - 2] + text[end:]
            else:
                new = text[:start] + text[end:]
        else:
            new = _drop_lines(text, start, end)
        expected = copy.deepcopy(data)
        holder: Any = expected
        for step in container[:-1]:
            holder = holder[step]
        del holder[container[-1]]
        _check(new, expected, container[:-1])
        return new

    def empty(self, text: str) -> bool:
        return not text.strip()
