"""``funes serve``: run, start, stop or ask after the memory service of this ``$FUNES_HOME``.

The service itself is :mod:`funes_core.serve.service`; this module is its command line. Agents'
``funes mcp`` fronts start the service on demand, so running it by hand is only needed to keep it
warm for CLI reads, or to watch it in the foreground.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

__all__ = ["register"]

SERVE_HELP = """\
Run the memory service: one process per FUNES_HOME that holds the memory, the model and the store
open, so agent sessions (funes mcp) and CLI reads share one warm copy instead of loading their own.

It listens on a Unix socket inside FUNES_HOME (run/serve.sock, 0600, never TCP) and exits after
--idle without a client. `funes mcp` starts it on demand; the CLI read verbs use it when it runs
(--no-service reads in-process); `funes ui` has it host the web viewer (on 127.0.0.1, while funes
ui runs). With no option it runs in the foreground until stopped.

Team mode: --http HOST:PORT --memory NAME serves a remote memory (a bucket you own) over HTTP to
other people: the read verbs as JSON and MCP over streamable HTTP, read-only, with bearer tokens
(funes serve token add NAME). See docs/serving.md.
"""

TOKEN_HELP = """\
Bearer tokens for team mode (funes serve --http). Only their SHA-256 is stored, in
FUNES_HOME/serve-tokens.json (0600; --tokens PATH for another file): a token is printed once, by
`add`, and never again. A revoked token is answered 403, one never issued 401.
"""

TokensOpt = Annotated[
    Path | None,
    typer.Option("--tokens", help="The tokens file (default: FUNES_HOME/serve-tokens.json)."),
]


def _tokens_path(given: Path | None) -> Path:
    from funes_core.home import Home, HomeError
    from funes_core.serve.tokens import FILE_NAME

    if given is not None:
        return given.expanduser().absolute()
    try:
        return Home.resolve().root / FILE_NAME
    except HomeError as exc:
        typer.echo(f"funes: {exc}", err=True)
        raise typer.Exit(1) from None


def _duration(flag: str, raw: str) -> float:
    from funes_core.serve import wire

    try:
        seconds = wire.parse_duration(raw)
    except ValueError as exc:
        typer.echo(f"funes serve: {flag} {exc}", err=True)
        raise typer.Exit(2) from None
    if seconds <= 0:
        typer.echo(f"funes serve: {flag} must be above 0", err=True)
        raise typer.Exit(2)
    return seconds


def _token_app() -> typer.Typer:
    token_app = typer.Typer(help=TOKEN_HELP, no_args_is_help=True)

    @token_app.command("add", help="Make a token for NAME and print it (the only time it is shown).")
    def add_cmd(
        name: Annotated[str, typer.Argument(help="Who holds it: 1-32 of a-z 0-9 - _.")],
        tokens: TokensOpt = None,
        rate: Annotated[
            int | None,
            typer.Option(
                "--rate", help="This token's requests a minute per replica (default: serve's --rate)."
            ),
        ] = None,
    ) -> None:
        from funes_core.serve.tokens import TokenFileError, add_token

        path = _tokens_path(tokens)
        try:
            token = add_token(path, name, rate=rate)
        except TokenFileError as exc:
            typer.echo(f"funes serve token: {exc}", err=True)
            raise typer.Exit(1) from None
        typer.echo(token)
        typer.echo(f"funes serve token: {name} added to {path}; keep the token: it is not stored", err=True)

    @token_app.command(
        "revoke", help="Revoke NAME's token: answered 403 from now on (replicas re-read the file)."
    )
    def revoke_cmd(
        name: Annotated[str, typer.Argument(help="The token's name.")], tokens: TokensOpt = None
    ) -> None:
        from funes_core.serve.tokens import TokenFileError, revoke_token

        path = _tokens_path(tokens)
        try:
            entry = revoke_token(path, name)
        except TokenFileError as exc:
            typer.echo(f"funes serve token: {exc}", err=True)
            raise typer.Exit(1) from None
        typer.echo(f"funes serve token: {entry.name} revoked ({entry.revoked})")

    @token_app.command("list", help="The tokens' names, when each was made and revoked (never a token).")
    def list_cmd(
        tokens: TokensOpt = None,
        as_json: Annotated[bool, typer.Option("--json", help="One JSON array.")] = False,
    ) -> None:
        from funes_core.serve.tokens import TokenFileError, load_tokens

        path = _tokens_path(tokens)
        try:
            entries = load_tokens(path)
        except TokenFileError as exc:
            typer.echo(f"funes serve token: {exc}", err=True)
            raise typer.Exit(1) from None
        if as_json:
            shown = [{k: v for k, v in e.to_json().items() if k != "sha256"} for e in entries]
            typer.echo(json.dumps(shown, indent=2))
            return
        if not entries:
            typer.echo(f"no tokens in {path} (funes serve token add NAME)")
        for e in entries:
            state = f"revoked {e.revoked}" if e.revoked else "active"
            typer.echo(f"{e.name}\tcreated {e.created}\t{state}")

    return token_app


def register(app: typer.Typer) -> None:
    serve_app = typer.Typer(help=SERVE_HELP, invoke_without_command=True, no_args_is_help=False)
    serve_app.add_typer(_token_app(), name="token")
    app.add_typer(serve_app, name="serve")

    @serve_app.callback(invoke_without_command=True)
    def serve_cmd(
        ctx: typer.Context,
        status: Annotated[
            bool, typer.Option("--status", help="Say whether it runs: pid, version, uptime, RSS, clients.")
        ] = False,
        as_json: Annotated[bool, typer.Option("--json", help="With --status: one JSON object.")] = False,
        start: Annotated[
            bool, typer.Option("--start", help="Start it in the background (if none runs) and return.")
        ] = False,
        stop: Annotated[bool, typer.Option("--stop", help="Stop the running service.")] = False,
        idle: Annotated[
            str | None,
            typer.Option(
                "--idle",
                help="Exit after this long without a client: seconds, or 90s, 30m, 2h; 0 = never "
                "(default: FUNES_SERVE_IDLE, else 30m).",
            ),
        ] = None,
        http: Annotated[
            str | None,
            typer.Option(
                "--http",
                help="Team mode: serve --memory over HTTP on HOST:PORT ([::1]:PORT for IPv6). A bind "
                "other machines can reach needs a token (funes serve token add).",
            ),
        ] = None,
        memory: Annotated[
            str | None, typer.Option("--memory", help="With --http: the remote to serve (funes remote list).")
        ] = None,
        tokens: TokensOpt = None,
        allow_host: Annotated[
            list[str] | None,
            typer.Option(
                "--allow-host",
                help="With --http: a name clients reach the service by (the load balancer's), checked "
                "against Host and Origin; repeat for several. Loopback names are always allowed on a "
                "loopback bind.",
            ),
        ] = None,
        refresh: Annotated[
            str, typer.Option("--refresh", help="With --http: re-list the bucket this often (30s).")
        ] = "30s",
        rate: Annotated[
            int,
            typer.Option(
                "--rate", help="With --http: requests a minute per token per replica (0: no limit)."
            ),
        ] = 600,
        max_body: Annotated[
            int, typer.Option("--max-body", help="With --http: the largest request body, in bytes.")
        ] = 64 * 1024,
        header_timeout: Annotated[
            str,
            typer.Option(
                "--header-timeout", help="With --http: a request's headers must arrive in this time."
            ),
        ] = "10s",
        body_timeout: Annotated[
            str,
            typer.Option("--body-timeout", help="With --http: a request's body must arrive in this time."),
        ] = "30s",
    ) -> None:
        if ctx.invoked_subcommand is not None:
            return
        from funes_core.home import Home, HomeError
        from funes_core.serve import client, wire

        try:
            home = Home.resolve()
        except HomeError as exc:
            typer.echo(f"funes: {exc}", err=True)
            raise typer.Exit(1) from None
        if sum((status, start, stop, http is not None)) > 1:
            typer.echo("funes serve: choose one of --status, --start, --stop, --http", err=True)
            raise typer.Exit(2)
        if http is not None:
            from funes_core.serve.http import HttpOptions, run_http

            if not memory:
                typer.echo("funes serve: --http needs --memory NAME (the remote to serve)", err=True)
                raise typer.Exit(2)
            options = HttpOptions(
                bind=http,
                memory=memory,
                tokens=_tokens_path(tokens),
                allow_hosts=tuple(allow_host or ()),
                refresh=_duration("--refresh", refresh),
                rate=rate,
                max_body=max_body,
                header_timeout=_duration("--header-timeout", header_timeout),
                body_timeout=_duration("--body-timeout", body_timeout),
            )

            def say(text: str) -> None:
                typer.echo(text, err=True)

            raise typer.Exit(run_http(options, home, announce=say))
        if memory is not None:
            typer.echo(
                "funes serve: --memory goes with --http (the local service serves every memory)", err=True
            )
            raise typer.Exit(2)
        seconds = wire.idle_seconds()
        if idle is not None:
            try:
                seconds = wire.parse_duration(idle)
            except ValueError as exc:
                typer.echo(f"funes serve: --idle {exc}", err=True)
                raise typer.Exit(2) from None
        if status:
            line, info = client.service_line(home.root)
            if as_json:
                typer.echo(json.dumps({"running": info is not None, **(info or {})}, indent=2))
            else:
                typer.echo(line)
                if info is not None:
                    typer.echo(f"socket: {info.get('socket')}")
            raise typer.Exit(0 if info is not None else 1)
        if stop:
            pid = client.stop_service(home.root)
            typer.echo(
                "funes serve: no service was running" if pid is None else f"funes serve: stopped pid {pid}"
            )
            return
        if start:
            import os

            os.environ[wire.IDLE_ENV] = str(seconds)
            try:
                conn = client.ensure_service(home.root)
            except client.ServiceUnavailableError as exc:
                typer.echo(f"funes serve: {exc}", err=True)
                raise typer.Exit(1) from None
            conn.close()
            typer.echo(f"funes serve: {client.service_line(home.root)[0].removeprefix('service: ')}")
            return
        from funes_core.serve.service import run_service

        def announce(text: str) -> None:
            typer.echo(text, err=True)

        code = run_service(home, idle=seconds, announce=announce, foreground=True)
        raise typer.Exit(code)
