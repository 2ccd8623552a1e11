"""``funes integrations remove``: undo the wiring; never delete the memory, the spool or transcripts."""

from __future__ import annotations

from funes_core.host.integrations.common import Orchestrator
from funes_core.host.integrations.wiring import steps_for, wire


def remove(orch: Orchestrator, ident: str) -> int:
    integ = orch.require(ident)
    record = orch.read_record(orch.context(), ident) or {}
    memory = record.get("memory") if isinstance(record.get("memory"), str) else None
    ctx = orch.context(memory)
    changed = False
    # All or nothing: every file the parts touch is checked before any is changed.
    for outcome in wire(orch, integ, ctx, steps_for(integ, install=False)):
        orch.ui.out(f"{ident}: {outcome.summary}")
        changed |= outcome.changed
    path = orch.record_path(ctx, ident)
    if path.exists():
        path.unlink()
        changed = True
    orch.ui.out(
        f"{ident}: {'removed' if changed else 'nothing to remove'}; the memory, the spool and the "
        f"agent's transcripts are kept"
    )
    if integ.dist:
        orch.ui.out(f"{ident}: the {integ.dist} package stays installed (uninstall it with your installer)")
    return 0
