"""``funes integrations``: install / remove / list / info / convert / check, in a throwaway HOME.

The CLI runs in-process (typer's CliRunner) against a fresh plugin manager that loads only the
installed funes-echo. Subprocesses that would install packages or build an index are replaced by
a recording runner, except where a test says it runs the real thing.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import stat
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

import funes_echo
from funes_core.faces.cli.app import make_app
from funes_core.host.catalog import load_catalog
from funes_core.host.manager import FunesPluginManager, load_plugins
from funes_core.turns.format import read_turns_file
from funes_core.wiring.integrations.check import check
from funes_core.wiring.integrations.common import InstallError, Orchestrator, RunResult
from funes_core.wiring.integrations.install import install, installer_argv
from funes_core.wiring.integrations.resolve import find_installer

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from fakes import FakeRunner, FakeUI  # noqa: E402

FIXTURES = Path(funes_echo.__file__).parent / "contract_fixtures"
ECHO_SRC = REPO / "plugins" / "funes-echo"


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def pm() -> FunesPluginManager:
    return load_plugins(environ={"FUNES_LOAD_PLUGINS": "echo"}, stderr=io.StringIO())


@dataclass
class World:
    home: Path
    funes_home: Path
    env: dict[str, str]

    def config(self) -> Path:
        return self.home / ".echo" / "config.json"

    def mcp(self) -> Path:
        return self.home / ".echo" / "mcp.json"


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    """A HOME with echo's realistic config and two sessions, an empty FUNES_HOME, a pinned FUNES_BIN."""
    home = tmp_path / "home"
    shutil.copytree(FIXTURES / "config-home", home)
    shutil.copytree(FIXTURES / "home" / ".echo" / "sessions", home / ".echo" / "sessions")
    funes_home = tmp_path / "funes-home"
    env = {"HOME": str(home), "FUNES_HOME": str(funes_home), "FUNES_BIN": "funes-under-test"}
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return World(home, funes_home, env)


def cli(pm: FunesPluginManager, args: list[str]) -> tuple[int, str, str]:
    result = CliRunner().invoke(make_app(pm), args)
    return result.exit_code, result.stdout, result.stderr


def orchestrator(pm: FunesPluginManager, runner: FakeRunner, ui: FakeUI, **kw: object) -> Orchestrator:
    return Orchestrator(pm=pm, ui=ui.ui(), runner=runner, **kw)  # type: ignore[arg-type]


# -- install / remove ---------------------------------------------------------------------------


def test_install_then_reinstall_then_remove_restores_everything(pm: FunesPluginManager, world: World) -> None:
    original_config = world.config().read_bytes()
    original_mcp = world.mcp().read_bytes()
    sessions = snapshot(world.home / ".echo" / "sessions")

    code, out, err = cli(pm, ["integrations", "install", "echo", "--no-index"])
    assert code == 0, err
    assert out.splitlines() == [
        "echo: added the funes MCP server in ~/.echo/mcp.json",
        "echo: added the funes hook in ~/.echo/config.json",
        f"echo: converted 2 sessions into {world.funes_home / 'spool' / 'echo'} (2 written, 0 unchanged)",
        "echo: skipped the first index (--no-index); run `funes index --harness echo` later",
        "echo: installed",
    ]
    config = json.loads(world.config().read_text())
    assert config["hooks"]["funes"]["run"] == [
        "funes-under-test",
        "integrations",
        "convert",
        "echo",
        "{transcript}",
        str(world.funes_home / "spool" / "echo"),
        "--index",
    ]
    assert config["hooks"]["lint"] == {"on": "turn_end", "run": ["ruff", "check", "."]}
    mcp = json.loads(world.mcp().read_text())
    assert mcp["mcpServers"]["funes"]["command"] == "funes-under-test"
    assert mcp["mcpServers"]["funes"]["args"] == ["mcp"]
    spool = world.funes_home / "spool" / "echo"
    assert sorted(p.name for p in spool.iterdir()) == ["2026-03-02-parser.funes.jsonl", "alpha.funes.jsonl"]
    record = world.funes_home / "integrations" / "echo.json"
    assert stat.S_IMODE(record.stat().st_mode) == 0o600
    for folder in (world.funes_home / "integrations", world.funes_home / "spool", spool):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
    assert json.loads(record.read_text())["origin"] == "environment"

    before = snapshot(world.home), snapshot(world.funes_home)
    code, out, err = cli(pm, ["integrations", "install", "echo", "--no-index"])
    assert code == 0, err
    assert (snapshot(world.home), snapshot(world.funes_home)) == before, "a second install changes nothing"
    assert out.splitlines()[-1] == "echo: already installed; nothing changed"
    assert "echo: the funes hook already in ~/.echo/config.json" in out

    code, out, err = cli(pm, ["integrations", "remove", "echo"])
    assert code == 0, err
    assert world.config().read_bytes() == original_config
    assert world.mcp().read_bytes() == original_mcp
    assert snapshot(world.home / ".echo" / "sessions") == sessions, "the agent's transcripts are kept"
    assert len(list(spool.iterdir())) == 2, "the spool is kept"
    assert not record.exists()
    assert "removed; the memory, the spool and the agent's transcripts are kept" in out

    code, out, _ = cli(pm, ["integrations", "remove", "echo"])
    assert code == 0 and "echo: nothing to remove" in out
    assert world.config().read_bytes() == original_config


