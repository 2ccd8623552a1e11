"""``funes remote``, ``funes push``, ``funes scrub`` and ``funes purge``: sharing, and taking back.

Every error is one line on stderr and a non-zero exit, and none of these commands changes the
local memory unless it succeeds (scrub and purge rewrite it under the store lock, in one commit).
Exit statuses: 0 done; 1 refused or failed (bad input, unreachable, unauthorized, another model,
not a funes memory, unknown session); 2 ``push`` published nothing because the secret gate held
every block back; 75 the store lock is busy (scrub, purge), as for ``funes index``.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from funes_core.home import Home
    from funes_core.share.push import Upkeep

__all__ = ["register"]

EXIT_HELD_BACK = 2
EXIT_LOCKED = 75

REMOTE_HELP = """\
Name memories on storage you own: S3 (and S3-compatible stores), Google Cloud Storage, Azure, a folder.

Credentials are never stored: the cloud SDK's own environment and config supply them
(AWS_PROFILE or AWS_ACCESS_KEY_ID, GOOGLE_APPLICATION_CREDENTIALS, ...). The list lives in
$FUNES_HOME/remotes.toml (mode 0600); docs/sharing.md describes the format and set-up.
"""

ADD_HELP = """\
Name a remote: `funes remote add team s3://bucket/prefix --option region=eu-west-1`.

URI: s3://BUCKET/PREFIX, s3+ddb://BUCKET/PREFIX?ddbTableName=T (S3-compatible stores without
conditional writes), gs://BUCKET/PREFIX, az://CONTAINER/PREFIX, or an absolute folder (NFS, a
synced drive). The memory's table is chunks.lance inside it.

