"""The path-based byte-preserving JSON edits: append to / remove from arrays, set / remove members.

What matters is the round trip: whatever the user's layout, an insertion followed by the
matching removal gives back the original bytes, and everything the insertion did not add is
never touched. The ``JsonFile`` API (one marked member) is covered by funes-echo's tests.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from funes_core.wiring.configedit.json import (
    EditError,
    append_item,
    read_json_text,
    remove_items,
    remove_member,
    set_member,
    value_at,
    write_json_text,
)

OURS = {"hooks": [{"type": "command", "command": "funes hook", "timeout": 15}]}


def ours(value: Any) -> bool:
    return bool(value == OURS)


ORIGINALS = [
    "{}",
    "{}\n",
    "{ }\n",
    '{\n  "theme": "dark"\n}\n',
    '{"theme":"dark"}',
    '{\n  "hooks": {}\n}\n',
    '{\n  "hooks": {\n    "Stop": []\n  }\n}\n',
    '{\n  "hooks": {\n    "Stop": [ ]\n  }\n}\n',
    '{\n  "hooks": {\n    "Stop": [\n      {\n        "hooks": [{"type": "command", "command": "mine"}]\n'
    "      }\n    ]\n  }\n}\n",
    '{"hooks":{"Stop":[{"hooks":[]},{"matcher":"x","hooks":[]}],"PreToolUse":[]},"env":{"A":"1"}}',
    '{\r\n\t"model": "opus",\r\n\t"hooks": {\r\n\t\t"SessionEnd": [\r\n'
    '\t\t\t{"hooks": []}\r\n\t\t]\r\n\t}\r\n}\r\n',
    '  {"ünï": "✓", "hooks" : { "Stop" : [ 1 , 2 ] } }  ',
    '{"hooks": {"Stop": [{"a": "]},{"}]}, "x": "\\"hooks\\": ["}',
]


def _without_empty_tail(data: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    """``data`` without the containers along ``path`` that are (or become) empty: what pruning drops."""
    data = json.loads(json.dumps(data))
    for depth in range(len(path), 0, -1):
        holder = data
        for step in path[: depth - 1]:
            holder = holder.get(step, {}) if isinstance(holder, dict) else {}
        if isinstance(holder, dict) and path[depth - 1] in holder and holder[path[depth - 1]] in ({}, []):
            del holder[path[depth - 1]]
    return data


@pytest.mark.parametrize("original", ORIGINALS)
@pytest.mark.parametrize(
    "path", [("hooks", "Stop"), ("hooks", "SubagentStop"), ("deep", "er", "list"), ("top",)]
)
def test_append_then_remove_restores_every_byte(original: str, path: tuple[str, ...]) -> None:
    added = append_item(original, path, OURS)
    assert value_at(added, path)[-1] == OURS
    after = json.loads(added)
    holder = after
    for step in path[:-1]:
        holder = holder[step]
    holder[path[-1]].pop()
    assert _without_empty_tail(after, path) == _without_empty_tail(json.loads(original), path)
    existing = value_at(original, path)
    if existing is not None:
        assert remove_items(added, path, ours, prune=False) == original, "the user's array stays as it was"
    removed = remove_items(added, path, ours)
    if _without_empty_tail(json.loads(original), path) == json.loads(original):
        assert removed == original
    else:
        # The user had an empty container on the path: pruning drops it with our item (the only
        # case where removal is not byte-exact, and one that changes nothing an agent reads).
        assert json.loads(removed) == _without_empty_tail(json.loads(original), path)


def test_items_take_the_separator_the_array_already_uses() -> None:
    text = '{\n  "Stop": [\n    {"a": 1},\n    {"b": 2}\n  ]\n}\n'
    assert append_item(text, ["Stop"], {"c": 3}) == (
        '{\n  "Stop": [\n    {"a": 1},\n    {"b": 2},\n    {\n      "c": 3\n    }\n  ]\n}\n'
    ), "one entry per line, indented like the others"
    one = '{\n  "Stop": [\n    {"a": 1}\n  ]\n}\n'
    assert append_item(one, ["Stop"], 2) == '{\n  "Stop": [\n    {"a": 1},\n    2\n  ]\n}\n'
    assert append_item('{"Stop": [1]}', ["Stop"], 2) == '{"Stop": [1, 2]}'


def test_missing_members_are_created_after_the_last_member() -> None:
    text = '{\n  "theme": "dark"\n}\n'
    pretty = '{\n  "theme": "dark",\n  "hooks": {\n    "Stop": [\n      1\n    ]\n  }\n}\n'
    assert append_item(text, ["hooks", "Stop"], 1) == pretty
    assert (
        append_item('{"theme": "dark"}', ["hooks", "Stop"], 1) == '{"theme": "dark", "hooks": {"Stop": [1]}}'
    )
    assert (
        append_item(None, ["hooks", "Stop"], 1) == '{\n  "hooks": {\n    "Stop": [\n      1\n    ]\n  }\n}\n'
    )
    tabs = '{\r\n\t"a": 1,\r\n\t"b": 2\r\n}'
    assert append_item(tabs, ["c"], 1) == '{\r\n\t"a": 1,\r\n\t"b": 2,\r\n\t"c": [\r\n\t\t1\r\n\t]\r\n}'
    assert append_item('{"a" : 1}', ["b"], 2) == '{"a" : 1, "b" : [2]}', "the file's own colon"


def test_only_the_selected_items_go_even_when_others_were_added_around_them() -> None:
    mine_before = '{"hooks": {"Stop": [{"hooks": [{"command": "user-1"}]}]}}'
    added = append_item(mine_before, ["hooks", "Stop"], OURS)
    later = append_item(added, ["hooks", "Stop"], {"hooks": [{"command": "user-2"}]})
    result = remove_items(later, ["hooks", "Stop"], ours)
    assert json.loads(result) == {
        "hooks": {"Stop": [{"hooks": [{"command": "user-1"}]}, {"hooks": [{"command": "user-2"}]}]}
    }
    assert (
        result
        == '{"hooks": {"Stop": [{"hooks": [{"command": "user-1"}]}, {"hooks": [{"command": "user-2"}]}]}}'
    )


def test_removing_the_first_item_takes_the_separator_after_it() -> None:
    text = '{"a": [\n  1,\n  2,\n  3\n]}'
    assert remove_items(text, ["a"], lambda v: v == 1) == '{"a": [\n  2,\n  3\n]}'
    assert remove_items(text, ["a"], lambda v: v in (1, 3)) == '{"a": [\n  2\n]}'


def test_prune_keeps_containers_that_hold_something_else() -> None:
    text = '{"hooks": {"Stop": [1], "SessionEnd": [2]}, "theme": "dark"}'
    assert (
        remove_items(text, ["hooks", "Stop"], lambda v: True)
        == '{"hooks": {"SessionEnd": [2]}, "theme": "dark"}'
    )
    assert remove_items(text, ["hooks", "Stop"], lambda v: True, prune=False) == (
        '{"hooks": {"Stop": [], "SessionEnd": [2]}, "theme": "dark"}'
    )
    only = '{"hooks": {"Stop": [1]}}'
    assert remove_items(only, ["hooks", "Stop"], lambda v: True) == "{}"


def test_nothing_selected_or_nothing_there_changes_nothing() -> None:
    text = '{\n  "hooks": {"Stop": [1]}\n}'
    assert remove_items(text, ["hooks", "Stop"], lambda v: False) is text
    assert remove_items(text, ["hooks", "Nope"], lambda v: True) is text
    assert remove_items(text, ["other", "Stop"], lambda v: True) is text


def test_items_inside_an_array_item_are_reachable_by_index() -> None:
    text = '{"Stop": [{"matcher": "", "hooks": [{"command": "mine"}, {"command": "funes"}]}]}'
    result = remove_items(text, ["Stop", 0, "hooks"], lambda v: v["command"] == "funes")
    assert result == '{"Stop": [{"matcher": "", "hooks": [{"command": "mine"}]}]}'
    assert value_at(result, ["Stop", 0, "matcher"]) == ""
    assert value_at(result, ["Stop", 5, "matcher"]) is None


def test_set_and_remove_member_round_trip() -> None:
    original = '{\n  "numStartups": 3,\n  "mcpServers": {\n    "other": {"command": "x"}\n  }\n}\n'
    entry = {"type": "stdio", "command": "funes", "args": ["mcp"], "env": {}}
    added = set_member(original, ["mcpServers", "funes"], entry)
    assert added == (
        '{\n  "numStartups": 3,\n  "mcpServers": {\n    "other": {"command": "x"},\n    "funes": {\n'
        '      "type": "stdio",\n      "command": "funes",\n      "args": [\n        "mcp"\n      ],\n'
        '      "env": {}\n    }\n  }\n}\n'
    )
    replaced = set_member(added, ["mcpServers", "funes"], {**entry, "args": ["mcp", "team/m"]})
    assert json.loads(replaced)["mcpServers"]["funes"]["args"] == ["mcp", "team/m"]
    assert replaced.index('"funes"') == added.index('"funes"'), "a replaced member keeps its place"
    assert '\n        "team/m"\n' in replaced, "and its layout"
    assert remove_member(replaced, ["mcpServers", "funes"]) == original
    fresh = set_member('{"a": 1}', ["mcpServers", "funes"], entry)
    assert remove_member(fresh, ["mcpServers", "funes"]) == '{"a": 1}'
    assert remove_member(fresh, ["mcpServers", "funes"], prune=False) == '{"a": 1, "mcpServers": {}}'
    assert remove_member(original, ["mcpServers", "funes"]) is original
    assert remove_member(original, ["nothing", "funes"]) is original


def test_duplicate_keys_are_read_and_edited_as_parsers_read_them() -> None:
    text = '{"a": {"x": [1]}, "a": {"x": [2]}}'
    assert value_at(text, ["a", "x"]) == [2]
    assert append_item(text, ["a", "x"], 3) == '{"a": {"x": [1]}, "a": {"x": [2, 3]}}'


@pytest.mark.parametrize(
    ("text", "path", "problem"),
    [
        ('{"hooks": "none"}', ["hooks", "Stop"], "hooks is not an object"),
        ('{"hooks": {"Stop": {}}}', ["hooks", "Stop"], "hooks.Stop is not an array"),
        ('{"hooks": []}', ["hooks", "Stop"], "hooks is not an object"),
        ("[1]", ["hooks"], "does not hold a JSON object"),
        ('{"a": ', ["a"], "is not valid JSON"),
    ],
)
def test_unusable_documents_are_refused(text: str, path: list[str], problem: str) -> None:
    with pytest.raises(EditError, match=problem):
        append_item(text, path, 1)


def test_paths_that_cannot_be_created_are_refused() -> None:
    with pytest.raises(EditError, match="no item 3"):
        append_item('{"a": [{"b": []}]}', ["a", 3, "b"], 1)
    with pytest.raises(EditError, match="is not an array"):
        remove_items('{"a": {"b": 1}}', ["a"], lambda v: True)
    with pytest.raises(EditError, match="is not an object"):
        set_member('{"a": [1]}', ["a", "b"], 1)
    with pytest.raises(EditError, match="needs a path"):
        set_member("{}", [], 1)


def test_read_and_write_json_text(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "settings.json"
    assert read_json_text(path) is None
    write_json_text(path, '{"a": 1}\n')
    assert read_json_text(path) == '{"a": 1}\n'
    assert stat.S_IMODE(path.stat().st_mode) == 0o600, "a new config is private"
    os.chmod(path, 0o644)
    write_json_text(path, '{"a": 2}\n')
    assert stat.S_IMODE(path.stat().st_mode) == 0o644, "an existing config keeps its mode"
    assert sorted(p.name for p in path.parent.iterdir()) == ["settings.json"], "no temp file left"
    with pytest.raises(EditError, match="is not valid JSON"):
        write_json_text(path, '{"a": ')
    assert read_json_text(path) == '{"a": 2}\n', "a broken text is never written"
    path.write_bytes(b'{"a": "\xff"}')
    with pytest.raises(EditError, match="not UTF-8"):
        read_json_text(path)


# -- property: any document, any layout, any path ------------------------------------------------

_keys = st.sampled_from(["hooks", "Stop", "a", "b", "ünï", "x y", ""])
_scalars = st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=5)
_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_keys, inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=300, deadline=None)
@given(
    doc=st.dictionaries(_keys, _values, max_size=4),
    indent=st.sampled_from([None, 0, 1, 2, 4, "\t"]),
    path=st.lists(_keys, min_size=1, max_size=3),
)
def test_append_then_remove_is_exact_for_any_document(
    doc: dict[str, Any], indent: int | str | None, path: list[str]
) -> None:
    original = json.dumps(doc, indent=indent, ensure_ascii=False)
    try:
        added = append_item(original, path, OURS)
    except EditError:
        return  # the path goes through a scalar or a non-array: refused, nothing to undo
    assert value_at(added, path)[-1] == OURS
    existing = value_at(original, path)
    if existing is None:
        removed = remove_items(added, path, ours)
        pruned = _without_empty_tail(doc, tuple(path))
        assert removed == original if pruned == doc else json.loads(removed) == pruned
    elif not any(ours(v) for v in existing):  # else the user had an identical item: both are selected
        # The user's own array stays, even when it ends up empty again (no pruning).
        assert remove_items(added, path, ours, prune=False) == original


def test_a_symlinked_config_is_written_through_its_link(tmp_path: Path) -> None:
    dotfiles = tmp_path / "dotfiles" / "settings.json"
    dotfiles.parent.mkdir()
    dotfiles.write_text('{"a": 1}\n')
    link = tmp_path / "home" / "settings.json"
    link.parent.mkdir()
    link.symlink_to(dotfiles)
    write_json_text(link, append_item(read_json_text(link), ["hooks", "Stop"], 1))
    assert link.is_symlink(), "the link stays a link"
    assert json.loads(dotfiles.read_text()) == {"a": 1, "hooks": {"Stop": [1]}}
    assert sorted(p.name for p in dotfiles.parent.iterdir()) == ["settings.json"]
