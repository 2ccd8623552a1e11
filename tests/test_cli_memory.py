"""Every verb that takes ``--memory``, with odd values: one line on stderr, never a traceback.

Issue 29's probe ended 24 of 98 such calls in a Python traceback (``status`` with an unknown name
or URI, a 5,000-character value on every verb, an ``hf://`` remote on the verbs but recall), an
unreachable ``hf://`` remote printed a 12-line Rust error, ``local,HF`` failed instead of answering
from local with a note, and ``status`` of an unreachable remote said "no index found".
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from funes_core.faces.cli.app import make_app
from funes_core.home import Home
from funes_core.ingest.engine import IndexOptions, run_index
from funes_core.models.embed import HashEmbedder

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples" / "sessions"
SESSION = "c7e05d93-2a18-4f6c-8b3e-95d0a4e61f27"

#: Each verb with ``--memory``, and arguments that would succeed on the local memory.
VERBS = {
    "recall": ["recall", "flush"],
    "get": ["get", SESSION, "--to", "1"],
    "sessions": ["sessions"],
    "scan": ["scan", "flush", SESSION],
    "sketch": ["sketch", SESSION],
    "triggers": ["triggers"],
    "status": ["status"],
    "suggest": ["suggest"],
    "ask": ["ask", "why", "flush", "--print-prompt"],
}

#: Values that must be refused, each with what the one line says.
REFUSED = {
    "unknown name": ("nope", "unknown memory 'nope'"),
    "raw s3 URI": ("s3://bkt/x", "name a remote instead of a URI"),
    "raw hf URI": ("hf://datasets/acme/mem", "name a remote instead of a URI"),
    "5,000 characters": ("x" * 5000, "at most 4,096 characters"),
    "5,000-character path": ("/" + "x" * 4999, "at most 4,096 characters"),
    "a name too long for the OS": ("y" * 300, "unknown memory 'yyy"),
    "a component too long for the OS": ("/tmp/" + "z" * 300, "no index found at /tmp/zzz"),
    "escape sequence": ("\x1b[2J", "unknown memory '\\x1b[2J'"),
    "unreachable hf remote": ("hub", "remote hub is unreachable"),
    "empty between commas": ("local,,hub", "an empty name between commas"),
}
#: Verbs whose --memory is one name (the read verbs take a list and refuse it but for recall).
ONE_MEMORY = ("status", "suggest")


@pytest.fixture(scope="module")
def dead_port() -> Iterator[int]:
    """A loopback port with nothing listening (bound, never accepted), as the Hub's endpoint."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        yield s.getsockname()[1]


@pytest.fixture
def home(funes_home: Home, monkeypatch: pytest.MonkeyPatch, dead_port: int) -> Home:
    monkeypatch.setenv("FUNES_EMBEDDER", "hash")
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{dead_port}")  # never the real Hub
    run_index(IndexOptions(path=EXAMPLES), home=funes_home, embedder=HashEmbedder(), warn=lambda _m: None)
    result = CliRunner().invoke(make_app(), ["remote", "add", "hub", "hf://datasets/acme/mem"])
    assert result.exit_code == 0, result.stderr
    return funes_home


def _call(args: list[str]) -> tuple[int, str, str]:
    result = CliRunner().invoke(make_app(), args)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"{args[0]} raised {type(result.exception).__name__}: {result.exception}")
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.slow
@pytest.mark.parametrize("case", REFUSED, ids=str)
@pytest.mark.parametrize("verb", VERBS, ids=str)
def test_an_odd_memory_is_one_line_and_a_non_zero_exit(home: Home, verb: str, case: str) -> None:
    value, says = REFUSED[case]
    code, out, err = _call([*VERBS[verb], "--memory", value])
    assert code != 0
    assert "Traceback" not in out + err
    if verb == "status" and case in ("unreachable hf remote", "a component too long for the OS"):
        # status reports on stdout, and exits 1 for a memory it cannot read
        assert says in out and err == "", (out, err)
        return
    assert len(err.strip().splitlines()) == 1 and err.startswith("funes: "), err
    if case == "empty between commas" and verb in ONE_MEMORY:
        says = "unknown memory 'local,,hub'"  # they take no list: the value is one name
    assert says in err, err
    assert len(err) < 400, err


@pytest.mark.slow
@pytest.mark.parametrize("verb", VERBS, ids=str)
def test_local_and_an_unreachable_remote_answer_from_local_with_a_note(home: Home, verb: str) -> None:
    """recall (and ask, which recalls) rank several memories: the unreachable one is left out, said
    in a note; the other verbs read one memory and refuse a list in one line."""
    code, out, err = _call([*VERBS[verb], "--memory", "local,hub"])
    assert "Traceback" not in out + err
    if verb in ("recall", "ask"):
        assert code == 0, err
        note = "note: remote hub is unreachable (offline, DNS, timeout or server error); showing the other"
        assert note in out + err, (out, err)
        assert "memory=local" in out or verb == "ask", out
        return
    assert code != 0 and len(err.strip().splitlines()) == 1, err


@pytest.mark.slow
def test_status_of_an_unreachable_remote_says_so(home: Home) -> None:
    code, out, err = _call(["status", "--memory", "hub"])
    assert code == 1 and err == ""
    assert out == "memory: hub\nremote hub is unreachable (offline, DNS, timeout or server error)\n"
    code, out, _ = _call(["status", "--memory", "hub", "--json"])
    assert code == 1 and '"unavailable": "remote hub is unreachable' in out
