"""Wires funes into Hermes: a shell hook and an MCP server, both in ``$HERMES_HOME/config.yaml``.

* The hook: ``hooks.on_session_end`` gets ``{command: "<funes> hermes hook --funes-home <dir>"}``.
  Hermes fires ``on_session_end`` at the end of *every* turn (every run of its conversation loop,
  completed or interrupted), after the turn's messages are saved to ``state.db``; the event is
  small (no conversation copy on stdin, unlike ``post_llm_call``). Hermes runs the command
  without a shell and waits for it, so the command converts one session and returns at once,
  leaving the indexing to a detached ``funes index``.
* The MCP server: ``mcp_servers.funes`` gets ``{command, args, env: {FUNES_HOME}}``. Hermes
  starts MCP servers with a filtered environment (PATH, HOME, ...), so FUNES_HOME must be
  recorded for ``funes mcp`` to find the memory this installation uses.

Both are edited in place by :mod:`funes_hermes.yamledit`, which keeps every other byte of the
user's file. ``hermes mcp add`` is deliberately not used: Hermes 0.19 re-writes the whole file
through its YAML dumper, dropping the user's comments and layout and adding its template.
Hermes asks the user, once per command, to allow a new shell hook (or accepts it when
``hooks_auto_accept: true``); funes never answers that question for them.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Any

from funes_core import (
    Capabilities,
    ConfigError,
    HookInstaller,
    InstallContext,
    Outcome,
    Status,
    ToolRegistrar,
    WiringState,
    atomic_write_text,
)
from funes_hermes.paths import CONFIG_NAME, hermes_home_for

if TYPE_CHECKING:
    from funes_hermes.yamledit import Member

__all__ = ["HOOK_EVENT", "SERVER_NAME", "HermesHookInstaller", "HermesToolRegistrar", "hook_argv"]

#: The Hermes event funes' hook runs on: once per turn, after the turn is saved.
HOOK_EVENT = "on_session_end"
#: The name of funes' MCP server in Hermes (its tools appear as ``mcp__funes__recall``, ...).
SERVER_NAME = "funes"
_ALLOWLIST = "shell-hooks-allowlist.json"


def hook_argv(ctx: InstallContext) -> list[str]:
    """What Hermes runs after each turn: ``<funes> hermes hook --funes-home <FUNES_HOME>``."""
    return [*ctx.funes_command, "hermes", "hook", "--funes-home", str(ctx.funes_home)]


def _config(ctx: InstallContext) -> Path:
    return hermes_home_for(ctx.home, ctx.extra_env) / CONFIG_NAME


def _shown(path: Path, ctx: InstallContext) -> str:
    try:
        return "~/" + path.relative_to(ctx.home).as_posix()
    except ValueError:
        return str(path)


class _ConfigFile:
    """Hermes' config.yaml: read as UTF-8 text, written atomically keeping its mode (0600 when new)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def read(self) -> str | None:
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise ConfigError(self.path, f"cannot be read: {exc.strerror or exc}") from None
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise ConfigError(self.path, "is not UTF-8 text") from None

    def write(self, text: str) -> None:
        target = self.path.resolve() if self.path.is_symlink() else self.path
        try:
            atomic_write_text(target, text, mode=None)
        except OSError as exc:
            raise ConfigError(self.path, f"cannot be written: {exc.strerror or exc}") from None

    def delete(self) -> None:
        self.path.unlink(missing_ok=True)


class _Entry:
    """One funes-owned member of config.yaml: add or refresh, remove, read back, status."""

    what: str

    def member(self, ctx: InstallContext) -> Member:
        raise NotImplementedError

    def ours(self, value: dict[str, Any]) -> bool:
        raise NotImplementedError

    def _edit(self, ctx: InstallContext) -> tuple[_ConfigFile, str | None, list[dict[str, Any]]]:
        """The file, its text and funes' members in it (``ConfigError`` when it cannot be used)."""
        from funes_hermes.yamledit import EditError, find

        doc = _ConfigFile(_config(ctx))
        text = doc.read()
        if text is None:
            return doc, None, []
        try:
            found = find(text, self.member(ctx), self.ours)
        except EditError as exc:
            raise ConfigError(doc.path, str(exc)) from None
        return doc, text, [f.value for f in found]

    def _put(self, ctx: InstallContext) -> Outcome:
        from funes_hermes.yamledit import CREATED_LINE, EditError, foreign, insert, remove

        doc, text, found = self._edit(ctx)
        shown = _shown(doc.path, ctx)
        wanted = self.member(ctx)
        if found == [wanted.value]:
            return Outcome(False, f"{self.what} already in {shown}")
        base = CREATED_LINE + "\n" if text is None else text
        try:
            if not found and foreign(base, wanted, self.ours):
                raise ConfigError(
                    doc.path,
                    f"{'.'.join((*wanted.path, wanted.key or ''))} exists but funes-hermes did not "
                    "write it; rename or remove it first",
                )
            new = insert(remove(base, wanted, self.ours), wanted)
        except EditError as exc:
            raise ConfigError(doc.path, str(exc)) from None
        doc.write(new)
        return Outcome(True, f"{'updated' if found else 'added'} {self.what} in {shown}")

    def _drop(self, ctx: InstallContext) -> Outcome:
        from funes_hermes.yamledit import CREATED_LINE, EditError, remove

        doc, text, found = self._edit(ctx)
        shown = _shown(doc.path, ctx)
        if text is None or not found:
            return Outcome(False, f"no {self.what} in {shown}")
        try:
            new = remove(text, self.member(ctx), self.ours)
        except EditError as exc:
            raise ConfigError(doc.path, str(exc)) from None
        if new.strip() == CREATED_LINE:
            doc.delete()
        else:
            doc.write(new)
        return Outcome(True, f"removed {self.what} from {shown}")

    def _status(self, ctx: InstallContext) -> Status:
        try:
            doc, _, found = self._edit(ctx)
        except ConfigError as exc:
            return Status(WiringState.BROKEN, str(exc))
        shown = _shown(doc.path, ctx)
        if not found:
            return Status(WiringState.NOT_WIRED, shown)
        if found != [self.member(ctx).value]:
            return Status(WiringState.OUTDATED, f"{shown} records another funes command or memory")
        return Status(WiringState.WIRED, shown)


