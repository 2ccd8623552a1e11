"""The hook installer of an agent's :class:`~funes_core.PluginFile`, built by the core.

OpenCode and its fork Kilo run no hook commands; they load every ``*.js`` of a plugin folder at
start. Each plugin used to write its own installer for the one file funes puts there; now the agent
declares the file and a plugin names the class::

    class OpenCodeHookInstaller(PluginFileInstaller, agent=AGENT):
        \"\"\"Writes (and removes) the capture plugin ``funes.js`` in OpenCode's plugin folder.\"\"\"

The file is funes' whole, so this is not a :class:`~funes_core.ManagedWiring` of entries: funes
recognises it by its first line (the one rule), and records in its second line the folders install
created, so removal takes them away again.

pi loads neither plugin files nor hooks, but packages: its agent declares a
:class:`~funes_core.Package`, which :class:`PackageHookInstaller` and :class:`PackageToolRegistrar`
install (funes' copy of the package in ``$FUNES_HOME``, whole, and its entry in the agent's list of
packages, a managed entry).
"""

from __future__ import annotations

import contextlib
import json
import os
from importlib import resources
from pathlib import Path
from typing import Any

from funes_core.files import atomic_write_text, missing_dirs
from funes_core.host.agent import Package, PluginFile
from funes_core.host.api import (
    ConfigError,
    HookInstaller,
    InstallContext,
    IntegrationPart,
    Outcome,
    Status,
    ToolRegistrar,
    WiringState,
)
from funes_core.wiring.configedit.base import ConfigFile, Place, shown_path
from funes_core.wiring.configedit.json import JsonFormat
from funes_core.wiring.configedit.managed import ManagedEntry, ManagedWiring
from funes_core.wiring.declared import declaration

__all__ = ["PackageHookInstaller", "PackageToolRegistrar", "PluginFileInstaller"]


class PluginFileInstaller(HookInstaller):
    """The hook installer of an agent's :class:`~funes_core.PluginFile`: a file funes owns whole.

    Install writes the file (refusing one funes did not write), remove deletes exactly it and the
    folders install created for it, status compares it with what install would write now. A
    dangling link, a read-only file or folder is refused before anything changes, as for a config.
    """

    #: How the file is named to the user.
    what = "the funes capture plugin"

    @property
    def plugin_file(self) -> PluginFile:
        declared: PluginFile = declaration(self, "plugin_file", "plugin file")
        return declared

    @property
    def header(self) -> str:
        """The file's first line: what makes it funes' (see :class:`~funes_core.PluginFile`)."""
        label = self.agent.label if self.agent is not None else self.id
        return f"{self.plugin_file.comment} funes-{self.id}: captures each {label} turn into funes' memory."

    def plugin_path(self, ctx: InstallContext) -> Path:
        declared = self.plugin_file
        return self.where(declared.location, ctx) / declared.folder / declared.name

    def config_paths(self, ctx: InstallContext) -> list[Path]:
        return [self.plugin_path(ctx)]

    def source(self, ctx: InstallContext, created: list[str]) -> str:
        """The file's whole text for ``ctx`` (``created``: the folders install made for it)."""
        declared = self.plugin_file
        package, _, name = declared.source.partition(":")
        body = resources.files(package).joinpath(name).read_text(encoding="utf-8")
        argv = json.dumps(ctx.hook_argv(declared.module))
        return f"{self.header}\n{self._created_prefix}{json.dumps(created)}\n" + body.replace(
            "{hook_argv}", argv
        )

    @property
    def _created_prefix(self) -> str:
        return f"{self.plugin_file.comment} created: "

    def _created(self, text: str) -> list[str]:
        for line in text.splitlines()[:3]:
            if line.startswith(self._created_prefix):
                try:
                    value = json.loads(line[len(self._created_prefix) :])
                except ValueError:
                    return []
                return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []
        return []

    @staticmethod
    def _existing(path: Path) -> str | None:
        try:
            return path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(path, f"cannot read: {exc}") from None

    @staticmethod
    def _check_writable(path: Path) -> None:
        ConfigFile(path, JsonFormat()).check_writable()  # the format plays no part in this check

    def install(self, ctx: InstallContext) -> Outcome:
        path = self.plugin_path(ctx)
        self._check_writable(path)
        current = self._existing(path)
        if current is not None and not current.startswith(self.header):
            raise ConfigError(path, "exists but funes did not write it; rename or remove it first")
        made = missing_dirs(path.parent) if current is None else []
        created = self._created(current) if current is not None else [str(p) for p in made]
        wanted = self.source(ctx, created)
        shown = shown_path(path, ctx.home)
        if current == wanted:
            return Outcome(False, f"{self.what} is already in {shown}")
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, wanted)
        return Outcome(True, f"{'updated' if current else 'added'} {self.what} {shown}")

    def uninstall(self, ctx: InstallContext) -> Outcome:
        path = self.plugin_path(ctx)
        current = self._existing(path)
        shown = shown_path(path, ctx.home)
        if current is None:
            return Outcome(False, f"no {self.what.removeprefix('the ')} in {shown}")
        if not current.startswith(self.header):
            raise ConfigError(path, "is not the plugin funes wrote; left alone")
        self._check_writable(path)
        path.unlink()
        for folder in self._created(current):  # deepest first, only while empty
            try:
                os.rmdir(folder)
            except OSError:
                break
        return Outcome(True, f"removed {self.what} {shown}")

    def status(self, ctx: InstallContext) -> Status:
        path = self.plugin_path(ctx)
        shown = shown_path(path, ctx.home)
        try:
            current = self._existing(path)
        except ConfigError as exc:
            return Status(WiringState.BROKEN, str(exc))
        if current is None:
            return Status(WiringState.NOT_WIRED, shown)
        if not current.startswith(self.header):
            return Status(WiringState.BROKEN, f"{shown} exists but funes did not write it")
        if current != self.source(ctx, self._created(current)):
            return Status(WiringState.OUTDATED, f"{shown} runs another funes command")
        return Status(WiringState.WIRED, shown)


