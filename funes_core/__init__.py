"""funes: a verbatim, local-first, append-only memory of coding agents' past sessions.

This package's top level is the public API for plugin authors: a plugin imports only what is
listed in ``__all__`` here (the hook marker, the bases it subclasses, the identity and helpers it
builds on, the config-file editors, the hook runtime, the turns model and its atomic writer).
Everything else (``funes_core.<room>.<module>``) is internal and may move between releases; a
lint rule (plugins/ruff.toml) refuses a plugin that imports it.

The names are loaded lazily (PEP 562): importing ``funes_core`` itself costs nothing, and each
name loads only the module it lives in. So a per-turn hook can say ``from funes_core import
run_hook`` and pay for the standard library only (the hook runtime and the identity module import
nothing else), on every turn of every agent, while ``from funes_core import Converter`` works as
usual. No name here pulls in lancedb, fastembed, mcp or numpy.

Where things live: docs/architecture.md.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from funes_core.version import DISTRIBUTION, KIT_DISTRIBUTION, __version__

if TYPE_CHECKING:
    from funes_core.files import (
        atomic_write_text,
    )
    from funes_core.host.agent import (
        Agent,
        Hooks,
        Location,
        McpServer,
        PluginFile,
        Resolved,
        Slot,
    )
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
    )
    from funes_core.host.hookspecs import (
        hookimpl,
    )
    from funes_core.host.registration import (
        integration_hooks,
    )
    from funes_core.host.transcripts import (
        FunctionCall,
        JsonLines,
        Skipped,
        clean_id,
        clean_text,
        compact_json,
        export_problem,
        function_call,
        is_blank,
        parse_ts,
        read_json_array,
        read_json_lines,
    )
    from funes_core.models.base import (
        Embedder,
        ModelError,
        ModelInfo,
        ModelUnavailableError,
        Reranker,
        UnknownModelError,
    )
    from funes_core.turns.format import (
        Block,
        Turn,
        TurnsFormatError,
        format_ts,
        load_schema,
        parse_line,
        read_turns_file,
        safe_id,
        turns_to_jsonl,
        write_turns_file,
    )
    from funes_core.wiring.configedit.base import (
        EditError,
        Place,
    )
    from funes_core.wiring.configedit.json import (
        JsonFormat,
        append_item,
        read_json_text,
        remove_items,
        remove_member,
        set_member,
        value_at,
        write_json_text,
    )
    from funes_core.wiring.configedit.managed import (
        ManagedEntry,
        ManagedWiring,
        runs_module,
    )
    from funes_core.wiring.configedit.toml import (
        TomlFormat,
    )
    from funes_core.wiring.configedit.yaml import (
        YamlFormat,
    )
    from funes_core.wiring.declared import (
        AgentHookInstaller,
        AgentToolRegistrar,
    )
    from funes_core.wiring.hookrt import Sources as HookSources
    from funes_core.wiring.hookrt import main as run_hook
    from funes_core.wiring.hookrt import spawn_detached
    from funes_core.wiring.pluginfile import PluginFileInstaller

_WHERE: dict[str, tuple[str, str]] = {
    "atomic_write_text": ("funes_core.files", "atomic_write_text"),
    "Agent": ("funes_core.host.agent", "Agent"),
    "Hooks": ("funes_core.host.agent", "Hooks"),
    "Location": ("funes_core.host.agent", "Location"),
    "McpServer": ("funes_core.host.agent", "McpServer"),
    "PluginFile": ("funes_core.host.agent", "PluginFile"),
    "Slot": ("funes_core.host.agent", "Slot"),
    "AgentHookInstaller": ("funes_core.wiring.declared", "AgentHookInstaller"),
    "AgentToolRegistrar": ("funes_core.wiring.declared", "AgentToolRegistrar"),
    "PluginFileInstaller": ("funes_core.wiring.pluginfile", "PluginFileInstaller"),
    "Resolved": ("funes_core.host.agent", "Resolved"),
    "CONTRACT_VERSION": ("funes_core.host.api", "CONTRACT_VERSION"),
    "Capabilities": ("funes_core.host.api", "Capabilities"),
    "ConfigError": ("funes_core.host.api", "ConfigError"),
    "Converter": ("funes_core.host.api", "Converter"),
    "HookInstaller": ("funes_core.host.api", "HookInstaller"),
    "InstallContext": ("funes_core.host.api", "InstallContext"),
    "IntegrationError": ("funes_core.host.api", "IntegrationError"),
    "IntegrationPart": ("funes_core.host.api", "IntegrationPart"),
    "Outcome": ("funes_core.host.api", "Outcome"),
    "SessionRef": ("funes_core.host.api", "SessionRef"),
    "SpoolWrite": ("funes_core.host.api", "SpoolWrite"),
    "Status": ("funes_core.host.api", "Status"),
    "ToolRegistrar": ("funes_core.host.api", "ToolRegistrar"),
    "WiringState": ("funes_core.host.api", "WiringState"),
    "spawn_detached": ("funes_core.wiring.hookrt", "spawn_detached"),
    "EditError": ("funes_core.wiring.configedit.base", "EditError"),
    "Place": ("funes_core.wiring.configedit.base", "Place"),
    "JsonFormat": ("funes_core.wiring.configedit.json", "JsonFormat"),
    "append_item": ("funes_core.wiring.configedit.json", "append_item"),
    "read_json_text": ("funes_core.wiring.configedit.json", "read_json_text"),
    "remove_items": ("funes_core.wiring.configedit.json", "remove_items"),
    "remove_member": ("funes_core.wiring.configedit.json", "remove_member"),
    "set_member": ("funes_core.wiring.configedit.json", "set_member"),
    "value_at": ("funes_core.wiring.configedit.json", "value_at"),
    "write_json_text": ("funes_core.wiring.configedit.json", "write_json_text"),
    "ManagedEntry": ("funes_core.wiring.configedit.managed", "ManagedEntry"),
    "ManagedWiring": ("funes_core.wiring.configedit.managed", "ManagedWiring"),
    "runs_module": ("funes_core.wiring.configedit.managed", "runs_module"),
    "TomlFormat": ("funes_core.wiring.configedit.toml", "TomlFormat"),
    "YamlFormat": ("funes_core.wiring.configedit.yaml", "YamlFormat"),
    "HookSources": ("funes_core.wiring.hookrt", "Sources"),
    "run_hook": ("funes_core.wiring.hookrt", "main"),
    "hookimpl": ("funes_core.host.hookspecs", "hookimpl"),
    "integration_hooks": ("funes_core.host.registration", "integration_hooks"),
    "JsonLines": ("funes_core.host.transcripts", "JsonLines"),
    "Skipped": ("funes_core.host.transcripts", "Skipped"),
    "clean_id": ("funes_core.host.transcripts", "clean_id"),
    "clean_text": ("funes_core.host.transcripts", "clean_text"),
    "compact_json": ("funes_core.host.transcripts", "compact_json"),
    "FunctionCall": ("funes_core.host.transcripts", "FunctionCall"),
    "function_call": ("funes_core.host.transcripts", "function_call"),
    "is_blank": ("funes_core.host.transcripts", "is_blank"),
    "parse_ts": ("funes_core.host.transcripts", "parse_ts"),
    "read_json_lines": ("funes_core.host.transcripts", "read_json_lines"),
    "read_json_array": ("funes_core.host.transcripts", "read_json_array"),
    "export_problem": ("funes_core.host.transcripts", "export_problem"),
    "Embedder": ("funes_core.models.base", "Embedder"),
    "ModelError": ("funes_core.models.base", "ModelError"),
    "ModelInfo": ("funes_core.models.base", "ModelInfo"),
    "ModelUnavailableError": ("funes_core.models.base", "ModelUnavailableError"),
    "Reranker": ("funes_core.models.base", "Reranker"),
    "UnknownModelError": ("funes_core.models.base", "UnknownModelError"),
    "Block": ("funes_core.turns.format", "Block"),
    "Turn": ("funes_core.turns.format", "Turn"),
    "TurnsFormatError": ("funes_core.turns.format", "TurnsFormatError"),
    "format_ts": ("funes_core.turns.format", "format_ts"),
    "load_schema": ("funes_core.turns.format", "load_schema"),
    "parse_line": ("funes_core.turns.format", "parse_line"),
    "read_turns_file": ("funes_core.turns.format", "read_turns_file"),
    "safe_id": ("funes_core.turns.format", "safe_id"),
    "turns_to_jsonl": ("funes_core.turns.format", "turns_to_jsonl"),
    "write_turns_file": ("funes_core.turns.format", "write_turns_file"),
}

__all__ = [
    "CONTRACT_VERSION",
    "DISTRIBUTION",
    "KIT_DISTRIBUTION",
    "Agent",
    "AgentHookInstaller",
    "AgentToolRegistrar",
    "Block",
    "Capabilities",
    "ConfigError",
    "Converter",
    "EditError",
    "Embedder",
    "FunctionCall",
    "HookInstaller",
    "HookSources",
    "Hooks",
    "InstallContext",
    "IntegrationError",
    "IntegrationPart",
    "JsonFormat",
    "JsonLines",
    "Location",
    "ManagedEntry",
    "ManagedWiring",
    "McpServer",
    "ModelError",
    "ModelInfo",
    "ModelUnavailableError",
    "Outcome",
    "Place",
    "PluginFile",
    "PluginFileInstaller",
    "Reranker",
    "Resolved",
    "SessionRef",
    "Skipped",
    "Slot",
    "SpoolWrite",
    "Status",
    "TomlFormat",
    "ToolRegistrar",
    "Turn",
    "TurnsFormatError",
    "UnknownModelError",
    "WiringState",
    "YamlFormat",
    "__version__",
    "append_item",
    "atomic_write_text",
    "clean_id",
    "clean_text",
    "compact_json",
    "export_problem",
    "format_ts",
    "function_call",
    "hookimpl",
    "integration_hooks",
    "is_blank",
    "load_schema",
    "parse_line",
    "parse_ts",
    "read_json_array",
    "read_json_lines",
    "read_json_text",
    "read_turns_file",
    "remove_items",
    "remove_member",
    "run_hook",
    "runs_module",
    "safe_id",
    "set_member",
    "spawn_detached",
    "turns_to_jsonl",
    "value_at",
    "write_json_text",
    "write_turns_file",
]


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        module, attr = _WHERE[name]
        value: Any = getattr(importlib.import_module(module), attr)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
