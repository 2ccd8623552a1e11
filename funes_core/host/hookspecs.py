"""The hooks a funes plugin may implement (pluggy project ``funes``, entry-point group ``funes``).

Every hook is prefixed ``funes_`` so it is greppable and a module can serve several hosts. The
registration hooks return *classes* built on the bases in :mod:`funes_core.host.api`; the
host validates them (id, label, contract version, not abstract) before anything runs them.

Hooks evolve the pluggy way: parameters may be added, never removed or renamed, and an
implementation may accept any subset of them. Each hook has a section in
``docs/plugins/hooks.md`` whose heading is its exact signature, and a ``test_hook_<name>`` test
(both enforced by ``tests/test_docs_hooks.py``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    import typer

    from funes_core.host.api import Converter, HookInstaller, ToolRegistrar
    from funes_core.models.base import Embedder, Reranker

__all__ = [
    "PROJECT",
    "funes_register_commands",
    "funes_register_converters",
    "funes_register_embedders",
    "funes_register_hook_installers",
    "funes_register_rerankers",
    "funes_register_tool_registrars",
    "hookimpl",
    "hookspec",
]

#: The pluggy project name, and the entry-point group plugins declare.
PROJECT = "funes"

hookspec = pluggy.HookspecMarker(PROJECT)
#: Decorate a plugin's hook implementations with this (re-exported as ``funes_core.hookimpl``).
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def funes_register_converters() -> Iterable[type[Converter]]:
    """Return the :class:`~funes_core.Converter` classes this plugin provides.

    A converter finds an agent's sessions on this machine and converts one into turns. funes
    calls it to seed the spool at ``funes integrations install``, from the per-turn hook, and
    for ``funes integrations convert``.

    :return: an iterable of converter *classes* (not instances); each declares ``id``,
        ``label`` and ``contract_version = 2`` (explicitly). Two distributions claiming one id are refused.

    .. versionadded:: 0.1 (contract 1)

    Example::

        from funes_core import hookimpl

        @hookimpl
        def funes_register_converters():
            from funes_echo.converter import EchoConverter

            return [EchoConverter]
    """
    raise NotImplementedError


@hookspec
def funes_register_hook_installers() -> Iterable[type[HookInstaller]]:
    """Return the :class:`~funes_core.HookInstaller` classes this plugin provides.

    A hook installer wires per-turn automation into the agent's own config so each turn is
    converted into the spool and indexed in the background. funes calls ``install`` at
    ``funes integrations install``, ``uninstall`` at ``remove`` and ``status`` at ``list``.

    :return: an iterable of installer classes, each with the same ``id`` as the converter.

    .. versionadded:: 0.1 (contract 1)

    Example::

        from funes_core import hookimpl

        @hookimpl
        def funes_register_hook_installers():
            from funes_echo.wiring import EchoHookInstaller

            return [EchoHookInstaller]
    """
    raise NotImplementedError


@hookspec
def funes_register_tool_registrars() -> Iterable[type[ToolRegistrar]]:
    """Return the :class:`~funes_core.ToolRegistrar` classes this plugin provides.

    A tool registrar registers ``funes mcp [MEMORY]`` as an MCP server with the agent
    (preferring the agent's own CLI, falling back to its config file), so the agent can call
    ``recall`` and friends.

    :return: an iterable of registrar classes, each with the same ``id`` as the converter.

    .. versionadded:: 0.1 (contract 1)

    Example::

        from funes_core import hookimpl

        @hookimpl
        def funes_register_tool_registrars():
            from funes_echo.wiring import EchoToolRegistrar

            return [EchoToolRegistrar]
    """
    raise NotImplementedError


@hookspec
def funes_register_commands(app: typer.Typer) -> None:
    """Add CLI commands to ``funes``, namespaced under your integration id.

    Called once while the app is built, after the core verbs are mounted. Add a sub-app named
    after your id rather than loose commands; a command that would shadow a core verb (or
    another plugin's) is refused and the plugin skipped. Import heavy libraries inside your
    commands, never at module level: this hook runs on every ``funes`` start.

    :param app: the ``typer.Typer`` application being built.

    .. versionadded:: 0.1 (contract 1)

    Example::

        from funes_core import hookimpl

        @hookimpl
        def funes_register_commands(app):
            import typer

            echo_app = typer.Typer(help="Commands of the echo integration.")

            @echo_app.command()
            def where() -> None:
                typer.echo("~/.echo/sessions")

            app.add_typer(echo_app, name="echo")
    """
    raise NotImplementedError


@hookspec
def funes_register_embedders() -> Iterable[type[Embedder]]:
    """Return the :class:`~funes_core.Embedder` classes this plugin provides.

    An embedder class lists the models it can load (``models()``); users pick one with
    ``funes index --rebuild --model NAME`` (or ``FUNES_MODEL``), and its name and dimension are
    stamped into the memory. funes registers its own packaged MiniLM (id ``minilm``) and
    fastembed's catalogue (id ``fastembed``) through this same hook.

    :return: an iterable of embedder *classes*; each declares ``id``, ``label`` and
        ``contract_version = 1``. A model name offered by two classes is refused, naming both.

    .. versionadded:: 0.2 (model contract 1)

    Example::

        from funes_core import hookimpl

        @hookimpl
        def funes_register_embedders():
            from funes_echo.models import EchoEmbedder

            return [EchoEmbedder]
    """
    raise NotImplementedError


@hookspec
def funes_register_rerankers() -> Iterable[type[Reranker]]:
    """Return the :class:`~funes_core.Reranker` classes this plugin provides.

    A reranker scores (query, passage) pairs to reorder recall's best fused candidates. None runs
    unless the user names a model with ``FUNES_RERANKER``; funes registers fastembed's
    cross-encoder catalogue (id ``fastembed``) through this same hook.

    :return: an iterable of reranker classes; each declares ``id``, ``label`` and
        ``contract_version = 1``.

    .. versionadded:: 0.2 (model contract 1)

    Example::

        from funes_core import hookimpl

        @hookimpl
        def funes_register_rerankers():
            from funes_echo.models import EchoReranker

            return [EchoReranker]
    """
    raise NotImplementedError