def test_install_into_a_home_without_echo_config(
    pm: FunesPluginManager, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "bare-home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("FUNES_HOME", str(tmp_path / "fh"))
    code, out, err = cli(pm, ["integrations", "install", "echo"])
    assert code == 0, err
    assert "no echo sessions to index yet" in out
    assert (home / ".echo" / "config.json").is_file()
    code, _, err = cli(pm, ["integrations", "remove", "echo"])
    assert code == 0, err
    assert [p for p in home.rglob("*") if p.is_file()] == [], "remove deleted the files install created"


def test_memory_is_bound_kept_and_unbound(pm: FunesPluginManager, world: World) -> None:
    assert cli(pm, ["integrations", "install", "echo", "team/memory", "--no-index", "--no-seed"])[0] == 0
    args = lambda: json.loads(world.mcp().read_text())["mcpServers"]["funes"]["args"]  # noqa: E731
    assert args() == ["mcp", "team/memory"]
    assert cli(pm, ["integrations", "install", "echo", "--no-index", "--no-seed"])[0] == 0
    assert args() == ["mcp", "team/memory"], "a bare re-run keeps the bound memory"
    code, out, _ = cli(pm, ["integrations", "install", "echo", "local", "--no-index", "--no-seed"])
    assert code == 0 and "echo: updated the funes MCP server in ~/.echo/mcp.json" in out
    assert args() == ["mcp"]


def test_install_runs_the_first_index_through_the_index_entry_point(
    pm: FunesPluginManager, world: World
) -> None:
    runner, ui = FakeRunner(results=[RunResult(0, "indexed 7 chunks")]), FakeUI()
    assert install(orchestrator(pm, runner, ui), "echo") == 0
    [(argv, env)] = runner.calls
    assert argv == [sys.executable, "-m", "funes_core", "index", "--harness", "echo"]
    assert env is not None and env["FUNES_HOME"] == str(world.funes_home) and env["HOME"] == str(world.home)
    assert "indexed 7 chunks" in ui.out and ui.out[-1] == "echo: installed"


def test_a_failed_first_index_is_reported_and_the_wiring_stays(pm: FunesPluginManager, world: World) -> None:
    runner = FakeRunner(results=[RunResult(2, "Usage: funes index\nError: No such option: --harness")])
    ui = FakeUI()
    assert install(orchestrator(pm, runner, ui), "echo") == 1
    assert ui.err[-1] == (
        "funes: echo is wired, but the first index failed (exit 2): Error: No such option: --harness; "
        "run `funes index --harness echo` to retry"
    )
    assert "funes" in json.loads(world.config().read_text())["hooks"]
    assert "funes" in json.loads(world.mcp().read_text())["mcpServers"]
    assert (world.funes_home / "integrations" / "echo.json").is_file()


def test_a_broken_agent_config_is_a_clear_error_and_stays_untouched(
    pm: FunesPluginManager, world: World
) -> None:
    world.config().write_text('{"theme": "dark",', encoding="utf-8")
    code, _, err = cli(pm, ["integrations", "install", "echo", "--no-index"])
    assert code == 1
    assert err.startswith(f"funes: echo: {world.config()}: is not valid JSON (")
    assert world.config().read_text() == '{"theme": "dark",'
    code, out, _ = cli(pm, ["integrations", "list"])
    assert code == 0 and "broken" in out


# -- trust --------------------------------------------------------------------------------------


def test_from_path_off_a_terminal_without_yes_is_refused(pm: FunesPluginManager, world: World) -> None:
    code, _, err = cli(pm, ["integrations", "install", "echo", "--from", str(ECHO_SRC)])
    assert code == 1
    shown, refusal = err.splitlines()[1:-1], err.splitlines()[-1] + "\n"
    [echo] = [line for line in shown if line.startswith("  funes-memory-echo ")]
    assert echo.endswith(f"from {ECHO_SRC}  [not vouched for]"), "a local folder is nobody's word"
    assert refusal == (
        "funes: refusing to install funes-memory-echo 0.1.0 by funes developers from "
        f"{ECHO_SRC} (a local folder): "
        "the funes catalog does not vouch for it and there is no terminal to confirm it; run this in a "
        "terminal to confirm it, or pass --yes to trust it\n"
    )
    assert not world.config().read_text().count("funes-echo"), "nothing was wired"


#: What ``uv pip install --dry-run`` says for funes-echo's folder (the resolved list is shown first).
DRY_ECHO = RunResult(
    0,
    "Resolved 76 packages in 1s\nWould install 1 package\n"
    f" + funes-memory-echo==0.1.0 (from file://{ECHO_SRC})\n",
)


def test_from_path_at_a_terminal_asks_every_time(pm: FunesPluginManager, world: World) -> None:
    runner, ui = FakeRunner(results=[DRY_ECHO, DRY_ECHO]), FakeUI(terminal=True, answer=False)
    with pytest.raises(
        InstallError, match=r"not installed: funes-memory-echo 0.1.0 by funes developers was not trusted"
    ):
        install(orchestrator(pm, runner, ui), "echo", from_path=ECHO_SRC)
    assert ui.asked == ["Trust it? [y/N]"] and [argv for argv, _ in runner.calls] == [
        find_installer().dry_run([str(ECHO_SRC)])
    ], "resolved, shown, not installed"
    assert any(f"origin: {ECHO_SRC} (a local folder)" in line for line in ui.err)
    assert any(
        re.fullmatch(rf"  funes-memory-echo 0\.1\.0  from {re.escape(str(ECHO_SRC))}  \[.+\]", line)
        for line in ui.err
    ), ui.err

    ui.answer = True
    assert install(orchestrator(pm, runner, ui), "echo", "team/m", from_path=ECHO_SRC, index=False) == 0
    assert len(ui.asked) == 2, "trust is confirmed every time"
    (_, _), (install_argv, _), (handover, _) = runner.calls[1:]
    assert install_argv == installer_argv(str(ECHO_SRC))
    assert handover[:7] == [sys.executable, "-m", "funes_core", "integrations", "install", "echo", "team/m"]
    assert "--installed-only" in handover and "--no-index" in handover
    assert handover[handover.index("--origin") + 1] == f"path: {ECHO_SRC} (a local folder)"


def test_from_a_folder_says_it_installed_a_copy_and_how_to_refresh_it(
    pm: FunesPluginManager, world: World
) -> None:
    runner, ui = FakeRunner(), FakeUI()
    assert install(orchestrator(pm, runner, ui), "echo", from_path=ECHO_SRC, yes=True, index=False) == 0
    assert ui.err[-1] == (
        f"funes: echo: installed a copy of {ECHO_SRC}; after you edit it, run "
        f"`funes integrations install echo --from {ECHO_SRC} --yes` again "
        "(`check` and every funes command use the installed copy)"
    )


def test_install_says_how_long_the_agent_keeps_its_transcripts(
    pm: FunesPluginManager, world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A converter's retention line is said once, with funes keeping its own copy; a bug in it is not."""
    from funes_echo import EchoConverter

    monkeypatch.setattr(EchoConverter, "retention", lambda self, home: "Echo deletes sessions after 7 days")
    code, out, err = cli(pm, ["integrations", "install", "echo", "--no-index"])
    assert code == 0, err
    assert (
        "echo: Echo deletes sessions after 7 days; funes keeps its own copy of every session it stores"
        in (out.splitlines())
    )

    def broken(self: object, home: Path) -> str:
        raise RuntimeError("a bug in the plugin")

    monkeypatch.setattr(EchoConverter, "retention", broken)
    code, out, err = cli(pm, ["integrations", "install", "echo", "--no-index"])
    assert code == 0 and "deletes" not in out, err


def test_another_distribution_naming_the_stored_sessions_differently_is_stopped(
    pm: FunesPluginManager, world: World
) -> None:
    """A takeover of the id whose sessions are stored under other ids would store each one twice."""
    assert cli(pm, ["integrations", "install", "echo", "--no-index"])[0] == 0
    record_path = world.funes_home / "integrations" / "echo.json"
    record = json.loads(record_path.read_text())
    # What a third-party echo plugin (another scheme of session ids) recorded when it seeded.
    record["dist"], record["version"] = "community-echo", "0.3"
    seeded = record["seeded"].items()
    record["seeded"] = {f"{k.rpartition('::')[0]}::echo-{n}": v for n, (k, v) in enumerate(seeded)}
    record_path.write_text(json.dumps(record))
    before = snapshot(world.home), record_path.read_bytes()
    code, out, err = cli(pm, ["integrations", "install", "echo", "--no-index"])
    assert (code, out) == (1, "")
    assert err.startswith("funes: echo: funes-memory-echo 0.1.0 names 2 of the 2 sessions community-echo 0.3")
    assert "each would be stored twice. Nothing was changed." in err and err.count("\n") == 1
    assert "`funes integrations install echo --takeover`" in err and "reinstall community-echo" in err
    assert (snapshot(world.home), record_path.read_bytes()) == before
    code, out, err = cli(pm, ["integrations", "install", "echo", "--no-index", "--takeover"])
    assert code == 0, err
    assert json.loads(record_path.read_text())["dist"] == "funes-memory-echo"
    assert cli(pm, ["integrations", "install", "echo", "--no-index"])[0] == 0, "then it is the owner"


def test_yes_trusts_without_a_terminal(pm: FunesPluginManager, world: World) -> None:
    runner, ui = FakeRunner(results=[DRY_ECHO]), FakeUI()
    assert install(orchestrator(pm, runner, ui), "echo", from_path=ECHO_SRC, yes=True) == 0
    assert ui.asked == [] and ui.err[0].startswith("funes: with uv (")
    assert any(line.startswith("funes: trusting funes-memory-echo 0.1.0") for line in ui.err)
    assert runner.calls[1][0] == installer_argv(str(ECHO_SRC))


def test_a_failed_package_install_is_one_clear_line(pm: FunesPluginManager, world: World) -> None:
    runner = FakeRunner(
        results=[
            RunResult(0, " + funes-zeta==1.0\n"),
            RunResult(1, "ERROR: No matching distribution found for funes-zeta"),
        ]
    )
    catalog = load_catalog(
        'catalog_version = 1\n[integrations.zeta]\ndist = "funes-zeta"\nlabel = "Zeta"\ntier = "maintained"\n'
        'author = "funes developers"\nsource = "plugins/funes-zeta"\nsummary = "s"\nroles = ["converter"]\n'
        "contract_version = 1\n"
    )
    with pytest.raises(InstallError) as err:
        install(orchestrator(pm, runner, FakeUI(), catalog=catalog), "zeta", yes=True)
    assert str(err.value) == (
        "installing funes-zeta failed (exit 1): ERROR: No matching distribution found for funes-zeta"
    )
    assert runner.calls[1][0] == installer_argv("funes-zeta")


def test_a_community_listing_is_confirmed(pm: FunesPluginManager, world: World) -> None:
    catalog = load_catalog(
        'catalog_version = 1\n[integrations.zeta]\ndist = "funes-zeta"\nlabel = "Zeta"\ntier = "community"\n'
        'author = "Someone"\nrepo = "https://example.org/funes-zeta"\nsummary = "s"\nroles = ["converter"]\n'
        "contract_version = 1\n"
    )
    with pytest.raises(
        InstallError, match=r"refusing to install funes-zeta .* by Someone from the funes catalog"
    ):
        install(orchestrator(pm, FakeRunner(), FakeUI(), catalog=catalog), "zeta")


def test_an_unknown_id_names_what_is_known(pm: FunesPluginManager, world: World) -> None:
    code, _, err = cli(pm, ["integrations", "install", "nosuchagent"])
    assert code == 1
    assert err.startswith("funes: unknown integration 'nosuchagent': no installed plugin provides it")
    assert "claude" in err and "echo" in err and "--from PATH" in err
    code, _, err = cli(pm, ["integrations", "install", "Bad Id"])
    assert code == 1 and "is not an integration id" in err


# -- list / info --------------------------------------------------------------------------------


def test_list_shows_installed_and_catalog_with_status(pm: FunesPluginManager, world: World) -> None:
    code, out, _ = cli(pm, ["integrations", "list", "--json"])
    rows = {row["id"]: row for row in json.loads(out)}
    assert code == 0
    assert rows["echo"]["status"] == "not wired" and rows["echo"]["agent_found"] is True
    assert rows["echo"]["installed"] == "funes-memory-echo 0.1.0"
    assert (
        rows["claude"]["status"] == "not installed"
        and rows["claude"]["catalog"] == "funes-memory-claude (maintained)"
    )
    cli(pm, ["integrations", "install", "echo", "--no-index", "--no-seed"])
    code, out, _ = cli(pm, ["integrations", "list"])
    lines = out.splitlines()
    assert lines[0].split() == ["ID", "AGENT", "PLUGIN", "AGENT", "FOUND", "STATUS"]
    assert any(
        line.startswith("echo") and line.rstrip().endswith("wired") and "not" not in line for line in lines
    )
    assert any(line.startswith("claude") and "not installed" in line for line in lines)


def test_info_text_and_json(pm: FunesPluginManager, world: World) -> None:
    code, out, _ = cli(pm, ["integrations", "info", "echo"])
    assert code == 0
    assert "plugin: echo from funes-memory-echo 0.1.0" in out
    assert "converter: funes_echo.converter.EchoConverter" in out
    assert "agent found on this machine: yes" in out
    code, out, _ = cli(pm, ["integrations", "info", "echo", "--json"])
    data = json.loads(out)
    assert data["installed"]["status"] == "not wired"
    assert data["catalog"]["dist"] == "funes-memory-echo"
    code, out, _ = cli(pm, ["integrations", "info", "codex"])
    assert (
        code == 0
        and "plugin: not installed" in out
        and "install it with: funes integrations install codex" in out
    )
    code, _, err = cli(pm, ["integrations", "info", "nosuch"])
    assert code == 1 and "no installed plugin provides 'nosuch'" in err


# -- convert ------------------------------------------------------------------------------------


def test_convert_by_hand_gives_the_same_files_as_the_live_spool(
    pm: FunesPluginManager, world: World, tmp_path: Path
) -> None:
    out_dir = tmp_path / "out"
    code, out, err = cli(
        pm, ["integrations", "convert", "echo", str(world.home / ".echo" / "sessions"), str(out_dir)]
    )
    assert code == 0, err
    assert sorted(Path(line).name for line in out.splitlines()) == [
        "2026-03-02-parser.funes.jsonl",
        "alpha.funes.jsonl",
    ]
    assert "funes: echo: 2 turns files (7 turns)" in err
    cli(pm, ["integrations", "install", "echo", "--no-index"])
    assert snapshot(out_dir) == snapshot(world.funes_home / "spool" / "echo"), "same ids as the live hooks"
    for path in out_dir.iterdir():
        assert read_turns_file(path).warnings == []

    code, _, err = cli(pm, ["integrations", "convert", "echo", str(tmp_path / "missing"), str(out_dir)])
    assert code == 1 and "no such file or folder" in err
    empty = tmp_path / "empty"
    empty.mkdir()
    code, _, err = cli(pm, ["integrations", "convert", "echo", str(empty), str(out_dir)])
    assert code == 1 and err == f"funes: no echo sessions in {empty}\n"


# -- check --------------------------------------------------------------------------------------


@pytest.mark.slow
def test_check_runs_the_contract_suite_on_the_installed_plugin(pm: FunesPluginManager, world: World) -> None:
    code, out, err = cli(pm, ["integrations", "check", "echo"])
    assert code == 0, out + err
    lines = out.splitlines()
    assert lines[0] == "echo (funes-memory-echo 0.1.0): contract 2 conformance"
    verdicts = {line.split()[1]: line.split()[0] for line in lines[1:-1]}
    from funes_contracts.requirements import REQUIREMENTS

    # echo converts, installs hooks and registers MCP; it provides no embedder or reranker, so the
    # model roles' requirements are not its to meet and check does not list them.
    its_roles = {"converter", "installer", "registrar", "hook", "location"}
    expected = {rid for rid, req in REQUIREMENTS.items() if req.role in its_roles}
    assert set(verdicts) == expected, "one line per requirement of each role it plays"
    # Echo runs `funes integrations convert` itself (no hook module reads an event) and declares no
    # location variable: those requirements are skipped, each with the capability that explains it.
    # Every other requirement is checked.
    explained = {
        "hook:event": "capability hook-module",
        "hook:spool": "capability hook-module",
        "hook:indexer": "capability hook-module",
        "hook:quiet": "capability hook-module",
        "location:env": "capability location-env",
        "location:hook": "capability location-env",
    }
    assert {rid for rid, verdict in verdicts.items() if verdict != "PASS"} == set(explained)
    for line in lines[1:-1]:
        verdict, rid = line.split()[:2]
        if rid in explained:
            assert verdict == "SKIP" and line.split(None, 2)[2].startswith(explained[rid]), line
    assert verdicts["converter:golden"] == "PASS" and verdicts["installer:remove-restores"] == "PASS"
    assert verdicts["location:every-session"] == "PASS"
    assert re.fullmatch(r"\d+ passed, 0 failed, 6 skipped, 0 provisional warnings", lines[-1]), lines[-1]


def test_check_reports_failures_and_exits_non_zero(
    pm: FunesPluginManager, world: World, tmp_path: Path
) -> None:
    report = {
        "contract_version": 1,
        "results": [
            {
                "test": "T::test_golden[basic]",
                "requirement": "converter:golden",
                "outcome": "failed",
                "reason": "line 2 differs",
            },
            {
                "test": "T::test_golden[edge]",
                "requirement": "converter:golden",
                "outcome": "passed",
                "reason": "",
            },
            {
                "test": "T::test_discover",
                "requirement": "converter:discover",
                "outcome": "skipped",
                "reason": "capability discover: the converter declares it cannot discover sessions",
            },
            {
                "test": "T::test_stable_ids[basic]",
                "requirement": "converter:stable-ids",
                "outcome": "skipped",
                "reason": "cannot derive earlier transcripts from this case",
            },
            {
                "test": "T::test_new",
                "requirement": "converter:seq-dense",
                "outcome": "xfailed",
                "reason": "provisional",
            },
        ],
    }

    def fake(argv: Sequence[str], **_: object) -> RunResult:
        target = next(a for a in argv if a.startswith("--funes-report="))
        Path(target.split("=", 1)[1]).write_text(json.dumps(report))
        return RunResult(1, "")

    ui = FakeUI()
    assert check(Orchestrator(pm=pm, ui=ui.ui(), runner=fake), "echo") == 1  # type: ignore[arg-type]
    assert ui.out[1:5] == [
        "SKIP  converter:discover    capability discover: the converter declares it cannot discover sessions",
        "FAIL  converter:golden      T::test_golden[basic]: line 2 differs",
        "WARN  converter:seq-dense   provisional",
        "FAIL  converter:stable-ids  T::test_stable_ids[basic]: skipped, and no declared capability "
        "explains it: cannot derive earlier transcripts from this case",
    ]
    assert ui.out[-1] == "0 passed, 2 failed, 1 skipped, 1 provisional warnings"


def test_check_without_a_report_exits_2(pm: FunesPluginManager, world: World) -> None:
    ui = FakeUI()
    runner = FakeRunner(results=[RunResult(4, "ERROR: usage")])
    assert check(orchestrator(pm, runner, ui), "echo") == 2
    assert ui.err[0] == "ERROR: usage"
    assert "the contract suite did not run (pytest exit 4)" in ui.err[-1]


def test_a_rerun_after_the_spool_drained_converts_nothing_unless_the_memory_is_gone(
    pm: FunesPluginManager, world: World
) -> None:
    runner, ui = FakeRunner(), FakeUI()
    assert install(orchestrator(pm, runner, ui), "echo") == 0
    spool = world.funes_home / "spool" / "echo"
    for path in spool.iterdir():  # what `funes index` does once a file is stored
        path.unlink()
    (world.funes_home / "memory").mkdir()
    runner, ui = FakeRunner(), FakeUI()
    assert install(orchestrator(pm, runner, ui), "echo") == 0
    assert list(spool.iterdir()) == [] and runner.calls == []
    assert ui.out[-2:] == [
        "echo: spool up to date (2 sessions already converted)",
        "echo: already installed; nothing changed",
    ]

    (world.funes_home / "memory").rmdir()  # the memory was deleted: re-running install rebuilds it
    runner, ui = FakeRunner(), FakeUI()
    assert install(orchestrator(pm, runner, ui), "echo") == 0
    assert len(list(spool.iterdir())) == 2 and len(runner.calls) == 1


# -- registered paths (--path) --------------------------------------------------------------------


def _echo_session(folder: Path, name: str, session_id: str, text: str) -> Path:
    """One echo transcript (the funes-echo native format) holding ``text``."""
    source = FIXTURES / "cases" / "basic" / "2026-03-02-parser.jsonl"
    lines = source.read_text(encoding="utf-8").replace("parser", text).replace("2026-03-02", "2026-03-09")
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(lines.replace('"session": "', f'"session": "{session_id}-'), encoding="utf-8")
    return path


def test_a_registered_path_is_seeded_recorded_and_refreshed_by_index(
    pm: FunesPluginManager, world: World, tmp_path: Path
) -> None:
    backup = tmp_path / "old-laptop"
    _echo_session(backup, "a.jsonl", "backup", "tokenizer")
    code, out, err = cli(pm, ["integrations", "install", "echo", "--no-index", "--path", str(backup)])
    assert code == 0, err
    assert "echo: converted 3 sessions into" in out, "two discovered in HOME, one under --path"
    record = json.loads((world.funes_home / "integrations" / "echo.json").read_text())
    assert record["paths"] == [str(backup)]
    assert any(key.startswith(f"{backup / 'a.jsonl'}::") for key in record["seeded"])

    spool = world.funes_home / "spool" / "echo"
    for item in spool.iterdir():
        item.unlink()  # as if indexed and drained
    from funes_core.wiring.integrations.seed import refresh_registered

    def refresh() -> FakeUI:
        ui = FakeUI()
        refresh_registered(orchestrator(pm, FakeRunner(), ui))
        return ui

    assert refresh().err == [], "nothing changed: nothing is read or written"
    assert list(spool.iterdir()) == []
    _echo_session(backup, "b.jsonl", "later", "lexer")
    assert refresh().err == ["funes: echo: 1 changed sessions converted into the spool"]
    assert len(list(spool.iterdir())) == 1
    assert refresh().err == []


def test_index_refreshes_registered_paths_first(
    pm: FunesPluginManager, world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    backup = tmp_path / "old-laptop"
    _echo_session(backup, "a.jsonl", "backup", "tokenizer")
    assert (
        cli(pm, ["integrations", "install", "echo", "--no-index", "--no-seed", "--path", str(backup)])[0] == 0
    )
    monkeypatch.setenv("FUNES_EMBEDDER", "hash")
    code, out, err = cli(pm, ["index", "--harness", "echo"])
    assert code == 0, err
    assert "echo: 1 changed sessions converted into the spool" in err
    assert out.startswith("indexed 1 file:")


def test_bad_paths_are_refused_with_one_line(pm: FunesPluginManager, world: World, tmp_path: Path) -> None:
    (tmp_path / "a" / "notes").mkdir(parents=True)
    (tmp_path / "b" / "notes").mkdir(parents=True)
    cases = [
        (
            ["--path", str(tmp_path / "missing")],
            f"funes: --path {tmp_path / 'missing'}: no such folder or file\n",
        ),
    ]
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    cases.append((["--path", str(fifo)], f"funes: --path {fifo}: not a folder or a regular file\n"))
    for args, message in cases:
        code, _, err = cli(pm, ["integrations", "install", "echo", "--no-index", *args])
        assert (code, err) == (1, message)
    assert not (world.funes_home / "integrations" / "echo.json").exists(), "nothing was registered"
    code, _, err = cli(
        pm, ["integrations", "install", "echo", "--no-index", "--path", str(tmp_path / "a" / "notes")]
    )
    assert code == 0, err
    code, _, err = cli(
        pm, ["integrations", "install", "echo", "--no-index", "--path", str(tmp_path / "b" / "notes")]
    )
    assert code == 1
    assert err == (
        f"funes: --path {tmp_path / 'b' / 'notes'}: echo already reads {tmp_path / 'a' / 'notes'}, which "
        "has the same name; register their common parent folder instead, or rename one\n"
    )


def test_an_unreadable_path_is_refused(
    pm: FunesPluginManager, world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    real_scandir = os.scandir

    def scandir(path: object) -> object:
        if Path(str(path)) == locked:
            raise PermissionError(13, "Permission denied")
        return real_scandir(path)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "scandir", scandir)
    code, _, err = cli(pm, ["integrations", "install", "echo", "--no-index", "--path", str(locked)])
    assert (code, err) == (1, f"funes: --path {locked}: not readable (permission denied)\n")


def test_remove_one_path_keeps_the_others_and_the_wiring(
    pm: FunesPluginManager, world: World, tmp_path: Path
) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    _echo_session(one, "a.jsonl", "one", "tokenizer")
    _echo_session(two, "b.jsonl", "two", "lexer")
    args = ["integrations", "install", "echo", "--no-index", "--path", str(one), "--path", str(two)]
    assert cli(pm, args)[0] == 0
    code, out, err = cli(pm, ["integrations", "remove", "echo", "--path", str(one)])
    assert code == 0, err
    assert out == f"echo: no longer reads {one}; what it stored stays in the memory\n"
    record = json.loads((world.funes_home / "integrations" / "echo.json").read_text())
    assert record["paths"] == [str(two)]
    assert not any(key.startswith(str(one)) for key in record["seeded"])
    assert "funes" in json.loads(world.mcp().read_text())["mcpServers"], "the wiring stays"
    code, _, err = cli(pm, ["integrations", "remove", "echo", "--path", str(one)])
    assert (code, err) == (1, f"funes: echo does not read {one} (registered paths: {two})\n")