class HermesHookInstaller(_Entry, HookInstaller):
    """Adds funes' ``on_session_end`` shell hook to Hermes' config.yaml."""

    id = "hermes"
    label = "Hermes"
    contract_version = 1
    capabilities = Capabilities()

    what = f"the funes hook ({HOOK_EVENT})"

    def member(self, ctx: InstallContext) -> Member:
        from funes_hermes.yamledit import Member

        return Member(("hooks", HOOK_EVENT), None, {"command": shlex.join(hook_argv(ctx))})

    def ours(self, value: dict[str, Any]) -> bool:
        """funes-hermes' hook: it runs ``… hermes hook --funes-home DIR`` (extra settings allowed)."""
        command = value.get("command")
        if not isinstance(command, str):
            return False
        try:
            argv = shlex.split(command)
        except ValueError:
            return False
        return len(argv) >= 5 and argv[-4:-1] == ["hermes", "hook", "--funes-home"]

    def config_paths(self, ctx: InstallContext) -> list[Path]:
        return [_config(ctx)]

    def install(self, ctx: InstallContext) -> Outcome:
        outcome = self._put(ctx)
        if outcome.changed and not self._approved(ctx):
            return Outcome(
                True,
                outcome.summary + "; Hermes asks you to allow it the next time it starts at a terminal "
                "(or set hooks_auto_accept: true)",
            )
        return outcome

    def uninstall(self, ctx: InstallContext) -> Outcome:
        return self._drop(ctx)

    def status(self, ctx: InstallContext) -> Status:
        status = self._status(ctx)
        if status.state is WiringState.WIRED and not self._approved(ctx):
            return Status(
                status.state, status.detail + "; not yet allowed in Hermes, which asks at its next start"
            )
        return status

    def _approved(self, ctx: InstallContext) -> bool:
        """Whether Hermes will run the hook without asking: allow-listed, or hooks auto-accepted."""
        command = shlex.join(hook_argv(ctx))
        home = _config(ctx).parent
        try:
            data = json.loads((home / _ALLOWLIST).read_bytes())
        except (OSError, ValueError):
            data = {}
        approvals = data.get("approvals") if isinstance(data, dict) else None
        if isinstance(approvals, list) and any(
            isinstance(a, dict) and a.get("event") == HOOK_EVENT and a.get("command") == command
            for a in approvals
        ):
            return True
        return self._auto_accept(ctx)

    @staticmethod
    def _auto_accept(ctx: InstallContext) -> bool:
        from funes_hermes.yamledit import EditError, parse

        try:
            text = _ConfigFile(_config(ctx)).read()
            _, data = parse(text or "")
        except (ConfigError, EditError):
            return False
        value = data.get("hooks_auto_accept")
        if isinstance(value, str):
            return value.strip().lower() in {"1", "true", "yes", "on"}
        return value is True


class HermesToolRegistrar(_Entry, ToolRegistrar):
    """Adds ``mcp_servers.funes`` (``funes mcp [MEMORY]``, with FUNES_HOME) to Hermes' config.yaml."""

    id = "hermes"
    label = "Hermes"
    contract_version = 1
    capabilities = Capabilities()

    what = "the funes MCP server"

    def member(self, ctx: InstallContext) -> Member:
        from funes_hermes.yamledit import Member

        argv = ctx.mcp_command()
        value = {"command": argv[0], "args": argv[1:], "env": {"FUNES_HOME": str(ctx.funes_home)}}
        return Member(("mcp_servers",), SERVER_NAME, value)

    def ours(self, value: dict[str, Any]) -> bool:
        """funes-hermes' server: ``funes … mcp`` with FUNES_HOME, however the file was re-written since."""
        args, env = value.get("args"), value.get("env")
        return (
            set(value) <= {"command", "args", "env", "enabled"}
            and isinstance(value.get("command"), str)
            and isinstance(args, list)
            and "mcp" in args
            and isinstance(env, dict)
            and "FUNES_HOME" in env
        )

    def config_paths(self, ctx: InstallContext) -> list[Path]:
        return [_config(ctx)]

    def register(self, ctx: InstallContext) -> Outcome:
        return self._put(ctx)

    def unregister(self, ctx: InstallContext) -> Outcome:
        return self._drop(ctx)

    def status(self, ctx: InstallContext) -> Status:
        return self._status(ctx)

    def registered_command(self, ctx: InstallContext) -> list[str] | None:
        _, _, found = self._edit(ctx)
        if not found:
            return None
        value = found[0]
        return [value["command"], *(str(a) for a in value["args"])]