class _PackagePart(ManagedWiring, IntegrationPart):
    """One part of an agent's :class:`~funes_core.Package`: it owns one key of the package's config.

    The list entry is a :class:`~funes_core.ManagedEntry` (byte-preserving, exact removal, the
    folders it created go with it); the package's files and config are funes' own, rewritten whole.
    """

    #: The key of the package's config this part owns (``hook`` or ``mcp``).
    part: str
    #: How the part is named to the user.
    what: str

    @property
    def package(self) -> Package:
        declared: Package = declaration(self, "package", "package")
        return declared

    def package_dir(self, ctx: InstallContext) -> Path:
        """Where the package is installed: ``$FUNES_HOME/integrations/<folder>``."""
        return ctx.funes_home / "integrations" / self.package.folder

    @property
    def _shown(self) -> str:
        """How the package is named to the user: ``the funes <label> package``."""
        return f"the funes {self.agent.label if self.agent is not None else self.id} package"

    def listing_path(self, ctx: InstallContext) -> Path:
        """The file whose list names the package (the declared location)."""
        return self.where(self.package.location, ctx)

    def value(self, ctx: InstallContext) -> dict[str, Any]:
        """What this part records under its key of the package's config."""
        raise NotImplementedError

    def entries(self, ctx: InstallContext) -> list[ManagedEntry]:
        folder = os.path.normpath(self.package_dir(ctx))
        listing = self.listing_path(ctx)

        def ours(item: Any) -> bool:
            """Our folder, as funes writes it or as the agent's install does (``~/…`` or relative)."""
            if not isinstance(item, str) or not item.strip():
                return False
            value = item.strip()
            if value == "~" or value.startswith("~/"):
                value = str(ctx.home / value[2:]) if value != "~" else str(ctx.home)
            elif not os.path.isabs(value):
                value = str(listing.parent / value)
            return os.path.normpath(value) == folder

        return [
            ManagedEntry(
                path=listing,
                adapter=JsonFormat(),
                place=Place(self.package.path),
                value=str(self.package_dir(ctx)),
                ours=ours,
                same=lambda found, wanted: ours(found),  # any spelling of our folder will do
                what=self._shown,
            )
        ]

    # -- funes' own files ------------------------------------------------------------------------

    def _packaged(self, name: str) -> bytes:
        package, _, folder = self.package.source.partition(":")
        return resources.files(package).joinpath(*folder.split("/"), *name.split("/")).read_bytes()

    def _config_path(self, ctx: InstallContext) -> Path:
        return self.package_dir(ctx) / self.package.config

    def _config(self, ctx: InstallContext) -> dict[str, Any]:
        """The package's config (``{}`` when missing or unreadable: it is funes' own file, rewritten)."""
        try:
            data = json.loads(self._config_path(ctx).read_bytes())
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _files_current(self, ctx: InstallContext) -> bool:
        root = self.package_dir(ctx)
        try:
            return all((root / name).read_bytes() == self._packaged(name) for name in self.package.files)
        except OSError:
            return False

    def _write_files(self, ctx: InstallContext, config: dict[str, Any]) -> bool:
        """Put the package files and ``config`` in place; whether anything changed."""
        changed = False
        root = self.package_dir(ctx)
        for folder in (ctx.funes_home, ctx.funes_home / "integrations", root):
            if not folder.is_dir():
                folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        for name in self.package.files:
            target = root / name
            data = self._packaged(name)
            with contextlib.suppress(OSError):
                if target.read_bytes() == data:
                    continue
            target.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(target, data.decode("utf-8"), mode=0o644)
            changed = True
        if config != self._config(ctx):
            body = json.dumps(config, indent=2, ensure_ascii=False) + "\n"
            atomic_write_text(self._config_path(ctx), body)
            changed = True
        return changed

    def _delete_files(self, ctx: InstallContext) -> None:
        root = self.package_dir(ctx)
        for name in (*self.package.files, self.package.config):
            (root / name).unlink(missing_ok=True)
        made = {folder for name in self.package.files for folder in (root / name).parents}
        inner = sorted((f for f in made if f.is_relative_to(root) and f != root), key=lambda f: -len(f.parts))
        for folder in (*inner, root, ctx.funes_home / "integrations"):
            try:
                folder.rmdir()  # folders go only when empty: never anything funes did not write
            except FileNotFoundError:
                continue
            except OSError:
                return

    # -- install / remove / status ---------------------------------------------------------------

    def put(self, ctx: InstallContext) -> Outcome:
        self.preflight(ctx)  # a malformed listing file is refused before funes writes anything
        config = self._config(ctx)
        refresh = config.get(self.part) is not None
        wanted = {**config, "format": self.package.config_format, self.part: self.value(ctx)}
        files = self._write_files(ctx, wanted)
        listed = ManagedWiring.put(self, ctx)
        if not (files or listed.changed):
            return Outcome(False, f"{self.what} already set up ({listed.summary})")
        verb = "updated" if refresh else "added"
        return Outcome(True, f"{verb} {self.what}: {self._shown} ({listed.summary})")

    def drop(self, ctx: InstallContext) -> Outcome:
        config = self._config(ctx)
        others = [key for key in _PARTS if key != self.part and config.get(key) is not None]
        if others:
            if config.get(self.part) is None:
                return Outcome(False, f"no {self.what} in {self._shown}")
            self._write_files(ctx, {k: v for k, v in config.items() if k != self.part})
            return Outcome(True, f"removed {self.what} ({self._shown} stays for the {others[0]})")
        unlisted = ManagedWiring.drop(self, ctx)  # the last part out takes the list entry away
        had = config.get(self.part) is not None or self.package_dir(ctx).exists()
        self._delete_files(ctx)
        if not (unlisted.changed or had):
            return unlisted
        return Outcome(True, f"removed {self.what} and {self._shown} ({unlisted.summary})")

    def status(self, ctx: InstallContext) -> Status:
        listing = ManagedWiring.status(self, ctx)
        if listing.state is WiringState.BROKEN:
            return listing
        shown = listing.detail.split(":")[0]
        current = self._config(ctx).get(self.part)
        if current is None:
            return Status(WiringState.NOT_WIRED, shown)
        if listing.state is WiringState.NOT_WIRED:
            return Status(WiringState.NOT_WIRED, f"{self._shown} is not listed in {shown}")
        if not self._files_current(ctx):
            return Status(WiringState.OUTDATED, f"{self._shown} in {self.package_dir(ctx)} is out of date")
        if current != self.value(ctx):
            return Status(WiringState.OUTDATED, f"{self._config_path(ctx)} records another funes")
        return Status(WiringState.WIRED, shown)


