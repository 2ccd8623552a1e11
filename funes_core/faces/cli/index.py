"""``funes index``: validate turns files and store them in the memory.

The engine lives in :mod:`funes_core.ingest.engine`; this module parses flags, picks the lock policy
(wait briefly for a person, fail fast for a hook), draws the progress bar when a person is
watching, and prints the one-line summary. Everything heavy is imported inside the command so
``funes --help`` stays instant.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from funes_core.ingest.sources import CheckedFile, CheckReport, format_counts
from funes_core.turns.format import TurnsFormatError

if TYPE_CHECKING:
    from collections.abc import Callable

    from rich.console import Console

    from funes_core.host.manager import FunesPluginManager
    from funes_core.ingest.engine import IndexReport
    from funes_core.ingest.worker import Progress

__all__ = ["register"]

#: Exit status when another writer holds the store lock (sysexits' EX_TEMPFAIL): callers such as
#: per-turn hooks retry on it instead of parsing the message.
EXIT_LOCKED = 75

INDEX_HELP = """\
Validate turns files and store them in the memory.

PATH is a .funes.jsonl file (re-read every run; already stored turns are skipped) or a folder
searched recursively (unchanged files are skipped). Without PATH, the folders and files
registered with `funes integrations install ID --path DIR` (notes, say) are converted where they
changed, then the spools under $FUNES_HOME/spool/<id>/ are drained, newest first: a spool file is
deleted once all of it is stored. Text is stored first and is searchable at once; tool calls
and results follow.

Embeddings are computed by a background worker, which `funes index` starts when any are owed
and then returns: one worker at a time, at low CPU and I/O priority, resumed by the next run if it
was stopped. Rows still owed an embedding are found by keyword search meanwhile. `funes status`
shows how many are owed, the rate and when it should finish (or, when the machine is so busy that
the estimate stopped holding, how many were embedded in the last 10 minutes). --wait then embeds
every owed row here, at normal priority on every core, with a progress bar (a background worker
still at it is stopped first: it runs at nice 19; Ctrl-C stops and keeps everything committed).

--budget stops cleanly after the batch that crosses the time limit and says what is left.
--rebuild indexes PATH, or the spools, into a fresh memory. The old memory waits at
$FUNES_HOME/memory.old-<time> meanwhile and is deleted once the new one holds every turn it held;
otherwise (transcripts gone, a run cut short) it is kept and a note says how many turns only it
holds. --rebuild --model NAME changes the memory's embedding model: every chunk of the old memory
is copied (searchable by keyword at once) and re-embedded with NAME by the background worker (or
here, with --wait). The model is stamped in the memory; a later --model (or FUNES_MODEL) that names
another one is refused. `funes models` lists the models; a catalogue model needs its weights on
this machine (`funes models pull`). A rebuild rewrites every stored turn, so it first shows what the
memory holds (turns, rows, sessions, agents, dates, three redacted samples) and asks at a terminal;
off a terminal it needs --yes, and --dry-run shows the preview and changes nothing.

Exit status: 0 done; 1 a file was rejected, the run could not start, or (--wait) embedding
stopped on an error; 75 another funes index holds the store lock (retry later); 130 interrupted
(what was committed is kept).
To rebuild from an agent's whole history, re-run `funes integrations install <agent>`.

