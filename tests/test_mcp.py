"""`funes mcp`: the server as a subprocess over stdio with the official SDK client, and in-process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from typer.testing import CliRunner

from funes_core.faces.cli.app import make_app

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples" / "sessions"
FUNES = str(Path(sys.executable).parent / "funes")
ARM = "8d41b7e2-0c3f-4a9b-b5d6-7e2a1f9c3084"


@pytest.fixture
def indexed_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    """A FUNES_HOME holding the example sessions, embedded with the fast test embedder."""
    env = {"FUNES_HOME": str(tmp_path / "home"), "FUNES_EMBEDDER": "hash"}
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    result = CliRunner().invoke(make_app(), ["index", str(EXAMPLES), "--wait"])
    assert result.exit_code == 0, result.output
    yield {**os.environ, **env}


def cli(*args: str) -> str:
    result = CliRunner().invoke(make_app(), list(args))
    assert result.exit_code == 0, result.output
    return result.stdout


def text_of(result: Any) -> str:
    return "".join(c.text for c in result.content if getattr(c, "type", "") == "text")


TOOL_CALLS: list[tuple[str, dict[str, Any], list[str]]] = [
    (
        "recall",
        {"query": "why did the ARM build break", "k": 3},
        ["recall", "why did the ARM build break", "-k", "3"],
    ),
    (
        "recall",
        {"query": "sqlite decision", "harness": "claude", "neighbors": 0},
        ["recall", "sqlite decision", "--harness", "claude", "--neighbors", "0"],
    ),
    ("get", {"session_id": ARM, "from": 2, "to": 5}, ["get", ARM, "--from", "2", "--to", "5"]),
    ("sessions", {"limit": 2}, ["sessions", "--limit", "2"]),
    (
        "scan",
        {"needle": "orjson", "session_id": ARM, "context": 30},
        ["scan", "orjson", ARM, "--context", "30"],
    ),
    ("sketch", {"session_id": ARM, "units": 3}, ["sketch", ARM, "--units", "3"]),
    ("triggers", {}, ["triggers"]),
]


@pytest.mark.slow
def test_stdio_subprocess_tools_match_cli(indexed_home: dict[str, str]) -> None:
    async def session() -> tuple[list[str], dict[int, str], Any, Any, str]:
        params = StdioServerParameters(command=FUNES, args=["mcp"], env=indexed_home)
        async with Client(params) as client:
            tools = [t.name for t in (await client.list_tools()).tools]
            outputs = {}
            for i, (name, args, _) in enumerate(TOOL_CALLS):
                res = await client.call_tool(name, args)
                assert not res.is_error, text_of(res)
                outputs[i] = text_of(res)
            bad = await client.call_tool("recall", {"query": "x", "k": -1})
            unknown = await client.call_tool("get", {"session_id": "no-such-session"})
            status = text_of(await client.call_tool("status", {}))
            return tools, outputs, bad, unknown, status

    tools, outputs, bad, unknown, status = anyio.run(session)
    assert sorted(tools) == ["get", "recall", "scan", "sessions", "sketch", "status", "triggers"]
    for i, (_, _, argv) in enumerate(TOOL_CALLS):
        assert outputs[i] == cli(*argv), argv
    assert bad.is_error and "k" in text_of(bad)
    assert unknown.is_error and "no session no-such-session in" in text_of(unknown)
    assert status.startswith("memory: ")
    assert "chunks: " in status


@pytest.mark.slow
def test_server_sees_rows_indexed_while_it_runs(indexed_home: dict[str, str], tmp_path: Path) -> None:
    phrase = "quokka_cache_eviction_decision"
    new = tmp_path / "new.funes.jsonl"
    new.write_text(
        json.dumps(
            {
                "session_id": "fresh-session",
                "turn_uuid": "t0",
                "seq": 0,
                "ts": "2026-11-01T10:00:00Z",
                "role": "user",
                "harness": "claude",
                "blocks": [{"block_type": "text", "text": f"we settled the {phrase} today"}],
            }
        )
        + "\n"
    )

    async def session() -> tuple[str, str]:
        params = StdioServerParameters(command=FUNES, args=["mcp"], env=indexed_home)
        async with Client(params) as client:
            before = text_of(await client.call_tool("recall", {"query": phrase, "k": 1}))
            proc = await anyio.run_process(
                [FUNES, "index", str(new), "--wait"], env=indexed_home, check=False
            )
            assert proc.returncode == 0, proc.stderr
            after = text_of(await client.call_tool("recall", {"query": phrase, "k": 1}))
            return before, after

    before, after = anyio.run(session)
    assert phrase not in before
    assert phrase in after and "/fresh-se " in after


@pytest.mark.slow
def test_handshake_loads_no_model_and_no_lancedb(indexed_home: dict[str, str]) -> None:
    code = (
        "import sys, anyio\n"
        "from mcp import Client\n"
        "from funes_core.faces.mcp import make_server\n"
        "async def main():\n"
        "    async with Client(make_server()) as c:\n"
        "        tools = await c.list_tools()\n"
        "    print('TOOLS', len(tools.tools))\n"
        "anyio.run(main)\n"
        "print('HEAVY', sorted(m for m in ('lancedb', 'fastembed', 'onnxruntime') if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=indexed_home, capture_output=True, text=True, check=True
    )
    assert "TOOLS 7" in out.stdout
    assert "HEAVY []" in out.stdout


@pytest.mark.slow
def test_tool_memory_argument_overrides_server_memory(indexed_home: dict[str, str], tmp_path: Path) -> None:
    from funes_core.faces.mcp import make_server

    other_home = tmp_path / "other"
    env = {**indexed_home, "FUNES_HOME": str(other_home)}
    one = tmp_path / "one.funes.jsonl"
    one.write_text(
        json.dumps(
            {
                "session_id": "elsewhere",
                "turn_uuid": "t0",
                "seq": 0,
                "ts": "2026-11-01T10:00:00Z",
                "role": "user",
                "harness": "codex",
                "blocks": [{"block_type": "text", "text": "only in the other memory: wombat"}],
            }
        )
        + "\n"
    )
    subprocess.run([FUNES, "index", str(one), "--wait"], env=env, check=True, capture_output=True)

    # An agent may name only configured memories: the other one becomes a folder remote.
    subprocess.run(
        [FUNES, "remote", "add", "other", str(other_home / "memory")],
        env=indexed_home,
        check=True,
        capture_output=True,
    )

    async def session() -> tuple[str, str, str]:
        async with Client(make_server()) as client:
            default = text_of(await client.call_tool("recall", {"query": "wombat", "neighbors": 0}))
            other = text_of(
                await client.call_tool("recall", {"query": "wombat", "neighbors": 0, "memory": "other"})
            )
            by_path = text_of(
                await client.call_tool(
                    "recall", {"query": "wombat", "neighbors": 0, "memory": str(other_home / "memory")}
                )
            )
            return default, other, by_path

    default, other, by_path = anyio.run(session)
    assert "wombat" not in default
    assert "only in the other memory: wombat" in other
    assert "--memory other" in other
    assert "not allowed" in by_path and "wombat" not in by_path


def test_missing_memory_is_an_error_result(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from funes_core.faces.mcp import make_server

    monkeypatch.setenv("FUNES_HOME", str(tmp_path / "empty"))

    async def session() -> Any:
        async with Client(make_server()) as client:
            return await client.call_tool("recall", {"query": "anything"})

    res = anyio.run(session)
    assert res.is_error
    assert "no index yet" in text_of(res)


_POOL_AFTER_A_RECALL = (
    "import anyio, sys\n"
    "from mcp import Client\n"
    "from funes_core.faces.mcp import make_server\n"
    "async def main():\n"
    "    async with Client(make_server()) as c:\n"
    "        result = await c.call_tool('recall', {'query': 'why did the ARM build break'})\n"
    "        assert not result.is_error\n"
    "anyio.run(main)\n"
    "import pyarrow\n"
    "print('POOL', pyarrow.default_memory_pool().backend_name, 'lancedb' in sys.modules)\n"
)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("extra", "pool"),
    [
        ({}, "system"),  # the server's choice: glibc, so the trim after each call returns it
        ({"ARROW_DEFAULT_MEMORY_POOL": "mimalloc"}, "mimalloc"),  # the user's choice stands
        ({"FUNES_LEAN_MALLOC": "0"}, "mimalloc"),  # lean malloc off: pyarrow's own default
    ],
)
def test_server_puts_pyarrow_on_glibc_malloc(
    indexed_home: dict[str, str], extra: dict[str, str], pool: str
) -> None:
    """pyarrow's pool as a server process built by make_server has it after answering a recall."""
    if not sys.platform.startswith("linux"):
        pytest.skip("glibc only")
    env = {
        k: v for k, v in indexed_home.items() if k not in ("ARROW_DEFAULT_MEMORY_POOL", "FUNES_LEAN_MALLOC")
    }
    out = subprocess.run(
        [sys.executable, "-c", _POOL_AFTER_A_RECALL],
        env={**env, **extra},
        capture_output=True,
        text=True,
        check=True,
    )
    assert f"POOL {pool} True" in out.stdout, out.stdout + out.stderr


