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
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from funes_core.faces.cli.read import MemoryOpt

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
Only embedded chunks go out, so a push first waits for the embeddings still owed (the rows
`funes index` just stored), embedding them here at normal priority with a progress bar (a
background worker still at it is stopped first); --no-wait publishes what is embedded now and
says how many rows are left for a later push. A push that publishes nothing says why.

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
split and embedded again and replaces its old rows. A preview comes first (blocks, turns, rows,
sessions, agents, dates, three redacted samples); a terminal is asked, anything else needs --yes;
--dry-run shows the preview and changes nothing. The old rows are exported to $FUNES_HOME/trash/
(0600, kept 7 days; `funes purge --undo` restores them) unless --no-trash is given. Then the memory
is rewritten so that no other copy of the old text is left under $FUNES_HOME (old versions,
indexes, memory.old-*, remote caches). The next `funes push` to each remote removes the same text
there. Runs under the store lock; an interrupted scrub or purge is finished first.
"""

PURGE_HELP = """\
Delete turns for privacy: every turn of the sessions named (--session ID, repeatable), or every
turn with a block containing TEXT (--match TEXT, case-insensitive, literal: no patterns; at least
3 characters).

A preview comes first: turns, rows, sessions, agents, date range and three redacted samples. A
terminal is asked; anything else needs --yes. --dry-run shows the preview and changes nothing. A
match that would remove more than 5% of the memory's turns or more than 100 turns is refused
unless --force is given too.

Before the memory is rewritten, the removed rows are exported to $FUNES_HOME/trash/ (0600), kept 7
days, then deleted by the next purge, scrub or index run; `funes purge --undo` puts the newest
entry back (--entry ID for another; --trash lists them). --no-trash keeps no copy at all: then
nothing of the removed text is left under $FUNES_HOME: the memory is rewritten (old versions,
transactions, manifests and indexes deleted), memory.old-* and remote caches are deleted, and
spool files, log lines and state records quoting the turns are removed.

Purged turns are not indexed again when their transcript is converted again. The purge log
($FUNES_HOME/purge.log, --log to print it) records each purge before it rewrites anything (ids
and counts, never the text), so a purge that was killed is finished by the next `funes purge`
(with or without arguments) or `funes scrub`. The next `funes push` to each remote removes the same
rows there.
"""


EXPORT_HELP = """\
Write the memory back to turns files, one per session, in OUT (an empty or new folder outside
$FUNES_HOME): a backup, a move to another machine, or data to check.

