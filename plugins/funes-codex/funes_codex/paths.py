"""Where Codex keeps its state: ``$CODEX_HOME`` (default ``~/.codex``).

Standard library only: the per-turn hook imports this module and must start in a few
milliseconds.

``CODEX_HOME`` is a setting of the environment funes runs in. It therefore applies only to a
HOME that *is* this process's HOME: an installation context or a converter pointed at another
HOME (a contract test, a throwaway folder) uses that HOME's ``.codex``, so a developer's own
``CODEX_HOME`` can never be written to by a test run. A context may still name a Codex home
explicitly through its ``extra_env``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

__all__ = ["codex_home", "codex_home_for"]


def _same_place(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return a.absolute() == b.absolute()


def codex_home(home: Path, environ: Mapping[str, str] | None = None) -> Path:
    """``$CODEX_HOME`` when ``home`` is the process's own HOME, else ``home/.codex``."""
    env = os.environ if environ is None else environ
    pinned = env.get("CODEX_HOME", "").strip()
    own_home = env.get("HOME", "").strip()
    if pinned and own_home and _same_place(Path(own_home), home):
        return Path(pinned).expanduser().absolute()
    return home / ".codex"


def codex_home_for(home: Path, extra_env: Mapping[str, str]) -> Path:
    """The Codex home of an installation context: its own ``CODEX_HOME`` first, then :func:`codex_home`."""
    pinned = extra_env.get("CODEX_HOME", "").strip()
    if pinned:
        return Path(pinned).expanduser().absolute()
    return codex_home(home)
