"""Import lancedb without building the REST namespace client's ~110 pydantic models nobody here uses.

Why. ``import lancedb`` imports ``lance_namespace``, whose ``__init__`` imports, one by one, the
request and response models of the Lance REST Namespace API from ``lance_namespace_urllib3_client``
(and that package's ``__init__`` imports its nine API clients and urllib3 first). A funes memory is
a folder or a bucket opened with ``lancedb.connect``; no namespace call is ever made. Those models
cost **26 MB of resident memory and about 0.4 s** (up to seconds under load) of every cold
``funes recall`` and of the MCP server's first call (measured: ``docs/benchmarks.md``).

How. Before lancedb is imported, :func:`install` puts two stand-in modules for the package and its
``models`` subpackage in :data:`sys.modules`. They point at the real folders, so any submodule
lancedb imports by its full name (it imports four model modules that way) is the real one, loaded
on its own. A name taken from ``models`` itself (what ``lance_namespace`` does for ~110 names)
is a placeholder class that turns into the real model the moment it is used: called, asked for
an attribute, or used in ``isinstance``. The real model's module is then imported alone. So
nothing changes for code that does use the namespace API; it only pays when it does.

Safety. Nothing is installed if the client is already imported, if it is not installed, if its
``models/__init__.py`` does not list its models the way this reads them (a future layout), or if
``FUNES_LAZY_NAMESPACE=0`` (the benchmark's comparison). The placeholder cannot be subclassed;
no code on lancedb's import path subclasses these models (tested by importing lancedb with it).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import re
import sys
import types
from pathlib import Path
from typing import Any

__all__ = ["PACKAGE", "install"]

PACKAGE = "lance_namespace_urllib3_client"
_ENV = "FUNES_LAZY_NAMESPACE"


class _Deferred(type):
    """The metaclass of a placeholder: every use is handed to the real model class."""

    _module: str

    def _funes_real(cls) -> Any:
        module = importlib.import_module(cls._module)
        return getattr(module, cls.__name__)

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        return cls._funes_real()(*args, **kwargs)

    def __getattr__(cls, attr: str) -> Any:
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        return getattr(cls._funes_real(), attr)

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, cls._funes_real())

    def __subclasscheck__(cls, sub: type) -> bool:
        return issubclass(sub, cls._funes_real())


def install() -> bool:
    """Put the stand-ins in place; True if they were installed now (see the module's docstring)."""
    if os.environ.get(_ENV, "1") == "0" or PACKAGE in sys.modules:
        return False
    try:
        spec = importlib.util.find_spec(PACKAGE)
    except (ImportError, ValueError):
        return False
    if spec is None or not spec.submodule_search_locations:
        return False
    root = Path(next(iter(spec.submodule_search_locations)))
    try:
        listing = (root / "models" / "__init__.py").read_text(encoding="utf-8")
    except OSError:
        return False
    where = {
        name: f"{PACKAGE}.models.{module}"
        for module, name in re.findall(rf"^from {PACKAGE}\.models\.(\w+) import (\w+)\s*$", listing, re.M)
    }
    if not where:
        return False

    package = types.ModuleType(PACKAGE, "Stand-in installed by funes_core.store.lazy_namespace.")
    package.__path__ = [str(root)]
    models = types.ModuleType(f"{PACKAGE}.models", "Stand-in: each model is imported when first used.")
    models.__path__ = [str(root / "models")]

    def placeholder(name: str) -> Any:
        if name not in where:
            raise AttributeError(f"module {PACKAGE}.models has no attribute {name!r}")
        made = _Deferred(name, (), {"_module": where[name], "__module__": where[name]})
        setattr(models, name, made)
        return made

    def real_package(name: str) -> Any:
        # Anything else of the package (its API clients, ApiClient, Configuration): the real one.
        for key, stand_in in ((f"{PACKAGE}.models", models), (PACKAGE, package)):
            if sys.modules.get(key) is stand_in:
                del sys.modules[key]
        return getattr(importlib.import_module(PACKAGE), name)

    models.__getattr__ = placeholder  # type: ignore[method-assign]
    package.__getattr__ = real_package  # type: ignore[method-assign]
    package.models = models  # type: ignore[attr-defined]
    sys.modules[PACKAGE] = package
    sys.modules[f"{PACKAGE}.models"] = models
    return True
