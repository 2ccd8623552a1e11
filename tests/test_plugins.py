"""The plugin host: discovery, validation, isolation, environment switches, one test per hook.

Broken plugins are real distributions: a ``.dist-info`` folder with ``entry_points.txt`` and a
module, on a ``sys.path`` entry, exactly what an installer leaves behind.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from funes_core import Converter, HookInstaller, ToolRegistrar, hookimpl
from funes_core.faces.cli.app import make_app
from funes_core.host.manager import FunesPluginManager, load_plugins
from funes_core.models.registry import declare_model_kinds
from funes_echo import EchoConverter, EchoHookInstaller, EchoToolRegistrar

REPO = Path(__file__).resolve().parents[1]


def make_dist(
    site: Path, dist: str, version: str, *, modules: dict[str, str], entry_points: dict[str, str]
) -> None:
    """Install a tiny distribution into ``site`` the way an installer would (metadata + modules)."""
    site.mkdir(parents=True, exist_ok=True)
    for name, source in modules.items():
        (site / f"{name}.py").write_text(textwrap.dedent(source), encoding="utf-8")
    info = site / f"{dist.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n", encoding="utf-8"
    )
    lines = "".join(f"{name} = {target}\n" for name, target in entry_points.items())
    (info / "entry_points.txt").write_text(f"[funes]\n{lines}", encoding="utf-8")


def _unique(tmp_path: Path, stem: str) -> str:
    """A module name no other test uses (sys.modules outlives a test)."""
    return f"{stem}_{abs(hash(tmp_path)) % 10**8}"


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "site"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    return folder


def manager(site: Path, **environ: str) -> tuple[FunesPluginManager, io.StringIO]:
    err = io.StringIO()
    pm = FunesPluginManager(environ=environ, stderr=err)
    pm.load_entrypoints(path=[str(site)])
    return pm, err


GOOD = """
from funes_core import hookimpl
from funes_echo import EchoConverter

class {cls}(EchoConverter):
    id = "{ident}"

@hookimpl
def funes_register_converters():
    return [{cls}]
