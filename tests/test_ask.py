"""``funes ask``: the prompt, the agent it picks, its one-line refusals and the streamed answer.

The agents here are fake: a registrar (registered through a real plugin hook) whose ``ask_cli``
is a small Python script on a throwaway PATH. The script records the prompt it reads on stdin and
that it ran, then prints its answer in pieces with pauses, so the tests can tell a streamed
answer from one printed at the end. The real Claude Code and Codex CLIs are driven by the
plugins' end-to-end tests (plugins/funes-claude/tests/test_ask_e2e.py and
plugins/funes-codex/tests/test_ask_e2e_codex.py).
"""

from __future__ import annotations

import io
import json
import os
import stat
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
from typer.testing import CliRunner

from funes_core import hookimpl
from funes_core.faces.cli.app import make_app
from funes_core.home import Home
from funes_core.host.api import (
    Capabilities,
    InstallContext,
    IntegrationError,
    Outcome,
    Status,
    ToolRegistrar,
    WiringState,
)
from funes_core.host.ask import AskAgent, AskError, choose_agent, run_agent
from funes_core.host.manager import FunesPluginManager
from funes_core.read.ask import INSTRUCTION, PASSAGES_HEADER

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples" / "sessions"

AGENT_SCRIPT = """\
import os, pathlib, sys, time
log = pathlib.Path(os.environ["ASK_LOG"])
log.mkdir(parents=True, exist_ok=True)
(log / "ran").write_text(os.getcwd())
(log / "argv").write_text("\\n".join(sys.argv[1:]))
(log / "prompt").write_text(sys.stdin.read())
mode = os.environ.get("ASK_MODE", "ok")
if mode == "fail":
    print("starting", file=sys.stderr)
    print("boom: the model is unreachable", file=sys.stderr)
    sys.exit(3)
go = os.environ.get("ASK_GO")
for n, piece in enumerate(("Alpha says: ", "the ARM build broke ", "on musl.\\n", "Sessions: 8d41b7e2")):
    print("TEXT " + piece.replace("\\n", "\\\\n"), flush=True)
    if go and n == 0:  # go on only once the reader has had the first piece (the answer streams)
        for _ in range(6000):
            if os.path.exists(go):
                break
            time.sleep(0.01)
        else:
            print("the first piece was never read while I ran", file=sys.stderr)
            sys.exit(4)
if mode == "error-event":
    print("ERROR quota exhausted", flush=True)
"""


class _Registrar(ToolRegistrar):
    contract_version = 1
    capabilities = Capabilities()

    def config_paths(self, ctx: InstallContext) -> list[Path]:
        return []

    def status(self, ctx: InstallContext) -> Status:
        return Status(WiringState.NOT_WIRED)

    def register(self, ctx: InstallContext) -> Outcome:
        return Outcome(False, "nothing")

    def unregister(self, ctx: InstallContext) -> Outcome:
        return Outcome(False, "nothing")

    def registered_command(self, ctx: InstallContext) -> list[str] | None:
        return None

    def ask_argv(self, program: str, ctx: InstallContext) -> list[str]:
        return [program, "--isolated"]

    def ask_answer(self, lines: Iterable[str]) -> Iterator[str]:
        for line in lines:
            if line.startswith("TEXT "):
                yield line[5:].rstrip("\n").replace("\\n", "\n")
            elif line.startswith("ERROR "):
                raise IntegrationError(line[6:].strip())


class AlphaRegistrar(_Registrar):
    id = "alpha"
    label = "Alpha Agent"
    ask_cli = "alpha-agent"


class BetaRegistrar(_Registrar):
    id = "beta"
    label = "Beta Agent"
    ask_cli = "beta-agent"


class MuteRegistrar(_Registrar):
    """An agent whose integration cannot answer (no ``ask_cli``)."""

    id = "mute"
    label = "Mute Agent"
    ask_cli: ClassVar[str | None] = None


class _Plugin:
    @hookimpl
    def funes_register_tool_registrars(self) -> list[type[ToolRegistrar]]:
        return [BetaRegistrar, AlphaRegistrar, MuteRegistrar]


@pytest.fixture
def pm() -> FunesPluginManager:
    manager = FunesPluginManager(environ={"FUNES_LOAD_PLUGINS": ""}, stderr=io.StringIO())
    manager.register(_Plugin(), "fake-agents", dist="funes-fake-agents", version="1.0")
    return manager


