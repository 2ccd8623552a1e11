"""The TOML adapter's text edits (Codex's, Vibe's config.toml): block, marked line, item, byte for byte."""

from __future__ import annotations

import tomllib

import pytest

from funes_core.wiring.configedit.base import Place
from funes_core.wiring.configedit.toml import Block, Item, MarkedLine, TomlEditError, TomlFormat

GRACE_MS = 15000
BLOCK = Block(("mcp_servers", "funes"), "# test marker: ours")
LINE = MarkedLine("mcp_optional_startup_grace_ms", "# test marker: ours too")
ITEM = Item(("mcp_servers",), "# test marker: ours")
VALUES = {"command": "/opt/funes", "args": ["mcp", "team/m"], "env": {"FUNES_HOME": "/x y"}, "n": 3}

ORIGINALS = [
    "",
    "\n",
    "# only a comment\n",
    'model = "o3"\n',
    'model = "o3"',
    "[tui]\nx = 1\n",
    "[tui]\nx = 1",
    '# header\nmodel = "o3"   # inline\n\n# about the proxy\n[model_providers.p]\nname = "P"\n',
    'model = "o3"\r\n\r\n[mcp_servers.a]\r\ncommand = "a"\r\n',
    '[mcp_servers]\n\n[mcp_servers.a]\ncommand = "a"\nargs = ["--x"]   # keep me\n',
    'notify = [\n  "a",\n  # inside\n]\n\n[tui]\nx = 1\n',
    'text = """\n[not.a.header]\n# not a comment\n"""\n[real]\ny = 2\n',
    'title = "ünïcödé ✓"\n\n[[servers]]\nname = "a"\n\n[[servers]]\nname = "b"\n\n\n',
]


@pytest.mark.parametrize("original", ORIGINALS)
def test_block_and_line_come_out_exactly_as_they_went_in(original: str) -> None:
    with_block = BLOCK.insert(original, VALUES)
    both = LINE.insert(with_block, GRACE_MS)
    data = tomllib.loads(both)
    assert data["mcp_servers"]["funes"] == VALUES
    assert data["mcp_optional_startup_grace_ms"] == GRACE_MS
    assert BLOCK.is_ours(both) and LINE.is_ours(both)
    for line in original.splitlines():
        assert line in both.splitlines(), f"lost {line!r}"
    assert BLOCK.remove(LINE.remove(both)) == original
    assert LINE.remove(LINE.insert(original, 1)) == original
    assert BLOCK.remove(BLOCK.insert(original, VALUES)) == original


def test_the_line_goes_after_the_last_top_level_key_not_into_the_next_table() -> None:
    text = LINE.insert("a = 1\n\n# about t\n[t]\nb = 2\n", 5)
    assert (
        text == "a = 1\nmcp_optional_startup_grace_ms = 5  # test marker: ours too\n\n# about t\n[t]\nb = 2\n"
    )


def test_a_block_after_an_inline_mcp_servers_table_is_refused() -> None:
    with pytest.raises(TomlEditError):
        BLOCK.insert('mcp_servers = { a = { command = "a" } }\n', VALUES)


def test_a_table_without_our_marker_is_not_ours() -> None:
    text = '[mcp_servers.funes]\ncommand = "funes"\nargs = ["mcp"]\n'
    assert BLOCK.value(text) == {"command": "funes", "args": ["mcp"]}
    assert not BLOCK.is_ours(text)
    assert BLOCK.remove(text) == text
    assert not LINE.is_ours("mcp_optional_startup_grace_ms = 1\n")


def test_removal_after_the_user_added_to_our_block_still_takes_only_our_table() -> None:
    text = BLOCK.insert("[tui]\nx = 1\n", VALUES) + "\n[mine]\nz = 1\n"
    assert tomllib.loads(BLOCK.remove(text)) == {"tui": {"x": 1}, "mine": {"z": 1}}


def _everyone(_item: object) -> bool:
    return True


@pytest.mark.parametrize("original", ORIGINALS)
def test_an_item_comes_out_exactly_as_it_went_in(original: str) -> None:
    item = {"name": "funes", **VALUES}
    if "mcp_servers" in tomllib.loads(original):  # a table there: no array of tables can be added
        with pytest.raises(TomlEditError):
            ITEM.insert(original, item)
        return
    text = ITEM.insert(original, item)
    assert tomllib.loads(text)["mcp_servers"] == [item]
    assert ITEM.items(text) == [item]
    for line in original.splitlines():
        assert line in text.splitlines(), f"lost {line!r}"
    assert ITEM.remove(text, _everyone) == original


def test_the_users_items_before_and_after_ours_stay_in_place() -> None:
    mine = '[[mcp_servers]]\nname = "gh"\ncommand = "gh-mcp"\n\n[tui]\nx = 1\n'
    text = ITEM.insert(mine, {"name": "funes", "command": "funes", "args": ["mcp"]})
    later = text + '\n[[mcp_servers]]\nname = "late"\ncommand = "l"\n'
    names = [server["name"] for server in tomllib.loads(later)["mcp_servers"]]
    assert names == ["gh", "funes", "late"]
    assert [i["name"] for i in ITEM.items(later)] == ["funes"]
    assert ITEM.remove(later, _everyone) == mine + '\n[[mcp_servers]]\nname = "late"\ncommand = "l"\n'
    assert ITEM.remove(text, lambda item: False) == text, "an item ours() rejects stays"


def test_an_item_without_our_marker_is_not_ours_and_an_inline_array_is_refused() -> None:
    text = '[[mcp_servers]]\nname = "funes"\ncommand = "funes"\nargs = ["mcp"]\n'
    assert ITEM.items(text) == []
    assert ITEM.remove(text, _everyone) == text
    with pytest.raises(TomlEditError):
        ITEM.insert('mcp_servers = [{ name = "a" }]\n', {"name": "funes"})


def test_the_adapter_adds_finds_and_drops_a_list_item() -> None:
    adapter, place = TomlFormat(), Place(("mcp_servers",))
    added = adapter.add('model = "m"\n', place, {"name": "funes", "command": "f"}, note="funes-vibe")
    assert added.created == (("mcp_servers",),)
    assert "# funes-vibe\n[[mcp_servers]]\n" in added.text
    assert adapter.find(added.text, place, note="funes-vibe") == [{"name": "funes", "command": "f"}]
    assert not adapter.occupied(added.text, place, note="funes-vibe")
    assert adapter.drop(added.text, place, _everyone, note="funes-vibe") == 'model = "m"\n'
