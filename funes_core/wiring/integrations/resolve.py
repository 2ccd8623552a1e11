"""What an install would put into funes' environment, found before anything is installed.

A plugin's own code is not the only code an install runs: every distribution it depends on is
installed too, and an sdist among them runs its build script on the spot. A third-party plugin
that named ``funes`` (another project on PyPI) instead of ``funes-memory`` once installed that
stranger's sdist into funes' environment under a trust prompt that mentioned only the plugin. So
the installer resolves first (``uv pip install --dry-run``, or pip's ``--dry-run --report``), the
user sees every distribution that would be installed with its source and whether it is already
trusted, names known to belong to other projects are refused outright, and only then is anything
installed, with exactly the same installer and arguments.

The installer is uv when it is importable (``uv.find_uv_bin()``; funes depends on it, because
an environment made by uv, a ``uv tool`` one included, has no pip), else a ``uv`` on PATH, else
``python -m pip``; the output names which.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib import metadata

from packaging.utils import canonicalize_name

from funes_core.host.catalog import Catalog
from funes_core.host.versions import WRONG_NAMES
from funes_core.wiring.integrations.common import InstallError, Runner

__all__ = ["Installer", "Planned", "find_installer", "plan", "refuse_wrong_names", "show_plan"]

#: What uv and pip use when no index is configured.
DEFAULT_INDEX = "https://pypi.org/simple"


@dataclass(frozen=True, slots=True)
class Installer:
    """The standard installer for the running environment, and how it was found."""

    name: str  # "uv" or "pip"
    argv: tuple[str, ...]  # up to and including ``install`` (and the target interpreter)
    found: str  # "uv.find_uv_bin()", "uv on PATH", "python -m pip"

    def install(self, specs: Sequence[str]) -> list[str]:
        return [*self.argv, *specs]

    def dry_run(self, specs: Sequence[str]) -> list[str]:
        if self.name == "uv":
            return [*self.argv, "--dry-run", *specs]
        return [*self.argv, "--dry-run", "--quiet", "--report", "-", *specs]

    def index(self, environ: Mapping[str, str]) -> str:
        """The index it will ask for names (what the environment configures, else PyPI)."""
        keys = ("UV_DEFAULT_INDEX", "UV_INDEX_URL") if self.name == "uv" else ("PIP_INDEX_URL",)
        for key in keys:
            value = environ.get(key, "").strip()
            if value:
                return f"{value} ({key})"
        return DEFAULT_INDEX


def find_installer(python: str | None = None) -> Installer:
    """uv (importable, then on PATH) before pip; :class:`InstallError` when there is neither."""
    target = python or sys.executable
    try:
        import uv

        return Installer("uv", (uv.find_uv_bin(), "pip", "install", "--python", target), "uv.find_uv_bin()")
    except (ImportError, FileNotFoundError):
        pass
    on_path = shutil.which("uv")
    if on_path:
        return Installer("uv", (on_path, "pip", "install", "--python", target), "uv on PATH")
    if importlib.util.find_spec("pip") is not None:
        return Installer("pip", (target, "-m", "pip", "install"), "python -m pip")
    raise InstallError(
        f"no installer for {target}: uv is neither importable nor on PATH, and pip is not installed "
        "there; install uv (https://docs.astral.sh/uv/) and try again"
    )


@dataclass(frozen=True, slots=True)
class Planned:
    """One distribution the install would add (or replace)."""

    name: str
    version: str
    source: str  # an index URL, a local path or a URL
    #: "already installed", "vouched for by the funes catalog", "funes' own" or "not vouched for".
    trust: str

    @property
    def trusted(self) -> bool:
        return self.trust != "not vouched for"


_UV_LINE = re.compile(
    r"^\s*\+\s+(?P<name>[A-Za-z0-9._-]+)(?:==(?P<version>\S+))?"
    r"(?:\s+@\s+(?P<url>\S+))?(?:\s+\(from (?P<src>[^)]+)\))?\s*$"
)


def _parse_uv(output: str, index: str) -> list[tuple[str, str, str | None]]:
    """``(name, version, direct source or None for the index)`` of each ``+`` line."""
    found: list[tuple[str, str, str | None]] = []
    for line in output.splitlines():
        m = _UV_LINE.match(line)
        if m is None:
            continue
        direct = m.group("url") or m.group("src")
        version = m.group("version") or "(from source)"
        found.append((m.group("name"), version, _shown(direct) if direct else None))
    return found


def _parse_pip(output: str, index: str) -> list[tuple[str, str, str | None]]:
    start = output.find("{")
    try:
        report = json.loads(output[start:]) if start >= 0 else {}
    except ValueError:
        report = {}
    found: list[tuple[str, str, str | None]] = []
    for item in report.get("install", []) if isinstance(report, dict) else []:
        meta = item.get("metadata", {}) if isinstance(item, dict) else {}
        url = (item.get("download_info") or {}).get("url", "") if isinstance(item, dict) else ""
        direct = bool(item.get("is_direct")) if isinstance(item, dict) else False
        name, version = str(meta.get("name", "?")), str(meta.get("version", "?"))
        if direct or url.startswith("file:"):
            found.append((name, version, _shown(url)))
        else:  # from the index: where its files are served, or the index itself
            found.append((name, version, url.rsplit("/", 1)[0] if url else None))
    return found


def _shown(source: str) -> str:
    return source.removeprefix("file://") if source.startswith("file://") else source


def _trust(name: str, version: str, direct: bool, catalog: Catalog) -> str:
    """How far a planned distribution is trusted; the catalog vouches for names on the index only."""
    key = canonicalize_name(name)
    if key == canonicalize_name("funes-memory") or key == canonicalize_name("funes-memory-contracts"):
        return "funes' own"
    try:
        if metadata.version(name) == version:
            return "already installed"
    except metadata.PackageNotFoundError:
        pass
    entry = catalog.by_dist(name)
    if entry is not None and entry.vouched and not direct:
        return "vouched for by the funes catalog"
    return "not vouched for"


def plan(
    installer: Installer,
    specs: Sequence[str],
    runner: Runner,
    catalog: Catalog,
    environ: Mapping[str, str] | None = None,
) -> list[Planned]:
    """Resolve ``specs`` without installing: every distribution that would be installed."""
    env = os.environ if environ is None else environ
    index = installer.index(env)
    done = runner(installer.dry_run(specs), env=None, stream=False)
    if done.returncode != 0:
        tail = done.last_line()
        raise InstallError(
            f"cannot resolve {' '.join(specs)} with {installer.name} (exit {done.returncode})"
            + (f": {tail}" if tail else "")
            + "; nothing was installed"
        )
    parsed = _parse_uv(done.output, index) if installer.name == "uv" else _parse_pip(done.output, index)
    return [Planned(n, v, s or index, _trust(n, v, s is not None, catalog)) for n, v, s in parsed]


def refuse_wrong_names(planned: Sequence[Planned], what: str) -> None:
    """Refuse, in one line, a plan that would install a distribution that is known not to be funes."""
    wrong = [p for p in planned if canonicalize_name(p.name) in WRONG_NAMES]
    if wrong:
        names = ", ".join(f"{p.name} {p.version}" for p in wrong)
        raise InstallError(
            f"refusing to install {what}: it would also install {names}, another project on PyPI, "
            "not funes (funes is 'funes-memory'); nothing was installed, ask its author to depend on "
            "funes-memory"
        )


def show_plan(planned: Sequence[Planned], installer: Installer, say: Callable[[str], None]) -> None:
    """The list the user confirms: one line per distribution, its source and its trust."""
    if not planned:
        say(f"funes: with {installer.name} ({installer.found}) this installs nothing new")
        return
    say(f"funes: with {installer.name} ({installer.found}) this installs {len(planned)} distributions:")
    width = max((len(f"{p.name} {p.version}") for p in planned), default=0)
    for p in planned:
        say(f"  {f'{p.name} {p.version}':<{width}}  from {p.source}  [{p.trust}]")
