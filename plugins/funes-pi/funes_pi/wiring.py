"""Wires funes into pi through a small pi extension (pi has no hooks and no MCP of its own).

The extension is a pi package shipped inside this distribution (``funes_pi/extension``). At
install time it is copied into ``$FUNES_HOME/integrations/pi-extension/`` with a
``funes.json`` beside it that records what it should run, and that folder is added to the
``packages`` array of pi's ``settings.json``, exactly where ``pi install <dir>`` would record it
(``pi list`` shows it; ``pi remove <dir>`` would drop it). funes makes that edit itself rather
than running ``pi install``, because pi's CLI rewrites the whole settings file (and leaves an
empty ``packages`` behind on removal): the user's bytes would not survive.

The two parts of the integration share that extension and own one key each of ``funes.json``:

* :class:`PiHookInstaller` owns ``hook``: after every turn (``turn_end``) and when a session
  closes (``session_shutdown``), the extension starts ``funes integrations convert pi <session
  file> --index`` detached (the core's convert-under-lock, then an indexer);
* :class:`PiToolRegistrar` owns ``mcp``: the extension starts ``funes mcp [MEMORY]`` once over
  stdio and registers each tool it lists as a pi tool named ``mcp__funes__<tool>``.

Whichever part is installed first puts the extension in place; the last one removed takes it
away again, and with it the ``packages`` entry: a core managed entry, so what funes created (the
member, the file, its folders) goes too and the user's ``settings.json`` gets its bytes back.
"""

from __future__ import annotations

import contextlib
import json
import os
from importlib import resources
from pathlib import Path
from typing import Any

from funes_core import (
    HookInstaller,
    InstallContext,
    JsonFormat,
    ManagedEntry,
    ManagedWiring,
    Outcome,
    Place,
    Status,
    ToolRegistrar,
    WiringState,
    atomic_write_text,
)
from funes_pi.agent import PI
from funes_pi.paths import settings_path

__all__ = [
    "CONFIG_NAME",
    "EXTENSION_FILES",
    "SESSION_PLACEHOLDER",
    "TOOL_PREFIX",
    "PiHookInstaller",
    "PiToolRegistrar",
    "extension_dir",
    "hook_command",
]

#: The files of the pi package, relative to ``funes_pi/extension`` and to the installed copy.
EXTENSION_FILES = ("package.json", "extensions/funes.ts")
#: The extension's configuration, written beside the package files.
CONFIG_NAME = "funes.json"
#: What the extension substitutes with the session file's path in the hook command.
SESSION_PLACEHOLDER = "{session_file}"
#: The prefix of the pi tool names under which funes' MCP tools are registered.
TOOL_PREFIX = "mcp__funes__"
#: The version of the ``funes.json`` layout the extension reads.
CONFIG_FORMAT = 1
_PARTS = ("hook", "mcp")


def extension_dir(ctx: InstallContext) -> Path:
    """Where the pi package is installed: ``$FUNES_HOME/integrations/pi-extension``."""
    return ctx.funes_home / "integrations" / "pi-extension"


def hook_command(ctx: InstallContext) -> list[str]:
    """What the extension runs after each turn: convert the session into the spool, then index."""
    return [*ctx.funes_command, "integrations", "convert", "pi", SESSION_PLACEHOLDER, "--index"]


def _packaged(name: str) -> bytes:
    return resources.files("funes_pi").joinpath("extension", *name.split("/")).read_bytes()


