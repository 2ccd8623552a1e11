"""Where Hermes keeps its state: ``$HERMES_HOME``, else ``~/.hermes``.

Standard library only, because the per-turn hook imports it.

``HERMES_HOME`` (which Hermes also sets itself when a profile is active) belongs to the
environment of the process that reads it, so it only relocates the Hermes home of a HOME that
*is* that process's HOME. A converter or an installation context pointed at another HOME (a
contract test, a throwaway folder) uses that HOME's ``.hermes``: a developer's own
``HERMES_HOME`` can never be written to by a test run. A context may still name a Hermes home
explicitly through its ``extra_env``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

__all__ = ["CONFIG_NAME", "ENV_HOME", "STATE_DB", "hermes_home", "hermes_home_for"]

ENV_HOME = "HERMES_HOME"
#: Hermes' settings file inside its home (it reads no other name).
CONFIG_NAME = "config.yaml"
#: Hermes' session database inside its home.
STATE_DB = "state.db"


def _same_place(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return a.absolute() == b.absolute()


def hermes_home(home: Path, environ: Mapping[str, str] | None = None) -> Path:
    """``$HERMES_HOME`` when ``home`` is the environment's own HOME, else ``home/.hermes``."""
    env = os.environ if environ is None else environ
    pinned = env.get(ENV_HOME, "").strip()
    own = env.get("HOME", "").strip()
    if pinned and own and _same_place(Path(own), home):
        return Path(pinned).expanduser().absolute()
    return home / ".hermes"


def hermes_home_for(home: Path, extra_env: Mapping[str, str]) -> Path:
    """The Hermes home of an installation context: its own ``HERMES_HOME`` first, then :func:`hermes_home`."""
    pinned = extra_env.get(ENV_HOME, "").strip()
    if pinned:
        return Path(pinned).expanduser().absolute()
    return hermes_home(home)