With --check nothing is written: each file is validated whole and chunked, and a report says
what indexing would store.
"""

#: How long an interactive ``funes index`` waits for another writer before giving up.
INTERACTIVE_LOCK_WAIT = 15.0
#: ... and ``--wait``, asked to wait anyway (the background worker may be committing a batch).
WAIT_LOCK_WAIT = 600.0


def _check(path: Path) -> int:
    def show(item: CheckedFile | TurnsFormatError) -> None:
        if isinstance(item, TurnsFormatError):
            typer.echo(str(item))
            return
        typer.echo(f"ok {item.path}: {item.turns} turns, {item.chunks} chunks")
        for note in item.warnings:
            typer.echo(f"warning: {note}", err=True)

    from funes_core.home import Home, HomeError
    from funes_core.ingest.notes import notes_file
    from funes_core.ingest.sources import default_redactor

    try:
        notes: Path | None = notes_file(Home.resolve())
    except HomeError:
        notes = None
    report = CheckReport.run(path, redactor=default_redactor(), on_file=show, notes=notes)
    redactions = report.redactions
    red = f"{sum(redactions.values())} redactions"
    if redactions:
        red += f" ({format_counts(redactions)})"
    typer.echo(
        f"checked {len(report.ok) + len(report.rejected)} files: {len(report.ok)} ok, "
        f"{len(report.rejected)} rejected; {report.turns} turns, {report.chunks} chunks, "
        f"{report.duplicate_ids} duplicate ids, {red}"
    )
    return 1 if report.rejected else 0


class RichProgress:
    """A transient progress display on stderr: files × tiers stored, with turns per second and the time
    left (a first index of a whole history takes minutes: the user sees it move), then embeddings per
    second."""

    def __init__(self, console: Console | None = None, clock: Callable[[], float] | None = None) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.console = console or Console(stderr=True)
        self._progress = Progress(
            TextColumn("{task.description:<10}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[info]}"),
            TimeElapsedColumn(),
            TextColumn("eta"),
            TimeRemainingColumn(),
            console=self.console,
            transient=True,
            get_time=clock,
        )
        self._write_task: Any = None
        self._embed_task: Any = None
        self._turns = 0
        self._chunks = 0
        self._embedded = 0
        self._started = False

    def _start(self) -> None:
        if not self._started:
            self._progress.start()
            self._started = True

    def writing(self, total_steps: int) -> None:
        if total_steps == 0:
            return
        self._start()
        self._write_task = self._progress.add_task("storing", total=total_steps, info="")

    def wrote(self, *, steps: int, turns: int, chunks: int) -> None:
        if self._write_task is None:
            return
        self._turns += turns
        self._chunks += chunks
        elapsed = next(t.elapsed for t in self._progress.tasks if t.id == self._write_task)
        rate = f" ({self._turns / elapsed:,.0f} turns/s)" if elapsed else ""
        self._progress.update(
            self._write_task,
            advance=steps,
            info=f"file×tier · {self._turns:,} turns{rate}, {self._chunks:,} chunks",
        )

    def embedding(self, total: int) -> None:
        self._start()
        self._embed_task = self._progress.add_task("embedding", total=total, info="")

    def waiting(self, *, completed: int, total: int, info: str) -> None:
        """``index --wait``: show the worker's own count, whoever does the embedding."""
        if self._embed_task is None:
            self.embedding(total)
        self._progress.update(self._embed_task, completed=completed, total=total, info=info)

    def embedded(self, n: int) -> None:
        if self._embed_task is None:
            return
        self._embedded += n
        task = self._progress.tasks[-1]
        rate = f"{self._embedded / task.elapsed:.1f}/s" if task.elapsed else ""
        self._progress.update(self._embed_task, advance=n, info=rate)

    def warn(self, message: str) -> None:
        if self._started:
            self._progress.console.print(message, markup=False, highlight=False)
        else:
            print(message, file=sys.stderr)

    def close(self) -> None:
        if self._started:
            self._progress.stop()
            self._started = False


def _run(
    path: Path | None,
    *,
    harness: str | None,
    limit: int | None,
    budget: float | None,
    no_thinking: bool,
    rebuild: bool,
    wait: bool = False,
    model: str | None = None,
) -> IndexReport:
    from funes_core.home import stderr_is_interactive
    from funes_core.ingest.engine import IndexOptions, run_index

    interactive = stderr_is_interactive()
    progress = RichProgress() if sys.stderr.isatty() else None

    def warn(message: str) -> None:
        if progress is not None:
            progress.warn(message)
        else:
            print(message, file=sys.stderr)

    options = IndexOptions(
        path=path,
        harness=harness,
        limit=limit,
        budget=budget,
        include_thinking=not no_thinking,
        rebuild=rebuild,
        model=model,
        embed="none" if wait else "background",
    )
    try:
        return run_index(
            options,
            progress=progress,
            warn=warn,
            lock_wait=WAIT_LOCK_WAIT if wait else INTERACTIVE_LOCK_WAIT if interactive else 0.0,
            lock_notify=sys.stderr if interactive else None,
        )
    finally:
        if progress is not None:
            progress.close()