class _Extension(ManagedWiring):
    """The shared pi package: its files, its ``funes.json`` and its ``packages`` entry."""

    #: The key of ``funes.json`` this part owns (``hook`` or ``mcp``).
    part: str
    #: How the part is named to the user.
    what: str

    def value(self, ctx: InstallContext) -> dict[str, Any]:
        raise NotImplementedError

    def entries(self, ctx: InstallContext) -> list[ManagedEntry]:
        folder = os.path.normpath(extension_dir(ctx))
        settings = settings_path(ctx.home, ctx.env())

        def ours(item: Any) -> bool:
            """Our folder, as funes writes it or as ``pi install`` does (``~/…`` or relative)."""
            if not isinstance(item, str) or not item.strip():
                return False
            value = item.strip()
            if value == "~" or value.startswith("~/"):
                value = str(ctx.home / value[2:]) if value != "~" else str(ctx.home)
            elif not os.path.isabs(value):
                value = str(settings.parent / value)
            return os.path.normpath(value) == folder

        return [
            ManagedEntry(
                path=settings,
                adapter=JsonFormat(),
                place=Place(("packages",)),
                value=str(extension_dir(ctx)),
                ours=ours,
                same=lambda found, wanted: ours(found),  # any spelling of our folder will do
                what="the funes pi package",
            )
        ]

    # -- funes' own files ------------------------------------------------------------------------

    @staticmethod
    def _config_path(ctx: InstallContext) -> Path:
        return extension_dir(ctx) / CONFIG_NAME

    def _config(self, ctx: InstallContext) -> dict[str, Any]:
        """``funes.json`` (``{}`` when missing or unreadable: it is funes' own file, rewritten)."""
        try:
            data = json.loads(self._config_path(ctx).read_bytes())
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _files_current(self, ctx: InstallContext) -> bool:
        root = extension_dir(ctx)
        try:
            return all((root / name).read_bytes() == _packaged(name) for name in EXTENSION_FILES)
        except OSError:
            return False

    def _write_files(self, ctx: InstallContext, config: dict[str, Any]) -> bool:
        """Put the package files and ``config`` in place; whether anything changed."""
        changed = False
        for folder in (ctx.funes_home, ctx.funes_home / "integrations", extension_dir(ctx)):
            if not folder.is_dir():
                folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        for name in EXTENSION_FILES:
            target = extension_dir(ctx) / name
            data = _packaged(name)
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
        root = extension_dir(ctx)
        for name in (*EXTENSION_FILES, CONFIG_NAME):
            (root / name).unlink(missing_ok=True)
        for folder in (root / "extensions", root, ctx.funes_home / "integrations"):
            try:
                folder.rmdir()  # folders go only when empty: never anything funes did not write
            except FileNotFoundError:
                continue
            except OSError:
                return

    # -- install / remove / status ---------------------------------------------------------------

    def put(self, ctx: InstallContext) -> Outcome:
        self.preflight(ctx)  # a malformed settings.json is refused before funes writes anything
        config = self._config(ctx)
        refresh = config.get(self.part) is not None
        files = self._write_files(ctx, {**config, "format": CONFIG_FORMAT, self.part: self.value(ctx)})
        listed = ManagedWiring.put(self, ctx)
        if not (files or listed.changed):
            return Outcome(False, f"{self.what} already set up ({listed.summary})")
        verb = "updated" if refresh else "added"
        return Outcome(True, f"{verb} {self.what}: the funes pi package ({listed.summary})")

    def drop(self, ctx: InstallContext) -> Outcome:
        config = self._config(ctx)
        others = [key for key in _PARTS if key != self.part and config.get(key) is not None]
        if others:
            if config.get(self.part) is None:
                return Outcome(False, f"no {self.what} in the funes pi package")
            self._write_files(ctx, {k: v for k, v in config.items() if k != self.part})
            return Outcome(True, f"removed {self.what} (the funes pi package stays for the {others[0]})")
        unlisted = ManagedWiring.drop(self, ctx)  # the last part out takes the package entry away
        had = config.get(self.part) is not None or extension_dir(ctx).exists()
        self._delete_files(ctx)
        if not (unlisted.changed or had):
            return unlisted
        return Outcome(True, f"removed {self.what} and the funes pi package ({unlisted.summary})")

    def status(self, ctx: InstallContext) -> Status:
        listing = ManagedWiring.status(self, ctx)
        if listing.state is WiringState.BROKEN:
            return listing
        shown = listing.detail.split(":")[0]
        current = self._config(ctx).get(self.part)
        if current is None:
            return Status(WiringState.NOT_WIRED, shown)
        if listing.state is WiringState.NOT_WIRED:
            return Status(WiringState.NOT_WIRED, f"the funes pi package is not listed in {shown}")
        if not self._files_current(ctx):
            return Status(
                WiringState.OUTDATED, f"the funes pi package in {extension_dir(ctx)} is out of date"
            )
        if current != self.value(ctx):
            return Status(WiringState.OUTDATED, f"{self._config_path(ctx)} records another funes")
        return Status(WiringState.WIRED, shown)


class PiHookInstaller(_Extension, HookInstaller, agent=PI):
    """Installs the extension's per-turn automation: convert the session, then index, detached."""

    part = "hook"
    what = "per-turn indexing"

    def value(self, ctx: InstallContext) -> dict[str, Any]:
        return {"argv": hook_command(ctx), "env": {"FUNES_HOME": str(ctx.funes_home)}}


class PiToolRegistrar(_Extension, ToolRegistrar, agent=PI):
    """Records ``funes mcp [MEMORY]`` for the extension, which bridges its tools into pi."""

    part = "mcp"
    what = "the funes memory tools"

    def value(self, ctx: InstallContext) -> dict[str, Any]:
        return {
            "argv": ctx.mcp_command(),
            "memory": ctx.memory,
            "env": {"FUNES_HOME": str(ctx.funes_home)},
            "tool_prefix": TOOL_PREFIX,
        }

    def registered_command(self, ctx: InstallContext) -> list[str] | None:
        if self.status(ctx).state is WiringState.NOT_WIRED:
            return None
        current = self._config(ctx).get(self.part)
        argv = current.get("argv") if isinstance(current, dict) else None
        if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
            return None
        return list(argv)
