"""Which releases go together: the core's compatible range, a plugin's declared requirement, ``--version``.

A plugin says what it needs twice, for two readers. Its ``funes-memory>=X,<Y`` requirement is for
the installer (pip and uv refuse to pair it with a core outside the range), and its
``contract_version`` is for the host. Neither is enough alone: an environment can still end up
with a plugin the core cannot serve (``pip install --no-deps``, a ``uv tool upgrade`` of the core
alone, a plugin installed by hand into the tool's environment). So on every start the host reads
the plugin distribution's metadata *before importing it* and refuses, in one line, a plugin whose
range excludes the running core, or that depends on a name that is not funes at all (``funes``
and ``funes-core`` on PyPI are other people's projects). A plugin that imported from a newer core
would otherwise fail with a bare ``ImportError``, and its hook then inside the agent.

The compatible range is the one the scaffold writes and the first-party plugins declare: the same
minor release line before 1.0 (``>=0.1,<0.2``), the same major after it.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
from collections.abc import Iterable

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

__all__ = [
    "WRONG_NAMES",
    "compatible_range",
    "component_versions",
    "requirement_problem",
    "wrong_name",
]

#: Distribution names that are *not* funes: other projects on PyPI that a plugin author (or a
#: typo) may name instead of ``funes-memory``. Installing them runs a stranger's code.
WRONG_NAMES: frozenset[str] = frozenset({"funes", "funes-core"})


def _core() -> tuple[str, str]:
    from funes_core.version import DISTRIBUTION, __version__

    return DISTRIBUTION, __version__


def compatible_range(version: str) -> str:
    """The requirement range of releases compatible with ``version``: ``>=0.1,<0.2``, ``>=1.2,<2``."""
    v = Version(version)
    if v.major == 0:
        return f">=0.{v.minor},<0.{v.minor + 1}"
    return f">={v.major}.{v.minor},<{v.major + 1}"


def wrong_name(name: str) -> str | None:
    """Why ``name`` is not a funes distribution (``None`` when it is not a known wrong name)."""
    core, _ = _core()
    if canonicalize_name(name) in WRONG_NAMES:
        return f"{name!r} is another project on PyPI, not funes; funes is {core!r}"
    return None


def requirement_problem(requires: Iterable[str] | None, dist: str = "the plugin") -> str | None:
    """What is wrong with a plugin's declared requirements for the running core (``None``: nothing).

    ``requires`` is a distribution's ``Requires-Dist`` lines. Requirements whose environment
    marker does not apply here are ignored; an unreadable line is ignored too (the installer has
    already accepted it, and refusing a plugin over a typo in an unrelated extra helps nobody).
    """
    core, running = _core()
    for line in requires or ():
        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue
        name = canonicalize_name(req.name)
        if name in WRONG_NAMES:
            return (
                f"it depends on {req.name!r}, another project on PyPI, not funes (funes is {core!r}); "
                f"its author should require {core}{compatible_range(running)}"
            )
        if name != core or not req.specifier:
            continue
        try:
            ok = req.specifier.contains(Version(running), prereleases=True)
        except InvalidVersion:
            continue
        if ok:
            continue
        if _needs_newer(req, Version(running)):
            hint = f"upgrade {core} (uv tool upgrade {core}, or pip install -U '{core}{req.specifier}')"
        else:
            hint = f"upgrade {dist} to a release for {core} {running}, or install {core}{req.specifier}"
        return f"it needs {core}{req.specifier}, but this is {core} {running}; {hint}"
    return None


def _needs_newer(req: Requirement, running: Version) -> bool:
    """Whether ``running`` fails ``req`` for being too old (a lower bound above it)."""
    for spec in req.specifier:
        if spec.operator in (">=", ">", "~=", "==", "===") and not spec.contains(running, prereleases=True):
            try:
                bound = Version(spec.version.removesuffix(".*"))
            except InvalidVersion:
                continue
            if running < bound:
                return True
    return False


def component_versions(plugins: Iterable[tuple[str, str | None, str | None, str]] = ()) -> list[str]:
    """``funes --version``'s lines: the core, the kit when installed, then ``(name, dist, version, note)``."""
    from funes_core.host.api import CONTRACT_VERSION, SUPPORTED_CONTRACTS
    from funes_core.version import KIT_DISTRIBUTION

    core, running = _core()
    speaks = ", ".join(str(v) for v in sorted(SUPPORTED_CONTRACTS))
    lines = [f"funes {running} ({core}; plugin contract {CONTRACT_VERSION}, loads {speaks})"]
    with contextlib.suppress(importlib.metadata.PackageNotFoundError):
        lines.append(f"kit {importlib.metadata.version(KIT_DISTRIBUTION)} ({KIT_DISTRIBUTION})")
    for name, dist, version, note in plugins:
        origin = f"{dist} {version}" if dist and version else dist or "an unknown distribution"
        lines.append(f"plugin {name}: {origin}" + (f" ({note})" if note else ""))
    return lines