@pytest.fixture
def agents(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A PATH folder holding ``alpha-agent`` (and no ``beta-agent``); the script logs to ``ASK_LOG``."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "alpha-agent"
    script.write_text(f"#!{sys.executable}\n" + AGENT_SCRIPT, encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("ASK_LOG", str(tmp_path / "log"))
    return tmp_path / "log"


@pytest.fixture
def memory(funes_home: Home, monkeypatch: pytest.MonkeyPatch) -> Home:
    """The example sessions indexed into the test's FUNES_HOME with the hash embedder."""
    from funes_core.ingest.engine import IndexOptions, run_index
    from funes_core.models.embed import HashEmbedder

    monkeypatch.setenv("FUNES_EMBEDDER", "hash")
    run_index(IndexOptions(path=EXAMPLES), home=funes_home, embedder=HashEmbedder(), warn=lambda m: None)
    return funes_home


def cli(pm: FunesPluginManager, args: list[str]) -> tuple[int, str, str]:
    result = CliRunner().invoke(make_app(pm), args)
    return result.exit_code, result.stdout, result.stderr


# -- choosing the agent ---------------------------------------------------------------------------


def test_the_default_agent_is_the_first_capable_one_on_path(pm: FunesPluginManager, agents: Path) -> None:
    chosen = choose_agent(pm, None)
    assert (chosen.ident, chosen.label) == ("alpha", "Alpha Agent")
    assert Path(chosen.program).name == "alpha-agent"


def test_a_missing_agent_cli_is_named_and_the_other_agent_suggested(
    pm: FunesPluginManager, agents: Path
) -> None:
    with pytest.raises(AskError) as err:
        choose_agent(pm, "beta")
    assert str(err.value) == (
        "--agent beta: Beta Agent is not installed (no beta-agent on PATH); use --agent alpha"
    )


def test_an_agent_that_cannot_answer_or_is_unknown_is_refused(pm: FunesPluginManager, agents: Path) -> None:
    with pytest.raises(AskError, match=r"^--agent mute: Mute Agent cannot answer funes ask \(use "):
        choose_agent(pm, "mute")
    with pytest.raises(AskError, match=r"^--agent zeta: no installed integration provides it"):
        choose_agent(pm, "zeta")
    with pytest.raises(AskError, match="is not an integration id"):
        choose_agent(pm, "Bad Id")


def test_no_capable_agent_on_path(pm: FunesPluginManager, tmp_path: Path) -> None:
    with pytest.raises(AskError, match=r"^no agent to ask: none of Alpha Agent \(alpha-agent\), Beta Agent"):
        choose_agent(pm, None, path=str(tmp_path))


# -- bad input: one line, exit 1, no agent started ------------------------------------------------


def test_an_empty_question_is_refused(pm: FunesPluginManager, agents: Path, memory: Home) -> None:
    code, out, err = cli(pm, ["ask", "  ", "--agent", "alpha"])
    assert (code, out) == (1, "")
    assert err == "funes: the question is empty: say what you want to know\n"
    assert not agents.exists()


def test_a_missing_agent_is_refused_before_anything_runs(
    pm: FunesPluginManager, agents: Path, memory: Home
) -> None:
    code, out, err = cli(pm, ["ask", "why did the ARM build break", "--agent", "beta"])
    assert (code, out) == (1, "")
    assert (
        err == "funes: --agent beta: Beta Agent is not installed (no beta-agent on PATH); use --agent alpha\n"
    )
    assert not agents.exists()


def test_an_unreadable_memory_is_refused(pm: FunesPluginManager, agents: Path, tmp_path: Path) -> None:
    code, out, err = cli(pm, ["ask", "anything", "--agent", "alpha", "--memory", str(tmp_path / "nowhere")])
    assert (code, out) == (1, "")
    assert err.startswith("funes: ") and err.count("\n") == 1
    assert not agents.exists()


def test_no_passages_is_refused(
    pm: FunesPluginManager, agents: Path, funes_home: Home, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Vector search always finds a nearest row, so no passage means rows not embedded yet that no
    word of the question matches (a fresh memory whose embeddings are owed), or no rows at all."""
    from funes_core.ingest.engine import IndexOptions, run_index
    from funes_core.models.embed import HashEmbedder

    monkeypatch.setenv("FUNES_EMBEDDER", "hash")
    options = IndexOptions(path=EXAMPLES, budget=0)
    run_index(options, home=funes_home, embedder=HashEmbedder(), warn=lambda m: None)
    code, out, err = cli(pm, ["ask", "zyzzyva quetzalcoatl", "--agent", "alpha"])
    assert (code, out) == (1, "")
    assert err.startswith("funes: no passages in ") and "nothing to ask an agent about" in err
    assert err.count("\n") == 1
    assert not agents.exists()


# -- the prompt and the answer ----------------------------------------------------------------------


def test_print_prompt_shows_instruction_question_and_passages(
    pm: FunesPluginManager, agents: Path, memory: Home
) -> None:
    code, out, err = cli(pm, ["ask", "why did the ARM build", "break?", "--print-prompt", "-k", "3"])
    assert code == 0, err
    head, _, passages = out.partition(f"\n{PASSAGES_HEADER}\n")
    assert head == f"{INSTRUCTION}\n\nQuestion: why did the ARM build break?\n"
    assert passages.count("→ get ") == 3
    assert "musllinux aarch64 wheel" in passages
    assert not agents.exists(), "--print-prompt runs no agent"


def test_the_answer_streams_and_the_agent_gets_the_prompt_on_stdin(
    pm: FunesPluginManager, agents: Path, memory: Home, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from funes_core.read.ask import AskArgs, build_prompt, passages
    from funes_core.read.handle import Memory

    chosen = choose_agent(pm, "alpha")
    found = passages(Memory.resolve(None, home=memory), AskArgs("why did the ARM build break"))
    prompt = build_prompt("why did the ARM build break", found)
    # The agent writes its first piece, then waits (up to a minute) for the go file, which the
    # reader creates when that piece reaches it: a reader that waited for the whole answer would
    # never create it, and the agent would give up and fail.
    go = tmp_path / "go"
    monkeypatch.setenv("ASK_GO", str(go))
    pieces: list[str] = []

    def write(piece: str) -> None:
        pieces.append(piece)
        go.touch()

    run_agent(chosen, prompt, InstallContext.from_environment(), write)
    assert "".join(pieces) == "Alpha says: the ARM build broke on musl.\nSessions: 8d41b7e2"
    assert (agents / "prompt").read_text(encoding="utf-8") == prompt
    assert (agents / "argv").read_text(encoding="utf-8") == "--isolated"
    ran_in = Path((agents / "ran").read_text(encoding="utf-8"))
    assert ran_in.name.startswith("funes-ask-") and not ran_in.exists(), "a scratch folder, removed after"


def test_ask_reads_several_memories_as_recall_does(
    pm: FunesPluginManager, agents: Path, memory: Home, tmp_path: Path
) -> None:
    """``--memory local,OTHER,EMPTY``: passages of both readable memories, each named, in one
    prompt; the memory that cannot be read is one note on stderr, not in the prompt."""
    from funes_core.ingest.engine import IndexOptions, run_index
    from funes_core.models.embed import HashEmbedder
    from funes_core.turns.format import Block, Turn, write_turns_file

    other = Home(tmp_path / "other-home")
    turns = tmp_path / "other.funes.jsonl"
    text = "the ARM build of the zebrafish thermostat broke on musl too"
    turn = Turn("other-1", "other-1-u0", 0, "2026-04-01T10:00:00Z", "user", "claude", (Block("text", text),))
    write_turns_file(turns, [turn])
    run_index(IndexOptions(path=turns), home=other, embedder=HashEmbedder(), warn=lambda m: None)
    empty = tmp_path / "empty-memory"
    empty.mkdir()
    spec = f"local,{other.memory_dir},{empty}"
    question = "zebrafish thermostat ARM build musl"
    code, out, err = cli(pm, ["ask", question, "--memory", spec, "--print-prompt"])
    assert code == 0, err
    _, _, passages = out.partition(f"\n{PASSAGES_HEADER}\n")
    assert "zebrafish thermostat" in passages and "musllinux aarch64 wheel" in passages
    assert f"memory={other.memory_dir}" in passages and "memory=local" in passages
    assert err.count("\n") == 1 and err.startswith("funes: note: ") and str(empty) in err
    assert not agents.exists()


def test_ask_prints_the_answer_with_a_final_newline(
    pm: FunesPluginManager, agents: Path, memory: Home
) -> None:
    code, out, err = cli(pm, ["ask", "why did the ARM build break", "--agent", "alpha"])
    assert code == 0, err
    assert out == "Alpha says: the ARM build broke on musl.\nSessions: 8d41b7e2\n"
    assert err.startswith("funes: asking Alpha Agent (") and "with 8 passages from" in err


def test_a_failing_agent_makes_ask_exit_1_with_its_last_line(
    pm: FunesPluginManager, agents: Path, memory: Home, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASK_MODE", "fail")
    code, out, err = cli(pm, ["ask", "why did the ARM build break", "--agent", "alpha"])
    assert (code, out) == (1, "")
    assert err.splitlines()[-1] == (
        "funes: alpha: Alpha Agent exited with status 3: boom: the model is unreachable"
    )


def test_an_error_the_agent_reports_in_its_output_exits_1(
    pm: FunesPluginManager, agents: Path, memory: Home, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASK_MODE", "error-event")
    code, out, err = cli(pm, ["ask", "why did the ARM build break", "--agent", "alpha"])
    assert code == 1
    assert out == "Alpha says: the ARM build broke on musl.\nSessions: 8d41b7e2\n", "what came is kept"
    assert err.splitlines()[-1] == "funes: alpha: quota exhausted"


def test_a_program_that_cannot_start_is_one_line(tmp_path: Path) -> None:
    ghost = AskAgent("alpha", "Alpha Agent", str(tmp_path / "gone"), AlphaRegistrar)
    with pytest.raises(AskError, match=r"^alpha: cannot run .*gone"):
        run_agent(ghost, "prompt", InstallContext.from_environment(), lambda piece: None)


def test_ask_records_its_recall_under_the_ask_face(
    pm: FunesPluginManager, agents: Path, memory: Home, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FUNES_STATS", "on")
    code, _, err = cli(pm, ["ask", "why did the ARM build break", "--agent", "alpha"])
    assert code == 0, err
    lines = (memory.root / "stats" / "events.jsonl").read_text(encoding="utf-8").splitlines()
    events: list[dict[str, Any]] = [json.loads(line) for line in lines]
    assert [(e["kind"], e["face"], e["hits"]) for e in events] == [("recall", "ask", 8)]
    assert "query" not in events[0]