The files follow the open turns format (docs/turns-format.md) and are checked against its schema
before anything is written; the same memory always gives the same bytes. `funes index OUT` into a
fresh $FUNES_HOME stores the same chunk ids with the same texts (embeddings are computed again).
What is exported is what is stored: redacted secrets stay redacted, purged turns are absent.
--session ID (repeatable), --since/--until DATE (inclusive, UTC days) and --harness ID narrow
it; --memory NAME exports a remote (or a memory folder) instead of the local memory.
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
        from funes_core.share import lastpush
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
        lastpush.forget(home, name)
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
        no_wait: Annotated[
            bool,
            typer.Option("--no-wait", help="Publish what is embedded now; leave the owed rows for later."),
        ] = False,
    ) -> None:
        _push(name, yes=yes, batch=batch, reindex=reindex, wait=not no_wait)

    @app.command("export", help=EXPORT_HELP)
    def export_cmd(
        out: Annotated[Path, typer.Argument(help="An empty or new folder, outside $FUNES_HOME.")],
        session: Annotated[
            list[str] | None, typer.Option("--session", help="Export only this session (repeatable).")
        ] = None,
        since: Annotated[
            str | None, typer.Option("--since", help="From this day on (YYYY-MM-DD, UTC).")
        ] = None,
        until: Annotated[str | None, typer.Option("--until", help="Up to this day (inclusive).")] = None,
        harness: Annotated[str | None, typer.Option("--harness", help="Only this agent's sessions.")] = None,
        memory: MemoryOpt = None,
    ) -> None:
        _export(out, sessions=session or [], since=since, until=until, harness=harness, memory=memory)

    @app.command("scrub", help=SCRUB_HELP)
    def scrub_cmd(
        yes: Annotated[bool, typer.Option("--yes", "-y", help="Do it without asking.")] = False,
        dry_run: Annotated[bool, typer.Option("--dry-run", help="Show the preview; change nothing.")] = False,
        no_trash: Annotated[
            bool, typer.Option("--no-trash", help="Keep no restorable copy of the old rows.")
        ] = False,
    ) -> None:
        _scrub(Brakes(yes=yes, dry_run=dry_run, force=True, trash=not no_trash))

    @app.command("purge", help=PURGE_HELP)
    def purge_cmd(
        session: Annotated[
            list[str] | None, typer.Option("--session", help="A session id to delete (repeatable).")
        ] = None,
        match: Annotated[
            str | None, typer.Option("--match", help="Delete every turn containing this text.")
        ] = None,
        yes: Annotated[bool, typer.Option("--yes", "-y", help="Do it without asking.")] = False,
        dry_run: Annotated[bool, typer.Option("--dry-run", help="Show the preview; change nothing.")] = False,
        force: Annotated[
            bool, typer.Option("--force", help="Allow a match past 5% of the memory or 100 turns.")
        ] = False,
        no_trash: Annotated[
            bool, typer.Option("--no-trash", help="Keep no restorable copy (a privacy purge).")
        ] = False,
        undo: Annotated[
            bool, typer.Option("--undo", help="Restore the newest trash entry (or --entry ID).")
        ] = False,
        entry: Annotated[str | None, typer.Option("--entry", help="The trash entry --undo restores.")] = None,
        show_trash: Annotated[bool, typer.Option("--trash", help="List the trash entries and exit.")] = False,
        show_log: Annotated[bool, typer.Option("--log", help="Print the purge log and exit.")] = False,
    ) -> None:
        brakes = Brakes(yes=yes, dry_run=dry_run, force=force, trash=not no_trash)
        if show_log:
            _show_log()
        elif show_trash:
            _show_trash()
        elif undo or entry is not None:
            _undo(entry)
        else:
            _purge(session or [], match, brakes)


def _export(
    out: Path,
    *,
    sessions: list[str],
    since: str | None,
    until: str | None,
    harness: str | None,
    memory: str | None,
) -> None:
    from datetime import date

    from funes_core.share.export import ExportError, export_memory
    from funes_core.share.mirror import RemoteError
    from funes_core.store import NoIndexError
    from funes_core.store.base import Filters

    def day(value: str | None, flag: str) -> date | None:
        if value is None:
            return None
        try:
            return date.fromisoformat(value[:10])
        except ValueError:
            raise _fail(f"{flag} needs a date (YYYY-MM-DD), not {value[:40]!r}") from None

    filters = Filters(harness=harness, since=day(since, "--since"), until=day(until, "--until"))
    home = _home()
    try:
        report = export_memory(home, out, memory=memory, sessions=sessions, filters=filters)
    except (ExportError, NoIndexError, RemoteError) as exc:
        raise _fail(str(exc)) from None
    typer.echo(
        f"exported {report.turns} turn(s) ({report.rows} row(s)) "
        f"in {report.files} session file(s) to {report.out}"
    )


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


def _owed(home: Home) -> int:
    from funes_core.store import NoIndexError, open_store

    try:
        return open_store(None, home=home).owed_count()
    except NoIndexError:
        return 0


