"""Installing plugins safely: hooks that will import, the dependency list shown, wrong names refused.

The plugins here are real distributions in a throwaway ``site`` folder, on this process's
``sys.path`` only: exactly a plugin that imports where ``install`` runs but not in the fresh
interpreter an agent starts for the hook.
"""

from __future__ import annotations

import io
import json
import shutil
import sys
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

import funes_echo
from funes_core.faces.cli.app import make_app
from funes_core.host.catalog import load_catalog
from funes_core.host.manager import FunesPluginManager
from funes_core.wiring.integrations.common import InstallError, Orchestrator, RunResult
from funes_core.wiring.integrations.install import install
from funes_core.wiring.integrations.resolve import Installer, find_installer, plan

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fakes import FakeRunner, FakeUI, echo_home

FIXTURES = Path(funes_echo.__file__).parent / "contract_fixtures"

GHOST = """
from funes_core import hookimpl
from funes_echo import EchoConverter, EchoHookInstaller, EchoToolRegistrar

class GhostConverter(EchoConverter):
    id = "{ident}"

class GhostHooks(EchoHookInstaller):
    id = "{ident}"

class GhostTools(EchoToolRegistrar):
    id = "{ident}"

@hookimpl
def funes_register_converters():
    return [GhostConverter]

@hookimpl
def funes_register_hook_installers():
    return [GhostHooks]

@hookimpl
def funes_register_tool_registrars():
    return [GhostTools]
"""


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return echo_home(tmp_path, monkeypatch)


