"""Will the hook import? Checked in a fresh interpreter before a hook is wired, and by ``check --all``.

A per-turn hook runs inside the agent, in a new Python process, long after ``install`` returned.
If the plugin cannot be imported there (its distribution was uninstalled by a ``uv tool upgrade``,
it needs another core, it only imported in the installing process because of a ``sys.path``
tweak) the agent shows a ``ModuleNotFoundError`` on every turn and nothing is indexed. So before
the hook is written, the modules it needs are imported in a fresh interpreter, the one the hook
will run; and the modules are recorded, so ``funes integrations check --all`` can re-check them
when the plugin is gone and the host knows nothing else about it.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from collections.abc import Sequence

from funes_core.host.manager import FunesPluginManager, Integration

__all__ = ["hook_modules", "import_failure"]

_PROBE = """\
import importlib, sys
for name in sys.argv[1:]:
    try:
        importlib.import_module(name)
    except BaseException as exc:
        print(f"{name}: {type(exc).__name__}: {exc}".splitlines()[0])
        sys.exit(1)
"""


def _top(module: str) -> str:
    return module.partition(".")[0]


def hook_modules(pm: FunesPluginManager, integ: Integration) -> list[str]:
    """The plugin's modules a hook process imports: its entry point, its parts and ``<pkg>.hook``.

    Only modules of the plugin's own package count (a part class defined elsewhere, in a test, is
    not what the hook runs); a plugin registered as an object rather than a module has none.
    """
    info = pm.plugin_info(integ.plugin)
    entry = info.module.partition(":")[0] if info is not None else ""
    if not _importable(entry):
        return []
    top = _top(entry)
    names = [entry, *(cls.__module__ for cls in integ.parts().values() if cls is not None)]
    wanted = [n for n in dict.fromkeys(names) if _top(n) == top]
    if _importable(f"{top}.hook"):
        wanted.append(f"{top}.hook")
    return wanted


def _importable(name: str) -> bool:
    if not name or not all(part.isidentifier() for part in name.split(".")):
        return False
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def import_failure(modules: Sequence[str], python: str | None = None, timeout: float = 300.0) -> str | None:
    """Why ``python`` (default: this interpreter) cannot import ``modules``; ``None`` when it can."""
    if not modules:
        return None
    exe = python or sys.executable
    try:
        done = subprocess.run(
            # -I as the hooks run (claude's, codex'): no PYTHONPATH, no user site, no current folder.
            [exe, "-I", "-c", _PROBE, *modules],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{exe} could not be run ({exc})"
    if done.returncode == 0:
        return None
    lines = (done.stdout or done.stderr).strip().splitlines()
    return lines[-1] if lines else f"{exe} exited {done.returncode}"
