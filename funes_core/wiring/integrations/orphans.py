"""Wiring whose plugin is gone: undone from the ledger, and found by ``funes integrations check --all``.

``uv tool upgrade funes-memory`` rebuilds the tool's environment from its receipt, and a plugin
that ``integrations install`` added with ``uv pip install`` was not in it: the plugin vanished
while its hooks stayed in the agents' configs, failing with ``ModuleNotFoundError`` on every
turn, and ``integrations remove`` refused because no installed plugin provided the id. Two things
make that recoverable without the plugin:

* the ledger (``$FUNES_HOME/integrations/<id>.wiring.json``) keeps every value funes wrote, with
  its file, format and place (:meth:`~funes_core.wiring.configedit.managed.ManagedWiring._remember`),
  so :func:`undo_recorded` removes exactly those values (and the containers and files funes
  created) through the same managed-wiring code as a normal removal;
* the install record (``<id>.json``) names the distribution and the modules the hook imports, so
  :func:`problems` re-imports them in a fresh interpreter and says how to fix each failure.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from funes_core.host.api import InstallContext, Outcome
from funes_core.wiring.configedit.base import Adapter, Ledger, Place
from funes_core.wiring.configedit.json import JsonFormat
from funes_core.wiring.configedit.managed import ManagedEntry, ManagedWiring
from funes_core.wiring.configedit.toml import TomlFormat
from funes_core.wiring.configedit.yaml import YamlFormat
from funes_core.wiring.integrations.imports import import_failure

__all__ = ["Problem", "problems", "recorded_ids", "undo_recorded"]

_FORMATS: dict[str, type[Adapter]] = {"JSON": JsonFormat, "TOML": TomlFormat, "YAML": YamlFormat}


def _equal_to(wanted: Any) -> Any:
    return lambda found: found == wanted


class _Recorded(ManagedWiring):
    """The entries a ledger recorded for one id, as managed wiring (removal only)."""

    def __init__(self, ident: str, entries: list[ManagedEntry]) -> None:
        self.id = ident
        self._entries = entries

    def entries(self, ctx: InstallContext) -> list[ManagedEntry]:
        return list(self._entries)


def _entries(ledger: Ledger) -> tuple[list[ManagedEntry], list[str]]:
    """The recorded entries funes can rebuild, and what it cannot (an unknown format)."""
    found: list[ManagedEntry] = []
    unknown: list[str] = []
    for config in ledger.configs():
        for place, raw in ledger.entries(config).items():
            adapter = _FORMATS.get(str(raw.get("format")))
            path, key = raw.get("path"), raw.get("key")
            if adapter is None or not isinstance(path, list) or not (key is None or isinstance(key, str)):
                unknown.append(f"{config}: {place}")
                continue
            value = raw.get("value")
            found.append(
                ManagedEntry(
                    path=config,
                    adapter=adapter(),
                    place=Place(tuple(str(p) for p in path), key),
                    value=value,
                    ours=_equal_to(value),
                    what=str(raw.get("what") or "the funes entry"),
                    comment=str(raw["note"]) if isinstance(raw.get("note"), str) else None,
                )
            )
    return found, unknown


def undo_recorded(ctx: InstallContext, ident: str) -> tuple[list[Outcome], list[str]] | None:
    """Remove what the ledger recorded for ``ident``; ``None`` when it recorded nothing.

    Returns the outcomes and the places it could not rebuild. A value the user (or an agent)
    changed since is not funes' recorded value any more and is left alone.
    """
    ledger = Ledger.load(ctx.funes_home, ident)
    entries, unknown = _entries(ledger)
    if not entries and not unknown:
        return None
    wiring = _Recorded(ident, entries)
    outcomes = [wiring.drop(ctx)] if entries else []
    return outcomes, unknown


@dataclass(frozen=True, slots=True)
class Problem:
    """One wired integration whose hook would fail, and how to fix it."""

    ident: str
    what: str
    fix: str

    def line(self) -> str:
        return f"{self.ident}: {self.what}; {self.fix}"


def _record(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def recorded_ids(funes_home: Path) -> list[str]:
    """Every id with an install record or a ledger in ``$FUNES_HOME/integrations``."""
    folder = funes_home / "integrations"
    if not folder.is_dir():
        return []
    names = {p.name.removesuffix(".wiring.json") for p in folder.glob("*.wiring.json")}
    names |= {p.stem for p in folder.glob("*.json") if not p.name.endswith(".wiring.json")}
    return sorted(names)


def problems(funes_home: Path, installed: set[str], python: str | None = None) -> list[Problem]:
    """Wired integrations whose plugin is not installed, or whose hook modules no longer import."""
    found: list[Problem] = []
    for ident in recorded_ids(funes_home):
        record = _record(funes_home / "integrations" / f"{ident}.json")
        dist = str(record.get("dist") or f"the plugin providing {ident!r}")
        modules = [m for m in record.get("modules", []) if isinstance(m, str)]
        remove = f"or undo the wiring with `funes integrations remove {ident}`"
        origin = record.get("origin")
        came = f" (it came from {origin})" if isinstance(origin, str) and origin != "environment" else ""
        if ident not in installed:
            found.append(
                Problem(
                    ident,
                    f"wired, but {dist} is not installed (a `uv tool upgrade` drops plugins it was not "
                    "told about)",
                    f"reinstall it with `funes integrations install {ident}`{came}, {remove}",
                )
            )
            continue
        failure = import_failure(modules, python)
        if failure:
            found.append(
                Problem(
                    ident,
                    f"its hook would fail: {failure}",
                    f"reinstall {dist} with `funes integrations install {ident}`, {remove}",
                )
            )
    return found