@pytest.mark.slow
def test_logs_never_touch_stdout(indexed_home: dict[str, str]) -> None:
    """With FUNES_LOG=debug the protocol still works: logs go to stderr only."""
    env = {**indexed_home, "FUNES_LOG": "debug"}

    async def session() -> str:
        async with Client(StdioServerParameters(command=FUNES, args=["mcp"], env=env)) as client:
            return text_of(await client.call_tool("status", {}))

    assert anyio.run(session).startswith("memory: ")


def test_instructions_and_descriptions_speak_to_a_model() -> None:
    from funes_core.faces.mcp import INSTRUCTIONS, make_server

    async def session() -> list[Any]:
        async with Client(make_server()) as client:
            return list((await client.list_tools()).tools)

    tools = anyio.run(session)
    recall_tool = next(t for t in tools if t.name == "recall")
    assert "before claiming something was never done" in (recall_tool.description or "")
    assert set(recall_tool.input_schema["properties"]) >= {"query", "k", "candidates", "neighbors", "memory"}
    assert recall_tool.input_schema["properties"]["k"]["default"] == 8
    get_tool = next(t for t in tools if t.name == "get")
    assert "from" in get_tool.input_schema["properties"]
    assert "verbatim" in INSTRUCTIONS


@pytest.mark.parametrize(
    "spec",
    [
        "s3://some-bucket/prefix",
        "gs://b/p",
        "hf://datasets/acme/kb",
        "/etc",
        "../../tmp",
        "~/.funes",
        "LOCAL",
    ],
)
def test_a_tool_call_naming_any_other_memory_is_refused_before_anything_opens(
    spec: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 13 item 4: URIs made the server reach the network (7 s of retries for s3://) and paths
    let an agent probe the file system and read any memory the user can read."""
    from funes_core.faces.mcp import make_server
    from funes_core.read import handle

    monkeypatch.setenv("FUNES_HOME", str(tmp_path / "home"))

    def no_open(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError(f"a memory was resolved for {spec!r}")

    monkeypatch.setattr(handle, "resolve_memories", no_open)

    async def session() -> list[Any]:
        async with Client(make_server()) as client:
            return [
                await client.call_tool(tool, {**args, "memory": spec})
                for tool, args in (("status", {}), ("recall", {"query": "x"}), ("get", {"session_id": "s"}))
            ]

    for res in anyio.run(session):
        assert res.is_error
        assert text_of(res).endswith(f"memory {spec!r} is not allowed: use local"), text_of(res)
