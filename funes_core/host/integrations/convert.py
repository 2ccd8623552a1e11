"""``funes integrations convert``: convert transcripts by hand (what the per-turn hooks call)."""

from __future__ import annotations

import sys
from pathlib import Path

from funes_core.host.api import (
    InstallContext,
    spawn_detached,
)
from funes_core.host.integrations.common import InstallError, Orchestrator


def convert(orch: Orchestrator, ident: str, source: Path, out_dir: Path, *, index: bool = False) -> int:
    """Convert one transcript (or a folder of them) into turns files in ``out_dir``."""
    integ = orch.require(ident)
    if integ.converter is None:
        raise InstallError(f"{ident}: {integ.origin} provides no converter")
    if not source.exists():
        raise InstallError(f"no such file or folder: {source}")
    converter = integ.converter()
    refs = orch.call(integ, "converter", lambda: converter.sessions_in(source))
    if not refs:
        raise InstallError(f"no {ident} sessions in {source}")
    ctx = orch.context()
    out_dir = out_dir.expanduser().absolute()
    private = ctx.funes_home if out_dir.is_relative_to(ctx.funes_home) else None
    failed = 0
    files = turns = 0
    for ref in refs:
        try:
            written = converter.convert_into(ref, out_dir, private_root=private)
        except Exception as exc:  # broad on purpose: one bad transcript must not stop the rest
            failed += 1
            orch.ui.err(f"funes: {ident}: skipped {ref.path}: {type(exc).__name__}: {exc}")
            continue
        for w in written:
            files += 1
            turns += w.turns
            orch.ui.out(str(w.path))
    orch.ui.err(f"funes: {ident}: {files} turns files ({turns} turns) in {out_dir}")
    if index and files:
        _spawn_index(orch, ident, ctx, out_dir)
    return 1 if failed else 0


def _spawn_index(orch: Orchestrator, ident: str, ctx: InstallContext, out_dir: Path) -> None:
    """Start ``funes index`` detached, as a per-turn hook needs: return at once, log to a file."""
    from funes_core.home import ensure_private_dir

    if out_dir == ctx.spool_dir(ident):
        argv = [sys.executable, "-m", "funes_core", "index", "--harness", ident]
    else:
        argv = [sys.executable, "-m", "funes_core", "index", str(out_dir)]
    logs = ctx.funes_home / "logs"
    ensure_private_dir(logs)
    spawn_detached(argv, env=orch.env(ctx), log=logs / f"index-{ident}.log")
