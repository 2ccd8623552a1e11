"""The public plugin API (``funes_core``'s top level): declared once, loaded lazily, pared.

Its names are written once, in the ``if TYPE_CHECKING:`` block of ``funes_core/__init__.py``, which
the type checkers read and which the package reads back at run time to load each name on first use.
"""

from __future__ import annotations

import ast
import importlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import funes_core

INIT = Path(funes_core.__file__)

#: Taken out of the API (CHANGELOG.md): no plugin and no kit used them.
REMOVED = (
    "CONTRACT_VERSION",
    "DISTRIBUTION",
    "KIT_DISTRIBUTION",
    "ModelError",
    "UnknownModelError",
    "load_schema",
    "spawn_detached",
    "append_item",
    "set_member",
    "remove_member",
    "write_json_text",
)


def test_each_public_name_is_written_on_one_line_of_the_package() -> None:
    text = INIT.read_text(encoding="utf-8")
    after_docstring = ast.parse(text).body[0].end_lineno
    code = [line for line in text.splitlines()[after_docstring:] if not line.lstrip().startswith("#")]
    for name in funes_core._declared(str(INIT)):
        lines = [line for line in code if re.search(rf"\b{re.escape(name)}\b", line)]
        assert len(lines) == 1, f"{name} is written on {len(lines)} lines: {lines}"


def test_each_public_name_is_the_object_its_declaration_names() -> None:
    where = funes_core._declared(str(INIT))
    assert sorted([*where, "__version__", "lazy_exports"]) == funes_core.__all__
    assert len(where) >= 60
    for name, (module, attr) in where.items():
        assert getattr(funes_core, name) is getattr(importlib.import_module(module), attr), name
    assert where["run_hook"] == ("funes_core.wiring.hookrt", "main")
    assert where["HookSources"] == ("funes_core.wiring.hookrt", "Sources")


def test_removed_names_are_gone() -> None:
    for name in REMOVED:
        assert name not in funes_core.__all__
        assert not hasattr(funes_core, name), name


def test_a_hook_importing_the_runtime_loads_the_standard_library_only() -> None:
    probe = (
        "import json, sys\n"
        "from funes_core import HookSources, run_hook\n"
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules} - set(sys.stdlib_module_names))))\n"
    )
    done = subprocess.run([sys.executable, "-I", "-c", probe], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == ["__main__", "funes_core"]


def test_a_plugin_package_declares_its_lazy_names_once_with_lazy_exports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "acme_probe"
    package.mkdir()
    (package / "__init__.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "from funes_core import lazy_exports\n"
        "if TYPE_CHECKING:\n"
        "    from acme_probe.heavy import Thing as Thing\n"
        "    from acme_probe.heavy import helper\n"
        "    shortcut = helper\n"
        "__getattr__, __dir__ = lazy_exports(__name__, __file__)\n",
        encoding="utf-8",
    )
    (package / "heavy.py").write_text(
        "class Thing: ...\n\ndef helper() -> int:\n    return 7\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        probe = importlib.import_module("acme_probe")
        assert "acme_probe.heavy" not in sys.modules  # nothing loads before a name is asked for
        assert probe.__all__ == ["Thing", "shortcut"]
        assert probe.Thing.__module__ == "acme_probe.heavy" and probe.shortcut() == 7
        assert "helper" not in dir(probe) and "Thing" in dir(probe)
        with pytest.raises(AttributeError, match="module 'acme_probe' has no attribute 'missing'"):
            _ = probe.missing
    finally:
        for name in ("acme_probe", "acme_probe.heavy"):
            sys.modules.pop(name, None)
