"""``funes integrations install``: resolve, trust, install the distribution, then wire the agent.

The id resolves to a plugin already installed, else the catalog's distribution, or ``--from
PATH|WHEEL`` / ``--dist NAME``; anything the catalog does not vouch for needs a person's yes. The
distribution is installed with the standard installer into the running environment, then a fresh
``funes`` runs the tool registrar, the hook installer and the converter (seeding the spool, newest
first) and builds the first index with ``funes index --harness ID``, which stores the text
(searchable by keyword at once) and leaves the embeddings to the background worker, so install
returns in seconds and says when full hybrid recall will be ready. Running it twice changes
nothing the second time; Ctrl-C keeps what is stored and says how to finish.
"""

from __future__ import annotations

import email.parser
import math
import os
import re
import shutil
import sys
import tomllib
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from funes_core.host.api import (
    ID_PATTERN,
    SPOOL_SUFFIX,
    InstallContext,
)
from funes_core.host.catalog import CatalogEntry
from funes_core.host.manager import Integration
from funes_core.wiring import overrides
from funes_core.wiring.integrations import toolenv
from funes_core.wiring.integrations.atomic import steps_for, wire
from funes_core.wiring.integrations.common import UI, InstallError, Orchestrator
from funes_core.wiring.integrations.imports import hook_modules, import_failure
from funes_core.wiring.integrations.resolve import (
    Planned,
    find_installer,
    plan,
    refuse_wrong_names,
    show_plan,
)
from funes_core.wiring.integrations.seed import (
    check_path,
    convert_changed,
    recorded_map,
    recorded_paths,
    registered_refs,
)


@dataclass(frozen=True, slots=True)
class Source:
    """Where an integration's distribution would come from, and whether the catalog vouches for it."""

    kind: str  # "catalog", "path" or "index"
    spec: str  # what to hand the installer
    dist: str
    version: str
    publisher: str
    origin: str
    vouched: bool


def installer_argv(spec: str) -> list[str]:
    """The standard installer's command for ``spec`` (uv before pip, :func:`find_installer`)."""
    return find_installer().install([spec])


def _publisher(names: Sequence[str]) -> str:
    cleaned = [n.strip() for n in names if n and n.strip()]
    return ", ".join(cleaned) if cleaned else "an unknown publisher"


def describe_path(path: Path) -> Source:
    """Name, version and publisher of a local wheel, sdist or project folder (for the trust prompt)."""
    path = path.expanduser().absolute()
    if not path.exists():
        raise InstallError(f"--from {path}: no such file or folder")
    if path.is_dir():
        pyproject = path / "pyproject.toml"
        if not pyproject.is_file():
            raise InstallError(f"--from {path}: not a Python project (no pyproject.toml)")
        try:
            data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise InstallError(f"--from {pyproject}: cannot read it ({exc})") from None
        project = data.get("project", {})
        authors = [a.get("name") or a.get("email") or "" for a in project.get("authors", [])]
        return Source(
            kind="path",
            spec=str(path),
            dist=str(project.get("name", path.name)),
            version=str(project.get("version") or _hatch_version(path, data) or "(dynamic version)"),
            publisher=_publisher(authors),
            origin=f"{path} (a local folder)",
            vouched=False,
        )
    if path.suffix == ".whl":
        parts = path.name.split("-")
        dist, version, publisher = parts[0], parts[1] if len(parts) > 1 else "?", "an unknown publisher"
        try:
            with zipfile.ZipFile(path) as wheel:
                meta = next((n for n in wheel.namelist() if n.endswith(".dist-info/METADATA")), None)
                if meta is not None:
                    headers = email.parser.Parser().parsestr(wheel.read(meta).decode("utf-8", "replace"))
                    dist = headers.get("Name", dist)
                    version = headers.get("Version", version)
                    publisher = _publisher([headers.get("Author", ""), headers.get("Author-email", "")])
        except (OSError, zipfile.BadZipFile) as exc:
            raise InstallError(f"--from {path}: not a readable wheel ({exc})") from None
        return Source("path", str(path), dist, version, publisher, f"{path} (a local wheel)", False)
    name = path.name.removesuffix(".tar.gz").removesuffix(".zip")
    dist, _, version = name.rpartition("-")
    return Source(
        "path",
        str(path),
        dist or name,
        version or "?",
        "an unknown publisher",
        f"{path} (a local archive)",
        False,
    )


