"""funes_core.portable: each platform's branch, run here with the platform patched, and the rule that
nothing else calls a POSIX-only or Linux-only API."""

from __future__ import annotations

import ast
import os
import platform
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import psutil
import pytest

from funes_core import portable
from funes_core.home import Home
from funes_core.ingest import worker as worker_module

ROOT = Path(__file__).resolve().parents[1]

#: Modules only the portability module may import, and calls only it may make.
POSIX_ONLY_MODULES = {"fcntl", "resource", "msvcrt", "termios"}
PLATFORM_CALLS = {"posix_spawn", "posix_spawnp", "setpriority", "getsid", "sched_getaffinity", "fchmod"}
GLIBC_CALLS = {"mallopt", "malloc_trim"}


def _python_files() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "*.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    if listed.returncode == 0 and listed.stdout.strip():
        return [ROOT / line for line in listed.stdout.splitlines() if (ROOT / line).exists()]
    skip = {".venv", ".git", "node_modules"}
    return [p for p in ROOT.rglob("*.py") if not skip.intersection(p.relative_to(ROOT).parts)]


def platform_calls(source: str) -> list[tuple[int, str]]:
    """(line, what) for every POSIX-only import or platform call in ``source``."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, f"import {a.name}") for a in node.names if a.name in POSIX_ONLY_MODULES]
        elif isinstance(node, ast.ImportFrom) and node.module in POSIX_ONLY_MODULES:
            found.append((node.lineno, f"from {node.module} import"))
        elif isinstance(node, ast.Attribute) and node.attr in PLATFORM_CALLS | GLIBC_CALLS:
            found.append((node.lineno, f".{node.attr}"))
        elif isinstance(node, ast.ImportFrom) and node.module == "os":
            names = [a.name for a in node.names if a.name in PLATFORM_CALLS]
            found += [(node.lineno, f"from os import {name}") for name in names]
    return found


def test_no_module_but_the_portability_module_calls_a_posix_only_api() -> None:
    files = _python_files()
    assert len(files) > 100, "the repository's Python files were found"
    offenders = [
        f"{path.relative_to(ROOT)}:{line}: {what}"
        for path in files
        if path != ROOT / "funes_core" / "portable.py"
        for line, what in platform_calls(path.read_text(encoding="utf-8"))
    ]
    assert offenders == [], "use funes_core.portable instead:\n" + "\n".join(offenders)


def test_the_static_check_sees_each_kind_of_platform_call() -> None:
    source = (
        "import fcntl\nfrom resource import getrusage\nimport os\nos.posix_spawnp('x', [], {})\n"
        "from os import sched_getaffinity\nlibc.malloc_trim(0)\n"
    )
    assert sorted(line for line, _ in platform_calls(source)) == [1, 2, 4, 5, 6]
    assert platform_calls((ROOT / "funes_core" / "portable.py").read_text(encoding="utf-8")), (
        "the portability module itself is where they are"
    )


# ----------------------------------------------------------------------------- locks


def test_a_descriptor_lock_excludes_others_until_its_file_is_closed(tmp_path: Path) -> None:
    path = tmp_path / "x.lock"
    first = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    second = os.open(path, os.O_RDWR)
    try:
        assert portable.try_lock(first)
        assert not portable.try_lock(second), "a second open file of the same lock is refused"
        assert portable.lock_held(path)
        os.close(first)
        first = -1
        assert not portable.lock_held(path), "closing the holder's descriptor releases it"
        assert portable.try_lock(second)
    finally:
        for fd in (first, second):
            if fd >= 0:
                os.close(fd)
    assert not portable.lock_held(tmp_path / "missing.lock"), "no file: nobody holds it"


def test_a_block_lock_contends_with_a_descriptor_lock_on_the_same_file(tmp_path: Path) -> None:
    path = tmp_path / "x.lock"
    with portable.file_lock(path):
        assert path.stat().st_mode & 0o777 == 0o600
        assert portable.lock_held(path)
    assert not portable.lock_held(path)
    fd = os.open(path, os.O_RDWR)
    try:
        assert portable.try_lock(fd)
        import filelock

        with pytest.raises(filelock.Timeout), portable.file_lock(path, timeout=0.1):
            pass
    finally:
        os.close(fd)


def test_a_lock_held_by_a_killed_process_is_free_at_once(tmp_path: Path) -> None:
    path = tmp_path / "x.lock"
    script = (
        "import os, sys, time; from funes_core import portable\n"
        f"fd = os.open({str(path)!r}, os.O_RDWR | os.O_CREAT, 0o600)\n"
        "assert portable.try_lock(fd); print('held', flush=True); time.sleep(60)\n"
    )
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "held"
        assert portable.lock_held(path)
    finally:
        child.kill()
        child.communicate()
    assert not portable.lock_held(path)


# ----------------------------------------------------------------------------- files


def test_a_files_mode_is_set_on_its_descriptor_on_posix_and_through_its_path_on_windows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "f"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        portable.set_mode(fd, path, 0o600)
        assert path.stat().st_mode & 0o777 == 0o600
        monkeypatch.setattr(portable, "SYSTEM", "win32")
        monkeypatch.delattr(os, "fchmod")  # as on Windows before Python 3.13
        portable.set_mode(fd, path, 0o400)
        assert path.stat().st_mode & 0o777 == 0o400
    finally:
        os.close(fd)


# ----------------------------------------------------------------------------- detached processes


def _wait_for(path: Path, timeout: float = 30.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = path.read_text(encoding="utf-8") if path.exists() else ""
        if text.endswith("\n"):
            return text
        time.sleep(0.02)
    raise AssertionError(f"the detached child wrote nothing to {path}")


_REPORT = (
    "import os, sys; print(os.getsid(0) == os.getpid(), os.getpgid(0) == os.getpid(),"
    " sys.stdin.read() == '', os.environ.get('MARK'), flush=True)"
)


@pytest.mark.skipif(os.name != "posix", reason="a POSIX session of its own")
@pytest.mark.parametrize("how", ["posix_spawn", "subprocess"])
def test_a_detached_child_leads_its_own_session_reads_nothing_and_writes_to_the_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    if how == "subprocess":  # what runs where posix_spawn cannot start a session (older macOS)

        def no_setsid(*_a: object, **_k: object) -> int:
            raise NotImplementedError

        monkeypatch.setattr(os, "posix_spawnp", no_setsid)
    kept: list[subprocess.Popen[bytes]] = []
    monkeypatch.setattr(portable, "_children", kept)
    log = tmp_path / "child.log"
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        pid = portable.spawn_detached(
            [sys.executable, "-c", _REPORT], env={**os.environ, "MARK": how}, output=fd
        )
    finally:
        os.close(fd)
    assert pid > 0
    assert _wait_for(log).split() == ["True", "True", "True", how]
    assert [child.wait(timeout=30) for child in kept] == ([0] if how == "subprocess" else [])


class _Popen:
    """Records how ``subprocess.Popen`` was called; refuses breakaway when told to."""

    calls: ClassVar[list[dict[str, Any]]] = []
    refuse_breakaway = False

    def __init__(self, argv: list[str], **options: Any) -> None:
        type(self).calls.append({"argv": argv, **options})
        if self.refuse_breakaway and options["creationflags"] & portable.CREATE_BREAKAWAY_FROM_JOB:
            raise PermissionError(5, "Access is denied")
        self.pid = 4242

    def poll(self) -> int | None:
        return None


@pytest.fixture
def windows(monkeypatch: pytest.MonkeyPatch) -> Iterator[type[_Popen]]:
    monkeypatch.setattr(portable, "SYSTEM", "win32")
    monkeypatch.setattr(_Popen, "calls", [])
    monkeypatch.setattr(subprocess, "Popen", _Popen)
    monkeypatch.setattr(portable, "_children", [])

    def no_posix(*_a: object, **_k: object) -> None:
        raise AssertionError("a POSIX call on Windows")

    monkeypatch.setattr(os, "posix_spawnp", no_posix)
    monkeypatch.setattr(os, "setpriority", no_posix)
    monkeypatch.setattr(os, "kill", no_posix)
    yield _Popen


def test_on_windows_a_detached_child_gets_a_process_group_no_console_and_leaves_the_job(
    windows: type[_Popen],
) -> None:
    assert portable.spawn_detached(["funes", "index"], env={"A": "1"}, output=7) == 4242
    (call,) = windows.calls
    flags = call["creationflags"]
    assert flags & portable.DETACHED_PROCESS and flags & portable.CREATE_NEW_PROCESS_GROUP
    assert flags & portable.CREATE_BREAKAWAY_FROM_JOB
    assert call["stdin"] == subprocess.DEVNULL and call["stdout"] == 7 and call["stderr"] == subprocess.STDOUT
    assert "start_new_session" not in call and "pass_fds" not in call and call["env"] == {"A": "1"}


def test_on_windows_a_job_that_forbids_breakaway_still_gets_a_detached_child(
    windows: type[_Popen], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_Popen, "refuse_breakaway", True)
    assert portable.spawn_detached(["funes"], env={}, output=3) == 4242
    assert [c["creationflags"] for c in windows.calls] == [
        portable.DETACHED_PROCESS | portable.CREATE_NEW_PROCESS_GROUP | portable.CREATE_BREAKAWAY_FROM_JOB,
        portable.DETACHED_PROCESS | portable.CREATE_NEW_PROCESS_GROUP,
    ]
    with pytest.raises(ValueError, match="Windows"):
        portable.spawn_detached(["funes"], env={}, output=3, pass_fds=(5,))
    assert not portable.can_pass_fds()


def test_on_windows_the_worker_is_started_without_a_descriptor_and_takes_the_lock_itself(
    windows: type[_Popen], tmp_path: Path
) -> None:
    home = Home(tmp_path / "home")
    started = worker_module.ensure_worker(home, owed=3, argv=["funes", "index", "--worker"])
    assert started.started and started.pid == 4242
    (call,) = windows.calls
    assert call["argv"] == ["funes", "index", "--worker"], "no --lock-fd: nothing can be handed over"
    assert not portable.lock_held(worker_module.lock_path(home)), "the parent let go for the child"


# ----------------------------------------------------------------------------- processes


def test_a_process_is_alive_until_it_is_reaped(tmp_path: Path) -> None:
    assert portable.pid_alive(os.getpid())
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    assert not portable.pid_alive(child.pid)
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    assert portable.terminate(sleeper.pid)
    assert sleeper.wait(timeout=30) != 0
    assert not portable.terminate(sleeper.pid), "gone: nothing to stop"


def test_on_windows_liveness_asks_psutil_because_kill_0_would_end_the_process(
    windows: type[_Popen], monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[int] = []
    monkeypatch.setattr(psutil, "pid_exists", lambda pid: asked.append(pid) or pid == 7)
    assert portable.pid_alive(7) and not portable.pid_alive(8)
    assert asked == [7, 8]


# ----------------------------------------------------------------------------- priority


class _Process:
    calls: ClassVar[list[tuple[str, int]]] = []

    def nice(self, value: int) -> None:
        self.calls.append(("nice", value))

    def ionice(self, value: int) -> None:
        self.calls.append(("ionice", value))


def test_on_windows_priority_is_the_idle_class_and_very_low_io(
    windows: type[_Popen], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_Process, "calls", [])
    monkeypatch.setattr(psutil, "Process", _Process)
    assert portable.lower_priority() == []
    assert _Process.calls == [("nice", portable.IDLE_PRIORITY_CLASS), ("ionice", portable.IOPRIO_VERYLOW)]


def test_on_macos_priority_is_nice_19_and_throttled_disk_io(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(portable, "SYSTEM", "darwin")
    niced: list[tuple[int, int, int]] = []
    monkeypatch.setattr(os, "setpriority", lambda *a: niced.append(a))
    monkeypatch.setattr(psutil, "Process", _Process)
    monkeypatch.setattr(_Process, "calls", [])

    class LibSystem:
        policy: tuple[int, ...] = ()

        def setiopolicy_np(self, *args: int) -> int:
            LibSystem.policy = args
            return 0

    monkeypatch.setattr(portable, "_darwin_libc", LibSystem)
    assert portable.lower_priority() == []
    assert niced == [(os.PRIO_PROCESS, 0, 19)]
    throttled = (portable.IOPOL_TYPE_DISK, portable.IOPOL_SCOPE_PROCESS, portable.IOPOL_THROTTLE)
    assert LibSystem.policy == throttled
    assert _Process.calls == [], "no Linux I/O class on macOS"
    monkeypatch.setattr(portable, "_darwin_libc", lambda: None)
    assert portable.lower_priority() == ["I/O priority"], "what could not be done is said"


def test_cores_come_from_the_affinity_where_there_is_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0, 3, 5}, raising=False)
    assert portable.usable_cores() == 3
    monkeypatch.delattr(os, "sched_getaffinity")
    monkeypatch.setattr(os, "cpu_count", lambda: 6)
    assert portable.usable_cores() == 6
    monkeypatch.setattr(os, "cpu_count", lambda: None)
    assert portable.usable_cores() == 1


# ----------------------------------------------------------------------------- native memory


@pytest.mark.parametrize("system", ["darwin", "win32"])
def test_glibc_knobs_are_no_ops_off_linux(monkeypatch: pytest.MonkeyPatch, system: str) -> None:
    monkeypatch.setattr(portable, "SYSTEM", system)
    assert not portable.trim_malloc()
    assert not portable.limit_malloc_arenas(2)
    assert not portable.set_mmap_threshold(1 << 20)


@pytest.mark.skipif(sys.platform != "linux" or platform.libc_ver()[0] != "glibc", reason="glibc's knobs")
def test_glibc_knobs_act_on_linux() -> None:
    assert portable.trim_malloc()
    assert portable.set_mmap_threshold(1 << 20)


def test_peak_memory_is_in_bytes_on_each_platform(monkeypatch: pytest.MonkeyPatch) -> None:
    now = psutil.Process().memory_info().rss
    if os.name == "posix":
        assert portable.peak_rss_bytes() >= now * 0.9, "Linux counts KiB, macOS bytes: both become bytes"

    class Info:
        peak_wset = 123_456_789

    class Process:
        def memory_info(self) -> Info:
            return Info()

    monkeypatch.setattr(portable, "SYSTEM", "win32")
    monkeypatch.setattr(psutil, "Process", Process)
    assert portable.peak_rss_bytes() == 123_456_789


def test_writes_in_a_synced_once_block_are_flushed_together_at_its_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bulk writer's atomic writes skip their own fsync; the block ends by flushing them all."""
    from funes_core import files

    fsyncs: list[int] = []
    flushed: list[list[Path]] = []
    monkeypatch.setattr(files.os, "fsync", lambda fd: fsyncs.append(fd))
    monkeypatch.setattr(portable, "flush_to_disk", lambda paths: flushed.append(list(paths)))
    with files.synced_once():
        for name in ("a", "b", "c"):
            files.atomic_write_text(tmp_path / name, name)
        assert fsyncs == [] and flushed == []
    assert flushed == [[tmp_path / "a", tmp_path / "b", tmp_path / "c"]]
    assert (tmp_path / "b").read_text() == "b"
    files.atomic_write_text(tmp_path / "d", "d")  # outside the block: fsynced at once
    assert len(fsyncs) == 1 and len(flushed) == 1


