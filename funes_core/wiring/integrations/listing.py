"""``funes integrations list``: installed integrations and what the catalog offers, with their status."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from funes_core.wiring.integrations.common import Orchestrator


@dataclass(slots=True)
class _Row:
    id: str
    label: str
    installed: str
    catalog: str
    agent_found: bool | None
    hooks: str
    mcp: str
    status: str

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "label": self.label,
            "installed": self.installed or None,
            "catalog": self.catalog or None,
            "agent_found": self.agent_found,
            "hooks": self.hooks or None,
            "mcp": self.mcp or None,
            "status": self.status,
        }


def rows(orch: Orchestrator) -> list[_Row]:
    record_ctx = orch.context()
    out: list[_Row] = []
    installed = orch.pm.integrations()
    for ident, integ in sorted(installed.items()):
        record = orch.read_record(record_ctx, ident) or {}
        memory = record.get("memory") if isinstance(record.get("memory"), str) else None
        found, hooks, mcp, overall = orch.status(integ, orch.context(memory))
        entry = orch.catalog.get(ident)
        out.append(
            _Row(
                id=ident,
                label=integ.label,
                installed=integ.origin,
                catalog=f"{entry.dist} ({entry.tier})" if entry else "",
                agent_found=found,
                hooks=hooks,
                mcp=mcp,
                status=overall,
            )
        )
    for ident, entry in sorted(orch.catalog.entries.items()):
        if ident in installed:
            continue
        out.append(
            _Row(
                id=ident,
                label=entry.label,
                installed="",
                catalog=f"{entry.dist} ({entry.tier})",
                agent_found=None,
                hooks="",
                mcp="",
                status="not installed",
            )
        )
    return out


def show_list(orch: Orchestrator, *, as_json: bool = False) -> int:
    found = rows(orch)
    if as_json:
        orch.ui.out(json.dumps([r.to_json() for r in found], indent=2))
        return 0
    header = ("ID", "AGENT", "PLUGIN", "AGENT FOUND", "STATUS")
    table = [
        (
            r.id,
            r.label,
            r.installed or f"- (catalog: {r.catalog})",
            "-" if r.agent_found is None else ("yes" if r.agent_found else "no"),
            r.status,
        )
        for r in found
    ]
    widths = [max(len(str(row[i])) for row in [header, *table]) for i in range(len(header))]
    for row in [header, *table]:
        orch.ui.out(
            "  ".join(str(cell).ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        )
    if any(r.status == "not installed" for r in found):
        orch.ui.out("install one with: funes integrations install ID")
    for line in takeovers(orch):
        orch.ui.err(f"funes: {line}")
    return 0


def takeovers(orch: Orchestrator) -> list[str]:
    """A warning for each integration another distribution took over from the one that stored its
    sessions, naming them differently (see :func:`.install.takeover_warning`)."""
    from funes_core.wiring.integrations.install import takeover_warning

    ctx = orch.context()
    out = []
    for ident, integ in sorted(orch.pm.integrations().items()):
        warning = takeover_warning(integ, orch.read_record(ctx, ident) or {})
        if warning is not None:
            out.append(warning)
    return out
