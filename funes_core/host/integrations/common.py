"""``funes integrations``: install, remove, list, inspect, check and run integrations.

The orchestration lives here, away from the CLI, so tests drive it with a fake terminal and a
fake subprocess runner. What each step does:

* **install** resolves the id (a plugin already installed, else the catalog's distribution, or
  ``--from PATH|WHEEL`` / ``--dist NAME``), asks before trusting anything the catalog does not
  vouch for, installs it with the standard installer into the running environment, then runs the
  tool registrar, the hook installer and the converter (seeding the spool, newest first) and
  builds the first index by running ``funes index --harness ID`` in a subprocess. Running it
  twice changes nothing the second time.
* **remove** undoes the wiring; it never deletes the memory, the spool or the agent's own
  transcripts.
* **check** runs the funes-contracts suite against the installed plugin in a fresh pytest
  process and prints one line per requirement.

Plugin code is called at one boundary (:meth:`Integrations._call`), which turns an
:class:`~funes_core.host.api.IntegrationError` into its one-line message and any other
exception into a message naming the plugin's distribution.
"""

from __future__ import annotations

import email.parser
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

from funes_core.host.api import (
    ID_PATTERN,
    SPOOL_SUFFIX,
    InstallContext,
    IntegrationError,
    Outcome,
    Status,
    WiringState,
    spawn_detached,
)
from funes_core.host.catalog import Catalog, CatalogEntry, load_catalog
from funes_core.host.manager import FunesPluginManager, Integration

__all__ = [
    "CHECK_MODULE",
    "UI",
    "InstallError",
    "Integrations",
    "RunResult",
    "Runner",
    "Source",
    "describe_path",
    "installer_argv",
    "run_subprocess",
]

T = TypeVar("T")


class InstallError(Exception):
    """A failure shown to the user as one line (``funes: <message>``), exit status 1."""


@dataclass(frozen=True, slots=True)
class RunResult:
    returncode: int
    #: Combined stdout and stderr when captured; empty when streamed to the terminal.
    output: str = ""

    def last_line(self) -> str:
        lines = [line for line in self.output.strip().splitlines() if line.strip()]
        return lines[-1].strip() if lines else ""


class Runner(Protocol):
    """Runs a subprocess (the package installer, ``funes index``, pytest); tests replace it."""

    def __call__(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
        stream: bool = False,
    ) -> RunResult: ...


def run_subprocess(
    argv: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    stream: bool = False,
) -> RunResult:
    """Run ``argv``; with ``stream`` its output goes straight to our terminal (progress bars)."""
    try:
        if stream:
            done = subprocess.run(list(argv), env=dict(env) if env else None, cwd=cwd, check=False)
            return RunResult(done.returncode)
        captured = subprocess.run(
            list(argv),
            env=dict(env) if env else None,
            cwd=cwd,
            check=False,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
        )
    except OSError as exc:
        return RunResult(127, f"cannot run {argv[0]}: {exc.strerror or exc}")
    return RunResult(captured.returncode, captured.stdout or "")


@dataclass(slots=True)
class UI:
    """How orchestration talks to the user; the CLI wires it to the terminal, tests to lists."""

    out: Callable[[str], None]
    err: Callable[[str], None]
    #: Whether a person can answer a prompt (stdin and stderr are terminals).
    is_terminal: Callable[[], bool]
    #: Ask a yes/no question; only called when :attr:`is_terminal` says so.
    confirm: Callable[[str], bool]
    #: Whether to draw progress bars (stderr is a terminal).
    progress: bool = False


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
    """The standard installer for the running environment: uv when present, else pip."""
    uv = shutil.which("uv")
    if uv:
        return [uv, "pip", "install", "--python", sys.executable, spec]
    return [sys.executable, "-m", "pip", "install", spec]


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
            project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise InstallError(f"--from {pyproject}: cannot read it ({exc})") from None
        authors = [a.get("name") or a.get("email") or "" for a in project.get("authors", [])]
        return Source(
            kind="path",
            spec=str(path),
            dist=str(project.get("name", path.name)),
            version=str(project.get("version", "(dynamic version)")),
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


def _state_label(status: Status) -> str:
    return f"{status.state.value} ({status.detail})" if status.detail else status.state.value


CHECK_MODULE = '''\
"""Generated by `funes integrations check {ident}`: the contract suite against the installed plugin."""

from funes_contracts.check import contract_classes

globals().update(contract_classes({ident!r}))
'''


@dataclass(slots=True)
class _Row:
    id: str
    label: str
    installed: str
    catalog: str
    agent_found: bool | None
    hooks: str
    mcp: str
    status: str

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "label": self.label,
            "installed": self.installed or None,
            "catalog": self.catalog or None,
            "agent_found": self.agent_found,
            "hooks": self.hooks or None,
            "mcp": self.mcp or None,
            "status": self.status,
        }


