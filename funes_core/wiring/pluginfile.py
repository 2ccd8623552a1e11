"""The hook installer of an agent's :class:`~funes_core.PluginFile`, built by the core.

OpenCode and its fork Kilo run no hook commands; they load every ``*.js`` of a plugin folder at
start. Each plugin used to write its own installer for the one file funes puts there; now the agent
declares the file and a plugin names the class::

    class OpenCodeHookInstaller(PluginFileInstaller, agent=AGENT):
        \"\"\"Writes (and removes) the capture plugin ``funes.js`` in OpenCode's plugin folder.\"\"\"

The file is funes' whole, so this is not a :class:`~funes_core.ManagedWiring` of entries: funes
recognises it by its first line (the one rule), and records in its second line the folders install
created, so removal takes them away again.
"""

from __future__ import annotations

import json
import os
from importlib import resources
from pathlib import Path

from funes_core.files import atomic_write_text, missing_dirs
from funes_core.host.agent import PluginFile
from funes_core.host.api import ConfigError, HookInstaller, InstallContext, Outcome, Status, WiringState
from funes_core.wiring.configedit.base import ConfigFile, shown_path
from funes_core.wiring.configedit.json import JsonFormat
from funes_core.wiring.declared import declaration

__all__ = ["PluginFileInstaller"]


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
