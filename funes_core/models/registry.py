"""Which embedder and reranker to use: model names resolved through the plugin manager.

The rules, in the order they apply:

- ``FUNES_EMBEDDER=hash`` (tests, benchmarks) uses the test double, as before.
- A model the user asks for (``funes index --model NAME``, or ``FUNES_MODEL=NAME``) is resolved
  among every embedder class the manager knows (the packaged MiniLM and fastembed's catalogue
  are registered by funes itself, plugins add theirs). Unknown name: one line naming close
  matches. If the memory was built with another model, that is refused with one line naming both
  (only ``funes index --rebuild --model NAME`` changes a memory's model).
- With no model asked for, a memory is read and extended with the model it is stamped with, so a
  memory rebuilt with another model keeps working without any setting.
- A new memory uses the packaged default.

Rerankers are off unless ``FUNES_RERANKER=NAME`` names one.

A plugin that fails to load or to register is skipped by the manager with one line naming it
(``funes: skipped plugin …``); everything here then works with what is left, the default first.
"""

from __future__ import annotations

import difflib
import os
import shlex
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from funes_core.models.base import (
    MODEL_CONTRACT_VERSION,
    Embedder,
    ModelError,
    ModelInfo,
    Reranker,
    UnknownModelError,
)

if TYPE_CHECKING:
    from funes_core.home import Home
    from funes_core.host.manager import FunesPluginManager
    from funes_core.models.vectors import ModelStamp

__all__ = [
    "MODEL_ENV",
    "RERANKER_ENV",
    "RERANK_TIMEOUT_ENV",
    "Provider",
    "choose_embedder",
    "configured_model",
    "configured_reranker",
    "declare_model_kinds",
    "manager",
    "providers",
    "register_models",
    "resolve_embedder",
    "resolve_reranker",
    "use_manager",
]

#: The embedding model to use for a new memory (and the one a memory must have been built with).
MODEL_ENV = "FUNES_MODEL"
#: The reranker model; unset (the default) means no reranking.
RERANKER_ENV = "FUNES_RERANKER"
#: Seconds a rerank may take before recall falls back to the fused order (default 5).
RERANK_TIMEOUT_ENV = "FUNES_RERANK_TIMEOUT"

_LOCK = threading.Lock()
_MANAGER: list[FunesPluginManager] = []


#: The model registration hooks: kind -> hook.
MODEL_HOOKS: dict[str, str] = {"embedder": "funes_register_embedders", "reranker": "funes_register_rerankers"}
#: The name funes' own models plugin (the packaged MiniLM, fastembed's catalogue) is registered under.
BUILTIN_MODELS = "funes-models"


def declare_model_kinds(pm: FunesPluginManager) -> None:
    """Teach ``pm`` what embedders and rerankers are (idempotent).

    The host knows models only through this declaration, so it never imports this room.
    """
    from funes_core.host.manager import ClassKind

    for kind, base in (("embedder", Embedder), ("reranker", Reranker)):
        pm.add_class_kind(kind, ClassKind(MODEL_HOOKS[kind], base, MODEL_CONTRACT_VERSION, BUILTIN_MODELS))


def register_models(pm: FunesPluginManager) -> None:
    """:func:`declare_model_kinds`, and funes' own models registered (idempotent): models go
    through the same manager as plugins."""
    from funes_core.models import builtin
    from funes_core.version import DISTRIBUTION, __version__

    declare_model_kinds(pm)
    if pm.plugin_info(BUILTIN_MODELS) is None:
        pm.register(builtin, BUILTIN_MODELS, dist=DISTRIBUTION, version=__version__)


def use_manager(pm: FunesPluginManager) -> None:
    """Resolve models through ``pm`` (the CLI passes the manager it built; tests pass their own)."""
    with _LOCK:
        _MANAGER[:] = [pm]
    register_models(pm)


def manager() -> FunesPluginManager:
    """The process's plugin manager, loaded on first use (the MCP server does not load plugins up front)."""
    with _LOCK:
        if not _MANAGER:
            from funes_core.host.manager import load_plugins

            _MANAGER.append(load_plugins())
        pm = _MANAGER[0]
    register_models(pm)
    return pm


@dataclass(frozen=True, slots=True)
class Provider:
    """One registered embedder or reranker class and where it comes from."""

    cls: type[Embedder] | type[Reranker]
    plugin: str
    origin: str

    def models(self) -> Sequence[ModelInfo]:
        """The class's models; a class that raises here is reported and treated as offering none."""
        try:
            return list(self.cls.models())
        # Broad on purpose: a plugin's catalogue must not break name resolution for the others.
        except Exception as exc:
            import sys

            sys.stderr.write(
                f"funes: {self.kind} {self.cls.id} from {self.origin} could not list its models: "
                f"{type(exc).__name__}: {exc} (report this to the plugin author)\n"
            )
            return []

    @property
    def kind(self) -> str:
        return "embedder" if issubclass(self.cls, Embedder) else "reranker"


def providers(kind: str, pm: FunesPluginManager | None = None) -> list[Provider]:
    """The usable embedder (``kind="embedder"``) or reranker classes, built-ins first."""
    pm = pm or manager()
    return [Provider(cls, info.name, info.origin) for cls, info in pm.classes(kind)]


