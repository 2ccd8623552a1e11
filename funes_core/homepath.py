"""Which folder is ``$FUNES_HOME``: the one rule, with nothing heavier than :mod:`portable` behind it.

Why a module of its own. Every ``funes mcp`` front, every CLI read that the memory service answers
and every per-turn hook resolves the home before it does anything else, and none of them needs the
rest of :mod:`funes_core.home` (its dataclasses, state files and atomic writes pull in
``dataclasses``, ``inspect`` and ``tempfile``: ~20 ms of CPU a process, on the path an agent waits
on). :mod:`funes_core.home` re-exports both names, so callers that already hold it need not change.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from funes_core import portable

__all__ = ["HomeError", "resolve_funes_home", "resolve_root"]


class HomeError(RuntimeError):
    """``$FUNES_HOME`` cannot be resolved or used; the message is one line for the user."""


def resolve_funes_home(
    environ: Mapping[str, str] | None = None, given: str | os.PathLike[str] | None = None
) -> Path:
    """``given`` (recorded at install), else ``$FUNES_HOME``, else ``~/.funes``.

    ``~`` is ``HOME``, or ``USERPROFILE`` on Windows (:func:`portable.user_home`).

    The one copy of this rule: ``Home.resolve``, ``InstallContext.from_environment``, the service's
    clients and every hook use it, so a hook and the ``funes`` it starts always agree on the memory.
    """
    env = os.environ if environ is None else environ
    raw = os.fspath(given) if given else env.get("FUNES_HOME", "").strip()
    if raw:
        return Path(raw).expanduser().absolute()
    home = portable.user_home(env)
    return (Path(home) if home else Path.home()) / ".funes"


def resolve_root(value: str | os.PathLike[str] | None = None) -> Path:
    """``value``, else ``$FUNES_HOME``, else ``~/.funes``; :class:`HomeError` when no profile resolves."""
    try:
        return resolve_funes_home(os.environ, value)
    except RuntimeError:
        raise HomeError("cannot resolve the user profile; set FUNES_HOME to a private folder") from None