@pytest.mark.parametrize(
    ("system", "count", "syncs_all"), [("linux", 20, True), ("linux", 3, False), ("win32", 20, False)]
)
def test_flush_to_disk_syncs_the_system_for_many_files_on_posix_and_each_file_otherwise(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, system: str, count: int, syncs_all: bool
) -> None:
    paths = [tmp_path / f"f{i}" for i in range(count)]
    for path in paths:
        path.write_text("x")
    calls: list[str] = []
    monkeypatch.setattr(portable, "SYSTEM", system)
    monkeypatch.setattr(portable._os, "sync", lambda: calls.append("sync"), raising=False)
    monkeypatch.setattr(portable.os, "fsync", lambda fd: calls.append("fsync"))
    portable.flush_to_disk([*paths, tmp_path / "gone"])
    assert calls == (["sync"] if syncs_all else ["fsync"] * count)


@pytest.mark.parametrize(
    ("system", "environ", "expected"),
    [
        ("linux", {"HOME": "/home/ana", "USERPROFILE": "C:\\Users\\x"}, "/home/ana"),
        ("linux", {"USERPROFILE": "C:\\Users\\x"}, ""),
        ("win32", {"USERPROFILE": "C:\\Users\\ana"}, "C:\\Users\\ana"),
        ("win32", {"HOME": "C:\\msys\\home\\ana", "USERPROFILE": "C:\\Users\\ana"}, "C:\\msys\\home\\ana"),
        ("darwin", {"HOME": " /Users/ana "}, "/Users/ana"),
    ],
)
def test_the_users_home_is_home_or_on_windows_userprofile(
    monkeypatch: pytest.MonkeyPatch, system: str, environ: dict[str, str], expected: str
) -> None:
    monkeypatch.setattr(portable, "SYSTEM", system)
    assert portable.user_home(environ) == expected


def test_on_windows_an_agents_location_variable_applies_to_the_profiles_own_home(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from funes_core.host.agent import Agent, Location

    agent = Agent("demo", "Demo", 2, locations=(Location("home", ".demo", env=("DEMO_HOME",)),))
    profile, elsewhere = tmp_path / "ana", tmp_path / "D" / "demo"
    environ = {"USERPROFILE": str(profile), "DEMO_HOME": str(elsewhere)}
    monkeypatch.setattr(portable, "SYSTEM", "win32")
    assert agent.locate("home", profile, environ=environ).path == elsewhere
    # Still never for a throwaway home, as on every platform.
    assert agent.locate("home", tmp_path / "decoy", environ=environ).path == tmp_path / "decoy" / ".demo"
    monkeypatch.setattr(portable, "SYSTEM", "linux")
    assert agent.locate("home", profile, environ=environ).path == profile / ".demo"
