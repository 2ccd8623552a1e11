"""The agents' location variables at install time, and when they change (issue 19).

An agent relocated by a variable (``CLAUDE_CONFIG_DIR``, ``CODEX_HOME``, ...) is wired where the
variable pointed when ``funes integrations install`` ran. Three rules keep that honest:

* a variable naming a folder that does not exist is refused before anything changes (a typo must
  not make funes create a new, empty agent folder and wire hooks the agent never reads);
* the values are recorded in the install record (``overrides``), every variable the agent
  honours, set or not;
* a later change is logged by the per-turn hook (which follows the agent's *current* environment)
  and reported by ``funes integrations check``, which tells the user to install again.

Standard library only: the hook runtime uses :func:`drift`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["drift", "missing", "recorded", "variables"]


def variables(agent: Any) -> list[str]:
    """Every location variable an :class:`~funes_core.Agent` honours, in declaration order."""
    names: list[str] = []
    for loc in getattr(agent, "locations", ()):
        names.extend(v for v in loc.env if v not in names)
    return names


def _names_a_file(default: str) -> bool:
    return bool(Path(default).suffix)


def missing(agent: Any, home: Path, extra_env: Mapping[str, str] | None = None) -> list[str]:
    """One line per variable that names a folder that does not exist (for its own location)."""
    lines: list[str] = []
    for loc in getattr(agent, "locations", ()):
        where = agent.locate(loc.name, home, extra_env)
        if where.source not in loc.env:
            continue
        folder = where.path.parent if _names_a_file(loc.default) else where.path
        if not folder.is_dir():
            line = f"{where.source} points to {folder}, which does not exist"
            if line not in lines:
                lines.append(line)
    return lines


def recorded(agent: Any, home: Path, environ: Mapping[str, str]) -> dict[str, str | None]:
    """What install records: each variable's value as it applies to ``home`` (``None``: unset)."""
    out: dict[str, str | None] = {}
    for loc in getattr(agent, "locations", ()):
        where = agent.locate(loc.name, home, None, environ)
        for var in loc.env:
            if var == where.source:
                out[var] = str(where.path)
            else:
                out.setdefault(var, None)
    return out


def _norm(value: str | None) -> str | None:
    if not value or not value.strip():
        return None
    return str(Path(value.strip()).expanduser().absolute())


def drift(then: Mapping[str, Any], now: Mapping[str, str | None]) -> list[str]:
    """The variables whose value differs between the record and now, one line each."""
    lines = []
    for name in then:
        before, after = _norm(then.get(name)), _norm(now.get(name))
        if before != after:
            lines.append(f"{name} was {before or 'unset'} at install, is {after or 'unset'} now")
    return lines


def drift_from_record(funes_home: Path, ident: str, environ: Mapping[str, str]) -> list[str]:
    """:func:`drift` against ``$FUNES_HOME/integrations/<id>.json`` (no record: no lines)."""
    try:
        record = json.loads((funes_home / "integrations" / f"{ident}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    then = record.get("overrides") if isinstance(record, dict) else None
    if not isinstance(then, dict):
        return []
    return drift(then, {name: environ.get(name) for name in then})
