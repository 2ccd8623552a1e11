"""``funes integrations``: list, inspect, install, remove, check and run agent integrations."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from funes_core.host.manager import FunesPluginManager
    from funes_core.wiring.integrations.common import UI, Orchestrator

__all__ = ["default_ui", "register"]

HELP = """\
Wire funes into your coding agents.

An integration (a plugin distribution such as funes-claude) converts an agent's transcripts into
the turns format, installs a per-turn hook so new turns are indexed, and registers `funes mcp`
with the agent. `install` does all of it and builds the first index; `remove` undoes the wiring
and never deletes the memory.
"""


def _is_terminal() -> bool:
    return sys.stdin.isatty() and sys.stderr.isatty()


def default_ui() -> UI:
    """The terminal-backed UI (tests monkeypatch this to answer prompts)."""
    from funes_core.wiring.integrations.common import UI

    def confirm(question: str) -> bool:
        return typer.confirm(question.removesuffix(" [y/N]"), default=False, err=True)

    return UI(
        out=typer.echo,
        err=lambda line: typer.echo(line, err=True),
        is_terminal=_is_terminal,
        confirm=confirm,
        progress=sys.stderr.isatty(),
    )


def _run(pm: FunesPluginManager, action: Callable[[Orchestrator], int]) -> None:
    """Build the orchestrator, run one subcommand, map a one-line failure to ``funes: …`` and exit 1."""
    from funes_core.host.catalog import CatalogError
    from funes_core.wiring.integrations.common import InstallError, Orchestrator

    try:
        status = action(Orchestrator(pm=pm, ui=default_ui()))
    except (InstallError, CatalogError) as exc:
        typer.echo(f"funes: {exc}", err=True)
        raise typer.Exit(1) from None
    raise typer.Exit(status)


def register(app: typer.Typer, pm: FunesPluginManager) -> None:
    group = typer.Typer(name="integrations", help=HELP, no_args_is_help=True)

    @group.command("list")
    def list_(
        as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    ) -> None:
        """Installed integrations and what the catalog offers, with their status on this machine."""
        from funes_core.wiring.integrations.listing import show_list

        _run(pm, lambda orch: show_list(orch, as_json=as_json))

    @group.command("info")
    def info(
        ident: Annotated[str, typer.Argument(metavar="ID", help="The integration id, e.g. claude.")],
        as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    ) -> None:
        """Everything funes knows about one integration."""
        from funes_core.wiring.integrations.info import info

        _run(pm, lambda orch: info(orch, ident, as_json=as_json))

    @group.command("install")
    def install(
        ident: Annotated[str, typer.Argument(metavar="ID", help="The integration id, e.g. claude.")],
        memory: Annotated[
            str | None,
            typer.Argument(
                metavar="MEMORY", help="The memory the agent's tools read ('local' unbinds a previous one)."
            ),
        ] = None,
        from_path: Annotated[
            Path | None,
            typer.Option(
                "--from", metavar="PATH|WHEEL", help="Install the plugin from a local folder or wheel."
            ),
        ] = None,
        dist: Annotated[
            str | None,
            typer.Option("--dist", metavar="NAME", help="Install this distribution from the package index."),
        ] = None,
        yes: Annotated[
            bool, typer.Option("--yes", "-y", help="Trust a source the catalog does not vouch for.")
        ] = False,
        seed: Annotated[
            bool, typer.Option("--seed/--no-seed", help="Convert the agent's existing sessions.")
        ] = True,
        index: Annotated[bool, typer.Option("--index/--no-index", help="Build the first index.")] = True,
        paths: Annotated[
            list[Path] | None,
            typer.Option(
                "--path",
                metavar="DIR|FILE",
                help="Also read this folder or file (repeatable; e.g. notes). `funes index` re-reads it.",
            ),
        ] = None,
        takeover: Annotated[
            bool,
            typer.Option(
                "--takeover",
                help="Go ahead although this plugin names the sessions another one stored differently.",
            ),
        ] = False,
        installed_only: Annotated[bool, typer.Option("--installed-only", hidden=True)] = False,
        origin: Annotated[str | None, typer.Option("--origin", hidden=True)] = None,
    ) -> None:
        """Install an integration and wire it: MCP tools, hooks, existing sessions, first index.

        --path registers folders or files for the integration to read (the notes integration
        reads nothing else); every `funes index` then converts the ones that changed.

        --from PATH installs a copy of the folder: after editing it, install it again.
        """
        from funes_core.wiring.integrations.install import install

        _run(
            pm,
            lambda orch: install(
                orch,
                ident,
                memory,
                from_path=from_path,
                dist=dist,
                yes=yes,
                seed=seed,
                index=index,
                installed_only=installed_only,
                origin=origin,
                paths=paths or (),
                takeover=takeover,
            ),
        )

    @group.command("remove")
    def remove(
        ident: Annotated[str, typer.Argument(metavar="ID", help="The integration id.")],
        paths: Annotated[
            list[Path] | None,
            typer.Option("--path", metavar="DIR|FILE", help="Only stop reading this registered path."),
        ] = None,
    ) -> None:
        """Undo the wiring (hooks, MCP registration); keeps the memory, the spool and transcripts."""
        from funes_core.wiring.integrations.remove import remove

        _run(pm, lambda orch: remove(orch, ident, paths or ()))

    @group.command("check")
    def check(
        ident: Annotated[str | None, typer.Argument(metavar="[ID]", help="The integration id.")] = None,
        every: Annotated[
            bool,
            typer.Option(
                "--all", help="Check every wired integration: its plugin is installed and its hook imports."
            ),
        ] = False,
        as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    ) -> None:
        """Run the contract suite against an installed plugin and print a conformance report.

        --all checks the wiring instead: for every integration funes wired on this machine, that its
        plugin is still installed and that its hook's modules import in a fresh interpreter (a
        `uv tool upgrade` drops plugins the tool's receipt does not name), and says how to fix each.
        """
        from funes_core.wiring.integrations.check import check, check_all

        if every == (ident is not None):
            typer.echo("funes: integrations check: name one ID, or pass --all (not both)", err=True)
            raise typer.Exit(2)
        if every:
            _run(pm, lambda orch: check_all(orch, as_json=as_json))
        assert ident is not None
        _run(pm, lambda orch: check(orch, ident, as_json=as_json))

    @group.command("new")
    def new(
        ident: Annotated[str, typer.Argument(metavar="ID", help="The new integration's id, e.g. opencode.")],
        folder: Annotated[
            Path | None,
            typer.Option("--dir", metavar="PATH", help="Where to create it (default: ./funes-memory-ID)."),
        ] = None,
        label: Annotated[
            str | None, typer.Option("--label", help="The agent's human name (default: from the id).")
        ] = None,
        converter_only: Annotated[
            bool,
            typer.Option(
                "--converter-only",
                help="Only a converter: an agent with no hooks and no MCP client (aider), or exported files.",
            ),
        ] = False,
    ) -> None:
        """Scaffold a separately packaged integration that passes `check` as generated."""
        from funes_core.wiring.integrations.new import new as scaffold

        _run(pm, lambda orch: scaffold(orch, ident, folder, label=label, converter_only=converter_only))

    @group.command("convert")
    def convert(
        ident: Annotated[str, typer.Argument(metavar="ID", help="The integration id.")],
        source: Annotated[Path, typer.Argument(metavar="SOURCE", help="A transcript or a folder of them.")],
        out_dir: Annotated[
            Path | None,
            typer.Argument(metavar="[OUT_DIR]", help="Where to write turns files (default: the spool)."),
        ] = None,
        index: Annotated[
            bool,
            typer.Option("--index", help="Then make sure `funes index` runs, in the background (hooks)."),
        ] = False,
        also: Annotated[
            list[Path] | None,
            typer.Option("--also", metavar="PATH", help="Another transcript of the same event (repeatable)."),
        ] = None,
        session: Annotated[
            list[str] | None,
            typer.Option("--session", metavar="ID", help="Only this session (repeatable)."),
        ] = None,
    ) -> None:
        """Convert transcripts into turns files: into the spool (under its lock), or into OUT_DIR.

        Without OUT_DIR this is what every per-turn hook runs: the sessions are converted into
        $FUNES_HOME/spool/ID/ under the integration's conversion lock, and --index makes sure an
        indexer runs. With OUT_DIR, `funes index OUT_DIR` then indexes them.
        """
        from funes_core.wiring.integrations.convert import convert

        _run(
            pm,
            lambda orch: convert(
                orch, ident, source, out_dir, index=index, also=also or (), sessions=session or ()
            ),
        )

    app.add_typer(group)
