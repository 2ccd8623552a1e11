"""The CLI's fast path (``funes_core.faces.cli.fast``): a read verb the service answers before typer loads.

What must hold: the snapshot it parses with is the verbs' one declaration; whenever it accepts a
command line, typer would accept it too and ask the service the very same request; it falls back
(printing nothing) on anything it does not fully read; and through a real service it prints the
bytes and exit status the in-process CLI prints, without importing typer, rich or lancedb.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer.main
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from funes_core.faces.cli import fast
from funes_core.faces.cli.app import make_app
from funes_core.serve import client

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples" / "sessions"
FUNES = str(Path(sys.executable).parent / "funes")
ARM = "8d41b7e2-0c3f-4a9b-b5d6-7e2a1f9c3084"
PATIENCE = 180.0
#: What the fast path must never load: the CLI framework, its output library, the memory's parts.
HEAVY = ("typer", "click", "rich", "pydantic", "lancedb", "pyarrow", "numpy", "onnxruntime", "mcp")
#: Light, but ~10–20 ms of CPU that a read the service answers has no use for (funes_core.homepath).
NOT_ON_THE_FAST_PATH = ("dataclasses", "tempfile")

#: ``funes ARGV`` in a subprocess that reports, as it exits, the modules it loaded (on stderr).
REPORTING = (
    "import atexit, json, sys\n"
    "atexit.register(lambda: sys.stderr.write('\\nMODULES ' + json.dumps(sorted(sys.modules)) + '\\n'))\n"
    "sys.argv = ['funes', *sys.argv[1:]]\n"
    "from funes_core.faces.cli.main import main\n"
    "main()\n"
)


# -- the snapshot and the parser ------------------------------------------------------------------


def test_the_snapshot_is_the_verbs_declaration() -> None:
    """``fast_verbs.json`` is what the verbs declare (``python -m funes_core.faces.cli.fast --write``)."""
    assert json.loads(fast.SPEC_FILE.read_text(encoding="utf-8")) == fast.record_spec()


def test_every_read_verb_the_service_answers_has_a_fast_path() -> None:
    from funes_core.faces.cli.read import READ_VERBS

    assert set(fast.record_spec()["verbs"]) == {v.name for v in READ_VERBS}


@pytest.mark.parametrize(
    "argv",
    [
        ["recall", "arm", "build", "--k", "3"],
        ["recall", "arm", "--k=3", "build"],
        ["recall", "-k", "3", "arm", "build"],
        ["recall", "-k3", "arm", "build"],
        ["recall", "--k", "5", "arm", "build", "-k", "3"],
    ],
)
def test_option_spellings_read_the_same(argv: list[str]) -> None:
    parsed = fast.parse(argv)
    assert parsed is not None
    verb, args, common = parsed
    assert (verb, args["query"], args["k"], args["candidates"]) == ("recall", "arm build", 3, 30)
    assert common == {"memory": None, "as_json": False, "no_service": False}


def test_common_options_and_positionals() -> None:
    parsed = fast.parse(["scan", "-i", "needle", ARM, "--json", "-m", "team", "--context=5"])
    assert parsed is not None
    _, args, common = parsed
    assert args == {
        "needle": "needle",
        "session_id": ARM,
        "ignore_case": True,
        "context": 5,
        "from_": None,
        "to": None,
    }
    assert common == {"memory": "team", "as_json": True, "no_service": False}
    assert fast.parse(["recall", "--", "-k", "3"]) == (
        "recall",
        {**fast.parse(["recall", "x"])[1], "query": "-k 3"},  # type: ignore[index]
        {"memory": None, "as_json": False, "no_service": False},
    )
    assert fast.parse(["status", "--json"]) == (
        "status",
        {},
        {"memory": None, "as_json": True, "no_service": False},
    )


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["index", "examples"],
        ["recall", "x", "--help"],
        ["recall", "-h"],
        ["recall", "x", "--bogus"],
        ["recall", "x", "--kk", "3"],
        ["recall", "x", "--k"],
        ["recall", "x", "--k", "0"],
        ["recall", "x", "--k", "101"],
        ["recall", "x", "--k", "three"],
        ["recall", "x", "--k", " 3"],
        ["recall", "x", "-k=3"],
        ["recall", "x", "--json=1"],
        ["recall", "x", "--repo", "-x"],
        ["recall", "x", "--half-life", "-1"],
        ["recall", "x", "--half-life", "nan"],
        ["recall"],
        ["recall", "--k", "3"],
        ["get"],
        ["get", "a", "b"],
        ["scan", "needle"],
        ["scan", "-iz", "needle", ARM],
        ["scan", "-i1", "needle", ARM],
        ["status", "extra"],
        ["status", "-k", "3"],
        ["--version"],
        ["recall", "-5", "x"],
    ],
)
def test_anything_it_does_not_fully_read_falls_back(argv: list[str]) -> None:
    assert fast.parse(argv) is None


@pytest.mark.parametrize(
    "argv",
    [
        ["ui"],
        ["ui", "--no-open"],
        ["ui", "--open"],
        ["ui", "-m", "team", "--port", "8123", "--no-open"],
        ["ui", "--port=0", "--memory=local,team", "--no-service"],
        ["ui", "--no-open", "--port", "65535", "--no-open"],
    ],
)
def test_funes_ui_options_read_as_typer_reads_them(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """What the fast path hands ``ui_front.answer`` is what the typer command hands it."""
    from funes_core.faces.cli import ui_front

    seen: list[tuple[Any, ...]] = []

    def record(*args: Any) -> int:
        seen.append(args)
        return 0

    monkeypatch.setattr(ui_front, "answer", record)
    result = CliRunner().invoke(make_app(), argv)
    assert result.exit_code == 0, result.output
    parsed = fast.parse_ui(argv)
    assert parsed is not None
    assert seen == [(parsed["memory"], parsed["port"], parsed["open_browser"], parsed["no_service"])]


@pytest.mark.parametrize(
    "argv",
    [
        ["ui", "--help"],
        ["ui", "--port", "70000"],
        ["ui", "--port", "-1"],
        ["ui", "--port"],
        ["ui", "extra"],
        ["ui", "--open", "--no-open"],
        ["ui", "--json"],
        ["ui", "-m"],
        ["ui", "--open=1"],
        ["uix"],
    ],
)
def test_funes_ui_command_lines_it_does_not_fully_read_go_to_typer(argv: list[str]) -> None:
    assert fast.parse_ui(argv) is None


def test_a_fall_back_prints_nothing_and_never_asks(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def refuse(request: dict[str, Any]) -> None:
        raise AssertionError(f"asked the service: {request}")

    monkeypatch.setattr(client, "ask", refuse)
    for argv in (["recall", "x", "--bogus"], ["recall", "x", "--no-service"], ["recall", "x", "-m", "./m"]):
        assert fast.answer(argv) is None
    monkeypatch.setenv("FUNES_CLI_FAST", "0")
    assert fast.answer(["recall", "x"]) is None
    assert capsys.readouterr() == ("", "")


def test_a_service_that_does_not_answer_is_not_asked_twice(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    asked: list[dict[str, Any]] = []
    monkeypatch.setattr(client, "_STOPPED", [False])
    monkeypatch.setattr(client, "connect", lambda *a, **k: asked.append(k) or _raise())
    assert fast.answer(["sessions", "--limit", "1"]) is None
    assert len(asked) == 1
    assert client.ask({"verb": "sessions"}) is None
    assert len(asked) == 1  # the typer command, next, reads in-process without asking again
    assert capsys.readouterr() == ("", "")


def _raise() -> None:
    raise client.NotRunningError("no memory service runs")


# -- agreement with typer ----------------------------------------------------------------------------


class _Captured(Exception):
    """The typer command asked the service (the request is kept) or began to read in-process."""


@pytest.fixture(scope="module")
def typer_command(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FUNES_HOME", str(tmp_path_factory.mktemp("home")))  # never the user's memory
        yield typer.main.get_command(make_app())


def _typer_request(command: Any, argv: list[str], monkeypatch: pytest.MonkeyPatch) -> dict[str, Any] | None:
    """What the typer command would ask the service for ``argv`` (``None``: it reads in-process)."""
    asked: list[dict[str, Any]] = []

    def capture(request: dict[str, Any]) -> dict[str, Any]:
        asked.append(request)
        raise _Captured

    def in_process(*args: Any, **kwargs: Any) -> Any:
        raise _Captured

    from funes_core.faces.cli import read, status
    from funes_core.read import handle
    from funes_core.read import status as status_verb

    monkeypatch.setattr(read, "via_service", capture)
    monkeypatch.setattr(status, "via_service", capture)
    monkeypatch.setattr(handle, "resolve_memories", in_process)
    monkeypatch.setattr(status_verb, "collect_status", in_process)
    try:
        command.main(args=argv, prog_name="funes", standalone_mode=False)
    except _Captured:
        return asked[0] if asked else None
    raise AssertionError(f"typer neither asked nor read for {argv}")


def _tokens(verb: str) -> list[str]:
    spec = json.loads(fast.SPEC_FILE.read_text(encoding="utf-8"))["verbs"].get(verb, [])
    flags = [f for p in spec for f in p["flags"]] + ["--memory", "-m", "--json", "--no-service"]
    values = ["3", "0", "1", "7", "100", "101", "-1", "+2", "1.5", "x", "", "=x", "local", "a,b", "2026-01"]
    extra = ["--", "-", "-h", "--help", "--bogus", "-z", "word", "ARM build", "-k3", "--k=4", "-mteam"]
    joined = [f"{f}={v}" for f in flags if f.startswith("--") for v in ("3", "x", "")]
    attached = [f"{f}{v}" for f in flags if not f.startswith("--") for v in ("3", "x")]
    return flags + values + extra + joined + attached


def _plausible(verb: str) -> list[str]:
    """Tokens most of whose lines the fast path accepts: its flags, in-range values, words."""
    spec = json.loads(fast.SPEC_FILE.read_text(encoding="utf-8"))["verbs"].get(verb, [])
    flags = [f for p in spec if p["type"] == "bool" for f in p["flags"]] + ["--json"]
    valued = [f"{f}={v}" for p in spec if p["type"] in ("int", "float") for f in p["flags"] for v in (3, 5)]
    valued += [f"{f}=x" for p in spec if p["type"] == "str" for f in p["flags"] if f.startswith("--")]
    return [*flags, *valued, "-mlocal", "word", "ARM build", "7", "-", "--"]


_VERBS = ["recall", "get", "sessions", "scan", "sketch", "triggers", "status"]


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_whenever_it_accepts_typer_asks_the_same(
    data: st.DataObject, typer_command: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On generated command lines: either the fast path declines, or typer accepts the line and asks
    the service exactly what the fast path asks (every argument, its default, its type)."""
    verb = data.draw(st.sampled_from(_VERBS))
    pool = data.draw(st.sampled_from([_tokens(verb), _plausible(verb)]))
    rest = data.draw(st.lists(st.sampled_from(pool), max_size=7))
    argv = [verb, *rest]
    parsed = fast.parse(argv)
    if parsed is None:
        return
    _, args, common = parsed
    asked = _typer_request(typer_command, argv, monkeypatch)
    if common["no_service"] or not fast.service_spec(common["memory"]):
        assert asked is None, argv  # in-process by typer, and a fall-back here (answer() checks)
        return
    if verb == "status":
        assert asked == {"verb": "status", "memory": common["memory"]}, argv
    else:
        assert asked == fast.read_request(verb, args, common["memory"], bool(common["as_json"])), argv