def ghost_manager(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[FunesPluginManager, str]:
    site = tmp_path / "site"
    site.mkdir()
    module = f"ghost_{abs(hash(tmp_path)) % 10**8}"
    ident = module.replace("_", "-")
    (site / f"{module}.py").write_text(textwrap.dedent(GHOST.format(ident=ident)), encoding="utf-8")
    info = site / "funes_memory_ghost-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: funes-memory-ghost\nVersion: 1.0\nRequires-Dist: funes-memory\n",
        encoding="utf-8",
    )
    (info / "entry_points.txt").write_text(f"[funes]\n{module} = {module}\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(site))
    pm = FunesPluginManager(environ={}, stderr=io.StringIO())
    pm.load_entrypoints(path=[str(site)])
    assert pm.integration(ident) is not None
    return pm, ident


def test_a_hook_that_would_not_import_is_not_wired(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pm, ident = ghost_manager(tmp_path, monkeypatch)
    config = home / ".echo" / "config.json"
    before = config.read_bytes()
    done = CliRunner().invoke(make_app(pm), ["integrations", "install", ident, "--no-index", "--no-seed"])
    assert done.exit_code == 1
    [line] = done.stderr.splitlines()
    assert line.startswith(f"funes: {ident}: its hook would fail, ")
    assert f"cannot import {ident.replace('-', '_')}: ModuleNotFoundError" in line
    assert line.endswith("(reinstall funes-memory-ghost into this environment, then install again)")
    assert config.read_bytes() == before, "nothing was wired"
    assert not (tmp_path / "funes-home" / "integrations" / f"{ident}.json").exists()


def test_an_importable_hook_is_wired_and_its_modules_recorded(home: Path, tmp_path: Path) -> None:
    import io as _io

    from funes_core.host.manager import load_plugins

    pm = load_plugins(environ={"FUNES_LOAD_PLUGINS": "echo"}, stderr=_io.StringIO())
    done = CliRunner().invoke(make_app(pm), ["integrations", "install", "echo", "--no-index", "--no-seed"])
    assert done.exit_code == 0, done.stderr
    record = json.loads((tmp_path / "funes-home" / "integrations" / "echo.json").read_text())
    assert record["modules"][0] == "funes_echo.plugin"
    assert {"funes_echo.converter", "funes_echo.wiring"} <= set(record["modules"])


# -- the resolved list, the installer, wrong names ------------------------------------------------

ECHO_SRC = Path(__file__).resolve().parents[1] / "plugins" / "funes-echo"
CATALOG = (
    'catalog_version = 1\n[integrations.zeta]\ndist = "funes-memory-zeta"\nlabel = "Zeta"\n'
    'tier = "maintained"\nauthor = "funes developers"\nsource = "plugins/funes-zeta"\nsummary = "s"\n'
    'roles = ["converter"]\ncontract_version = 2\n'
)


def _echo_pm() -> FunesPluginManager:
    from funes_core.host.manager import load_plugins

    return load_plugins(environ={"FUNES_LOAD_PLUGINS": "echo"}, stderr=io.StringIO())


def test_a_dependency_on_another_project_is_refused_before_anything_is_installed(home: Path) -> None:
    dry = RunResult(
        0,
        f"Would install 2 packages\n + funes==0.0.1\n + funes-memory-acme==1.0 (from file://{ECHO_SRC})\n",
    )
    runner, person = FakeRunner(results=[dry]), FakeUI(terminal=True, answer=True)
    orch = Orchestrator(pm=_echo_pm(), ui=person.ui(), runner=runner)
    with pytest.raises(InstallError) as err:
        install(orch, "acme", from_path=ECHO_SRC, yes=True)
    assert str(err.value).startswith(
        f"refusing to install funes-memory-echo from {ECHO_SRC} (a local folder): it would also install "
        "funes 0.0.1, another project on PyPI, not funes (funes is 'funes-memory'); nothing was installed"
    )
    assert [argv for argv, _ in runner.calls] == [find_installer().dry_run([str(ECHO_SRC)])], (
        "only resolved, never installed"
    )
    assert person.asked == []


def test_a_catalog_install_shows_the_list_and_needs_a_yes(home: Path) -> None:
    dry = RunResult(0, " + funes-memory-zeta==1.0\n + left-pad==2.0\n")
    runner, person = FakeRunner(results=[dry]), FakeUI()
    orch = Orchestrator(pm=_echo_pm(), ui=person.ui(), runner=runner, catalog=load_catalog(CATALOG))
    with pytest.raises(InstallError, match=r"there is no terminal to confirm it; .* or pass --yes"):
        install(orch, "zeta")
    index = find_installer().index({})
    assert person.err[0].startswith("funes: with uv (") and "this installs 2 distributions:" in person.err[0]
    assert person.err[1:] == [
        f"  funes-memory-zeta 1.0  from {index}  [vouched for by the funes catalog]",
        f"  left-pad 2.0           from {index}  [not vouched for]",
    ]
    assert len(runner.calls) == 1

    runner, person = FakeRunner(results=[dry]), FakeUI(terminal=True, answer=False)
    orch = Orchestrator(pm=_echo_pm(), ui=person.ui(), runner=runner, catalog=load_catalog(CATALOG))
    with pytest.raises(InstallError, match="was not trusted"):
        install(orch, "zeta")
    assert person.asked == ["Trust it? [y/N]"], "a dependency nobody vouches for is a stranger's code"
    assert any("Not vouched for: left-pad" in line for line in person.err)


def test_the_installer_is_uv_from_its_module_then_path_then_pip(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util
    import sys

    import uv

    assert find_installer().argv[0] == uv.find_uv_bin() and find_installer().found == "uv.find_uv_bin()"
    monkeypatch.setitem(sys.modules, "uv", None)  # not importable
    monkeypatch.setattr(shutil, "which", lambda name: "/opt/bin/uv" if name == "uv" else None)
    assert find_installer("/py").argv == ("/opt/bin/uv", "pip", "install", "--python", "/py")
    monkeypatch.setattr(shutil, "which", lambda name: None)
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda n, *a: object() if n == "pip" else real(n, *a))
    assert find_installer("/py").argv == ("/py", "-m", "pip", "install") and find_installer().name == "pip"
    monkeypatch.setattr(importlib.util, "find_spec", lambda n, *a: None if n == "pip" else real(n, *a))
    with pytest.raises(InstallError, match="uv is neither importable nor on PATH, and pip is not installed"):
        find_installer("/py")


def test_pips_report_is_read_too(monkeypatch: pytest.MonkeyPatch) -> None:
    report = {
        "install": [
            {
                "metadata": {"name": "funes-memory-acme", "version": "1.0"},
                "is_direct": True,
                "download_info": {"url": f"file://{ECHO_SRC}"},
            },
            {
                "metadata": {"name": "left-pad", "version": "2.0"},
                "is_direct": False,
                "download_info": {"url": "https://files.example.org/packages/left_pad-2.0.whl"},
            },
        ]
    }
    pip = Installer("pip", ("/py", "-m", "pip", "install"), "python -m pip")
    runner = FakeRunner(results=[RunResult(0, json.dumps(report))])
    planned = plan(pip, ["x"], runner, load_catalog(CATALOG), environ={})
    assert [(p.name, p.version, p.source, p.trusted) for p in planned] == [
        ("funes-memory-acme", "1.0", str(ECHO_SRC), False),
        ("left-pad", "2.0", "https://files.example.org/packages", False),
    ]
    assert [argv for argv, _ in runner.calls] == [
        ["/py", "-m", "pip", "install", "--dry-run", "--quiet", "--report", "-", "x"]
    ]


@pytest.mark.slow
def test_a_real_dry_run_resolves_a_local_plugin_without_installing_it() -> None:
    from funes_core.wiring.integrations.common import run_subprocess

    installer = find_installer()
    planned = plan(installer, [str(ECHO_SRC)], run_subprocess, load_catalog(CATALOG))
    assert [p.name for p in planned] == ["funes-memory-echo"], planned
    assert planned[0].source == str(ECHO_SRC)