"""


def good_dist(
    site: Path, tmp_path: Path, dist: str, version: str, ident: str, entry: str | None = None
) -> str:
    """Install ``dist`` whose plugin (entry point ``entry``, else ``ident``) registers converter ``ident``.

    Returns its module's name (unique to the test).
    """
    module = _unique(tmp_path, dist.replace("-", "_"))
    make_dist(
        site,
        dist,
        version,
        modules={module: GOOD.format(cls="Good", ident=ident)},
        entry_points={entry or ident: module},
    )
    return module


# -- discovery ---------------------------------------------------------------------------------


def test_loads_the_installed_echo_plugin_from_its_entry_point() -> None:
    pm = load_plugins(environ={"FUNES_LOAD_PLUGINS": "echo"}, stderr=io.StringIO())
    info = pm.plugin_info("echo")
    assert info is not None
    assert (info.dist, info.status, info.module) == ("funes-memory-echo", "loaded", "funes_echo.plugin")
    assert info.hooks == [
        "funes_register_commands",
        "funes_register_converters",
        "funes_register_hook_installers",
        "funes_register_tool_registrars",
    ]
    integ = pm.integration("echo")
    assert integ is not None
    assert (integ.converter, integ.hook_installer, integ.tool_registrar) == (
        EchoConverter,
        EchoHookInstaller,
        EchoToolRegistrar,
    )
    assert integ.dist == "funes-memory-echo" and integ.label == "Echo"
    assert info.ids == {"converter": ["echo"], "hook installer": ["echo"], "tool registrar": ["echo"]}


def test_import_error_is_skipped_with_the_exact_line(site: Path, tmp_path: Path) -> None:
    mod = _unique(tmp_path, "funes_broken_import")
    make_dist(
        site,
        "funes-broken",
        "1.2.3",
        modules={mod: "import funes_no_such_dependency_xyz\n"},
        entry_points={"broken": mod},
    )
    make_dist(
        site,
        "funes-fine",
        "0.5",
        modules={f"{mod}_ok": GOOD.format(cls="Fine", ident="fine")},
        entry_points={"fine": f"{mod}_ok"},
    )
    pm, err = manager(site)
    assert err.getvalue() == (
        "funes: skipped plugin broken from funes-broken 1.2.3: "
        "ModuleNotFoundError: No module named 'funes_no_such_dependency_xyz'\n"
    )
    info = pm.plugin_info("broken")
    assert info is not None and info.status == "skipped"
    assert "fine" in pm.integrations(), "the other plugins keep working"


def test_raising_hook_is_skipped_and_the_rest_works(site: Path, tmp_path: Path) -> None:
    mod = _unique(tmp_path, "funes_raising")
    make_dist(
        site,
        "funes-raising",
        "0.1",
        modules={
            mod: """
            from funes_core import hookimpl

            @hookimpl
            def funes_register_converters():
                raise RuntimeError("boom")
            """
        },
        entry_points={"raising": mod},
    )
    pm, err = manager(site)
    pm.register(sys.modules["funes_echo.plugin"], "echo", dist="funes-memory-echo", version="0.1.0")
    assert set(pm.integrations()) == {"echo"}
    assert err.getvalue() == (
        "funes: skipped plugin raising from funes-raising 0.1: funes_register_converters raised "
        "RuntimeError: boom (report this to the plugin author)\n"
    )
    info = pm.plugin_info("raising")
    assert info is not None and info.status == "skipped"
    assert pm.integrations() is pm.integrations(), "the registry is computed once"


def test_misspelled_hookimpl_fails_loudly(site: Path, tmp_path: Path) -> None:
    mod = _unique(tmp_path, "funes_typo")
    make_dist(
        site,
        "funes-typo",
        "2.0",
        modules={
            mod: """
            from funes_core import hookimpl

            @hookimpl
            def funes_register_convertors():
                return []
            """
        },
        entry_points={"typo": mod},
    )
    pm, err = manager(site)
    assert err.getvalue() == (
        "funes: skipped plugin typo from funes-typo 2.0: unknown hook 'funes_register_convertors' "
        "(did you mean 'funes_register_converters'?) (report this to the plugin author)\n"
    )
    assert pm.loaded() == []


def test_optional_hook_for_a_future_funes_is_allowed(site: Path, tmp_path: Path) -> None:
    mod = _unique(tmp_path, "funes_future")
    make_dist(
        site,
        "funes-future",
        "1.0",
        modules={
            mod: """
            from funes_core import hookimpl

            @hookimpl(optionalhook=True)
            def funes_register_something_new():
                return []
            """
        },
        entry_points={"future": mod},
    )
    pm, err = manager(site)
    assert err.getvalue() == ""
    info = pm.plugin_info("future")
    assert info is not None and info.status == "loaded"


def test_hookimpl_asking_for_an_unknown_argument_is_skipped(site: Path, tmp_path: Path) -> None:
    mod = _unique(tmp_path, "funes_badargs")
    make_dist(
        site,
        "funes-badargs",
        "1.0",
        modules={
            mod: """
            from funes_core import hookimpl

            @hookimpl
            def funes_register_commands(app, console):
                pass
            """
        },
        entry_points={"badargs": mod},
    )
    pm, err = manager(site)
    assert err.getvalue().startswith(
        "funes: skipped plugin badargs from funes-badargs 1.0: PluginValidationError:"
    )
    assert pm.loaded() == []


def test_two_distributions_claiming_one_id_are_refused_naming_both(site: Path, tmp_path: Path) -> None:
    good_dist(site, tmp_path, "funes-twin-a", "1.0", "twin", entry="twin-a")
    good_dist(site, tmp_path, "funes-twin-b", "2.0", "twin", entry="twin-b")
    pm, err = manager(site)
    assert pm.integrations() == {}
    assert err.getvalue() == (
        "funes: refused integration 'twin': it is claimed by funes-twin-a 1.0 and funes-twin-b 2.0; "
        "uninstall one of them\n"
    )
    infos = {i.name: i for i in pm.plugins()}
    assert infos["twin-a"].conflicts == ["twin"] and infos["twin-b"].conflicts == ["twin"]


TAKEOVER = """
from dataclasses import replace

from funes_core import hookimpl
from funes_echo import EchoConverter


class CommunityEcho(EchoConverter):
    # Another scheme of session ids for the same transcripts.

    def sessions_in(self, path):
        return [replace(ref, session_id="community-" + ref.session_id) for ref in super().sessions_in(path)]

    def convert(self, ref):
        return [replace(t, session_id=ref.session_id) for t in super().convert(ref)]


@hookimpl
def funes_register_converters():
    return [CommunityEcho]
