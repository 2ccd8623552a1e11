"""Upgrades keep plugins: the uv tool receipt records them; wiring whose plugin is gone is undone and found.

The plugin that goes away is funes-echo itself, installed and wired for real into a throwaway
HOME, then made invisible to a fresh plugin manager (``FUNES_LOAD_PLUGINS`` naming nothing), which
is what a plugin manager sees after ``uv tool upgrade`` dropped the plugin.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

import funes_echo
from funes_core.faces.cli.app import make_app
from funes_core.host.manager import FunesPluginManager, load_plugins
from funes_core.wiring.integrations import toolenv
from funes_core.wiring.integrations.common import RunResult, run_subprocess

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fakes import FakeRunner, echo_home

FIXTURES = Path(funes_echo.__file__).parent / "contract_fixtures"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return echo_home(tmp_path, monkeypatch)


def with_echo() -> FunesPluginManager:
    return load_plugins(environ={"FUNES_LOAD_PLUGINS": "echo"}, stderr=io.StringIO())


def echo_gone() -> FunesPluginManager:
    return load_plugins(environ={"FUNES_LOAD_PLUGINS": "nothing-at-all"}, stderr=io.StringIO())


def cli(pm: FunesPluginManager, *args: str) -> tuple[int, str, str]:
    done = CliRunner().invoke(make_app(pm), list(args))
    return done.exit_code, done.stdout, done.stderr


def test_remove_undoes_the_recorded_wiring_when_the_plugin_is_gone(home: Path, tmp_path: Path) -> None:
    config, mcp = home / ".echo" / "config.json", home / ".echo" / "mcp.json"
    before = config.read_bytes(), mcp.read_bytes()
    assert cli(with_echo(), "integrations", "install", "echo", "--no-index", "--no-seed")[0] == 0
    assert config.read_bytes() != before[0] and mcp.read_bytes() != before[1]

    code, out, err = cli(echo_gone(), "integrations", "remove", "echo")
    assert code == 0, err
    assert (config.read_bytes(), mcp.read_bytes()) == before, "the user's bytes are back"
    assert "no installed plugin provides it; removed the wiring funes recorded for it" in out
    integrations = tmp_path / "funes-home" / "integrations"
    assert not (integrations / "echo.json").exists() and not (integrations / "echo.wiring.json").exists()
    code, _, err = cli(echo_gone(), "integrations", "remove", "echo")
    assert code == 1 and "no installed plugin provides 'echo'" in err, "nothing recorded any more"


def test_remove_from_the_ledger_deletes_files_funes_created_and_leaves_changed_values(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "bare"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("FUNES_HOME", str(tmp_path / "fh"))
    assert cli(with_echo(), "integrations", "install", "echo", "--no-index", "--no-seed")[0] == 0
    mcp = home / ".echo" / "mcp.json"
    data = json.loads(mcp.read_text())
    data["mcpServers"]["funes"]["args"] = ["mcp", "edited-by-hand"]
    mcp.write_text(json.dumps(data))
    code, _, err = cli(echo_gone(), "integrations", "remove", "echo")
    assert code == 0, err
    assert not (home / ".echo" / "config.json").exists(), "the hook file funes created is deleted"
    assert json.loads(mcp.read_text())["mcpServers"]["funes"]["args"] == ["mcp", "edited-by-hand"], (
        "a value changed since is not funes' recorded one: left alone"
    )


def test_check_all_finds_wiring_whose_plugin_is_gone_and_says_how_to_fix(home: Path) -> None:
    assert cli(with_echo(), "integrations", "install", "echo", "--no-index", "--no-seed")[0] == 0
    code, out, _ = cli(with_echo(), "integrations", "check", "--all")
    assert code == 0 and out.splitlines() == ["echo: wired; its plugin is installed and its hook imports"]

    code, out, _ = cli(echo_gone(), "integrations", "check", "--all")
    assert code == 1
    assert out.splitlines() == [
        "echo: wired, but funes-memory-echo is not installed (a `uv tool upgrade` drops plugins it was not "
        "told about); reinstall it with `funes integrations install echo`, or undo the wiring with "
        "`funes integrations remove echo`"
    ]
    code, out, _ = cli(echo_gone(), "integrations", "check", "--all", "--json")
    assert code == 1 and json.loads(out)["problems"][0]["id"] == "echo"


def test_check_all_finds_a_hook_that_no_longer_imports(home: Path, tmp_path: Path) -> None:
    assert cli(with_echo(), "integrations", "install", "echo", "--no-index", "--no-seed")[0] == 0
    record = tmp_path / "funes-home" / "integrations" / "echo.json"
    data = json.loads(record.read_text())
    data["modules"] = [*data["modules"], "funes_echo.vanished_module"]
    record.write_text(json.dumps(data))
    code, out, _ = cli(with_echo(), "integrations", "check", "--all")
    assert code == 1
    assert out.startswith(
        "echo: its hook would fail: funes_echo.vanished_module: ModuleNotFoundError: No module named "
    )


def test_check_needs_an_id_or_all() -> None:
    code, _, err = cli(echo_gone(), "integrations", "check")
    assert code == 2 and "name one ID, or pass --all" in err


# -- the uv tool receipt ----------------------------------------------------------------------------

RECEIPT = """\
[tool]
requirements = [
    { name = "funes-memory" },
    { name = "funes-memory-claude", specifier = ">=0.1" },
    { name = "funes-memory-acme", directory = "/src/acme" },
]
entrypoints = [
    { name = "funes", install-path = "/home/u/.local/bin/funes", from = "funes-memory" },
]
python = "3.12"
"""


def test_a_plugin_installed_into_a_uv_tool_is_recorded_in_its_receipt(tmp_path: Path) -> None:
    prefix = tmp_path / "tools" / "funes-memory"
    prefix.mkdir(parents=True)
    (prefix / "uv-receipt.toml").write_text(RECEIPT, encoding="utf-8")
    runner = FakeRunner()
    line, _ = toolenv.record(
        runner, "/bin/uv", "funes-memory-echo", "/src/echo", {"PATH": "/bin"}, str(prefix)
    )
    [(argv, env)] = runner.calls
    assert argv == [
        "/bin/uv", "tool", "install", "funes-memory",
        "--with", "funes-memory-claude>=0.1", "--with", "/src/acme", "--with", "/src/echo",
        "--python", "3.12",
    ]  # fmt: skip
    assert env is not None and env["UV_TOOL_DIR"] == str(tmp_path / "tools")
    assert env["UV_TOOL_BIN_DIR"] == "/home/u/.local/bin" and env["PATH"] == "/bin"
    assert line.startswith("recorded funes-memory-echo in the uv tool receipt")

    runner = FakeRunner()
    assert toolenv.record(runner, "/bin/uv", "funes_memory_acme", "/x", {}, str(prefix)) == ("", None)
    assert runner.calls == [], "already in the receipt: nothing to record"
    assert toolenv.record(runner, "/bin/uv", "d", "/x", {}, str(tmp_path)) == ("", None), "not a uv tool"
    warned, _ = toolenv.record(runner, None, "funes-memory-echo", "/x", {}, str(prefix))
    assert "a `uv tool upgrade` will drop it" in warned and runner.calls == []

    failing = FakeRunner(results=[RunResult(2, "error: boom")])
    warned, _ = toolenv.record(failing, "/bin/uv", "funes-memory-echo", "/src/echo", {}, str(prefix))
    assert warned.startswith(
        "could not record funes-memory-echo in the uv tool receipt (exit 2: error: boom)"
    )


def _project(root: Path, name: str, script: bool = False) -> Path:
    folder = root / name
    (folder / name).mkdir(parents=True)
    (folder / name / "__init__.py").write_text("def main():\n    print('ok')\n", encoding="utf-8")
    scripts = f'[project.scripts]\n{name} = "{name}:main"\n' if script else ""
    (folder / "pyproject.toml").write_text(
        textwrap.dedent(f"""\
            [project]
            name = "{name}"
            version = "0.1"
            {scripts}
            [build-system]
            requires = ["hatchling"]
            build-backend = "hatchling.build"
            """),
        encoding="utf-8",
    )
    return folder


@pytest.mark.slow
def test_uv_tool_upgrade_keeps_a_recorded_plugin(tmp_path: Path) -> None:
    """The real uv: a plugin added with `uv pip install` is dropped by an upgrade unless recorded."""
    import uv

    uv_bin = uv.find_uv_bin()
    env = {**os.environ, "UV_TOOL_DIR": str(tmp_path / "tools"), "UV_TOOL_BIN_DIR": str(tmp_path / "bin")}
    tool, plug = _project(tmp_path, "fakefunes", script=True), _project(tmp_path, "fakeplug")

    def run(*argv: str) -> None:
        done = subprocess.run([uv_bin, *argv], env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr

    prefix = tmp_path / "tools" / "fakefunes"
    site = lambda: sorted(p.name for p in prefix.glob("lib/*/site-packages/fakeplug"))  # noqa: E731
    run("tool", "install", str(tool))
    python = str(prefix / ("Scripts/python.exe" if os.name == "nt" else "bin/python"))
    run("pip", "install", "--python", python, str(plug))
    run("tool", "upgrade", "fakefunes")
    assert site() == [], "what the receipt does not name is dropped (the bug this guards against)"

    run("pip", "install", "--python", python, str(plug))
    line, done = toolenv.record(run_subprocess, uv_bin, "fakeplug", str(plug), env, str(prefix))
    assert done is not None and done.returncode == 0, done.output
    assert line.startswith("recorded fakeplug")
    run("tool", "upgrade", "fakefunes")
    assert site() == ["fakeplug"], "recorded in the receipt, the plugin survives the upgrade"