def _hatch_version(folder: Path, pyproject: Mapping[str, Any]) -> str | None:
    """The version hatch would build from ``[tool.hatch.version] path`` (its ``__version__ = "…"``)."""
    where = pyproject.get("tool", {}).get("hatch", {}).get("version", {}).get("path")
    if not isinstance(where, str):
        return None
    try:
        text = (folder / where).read_text(encoding="utf-8")
    except OSError:
        return None
    found = re.search(r"""^__version__\s*=\s*["']([^"']+)["']""", text, re.M)
    return found.group(1) if found else None


def _source(orch: Orchestrator, ident: str, from_path: Path | None, dist: str | None) -> Source:
    if from_path is not None:
        return describe_path(from_path)
    if dist is not None:
        entry = orch.catalog.by_dist(dist)
        if entry is not None and entry.id == ident:
            return _catalog_source(entry)
        return Source(
            "index", dist, dist, "(latest)", "an unknown publisher", "the package index", vouched=False
        )
    entry = orch.catalog.get(ident)
    if entry is None:
        known = ", ".join(sorted(set(orch.catalog.entries) | set(orch.pm.integrations())))
        raise InstallError(
            f"unknown integration {ident!r}: no installed plugin provides it and the catalog does not "
            f"list it (known: {known}); use --from PATH or --dist NAME for another source"
        )
    return _catalog_source(entry)


def _catalog_source(entry: CatalogEntry) -> Source:
    from funes_core.host.api import CONTRACT_VERSION, SUPPORTED_CONTRACTS

    if entry.contract_version not in SUPPORTED_CONTRACTS:
        raise InstallError(
            f"the catalog's {entry.dist} speaks contract version {entry.contract_version}, this funes "
            f"speaks contract version {CONTRACT_VERSION}; update funes"
        )
    origin = "the funes catalog" + ("" if entry.vouched else " (community listing)")
    return Source(
        "catalog", entry.install_spec, entry.dist, "(latest)", entry.author, origin, vouched=entry.vouched
    )


def _trust(orch: Orchestrator, src: Source, planned: Sequence[Planned], yes: bool) -> None:
    """Never install without a person's yes to the whole list (or ``--yes``), vouched for or not."""
    who = f"{src.dist} {src.version} by {src.publisher}"
    strangers = [p for p in planned if not p.trusted]
    if yes:
        orch.ui.err(f"funes: trusting {who} from {src.origin} (--yes)")
        return
    if not orch.ui.is_terminal():
        why = (
            "the funes catalog does not vouch for it"
            if not src.vouched
            else f"{len(planned)} distributions would be installed"
        )
        raise InstallError(
            f"refusing to install {who} from {src.origin}: {why} and there is no terminal to "
            "confirm it; run this in a terminal to confirm it, or pass --yes to trust it"
        )
    orch.ui.err(f"{who}")
    orch.ui.err(f"  origin: {src.origin}")
    if not src.vouched:
        orch.ui.err("  The funes catalog does not vouch for it. Installing it runs its code on this machine,")
        orch.ui.err("  now and every time funes starts.")
    if strangers:
        names = ", ".join(p.name for p in strangers)
        orch.ui.err(f"  Not vouched for: {names}; installing runs their code (an sdist's at install time).")
    question = "Trust it? [y/N]" if not src.vouched or strangers else "Install them? [y/N]"
    if not orch.ui.confirm(question):
        raise InstallError(f"not installed: {who} was not trusted")


