"""funes' shell hook and MCP server in Hermes' ``config.yaml``, as the agent declares them.

What the declaration does not say: Hermes asks the user, once per command, to allow a new shell
hook (or accepts it when ``hooks_auto_accept: true``); funes never answers that question for them,
but install and status say whether it is still to be asked. Hermes may also re-write the file
(dropping funes' comment), so its entries are recognised by what they hold; and the hook that
funes-hermes 0.1 recorded (``funes hermes hook``) is still funes'.
"""

from __future__ import annotations

import json
import shlex
from typing import Any

from funes_core import (
    AgentHookInstaller,
    AgentToolRegistrar,
    ConfigError,
    InstallContext,
    Outcome,
    Status,
    WiringState,
    YamlFormat,
)
from funes_hermes.agent import HERMES, HOOK_MODULE

__all__ = ["HOOK_MODULE", "HermesHookInstaller", "HermesToolRegistrar"]

_ALLOWLIST = "shell-hooks-allowlist.json"


class HermesHookInstaller(AgentHookInstaller, agent=HERMES):
    """Adds funes' ``on_session_end`` shell hook to Hermes' config.yaml."""

    def ours(self, handler: Any) -> bool:
        """The declared rule, or the command funes-hermes 0.1 wrote (``funes hermes hook --funes-home D``)."""
        if super().ours(handler):
            return True
        command = handler.get("command") if isinstance(handler, dict) else None
        try:
            argv = shlex.split(command) if isinstance(command, str) else []
        except ValueError:
            return False
        return len(argv) >= 5 and argv[-4:-1] == ["hermes", "hook", "--funes-home"]

    def what(self, event: str | None) -> str:
        return f"the funes hook ({event})"

    def install(self, ctx: InstallContext) -> Outcome:
        outcome = self.put(ctx)
        if outcome.changed and not self._approved(ctx):
            return Outcome(
                True,
                outcome.summary + "; Hermes asks you to allow it the next time it starts at a terminal "
                "(or set hooks_auto_accept: true)",
            )
        return outcome

    def status(self, ctx: InstallContext) -> Status:
        status = super().status(ctx)
        if status.state is WiringState.WIRED and not self._approved(ctx):
            return Status(
                status.state, status.detail + "; not yet allowed in Hermes, which asks at its next start"
            )
        return status

    def _approved(self, ctx: InstallContext) -> bool:
        """Whether Hermes will run the hook without asking: allow-listed, or hooks auto-accepted."""
        command = shlex.join(ctx.hook_argv(HOOK_MODULE))
        try:
            data = json.loads((self.where("home", ctx) / _ALLOWLIST).read_bytes())
        except (OSError, ValueError):
            data = {}
        approvals = data.get("approvals") if isinstance(data, dict) else None
        if isinstance(approvals, list) and any(
            isinstance(a, dict) and a.get("event") in self.hooks.events and a.get("command") == command
            for a in approvals
        ):
            return True
        try:
            text = self.where("config", ctx).read_text(encoding="utf-8")
            value = YamlFormat().parse(text).get("hooks_auto_accept")
        except (OSError, ValueError, ConfigError):
            return False
        if isinstance(value, str):
            return value.strip().lower() in {"1", "true", "yes", "on"}
        return value is True


class HermesToolRegistrar(AgentToolRegistrar, agent=HERMES):
    """Adds ``mcp_servers.funes`` (``funes mcp [MEMORY]``, with FUNES_HOME) to Hermes' config.yaml."""

    def ours(self, value: Any) -> bool:
        """The declared rule, and what funes writes only: FUNES_HOME in ``env`` (and Hermes' ``enabled``)."""
        env = value.get("env") if isinstance(value, dict) else None
        return (
            super().ours(value)
            and set(value) <= {"command", "args", "env", "enabled"}
            and isinstance(env, dict)
            and "FUNES_HOME" in env
        )
