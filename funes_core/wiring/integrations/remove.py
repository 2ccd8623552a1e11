"""``funes integrations remove``: undo the wiring; never delete the memory, the spool or transcripts."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from funes_core.wiring.integrations.atomic import steps_for, wire
from funes_core.wiring.integrations.common import InstallError, Orchestrator
from funes_core.wiring.integrations.orphans import undo_recorded
from funes_core.wiring.integrations.seed import recorded_map, recorded_paths


def remove(orch: Orchestrator, ident: str, paths: Sequence[Path] = ()) -> int:
    """Undo the wiring; with ``paths``, only stop reading those registered paths.

    When no installed plugin provides ``ident`` any more, what funes recorded in its ledger is
    undone instead (:mod:`funes_core.wiring.integrations.orphans`).
    """
    if orch.pm.integration(ident) is None and not paths:
        gone = _remove_orphan(orch, ident)
        if gone is not None:
            return gone
    integ = orch.require(ident)
    record = orch.read_record(orch.context(), ident) or {}
    if paths:
        return _unregister_paths(orch, ident, record, paths)
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


def _unregister_paths(orch: Orchestrator, ident: str, record: dict[str, Any], paths: Sequence[Path]) -> int:
    """Forget registered paths (and what was recorded about their files); the memory keeps their text."""
    registered = recorded_paths(record)
    wanted = [p.expanduser().absolute() for p in paths]
    unknown = [str(p) for p in wanted if p not in registered]
    if unknown:
        known = ", ".join(str(p) for p in registered) or "none"
        raise InstallError(f"{ident} does not read {', '.join(unknown)} (registered paths: {known})")
    keep = [p for p in registered if p not in wanted]

    def inside(key: str) -> bool:
        source = Path(key.split("::", 1)[0])
        return any(source == p or source.is_relative_to(p) for p in wanted)

    new = dict(record)
    new["paths"] = [str(p) for p in keep]
    new["seeded"] = {k: v for k, v in recorded_map(record, "seeded").items() if not inside(k)}
    new["refused"] = {k: v for k, v in recorded_map(record, "refused").items() if not inside(k)}
    ctx = orch.context()
    orch.write_record(ctx, ident, new)
    for path in wanted:
        orch.ui.out(f"{ident}: no longer reads {path}; what it stored stays in the memory")
    if not keep:
        orch.ui.out(
            f"{ident}: no registered path left (add one with: funes integrations install {ident} --path DIR)"
        )
    return 0


def _remove_orphan(orch: Orchestrator, ident: str) -> int | None:
    """Undo the wiring the ledger recorded for a plugin that is gone; ``None``: nothing recorded."""
    ctx = orch.context()
    undone = undo_recorded(ctx, ident)
    record = orch.record_path(ctx, ident)
    if undone is None:
        if not record.exists():
            return None
        record.unlink()
        orch.ui.out(f"{ident}: its plugin is gone and funes recorded no wiring to undo; forgot it")
        return 0
    outcomes, unknown = undone
    for outcome in outcomes:
        orch.ui.out(f"{ident}: {outcome.summary}")
    record.unlink(missing_ok=True)
    orch.ui.out(
        f"{ident}: no installed plugin provides it; removed the wiring funes recorded for it; the memory, "
        "the spool and the agent's transcripts are kept"
    )
    for place in unknown:
        orch.ui.err(f"funes: {ident}: {place} was recorded in a format this funes cannot edit; left alone")
    return 0
