"""Facets funes derives from a turn's ``cwd``: ``workdir`` (a path-safe name) and ``repo`` (git remotes).

They let recall filter by project (``--repo owner/name``) even when the same repository was
checked out at different paths, and they are computed at index time on the indexing machine,
which is the only place the ``cwd`` means anything.
"""

from __future__ import annotations

import os
import re
import subprocess

__all__ = ["RepoResolver", "repo_identity", "workdir_of"]

_NOT_ALNUM = re.compile(r"[^A-Za-z0-9]")
#: How long one ``git remote -v`` may take; a hung network filesystem must not stall indexing.
GIT_TIMEOUT = 3.0


def workdir_of(cwd: str | None) -> str:
    """``cwd`` with every non-ASCII-alphanumeric character replaced by ``-`` (Claude Code's project naming).

    ``/home/u/llama.cpp`` becomes ``-home-u-llama-cpp``. A cwd that is missing or becomes nothing
    but dashes has no workdir (``""``).
    """
    if not cwd:
        return ""
    munged = _NOT_ALNUM.sub("-", cwd)
    return "" if not munged.strip("-") else munged


_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_SCP_LIKE = re.compile(r"^(?:[^@/]+@)?[^/:]+:(?!//)(.+)$")


def repo_identity(url: str) -> str | None:
    """``owner/name`` from a git remote URL (https, ssh, scp-like ``host:owner/name``, or a path).

    The scheme, credentials and host are dropped, then a trailing ``/`` and ``.git``, and the
    last two path segments are kept. ``None`` when fewer than two segments remain.
    """
    url = url.strip()
    if not url:
        return None
    if _SCHEME.match(url):
        rest = _SCHEME.sub("", url, count=1)
        path = rest.split("/", 1)[1] if "/" in rest else ""
    else:
        scp = _SCP_LIKE.match(url)
        path = scp.group(1) if scp and not url.startswith(("/", ".")) else url
    path = path.rstrip("/")
    if path.endswith(".git"):
        path = path[: -len(".git")]
    parts = [p for p in path.split("/") if p]
    if len(parts) < 2:
        return None
    return f"{parts[-2]}/{parts[-1]}"


class RepoResolver:
    """Compute the ``repo`` facet of a cwd from ``git -C <cwd> remote -v``, cached per cwd for one run.

    Every remote's ``owner/name`` is kept (a fork and its upstream both match), deduplicated,
    sorted and joined with spaces. A cwd that no longer exists, is not a repository, or has no
    remotes gets ``""``. ``git`` runs through ``subprocess`` (vfork + exec), never a Python-level
    fork, so it is safe after lancedb's threads are running.
    """

    def __init__(self, *, timeout: float = GIT_TIMEOUT) -> None:
        self._cache: dict[str, str] = {}
        self._timeout = timeout

    def __call__(self, cwd: str | None) -> str:
        if not cwd:
            return ""
        cached = self._cache.get(cwd)
        if cached is None:
            cached = self._cache[cwd] = self._resolve(cwd)
        return cached

    def _resolve(self, cwd: str) -> str:
        if not os.path.isdir(cwd):
            return ""
        env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}
        try:
            proc = subprocess.run(
                ["git", "-C", cwd, "remote", "-v"],
                capture_output=True,
                text=True,
                timeout=self._timeout,
                env=env,
                stdin=subprocess.DEVNULL,
                check=False,
            )
        except (OSError, subprocess.SubprocessError):
            return ""
        if proc.returncode != 0:
            return ""
        found: set[str] = set()
        for line in proc.stdout.splitlines():
            fields = line.split()
            if len(fields) >= 2:
                ident = repo_identity(fields[1])
                if ident:
                    found.add(ident)
        return " ".join(sorted(found))