def install(
    orch: Orchestrator,
    ident: str,
    memory: str | None = None,
    *,
    from_path: Path | None = None,
    dist: str | None = None,
    yes: bool = False,
    seed: bool = True,
    index: bool = True,
    installed_only: bool = False,
    origin: str | None = None,
    paths: Sequence[Path] = (),
    takeover: bool = False,
) -> int:
    """Install (if needed) and wire integration ``ident``; returns the exit status.

    ``paths`` (``--path``) registers folders or files for the converter to read besides what it
    discovers in the HOME; they are checked before anything is installed. ``takeover`` lets a
    distribution other than the one that stored the id's sessions go ahead even though it would
    store them again under other ids (:func:`renamed_sessions`).
    """
    if not ID_PATTERN.fullmatch(ident):
        raise InstallError(f"{ident!r} is not an integration id (ids match [a-z0-9_-]+)")
    checked = [check_path(p) for p in paths]
    integ = orch.pm.integration(ident)
    if not installed_only and (integ is None or from_path is not None or dist is not None):
        src = _source(orch, ident, from_path, dist)
        installer = find_installer()
        planned = plan(installer, [src.spec], orch.runner, orch.catalog, orch.environ)
        refuse_wrong_names(planned, f"{src.dist} from {src.origin}")
        show_plan(planned, installer, orch.ui.err)
        _trust(orch, src, planned, yes)
        orch.ui.err(f"funes: installing {src.spec} ({src.origin}) with {installer.name} ({installer.found})")
        done = orch.runner(installer.install([src.spec]), env=None, stream=orch.ui.progress)
        if done.returncode != 0:
            tail = done.last_line()
            raise InstallError(
                f"installing {src.spec} failed (exit {done.returncode})" + (f": {tail}" if tail else "")
            )
        # In a `uv tool` environment, what is not in the receipt is gone after `uv tool upgrade`.
        uv = installer.argv[0] if installer.name == "uv" else shutil.which("uv")
        kept, _ = toolenv.record(orch.runner, uv, src.dist, src.spec, orch.environ or os.environ)
        if kept:
            orch.ui.err(f"funes: {kept}")
        # Hand over to a fresh funes: it imports the plugin as installed, old copy or not.
        argv = [sys.executable, "-m", "funes_core", "integrations", "install", ident]
        argv += [memory] if memory is not None else []
        argv += ["--installed-only", "--origin", f"{src.kind}: {src.origin}"]
        argv += [] if seed else ["--no-seed"]
        argv += [] if index else ["--no-index"]
        for path in checked:
            argv += ["--path", str(path)]
        argv += ["--takeover"] if takeover else []
        status = orch.runner(argv, env=None, stream=True).returncode
        if src.kind == "path" and Path(src.spec).is_dir():
            orch.ui.err(
                f"funes: {ident}: installed a copy of {src.spec}; after you edit it, run "
                f"`funes integrations install {ident} --from {src.spec} --yes` again "
                "(`check` and every funes command use the installed copy)"
            )
        return status
    if integ is None:
        integ = orch.require(ident)
    try:
        return _wire(
            orch, integ, memory, seed=seed, index=index, origin=origin, paths=checked, takeover=takeover
        )
    except KeyboardInterrupt:
        orch.ui.err(
            f"funes: interrupted — what is stored so far is kept and searchable by keyword; run "
            f"`funes integrations install {ident}` again to finish (it skips what is already done)"
        )
        return 130