# -- through a real service --------------------------------------------------------------------------


@pytest.fixture
def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    """A home holding the example sessions (fast test embedder) and a service running for it."""
    env = {"FUNES_HOME": str(tmp_path / "home"), "FUNES_EMBEDDER": "hash"}
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    for key in ("FUNES_SERVICE", "FUNES_CLI_FAST"):
        monkeypatch.delenv(key, raising=False)
    result = CliRunner().invoke(make_app(), ["index", str(EXAMPLES), "--wait"])
    assert result.exit_code == 0, result.output
    full = {**os.environ, **env}
    started = subprocess.run([FUNES, "serve", "--start"], env=full, capture_output=True, timeout=PATIENCE)
    assert started.returncode == 0, started.stderr
    try:
        yield full
    finally:
        subprocess.run([FUNES, "serve", "--stop"], env=full, capture_output=True, timeout=PATIENCE)


def _run(env: dict[str, str], *argv: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-c", REPORTING, *argv], env=env, capture_output=True, timeout=PATIENCE
    )


def _modules(result: subprocess.CompletedProcess[bytes]) -> tuple[bytes, set[str]]:
    """The run's stderr without the module report, and the top-level modules it loaded."""
    stderr, _, report = result.stderr.rpartition(b"\nMODULES ")
    return stderr, {m.split(".")[0] for m in json.loads(report)}


