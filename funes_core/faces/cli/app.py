"""The ``funes`` command line, built by a factory so tests (and plugins) get a fresh app.

Each group of verbs lives in its own module under :mod:`funes_core.faces.cli` and is mounted
here. Heavy libraries (lancedb, fastembed, mcp) are imported inside the commands that need
them, so ``funes --help`` answers at once.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

import typer

from funes_core.faces.cli import (
    ask,
    index,
    integrations,
    mcp,
    models,
    notes,
    plugins,
    read,
    serve,
    share,
    stats,
    status,
    suggest,
    ui,
)
from funes_core.host.manager import FunesPluginManager, load_plugins

__all__ = ["main", "make_app"]

HELP = """\
funes: a verbatim, local-first memory of your coding agents' past sessions.

Agents' transcripts are converted into one open turns format, chunked, embedded with a pinned
local model and stored in an embedded LanceDB under $FUNES_HOME (default ~/.funes). Nothing is
summarised and nothing leaves this machine.

Start with `funes index examples/` (or `funes integrations install claude`), then
`funes recall "what did we decide about the parser"`.
"""


def _version_callback(pm: FunesPluginManager) -> Callable[[bool], None]:
    """``--version``: the core, the kit and every plugin distribution, one line each."""

    def show(value: bool) -> None:
        if not value:
            return
        from funes_core.host.versions import component_versions
        from funes_core.version import DISTRIBUTION

        found = [
            (p.name, p.dist, p.version, "" if p.status == "loaded" else p.status)
            for p in pm.plugins()
            if p.dist != DISTRIBUTION
        ]
        for line in component_versions(found):
            typer.echo(line)
        raise typer.Exit()

    return show


def make_app(pm: FunesPluginManager | None = None) -> typer.Typer:
    """Build the ``funes`` app: every core verb, then whatever the plugins in ``pm`` add.

    ``pm`` is the plugin manager (``None``: an empty one, no plugins). Plugins' commands are
    mounted last through ``funes_register_commands`` and may not shadow a core verb.
    """
    pm = pm if pm is not None else FunesPluginManager()
    app = typer.Typer(
        name="funes",
        help=HELP,
        no_args_is_help=True,
        add_completion=False,
        rich_markup_mode=None,
        context_settings={"help_option_names": ["-h", "--help"]},
        pretty_exceptions_enable=False,
    )

    # A default value, not an annotation: typer evaluates annotations as strings, where the
    # closure over ``pm`` is out of reach.
    version_option = typer.Option(
        False,
        "--version",
        callback=_version_callback(pm),
        is_eager=True,
        help="Print the versions of funes, the kit and every plugin, and exit.",
    )

    @app.callback()
    def _root(version: bool = version_option) -> None:
        """funes: verbatim memory for coding agents."""

    index.register(app, pm)
    status.register(app)
    read.register(app)
    ask.register(app, pm)
    notes.register(app)
    suggest.register(app)
    share.register(app)
    stats.register(app)
    mcp.register(app)
    serve.register(app)
    ui.register(app)
    plugins.register(app, pm)
    models.register(app, pm)
    integrations.register(app, pm)

    pm.register_commands(app)
    from funes_core.models.registry import use_manager

    use_manager(pm)
    return app


def main() -> None:
    """Load the installed plugins, build the app, run it (``funes_core.faces.cli.main`` calls this)."""
    app = make_app(load_plugins())
    sys.exit(app(standalone_mode=True))
