"""``funes integrations info``: everything funes knows about one integration."""

from __future__ import annotations

import json
from typing import Any

from funes_core.host.api import (
    SPOOL_SUFFIX,
)
from funes_core.wiring.integrations.common import Orchestrator
from funes_core.wiring.integrations.seed import recorded_map, recorded_paths


def info(orch: Orchestrator, ident: str, *, as_json: bool = False) -> int:
    entry = orch.catalog.get(ident)
    integ = orch.pm.integration(ident)
    if integ is None and entry is None:
        orch.require(ident)
    data: dict[str, Any] = {"id": ident}
    if entry is not None:
        data["catalog"] = {
            "dist": entry.dist,
            "tier": entry.tier,
            "author": entry.author,
            "summary": entry.summary,
            "link": entry.link,
            "roles": list(entry.roles),
            "contract_version": entry.contract_version,
        }
    if integ is not None:
        record = orch.read_record(orch.context(), ident)
        memory = record.get("memory") if record and isinstance(record.get("memory"), str) else None
        ctx = orch.context(memory)
        found, hooks, mcp, overall = orch.status(integ, ctx)
        parts = {role: f"{cls.__module__}.{cls.__qualname__}" for role, cls in integ.parts().items() if cls}
        caps = next((cls.capabilities for cls in integ.parts().values() if cls), None)
        agent = next((cls.agent for cls in integ.parts().values() if cls and cls.agent), None)
        places = agent.describe(ctx.home, ctx.extra_env) if agent is not None else {}
        spool = ctx.spool_dir(ident)
        data["installed"] = {
            "label": integ.label,
            "plugin": integ.plugin,
            "dist": integ.dist,
            "version": integ.version,
            "parts": parts,
            "capabilities": {
                "discover": caps.discover,
                "memory_binding": caps.memory_binding,
            }
            if caps
            else {},
            "agent_found": found,
            "hooks": hooks or None,
            "mcp": mcp or None,
            "status": overall,
            "paths": {
                name: {"path": str(where.path), "from": where.source, "holds": agent.location(name).holds}
                for name, where in places.items()
            }
            if agent is not None
            else {},
            "spool": str(spool),
            "spool_pending": len(list(spool.glob(f"*{SPOOL_SUFFIX}"))) if spool.is_dir() else 0,
            "record": record,
        }
    if as_json:
        orch.ui.out(json.dumps(data, indent=2))
        return 0
    orch.ui.out(f"id: {ident}")
    if integ is not None:
        inst = data["installed"]
        orch.ui.out(f"agent: {integ.label}")
        orch.ui.out(f"plugin: {integ.plugin} from {integ.origin}")
        for role, where in inst["parts"].items():
            orch.ui.out(f"{role}: {where}")
        orch.ui.out(f"agent found on this machine: {_yes_no(inst['agent_found'])}")
        orch.ui.out(f"status: {inst['status']}")
        if inst["hooks"]:
            orch.ui.out(f"hooks: {inst['hooks']}")
        if inst["mcp"]:
            orch.ui.out(f"mcp: {inst['mcp']}")
        for name, where in inst["paths"].items():
            source = where["from"]
            # a variable is shown as $NAME; an agent's own setting (a sticky profile) as it says
            why = (
                "default"
                if source == "default"
                else f"from ${source}"
                if source.isupper()
                else f"from {source}"
            )
            holds = f" ({where['holds']})" if where["holds"] else ""
            orch.ui.out(f"path {name}: {where['path']}{holds}, {why}")
        orch.ui.out(f"spool: {inst['spool']} ({inst['spool_pending']} files waiting)")
        if inst["record"]:
            rec = inst["record"]
            orch.ui.out(f"installed from: {rec.get('origin')}")
            orch.ui.out(f"memory: {rec.get('memory') or 'local'}")
            for path in recorded_paths(rec):
                orch.ui.out(f"reads: {path}" + ("" if path.exists() else " (gone)"))
            refused = recorded_map(rec, "refused")
            for why in sorted(refused.values()):
                orch.ui.out(f"refused: {why.split(' ', 1)[-1]}")
    else:
        orch.ui.out("plugin: not installed")
    if entry is not None:
        orch.ui.out(f"catalog: {entry.dist} ({entry.tier}) by {entry.author}: {entry.summary}")
        if entry.link:
            orch.ui.out(f"source: {entry.link}")
        if integ is None:
            orch.ui.out(f"install it with: funes integrations install {ident}")
    return 0


def _yes_no(value: bool | None) -> str:
    return "unknown" if value is None else ("yes" if value else "no")