def _calls(env: dict[str, str]) -> int:
    conn = client.connect(Path(env["FUNES_HOME"]), "info", timeout=30)
    conn.close()
    return int(conn.reply["calls"])


FAST_READS = [
    ["recall", "why", "did", "the", "ARM", "build", "break", "--k", "3"],
    ["recall", "why did the ARM build break", "--k=3"],
    ["recall", "-k", "2", "sqlite", "decision", "--json"],
    ["recall", "-k2", "orjson", "--type", "text", "--profile", "lexical"],
    ["recall", "arm", "--since", "not-a-day"],
    ["get", ARM, "--from", "2", "--to", "5"],
    ["get", ARM, "--from=2", "--to=1"],
    ["get", "no-such-session", "--json"],
    ["sessions", "--limit", "2", "--json"],
    ["sessions", "--offset=1", "-m", "local"],
    ["scan", "-i", "ORJSON", ARM, "--context", "30"],
    ["sketch", ARM, "--units", "3"],
    ["triggers"],
]


@pytest.mark.slow
def test_fast_reads_print_the_in_process_bytes_and_load_nothing_heavy(served: dict[str, str]) -> None:
    before = _calls(served)
    for argv in FAST_READS:
        quick = _run(served, *argv)
        stderr, loaded = _modules(quick)
        local = subprocess.run(
            [FUNES, *argv, "--no-service"], env=served, capture_output=True, timeout=PATIENCE
        )
        expected = (local.returncode, local.stdout, local.stderr)
        assert (quick.returncode, quick.stdout, stderr) == expected, argv
        assert sorted(loaded & set(HEAVY)) == [], argv
        assert sorted(loaded & set(NOT_ON_THE_FAST_PATH)) == [], argv
    assert _calls(served) == before + len(FAST_READS)  # every one was the service's answer


