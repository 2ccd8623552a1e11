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
