"""funes: a verbatim, local-first, append-only memory of coding agents' past sessions.

This package's top level is the public API for plugin authors: a plugin imports only what is
listed in ``__all__`` here (the hook marker, the bases it subclasses, the turns model and its
atomic writer, the JSON config editor). Everything else (``funes_core.<room>.<module>``) is
internal and may move between releases; a lint rule (plugins/ruff.toml) refuses a plugin that
imports it. Imports stay light (no lancedb, fastembed, mcp or numpy) because plugins load on
every ``funes`` start, including every per-turn hook.

Where things live: docs/architecture.md.
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
from funes_core.host.configedit.json import (
    EditError,
    JsonFile,
    append_item,
    read_json_text,
    remove_items,
    remove_member,
    set_member,
    value_at,
    write_json_text,
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
    __version__ = version("funes-memory")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0"

__all__ = [
    "CONTRACT_VERSION",
    "Block",
    "Capabilities",
    "ConfigError",
    "Converter",
    "EditError",
    "HookInstaller",
    "InstallContext",
    "IntegrationError",
    "IntegrationPart",
    "JsonFile",
    "Outcome",
    "SessionRef",
    "SpoolWrite",
    "Status",
    "ToolRegistrar",
    "Turn",
    "TurnsFormatError",
    "WiringState",
    "__version__",
    "append_item",
    "atomic_write_text",
    "format_ts",
    "hookimpl",
    "load_schema",
    "parse_line",
    "read_json_text",
    "read_turns_file",
    "remove_items",
    "remove_member",
    "set_member",
    "spawn_detached",
    "turns_to_jsonl",
    "value_at",
    "write_json_text",
    "write_turns_file",
]
