"""Where pi keeps its files, resolved the way pi itself resolves them.

pi's agent folder is ``$PI_CODING_AGENT_DIR`` when set (a leading ``~`` is expanded), else
``~/.pi/agent``; it holds ``settings.json`` (where installed packages are recorded) and
``sessions/``. Sessions may live elsewhere: ``$PI_CODING_AGENT_SESSION_DIR`` wins over the
``sessionDir`` setting of the global ``settings.json``.

Every function takes the HOME (and the environment) explicitly: ``~`` means the HOME funes was
given, never the process's own, so the contract suite can run everything in a throwaway HOME.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

from funes_pi.agent import PI

__all__ = ["ENV_AGENT_DIR", "ENV_SESSION_DIR", "agent_dir", "session_dirs", "settings_path"]

ENV_AGENT_DIR = "PI_CODING_AGENT_DIR"
ENV_SESSION_DIR = "PI_CODING_AGENT_SESSION_DIR"


def _expand(value: str, home: Path) -> Path:
    """pi's tilde rule (only ``~`` and ``~/…``), against ``home``."""
    if value == "~":
        return home
    if value.startswith("~/"):
        return home / value[2:]
    return Path(value)


def agent_dir(home: Path, environ: Mapping[str, str] | None = None) -> Path:
    """pi's agent folder: ``$PI_CODING_AGENT_DIR`` or ``~/.pi/agent`` (pi reads it whatever the HOME)."""
    env = os.environ if environ is None else environ
    return PI.path("agent", home, {k: v for k, v in env.items() if k == ENV_AGENT_DIR}, environ={})


def settings_path(home: Path, environ: Mapping[str, str] | None = None) -> Path:
    """pi's global ``settings.json``, where ``pi install`` records packages."""
    return agent_dir(home, environ) / "settings.json"


def _configured_session_dir(settings: Path, home: Path) -> Path | None:
    """The ``sessionDir`` of pi's global settings, when it names an absolute (or ``~``) folder.

    pi resolves a relative ``sessionDir`` against the working directory pi was started in, which
    funes cannot know, so only absolute and ``~`` forms are honoured here.
    """
    try:
        data = json.loads(settings.read_bytes())
    except (OSError, ValueError):
        return None
    value = data.get("sessionDir") if isinstance(data, dict) else None
    if not isinstance(value, str) or not value.strip():
        return None
    folder = _expand(value.strip(), home)
    return folder if folder.is_absolute() else None


def session_dirs(home: Path, environ: Mapping[str, str] | None = None) -> list[Path]:
    """Every folder pi may have written sessions to, most specific first (duplicates removed)."""
    env = os.environ if environ is None else environ
    found: list[Path] = []
    override = env.get(ENV_SESSION_DIR, "")
    if override:
        found.append(_expand(override, home))
    else:
        configured = _configured_session_dir(settings_path(home, env), home)
        if configured is not None:
            found.append(configured)
    found.append(agent_dir(home, env) / "sessions")
    unique: list[Path] = []
    for folder in found:
        if folder not in unique:
            unique.append(folder)
    return unique