def _rebuild_brakes(*, yes: bool, dry_run: bool) -> bool:
    """``--rebuild`` rewrites every stored turn: show what the memory holds, then ask or need --yes.

    True when the rebuild may go on. An empty or missing memory has nothing to lose."""
    from funes_core.home import Home, HomeError
    from funes_core.share.brakes import preview_rows
    from funes_core.store import NoIndexError, open_store

    try:
        store = open_store(None, home=Home.resolve())
    except (NoIndexError, HomeError):
        return not dry_run
    rows = store.scan()
    if not rows:
        return not dry_run
    turns = len({(r.session_id, r.turn_uuid) for r in rows})
    preview = preview_rows(rows, total_turns=turns, total_rows=len(rows))
    from funes_core.faces.cli.share import Brakes, go_ahead

    lines = [
        *preview.lines("rebuild would rewrite"),
        "  the old memory waits at $FUNES_HOME/memory.old-<time> and is deleted once the new one holds "
        "every turn it held (kept otherwise)",
    ]
    return go_ahead(
        lines, f"rebuild the memory of {turns} turn(s)?", Brakes(yes=yes, dry_run=dry_run), "rebuilt"
    )


def _refresh_registered(pm: FunesPluginManager, harness: str | None, rebuild: bool) -> None:
    """Convert what changed under the folders registered with ``install ID --path`` (no watcher:
    every ``funes index`` looks, and an unchanged file costs one ``stat``)."""
    from funes_core.wiring.integrations.common import UI, Orchestrator
    from funes_core.wiring.integrations.seed import refresh_registered

    def err(line: str) -> None:
        typer.echo(line, err=True)

    ui = UI(out=err, err=err, is_terminal=lambda: False, confirm=lambda question: False)
    refresh_registered(Orchestrator(pm=pm, ui=ui), harness=harness, full=rebuild)


def wait_with_bar(owed: int) -> Progress:
    """``--wait`` (and ``push``): block until nothing is owed, drawing the progress at a terminal.

    A person is waiting, so a background worker still at it (nice 19, yielding to everything) is
    stopped and the rest is embedded here, at normal priority."""
    from funes_core.home import Home
    from funes_core.ingest.worker import estimate_seconds, wait_for_embeddings

    bar = RichProgress() if sys.stderr.isatty() else None
    total = owed

    def show(progress: Progress) -> None:
        nonlocal total
        if bar is None:
            return
        total = max(total, progress.done + progress.owed)
        rate = f"{progress.rate:.1f}/s, about {_minutes(estimate_seconds(progress.owed, progress.rate))} left"
        bar.waiting(completed=total - progress.owed, total=total, info=rate if progress.owed else "")

    try:
        return wait_for_embeddings(Home.resolve(), on_progress=show, take_over=True)
    finally:
        if bar is not None:
            bar.close()


def _minutes(seconds: float) -> str:
    return f"{max(1, round(seconds / 60))} min"


def _worker(lock_fd: int | None, commit_rows: int | None) -> int:
    """``funes index --worker``: the detached background worker's body (started by ``funes index``)."""
    from funes_core.home import Home
    from funes_core.ingest.worker import COMMIT_ROWS, Outcome, WorkerOptions, run_worker

    options = WorkerOptions(commit_rows=commit_rows or COMMIT_ROWS)
    outcome = run_worker(Home.resolve(), lock_fd=lock_fd, options=options)
    return 0 if outcome is Outcome.BUSY else int(outcome)


