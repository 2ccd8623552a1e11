"""funes-echo's own details: byte-preserving JSON edits, the wiring's edge cases, time parsing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from funes_core import ConfigError, EditError, InstallContext, JsonFile, WiringState
from funes_echo import EchoHookInstaller, EchoToolRegistrar
from funes_echo.converter import parse_time

MARKER = ("managed_by", "funes-echo")
VALUE = {"on": "turn_end", "run": ["funes", "x"], "managed_by": "funes-echo"}


def doc(tmp_path: Path) -> JsonFile:
    return JsonFile(tmp_path / "config.json", "hooks", "funes", MARKER)


@pytest.mark.parametrize(
    "original",
    [
        "{}",
        "{}\n",
        '{\n  "theme": "dark"\n}\n',
        '{"theme":"dark","hooks":{}}',
        '{\n\t"hooks": {\n\t\t"lint": {"run": ["ruff"]}\n\t},\n\t"x": [1, {"y": "}{"}]\n}\n',
        '{\r\n    "hooks": {\r\n        "a": {"run": []}\r\n    }\r\n}\r\n',
        '  {"hooks" : { "b" : 1 } , "ünï": "✓"}  ',
        '{"hooks": {"funes2": {"managed_by": "funes-echo"}}, "other": "\\"managed_by\\": \\"funes-echo\\""}',
    ],
)
def test_insert_then_remove_restores_every_byte(tmp_path: Path, original: str) -> None:
    edit = doc(tmp_path)
    inserted = edit.insert(original, VALUE)
    assert json.loads(inserted)["hooks"]["funes"] == VALUE
    rest = json.loads(inserted)
    del rest["hooks"]["funes"]
    before = json.loads(original)
    before.setdefault("hooks", {})
    assert rest == before, "nothing else changed"
    assert edit.remove(inserted) == original


def test_insert_uses_the_files_own_indentation(tmp_path: Path) -> None:
    text = doc(tmp_path).insert('{\n    "hooks": {\n        "a": 1\n    }\n}\n', VALUE)
    assert '\n        "funes": {"on": "turn_end"' in text


def test_removal_after_the_user_reformatted_the_file_keeps_their_members(tmp_path: Path) -> None:
    edit = doc(tmp_path)
    inserted = edit.insert('{"hooks": {"lint": {"run": ["ruff"]}}, "theme": "dark"}', VALUE)
    reformatted = json.dumps(json.loads(inserted), indent=4)
    result = edit.remove(reformatted)
    assert json.loads(result) == {"hooks": {"lint": {"run": ["ruff"]}}, "theme": "dark"}


def test_removal_when_the_user_added_a_hook_to_the_parent_we_created(tmp_path: Path) -> None:
    edit = doc(tmp_path)
    inserted = edit.insert('{"theme": "dark"}', VALUE)
    extended = inserted.replace(
        '"managed_by": "funes-echo"}}', '"managed_by": "funes-echo"}, "mine": {"run": []}}'
    )
    assert json.loads(extended)["hooks"]["mine"] == {"run": []}
    assert json.loads(edit.remove(extended)) == {"theme": "dark", "hooks": {"mine": {"run": []}}}


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('{"a": ', "is not valid JSON"),
        ("[1, 2]", "does not hold a JSON object"),
        ('{"hooks": 3}', "'hooks' is not an object"),
    ],
)
def test_unusable_files_are_refused(tmp_path: Path, text: str, problem: str) -> None:
    edit = doc(tmp_path)
    with pytest.raises(EditError, match=problem):
        edit.current(text) if "hooks" in text else edit.insert(text, VALUE)


def test_a_non_utf8_config_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_bytes(b'{"a": "\xff"}')
    with pytest.raises(EditError, match="not UTF-8"):
        doc(tmp_path).read()


@pytest.fixture
def ctx(tmp_path: Path) -> InstallContext:
    home = tmp_path / "home"
    (home / ".echo").mkdir(parents=True)
    return InstallContext(home=home, funes_home=tmp_path / "fh", funes_command=("funes",))


def test_a_funes_hook_the_user_wrote_is_never_touched(ctx: InstallContext) -> None:
    config = ctx.home / ".echo" / "config.json"
    config.write_text('{"hooks": {"funes": {"on": "turn_end", "run": ["my-own-script"]}}}\n')
    with pytest.raises(ConfigError, match="funes-echo did not write it"):
        EchoHookInstaller().install(ctx)
    assert EchoHookInstaller().uninstall(ctx).changed is False
    assert "my-own-script" in config.read_text()
    assert EchoHookInstaller().status(ctx).state is WiringState.NOT_WIRED


def test_a_file_funes_created_is_deleted_on_removal_even_after_a_refresh(ctx: InstallContext) -> None:
    registrar = EchoToolRegistrar()
    registrar.register(ctx)
    registrar.register(InstallContext(ctx.home, ctx.funes_home, ("funes",), memory="team/m"))
    assert registrar.registered_command(ctx) == ["funes", "mcp", "team/m"]
    registrar.unregister(ctx)
    assert not (ctx.home / ".echo" / "mcp.json").exists()


def test_the_hook_runs_convert_into_the_spool_then_indexes(ctx: InstallContext) -> None:
    EchoHookInstaller().install(ctx)
    hook = json.loads((ctx.home / ".echo" / "config.json").read_text())["hooks"]["funes"]
    assert hook["run"] == [
        "funes",
        "integrations",
        "convert",
        "echo",
        "{transcript}",
        str(ctx.funes_home / "spool" / "echo"),
        "--index",
    ]
    assert oct((ctx.home / ".echo" / "config.json").stat().st_mode & 0o777) == "0o600"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2026-03-02T09:00:05+01:00", "2026-03-02T08:00:05Z"),
        ("2026-03-02T09:00:05", "2026-03-02T09:00:05Z"),
        ("2026-03-02T09:00:05.5Z", "2026-03-02T09:00:05.500000Z"),
        (1772438412000, "2026-03-02T08:00:12Z"),
        (1772438412123.0, "2026-03-02T08:00:12.123000Z"),
        ("yesterday", None),
        ("", None),
        (True, None),
        (None, None),
        (10**20, None),
    ],
)
def test_parse_time(value: object, expected: str | None) -> None:
    assert parse_time(value) == expected