def _wire(
    orch: Orchestrator,
    integ: Integration,
    memory_arg: str | None,
    *,
    seed: bool,
    index: bool,
    origin: str | None,
    paths: Sequence[Path] = (),
    takeover: bool = False,
) -> int:
    ident = integ.id
    record = orch.read_record(orch.context(), ident) or {}
    if not takeover:
        _refuse_renaming(integ, record)
    registered = _register_paths(orch, integ, recorded_paths(record), paths)
    if memory_arg is None:
        memory = record.get("memory") if isinstance(record.get("memory"), str) else None
    else:
        memory = None if memory_arg == "local" else memory_arg
    ctx = orch.context(memory)
    changed = False
    say = orch.ui.out
    agent = next((cls.agent for cls in integ.parts().values() if cls and cls.agent), None)
    gone = overrides.missing(agent, ctx.home, ctx.extra_env) if agent is not None else []
    if gone:
        raise InstallError(f"{ident}: {'; '.join(gone)}; nothing was changed")
    modules = hook_modules(orch.pm, integ) if integ.hook_installer is not None else []
    failure = import_failure(modules)
    if failure:
        raise InstallError(
            f"{ident}: its hook would fail, {sys.executable} cannot import {failure}; nothing was "
            f"changed (reinstall {integ.dist or 'the plugin'} into this environment, then install again)"
        )
    # All or nothing: every file the parts touch is checked before any is changed.
    for outcome in wire(orch, integ, ctx, steps_for(integ, install=True)):
        say(f"{ident}: {outcome.summary}")
        changed |= outcome.changed
    seeded = recorded_map(record, "seeded")
    refused = recorded_map(record, "refused")
    if integ.converter is not None and seed:
        # No memory (yet, or deleted to rebuild it): convert everything again.
        fresh = not (ctx.funes_home / "memory").exists()
        wrote, seeded, refused = _seed(
            orch, integ, ctx, {} if fresh else seeded, {} if fresh else refused, registered
        )
        changed |= wrote
    previous_origin = record.get("origin")
    same_release = record.get("dist") == integ.dist and record.get("version") == integ.version
    new_record = {
        "id": ident,
        "label": integ.label,
        "dist": integ.dist,
        "version": integ.version,
        "origin": origin or (previous_origin if same_release and previous_origin else "environment"),
        "memory": memory,
        "funes_command": list(ctx.funes_command),
        "seeded": seeded,
        "overrides": overrides.recorded(agent, ctx.home, ctx.env()) if agent is not None else {},
    }
    if modules:
        new_record["modules"] = modules  # what `check --all` re-imports, even once the plugin is gone
    if registered:
        new_record["paths"] = [str(p) for p in registered]
    if refused:
        new_record["refused"] = refused
    changed |= orch.write_record(ctx, ident, new_record)
    converter_cls = integ.converter
    kept = _retention(integ, ctx)
    if kept:
        say(f"{ident}: {kept}; funes keeps its own copy of every session it stores")
    if converter_cls is not None and not converter_cls.capabilities.discover and not registered:
        say(
            f"{ident}: note: nothing is read yet: {ident} finds no sessions by itself; register where "
            f"they are with `funes integrations install {ident} --path DIR`"
        )
    status = 0
    if integ.converter is not None and index:
        status = _first_index(orch, integ, ctx)
    elif integ.converter is not None:
        say(f"{ident}: skipped the first index (--no-index); run `funes index --harness {ident}` later")
    if status == 0:
        say(f"{ident}: {'installed' if changed else 'already installed; nothing changed'}")
    return status


def _register_paths(
    orch: Orchestrator, integ: Integration, before: Sequence[Path], added: Sequence[Path]
) -> list[Path]:
    """The registered paths after this install: the earlier ones, then the new ones (once each).

    An integration that discovers nothing by itself needs at least one. Two registered paths may
    not share a name: an integration may name sessions after the folder they come from (notes
    does: ``notes/daily/2026-03-01.md``), and two ``notes`` folders would share session ids.
    """
    if added and integ.converter is None:
        raise InstallError(f"{integ.id} converts no files, so --path means nothing to it")
    paths = list(before)
    for path in added:
        if path in paths:
            continue
        clash = next((p for p in paths if p.name == path.name), None)
        if clash is not None:
            raise InstallError(
                f"--path {path}: {integ.id} already reads {clash}, which has the same name; "
                "register their common parent folder instead, or rename one"
            )
        paths.append(path)
    return paths


def _retention(integ: Integration, ctx: InstallContext) -> str | None:
    """The converter's one line on how long the agent keeps transcripts; a failure is not install's."""
    converter_cls = integ.converter
    if converter_cls is None:
        return None
    try:
        said = converter_cls().retention(ctx.home)
    except Exception:  # broad on purpose: a plugin's bug here must not fail an install
        return None
    return " ".join(said.split()) if isinstance(said, str) and said.strip() else None


