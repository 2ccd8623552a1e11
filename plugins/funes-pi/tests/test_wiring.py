"""funes-pi's wiring in detail: the byte-preserving ``packages`` edit, the shared extension, the hook."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from funes_core import ConfigError, EditError, InstallContext, WiringState, read_turns_file
from funes_pi import PiHookInstaller, PiToolRegistrar
from funes_pi.hook import LOCK_NAME, run_hook
from funes_pi.settings import Created, PackagesFile
from funes_pi.wiring import CONFIG_NAME, EXTENSION_FILES, SESSION_PLACEHOLDER, extension_dir

ENTRY = "/home/u/.funes/integrations/pi-extension"
FIXTURES = Path(__file__).resolve().parents[1] / "funes_pi" / "contract_fixtures"


def edit(tmp_path: Path) -> PackagesFile:
    return PackagesFile(tmp_path / "settings.json")


# -- the packages array, byte for byte ---------------------------------------------------------------


@pytest.mark.parametrize(
    "original",
    [
        "{}",
        "{}\n",
        '{\n  "theme": "dark"\n}\n',
        '{"theme":"dark"}',
        '{\n  "packages": []\n}',
        '{"packages":[ ],"theme":"light"}',
        '{\n  "packages": [\n    "npm:@acme/tools@1.0.0",\n'
        '    {"source": "git:github.com/a/b", "skills": []}\n  ]\n}\n',
        '{"packages": ["npm:a", "npm:b"], "x": {"y": "]["}}',
        '{\r\n\t"packages": [\r\n\t\t"npm:a"\r\n\t],\r\n\t"z": 1\r\n}\r\n',
        '  {"ünï": "✓" , "packages" : [ "npm:x" ] }  ',
        '{\n    "theme": "dark",\n    "packages": ["/already/there"]\n}\n',
    ],
)
def test_insert_then_remove_restores_every_byte(tmp_path: Path, original: str) -> None:
    doc = edit(tmp_path)
    inserted, created = doc.insert(original, ENTRY)
    data = json.loads(inserted)
    before = json.loads(original)
    assert data["packages"] == [ENTRY, *before.get("packages", [])]
    assert {k: v for k, v in data.items() if k != "packages"} == {
        k: v for k, v in before.items() if k != "packages"
    }
    assert created is (Created.NOTHING if "packages" in before else Created.MEMBER)
    assert doc.remove(inserted, [0], created) == original


def test_a_new_file_is_created_and_deleted_again(tmp_path: Path) -> None:
    doc = edit(tmp_path)
    text, created = doc.insert(None, ENTRY)
    assert created is Created.FILE
    assert json.loads(text) == {"packages": [ENTRY]}
    assert doc.remove(text, [0], created) is None


def test_the_entry_is_on_its_own_line_when_the_array_is_laid_out_that_way(tmp_path: Path) -> None:
    text, _ = edit(tmp_path).insert('{\n  "packages": [\n    "npm:a"\n  ]\n}\n', ENTRY)
    assert text == '{\n  "packages": [\n    "' + ENTRY + '",\n    "npm:a"\n  ]\n}\n'


def test_removal_after_pi_rewrote_the_file_keeps_everything_else(tmp_path: Path) -> None:
    """``pi install npm:x`` after funes: pi reformats the file and appends its own entry."""
    doc = edit(tmp_path)
    inserted, created = doc.insert('{"theme":"dark"}', ENTRY)
    data = json.loads(inserted)
    data["packages"].append("npm:x")
    rewritten = json.dumps(data, indent=2)
    result = doc.remove(rewritten, [0], created)
    assert result is not None
    assert json.loads(result) == {"packages": ["npm:x"], "theme": "dark"}
    # pi removed everything but ours: the member funes created goes too.
    only_ours = json.dumps({"packages": [ENTRY], "theme": "dark"}, indent=2)
    assert json.loads(doc.remove(only_ours, [0], created) or "") == {"theme": "dark"}


def test_an_entry_moved_elsewhere_is_still_removed(tmp_path: Path) -> None:
    text = '{"packages": ["npm:a", "' + ENTRY + '", "npm:b"]}'
    assert json.loads(edit(tmp_path).remove(text, [1], Created.NOTHING) or "") == {
        "packages": ["npm:a", "npm:b"]
    }


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('{"packages": ', "is not valid JSON"),
        ("[1]", "does not hold a JSON object"),
        ('{"packages": {"a": 1}}', "'packages' is not an array"),
    ],
)
def test_unusable_settings_are_refused(tmp_path: Path, text: str, problem: str) -> None:
    with pytest.raises(EditError, match=problem):
        edit(tmp_path).insert(text, ENTRY)


# -- the shared extension ---------------------------------------------------------------------------------


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
        "argv": ["/opt/funes/bin/funes", "pi", "hook", SESSION_PLACEHOLDER],
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
    with pytest.raises(ConfigError, match="'packages' is not an array"):
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


def test_the_hook_converts_into_the_spool_under_a_lock(ctx: InstallContext, tmp_path: Path) -> None:
    session = tmp_path / "2026-03-02T09-00-00-000Z_x.jsonl"
    _session(session, 2)
    assert run_hook(session, index=False, ctx=ctx) == 0
    spool = ctx.funes_home / "spool" / "pi"
    turns = read_turns_file(spool / f"{session.stem}.funes.jsonl").turns
    assert [t.turn_uuid for t in turns] == ["m0", "m1"]
    assert (spool / LOCK_NAME).exists()
    assert sorted(p.name for p in spool.glob("*.jsonl")) == [f"{session.stem}.funes.jsonl"]
    assert oct(spool.stat().st_mode & 0o777) == "0o700"
    _session(session, 3)
    assert run_hook(session, index=False, ctx=ctx) == 0
    assert len(read_turns_file(spool / f"{session.stem}.funes.jsonl").turns) == 3


def test_the_hook_refuses_what_is_not_a_pi_session(ctx: InstallContext, tmp_path: Path) -> None:
    other = tmp_path / "other.jsonl"
    other.write_text('{"kind": "unrelated"}\n')
    assert run_hook(other, index=False, ctx=ctx) == 1
    assert run_hook(tmp_path / "missing.jsonl", index=False, ctx=ctx) == 1


def test_funes_pi_hook_runs_from_the_cli(tmp_path: Path) -> None:
    session = tmp_path / "s.jsonl"
    _session(session, 1)
    funes_home = tmp_path / "fh"
    env = {**os.environ, "FUNES_HOME": str(funes_home), "HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-m", "funes_core", "pi", "hook", str(session), "--no-index"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert (funes_home / "spool" / "pi" / "s.funes.jsonl").is_file()


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