def _resolve(kind: str, name: str, pm: FunesPluginManager | None) -> tuple[Provider, ModelInfo]:
    found: list[tuple[Provider, ModelInfo]] = []
    known: list[str] = []
    for provider in providers(kind, pm):
        for info in provider.models():
            known.append(info.name)
            if info.name == name:
                found.append((provider, info))
    if not found:
        near = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
        hint = f" (did you mean {', '.join(repr(n) for n in near)}?)" if near else ""
        raise UnknownModelError(
            f"no installed {kind} provides the model {name!r}{hint}; "
            "`funes models` lists the models you can use"
        )
    if len(found) > 1:
        origins = " and ".join(f"{p.cls.id} from {p.origin}" for p, _ in found)
        raise ModelError(f"the {kind} model {name!r} is offered by {origins}; uninstall one of them")
    return found[0]


def resolve_embedder(name: str, *, home: Home, pm: FunesPluginManager | None = None) -> Embedder:
    """An embedder for the model ``name`` (not loaded yet), or a one-line :class:`ModelError`."""
    from funes_core.models.embed import DEFAULT_ALIAS, MODEL_NAME, default_embedder

    if name in (MODEL_NAME, DEFAULT_ALIAS):  # the packaged default, without asking every plugin
        return default_embedder(home)
    provider, info = _resolve("embedder", name, pm)
    embedder = provider.cls.open(name, cache_dir=home.cache_dir)
    assert isinstance(embedder, Embedder)
    if embedder.dim != info.dim:
        raise ModelError(
            f"{provider.cls.id} from {provider.origin} lists {name!r} as {info.dim}-d but builds "
            f"{embedder.dim}-d vectors (report this to the plugin author)"
        )
    return embedder


def resolve_reranker(name: str, *, home: Home, pm: FunesPluginManager | None = None) -> Reranker:
    """A reranker for the model ``name`` (not loaded yet), or a one-line :class:`ModelError`."""
    provider, _ = _resolve("reranker", name, pm)
    reranker = provider.cls.open(name, cache_dir=home.cache_dir)
    assert isinstance(reranker, Reranker)
    return reranker


def configured_model() -> str | None:
    """``FUNES_MODEL``, when set."""
    return os.environ.get(MODEL_ENV, "").strip() or None


def configured_reranker() -> str | None:
    """``FUNES_RERANKER``, when set (rerankers are off by default)."""
    value = os.environ.get(RERANKER_ENV, "").strip()
    return value if value and value.lower() not in ("0", "off", "none") else None


def rerank_timeout() -> float:
    """``FUNES_RERANK_TIMEOUT`` in seconds (default 5)."""
    try:
        return max(0.0, float(os.environ.get(RERANK_TIMEOUT_ENV, "5")))
    except ValueError:
        return 5.0


def mismatch_message(label: str, stored: ModelStamp, wanted: ModelStamp, *, source: str) -> str:
    """The one line for a memory whose model is not the one asked for."""
    theirs, mine = stored.model, wanted.model
    if theirs == mine:
        theirs, mine = f"{theirs} ({stored.dim}-d)", f"{mine} ({wanted.dim}-d)"
    return (
        f"memory {label} was built with {theirs}, but {source} is {mine}; "
        f"re-embed it with `funes index --rebuild --model {shlex.quote(wanted.model)}`, "
        f"or drop {source.split('=')[0]}"
    )


def choose_embedder(
    home: Home,
    stored: ModelStamp | None,
    *,
    requested: str | None = None,
    label: str = "",
    pm: FunesPluginManager | None = None,
) -> Embedder:
    """The embedder for a memory stamped ``stored`` (``None``: new or unstamped), see the module rules.

    ``requested`` is ``--model``; without it ``FUNES_MODEL`` counts as the request.
    """
    from funes_core.models.embed import EMBEDDER_ENV, HashEmbedder, default_embedder

    if os.environ.get(EMBEDDER_ENV, "").strip().lower() == "hash":
        # The test switch still honours a memory's stamp: a memory built with another model is
        # refused exactly as it would be with that model's embedder missing.
        hashed = HashEmbedder()
        if stored is not None and stored != hashed.stamp:
            raise ModelError(
                mismatch_message(
                    label or str(home.memory_dir), stored, hashed.stamp, source=f"{EMBEDDER_ENV}=hash"
                )
            )
        return hashed
    # Ask every plugin for its embedders now, even when the default will do: a broken one is
    # then named once (``funes: skipped plugin …``) instead of failing silently later.
    providers("embedder", pm)
    source = "--model" if requested else f"{MODEL_ENV}={configured_model()}"
    requested = requested or configured_model()
    if requested:
        embedder = resolve_embedder(requested, home=home, pm=pm)
        if stored is not None and stored != embedder.stamp:
            raise ModelError(
                mismatch_message(label or str(home.memory_dir), stored, embedder.stamp, source=source)
            )
        return embedder
    if stored is None:
        return default_embedder(home)
    try:
        embedder = resolve_embedder(stored.model, home=home, pm=pm)
    except UnknownModelError:
        raise ModelError(
            f"memory {label or home.memory_dir} was built with {stored.model}, which no installed embedder "
            "provides (was its plugin removed?); install it again, or re-embed the memory with "
            "`funes index --rebuild --model NAME`"
        ) from None
    if embedder.dim != stored.dim:
        raise ModelError(
            f"memory {label or home.memory_dir} holds {stored.dim}-d vectors of {stored.model}, but the "
            f"installed {stored.model} makes {embedder.dim}-d vectors; re-embed it with "
            f"`funes index --rebuild --model {shlex.quote(stored.model)}`"
        )
    return embedder
