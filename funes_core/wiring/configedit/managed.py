"""Managed entries: the one implementation of install, remove and status over agents' config files.

A hook installer or tool registrar built on :class:`ManagedWiring` only *declares* what it owns::

    class EchoHookInstaller(ManagedWiring, HookInstaller, agent=ECHO):
        def entries(self, ctx):
            return [
                ManagedEntry(
                    path=self.where("config", ctx),
                    adapter=JsonFormat(),
                    place=Place(("hooks",), "funes"),
                    value={"on": "turn_end", "run": ctx.convert_command("echo", "{transcript}")},
                    ours=runs_module("funes_core"),   # how to recognise funes' entry later
                    what="the funes hook",
                )
            ]

and gets ``install``/``uninstall`` (or ``register``/``unregister``), ``status`` and
``config_paths`` with every rule of the contract built in:

* **idempotent**: an entry already as wanted is left alone (``changed=False``, no byte written);
* **outdated detection**: an entry that is funes' (``ours``) but not the wanted value is replaced;
  ``status`` says ``OUTDATED``;
* **never somebody else's**: a member at the place that ``ours`` rejects is refused with a
  :class:`~funes_core.ConfigError` (or left alone and counted as satisfied, for an entry declared
  ``yield_to_user``, like a setting the user chose themselves);
* **exact removal**: only funes' values go, and only containers and files funes created (recorded
  in the :class:`~funes_core.wiring.configedit.base.Ledger`), so the user's bytes come back;
* **all or nothing**: every new text is computed first, every file to be touched is checked
  (readable, parseable, writable, no dangling link) and only then is anything written; if a
  write still fails, the files already written are put back.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any

from funes_core.files import missing_dirs
from funes_core.host.api import (
    ConfigError,
    InstallContext,
    IntegrationError,
    Outcome,
    Status,
    WiringState,
)
from funes_core.wiring.configedit.base import (
    Adapter,
    ConfigFile,
    EditError,
    KeyPath,
    Ledger,
    Place,
    shown_path,
)

__all__ = ["ManagedEntry", "ManagedWiring", "runs_module"]


def runs_module(module: str, *, key: str = "command") -> Callable[[Any], bool]:
    """An ``ours`` test: a mapping whose ``key`` is a shell command running ``python -m <module>``.

    Agents that validate their config's schema leave no room for a marker key, so the hook
    command itself is the marker (what funes-claude and funes-codex do).
    """

    def ours(value: Any) -> bool:
        command = value.get(key) if isinstance(value, dict) else None
        if not isinstance(command, str) or module not in command:
            return False
        try:
            words = shlex.split(command)
        except ValueError:
            return False
        return any(a == "-m" and b == module for a, b in pairwise(words))

    return ours


@dataclass(frozen=True, slots=True)
class ManagedEntry:
    """One value funes owns at one place of one config file."""

    path: Path
    adapter: Adapter
    place: Place
    value: Any
    #: Whether a value found at the place is funes' (a marker key, the command it runs, ...).
    ours: Callable[[Any], bool]
    #: How the entry is named to the user ("the funes hooks", "the funes MCP server").
    what: str
    #: A member the user set themselves is theirs to keep: leave it and count the entry as done.
    yield_to_user: bool = False
    #: Compares a found value with :attr:`value` (default ``==``); say how to ignore volatile keys.
    same: Callable[[Any, Any], bool] = field(default=lambda found, wanted: bool(found == wanted))
    #: The comment marking funes' text in formats that have comments (default: ``funes-<id>``).
    comment: str | None = None


@dataclass(slots=True)
class _FilePlan:
    doc: ConfigFile
    before: str | None
    after: str | None  # None: delete the file
    created: list[KeyPath] = field(default_factory=list)
    pruned: list[KeyPath] = field(default_factory=list)
    whats: list[str] = field(default_factory=list)
    #: Folders writing a new file created (deepest first), so removal can take them away again.
    made_dirs: list[Path] = field(default_factory=list)


class ManagedWiring:
    """Mixin for a :class:`~funes_core.HookInstaller` or :class:`~funes_core.ToolRegistrar` of entries.

    Subclasses implement :meth:`entries`; the mixin implements the role's abstract methods. Put it
    *first* among the bases: ``class X(ManagedWiring, HookInstaller, agent=AGENT)``.
    """

    id: str

    def entries(self, ctx: InstallContext) -> list[ManagedEntry]:
        """What funes owns in the agent's config for this context (the wanted values)."""
        raise NotImplementedError

    @property
    def note(self) -> str:
        """How funes' entries are signed where a format allows a comment (``funes-<id>``)."""
        return f"funes-{self.id}"

    # -- the role's methods -----------------------------------------------------------------

    def config_paths(self, ctx: InstallContext) -> list[Path]:
        return list(dict.fromkeys(e.path for e in self.entries(ctx)))

    def install(self, ctx: InstallContext) -> Outcome:
        return self.put(ctx)

    def uninstall(self, ctx: InstallContext) -> Outcome:
        return self.drop(ctx)

    def register(self, ctx: InstallContext) -> Outcome:
        return self.put(ctx)

    def unregister(self, ctx: InstallContext) -> Outcome:
        return self.drop(ctx)

    def status(self, ctx: InstallContext) -> Status:
        try:
            states = [self._state(entry) for entry in self.entries(ctx)]
        except ConfigError as exc:
            return Status(WiringState.BROKEN, str(exc))
        files = ", ".join(dict.fromkeys(shown_path(e.path, ctx.home) for e in self.entries(ctx)))
        if all(s is WiringState.WIRED for s, _ in states):
            return Status(WiringState.WIRED, files)
        if all(s is WiringState.NOT_WIRED for s, _ in states):
            foreign = next((d for _, d in states if d.endswith("is not funes'")), "")
            return Status(WiringState.NOT_WIRED, f"{files}: {foreign}" if foreign else files)
        stale = [d for s, d in states if s is not WiringState.WIRED]
        return Status(WiringState.OUTDATED, f"{files}: {'; '.join(stale)}")

    def recorded_command(self, ctx: InstallContext) -> list[str] | None:
        """The argv of the first entry funes wrote that holds ``command`` (+ ``args``), read back.

        What a tool registrar's ``registered_command`` usually is: the MCP server's command as the
        agent will run it.
        """
        for entry in self.entries(ctx):
            doc = ConfigFile(entry.path, entry.adapter)
            found, _ = self._found(doc, doc.read(), entry)
            for value in found:
                command = value.get("command") if isinstance(value, dict) else None
                args = value.get("args", []) if isinstance(value, dict) else None
                if isinstance(command, str) and isinstance(args, list):
                    return [command, *(str(a) for a in args)]
        return None

    def registered_command(self, ctx: InstallContext) -> list[str] | None:
        """A tool registrar's ``registered_command``: :meth:`recorded_command`.

        Override it when the agent keeps the command in another shape (a list under one key).
        """
        return self.recorded_command(ctx)

    # -- what a subclass may refine -----------------------------------------------------------

    def present(self, entry: ManagedEntry, values: list[Any]) -> list[Any]:
        """funes' values among those at the entry's place (default: the ones ``ours`` accepts).

        Override when funes' part may sit *inside* a value the user shares (Claude Code lets a
        user add their own hook to funes' group): return what of funes' is there, shaped like
        :attr:`ManagedEntry.value`, and clean it up in :meth:`tidy`.
        """
        return [v for v in values if entry.ours(v)]

    def tidy(self, entry: ManagedEntry, text: str) -> str:
        """``text`` without funes' parts that ``ours`` cannot take out whole (default: unchanged)."""
        return text

    # -- reading ----------------------------------------------------------------------------

    def _note(self, entry: ManagedEntry) -> str:
        return entry.comment or self.note

    def _read(self, doc: ConfigFile) -> str | None:
        return doc.read()

    def _found(self, doc: ConfigFile, text: str | None, entry: ManagedEntry) -> tuple[list[Any], bool]:
        """funes' values at the entry's place, and whether someone else's member sits there."""
        if text is None:
            return [], False
        try:
            note = self._note(entry)
            values = entry.adapter.find(text, entry.place, note=note)
            found = self.present(entry, values)
            foreign = not found and entry.adapter.occupied(text, entry.place, note=note)
        except EditError as exc:
            raise ConfigError(doc.path, str(exc)) from None
        return found, foreign

    def _state(self, entry: ManagedEntry) -> tuple[WiringState, str]:
        doc = ConfigFile(entry.path, entry.adapter)
        found, foreign = self._found(doc, doc.read(), entry)
        where = entry.place.shown()
        if foreign:
            if entry.yield_to_user:
                return WiringState.WIRED, ""
            return WiringState.NOT_WIRED, f"{where} is there but is not funes'"
        if not found:
            return WiringState.NOT_WIRED, f"{where} is missing"
        if len(found) == 1 and entry.same(found[0], entry.value):
            return WiringState.WIRED, ""
        return WiringState.OUTDATED, f"{where} records another funes command or setting"

    # -- planning ---------------------------------------------------------------------------

    def _plan(self, ctx: InstallContext, ledger: Ledger, *, put: bool) -> list[_FilePlan]:
        plans: list[_FilePlan] = []
        by_file: dict[Path, list[ManagedEntry]] = {}
        for entry in self.entries(ctx):
            by_file.setdefault(entry.path, []).append(entry)
        for path, entries in by_file.items():
            doc = ConfigFile(path, entries[0].adapter)
            before = doc.read()
            plan = _FilePlan(doc, before, before)
            try:
                for entry in entries:
                    self._plan_entry(plan, entry, put=put)
                if not put and plan.after is not None and plan.after != before:
                    self._plan_prune(plan, ledger)
            except EditError as exc:
                raise ConfigError(path, str(exc)) from None
            if plan.after != before:
                plans.append(plan)
        return plans

    def _plan_entry(self, plan: _FilePlan, entry: ManagedEntry, *, put: bool) -> None:
        text = plan.after
        found, foreign = self._found(plan.doc, text, entry)
        if not put:
            if found and text is not None:
                text = self.tidy(entry, text)
                plan.after = entry.adapter.drop(text, entry.place, entry.ours, note=self._note(entry))
                plan.whats.append(entry.what)
            return
        if foreign:
            if entry.yield_to_user:
                return
            raise ConfigError(
                entry.path,
                f"{entry.place.shown()} is there but {self.note} did not write it; "
                "rename or remove it first, then install again",
            )
        if len(found) == 1 and entry.same(found[0], entry.value):
            return
        if found and text is not None:
            text = self.tidy(entry, text)
            text = entry.adapter.drop(text, entry.place, entry.ours, note=self._note(entry))
        added = entry.adapter.add(text, entry.place, entry.value, note=self._note(entry))
        plan.after = added.text
        plan.created.extend(added.created)
        plan.whats.append(entry.what)

    def _plan_prune(self, plan: _FilePlan, ledger: Ledger) -> None:
        """Prune the containers funes created and left empty; delete a file funes created, if empty."""
        assert plan.after is not None
        adapter = plan.doc.adapter
        for container in sorted(ledger.created(plan.doc.path), key=len, reverse=True):
            pruned = adapter.prune(plan.after, container)
            if pruned != plan.after or not _has(adapter.parse(pruned), container):
                plan.after = pruned  # gone now (or already taken out with funes' marked lines)
                plan.pruned.append(container)
        if ledger.created_file(plan.doc.path) and adapter.empty(plan.after):
            plan.after = None

    # -- applying ---------------------------------------------------------------------------

    def _apply(self, ctx: InstallContext, *, put: bool) -> tuple[list[_FilePlan], Ledger]:
        ledger = Ledger.load(ctx.funes_home, self.id)
        plans = self._plan(ctx, ledger, put=put)
        for plan in plans:  # all or nothing: refuse before the first byte is written
            plan.doc.check_writable()
        done: list[_FilePlan] = []
        try:
            for plan in plans:
                if plan.after is None:
                    plan.doc.delete()
                    _remove_empty_dirs(ledger.created_dirs(plan.doc.path))
                else:
                    plan.made_dirs = missing_dirs(plan.doc.path.parent) if plan.before is None else []
                    plan.doc.write(plan.after)
                done.append(plan)
        except (ConfigError, OSError) as exc:
            for plan in reversed(done):
                _restore(plan)
            if isinstance(exc, ConfigError):
                raise
            raise IntegrationError(f"{plan.doc.path}: cannot be written ({exc})") from None
        for plan in plans:
            if plan.after is None:
                ledger.forget(plan.doc.path, whole=True)
            elif put:
                ledger.note(
                    plan.doc.path, new_file=plan.before is None, created=plan.created, dirs=plan.made_dirs
                )
            else:
                ledger.forget(plan.doc.path, plan.pruned)
        remembered = self._remember(ctx, ledger, put=put)
        if plans or remembered:
            ledger.save()
        return plans, ledger

    def _remember(self, ctx: InstallContext, ledger: Ledger, *, put: bool) -> bool:
        """Keep (or, on removal, drop) each entry's value in the ledger.

        So ``funes integrations remove ID`` can take funes' entries out again when the plugin that
        declared them is gone (uninstalled, or dropped by a ``uv tool upgrade``): the recorded value
        is what it removes, and only where it is still exactly that value.
        """
        changed = False
        for entry in self.entries(ctx):
            place = entry.place.shown()
            if not put:
                if ledger.entries(entry.path).get(place) is not None:
                    ledger.forget_entry(entry.path, place)
                    changed = True
                continue
            recorded = {
                "format": entry.adapter.label,
                "path": list(entry.place.path),
                "key": entry.place.key,
                "value": entry.value,
                "note": self._note(entry),
                "what": entry.what,
            }
            changed |= ledger.remember(entry.path, place, recorded)
        return changed

    def preflight(self, ctx: InstallContext, *, put: bool = True) -> list[Path]:
        """Check, changing nothing, that an install (or removal) could be done; the files it would touch.

        Raises the :class:`~funes_core.ConfigError` the real call would raise: a malformed,
        read-only or dangling file, or somebody else's entry in funes' place. The orchestrator
        calls this for every part before changing anything (all or nothing across parts).
        """
        plans = self._plan(ctx, Ledger.load(ctx.funes_home, self.id), put=put)
        for plan in plans:
            plan.doc.check_writable()
        return [plan.doc.path for plan in plans]

    def put(self, ctx: InstallContext) -> Outcome:
        """Add or refresh every entry (see the module docstring)."""
        names = [e.what for e in self.entries(ctx)]
        files = _files(self.entries(ctx), ctx)
        before = self.status(ctx).state
        plans, _ = self._apply(ctx, put=True)
        if not plans:
            return Outcome(False, f"{_join(names)} already in {files}")
        verb = "updated" if before is WiringState.OUTDATED else "added"
        whats = _join(list(dict.fromkeys(w for p in plans for w in p.whats)))
        return Outcome(True, f"{verb} {whats} in {files}")

    def drop(self, ctx: InstallContext) -> Outcome:
        """Remove every entry funes owns, and what funes created for them (see the module docstring)."""
        names = [e.what for e in self.entries(ctx)]
        files = _files(self.entries(ctx), ctx)
        plans, _ = self._apply(ctx, put=False)
        if not plans:
            return Outcome(False, f"no {_join(names)} in {files}")
        whats = _join(list(dict.fromkeys(w for p in plans for w in p.whats)))
        return Outcome(True, f"removed {whats} from {files}")


def _has(data: Any, path: KeyPath) -> bool:
    for step in path:
        if not isinstance(data, dict) or step not in data:
            return False
        data = data[step]
    return True


def _remove_empty_dirs(folders: Sequence[Path]) -> None:
    """Remove folders funes created for a config file, deepest first, while they are empty."""
    for folder in folders:
        try:
            folder.rmdir()
        except FileNotFoundError:
            continue
        except OSError:
            return


def _restore(plan: _FilePlan) -> None:
    """Put a file back as it was before a failed multi-file edit (best effort, never raises)."""
    try:
        if plan.before is None:
            plan.doc.path.unlink(missing_ok=True)
        else:
            plan.doc.write(plan.before)
    except (ConfigError, OSError):
        pass


def _files(entries: Sequence[ManagedEntry], ctx: InstallContext) -> str:
    return ", ".join(dict.fromkeys(shown_path(e.path, ctx.home) for e in entries))


def _join(names: Sequence[str]) -> str:
    unique = list(dict.fromkeys(names))
    if len(unique) <= 1:
        return unique[0] if unique else "funes' entries"
    return ", ".join(unique[:-1]) + " and " + unique[-1]