def renamed_sessions(
    integ: Integration, record: Mapping[str, Any]
) -> tuple[int, int, tuple[str, str] | None]:
    """How the installed converter names the sessions another distribution stored for this id.

    The install record keeps ``path::session_id`` for every source it seeded. Each source that
    still exists is asked for its sessions again: a recorded id the converter no longer gives,
    where it gives another, is a session the append-only memory would hold twice. Returns (renamed,
    recorded, one example ``(old, new)``); ``(0, 0, None)`` when the same distribution stored them.
    """
    before = record.get("dist")
    converter_cls = integ.converter
    if converter_cls is None or not isinstance(before, str) or not integ.dist or before == integ.dist:
        return 0, 0, None
    by_path: dict[str, set[str]] = {}
    for key in recorded_map(record, "seeded"):
        source, _, session = key.rpartition("::")
        by_path.setdefault(source, set()).add(session)
    converter = converter_cls()
    renamed, example = 0, None
    for source, old in sorted(by_path.items()):
        path = Path(source)
        if not path.exists():
            continue
        try:
            new = {ref.session_id for ref in converter.sessions_in(path)}
        except Exception:  # broad on purpose: a source it cannot read is not a renaming
            continue
        gone, added = sorted(old - new), sorted(new - old)
        if gone and added:
            renamed += len(gone)
            example = example or (gone[0], added[0])
    return renamed, sum(len(ids) for ids in by_path.values()), example


def _refuse_renaming(integ: Integration, record: Mapping[str, Any]) -> None:
    """Stop before anything changes when a new distribution would store the id's sessions twice."""
    renamed, total, example = renamed_sessions(integ, record)
    if not renamed or example is None:
        return
    ident = integ.id
    then = f"{record.get('dist')} {record.get('version', '')}".strip()
    raise InstallError(
        f"{ident}: {integ.dist} {integ.version} names {renamed} of the {total} sessions {then} stored "
        f"differently (e.g. {example[0]} is now {example[1]}); the memory is append-only, so each "
        f"would be stored twice. Nothing was changed. To go ahead anyway: `funes integrations install "
        f"{ident} --takeover`; to keep the stored ids, reinstall {record.get('dist')}"
    )


def takeover_warning(integ: Integration, record: Mapping[str, Any]) -> str | None:
    """One line when another distribution has taken over the id and names its stored sessions differently.

    :func:`install` refuses such a takeover, but a plugin can also be swapped behind funes' back
    (``pip uninstall`` one, ``pip install`` the other): the next per-turn hook would then store
    each of those sessions a second time. The line says which distribution stored them, and the
    two ways out: reinstall that one to keep the stored ids, or go ahead with ``--takeover``.
    ``None`` when the same distribution stored them, or the new one names them alike.
    """
    before = record.get("dist")
    if not isinstance(before, str) or not integ.dist or before == integ.dist:
        return None  # the cheap check first: this runs on every turn's conversion
    renamed, total, example = renamed_sessions(integ, record)
    if not renamed or example is None:
        return None
    ident = integ.id
    then = f"{before} {record.get('version', '')}".strip()
    return (
        f"{ident}: {integ.dist} {integ.version} has taken over this integration from {then}, which "
        f"stored its sessions, and names {renamed} of the {total} differently (e.g. {example[0]} is "
        f"now {example[1]}); the memory is append-only, so each would be stored twice. To keep the "
        f"stored ids, reinstall {before} (and uninstall {integ.dist}); to go ahead, run "
        f"`funes integrations install {ident} --takeover`"
    )


