"""Wires funes into pi through a small pi extension (pi has no hooks and no MCP of its own).

The extension is a pi package shipped inside this distribution (``funes_pi/extension``), declared
as the agent's :class:`~funes_core.Package`. At install time the core copies it into
``$FUNES_HOME/integrations/pi-extension/`` with a ``funes.json`` beside it that records what it
should run, and adds that folder to the ``packages`` array of pi's ``settings.json``, exactly where
``pi install <dir>`` would record it (``pi list`` shows it; ``pi remove <dir>`` would drop it).
funes makes that edit itself rather than running ``pi install``, because pi's CLI rewrites the
whole settings file (and leaves an empty ``packages`` behind on removal): the user's bytes would
not survive.

The two parts share that extension and own one key each of ``funes.json``:

* :class:`PiHookInstaller` owns ``hook``: after every turn (``turn_end``) and when a session
  closes (``session_shutdown``), the extension starts ``funes integrations convert pi <session
  file> --index`` detached (the core's convert-under-lock, then an indexer);
* :class:`PiToolRegistrar` owns ``mcp``: the extension starts ``funes mcp [MEMORY]`` once over
  stdio and registers each tool it lists as a pi tool named ``mcp__funes__<tool>``.

Whichever part is installed first puts the extension in place; the last one removed takes it
away again, and with it the ``packages`` entry, so the user's ``settings.json`` gets its bytes back.
"""

from __future__ import annotations

from pathlib import Path

from funes_core import InstallContext, PackageHookInstaller, PackageToolRegistrar
from funes_pi.agent import PACKAGE, PI
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
EXTENSION_FILES = PACKAGE.files
#: The extension's configuration, written beside the package files.
CONFIG_NAME = PACKAGE.config
#: What the extension substitutes with the session file's path in the hook command.
SESSION_PLACEHOLDER = PACKAGE.placeholder
#: The prefix of the pi tool names under which funes' MCP tools are registered.
TOOL_PREFIX = PACKAGE.tool_prefix


class _PiSettings:
    """pi reads ``$PI_CODING_AGENT_DIR`` whatever the HOME, so its settings.json is found the same way."""

    def listing_path(self, ctx: InstallContext) -> Path:
        return settings_path(ctx.home, ctx.env())


class PiHookInstaller(_PiSettings, PackageHookInstaller, agent=PI):
    """Installs the extension's per-turn automation: convert the session, then index, detached."""


class PiToolRegistrar(_PiSettings, PackageToolRegistrar, agent=PI):
    """Records ``funes mcp [MEMORY]`` for the extension, which bridges its tools into pi."""


def extension_dir(ctx: InstallContext) -> Path:
    """Where the pi package is installed: ``$FUNES_HOME/integrations/pi-extension``."""
    return PiHookInstaller().package_dir(ctx)


def hook_command(ctx: InstallContext) -> list[str]:
    """What the extension runs after each turn: convert the session into the spool, then index."""
    return PiHookInstaller().hook_command(ctx)
