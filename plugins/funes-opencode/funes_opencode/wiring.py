"""Wires funes into OpenCode: a capture plugin file, and ``mcp.funes`` in ``opencode.json``.

**Capture.** OpenCode loads every ``*.js`` file of its plugin folder (``~/.config/opencode/plugins``,
or ``$OPENCODE_CONFIG_DIR/plugins``) at start. funes writes one file of its own there,
``funes.js``, and never edits the user's config for it: on OpenCode's ``session.idle`` event (the
end of every turn) it starts ``python -I -m funes_opencode.hook`` detached, with OpenCode's own
environment and the event on stdin, and returns at once. The file's first line says funes wrote
it; its second records the folders install created (removal takes them away again); the command
is in the body. Removal deletes exactly that file.

**MCP server.** ``mcp.funes = {"type": "local", "command": [..., "mcp"], "enabled": true}`` in the
config file (``$OPENCODE_CONFIG``, else the global ``opencode.jsonc`` when it exists, else
``opencode.json``): a managed entry of the core (byte-preserving, exact removal); a ``funes``
server whose command runs ``… mcp`` is funes'. OpenCode also reads comments (JSONC): a file the
JSON editor cannot parse is refused with a clear message and left alone. (``opencode mcp add``
asks its questions interactively, so funes edits the file.)
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

from funes_core import (
    ConfigError,
    EditError,
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
    read_json_text,
    value_at,
)
from funes_opencode.agent import AGENT

__all__ = [
    "HEADER",
    "HOOK_MODULE",
    "PLUGIN_NAME",
    "OpenCodeHookInstaller",
    "OpenCodeToolRegistrar",
    "plugin_source",
]

#: The module the plugin runs after each turn.
HOOK_MODULE = "funes_opencode.hook"
#: The capture plugin's file name in OpenCode's plugin folder.
PLUGIN_NAME = "funes.js"
#: The first line of the plugin file: how funes recognises its own file.
HEADER = "// funes-opencode: captures each OpenCode turn into funes' memory."
_CREATED_PREFIX = "// created: "

_BODY = """import { spawn } from "node:child_process";

const COMMAND = %s;