def register(app: typer.Typer, pm: FunesPluginManager | None = None) -> None:
    @app.command("index", help=INDEX_HELP)
    def index(
        path: Annotated[Path | None, typer.Argument(help="A .funes.jsonl file or a folder of them.")] = None,
        check: Annotated[
            bool, typer.Option("--check", help="Validate and count only; write nothing.")
        ] = False,
        harness: Annotated[
            str | None, typer.Option("--harness", help="Drain only this integration's spool (no PATH).")
        ] = None,
        limit: Annotated[
            int | None, typer.Option("--limit", min=0, help="Index at most N files, newest first.")
        ] = None,
        budget: Annotated[
            float | None,
            typer.Option("--budget", min=0, help="Stop cleanly after about this many seconds."),
        ] = None,
        no_thinking: Annotated[
            bool, typer.Option("--no-thinking", help="Skip the agents' thinking blocks.")
        ] = False,
        rebuild: Annotated[
            bool, typer.Option("--rebuild", help="Move the memory aside and build a fresh one.")
        ] = False,
        model: Annotated[
            str | None,
            typer.Option(
                "--model",
                help="Embedding model (see `funes models`); with --rebuild, re-embed the memory with it.",
            ),
        ] = None,
        wait: Annotated[
            bool,
            typer.Option("--wait", help="Then wait until every embedding is done (with a progress bar)."),
        ] = False,
        yes: Annotated[
            bool, typer.Option("--yes", "-y", help="With --rebuild: go ahead without asking.")
        ] = False,
        dry_run: Annotated[
            bool,
            typer.Option("--dry-run", help="With --rebuild: show what would be rebuilt; change nothing."),
        ] = False,
        worker: Annotated[bool, typer.Option("--worker", hidden=True)] = False,
        lock_fd: Annotated[int | None, typer.Option("--lock-fd", hidden=True)] = None,
        commit_rows: Annotated[int | None, typer.Option("--commit-rows", min=1, hidden=True)] = None,
    ) -> None:
        if worker:
            raise typer.Exit(_worker(lock_fd, commit_rows))
        if check:
            if path is None:
                raise typer.BadParameter("--check needs a PATH to validate", param_hint="PATH")
            if not path.exists():
                typer.echo(f"funes: no such file or folder: {path}", err=True)
                raise typer.Exit(1)
            raise typer.Exit(_check(path))

        from funes_core import telemetry
        from funes_core.home import HomeError, LockBusyError
        from funes_core.ingest.engine import IndexRunError
        from funes_core.models.embed import ModelFileError
        from funes_core.models.vectors import ModelMismatchError

        if rebuild and not _rebuild_brakes(yes=yes, dry_run=dry_run):
            return
        if path is None and pm is not None:
            _refresh_registered(pm, harness, rebuild)
        try:
            with telemetry.measure("index", face="cli", unrecorded=(LockBusyError, KeyboardInterrupt)):
                report = _run(
                    path,
                    harness=harness,
                    limit=limit,
                    budget=budget,
                    no_thinking=no_thinking,
                    rebuild=rebuild,
                    model=model,
                    wait=wait,
                )
                telemetry.add(
                    files=report.files,
                    turns=report.turns,
                    chunks=report.chunks,
                    embedded=report.embedded,
                    rejected=len(report.rejected),
                )
        except LockBusyError as exc:
            typer.echo(f"funes: {exc}", err=True)
            raise typer.Exit(EXIT_LOCKED) from None
        except (IndexRunError, ModelMismatchError, ModelFileError, HomeError) as exc:
            typer.echo(f"funes: {exc}", err=True)
            raise typer.Exit(1) from None
        except KeyboardInterrupt:
            typer.echo(
                "funes: interrupted — everything committed so far is kept; run `funes index` again to finish",
                err=True,
            )
            raise typer.Exit(130) from None
        stopped: str | None = None
        if wait and report.owed:
            try:
                waited = wait_with_bar(report.owed)
            except KeyboardInterrupt:
                typer.echo(report.summary(), err=True)
                typer.echo(
                    "funes: stopped waiting — every embedding committed so far is kept; a background "
                    "worker, if one was running, carries on (`funes status`); `funes index` resumes the rest",
                    err=True,
                )
                raise typer.Exit(130) from None
            report.owed, report.owed_counted = waited.owed, True
            stopped = waited.error if waited.state == "stopped" else None
        typer.echo(report.summary())
        if stopped:
            typer.echo(f"funes: embedding stopped: {stopped}", err=True)
        raise typer.Exit(1 if report.rejected or stopped else 0)