"""


def test_a_distribution_taking_over_an_id_whose_sessions_it_names_differently_is_warned_of(
    site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A plugin swapped behind funes' back (no `integrations install`): the hook's conversion holds
    back with the way out, and `integrations list` says it, instead of storing every session twice."""
    home, funes_home = tmp_path / "home", tmp_path / "funes-home"
    import funes_echo

    sessions = Path(funes_echo.__file__).parent / "contract_fixtures" / "home" / ".echo" / "sessions"
    (home / ".echo").mkdir(parents=True)
    shutil.copytree(sessions, home / ".echo" / "sessions")
    for key, value in {"HOME": str(home), "FUNES_HOME": str(funes_home), "FUNES_BIN": "funes-test"}.items():
        monkeypatch.setenv(key, value)
    runner = CliRunner()
    stored = load_plugins(environ={"FUNES_LOAD_PLUGINS": "echo"}, stderr=io.StringIO())
    done = runner.invoke(make_app(stored), ["integrations", "install", "echo", "--no-index"])
    assert done.exit_code == 0, done.stderr
    spool = funes_home / "spool" / "echo"
    before = sorted(p.name for p in spool.iterdir())

    module = _unique(tmp_path, "community_echo")
    make_dist(site, "community-echo", "0.3", modules={module: TAKEOVER}, entry_points={"echo": module})
    taken, err = manager(site)
    assert taken.integration("echo") is not None and err.getvalue() == ""
    transcript = home / ".echo" / "sessions" / "alpha.jsonl"
    done = runner.invoke(make_app(taken), ["integrations", "convert", "echo", str(transcript), "--index"])
    assert done.exit_code == 1
    line = done.stderr.strip()
    assert "\n" not in line, "one line"
    assert line.startswith(
        "funes: echo: community-echo 0.3 has taken over this integration from funes-memory-echo 0.1.0, "
        "which stored its sessions, and names 2 of the 2 differently (e.g. "
    )
    assert "To keep the stored ids, reinstall funes-memory-echo (and uninstall community-echo)" in line
    assert "to go ahead, run `funes integrations install echo --takeover`; nothing was converted" in line
    assert sorted(p.name for p in spool.iterdir()) == before, "no session stored a second time"

    done = runner.invoke(make_app(taken), ["integrations", "list"])
    assert done.exit_code == 0
    assert "funes: echo: community-echo 0.3 has taken over this integration" in done.stderr

    # The original distribution back in charge (or --takeover recorded): no warning, conversion goes on.
    done = runner.invoke(make_app(stored), ["integrations", "convert", "echo", str(transcript)])
    assert done.exit_code == 0 and "taken over" not in done.stderr, done.stderr


def test_two_distributions_with_one_entry_point_name_are_refused(site: Path, tmp_path: Path) -> None:
    a = good_dist(site, tmp_path, "funes-same-a", "1.0", "same")
    b = good_dist(site, tmp_path, "funes-same-b", "1.0", "same")
    pm, err = manager(site)
    assert "refused plugin same: provided by funes-same-a 1.0 and funes-same-b 1.0" in err.getvalue()
    assert pm.integrations() == {}
    assert a not in sys.modules and b not in sys.modules, "neither was imported"


# -- environment switches ----------------------------------------------------------------------


@pytest.fixture
def two_plugins(site: Path, tmp_path: Path) -> Path:
    good_dist(site, tmp_path, "funes-alpha", "1.0", "alpha")
    good_dist(site, tmp_path, "funes-beta", "1.0", "beta")
    return site


def _statuses(pm: FunesPluginManager) -> dict[str, str]:
    return {info.name: info.status for info in pm.plugins()}


def test_funes_load_plugins_loads_a_subset(two_plugins: Path) -> None:
    pm, _ = manager(two_plugins, FUNES_LOAD_PLUGINS="alpha")
    assert _statuses(pm) == {"alpha": "loaded", "beta": "not selected"}
    assert set(pm.integrations()) == {"alpha"}
    by_dist, _ = manager(two_plugins, FUNES_LOAD_PLUGINS=" funes-beta ")
    assert set(by_dist.integrations()) == {"beta"}, "a distribution name works too"


def test_funes_load_plugins_empty_loads_none(two_plugins: Path) -> None:
    pm, err = manager(two_plugins, FUNES_LOAD_PLUGINS="")
    assert _statuses(pm) == {"alpha": "not selected", "beta": "not selected"}
    assert pm.integrations() == {} and err.getvalue() == ""


def test_funes_disabled_plugins_blocks_some(two_plugins: Path) -> None:
    pm, _ = manager(two_plugins, FUNES_DISABLED_PLUGINS="beta,nonexistent")
    assert _statuses(pm) == {"alpha": "loaded", "beta": "disabled"}
    assert pm.pm.is_blocked("beta")
    assert set(pm.integrations()) == {"alpha"}


