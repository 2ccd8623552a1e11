"""Wires funes into echo: a hook in ``~/.echo/config.json``, an MCP server in ``~/.echo/mcp.json``.

Both edits go through :class:`~funes_core.host.configedit.json.JsonFile`, which adds funes' member as one
line and removes exactly that line again, so every other byte of the user's files survives.
Every value funes-echo writes ends with ``"managed_by": "funes-echo"``: that marker is how
``uninstall`` knows what is ours, and why a same-named entry the user wrote is never touched.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from funes_core import (
    Capabilities,
    ConfigError,
    EditError,
    HookInstaller,
    InstallContext,
    JsonFile,
    Outcome,
    Status,
    ToolRegistrar,
    WiringState,
)

__all__ = ["MARKER", "EchoHookInstaller", "EchoToolRegistrar"]

#: The last key of every value funes-echo writes.
MARKER = ("managed_by", "funes-echo")
#: Set (before the marker) when funes-echo created the file, so removal can delete it again.
CREATED = "created_file"
#: What echo substitutes with the session file's path when it runs a hook.
TRANSCRIPT_PLACEHOLDER = "{transcript}"


def _shown(path: Path, ctx: InstallContext) -> str:
    try:
        return "~/" + path.relative_to(ctx.home).as_posix()
    except ValueError:
        return str(path)


class _EchoEntry:
    """One funes-owned member of one echo config file: install, remove, read back, status."""

    parent: str
    what: str

    def file(self, ctx: InstallContext) -> JsonFile:
        raise NotImplementedError

    def value(self, ctx: InstallContext) -> dict[str, Any]:
        raise NotImplementedError

    def _read(self, doc: JsonFile) -> tuple[str | None, Any]:
        try:
            text = doc.read()
            return text, doc.current(text)
        except EditError as exc:
            raise ConfigError(doc.path, str(exc)) from None

    def _put(self, ctx: InstallContext) -> Outcome:
        doc = self.file(ctx)
        shown = _shown(doc.path, ctx)
        text, existing = self._read(doc)
        if existing is not None and not doc.is_ours(existing):
            raise ConfigError(
                doc.path,
                f"{self.parent}.funes exists but funes-echo did not write it; rename or remove it first",
            )
        wanted = self.value(ctx)
        created = text is None or (doc.is_ours(existing) and existing.get(CREATED) is True)
        if created:
            wanted = {
                **{k: v for k, v in wanted.items() if k != MARKER[0]},
                CREATED: True,
                MARKER[0]: MARKER[1],
            }
        if existing == wanted:
            return Outcome(False, f"{self.what} already in {shown}")
        try:
            new = doc.insert(doc.remove(text) if existing is not None and text is not None else text, wanted)
        except EditError as exc:
            raise ConfigError(doc.path, str(exc)) from None
        doc.write(new)
        verb = "updated" if existing is not None else "added"
        return Outcome(True, f"{verb} {self.what} in {shown}")

    def _drop(self, ctx: InstallContext) -> Outcome:
        doc = self.file(ctx)
        shown = _shown(doc.path, ctx)
        text, existing = self._read(doc)
        if text is None or existing is None or not doc.is_ours(existing):
            return Outcome(False, f"no {self.what} in {shown}")
        try:
            new = doc.remove(text)
        except EditError as exc:
            raise ConfigError(doc.path, str(exc)) from None
        if existing.get(CREATED) is True and new.strip() == "{}":
            doc.path.unlink()
        else:
            doc.write(new)
        return Outcome(True, f"removed {self.what} from {shown}")

    def _status(self, ctx: InstallContext) -> Status:
        doc = self.file(ctx)
        try:
            _, existing = self._read(doc)
        except ConfigError as exc:
            return Status(WiringState.BROKEN, str(exc))
        if existing is None:
            return Status(WiringState.NOT_WIRED, _shown(doc.path, ctx))
        if not doc.is_ours(existing):
            return Status(
                WiringState.NOT_WIRED, f"{self.parent}.funes in {_shown(doc.path, ctx)} is not ours"
            )
        wanted = {k: v for k, v in self.value(ctx).items() if k not in (CREATED, MARKER[0])}
        current = {k: v for k, v in existing.items() if k not in (CREATED, MARKER[0])}
        if current != wanted:
            return Status(
                WiringState.OUTDATED, f"{_shown(doc.path, ctx)} records another funes command or memory"
            )
        return Status(WiringState.WIRED, _shown(doc.path, ctx))


class EchoHookInstaller(_EchoEntry, HookInstaller):
    """Adds ``hooks.funes`` to ``~/.echo/config.json``: on every turn end, convert and index."""

    id = "echo"
    label = "Echo"
    contract_version = 1
    capabilities = Capabilities()

    parent = "hooks"
    what = "the funes hook"

    def file(self, ctx: InstallContext) -> JsonFile:
        return JsonFile(ctx.home / ".echo" / "config.json", self.parent, "funes", MARKER)

    def value(self, ctx: InstallContext) -> dict[str, Any]:
        run = ctx.convert_command(self.id, TRANSCRIPT_PLACEHOLDER)
        return {"on": "turn_end", "run": run, MARKER[0]: MARKER[1]}

    def config_paths(self, ctx: InstallContext) -> list[Path]:
        return [self.file(ctx).path]

    def install(self, ctx: InstallContext) -> Outcome:
        return self._put(ctx)

    def uninstall(self, ctx: InstallContext) -> Outcome:
        return self._drop(ctx)

    def status(self, ctx: InstallContext) -> Status:
        return self._status(ctx)


class EchoToolRegistrar(_EchoEntry, ToolRegistrar):
    """Adds ``mcpServers.funes`` (``funes mcp [MEMORY]``) to ``~/.echo/mcp.json``."""

    id = "echo"
    label = "Echo"
    contract_version = 1
    capabilities = Capabilities()

    parent = "mcpServers"
    what = "the funes MCP server"

    def file(self, ctx: InstallContext) -> JsonFile:
        return JsonFile(ctx.home / ".echo" / "mcp.json", self.parent, "funes", MARKER)

    def value(self, ctx: InstallContext) -> dict[str, Any]:
        argv = ctx.mcp_command()
        return {"command": argv[0], "args": argv[1:], MARKER[0]: MARKER[1]}

    def config_paths(self, ctx: InstallContext) -> list[Path]:
        return [self.file(ctx).path]

    def register(self, ctx: InstallContext) -> Outcome:
        return self._put(ctx)

    def unregister(self, ctx: InstallContext) -> Outcome:
        return self._drop(ctx)

    def status(self, ctx: InstallContext) -> Status:
        return self._status(ctx)

    def registered_command(self, ctx: InstallContext) -> list[str] | None:
        doc = self.file(ctx)
        _, existing = self._read(doc)
        if not doc.is_ours(existing):
            return None
        command, args = existing.get("command"), existing.get("args", [])
        if not isinstance(command, str) or not isinstance(args, list):
            return None
        return [command, *(str(a) for a in args)]