--option KEY=VALUE (repeatable) are LanceDB storage options: endpoint (an S3-compatible store's
URL), region, allow_http=true (plain-http endpoints such as a loopback server),
virtual_hosted_style_request, connect_timeout, timeout (durations: 30s, 500ms),
dynamodb_endpoint, account_name. Keys that look like credentials are refused, and so are values
that hold one (an endpoint's user:pass@ or ?query) and URIs with user-info.

--taint external marks every passage read from this remote as third-party text (for memories
written by other people): recall flags it so an agent treats it as data, never as instructions.
"""

PUSH_HELP = """\
Publish the local chunks the remote lacks (a delta of chunk ids), in batches, with a progress bar.

Idempotent and resumable: rerun after any interruption (even kill -9) and the remote ends up
with the same rows as a clean push, never duplicates. Two machines pushing at once lose nothing.
Only embedded chunks go out; ones still waiting for their embedding follow in a later push.

Before anything leaves the machine each block is scanned with funes' redaction rules and
detect-secrets; a block with any finding is held back whole, and the report counts findings by
detector (exit 2 when nothing could be published: run `funes scrub`, then push again).

If the remote already holds chunks and shares none with this memory (wrong remote?), a
terminal is asked first; off a terminal the push refuses unless --yes is given.
Rows removed here by `funes scrub` or `funes purge` are removed from the remote first (it is
rewritten so that no object in the bucket still holds them).

Index upkeep comes after the upload, as a separate step. Rows outside the remote's indexes are
still found (searched exactly, beside the index); once 500 or more are, the push folds them into
the full-text and vector indexes, building the vector index the first time 20,000 vectors are
there (minutes of CPU per 100k chunks), and rebuilds it as one piece after 8 folds.
--reindex does that now, whatever the count; --no-reindex publishes only (index later with
`funes push NAME --reindex`, for instance from a machine next to the bucket).
"""

SCRUB_HELP = """\
Re-apply today's redaction rules to the whole local memory.

Rules improve; rows indexed earlier may hold secrets today's rules catch. Each changed block is
split and embedded again and replaces its old rows. The memory is rewritten so that no copy of
the old text is left under $FUNES_HOME (old versions, indexes, memory.old-*, remote caches).
The next `funes push` to each remote removes the same text there. Runs under the store lock.
"""

PURGE_HELP = """\
Delete turns for privacy: every turn of the sessions named (--session ID, repeatable), or every
turn with a block containing TEXT (--match TEXT, case-insensitive).

Leaves no copy of the removed text under $FUNES_HOME: the memory is rewritten (old versions,
transactions, manifests and indexes deleted), memory.old-* and remote caches are deleted, and
spool files, log lines and state records quoting the turns are removed. Purged turns are not
indexed again when their transcript is converted again. The purge log ($FUNES_HOME/purge.log,
--log to print it) records what was done, when and how many rows, never the text. The next
`funes push` to each remote removes the same rows there.
"""


def _fail(message: str, code: int = 1) -> typer.Exit:
    typer.echo(f"funes: {message}", err=True)
    return typer.Exit(code)


def _home() -> Home:
    from funes_core.home import Home, HomeError

    try:
        return Home.resolve()
    except HomeError as exc:
        raise _fail(str(exc)) from None


def _remotes(home: Home) -> dict[str, Any]:
    from funes_core.share.remotes import RemoteConfigError, load_remotes

    try:
        return dict(load_remotes(home))
    except RemoteConfigError as exc:
        raise _fail(str(exc)) from None


def register(app: typer.Typer) -> None:
    remote_app = typer.Typer(
        name="remote", help=REMOTE_HELP, no_args_is_help=True, rich_markup_mode=None, add_completion=False
    )

    @remote_app.command("add", help=ADD_HELP)
    def remote_add(
        name: Annotated[str, typer.Argument(help="A short name: a-z, 0-9, '-', '_' (not 'local').")],
        uri: Annotated[str, typer.Argument(help="Where the memory lives (see above).")],
        option: Annotated[
            list[str] | None, typer.Option("--option", "-o", help="KEY=VALUE storage option (repeatable).")
        ] = None,
        taint: Annotated[
            str, typer.Option("--taint", help="internal (your own sessions) or external (other people's).")
        ] = "internal",
    ) -> None:
        from funes_core.share.remotes import (
            TAINTS,
            Remote,
            RemoteConfigError,
            parse_option,
            save_remotes,
            validate_name,
            validate_uri,
        )

        home = _home()
        remotes = _remotes(home)
        try:
            validate_name(name)
            if name in remotes:
                raise RemoteConfigError(f"remote {name!r} exists; funes remote remove {name} first")
            if taint not in TAINTS:
                raise RemoteConfigError(f"--taint must be internal or external, not {taint!r}")
            options = dict(parse_option(o) for o in option or [])
            remote = Remote(name, validate_uri(uri), options, taint)
        except RemoteConfigError as exc:
            raise _fail(str(exc)) from None
        path = save_remotes(home, [*remotes.values(), remote])
        typer.echo(f"added remote {name}: {remote.uri} ({path})")

    @remote_app.command("list", help="List the configured remotes (name, URI, taint, options).")
    def remote_list(
        as_json: Annotated[bool, typer.Option("--json", help="Print one JSON document.")] = False,
    ) -> None:
        remotes = _remotes(_home())
        if as_json:
            doc = [
                {"name": r.name, "uri": r.uri, "taint": r.taint, "options": dict(r.options)}
                for r in sorted(remotes.values(), key=lambda r: r.name)
            ]
            sys.stdout.write(json.dumps({"remotes": doc}, indent=2) + "\n")
            return
        if not remotes:
            typer.echo("no remotes (funes remote add NAME URI)")
            return
        for r in sorted(remotes.values(), key=lambda r: r.name):
            opts = " ".join(f"{k}={v}" for k, v in sorted(r.options.items()))
            typer.echo(f"{r.name}\t{r.uri}\t{r.taint}" + (f"\t{opts}" if opts else ""))

    @remote_app.command(
        "remove", help="Forget a remote and delete its local cache; the data on the remote is untouched."
    )
    def remote_remove(name: Annotated[str, typer.Argument(help="The remote's name.")]) -> None:
        from funes_core.share.mirror import drop_mirror
        from funes_core.share.remotes import save_remotes
        from funes_core.store.purgelog import forget_remote

        home = _home()
        remotes = _remotes(home)
        if name not in remotes:
            raise _fail(_unknown(name, remotes))
        del remotes[name]
        save_remotes(home, remotes.values())
        drop_mirror(home, name)
        forget_remote(home, name)
        typer.echo(f"removed remote {name} (its data on the remote is untouched)")

    app.add_typer(remote_app)

    @app.command("push", help=PUSH_HELP)
    def push_cmd(
        name: Annotated[
            str | None, typer.Argument(help="The remote (default: the only one configured).")
        ] = None,
        yes: Annotated[
            bool, typer.Option("--yes", "-y", help="Publish even to a remote that shares nothing.")
        ] = False,
        batch: Annotated[int, typer.Option("--batch", min=1, max=100_000, help="Rows per commit.")] = 2000,
        reindex: Annotated[
            bool | None,
            typer.Option(
                "--reindex/--no-reindex",
                help="Fold new rows into the remote's indexes now / not in this push (default: past 500).",
            ),
        ] = None,
    ) -> None:
        _push(name, yes=yes, batch=batch, reindex=reindex)

    @app.command("scrub", help=SCRUB_HELP)
    def scrub_cmd() -> None:
        _scrub()

    @app.command("purge", help=PURGE_HELP)
    def purge_cmd(
        session: Annotated[
            list[str] | None, typer.Option("--session", help="A session id to delete (repeatable).")
        ] = None,
        match: Annotated[
            str | None, typer.Option("--match", help="Delete every turn containing this text.")
        ] = None,
        show_log: Annotated[bool, typer.Option("--log", help="Print the purge log and exit.")] = False,
    ) -> None:
        _purge(session or [], match, show_log)


def _unknown(name: str, remotes: dict[str, Any]) -> str:
    known = ", ".join(sorted(remotes)) or "none configured"
    shown = name if name.isprintable() and len(name) <= 60 else repr(name[:60])
    return f"unknown remote {shown!r} (remotes: {known}; funes remote add NAME URI)"


class _Bar:
    """The push progress bar (rich), on stderr, only when a person is watching."""

    def __init__(self, label: str) -> None:
        from funes_core.home import stderr_is_interactive

        self.label = label
        self.enabled = stderr_is_interactive()
        self._progress: Any = None
        self._task: Any = None

    def start(self, total: int) -> None:
        if not self.enabled or total == 0:
            return
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        self._progress = Progress(
            TextColumn(f"push {self.label}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            console=Console(stderr=True),
            transient=True,
        )
        self._progress.start()
        self._task = self._progress.add_task("push", total=total)

    def advance(self, n: int) -> None:
        if self._progress is not None:
            self._progress.advance(self._task, n)

    def stop(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None


def _confirm(question: str) -> bool:
    from funes_core.home import stderr_is_interactive

    if not stderr_is_interactive():
        return False
    sys.stderr.write(f"{question} [y/N] ")
    sys.stderr.flush()
    try:
        answer = sys.stdin.readline()
    except (OSError, KeyboardInterrupt):
        return False
    return answer.strip().lower() in ("y", "yes")


def _push(name: str | None, *, yes: bool, batch: int, reindex: bool | None = None) -> None:
    from funes_core.models.vectors import ModelMismatchError
    from funes_core.share.push import PushRefused, push
    from funes_core.store import NoIndexError

    home = _home()
    remotes = _remotes(home)
    if name is None:
        if len(remotes) != 1:
            raise _fail(
                "name the remote to push to (funes remote list)" if remotes else "no remotes configured"
            )
        name = next(iter(remotes))
    if name not in remotes:
        raise _fail(_unknown(name, remotes))
    remote = remotes[name]
    try:
        report = push(
            remote,
            home,
            yes=yes,
            confirm=_confirm,
            progress=_Bar(name),
            batch=batch,
            reindex=reindex,
            say=lambda m: typer.echo(m, err=True),
        )
    except (NoIndexError, ModelMismatchError, PushRefused) as exc:
        raise _fail(str(exc)) from None
    held = ""
    if report.gate.held_blocks:
        held = (
            f"; held back {report.held_rows} row(s) in {report.gate.held_blocks} block(s) with secrets "
            f"({report.gate.summary()}): run `funes scrub`, then push again"
        )
    owed = f"; {report.owed} row(s) wait for their embedding" if report.owed else ""
    if report.nothing_published and report.gate.held_blocks:
        typer.echo(f"{name}: nothing published{held}")
        raise typer.Exit(EXIT_HELD_BACK)
    typer.echo(f"{name}: published {report.published} chunk(s), {report.already} already there{held}{owed}")
    note = _upkeep_note(name, report.upkeep)
    if note:
        typer.echo(note, err=True)


def _upkeep_note(name: str, upkeep: Upkeep | None) -> str | None:
    """The line on stderr that says what the push did to the remote's indexes, if anything."""
    from funes_core.share.push import REINDEX_MIN_ROWS

    if upkeep is None:
        return None
    if upkeep.action in ("folded", "rebuilt"):
        what = f"folded {upkeep.before} row(s) into its indexes"
        if upkeep.action == "rebuilt":
            what += " and rebuilt its vector index as one piece"
        left = f"; {upkeep.after} row(s) still outside them" if upkeep.after else ""
        return f"{name}: {what} in {upkeep.seconds:.1f} s{left}"
    if not upkeep.after:
        return None
    if upkeep.action == "skipped":
        return (
            f"{name}: {upkeep.after} row(s) are outside the remote's indexes (searched exactly meanwhile); "
            f"`funes push {name} --reindex` folds them in"
        )
    return (
        f"{name}: {upkeep.after} row(s) are outside the remote's indexes (searched exactly meanwhile; "
        f"a push folds them in once {REINDEX_MIN_ROWS} are, or with --reindex)"
    )


def _locked(home: Home) -> Any:
    from funes_core.home import stderr_is_interactive, write_lock

    return write_lock(home, wait=15.0 if stderr_is_interactive() else 0.0, notify=sys.stderr)


def _scrub() -> None:
    from funes_core.home import LockBusyError
    from funes_core.models.embed import embedder_from_env
    from funes_core.models.vectors import ModelMismatchError
    from funes_core.share.scrub import scrub
    from funes_core.store import NoIndexError

    home = _home()
    try:
        with _locked(home):
            report = scrub(home, embedder=embedder_from_env(home))
    except LockBusyError:
        raise _fail("another funes memory operation is in progress; retry in a moment", EXIT_LOCKED) from None
    except (NoIndexError, ModelMismatchError) as exc:
        raise _fail(str(exc)) from None
    kinds = ", ".join(f"{k}×{n}" for k, n in sorted(report.by_kind.items(), key=lambda kv: (-kv[1], kv[0])))
    typer.echo(
        f"scrubbed {report.blocks} block(s): {report.changed_blocks} changed"
        + (f" ({kinds})" if kinds else "")
        + f"; {report.rows_before} row(s) before, {report.rows_after} after"
    )
    for line in report.cleaned:
        typer.echo(f"  {line}")


def _purge(sessions: list[str], match: str | None, show_log: bool) -> None:
    from funes_core.home import LockBusyError
    from funes_core.share.scrub import PurgeError, purge
    from funes_core.store import NoIndexError
    from funes_core.store.purgelog import events

    home = _home()
    if show_log:
        for event in events(home):
            sessions_part = (
                f" sessions={','.join(event.get('sessions') or [])}" if event.get("sessions") else ""
            )
            typer.echo(
                f"{event.get('at')} {event.get('op')} by {event.get('by')}: "
                f"{event.get('rows')} row(s){sessions_part}"
            )
        return
    try:
        with _locked(home):
            report = purge(home, sessions=sessions, match=match)
    except LockBusyError:
        raise _fail("another funes memory operation is in progress; retry in a moment", EXIT_LOCKED) from None
    except (PurgeError, NoIndexError) as exc:
        raise _fail(str(exc)) from None
    if not report.rows:
        typer.echo("nothing matched; nothing was purged")
        return
    typer.echo(f"purged {report.rows} row(s) of {report.turns} turn(s) in {report.sessions} session(s)")
    for line in report.cleaned:
        typer.echo(f"  {line}")
