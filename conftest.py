"""Settings for every test of the workspace: ``tests/``, ``contracts/tests`` and ``plugins/*/tests``.

Hypothesis runs without a deadline and without its too-slow health check. Both measure time:
the deadline fails an example that takes longer than 200 ms, the health check fails a test
whose data is slow to generate. Neither is what any test here is about (round trips, fuzzed
configs and frames), and both fail on a loaded machine (the shared development machine runs
at a load of 10-25 on 2 cores: a 355 ms round trip failed ``test_strategies``). Timing goals
belong in ``bench/`` (docs/benchmarks.md), where a figure is read beside the load it ran under.
``HYPOTHESIS_PROFILE=default`` brings hypothesis' own settings back, to look for slow examples.

No detached process outlives its test. ``funes index`` starts the background embedding worker
detached (a session of its own, output to a log file), and the agents' hooks start ``funes index``
the same way: nothing the test waits for, so nothing the test ends. Left alone, a worker of a
finished test would go on embedding into a temporary folder, competing for the cores with the next
tests, and a CI runner that waits for every process it started would hang on it. After each test,
every detached process (the leader of a session of its own, as ``spawn_detached`` starts them)
whose ``FUNES_HOME`` or ``HOME`` lies inside this pytest run's temporary folder is stopped
(``SIGTERM``, then ``SIGKILL``): a worker is made to be stopped at any moment, and the folder is
this run's alone, so no other process (a parallel pytest, a user's worker) is ever touched; a
module fixture's server is no session leader and is left alone.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from funes_core import portable

settings.register_profile("funes", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "funes"))

#: How long a stopped process has to exit after ``SIGTERM`` before it is killed.
_TERM_PATIENCE = 10.0


def _environ(pid: int) -> dict[str, str]:
    """The environment ``pid`` was started with (empty when it is gone or not ours to read)."""
    try:
        raw = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return {}
    out: dict[str, str] = {}
    for item in raw.split(b"\0"):
        key, sep, value = item.partition(b"=")
        if sep:
            out[key.decode(errors="replace")] = value.decode(errors="replace")
    return out


def _inside(path: str | None, root: str) -> bool:
    return bool(path) and (path == root or str(path).startswith(root + os.sep))


def _strays(root: str) -> list[int]:
    """Live session leaders (as ``spawn_detached`` starts) whose ``FUNES_HOME``/``HOME`` is in ``root``."""
    me = os.getpid()
    found: list[int] = []
    with contextlib.suppress(OSError):
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit() or int(entry.name) == me:
                continue
            pid = int(entry.name)
            if not portable.leads_a_session(pid):
                continue  # not detached: a test's own child, or a module fixture's server
            env = _environ(pid)
            if not (_inside(env.get("FUNES_HOME"), root) or _inside(env.get("HOME"), root)):
                continue
            with contextlib.suppress(OSError):
                if Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1].startswith("Z"):
                    continue  # a zombie: its parent reaps it
            found.append(pid)
    return found


def stop_strays(root: Path) -> list[str]:
    """Stop every stray process of ``root`` (see the module docstring); their command lines."""
    if not Path("/proc").is_dir():  # pragma: no cover - no /proc: nothing to look at
        return []
    pids = _strays(str(root))
    stopped: list[str] = []
    for pid in pids:
        with contextlib.suppress(OSError):
            stopped.append(Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode().strip())
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + _TERM_PATIENCE
    while pids and time.monotonic() < deadline:
        pids = [pid for pid in pids if pid in _strays(str(root))]
        if pids:
            time.sleep(0.05)
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    return stopped


@pytest.fixture(autouse=True)
def _no_detached_leftovers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    yield
    stop_strays(tmp_path_factory.getbasetemp())