def _push(name: str | None, *, yes: bool, batch: int, reindex: bool | None = None, wait: bool = True) -> None:
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
    owed = _owed(home) if wait else 0
    if owed:
        from funes_core.faces.cli.index import wait_with_bar

        typer.echo(f"{name}: embedding {owed} owed row(s) first (--no-wait publishes without them)", err=True)
        try:
            waited = wait_with_bar(owed)
        except KeyboardInterrupt:
            raise _fail("stopped waiting for embeddings; nothing was published", 130) from None
        if waited.state == "stopped" and waited.error:
            raise _fail(f"embedding stopped: {waited.error}; nothing was published")
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
    left = f"; {report.owed} row(s) wait for their embedding (left for a later push)" if report.owed else ""
    if report.nothing_published and report.gate.held_blocks:
        typer.echo(f"{name}: nothing published{held}")
        raise typer.Exit(EXIT_HELD_BACK)
    typer.echo(f"{name}: published {report.published} chunk(s), {report.already} already there{held}{left}")
    if report.nothing_published and report.owed:
        typer.echo(
            f"funes: warning: nothing was published: all {report.owed} new row(s) still wait for their "
            f"embedding; `funes push {name}` without --no-wait embeds them first",
            err=True,
        )
    elif report.nothing_published and not report.already and not report.removed:
        typer.echo("funes: warning: nothing was published: the local memory holds no chunk yet", err=True)
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
    """The store lock for a rewrite; hooks turned away meanwhile get their indexer on release.

    It waits up to :data:`REWRITE_LOCK_WAIT` seconds, at a terminal or in a script alike: the
    background worker takes the lock for each commit, so a script that runs ``funes index`` and
    then ``funes purge --yes`` would otherwise fail at random (exit 75) while the embeddings of
    what it just indexed are being committed.
    """
    from funes_core.ingest.markers import store_lock

    return store_lock(home, wait=REWRITE_LOCK_WAIT, notify=sys.stderr)


#: Seconds a rewrite (purge, scrub, ``index --rebuild``) waits for the store lock before exit 75.
REWRITE_LOCK_WAIT = 15.0


@dataclass(frozen=True, slots=True)
class Brakes:
    """The flags every command that deletes or rewrites stored turns takes."""

    yes: bool = False
    dry_run: bool = False
    force: bool = False
    trash: bool = True


def go_ahead(lines: list[str], question: str, brakes: Brakes, verb: str) -> bool:
    """Print the preview; True when the command may go on (asked at a terminal, or --yes)."""
    from funes_core.home import stderr_is_interactive

    for line in lines:
        typer.echo(line)
    if brakes.dry_run:
        typer.echo(f"dry run: nothing was {verb}")
        return False
    if brakes.yes:
        return True
    if not stderr_is_interactive():
        raise _fail(f"not a terminal: rerun with --yes (or --dry-run to look); nothing was {verb}")
    if not _confirm(question):
        typer.echo(f"nothing was {verb}")
        return False
    return True


def _finish_interrupted(home: Home) -> None:
    from funes_core.share.scrub import finish_interrupted
    from funes_core.store.trash import prune

    finish_interrupted(home, say=typer.echo)
    prune(home)


def _scrub(brakes: Brakes) -> None:
    from funes_core.home import LockBusyError
    from funes_core.models.embed import embedder_from_env
    from funes_core.models.vectors import ModelMismatchError
    from funes_core.share.scrub import plan_scrub, scrub
    from funes_core.store import NoIndexError

    home = _home()
    try:
        with _locked(home):
            _finish_interrupted(home)
            embedder = embedder_from_env(home)
            plan = plan_scrub(home, embedder=embedder)
            if plan.old:
                kinds = ", ".join(
                    f"{k}×{n}" for k, n in sorted(plan.by_kind.items(), key=lambda kv: (-kv[1], kv[0]))
                )
                lines = [
                    *plan.preview.lines("scrub would rewrite"),
                    f"  findings: {kinds}",
                    *_old_memories(home),
                ]
                changed = len({(r.session_id, r.turn_uuid, r.block_idx) for r in plan.old})
                if not go_ahead(lines, f"rewrite {changed} block(s)?", brakes, "scrubbed"):
                    return
            report = scrub(home, embedder=embedder, plan=plan, trash=brakes.trash)
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
    if report.trash:
        typer.echo(f"  the old rows are in the trash for 7 days (funes purge --undo): {report.trash}")
    for line in report.cleaned:
        typer.echo(f"  {line}")


