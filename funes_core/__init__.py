"""funes: a verbatim, local-first, append-only memory of coding agents' past sessions.

This package's top level is the public API for plugin authors: a plugin imports only what is
listed in ``__all__`` here (the hook marker, the bases it subclasses, the turns model and its
atomic writer). Everything else is internal and may change between releases. Imports stay light
(no lancedb, fastembed or mcp) because plugins load on every ``funes`` start.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from funes_core.files import atomic_write_text
from funes_core.host.api import (
    CONTRACT_VERSION,
    Capabilities,
    ConfigError,
    Converter,
    HookInstaller,
    InstallContext,
    IntegrationError,
    IntegrationPart,
    Outcome,
    SessionRef,
    SpoolWrite,
    Status,
    ToolRegistrar,
    WiringState,
    spawn_detached,
)
from funes_core.host.hookspecs import hookimpl
from funes_core.turns.format import (
    Block,
    Turn,
    TurnsFormatError,
    format_ts,
    load_schema,
    parse_line,
    read_turns_file,
    turns_to_jsonl,
    write_turns_file,
)

try:
    __version__ = version("funes")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0"

__all__ = [
    "CONTRACT_VERSION",
    "Block",
    "Capabilities",
    "ConfigError",
    "Converter",
    "HookInstaller",
    "InstallContext",
    "IntegrationError",
    "IntegrationPart",
    "Outcome",
    "SessionRef",
    "SpoolWrite",
    "Status",
    "ToolRegistrar",
    "Turn",
    "TurnsFormatError",
    "WiringState",
    "__version__",
    "atomic_write_text",
    "format_ts",
    "hookimpl",
    "load_schema",
    "parse_line",
    "read_turns_file",
    "spawn_detached",
    "turns_to_jsonl",
    "write_turns_file",
]