def _seed(
    orch: Orchestrator,
    integ: Integration,
    ctx: InstallContext,
    previous: Mapping[str, str],
    refused_before: Mapping[str, str],
    paths: Sequence[Path],
) -> tuple[bool, dict[str, str], dict[str, str]]:
    """Convert the agent's existing sessions (and those under ``paths``) into the spool, newest first.

    ``previous`` maps each source seeded by an earlier install to its size and mtime; an
    unchanged one is skipped, so a re-run converts (and then indexes) nothing new
    (:mod:`funes_core.wiring.integrations.seed`). Returns whether anything was written, and the
    maps to record for the next run.
    """
    converter_cls = integ.converter
    assert converter_cls is not None
    converter = converter_cls()
    ident = integ.id
    if not converter_cls.capabilities.discover and not paths:
        return False, {}, {}  # said once, after the wiring (see _wire)
    refs = []
    if converter_cls.capabilities.discover:
        refs = orch.call(integ, "converter", lambda: converter.discover(ctx.home))
    found, missing = registered_refs(orch, integ, converter, paths)
    for gone in missing:
        orch.ui.err(f"funes: {ident}: registered path {gone} is gone; skipped")
    refs = [*refs, *sorted(found, key=lambda r: (-r.last_activity, str(r.path), r.session_id))]
    if not refs:
        orch.ui.out(f"no {ident} sessions to index yet")
        return False, {}, {}
    progress = _Progress(orch.ui, f"converting {ident} sessions", len(refs))
    with progress:
        result = convert_changed(
            orch, integ, ctx, converter, refs, previous, refused_before, advance=progress.advance
        )
    spool = ctx.spool_dir(ident)
    if result.written:
        counts = f"{result.written} written, {result.unchanged} unchanged"
        orch.ui.out(f"{ident}: converted {len(refs)} sessions into {spool} ({counts})")
    else:
        orch.ui.out(f"{ident}: spool up to date ({len(refs)} sessions already converted)")
    for reason in result.new_refusals:
        orch.ui.err(f"funes: {ident}: refused {reason}")
    if result.failed:
        orch.ui.err(f"funes: {ident}: {result.failed} sessions could not be converted (see above)")
    return bool(result.written), result.seeded, result.refused


def _first_index(orch: Orchestrator, integ: Integration, ctx: InstallContext) -> int:
    """Run ``funes index --harness ID`` in a subprocess; a failure leaves the wiring in place."""
    ident = integ.id
    spool = ctx.spool_dir(ident)
    pending = sorted(spool.glob(f"*{SPOOL_SUFFIX}")) if spool.is_dir() else []
    if not pending:
        return 0
    argv = [sys.executable, "-m", "funes_core", "index", "--harness", ident]
    orch.ui.err(f"funes: building the first index of {ident} ({len(pending)} sessions)")
    done = orch.runner(argv, env=orch.env(ctx), stream=orch.ui.progress)
    if done.output.strip():
        for line in done.output.rstrip().splitlines():
            (orch.ui.out if done.returncode == 0 else orch.ui.err)(line)
    if done.returncode != 0:
        tail = done.last_line()
        orch.ui.err(
            f"funes: {ident} is wired, but the first index failed (exit {done.returncode})"
            + (f": {tail}" if tail else "")
            + f"; run `funes index --harness {ident}` to retry"
        )
        return 1
    note = _what_happens_next(ctx)
    if note:
        orch.ui.out(f"{ident}: {note}")
    return 0


def _what_happens_next(ctx: InstallContext) -> str | None:
    """After the first index: searchable by keyword now, and when the embeddings will be done."""
    from funes_core.home import Home
    from funes_core.ingest.worker import Progress, estimate_seconds, progress_path, worker_alive

    home = Home(ctx.funes_home)
    progress = Progress.load(progress_path(home))
    if progress is None:
        return None
    if worker_alive(home) and progress.state in ("starting", "running") and progress.owed:
        minutes = max(1, math.ceil(estimate_seconds(progress.owed, progress.rate) / 60))
        unit = "minute" if minutes == 1 else "minutes"
        return (
            f"searchable now by keyword, full hybrid recall in about {minutes} {unit} "
            f"({progress.owed} passages are being embedded in the background; `funes status` shows "
            "progress, `funes index --wait` waits for it)"
        )
    if progress.state == "stopped" and progress.error:
        return f"searchable now by keyword; embedding stopped: {progress.error}"
    if progress.state == "done":
        return "searchable now, by keyword and by meaning (every passage is embedded)"
    return None


class _Progress:
    """A progress bar on stderr when it is a terminal; silent otherwise (logs stay clean)."""

    def __init__(self, ui: UI, label: str, total: int) -> None:
        self._enabled = ui.progress and total > 1
        self._label = label
        self._total = total
        self._bar: Any = None
        self._task: Any = None

    def __enter__(self) -> _Progress:
        if self._enabled:
            from rich.console import Console
            from rich.progress import Progress

            self._bar = Progress(console=Console(stderr=True), transient=True)
            self._bar.__enter__()
            self._task = self._bar.add_task(self._label, total=self._total)
        return self

    def advance(self) -> None:
        if self._bar is not None:
            self._bar.advance(self._task)

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.__exit__(None, None, None)
