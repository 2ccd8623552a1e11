"""Real agent CLIs for end-to-end tests: installed from npm or PyPI, and driven with ``funes``.

The versions are pinned: an end-to-end test proves an integration against one known release,
and a new release of the agent is a deliberate bump, not a surprise in CI. The cache folder
(``$FUNES_AGENT_CACHE``, default ``~/.cache/funes-test-agents``) survives between runs, so only the
first run pays for the download. When the registry cannot be reached, the test is skipped with
the reason (and only then).

Every such test does the same few things around the agent's own run, so they live here once:
a throwaway user of the agent (:func:`agent_world`: its folders, and an environment that is a
throwaway HOME, :func:`agent_env`), commands run to completion without a terminal (:func:`run`,
:func:`ok`, :func:`funes`), and the question the whole exercise is about, whether the memory now
holds a phrase (:func:`recalled`, :func:`wait_until_recalled`: the agent's
hook indexes in the background, after the session has ended). What a loaded machine does by chance
is made to happen on purpose instead of timed: an MCP SDK that loads late (:func:`slow_mcp_sdk`), a
funes that a hook starts but that runs only when the test says so (:func:`held`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import NamedTuple

import pytest

__all__ = [
    "AGENTS",
    "FUNES",
    "PATIENCE",
    "AgentWorld",
    "agent_cache",
    "agent_env",
    "agent_world",
    "funes",
    "held",
    "marker_server",
    "newer_python",
    "npm_agent",
    "ok",
    "pypi_agent",
    "recalled",
    "run",
    "slow_mcp_sdk",
    "wait_until_recalled",
]

#: The ``funes`` of the environment running the tests (the one an install wires into the agent).
FUNES = Path(sys.executable).parent / "funes"

#: How long a test waits for what happens in the background (a hook's indexer) before it fails: a
#: guard against a hang, not a speed goal. A loaded CI machine is slow, and slow is no failure;
#: how fast it is belongs to ``bench/``.
PATIENCE = 300.0

#: id -> (registry, package, version, executable)
AGENTS: dict[str, tuple[str, str, str, str]] = {
    "claude": ("npm", "@anthropic-ai/claude-code", "2.1.197", "claude"),
    "codex": ("npm", "@openai/codex", "0.171.0", "codex"),
    "pi": ("npm", "@mariozechner/pi-coding-agent", "0.73.1", "pi"),
    "hermes": ("pypi", "hermes-agent[mcp]", "0.19.0", "hermes"),
    "opencode": ("npm", "opencode-ai", "1.18.33", "opencode"),
    "gemini": ("npm", "@google/gemini-cli", "0.61.0", "gemini"),
    "copilot": ("npm", "@github/copilot", "1.0.102", "copilot"),
    "aider": ("pypi", "aider-chat", "0.86.2", "aider"),
    "continue": ("npm", "@continuedev/cli", "1.5.47", "cn"),
    "kilo": ("npm", "@kilocode/cli", "7.7.7", "kilo"),
    "droid": ("npm", "droid", "0.215.0", "droid"),
    "vibe": ("pypi", "mistral-vibe", "2.26.1", "vibe"),
    "openhands": ("pypi", "openhands", "1.16.0", "openhands"),
}

#: id -> the Python an agent from PyPI needs when this one (3.11 on Debian 12) is too old for it.
PYTHONS: dict[str, str] = {"vibe": "3.13", "openhands": "3.12"}


def agent_cache() -> Path:
    root = os.environ.get("FUNES_AGENT_CACHE") or str(Path.home() / ".cache" / "funes-test-agents")
    return Path(root)


def _skip_if_unreachable(proc: subprocess.CompletedProcess[str], what: str) -> None:
    text = (proc.stdout or "") + (proc.stderr or "")
    offline = (
        "ENOTFOUND",
        "EAI_AGAIN",
        "ECONNREFUSED",
        "ETIMEDOUT",
        "network",
        "Could not find a version",
        "No matching distribution",
        "Temporary failure in name resolution",
        "connection",
    )
    if any(marker.lower() in text.lower() for marker in offline):
        pytest.skip(f"{what} could not be installed: the registry is unreachable ({text.strip()[-200:]})")
    raise RuntimeError(f"installing {what} failed (exit {proc.returncode}):\n{text[-2000:]}")


def npm_agent(agent_id: str) -> Path:
    """The path of the agent's executable, installing the pinned npm package on first use."""
    registry, package, version, exe = AGENTS[agent_id]
    assert registry == "npm"
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip(f"npm is not installed, so {package} cannot be installed")
    prefix = agent_cache() / f"{agent_id}-{version}"
    binary = prefix / "node_modules" / ".bin" / exe
    if binary.exists():
        return binary
    prefix.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(
        [
            npm,
            "install",
            "--prefix",
            str(prefix),
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
            f"{package}@{version}",
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    if proc.returncode != 0 or not binary.exists():
        _skip_if_unreachable(proc, f"{package}@{version}")
    return binary


def newer_python(version: str) -> Path:
    """A ``python<version>`` for an agent that needs a newer Python than the one running the tests.

    The machine's pyenv holds several (``$PYENV_ROOT/versions/<version>.*``; the tests run on 3.11),
    and a ``python<version>`` on PATH counts too when it runs (a pyenv shim of a version that is not
    selected does not). With none, the test is skipped, saying so.
    """
    root = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv")
    found = shutil.which(f"python{version}")
    candidates = [Path(found)] if found else []
    candidates += sorted((root / "versions").glob(f"{version}.*/bin/python{version}"), reverse=True)
    for candidate in candidates:
        probe = subprocess.run([str(candidate), "-c", "import ssl, sqlite3"], capture_output=True, timeout=60)
        if probe.returncode == 0:
            return candidate
    pytest.skip(f"needs Python {version}, and neither PATH nor {root / 'versions'} has one that runs")


def pypi_agent(agent_id: str) -> Path:
    """The path of the agent's executable, installed in its own virtualenv on first use."""
    registry, package, version, exe = AGENTS[agent_id]
    assert registry == "pypi"
    venv = agent_cache() / f"{agent_id}-{version}-venv"
    binary = venv / "bin" / exe
    if binary.exists():
        return binary
    python = newer_python(PYTHONS[agent_id]) if agent_id in PYTHONS else Path(sys.executable)
    uv = shutil.which("uv")
    if uv:
        make = subprocess.run(
            [uv, "venv", "--python", str(python), str(venv)], capture_output=True, text=True
        )
        if make.returncode != 0:
            raise RuntimeError(make.stderr)
        cmd = [uv, "pip", "install", "--python", str(venv / "bin" / "python"), f"{package}=={version}"]
    else:
        subprocess.run([str(python), "-m", "venv", str(venv)], check=True)
        cmd = [str(venv / "bin" / "python"), "-m", "pip", "install", f"{package}=={version}"]
    name, _, extra = package.partition("[")
    if extra:
        cmd[-1] = f"{name}[{extra.rstrip(']')}]=={version}"
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    if proc.returncode != 0 or not binary.exists():
        shutil.rmtree(venv, ignore_errors=True)
        _skip_if_unreachable(proc, f"{package}=={version}")
    return binary


def agent_env(
    *,
    home: Path,
    funes_home: Path,
    drop: Iterable[str] = (),
    path: Iterable[Path] = (),
    embedder: str | None = "hash",
    **extra: str,
) -> dict[str, str]:
    """This process's environment made into a throwaway user's: nothing of the developer's own setup.

    Variables starting with one of ``drop`` (the agent's own, such as ``CLAUDE_``), ``FUNES_`` or
    ``PYTEST_`` are left out; HOME and FUNES_HOME are the given folders, ``path`` comes first on
    PATH (the agent's executable), ``embedder`` is exported as ``FUNES_EMBEDDER`` (``None`` for the
    packaged model: some agents start MCP servers with a filtered environment), and ``extra``
    is added last.
    """
    prefixes = (*drop, "FUNES_", "PYTEST_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(prefixes)}
    env.update(
        HOME=str(home),
        FUNES_HOME=str(funes_home),
        PATH=os.pathsep.join([*map(str, path), env.get("PATH", "")]),
    )
    if embedder is not None:
        env["FUNES_EMBEDDER"] = embedder
    env.update(extra)
    return env


class AgentWorld(NamedTuple):
    """A throwaway user of a real agent (:func:`agent_world`)."""

    #: The agent's executable, installed from its registry.
    agent: Path
    home: Path
    funes_home: Path
    #: The folder the agent is run in.
    project: Path
    #: :func:`agent_env` of these folders.
    env: dict[str, str]


def agent_world(
    tmp_path: Path,
    agent_id: str,
    *,
    folders: Iterable[Path] = (),
    drop: Iterable[str] = (),
    path: Iterable[Path] = (),
    embedder: str | None = "hash",
    **extra: str,
) -> AgentWorld:
    """The pinned agent, and a user of it under ``tmp_path``: ``home``, ``funes-home`` and ``project``.

    HOME, the project and ``folders`` (the agent's own, elsewhere) are created; the environment is
    :func:`agent_env`'s, with the agent's folder first on PATH, then ``path``.
    """
    registry = AGENTS[agent_id][0]
    agent = npm_agent(agent_id) if registry == "npm" else pypi_agent(agent_id)
    home, funes_home, project = tmp_path / "home", tmp_path / "funes-home", tmp_path / "project"
    for folder in (home, project, *folders):
        folder.mkdir(parents=True, exist_ok=True)
    env = agent_env(
        home=home,
        funes_home=funes_home,
        drop=drop,
        path=[agent.parent, *path],
        embedder=embedder,
        **extra,
    )
    return AgentWorld(agent, home, funes_home, project, env)


def run(
    argv: Sequence[str | Path], env: dict[str, str], cwd: Path | None = None, timeout: float = 180
) -> subprocess.CompletedProcess[str]:
    """Run a command to completion with no stdin (an agent waiting for input would hang the test)."""
    return subprocess.run(
        [str(a) for a in argv],
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def ok(done: subprocess.CompletedProcess[str]) -> str:
    """The output of a command that had to succeed; the failure shows what it printed on both streams."""
    assert done.returncode == 0, f"{done.args!r} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def funes(*args: str | Path, env: dict[str, str], cwd: Path | None = None, timeout: float = 300) -> str:
    """``funes ARGS`` (this environment's), which has to succeed; its output."""
    return ok(run([FUNES, *args], env, cwd, timeout))


def recalled(env: dict[str, str], cwd: Path | None, query: str, needle: str, *options: str) -> bool:
    """Whether lexical recall of ``query`` shows ``needle`` (``False`` while there is no memory yet).

    Lexical, so the answer does not depend on the embedder; ``options`` narrow it (``--harness``).
    """
    argv: list[str | Path] = [FUNES, "recall", query, "--profile", "lexical", "-k", "3", "--json", *options]
    done = run(argv, env, cwd)
    return done.returncode == 0 and needle in done.stdout


def wait_until_recalled(
    env: dict[str, str],
    cwd: Path | None,
    query: str,
    needle: str,
    *options: str,
    since: float,
    seconds: float = PATIENCE,
) -> None:
    """Poll :func:`recalled` until it holds: the agent's hook indexes after the session ended.

    ``since`` is when the session ended (``time.monotonic()``). After ``seconds`` (a hang guard,
    see :data:`PATIENCE`) the test fails with the end of every funes log (the hook logs say what
    was converted and started).
    """
    while not recalled(env, cwd, query, needle, *options):
        if time.monotonic() > since + seconds:
            logs = Path(env["FUNES_HOME"]) / "logs"
            shown = (
                {p.name: p.read_text(errors="replace")[-2000:] for p in logs.iterdir()}
                if logs.is_dir()
                else {}
            )
            pytest.fail(
                f"{needle!r} was not recallable {seconds:.0f} s after the session ended; logs: {shown}"
            )
        time.sleep(0.5)


_SLOW_SDK = """\
import sys
import time


class SlowMcpSdk:
    \"\"\"Delays the first import of the MCP SDK (``mcp``), as a loaded machine does.\"\"\"

    def find_spec(self, name, path=None, target=None):
        if name == "mcp":
            sys.meta_path.remove(self)
            time.sleep({seconds})
        return None


sys.meta_path.insert(0, SlowMcpSdk())
"""


def slow_mcp_sdk(folder: Path, seconds: float) -> str:
    """A ``PYTHONPATH`` entry under which ``funes mcp`` loads its MCP SDK ``seconds`` late.

    Under load the SDK's import takes seconds, and an agent's connector then sees a slow server:
    this reproduces that on a quiet machine, deterministically (a ``sitecustomize`` that sleeps
    before the first ``import mcp``; every other import, and every other funes command, is
    untouched). Put it in the environment the agent starts ``funes mcp`` with.
    """
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sitecustomize.py").write_text(_SLOW_SDK.format(seconds=seconds), encoding="utf-8")
    return str(folder)


_HELD = """\
#!{python}
import os, sys, time

gate, command = {gate!r}, {command!r}
deadline = time.monotonic() + {patience!r}
while not os.path.exists(gate):
    if time.monotonic() > deadline:  # the test is gone: never run, never linger
        sys.exit(75)
    time.sleep(0.02)
os.execv(command[0], [*command, *sys.argv[1:]])
"""


def held(path: Path, command: Sequence[str | Path], gate: Path) -> Path:
    """An executable at ``path`` that waits until ``gate`` exists, then becomes ``command`` + its arguments.

    Put it where a hook runs funes: when the hook has returned and the held funes has not run yet,
    the hook did not wait for it, proven without a clock (the test creates ``gate`` only after
    the hook returned, however long either took). A held funes whose gate never comes exits 75
    after :data:`PATIENCE`.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    argv = [str(part) for part in command]
    path.write_text(
        _HELD.format(python=sys.executable, gate=str(gate), command=argv, patience=PATIENCE),
        encoding="utf-8",
    )
    path.chmod(0o755)
    return path


_MARKER_SERVER = """\
import pathlib, sys
pathlib.Path(sys.argv[1]).write_text("started\\n")
for _ in sys.stdin:
    pass
"""


def marker_server(path: Path, marker: Path) -> list[str]:
    """The argv of a stdio MCP server that does nothing but write ``marker`` once it was started.

    Put it in an agent's config to prove the agent did not start its MCP servers (``marker`` is
    never written); the script is written to ``path``.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(_MARKER_SERVER, encoding="utf-8")
    return [sys.executable, str(path), str(marker)]