export const FunesMemory = async () => ({
  event: async ({ event }) => {
    if (event?.type !== "session.idle") return;
    const id = event.properties?.sessionID;
    if (typeof id !== "string" || !/^ses_[A-Za-z0-9]+$/.test(id)) return;
    try {
      const stdio = ["pipe", "ignore", "ignore"];
      const child = spawn(COMMAND[0], COMMAND.slice(1), { detached: true, stdio });
      child.on("error", () => {});
      child.stdin.on("error", () => {});
      child.stdin.end(JSON.stringify({ hook_event_name: "session.idle", session_id: id }));
      child.unref();
    } catch {
      // funes must never disturb OpenCode: a missing funes only loses this turn's capture.
    }
  },
});
"""


def plugin_source(
    ctx: InstallContext, created: list[str], header: str = HEADER, hook_module: str = HOOK_MODULE
) -> str:
    """The whole text of ``funes.js`` for ``ctx`` (``created``: the folders install made)."""
    return f"{header}\n{_CREATED_PREFIX}{json.dumps(created)}\n" + _BODY % json.dumps(
        ctx.hook_argv(hook_module)
    )


def _created(text: str) -> list[str]:
    for line in text.splitlines()[:3]:
        if line.startswith(_CREATED_PREFIX):
            try:
                value = json.loads(line[len(_CREATED_PREFIX) :])
            except ValueError:
                return []
            return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []
    return []


def _missing_dirs(folder: Path) -> list[Path]:
    missing: list[Path] = []
    while not folder.exists() and folder.parent != folder:
        missing.append(folder)
        folder = folder.parent
    return missing


def _shown(path: Path, ctx: InstallContext) -> str:
    try:
        return "~/" + path.relative_to(ctx.home).as_posix()
    except ValueError:
        return str(path)


class OpenCodeHookInstaller(HookInstaller, agent=AGENT):
    """Writes (and removes) the capture plugin ``funes.js`` in OpenCode's plugin folder."""

    #: The plugin file's first line and the module it runs (a fork of OpenCode names its own).
    header = HEADER
    hook_module = HOOK_MODULE

    def _source(self, ctx: InstallContext, created: list[str]) -> str:
        return plugin_source(ctx, created, self.header, self.hook_module)

    def plugin_path(self, ctx: InstallContext) -> Path:
        return self.where("plugin_home", ctx) / "plugins" / PLUGIN_NAME

    def config_paths(self, ctx: InstallContext) -> list[Path]:
        return [self.plugin_path(ctx)]

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
        """Refuse, before any change, what the core refuses for config files: a dangling link, a
        read-only file or folder (the core's check is not public for a file a plugin owns whole)."""
        if path.is_symlink() and not path.exists():
            raise ConfigError(path, f"is a symbolic link to {os.readlink(path)}, which does not exist")
        target = path.resolve() if path.is_symlink() else path
        if target.exists() and (not target.stat().st_mode & stat.S_IWUSR or not os.access(target, os.W_OK)):
            raise ConfigError(path, f"is read-only (mode {stat.S_IMODE(target.stat().st_mode):04o})")
        folder = target.parent
        while not folder.exists() and folder.parent != folder:
            folder = folder.parent
        if not os.access(folder, os.W_OK):
            raise ConfigError(path, f"its folder {folder} is read-only")

    def install(self, ctx: InstallContext) -> Outcome:
        path = self.plugin_path(ctx)
        self._check_writable(path)
        current = self._existing(path)
        if current is not None and not current.startswith(self.header):
            raise ConfigError(path, "exists but funes did not write it; rename or remove it first")
        created = _created(current) if current is not None else [str(p) for p in _missing_dirs(path.parent)]
        wanted = self._source(ctx, created)
        if current == wanted:
            return Outcome(False, f"the funes capture plugin is already in {_shown(path, ctx)}")
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, wanted)
        return Outcome(
            True, f"{'updated' if current else 'added'} the funes capture plugin {_shown(path, ctx)}"
        )

    def uninstall(self, ctx: InstallContext) -> Outcome:
        path = self.plugin_path(ctx)
        current = self._existing(path)
        if current is None:
            return Outcome(False, f"no funes capture plugin in {_shown(path, ctx)}")
        if not current.startswith(self.header):
            raise ConfigError(path, "is not the plugin funes wrote; left alone")
        self._check_writable(path)
        path.unlink()
        for folder in _created(current):  # deepest first, only while empty
            try:
                os.rmdir(folder)
            except OSError:
                break
        return Outcome(True, f"removed the funes capture plugin {_shown(path, ctx)}")

    def status(self, ctx: InstallContext) -> Status:
        path = self.plugin_path(ctx)
        try:
            current = self._existing(path)
        except ConfigError as exc:
            return Status(WiringState.BROKEN, str(exc))
        if current is None:
            return Status(WiringState.NOT_WIRED, _shown(path, ctx))
        if not current.startswith(self.header):
            return Status(WiringState.BROKEN, f"{_shown(path, ctx)} exists but funes did not write it")
        if current != self._source(ctx, _created(current)):
            return Status(WiringState.OUTDATED, f"{_shown(path, ctx)} runs another funes command")
        return Status(WiringState.WIRED, _shown(path, ctx))


def _is_funes_server(value: Any) -> bool:
    """``mcp.funes`` running ``… mcp [MEMORY]``: funes', whoever added it."""
    if not isinstance(value, dict):
        return False
    command = value.get("command")
    return isinstance(command, list) and "mcp" in command


class OpenCodeToolRegistrar(ManagedWiring, ToolRegistrar, agent=AGENT):
    """Records ``mcp.funes = {"type": "local", "command": [..., "mcp"], "enabled": true}``."""

    #: The JSONC file preferred over the default config file when it exists.
    jsonc_name = "opencode.jsonc"

    def config_file(self, ctx: InstallContext) -> Path:
        located = self.agent.locate("config_file", ctx.home, ctx.extra_env) if self.agent else None
        if located is not None and located.source == "default":
            jsonc = located.path.with_name(self.jsonc_name)
            if jsonc.is_file():
                return jsonc
        return self.where("config_file", ctx)

    def entries(self, ctx: InstallContext) -> list[ManagedEntry]:
        return [
            ManagedEntry(
                path=self.config_file(ctx),
                adapter=JsonFormat(),
                place=Place(("mcp",), "funes"),
                value={"type": "local", "command": ctx.mcp_command(), "enabled": True},
                ours=_is_funes_server,
                what="the funes MCP server",
            )
        ]

    def registered_command(self, ctx: InstallContext) -> list[str] | None:
        """The command list of ``mcp.funes`` as OpenCode will run it (``None``: not funes')."""
        try:
            value = value_at(read_json_text(self.config_file(ctx)), ["mcp", "funes"])
        except EditError as exc:
            raise ConfigError(self.config_file(ctx), str(exc)) from None
        return [str(c) for c in value["command"]] if _is_funes_server(value) else None
