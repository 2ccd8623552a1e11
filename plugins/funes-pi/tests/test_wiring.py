"""funes-pi's wiring in detail: the shared extension, its ``packages`` entry, the per-turn command.

The byte-exact JSON edits themselves are the core's (tests/test_jsonedit.py, the kit's fuzz).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from importlib import resources
from pathlib import Path

import pytest

from funes_core import ConfigError, InstallContext, WiringState, read_turns_file
from funes_pi import PiHookInstaller, PiToolRegistrar
from funes_pi.wiring import CONFIG_NAME, EXTENSION_FILES, SESSION_PLACEHOLDER, extension_dir, hook_command

ENTRY = "/home/u/.funes/integrations/pi-extension"
FIXTURES = Path(str(resources.files("funes_pi.contract_fixtures")))


@pytest.fixture
def ctx(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> InstallContext:
    monkeypatch.delenv("PI_CODING_AGENT_DIR", raising=False)
    home = tmp_path / "home"
    home.mkdir()
    return InstallContext(home=home, funes_home=tmp_path / "fh", funes_command=("/opt/funes/bin/funes",))


def settings_of(ctx: InstallContext) -> Path:
    return ctx.home / ".pi" / "agent" / "settings.json"


def test_install_writes_the_package_its_config_and_the_settings_entry(ctx: InstallContext) -> None:
    PiToolRegistrar().register(ctx)
    PiHookInstaller().install(ctx)
    root = extension_dir(ctx)
    assert sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()) == sorted(
        [*EXTENSION_FILES, CONFIG_NAME]
    )
    config = json.loads((root / CONFIG_NAME).read_text())
    assert config["hook"] == {
        "argv": ["/opt/funes/bin/funes", "integrations", "convert", "pi", SESSION_PLACEHOLDER, "--index"],
        "env": {"FUNES_HOME": str(ctx.funes_home)},
    }
    assert config["mcp"]["argv"] == ["/opt/funes/bin/funes", "mcp"]
    assert config["mcp"]["tool_prefix"] == "mcp__funes__"
    assert json.loads(settings_of(ctx).read_text()) == {"packages": [str(root)]}
    manifest = json.loads((root / "package.json").read_text())
    assert manifest["pi"] == {"extensions": ["./extensions/funes.ts"]}
    assert oct(root.stat().st_mode & 0o777) == "0o700"


def test_the_last_part_removed_takes_the_package_away(ctx: InstallContext) -> None:
    shutil.copytree(FIXTURES / "config-home", ctx.home, dirs_exist_ok=True)
    original = settings_of(ctx).read_bytes()
    registrar, installer = PiToolRegistrar(), PiHookInstaller()
    registrar.register(ctx)
    installer.install(ctx)
    outcome = registrar.unregister(ctx)
    assert outcome.changed and "stays" in outcome.summary
    assert installer.status(ctx).state is WiringState.WIRED
    assert registrar.status(ctx).state is WiringState.NOT_WIRED
    assert registrar.registered_command(ctx) is None
    assert settings_of(ctx).read_bytes() != original
    installer.uninstall(ctx)
    assert settings_of(ctx).read_bytes() == original
    assert not extension_dir(ctx).exists()
    assert not (ctx.funes_home / "integrations").exists()


def test_a_fresh_home_is_left_as_it_was_found(ctx: InstallContext) -> None:
    PiToolRegistrar().register(ctx)
    PiHookInstaller().install(ctx)
    PiHookInstaller().uninstall(ctx)
    PiToolRegistrar().unregister(ctx)
    assert list(ctx.home.iterdir()) == [], "the folders funes created for pi's settings are gone too"
    assert PiHookInstaller().status(ctx).state is WiringState.NOT_WIRED


def test_a_package_installed_by_pi_itself_is_recognised(ctx: InstallContext) -> None:
    """``pi install <dir>`` records a path relative to the settings folder."""
    relative = os.path.relpath(extension_dir(ctx), settings_of(ctx).parent)
    settings_of(ctx).parent.mkdir(parents=True)
    settings_of(ctx).write_text(json.dumps({"packages": [relative]}, indent=2))
    installer = PiHookInstaller()
    installer.install(ctx)
    assert json.loads(settings_of(ctx).read_text()) == {"packages": [relative]}, "no second entry"
    assert installer.status(ctx).state is WiringState.WIRED
    installer.uninstall(ctx)
    assert json.loads(settings_of(ctx).read_text()) == {"packages": []}


def test_an_outdated_package_is_reported_and_refreshed(ctx: InstallContext) -> None:
    installer = PiHookInstaller()
    installer.install(ctx)
    script = extension_dir(ctx) / "extensions" / "funes.ts"
    script.write_text("// an older funes-pi\n")
    assert installer.status(ctx).state is WiringState.OUTDATED
    assert installer.install(ctx).changed
    assert installer.status(ctx).state is WiringState.WIRED


def test_removed_from_settings_by_the_user_is_not_wired(ctx: InstallContext) -> None:
    installer = PiHookInstaller()
    installer.install(ctx)
    settings_of(ctx).write_text('{"packages": []}')
    status = installer.status(ctx)
    assert status.state is WiringState.NOT_WIRED and "not listed" in status.detail


def test_pi_coding_agent_dir_is_honoured(ctx: InstallContext, tmp_path: Path) -> None:
    agent = tmp_path / "pi-agent"
    moved = InstallContext(
        ctx.home, ctx.funes_home, ctx.funes_command, extra_env={"PI_CODING_AGENT_DIR": str(agent)}
    )
    PiHookInstaller().install(moved)
    assert json.loads((agent / "settings.json").read_text()) == {"packages": [str(extension_dir(moved))]}
    assert not settings_of(ctx).exists()
    assert PiHookInstaller().config_paths(moved) == [agent / "settings.json"]


def test_a_bound_memory_is_recorded_for_the_extension(ctx: InstallContext) -> None:
    bound = InstallContext(ctx.home, ctx.funes_home, ctx.funes_command, memory="team/mem")
    PiToolRegistrar().register(bound)
    config = json.loads((extension_dir(ctx) / CONFIG_NAME).read_text())
    assert config["mcp"]["argv"] == ["/opt/funes/bin/funes", "mcp", "team/mem"]
    assert config["mcp"]["memory"] == "team/mem"


def test_a_malformed_settings_file_is_refused_before_anything_is_written(ctx: InstallContext) -> None:
    settings_of(ctx).parent.mkdir(parents=True)
    settings_of(ctx).write_text('{"packages": "npm:a"}')
    with pytest.raises(ConfigError, match="packages is not an array"):
        PiHookInstaller().install(ctx)
    assert not ctx.funes_home.exists()


# -- the per-turn hook ---------------------------------------------------------------------------------


def _session(path: Path, answers: int) -> None:
    lines = [{"type": "session", "version": 3, "id": "x", "timestamp": "2026-03-02T09:00:00Z", "cwd": "/w"}]
    for n in range(answers):
        lines.append(
            {
                "type": "message",
                "id": f"m{n}",
                "timestamp": f"2026-03-02T09:00:{n + 1:02d}Z",
                "message": {"role": "assistant", "content": [{"type": "text", "text": f"answer {n}"}]},
            }
        )
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")


def test_the_extension_runs_the_cores_convert_into_the_spool(ctx: InstallContext, tmp_path: Path) -> None:
    session = tmp_path / "2026-03-02T09-00-00-000Z_x.jsonl"
    _session(session, 2)
    argv = [a.replace(SESSION_PLACEHOLDER, str(session)) for a in hook_command(ctx)]
    env = {**os.environ, "FUNES_HOME": str(ctx.funes_home), "HOME": str(ctx.home)}
    run = [sys.executable, "-m", "funes_core", *argv[1:-1]]  # without --index: no indexer here
    done = subprocess.run(run, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    spool = ctx.funes_home / "spool" / "pi"
    turns = read_turns_file(spool / f"{session.stem}.funes.jsonl").turns
    assert [t.turn_uuid for t in turns] == ["m0", "m1"]
    assert oct(spool.stat().st_mode & 0o777) == "0o700"


# -- packaging ----------------------------------------------------------------------------------------


def test_the_wheel_ships_the_pi_package_and_the_fixtures(tmp_path: Path) -> None:
    uv = shutil.which("uv")
    if uv is None:
        pytest.skip("uv is not installed, so the wheel cannot be built here")
    project = Path(__file__).resolve().parents[1]
    done = subprocess.run(
        [uv, "build", str(project), "--wheel", "--offline", "-o", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"the wheel could not be built offline: {done.stderr.strip()[-300:]}")
    [wheel] = tmp_path.glob("funes_memory_pi-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for name in EXTENSION_FILES:
        assert f"funes_pi/extension/{name}" in names
    assert "funes_pi/contract_fixtures/config-home/.pi/agent/settings.json" in names
    assert "funes_pi/contract_fixtures/cases/basic/expected.funes.jsonl" in names
