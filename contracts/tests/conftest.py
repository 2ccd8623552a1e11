"""Shared by the kit's own tests: running the contract suite in a fresh pytest, as ``check`` does."""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from funes_core.wiring.integrations.check import suite_command

#: ``run_suite(tmp_path, source, *pytest_args, pythonpath=None) -> (process, report results)``.
RunSuite = Callable[..., tuple[subprocess.CompletedProcess[str], list[dict[str, str]]]]


def _run_suite(
    tmp_path: Path, source: str, *extra: str, pythonpath: Path | None = None
) -> tuple[subprocess.CompletedProcess[str], list[dict[str, str]]]:
    module = tmp_path / "test_broken_plugins.py"
    module.write_text(textwrap.dedent(source), encoding="utf-8")
    if "kit_mutants" in source:  # the shared mutants, importable beside the module
        (tmp_path / "kit_mutants.py").write_text(KIT_MUTANTS, encoding="utf-8")
        pythonpath = pythonpath or tmp_path
    report = tmp_path / "report.json"
    argv, env = suite_command(module, report, os.environ, *extra)
    if pythonpath is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(pythonpath), env.get("PYTHONPATH", "")]))
    done = subprocess.run(
        argv, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600, check=False
    )
    results = json.loads(report.read_text())["results"] if report.exists() else []
    return done, results


@pytest.fixture
def run_suite() -> RunSuite:
    """Run a test module's ``source`` under the kit's pytest plugin alone; its JSON report's results."""
    return _run_suite


#: Mutants more than one of the kit's tests puts into a reference plugin, as mixins: a generated test
#: module that says ``from kit_mutants import ...`` gets this module written beside it.
KIT_MUTANTS = """\
import os

from funes_core import SpoolWrite, turns_to_jsonl
from funes_core.host.api import last_activity, spool_filename


class NonAtomicSpool:
    # Writes each turns file in place: an indexer reading it meanwhile can see half of it.
    def write_turns(self, turns, out_dir, *, fallback_mtime=None, private_root=None):
        out_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        by_session = {}
        for turn in turns:
            by_session.setdefault(turn.session_id, []).append(turn)
        out = []
        for sid, items in by_session.items():
            path = out_dir / spool_filename(sid)
            body = turns_to_jsonl(items)
            same = path.exists() and path.read_text(encoding="utf-8") == body
            path.write_text(body, encoding="utf-8")  # written in place: a reader can see half of it
            mtime = last_activity(items)
            os.utime(path, (mtime, mtime))
            out.append(SpoolWrite(sid, path, len(items), changed=not same))
        return out


class IgnoresCodexHome:
    # Looks in ~/.codex whatever $CODEX_HOME says.
    def session_roots(self, home):
        return [home / ".codex" / "sessions", home / ".codex" / "archived_sessions"]


class ForgetsArchived:
    # Never looks at archived_sessions/, where `codex archive` moves a rollout.
    def session_roots(self, home):
        return [self.where("sessions", home)]
"""


#: funes-codex's hook module with one bug each (the kit's hook requirements must catch each), written
#: beside a generated test module: ``-I`` would not import them from there, so their contract classes
#: run them without it (``hook_argv``).
HOOK_MODULES = {
    "kitmut_prints": """
        import sys
        from funes_codex.hook import locate
        from funes_core import run_hook

        def chatty(event, environ):
            found = locate(event, environ)
            print(f"funes: converting {found.paths[0] if found else 'nothing'}")
            return found

        sys.exit(run_hook("codex", chatty))
    """,
    "kitmut_newest": """
        import sys
        from pathlib import Path
        from funes_codex.agent import CODEX
        from funes_core import HookSources, run_hook

        def newest(event, environ):
            # "The session that just ended is the newest one": not when another is still running.
            sessions = CODEX.path("sessions", Path(environ["HOME"]), environ=environ)
            found = sorted(sessions.rglob("rollout-*.jsonl"), key=lambda p: p.name)
            return HookSources((str(found[-1]),)) if found else None

        sys.exit(run_hook("codex", newest))
    """,
    "kitmut_no_index": """
        import sys
        from funes_codex.hook import locate
        from funes_core.wiring.hookrt import HookRun

        run = HookRun.from_argv("codex", sys.argv[1:])
        found = locate(run.event(), run.environ)
        if found:
            run.spawn([*run.funes_command, "integrations", "convert", "codex", found.paths[0]])
    """,
    "kitmut_waits": """
        import subprocess
        import sys
        from funes_codex.hook import locate
        from funes_core.wiring.hookrt import HookRun, worker_argv

        run = HookRun.from_argv("codex", sys.argv[1:])
        found = locate(run.event(), run.environ)
        if found:
            try:  # "give the conversion two seconds, so the turn is in before the next prompt"
                subprocess.run(worker_argv("codex", run.funes_command, found), env=run.child_env(), timeout=2)
            except subprocess.TimeoutExpired:
                pass
    """,
    "kitmut_env_home": """
        import sys
        from funes_codex.hook import locate
        from funes_core import run_hook

        args = sys.argv[1:]
        if "--funes-home" in args:  # "FUNES_HOME is in the agent's environment anyway"
            at = args.index("--funes-home")
            del args[at : at + 2]
        sys.exit(run_hook("codex", locate, args))
    """,
    "kitmut_strict_stdin": """
        import io
        import json
        import sys
        from funes_codex.hook import locate
        from funes_core import run_hook

        event = json.loads(sys.stdin.read())  # an empty stdin raises
        sys.exit(run_hook("codex", locate, stdin=io.BytesIO(json.dumps(event).encode())))
    """,
    "kitmut_locate_default": """
        import sys
        from pathlib import Path
        from funes_codex.hook import find_rollout
        from funes_core import HookSources, run_hook

        def locate(event, environ):
            found = find_rollout(event, Path(environ["HOME"]) / ".codex" / "sessions")
            return HookSources((str(found),)) if found else None

        sys.exit(run_hook("codex", locate))
    """,
}


@pytest.fixture
def hook_mutants() -> Callable[[Path], list[str]]:
    """Write :data:`HOOK_MODULES` into a folder (put it on PYTHONPATH); returns their module names."""

    def write(folder: Path) -> list[str]:
        for name, body in HOOK_MODULES.items():
            (folder / f"{name}.py").write_text(textwrap.dedent(body), encoding="utf-8")
        return sorted(HOOK_MODULES)

    return write