def test_funes_trace_plugins_traces_hook_calls(two_plugins: Path) -> None:
    pm, err = manager(two_plugins, FUNES_TRACE_PLUGINS="1")
    pm.integrations()
    assert "funes_register_converters" in err.getvalue()


# -- validation --------------------------------------------------------------------------------


class _Plugin:
    """A plugin object registered directly (no distribution), returning ``classes``."""

    def __init__(self, classes: object) -> None:
        self.classes = classes

    @hookimpl
    def funes_register_converters(self) -> object:
        return self.classes


def _register(classes: object) -> tuple[FunesPluginManager, str]:
    err = io.StringIO()
    pm = FunesPluginManager(environ={}, stderr=err)
    pm.register(_Plugin(classes), "probe", dist="funes-probe", version="9.9")
    pm.integrations()
    return pm, err.getvalue()


class _V3(EchoConverter):
    id = "vthree"
    contract_version = 3


class _V1(EchoConverter):
    """A class written for contract 1: it still loads, with a deprecation note."""

    id = "vone"
    contract_version = 1


class _BadId(EchoConverter):
    id = "Bad Id"


class _NoLabel(EchoConverter):
    id = "nolabel"
    label = " "


class _Abstract(Converter):
    id = "abstract"
    label = "Abstract"
    contract_version = 1


class _Inherits(Converter):
    """Declares no contract_version of its own: the base deliberately has none."""

    id = "inherits"
    label = "Inherits"


@pytest.mark.parametrize(
    ("classes", "message"),
    [
        ([_BadId], "id must match [a-z0-9_-]+, got 'Bad Id'"),
        ([_NoLabel], "label must be a non-empty string"),
        ([_Abstract], "does not implement convert, session_roots, sessions_in"),
        ([EchoHookInstaller], "which is not a subclass of funes_core.Converter"),
        ([EchoConverter, EchoConverter], "returned two classes with id 'echo'"),
        (EchoConverter(), "must return an iterable of classes, got EchoConverter"),
        ("echo", "must return an iterable of classes, got str"),
    ],
)
def test_invalid_classes_are_refused_naming_the_distribution(classes: object, message: str) -> None:
    pm, err = _register(classes)
    assert pm.integrations() == {}
    assert err.startswith("funes: skipped plugin probe from funes-probe 9.9: ")
    assert message in err
    assert err.rstrip().endswith("(report this to the plugin author)")


