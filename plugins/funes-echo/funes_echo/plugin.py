"""Hook implementations of funes-echo: what the ``funes`` entry point loads on every start.

Keep this module cheap to import: the classes it registers import only ``funes_core``'s public
API and the core's config helpers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from funes_core import hookimpl, integration_hooks

if TYPE_CHECKING:
    import typer

#: The three registration hooks, from the part classes (imported when funes asks for them).
funes_register_converters, funes_register_hook_installers, funes_register_tool_registrars = integration_hooks(
    "funes_echo.converter:EchoConverter",
    "funes_echo.wiring:EchoHookInstaller",
    "funes_echo.wiring:EchoToolRegistrar",
)


@hookimpl
def funes_register_commands(app: typer.Typer) -> None:
    """``funes echo sessions``: the worked example of a plugin command (the hook's reference use)."""
    import typer

    echo_app = typer.Typer(
        name="echo", help="Commands of the echo integration (funes-echo).", no_args_is_help=True
    )

    @echo_app.command("sessions")
    def sessions() -> None:
        """List echo's sessions on this machine, newest first."""
        from funes_core import InstallContext
        from funes_echo.converter import EchoConverter

        home = InstallContext.from_environment().home
        converter = EchoConverter()
        refs = converter.discover(home)
        if not refs:
            typer.echo(f"no echo sessions under {converter.session_roots(home)[0]}")
        for ref in refs:
            typer.echo(f"{ref.session_id}\t{ref.path}")

    app.add_typer(echo_app)
