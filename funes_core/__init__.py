"""funes: a verbatim, local-first, append-only memory of coding agents' past sessions.

This package's top level is the public API for plugin authors: a plugin imports only what is
listed in ``__all__`` here (the hook marker, the bases it subclasses, the identity and helpers it
builds on, the config-file editors, the hook runtime, the turns model and its atomic writer, and
:func:`lazy_exports`, the loader of this very list, for a plugin's own package).
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

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from funes_core.version import __version__ as __version__

# The public API, declared once: type checkers read these imports (``X as X`` re-exports a name; an
# assignment exports the name it binds), and at run time :func:`_where` reads the same lines back
# from this file to load a name lazily.
if TYPE_CHECKING:
    # One import per module, each name ``as`` itself: the sorter would split them one a line.
    # isort: off
    from funes_core.files import (
        atomic_write_text as atomic_write_text,
        missing_dirs as missing_dirs,
    )
    from funes_core.host.agent import (
        Agent as Agent,
        Hooks as Hooks,
        Location as Location,
        McpServer as McpServer,
        Package as Package,
        PluginFile as PluginFile,
        Resolved as Resolved,
        Slot as Slot,
    )
    from funes_core.host.api import (
        Capabilities as Capabilities,
        ConfigError as ConfigError,
        Converter as Converter,
        HookInstaller as HookInstaller,
        InstallContext as InstallContext,
        IntegrationError as IntegrationError,
        IntegrationPart as IntegrationPart,
        Outcome as Outcome,
        SessionRef as SessionRef,
        SpoolWrite as SpoolWrite,
        Status as Status,
        ToolRegistrar as ToolRegistrar,
        WiringState as WiringState,
    )
    from funes_core.host.hookspecs import (
        hookimpl as hookimpl,
    )
    from funes_core.host.registration import (
        integration_hooks as integration_hooks,
    )
    from funes_core.host.transcripts import (
        FunctionCall as FunctionCall,
        JsonLines as JsonLines,
        RecordTurns as RecordTurns,
        Skipped as Skipped,
        anthropic_blocks as anthropic_blocks,
        clean_id as clean_id,
        clean_text as clean_text,
        compact_json as compact_json,
        export_problem as export_problem,
        function_call as function_call,
        is_blank as is_blank,
        parse_ts as parse_ts,
        read_json_array as read_json_array,
        read_json_lines as read_json_lines,
        sqlite_readonly as sqlite_readonly,
    )
    from funes_core.models.base import (
        Embedder as Embedder,
        ModelInfo as ModelInfo,
        ModelUnavailableError as ModelUnavailableError,
        Reranker as Reranker,
    )
    from funes_core.turns.format import (
        Block as Block,
        Turn as Turn,
        TurnsFormatError as TurnsFormatError,
        format_ts as format_ts,
        parse_line as parse_line,
        read_turns_file as read_turns_file,
        safe_id as safe_id,
        turns_to_jsonl as turns_to_jsonl,
        write_turns_file as write_turns_file,
    )
    from funes_core.wiring.configedit.base import (
        EditError as EditError,
        Place as Place,
    )
    from funes_core.wiring.configedit.json import (
        JsonFormat as JsonFormat,
        read_json_text as read_json_text,
        remove_items as remove_items,
        value_at as value_at,
    )
    from funes_core.wiring.configedit.managed import (
        ManagedEntry as ManagedEntry,
        ManagedWiring as ManagedWiring,
        runs_module as runs_module,
    )
    from funes_core.wiring.configedit.toml import (
        TomlFormat as TomlFormat,
    )
    from funes_core.wiring.configedit.yaml import (
        YamlFormat as YamlFormat,
    )
    from funes_core.wiring.declared import (
        AgentHookInstaller as AgentHookInstaller,
        AgentToolRegistrar as AgentToolRegistrar,
    )
    from funes_core.wiring.pluginfile import (
        PackageHookInstaller as PackageHookInstaller,
        PackageToolRegistrar as PackageToolRegistrar,
        PluginFileInstaller as PluginFileInstaller,
    )
    from funes_core.wiring.hookrt import Sources, main

    HookSources = Sources
    run_hook = main
    # isort: on


def _declared(path: str) -> dict[str, tuple[str, str]]:
    """``name -> (module, attribute)`` for what the ``if TYPE_CHECKING:`` block of ``path`` exports.

    A name is exported when the block imports it ``as`` itself, or binds it by an assignment from
    a name it imports (``alias = name``); the block is the one place the names are written.
    Parsing one small file costs about 2 ms (``ast`` and its parse), once per process, on the
    first name a process asks for.
    """
    import ast

    with open(path, encoding="utf-8") as source:
        tree = ast.parse(source.read())
    [block] = [
        node
        for node in tree.body
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"
    ]
    imported: dict[str, tuple[str, str]] = {}
    exported: dict[str, tuple[str, str]] = {}
    for node in block.body:
        if isinstance(node, ast.ImportFrom) and node.module is not None:
            for alias in node.names:
                imported[alias.asname or alias.name] = (node.module, alias.name)
                if alias.asname == alias.name:
                    exported[alias.name] = (node.module, alias.name)
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Name):
            for target in node.targets:
                assert isinstance(target, ast.Name)
                exported[target.id] = imported[node.value.id]
    return exported


def lazy_exports(module: str, path: str, *own: str) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of a package whose public names load on first use (PEP 562).

    Write ``__getattr__, __dir__ = lazy_exports(__name__, __file__)`` below an ``if TYPE_CHECKING:``
    block that imports each public name ``as`` itself: type checkers read the block, and the
    package reads the same lines back, so the names are written once and importing the package
    costs nothing until a name is asked for. ``__all__`` is the block's names plus ``own``, the
    public names the package defines itself. funes_core declares its API this way.
    """
    import sys

    table: dict[str, tuple[str, str]] = {}

    def getattr_(name: str) -> Any:
        if not table:
            table.update(_declared(path))
        if name == "__all__":
            value: Any = sorted([*table, *own])
        elif name in table:
            import importlib

            where, attr = table[name]
            value = getattr(importlib.import_module(where), attr)
        else:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        vars(sys.modules[module])[name] = value  # later look-ups skip this function
        return value

    def dir_() -> list[str]:
        return sorted({*vars(sys.modules[module]), *getattr_("__all__")})

    return getattr_, dir_


__getattr__, __dir__ = lazy_exports(__name__, __file__, "__version__", "lazy_exports")