@pytest.mark.parametrize(
    ("classes", "message"),
    [
        (
            [_V3],
            "speaks plugin contract 3, but funes-memory 0.1.0 speaks contract 2 or 1; upgrade "
            "funes-memory to a release that speaks contract 3",
        ),
        ([_Inherits], "declares no plugin contract (contract_version is None); its author must declare"),
    ],
)
def test_a_contract_this_funes_does_not_speak_is_refused_saying_what_to_upgrade(
    classes: object, message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import funes_core

    monkeypatch.setattr(funes_core.version, "__version__", "0.1.0")
    pm, err = _register(classes)
    assert pm.integrations() == {}
    assert len(err.splitlines()) == 1
    assert err.startswith("funes: skipped plugin probe from funes-probe 9.9: ")
    assert message in err and "report this" not in err


def test_a_contract_1_plugin_keeps_loading_with_a_deprecation_note() -> None:
    pm, err = _register([_V1])
    assert list(pm.integrations()) == ["vone"]
    assert err.splitlines() == [
        "funes: note: funes-probe 9.9 speaks plugin contract 1; it keeps working, but contract 2 is "
        "current: ask its author for a release checked with funes-memory-contracts "
        "(docs/plugins/contract-2.md)"
    ]
    info = pm.plugin_info("probe")
    assert info is not None and info.to_json()["deprecated"] and info.to_json()["contract_version"] == 1


def test_none_is_an_empty_registration() -> None:
    pm, err = _register(None)
    assert pm.integrations() == {} and err == ""


# -- one test per hook (tests/test_docs_hooks.py checks they exist) ------------------------------


def test_hook_funes_register_converters() -> None:
    pm, err = _register([EchoConverter])
    integ = pm.integration("echo")
    assert err == "" and integ is not None
    assert integ.converter is EchoConverter and integ.hook_installer is None
    assert integ.origin == "funes-probe 9.9"


def test_hook_funes_register_hook_installers() -> None:
    class Plugin:
        @hookimpl
        def funes_register_hook_installers(self) -> list[type[HookInstaller]]:
            return [EchoHookInstaller]

    pm = FunesPluginManager(environ={}, stderr=io.StringIO())
    pm.register(Plugin(), "installers")
    integ = pm.integration("echo")
    assert integ is not None and integ.hook_installer is EchoHookInstaller and integ.converter is None


def test_hook_funes_register_tool_registrars() -> None:
    class Plugin:
        @hookimpl
        def funes_register_tool_registrars(self) -> list[type[ToolRegistrar]]:
            return [EchoToolRegistrar]

    pm = FunesPluginManager(environ={}, stderr=io.StringIO())
    pm.register(Plugin(), "registrars")
    integ = pm.integration("echo")
    assert integ is not None and integ.tool_registrar is EchoToolRegistrar


def test_hook_funes_register_commands() -> None:
    pm = load_plugins(environ={"FUNES_LOAD_PLUGINS": "echo"}, stderr=io.StringIO())
    app = make_app(pm)
    runner = CliRunner()
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0 and "echo" in result.output
    result = runner.invoke(app, ["echo", "sessions"], env={"HOME": "/nonexistent-home-for-test"})
    assert result.exit_code == 0, result.output
    assert "no echo sessions under /nonexistent-home-for-test/.echo/sessions" in result.output


def test_a_command_shadowing_a_core_verb_is_refused() -> None:
    class Shadow:
        @hookimpl
        def funes_register_commands(self, app: typer.Typer) -> None:
            @app.command("index")
            def index() -> None:
                typer.echo("hijacked")

            @app.command("shadow-extra")
            def extra() -> None:
                typer.echo("extra")

    err = io.StringIO()
    pm = FunesPluginManager(environ={}, stderr=err)
    pm.register(Shadow(), "shadow", dist="funes-shadow", version="1.0")
    app = make_app(pm)
    assert err.getvalue() == (
        "funes: skipped plugin shadow from funes-shadow 1.0: command 'index' is already taken "
        "(report this to the plugin author)\n"
    )
    result = CliRunner().invoke(app, ["--help"])
    assert "shadow-extra" not in result.output, "nothing the refused plugin added survives"


def test_a_raising_command_hook_leaves_the_app_intact() -> None:
    class Raising:
        @hookimpl
        def funes_register_commands(self, app: typer.Typer) -> None:
            @app.command("half-added")
            def half() -> None: ...

            raise ValueError("oops")

    err = io.StringIO()
    pm = FunesPluginManager(environ={}, stderr=err)
    pm.register(Raising(), "raising-cmd")
    app = make_app(pm)
    assert "funes_register_commands raised ValueError: oops" in err.getvalue()
    assert "half-added" not in CliRunner().invoke(app, ["--help"]).output


# -- the real CLI, in a subprocess, with broken distributions installed ---------------------------


@pytest.fixture
def broken_site(tmp_path: Path) -> Path:
    site = tmp_path / "broken-site"
    make_dist(
        site,
        "funes-broken",
        "1.2.3",
        modules={"funes_broken_mod": "import funes_missing_dep\n"},
        entry_points={"broken": "funes_broken_mod"},
    )
    make_dist(
        site,
        "funes-raising",
        "0.1",
        modules={
            "funes_raising_mod": """
            from funes_core import hookimpl

            @hookimpl
            def funes_register_converters():
                raise RuntimeError("boom")
            """
        },
        entry_points={"raising": "funes_raising_mod"},
    )
    return site


def _funes(args: list[str], site: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(site), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env["FUNES_LOAD_PLUGINS"] = "broken,raising,echo"
    env.pop("FUNES_DISABLED_PLUGINS", None)
    return subprocess.run(
        [sys.executable, "-m", "funes_core", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


BROKEN_LINE = (
    "funes: skipped plugin broken from funes-broken 1.2.3: "
    "ModuleNotFoundError: No module named 'funes_missing_dep'"
)
RAISING_LINE = (
    "funes: skipped plugin raising from funes-raising 0.1: "
    "funes_register_converters raised RuntimeError: boom (report this to the plugin author)"
)


def test_funes_help_runs_with_broken_plugins_installed(broken_site: Path) -> None:
    done = _funes(["--help"], broken_site)
    assert done.returncode == 0, done.stderr
    assert "integrations" in done.stdout and "echo" in done.stdout
    assert done.stderr.splitlines() == [BROKEN_LINE]


def test_funes_plugins_reports_broken_plugins(broken_site: Path) -> None:
    done = _funes(["plugins"], broken_site)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [BROKEN_LINE, RAISING_LINE]
    assert "echo (funes-memory-echo 0.1.0): loaded" in done.stdout
    assert "broken (funes-broken 1.2.3): skipped: ModuleNotFoundError" in done.stdout
    assert "id echo: converter, hook installer, tool registrar" in done.stdout

    listed = _funes(["plugins", "--json"], broken_site)
    data = {item["name"]: item for item in json.loads(listed.stdout)}
    assert data["raising"]["status"] == "skipped"
    assert data["echo"]["ids"] == {
        "converter": ["echo"],
        "hook installer": ["echo"],
        "tool registrar": ["echo"],
    }
    assert data["echo"]["dist"] == "funes-memory-echo" and data["echo"]["contract_version"] == 2
    assert data["echo"]["deprecated"] is None


def test_plugin_loading_imports_nothing_heavy() -> None:
    code = (
        "import sys; from funes_core.faces.cli.app import make_app;"
        " from funes_core.host.manager import load_plugins;"
        "make_app(load_plugins()); heavy = [m for m in ('lancedb', 'fastembed', 'mcp', 'numpy')"
        " if m in sys.modules]; print(','.join(heavy))"
    )
    env = dict(os.environ, FUNES_LOAD_PLUGINS="echo")
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == ""


def test_a_sub_app_shadowing_a_core_group_or_another_plugin_is_refused() -> None:
    class Group:
        def __init__(self, name: str) -> None:
            self.name = name

        @hookimpl
        def funes_register_commands(self, app: typer.Typer) -> None:
            app.add_typer(typer.Typer(name=self.name, help=f"from {self.name}"))

    err = io.StringIO()
    pm = FunesPluginManager(environ={}, stderr=err)
    pm.register(Group("integrations"), "shadow-group")
    pm.register(Group("mine"), "first")
    pm.register(Group("mine"), "second")
    app = make_app(pm)
    lines = err.getvalue().splitlines()
    assert lines == [
        "funes: skipped plugin shadow-group from an unknown distribution: command 'integrations' is already "
        "taken (report this to the plugin author)",
        "funes: skipped plugin second from an unknown distribution: command 'mine' is already taken "
        "(report this to the plugin author)",
    ]
    assert "from mine" in CliRunner().invoke(app, ["--help"]).output


def test_hook_funes_register_embedders() -> None:
    from funes_contracts.models import TinyEmbedder, plugin

    pm = FunesPluginManager(environ={}, stderr=io.StringIO())

    declare_model_kinds(pm)
    pm.register(plugin(TinyEmbedder), "tiny", dist="funes-tiny", version="1.0")
    [(cls, info)] = pm.classes("embedder")
    assert cls is TinyEmbedder and info.origin == "funes-tiny 1.0"
    assert pm.plugin_info("tiny").ids["embedder"] == ["tiny"]  # type: ignore[union-attr]


def test_hook_funes_register_rerankers() -> None:
    from funes_contracts.models import OverlapReranker, plugin

    pm = FunesPluginManager(environ={}, stderr=io.StringIO())

    declare_model_kinds(pm)
    pm.register(plugin(OverlapReranker), "overlap")
    assert [cls for cls, _ in pm.classes("reranker")] == [OverlapReranker]


def test_model_classes_that_are_not_valid_are_refused_naming_the_plugin() -> None:
    from funes_contracts.models import TinyEmbedder, plugin

    class NoLabel(TinyEmbedder):
        label = ""

    err = io.StringIO()
    pm = FunesPluginManager(environ={}, stderr=err)
    declare_model_kinds(pm)
    pm.register(plugin(NoLabel), "nolabel", dist="funes-nolabel", version="2.0")
    assert pm.classes("embedder") == []
    assert err.getvalue().startswith("funes: skipped plugin nolabel from funes-nolabel 2.0:")
    assert ".label must be a non-empty string" in err.getvalue()


def test_two_plugins_claiming_one_embedder_id_are_both_refused() -> None:
    from funes_contracts.models import TinyEmbedder, plugin

    class Twin(TinyEmbedder):
        pass

    err = io.StringIO()
    pm = FunesPluginManager(environ={}, stderr=err)
    declare_model_kinds(pm)
    pm.register(plugin(TinyEmbedder), "a", dist="funes-a", version="1")
    pm.register(plugin(Twin), "b", dist="funes-b", version="1")
    assert pm.classes("embedder") == []
    assert "refused embedder 'tiny': it is claimed by funes-a 1 and funes-b 1" in err.getvalue()
