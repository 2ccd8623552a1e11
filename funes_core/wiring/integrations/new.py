"""``funes integrations new ID [--dir PATH]``: scaffold a separately packaged integration.

Refused in one line when the id is not usable, when an installed plugin or the catalog already
provides it (two plugins claiming one id are both refused at load time, so a second one would
never work), or when the target folder exists and is not empty. What is written, and why each
file is there: :mod:`funes_core.host.scaffold`.
"""

from __future__ import annotations

from pathlib import Path

from funes_core.host.scaffold import ScaffoldError, names_for, render
from funes_core.wiring.integrations.common import InstallError, Orchestrator


def new(
    orch: Orchestrator,
    ident: str,
    folder: Path | None = None,
    *,
    label: str | None = None,
    converter_only: bool = False,
) -> int:
    """Write a new integration project for ``ident``; returns the exit status."""
    try:
        names = names_for(ident, label, wired=not converter_only)
    except ScaffoldError as exc:
        raise InstallError(str(exc)) from None
    integ = orch.pm.integration(ident)
    if integ is not None:
        raise InstallError(f"{ident!r} is taken: {integ.origin} provides it; choose another id")
    listed = orch.catalog.get(ident)
    if listed is not None:
        raise InstallError(f"{ident!r} is taken: the catalog lists {listed.dist} for it; choose another id")
    dest = (folder or Path.cwd() / names.dist).expanduser().absolute()
    try:
        written = render(dest, names)
    except ScaffoldError as exc:
        raise InstallError(str(exc)) from None
    orch.ui.out(f"created {names.dist} in {dest} ({len(written)} files):")
    for path in written:
        orch.ui.out(f"  {path.relative_to(dest)}")
    orch.ui.out("next:")
    orch.ui.out(f"  cd {dest}")
    orch.ui.out(f"  funes integrations install {ident} --from . --yes   # into funes' own environment")
    orch.ui.out(f"  funes integrations check {ident}                    # the conformance report")
    parts = "agent.py, converter.py, wiring.py, hook.py" if names.wired else "agent.py, converter.py"
    orch.ui.out(f"then make {parts} and contract_fixtures/ true for the agent")
    return 0