def _show_log() -> None:
    from funes_core.store.purgelog import events, undone, unfinished

    home = _home()
    all_events = events(home)
    restored = undone(all_events)
    open_ids = {str(e.get("event")) for e in unfinished(home)}
    for event in all_events:
        if event.get("op") in ("done", "undo"):
            continue
        sessions_part = f" sessions={','.join(event.get('sessions') or [])}" if event.get("sessions") else ""
        ident = str(event.get("event") or "")
        state = ""
        if ident in open_ids:
            state = " (interrupted: the next funes purge finishes it)"
        elif ident in restored:
            state = " (undone)"
        elif event.get("trash"):
            state = f" (trash {ident})"
        typer.echo(
            f"{event.get('at')} {event.get('op')} by {event.get('by')}: "
            f"{event.get('rows')} row(s){sessions_part}{state}"
        )


def _show_trash() -> None:
    from funes_core.store.trash import KEEP_DAYS, entries

    items = entries(_home())
    if not items:
        typer.echo("the trash is empty")
        return
    for e in items:
        left = max(0.0, KEEP_DAYS - e.age_days())
        typer.echo(f"{e.event}\t{e.at}\t{e.op} by {e.by}\t{e.rows} row(s)\t{left:.1f} day(s) left")


def _undo(entry: str | None) -> None:
    from funes_core.home import LockBusyError
    from funes_core.share.scrub import PurgeError, undo
    from funes_core.store import NoIndexError

    home = _home()
    try:
        with _locked(home):
            report = undo(home, event=entry)
    except LockBusyError:
        raise _fail("another funes memory operation is in progress; retry in a moment", EXIT_LOCKED) from None
    except (PurgeError, NoIndexError) as exc:
        raise _fail(str(exc)) from None
    typer.echo(f"restored {report.rows} row(s) removed by the {report.op} of {report.at}")
    if report.reembed:
        from funes_core.ingest.worker import ensure_worker

        ensure_worker(home, owed=report.rows)
        typer.echo(f"  {report.reembed}: their embeddings are owed, and the background worker computes them")


def _old_memories(home: Home) -> list[str]:
    """Preview lines for the ``memory.old-*`` copies a purge or scrub deletes whole (they hold the
    removed text too): ``index --rebuild`` kept them because they hold turns the memory lacks."""
    return [
        f"  also deletes {old.name}, which index --rebuild kept (it may hold turns the memory lacks; "
        "the trash does not keep it)"
        for old in sorted(home.root.glob("memory.old-*"))
    ]


def _purge(sessions: list[str], match: str | None, brakes: Brakes) -> None:
    from funes_core.home import LockBusyError
    from funes_core.share.brakes import BrakeError, size_refusal
    from funes_core.share.scrub import PurgeError, plan_purge, purge
    from funes_core.store import NoIndexError
    from funes_core.store.purgelog import unfinished

    home = _home()
    try:
        with _locked(home):
            interrupted = bool(unfinished(home))
            _finish_interrupted(home)
            if interrupted and not sessions and match is None:
                return
            plan = plan_purge(home, sessions=sessions, match=match)
            if not plan.rows:
                typer.echo("nothing matched; nothing was purged")
                return
            lines = plan.preview.lines("purge would remove")
            if match is not None:
                lines.insert(1, f"  match: {match!r} (case-insensitive, literal)")
            if plan.note:
                lines.append(f"  note: {plan.note}")
            if not brakes.trash:
                lines.append("  --no-trash: no restorable copy is kept")
            lines += _old_memories(home)
            refusal = size_refusal(plan.preview, force=brakes.force) if match is not None else None
            if refusal is not None and brakes.dry_run:
                lines.append(f"  without --force: {refusal}")
            elif refusal is not None:
                for line in lines:
                    typer.echo(line)
                raise _fail(refusal)
            if not go_ahead(lines, f"purge {plan.preview.turns} turn(s)?", brakes, "purged"):
                return
            report = purge(home, plan, trash=brakes.trash)
    except LockBusyError:
        raise _fail("another funes memory operation is in progress; retry in a moment", EXIT_LOCKED) from None
    except (PurgeError, BrakeError, NoIndexError) as exc:
        raise _fail(str(exc)) from None
    typer.echo(f"purged {report.rows} row(s) of {report.turns} turn(s) in {report.sessions} session(s)")
    if report.trash:
        typer.echo(f"  a copy is in the trash for 7 days (funes purge --undo restores it): {report.trash}")
    for line in report.cleaned:
        typer.echo(f"  {line}")
