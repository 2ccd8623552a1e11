"""funes-echo's own details: the wiring's edge cases on the core's managed entries.

The byte-preservation rules themselves are the core's (``tests/test_configedit.py``); these
tests pin what echo's user sees: their own ``funes`` entries are never touched, files funes
created go again, files that were already there (even empty) come back byte for byte.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from funes_core import ConfigError, InstallContext, WiringState
from funes_echo import EchoHookInstaller, EchoToolRegistrar


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
    assert not (ctx.funes_home / "integrations" / "echo.wiring.json").exists(), "the ledger goes too"


@pytest.mark.parametrize(
    "original",
    ["{}", "{}\n", '{"mcpServers": {}}\n', '{\n  "mcpServers": {\n  }\n}\n', '{"mcpServers":{},"a":1}'],
)
def test_a_file_that_was_there_comes_back_byte_for_byte_even_empty(
    ctx: InstallContext, original: str
) -> None:
    path = ctx.home / ".echo" / "mcp.json"
    path.write_text(original)
    EchoToolRegistrar().register(ctx)
    assert json.loads(path.read_text())["mcpServers"]["funes"]["args"] == ["mcp"]
    EchoToolRegistrar().unregister(ctx)
    assert path.read_text() == original


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
