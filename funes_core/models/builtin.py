"""funes' own models plugin: the packaged MiniLM and fastembed's catalogue, registered like any plugin.

Registering the built-ins through the plugin manager (rather than special-casing them) means
``funes plugins`` lists them, a plugin's model name that clashes with one of them is refused by
the same rule, and the code that resolves a model name has one path for all of them.
"""

from __future__ import annotations

from collections.abc import Iterable

from funes_core.host.hookspecs import hookimpl
from funes_core.models.base import Embedder, Reranker

__all__ = ["funes_register_embedders", "funes_register_rerankers"]


@hookimpl
def funes_register_embedders() -> Iterable[type[Embedder]]:
    from funes_core.models.catalog import FastembedEmbedder
    from funes_core.models.embed import FastEmbedder

    return [FastEmbedder, FastembedEmbedder]


@hookimpl
def funes_register_rerankers() -> Iterable[type[Reranker]]:
    from funes_core.models.catalog import FastembedReranker

    return [FastembedReranker]
