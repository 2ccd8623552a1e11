"""``funes integrations convert``: convert transcripts by hand, and what every per-turn hook runs.

Without ``OUT_DIR`` (or with the integration's own spool as ``OUT_DIR``) the sessions go into
``$FUNES_HOME/spool/<id>/`` through :func:`funes_core.wiring.spooling.convert_into_spool`: under
the integration's conversion lock, then (with ``--index``) the spool is marked dirty and an
indexer is started with the recorded funes command, so a ``FUNES_BIN`` pin holds. That is the
one mechanism every hook uses (claude, codex, pi, hermes and any plugin built on the core's hook
runtime). With another ``OUT_DIR`` the turns files are written there, and ``--index`` starts
``funes index OUT_DIR`` detached.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from funes_core.host.api import SessionRef, SpoolWrite
from funes_core.wiring.hookrt import spawn_detached
from funes_core.wiring.integrations.common import InstallError, Orchestrator


def convert(
    orch: Orchestrator,
    ident: str,
    source: Path,
    out_dir: Path | None = None,
    *,
    index: bool = False,
    also: Sequence[Path] = (),
    sessions: Sequence[str] = (),
) -> int:
    """Convert the sessions in ``source`` (and ``also``) into ``out_dir``, by default the spool."""
    integ = orch.require(ident)
    if integ.converter is None:
        raise InstallError(f"{ident}: {integ.origin} provides no converter")
    sources = [source, *also]
    for path in sources:
        if not path.exists():
            raise InstallError(f"no such file or folder: {path}")
    converter = integ.converter()
    ctx = orch.context()
    spool = ctx.spool_dir(ident)
    target = spool if out_dir is None else out_dir.expanduser().absolute()
    if target == spool:
        from funes_core.wiring.integrations.install import takeover_warning
        from funes_core.wiring.spooling import SpoolLockTimeout, convert_into_spool

        # What every per-turn hook runs: a plugin swapped behind funes' back must not store the
        # id's sessions again under other ids. Hold back (the transcripts stay) and say the way out.
        warning = takeover_warning(integ, orch.read_record(ctx, ident) or {})
        if warning is not None:
            raise InstallError(f"{warning}; nothing was converted")

        try:
            result = orch.call(
                integ,
                "converter",
                lambda: convert_into_spool(converter, sources, ctx, sessions=sessions, index=index),
            )
        except SpoolLockTimeout as exc:
            raise InstallError(f"{ident}: {exc}") from None
        if not result.writes and not result.failed:
            raise InstallError(f"no {ident} sessions in {', '.join(map(str, sources))}")
        for path, why in result.failed:
            orch.ui.err(f"funes: {ident}: skipped {path}: {why}")
        _report(orch, ident, result.writes, spool)
        return 1 if result.failed else 0

    def found() -> list[SessionRef]:
        return [
            r
            for path in sources
            for r in converter.sessions_in(path)
            if not sessions or r.session_id in sessions
        ]

    refs = orch.call(integ, "converter", found)
    if not refs:
        raise InstallError(f"no {ident} sessions in {', '.join(map(str, sources))}")
    private = ctx.funes_home if target.is_relative_to(ctx.funes_home) else None
    failed = 0
    writes: list[SpoolWrite] = []
    for ref in refs:
        try:
            writes.extend(converter.convert_into(ref, target, private_root=private))
        except Exception as exc:  # broad on purpose: one bad transcript must not stop the rest
            failed += 1
            orch.ui.err(f"funes: {ident}: skipped {ref.path}: {type(exc).__name__}: {exc}")
    _report(orch, ident, writes, target)
    if index and writes:
        logs = ctx.funes_home / "logs"
        logs.mkdir(mode=0o700, parents=True, exist_ok=True)
        argv = [*ctx.funes_command, "index", str(target)]
        spawn_detached(argv, env=orch.env(ctx), log=logs / f"index-{ident}.log")
    return 1 if failed else 0


def _report(orch: Orchestrator, ident: str, writes: list[SpoolWrite], where: Path) -> None:
    for write in writes:
        orch.ui.out(str(write.path))
    turns = sum(w.turns for w in writes)
    orch.ui.err(f"funes: {ident}: {len(writes)} turns files ({turns} turns) in {where}")