#: The parts of a package's config, one a key.
_PARTS = ("hook", "mcp")


class PackageHookInstaller(_PackagePart, HookInstaller):
    """The hook part of an agent's :class:`~funes_core.Package`: the package runs funes' convert per turn.

    After each turn the package starts ``funes integrations convert <id> <session file> --index``
    detached (the core's convert-under-lock, then an indexer).
    """

    part = "hook"
    what = "per-turn indexing"

    def hook_command(self, ctx: InstallContext) -> list[str]:
        """What the package runs after each turn, with the session file for the declared placeholder."""
        return [*ctx.funes_command, "integrations", "convert", self.id, self.package.placeholder, "--index"]

    def value(self, ctx: InstallContext) -> dict[str, Any]:
        return {"argv": self.hook_command(ctx), "env": {"FUNES_HOME": str(ctx.funes_home)}}


class PackageToolRegistrar(_PackagePart, ToolRegistrar):
    """The MCP part of an agent's :class:`~funes_core.Package`: the package bridges ``funes mcp``'s tools.

    The package starts ``funes mcp [MEMORY]`` over stdio and offers each tool it lists to the model
    as ``<tool_prefix><tool>``.
    """

    part = "mcp"
    what = "the funes memory tools"

    def value(self, ctx: InstallContext) -> dict[str, Any]:
        return {
            "argv": ctx.mcp_command(),
            "memory": ctx.memory,
            "env": {"FUNES_HOME": str(ctx.funes_home)},
            "tool_prefix": self.package.tool_prefix,
        }

    def registered_command(self, ctx: InstallContext) -> list[str] | None:
        if self.status(ctx).state is WiringState.NOT_WIRED:
            return None
        current = self._config(ctx).get(self.part)
        argv = current.get("argv") if isinstance(current, dict) else None
        if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
            return None
        return list(argv)
