"""The YAML adapter's text surgery (Hermes' config.yaml): exact removal, refusals, aliases."""

from __future__ import annotations

import pytest

from funes_core import EditError, Place, YamlFormat
from funes_core.wiring.configedit.yaml import Member, insert, remove


def test_edits_never_change_what_else_hermes_reads() -> None:
    member = Member(("mcp_servers",), "funes", {"command": "f", "args": ["mcp"], "env": {"FUNES_HOME": "/h"}})
    with pytest.raises(EditError, match="cannot be edited"):  # the alias would get funes' server too
        insert("mcp_servers: &s\n  a: {command: x}\nbackup: *s\n", member)
    text = insert('mcp_servers: {"a": {"command": "x"}}\n', member)
    assert remove(text, member, lambda v: True) == 'mcp_servers: {"a": {"command": "x"}}\n'


@pytest.mark.parametrize("original", ["{}\n", "{}", "hooks: {}\n", "{a: 1}\n", "", "# c\n"])
def test_containers_the_adapter_created_are_pruned_back_to_the_original(original: str) -> None:
    fmt = YamlFormat()
    place = Place(("hooks", "on_session_end"))
    added = fmt.add(original, place, {"command": "x"}, note="# funes-test")
    text = fmt.drop(added.text, place, lambda v: True, note="# funes-test")
    for container in sorted(added.created, key=len, reverse=True):
        text = fmt.prune(text, container)
    assert text == original


def test_the_users_empty_flow_list_keeps_its_key_when_funes_item_goes() -> None:
    """``{mcpServers: []}`` with funes' item in it reads as a pair funes would create: it is not one."""
    fmt, place = YamlFormat(), Place(("mcpServers",))
    text = "{mcpServers: []}\n"
    added = fmt.add(text, place, {"name": "funes", "command": "f", "args": ["mcp"]}, note="funes-x")
    assert added.created == (), "the list was the user's"
    dropped = fmt.drop(added.text, place, lambda v: v.get("name") == "funes", note="funes-x")
    assert dropped == text
    created = fmt.add("{}\n", place, {"name": "funes", "command": "f", "args": ["mcp"]}, note="funes-x")
    assert created.created == (("mcpServers",),)
    left = fmt.drop(created.text, place, lambda v: v.get("name") == "funes", note="funes-x")
    assert fmt.prune(left, ("mcpServers",)) == "{}\n", "what funes created goes, from the ledger"
