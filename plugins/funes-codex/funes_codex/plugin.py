"""Hook implementations of funes-codex: what the ``funes`` entry point loads.

Loaded on every ``funes`` start, so it imports only the light parts; ``tomlkit`` and the wiring
are imported when funes asks for the classes.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from funes_core import Converter, HookInstaller, ToolRegistrar, hookimpl

if TYPE_CHECKING:
    import typer


@hookimpl
def funes_register_converters() -> Iterable[type[Converter]]:
    from funes_codex.converter import CodexConverter

    return [CodexConverter]


@hookimpl
def funes_register_hook_installers() -> Iterable[type[HookInstaller]]:
    from funes_codex.wiring import CodexHookInstaller

    return [CodexHookInstaller]


@hookimpl
def funes_register_tool_registrars() -> Iterable[type[ToolRegistrar]]:
    from funes_codex.wiring import CodexToolRegistrar

    return [CodexToolRegistrar]


@hookimpl
def funes_register_commands(app: typer.Typer) -> None:
    import typer

    codex_app = typer.Typer(
        name="codex", help="Commands of the Codex CLI integration (funes-codex).", no_args_is_help=True
    )

    @codex_app.command("sessions")
    def sessions() -> None:
        """List Codex's sessions on this machine ($CODEX_HOME/sessions), newest first."""
        from funes_codex.converter import CodexConverter
        from funes_codex.paths import codex_home
        from funes_core import InstallContext

        home = InstallContext.from_environment().home
        refs = CodexConverter().discover(home)
        if not refs:
            typer.echo(f"no Codex sessions under {codex_home(home) / 'sessions'}")
        for ref in refs:
            typer.echo(f"{ref.session_id}\t{ref.path}")

    app.add_typer(codex_app)