@pytest.mark.slow
def test_fast_status_is_the_typer_status(served: dict[str, str]) -> None:
    def steady(out: bytes) -> bytes:  # uptime and RSS move between two runs
        return re.sub(rb"up \d+(\.\d)? \w+, [0-9.]+ [KMG]?B", b"up T, RSS", out)

    for argv in (["status"], ["status", "--json"], ["status", "-m", "no-such-remote"]):
        quick = _run(served, *argv)
        stderr, loaded = _modules(quick)
        slow = subprocess.run(
            [FUNES, *argv], env={**served, "FUNES_CLI_FAST": "0"}, capture_output=True, timeout=PATIENCE
        )
        assert quick.returncode == slow.returncode, argv
        assert stderr == slow.stderr, argv
        if argv[-1] == "--json":
            a, b = json.loads(quick.stdout), json.loads(slow.stdout)
            for doc in (a, b):
                doc["service"].update(uptime=0, rss=0)
                doc.pop("last_indexed_age", None)
            assert a == b
        else:
            assert steady(quick.stdout) == steady(slow.stdout), argv
        assert sorted(loaded & set(HEAVY)) == [], argv
    assert b"service: running (pid" in _run(served, "status").stdout


@pytest.mark.slow
def test_what_the_fast_path_does_not_read_gets_typers_answer(served: dict[str, str]) -> None:
    """A bad flag, --help or an out-of-range value: the typer app's usage error, bytes and status."""
    for argv in (["recall", "x", "--bogus"], ["sessions", "--limit", "0"], ["get"], ["recall", "--help"]):
        quick = _run(served, *argv)
        stderr, loaded = _modules(quick)
        slow = subprocess.run(
            [FUNES, *argv], env={**served, "FUNES_CLI_FAST": "0"}, capture_output=True, timeout=PATIENCE
        )
        assert (quick.returncode, quick.stdout, stderr) == (slow.returncode, slow.stdout, slow.stderr)
        assert "typer" in loaded  # it was typer's answer
    off = subprocess.run(
        [FUNES, "sessions", "--limit", "1"], env={**served, "FUNES_SERVICE": "off"}, capture_output=True
    )
    assert off.returncode == 0 and off.stderr == b""