@dataclass(slots=True)
class Integrations:
    """The ``funes integrations`` verbs over one plugin manager."""

    pm: FunesPluginManager
    ui: UI
    runner: Runner = run_subprocess
    catalog: Catalog = field(default_factory=load_catalog)
    environ: Mapping[str, str] | None = None

    # -- helpers ----------------------------------------------------------------------------

    def context(self, memory: str | None = None) -> InstallContext:
        return InstallContext.from_environment(memory=memory, environ=self.environ)

    def _env(self, ctx: InstallContext) -> dict[str, str]:
        env = dict(os.environ if self.environ is None else self.environ)
        env["HOME"] = str(ctx.home)
        env["FUNES_HOME"] = str(ctx.funes_home)
        return env

    def _require(self, ident: str) -> Integration:
        if not ID_PATTERN.fullmatch(ident):
            raise InstallError(f"{ident!r} is not an integration id (ids match [a-z0-9_-]+)")
        integ = self.pm.integration(ident)
        if integ is not None:
            return integ
        installed = ", ".join(sorted(self.pm.integrations())) or "none"
        hint = ""
        if self.catalog.get(ident) is not None:
            hint = f"; install it with `funes integrations install {ident}`"
        raise InstallError(f"no installed plugin provides {ident!r} (installed: {installed}){hint}")

    def _call(self, integ: Integration, role: str, action: Callable[[], T]) -> T:
        """Run plugin code; turn its failures into one line that names who to tell."""
        try:
            return action()
        except IntegrationError as exc:
            raise InstallError(f"{integ.id}: {exc}") from None
        except Exception as exc:  # broad on purpose: the isolation boundary around plugin code
            raise InstallError(
                f"{integ.id}: the {role} of {integ.origin} failed: {type(exc).__name__}: {exc} "
                "(report this to the plugin author)"
            ) from None

    @staticmethod
    def record_path(ctx: InstallContext, ident: str) -> Path:
        """``$FUNES_HOME/integrations/<id>.json``: what was installed, from where, bound to what."""
        return ctx.funes_home / "integrations" / f"{ident}.json"

    def read_record(self, ctx: InstallContext, ident: str) -> dict[str, Any] | None:
        path = self.record_path(ctx, ident)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            self.ui.err(f"funes: ignoring unreadable install record {path}: {exc}")
            return None
        return data if isinstance(data, dict) else None

    def _write_record(self, ctx: InstallContext, ident: str, data: dict[str, Any]) -> bool:
        from funes_core.files import atomic_write_text
        from funes_core.home import ensure_private_dir

        path = self.record_path(ctx, ident)
        text = json.dumps(data, indent=2, sort_keys=True) + "\n"
        try:
            if path.read_text(encoding="utf-8") == text:
                return False
        except OSError:
            pass
        ensure_private_dir(path.parent)
        atomic_write_text(path, text)
        return True

    # -- install ----------------------------------------------------------------------------

    def _source(self, ident: str, from_path: Path | None, dist: str | None) -> Source:
        if from_path is not None:
            return describe_path(from_path)
        if dist is not None:
            entry = self.catalog.by_dist(dist)
            if entry is not None and entry.id == ident:
                return self._catalog_source(entry)
            return Source(
                "index", dist, dist, "(latest)", "an unknown publisher", "the package index", vouched=False
            )
        entry = self.catalog.get(ident)
        if entry is None:
            known = ", ".join(sorted(set(self.catalog.entries) | set(self.pm.integrations())))
            raise InstallError(
                f"unknown integration {ident!r}: no installed plugin provides it and the catalog does not "
                f"list it (known: {known}); use --from PATH or --dist NAME for another source"
            )
        return self._catalog_source(entry)

    @staticmethod
    def _catalog_source(entry: CatalogEntry) -> Source:
        from funes_core.host.api import CONTRACT_VERSION

        if entry.contract_version != CONTRACT_VERSION:
            raise InstallError(
                f"the catalog's {entry.dist} speaks contract version {entry.contract_version}, this funes "
                f"speaks contract version {CONTRACT_VERSION}; update funes"
            )
        origin = "the funes catalog" + ("" if entry.vouched else " (community listing)")
        return Source(
            "catalog", entry.install_spec, entry.dist, "(latest)", entry.author, origin, vouched=entry.vouched
        )

    def _trust(self, src: Source, yes: bool) -> None:
        """Never run a distribution the catalog does not vouch for without a person's yes."""
        if src.vouched:
            return
        who = f"{src.dist} {src.version} by {src.publisher}"
        if yes:
            self.ui.err(f"funes: trusting {who} from {src.origin} (--yes)")
            return
        if not self.ui.is_terminal():
            raise InstallError(
                f"refusing to install {who} from {src.origin}: the funes catalog does not vouch for it "
                "and there is no terminal to confirm it; run this in a terminal to confirm it, or pass "
                "--yes to trust it"
            )
        self.ui.err(f"{who}")
        self.ui.err(f"  origin: {src.origin}")
        self.ui.err("  The funes catalog does not vouch for it. Installing it runs its code on this machine,")
        self.ui.err("  now and every time funes starts.")
        if not self.ui.confirm("Trust it? [y/N]"):
            raise InstallError(f"not installed: {who} was not trusted")

    def install(
        self,
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
    ) -> int:
        """Install (if needed) and wire integration ``ident``; returns the exit status."""
        if not ID_PATTERN.fullmatch(ident):
            raise InstallError(f"{ident!r} is not an integration id (ids match [a-z0-9_-]+)")
        integ = self.pm.integration(ident)
        if not installed_only and (integ is None or from_path is not None or dist is not None):
            src = self._source(ident, from_path, dist)
            self._trust(src, yes)
            self.ui.err(f"funes: installing {src.spec} ({src.origin})")
            done = self.runner(installer_argv(src.spec), env=None, stream=self.ui.progress)
            if done.returncode != 0:
                tail = done.last_line()
                raise InstallError(
                    f"installing {src.spec} failed (exit {done.returncode})" + (f": {tail}" if tail else "")
                )
            # Hand over to a fresh funes: it imports the plugin as installed, old copy or not.
            argv = [sys.executable, "-m", "funes_core", "integrations", "install", ident]
            argv += [memory] if memory is not None else []
            argv += ["--installed-only", "--origin", f"{src.kind}: {src.origin}"]
            argv += [] if seed else ["--no-seed"]
            argv += [] if index else ["--no-index"]
            return self.runner(argv, env=None, stream=True).returncode
        if integ is None:
            integ = self._require(ident)
        return self._wire(integ, memory, seed=seed, index=index, origin=origin)

    def _wire(
        self, integ: Integration, memory_arg: str | None, *, seed: bool, index: bool, origin: str | None
    ) -> int:
        ident = integ.id
        record = self.read_record(self.context(), ident) or {}
        if memory_arg is None:
            memory = record.get("memory") if isinstance(record.get("memory"), str) else None
        else:
            memory = None if memory_arg == "local" else memory_arg
        ctx = self.context(memory)
        changed = False
        say = self.ui.out
        if integ.tool_registrar is not None:
            registrar = integ.tool_registrar
            outcome: Outcome = self._call(integ, "tool registrar", lambda: registrar().register(ctx))
            say(f"{ident}: {outcome.summary}")
            changed |= outcome.changed
        if integ.hook_installer is not None:
            installer = integ.hook_installer
            outcome = self._call(integ, "hook installer", lambda: installer().install(ctx))
            say(f"{ident}: {outcome.summary}")
            changed |= outcome.changed
        raw = record.get("seeded")
        seeded: dict[str, str] = {}
        if isinstance(raw, dict):
            seeded = {str(k): str(v) for k, v in raw.items()}
        if integ.converter is not None and seed:
            # No memory (yet, or deleted to rebuild it): convert everything again.
            previous = seeded if (ctx.funes_home / "memory").exists() else {}
            wrote, seeded = self._seed(integ, ctx, previous)
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
        }
        changed |= self._write_record(ctx, ident, new_record)
        status = 0
        if integ.converter is not None and index:
            status = self._first_index(integ, ctx)
        elif integ.converter is not None:
            say(f"{ident}: skipped the first index (--no-index); run `funes index --harness {ident}` later")
        if status == 0:
            say(f"{ident}: {'installed' if changed else 'already installed; nothing changed'}")
        return status

    def _seed(
        self, integ: Integration, ctx: InstallContext, previous: Mapping[str, str]
    ) -> tuple[bool, dict[str, str]]:
        """Convert the agent's existing sessions into the spool, newest first.

        ``previous`` maps each transcript seeded by an earlier install to its size and mtime; an
        unchanged one is skipped, so a re-run converts (and then indexes) nothing new. Returns
        whether anything was written, and the map to record for the next run.
        """
        converter_cls = integ.converter
        assert converter_cls is not None
        converter = converter_cls()
        ident = integ.id
        refs = self._call(integ, "converter", lambda: converter.discover(ctx.home))
        if not refs:
            self.ui.out(f"no {ident} sessions to index yet")
            return False, {}
        seeded: dict[str, str] = {}
        written = unchanged = failed = 0
        progress = _Progress(self.ui, f"converting {ident} sessions", len(refs))
        with progress:
            for ref in refs:
                key = f"{ref.path}::{ref.session_id}"
                try:
                    info = ref.path.stat()
                    signature = f"{info.st_size}:{info.st_mtime_ns}"
                    if previous.get(key) == signature:
                        unchanged += 1
                    else:
                        writes = converter.write_spool(ref, ctx.funes_home)
                        fresh = sum(1 for w in writes if w.changed)
                        written += fresh
                        unchanged += 0 if fresh else 1
                    seeded[key] = signature
                except Exception as exc:  # broad on purpose: one bad transcript must not stop the seed
                    failed += 1
                    self.ui.err(f"funes: {ident}: skipped {ref.path}: {type(exc).__name__}: {exc}")
                progress.advance()
        spool = ctx.spool_dir(ident)
        if written:
            counts = f"{written} written, {unchanged} unchanged"
            self.ui.out(f"{ident}: converted {len(refs)} sessions into {spool} ({counts})")
        else:
            self.ui.out(f"{ident}: spool up to date ({len(refs)} sessions already converted)")
        if failed:
            self.ui.err(f"funes: {ident}: {failed} sessions could not be converted (see above)")
        return bool(written), seeded

    def _first_index(self, integ: Integration, ctx: InstallContext) -> int:
        """Run ``funes index --harness ID`` in a subprocess; a failure leaves the wiring in place."""
        ident = integ.id
        spool = ctx.spool_dir(ident)
        pending = sorted(spool.glob(f"*{SPOOL_SUFFIX}")) if spool.is_dir() else []
        if not pending:
            return 0
        argv = [sys.executable, "-m", "funes_core", "index", "--harness", ident]
        self.ui.err(f"funes: building the first index of {ident} ({len(pending)} sessions)")
        done = self.runner(argv, env=self._env(ctx), stream=self.ui.progress)
        if done.output.strip():
            for line in done.output.rstrip().splitlines():
                (self.ui.out if done.returncode == 0 else self.ui.err)(line)
        if done.returncode != 0:
            tail = done.last_line()
            self.ui.err(
                f"funes: {ident} is wired, but the first index failed (exit {done.returncode})"
                + (f": {tail}" if tail else "")
                + f"; run `funes index --harness {ident}` to retry"
            )
            return 1
        return 0

    # -- remove -----------------------------------------------------------------------------

    def remove(self, ident: str) -> int:
        integ = self._require(ident)
        record = self.read_record(self.context(), ident) or {}
        memory = record.get("memory") if isinstance(record.get("memory"), str) else None
        ctx = self.context(memory)
        changed = False
        if integ.tool_registrar is not None:
            registrar = integ.tool_registrar
            outcome = self._call(integ, "tool registrar", lambda: registrar().unregister(ctx))
            self.ui.out(f"{ident}: {outcome.summary}")
            changed |= outcome.changed
        if integ.hook_installer is not None:
            installer = integ.hook_installer
            outcome = self._call(integ, "hook installer", lambda: installer().uninstall(ctx))
            self.ui.out(f"{ident}: {outcome.summary}")
            changed |= outcome.changed
        path = self.record_path(ctx, ident)
        if path.exists():
            path.unlink()
            changed = True
        self.ui.out(
            f"{ident}: {'removed' if changed else 'nothing to remove'}; the memory, the spool and the "
            f"agent's transcripts are kept"
        )
        if integ.dist:
            self.ui.out(
                f"{ident}: the {integ.dist} package stays installed (uninstall it with your installer)"
            )
        return 0

    # -- list / info ------------------------------------------------------------------------

    def _status(self, integ: Integration, ctx: InstallContext) -> tuple[bool | None, str, str, str]:
        def safe(role: str, fn: Callable[[], Status]) -> Status:
            try:
                return self._call(integ, role, fn)
            except InstallError as exc:
                return Status(WiringState.BROKEN, str(exc))

        found: bool | None = None
        if integ.converter is not None:
            converter = integ.converter
            try:
                found = self._call(integ, "converter", lambda: converter().agent_found(ctx.home))
            except InstallError:
                found = None
        hooks = mcp = None
        if integ.hook_installer is not None:
            installer = integ.hook_installer
            hooks = safe("hook installer", lambda: installer().status(ctx))
        if integ.tool_registrar is not None:
            registrar = integ.tool_registrar
            mcp = safe("tool registrar", lambda: registrar().status(ctx))
        states = {s.state for s in (hooks, mcp) if s is not None}
        if not states:
            overall = "nothing to wire"
        elif states == {WiringState.WIRED}:
            overall = "wired"
        elif states == {WiringState.NOT_WIRED}:
            overall = "not wired"
        elif WiringState.BROKEN in states:
            overall = "broken"
        elif WiringState.OUTDATED in states:
            overall = "outdated (install again to refresh)"
        else:
            overall = "partly wired"
        return (
            found,
            _state_label(hooks) if hooks else "",
            _state_label(mcp) if mcp else "",
            overall,
        )

    def rows(self) -> list[_Row]:
        record_ctx = self.context()
        rows: list[_Row] = []
        installed = self.pm.integrations()
        for ident, integ in sorted(installed.items()):
            record = self.read_record(record_ctx, ident) or {}
            memory = record.get("memory") if isinstance(record.get("memory"), str) else None
            found, hooks, mcp, overall = self._status(integ, self.context(memory))
            entry = self.catalog.get(ident)
            rows.append(
                _Row(
                    id=ident,
                    label=integ.label,
                    installed=integ.origin,
                    catalog=f"{entry.dist} ({entry.tier})" if entry else "",
                    agent_found=found,
                    hooks=hooks,
                    mcp=mcp,
                    status=overall,
                )
            )
        for ident, entry in sorted(self.catalog.entries.items()):
            if ident in installed:
                continue
            rows.append(
                _Row(
                    id=ident,
                    label=entry.label,
                    installed="",
                    catalog=f"{entry.dist} ({entry.tier})",
                    agent_found=None,
                    hooks="",
                    mcp="",
                    status="not installed",
                )
            )
        return rows

    def show_list(self, *, as_json: bool = False) -> int:
        rows = self.rows()
        if as_json:
            self.ui.out(json.dumps([r.to_json() for r in rows], indent=2))
            return 0
        header = ("ID", "AGENT", "PLUGIN", "AGENT FOUND", "STATUS")
        table = [
            (
                r.id,
                r.label,
                r.installed or f"- (catalog: {r.catalog})",
                "-" if r.agent_found is None else ("yes" if r.agent_found else "no"),
                r.status,
            )
            for r in rows
        ]
        widths = [max(len(str(row[i])) for row in [header, *table]) for i in range(len(header))]
        for row in [header, *table]:
            self.ui.out(
                "  ".join(str(cell).ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
            )
        if any(r.status == "not installed" for r in rows):
            self.ui.out("install one with: funes integrations install ID")
        return 0

    def info(self, ident: str, *, as_json: bool = False) -> int:
        entry = self.catalog.get(ident)
        integ = self.pm.integration(ident)
        if integ is None and entry is None:
            self._require(ident)
        data: dict[str, Any] = {"id": ident}
        if entry is not None:
            data["catalog"] = {
                "dist": entry.dist,
                "tier": entry.tier,
                "author": entry.author,
                "summary": entry.summary,
                "link": entry.link,
                "roles": list(entry.roles),
                "contract_version": entry.contract_version,
            }
        if integ is not None:
            record = self.read_record(self.context(), ident)
            memory = record.get("memory") if record and isinstance(record.get("memory"), str) else None
            ctx = self.context(memory)
            found, hooks, mcp, overall = self._status(integ, ctx)
            parts = {
                role: f"{cls.__module__}.{cls.__qualname__}" for role, cls in integ.parts().items() if cls
            }
            caps = next((cls.capabilities for cls in integ.parts().values() if cls), None)
            spool = ctx.spool_dir(ident)
            data["installed"] = {
                "label": integ.label,
                "plugin": integ.plugin,
                "dist": integ.dist,
                "version": integ.version,
                "parts": parts,
                "capabilities": {
                    "discover": caps.discover,
                    "memory_binding": caps.memory_binding,
                }
                if caps
                else {},
                "agent_found": found,
                "hooks": hooks or None,
                "mcp": mcp or None,
                "status": overall,
                "spool": str(spool),
                "spool_pending": len(list(spool.glob(f"*{SPOOL_SUFFIX}"))) if spool.is_dir() else 0,
                "record": record,
            }
        if as_json:
            self.ui.out(json.dumps(data, indent=2))
            return 0
        self.ui.out(f"id: {ident}")
        if integ is not None:
            inst = data["installed"]
            self.ui.out(f"agent: {integ.label}")
            self.ui.out(f"plugin: {integ.plugin} from {integ.origin}")
            for role, where in inst["parts"].items():
                self.ui.out(f"{role}: {where}")
            self.ui.out(f"agent found on this machine: {_yes_no(inst['agent_found'])}")
            self.ui.out(f"status: {inst['status']}")
            if inst["hooks"]:
                self.ui.out(f"hooks: {inst['hooks']}")
            if inst["mcp"]:
                self.ui.out(f"mcp: {inst['mcp']}")
            self.ui.out(f"spool: {inst['spool']} ({inst['spool_pending']} files waiting)")
            if inst["record"]:
                rec = inst["record"]
                self.ui.out(f"installed from: {rec.get('origin')}")
                self.ui.out(f"memory: {rec.get('memory') or 'local'}")
        else:
            self.ui.out("plugin: not installed")
        if entry is not None:
            self.ui.out(f"catalog: {entry.dist} ({entry.tier}) by {entry.author}: {entry.summary}")
            if entry.link:
                self.ui.out(f"source: {entry.link}")
            if integ is None:
                self.ui.out(f"install it with: funes integrations install {ident}")
        return 0

    # -- convert ----------------------------------------------------------------------------

    def convert(self, ident: str, source: Path, out_dir: Path, *, index: bool = False) -> int:
        """Convert one transcript (or a folder of them) into turns files in ``out_dir``."""
        integ = self._require(ident)
        if integ.converter is None:
            raise InstallError(f"{ident}: {integ.origin} provides no converter")
        if not source.exists():
            raise InstallError(f"no such file or folder: {source}")
        converter = integ.converter()
        refs = self._call(integ, "converter", lambda: converter.sessions_in(source))
        if not refs:
            raise InstallError(f"no {ident} sessions in {source}")
        ctx = self.context()
        out_dir = out_dir.expanduser().absolute()
        private = ctx.funes_home if out_dir.is_relative_to(ctx.funes_home) else None
        failed = 0
        files = turns = 0
        for ref in refs:
            try:
                written = converter.convert_into(ref, out_dir, private_root=private)
            except Exception as exc:  # broad on purpose: one bad transcript must not stop the rest
                failed += 1
                self.ui.err(f"funes: {ident}: skipped {ref.path}: {type(exc).__name__}: {exc}")
                continue
            for w in written:
                files += 1
                turns += w.turns
                self.ui.out(str(w.path))
        self.ui.err(f"funes: {ident}: {files} turns files ({turns} turns) in {out_dir}")
        if index and files:
            self._spawn_index(ident, ctx, out_dir)
        return 1 if failed else 0

    def _spawn_index(self, ident: str, ctx: InstallContext, out_dir: Path) -> None:
        """Start ``funes index`` detached, as a per-turn hook needs: return at once, log to a file."""
        from funes_core.home import ensure_private_dir

        if out_dir == ctx.spool_dir(ident):
            argv = [sys.executable, "-m", "funes_core", "index", "--harness", ident]
        else:
            argv = [sys.executable, "-m", "funes_core", "index", str(out_dir)]
        logs = ctx.funes_home / "logs"
        ensure_private_dir(logs)
        spawn_detached(argv, env=self._env(ctx), log=logs / f"index-{ident}.log")

    # -- check ------------------------------------------------------------------------------

    def check(self, ident: str, *, as_json: bool = False) -> int:
        """Run the contract suite on the installed plugin and print a conformance report."""
        integ = self._require(ident)
        if importlib.util.find_spec("funes_contracts") is None:
            raise InstallError(
                "`funes integrations check` needs funes-contracts: install it with your installer"
            )
        with tempfile.TemporaryDirectory(prefix="funes-check-") as tmp:
            root = Path(tmp)
            module = root / f"test_funes_check_{ident.replace('-', '_')}.py"
            module.write_text(CHECK_MODULE.format(ident=ident), encoding="utf-8")
            ini = root / "pytest.ini"
            ini.write_text("[pytest]\n", encoding="utf-8")
            report = root / "report.json"
            argv = [
                sys.executable,
                "-m",
                "pytest",
                "-p",
                "funes_contracts.plugin",
                "-p",
                "no:cacheprovider",
                "-q",
                "--no-header",
                "-rN",
                "--rootdir",
                str(root),
                "-c",
                str(ini),
                f"--funes-report={report}",
                str(module),
            ]
            env = dict(os.environ if self.environ is None else self.environ)
            env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
            env.pop("PYTEST_ADDOPTS", None)
            done = self.runner(argv, env=env, cwd=root, stream=False)
            if not report.is_file():
                for line in done.output.rstrip().splitlines()[-20:]:
                    self.ui.err(line)
                raise InstallError(f"{ident}: the contract suite did not run (pytest exit {done.returncode})")
            data = json.loads(report.read_text(encoding="utf-8"))
        return self._print_report(integ, data, as_json=as_json)

    def _print_report(self, integ: Integration, data: dict[str, Any], *, as_json: bool) -> int:
        by_req: dict[str, list[dict[str, Any]]] = {}
        for result in data.get("results", []):
            by_req.setdefault(result.get("requirement") or "(no requirement)", []).append(result)
        lines: list[dict[str, str]] = []
        for rid in sorted(by_req):
            outcomes = [r["outcome"] for r in by_req[rid]]
            bad = [r for r in by_req[rid] if r["outcome"] in ("failed", "error")]
            if bad:
                verdict, reason = "fail", f"{bad[0]['test']}: {bad[0].get('reason', '')}"
            elif all(o in ("skipped",) for o in outcomes):
                verdict, reason = "skip", by_req[rid][0].get("reason", "")
            elif any(o == "xfailed" for o in outcomes):
                verdict = "warn"
                reason = next(r.get("reason", "") for r in by_req[rid] if r["outcome"] == "xfailed")
            else:
                verdict, reason = "pass", ""
            lines.append({"requirement": rid, "verdict": verdict, "reason": reason})
        failed = sum(1 for line in lines if line["verdict"] == "fail")
        if as_json:
            self.ui.out(json.dumps({"id": integ.id, "origin": integ.origin, "requirements": lines}, indent=2))
            return 1 if failed else 0
        width = max((len(line["requirement"]) for line in lines), default=10)
        self.ui.out(f"{integ.id} ({integ.origin}): contract {data.get('contract_version')} conformance")
        for line in lines:
            reason = f"  {line['reason']}" if line["reason"] else ""
            self.ui.out(f"{line['verdict'].upper():4}  {line['requirement'].ljust(width)}{reason}".rstrip())
        counts = {
            v: sum(1 for line in lines if line["verdict"] == v) for v in ("pass", "fail", "skip", "warn")
        }
        self.ui.out(
            f"{counts['pass']} passed, {counts['fail']} failed, {counts['skip']} skipped, "
            f"{counts['warn']} provisional warnings"
        )
        return 1 if failed else 0


def _yes_no(value: bool | None) -> str:
    return "unknown" if value is None else ("yes" if value else "no")


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
