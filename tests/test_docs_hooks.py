"""Hooks, their docs and their tests stay in lockstep; the plugin docs cover the public API.

* every hookspec has a heading in docs/plugins/hooks.md equal to its signature, built from the
  spec (and no heading names a hook that does not exist);
* every hookspec has a ``test_hook_<name>`` test in tests/test_plugins.py;
* every name in ``funes_core.__all__`` is described in docs/plugins/types.md;
* relative links in docs/plugins/*.md point at files that exist.
"""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

import funes_core
from funes_core.host import hookspecs
from funes_core.host.manager import FunesPluginManager

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs" / "plugins"


def hook_signatures() -> dict[str, str]:
    """name -> ``name(arg: Type, ...) -> Return``, from the registered hookspecs."""
    pm = FunesPluginManager(environ={})
    out = {}
    for name in sorted(vars(pm.pm.hook)):
        if name.startswith("_"):
            continue
        caller = getattr(pm.pm.hook, name)
        spec = caller.spec
        assert spec is not None, name
        annotations = inspect.get_annotations(spec.function)
        args = ", ".join(f"{arg}: {annotations[arg]}" for arg in spec.argnames)
        out[name] = f"{name}({args}) -> {annotations['return']}"
    return out


def test_every_hook_is_specified_in_hookspecs() -> None:
    declared = {name for name in dir(hookspecs) if name.startswith("funes_")}
    assert set(hook_signatures()) == declared
    assert declared == {
        "funes_register_converters",
        "funes_register_hook_installers",
        "funes_register_tool_registrars",
        "funes_register_commands",
        "funes_register_embedders",
        "funes_register_rerankers",
    }


def test_every_hook_has_a_heading_equal_to_its_signature() -> None:
    text = (DOCS / "hooks.md").read_text(encoding="utf-8")
    headings = re.findall(r"^## (funes_\S+\(.*)$", text, re.M)
    assert sorted(headings) == sorted(hook_signatures().values())


def test_every_hook_has_a_test() -> None:
    tree = ast.parse((REPO / "tests" / "test_plugins.py").read_text(encoding="utf-8"))
    tests = {node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)}
    for name in hook_signatures():
        assert any(t == f"test_hook_{name}" or t.startswith(f"test_hook_{name}_") for t in tests), name


def test_every_hookspec_documents_itself_with_an_example() -> None:
    for name in hook_signatures():
        doc = inspect.getdoc(getattr(hookspecs, name)) or ""
        assert "Example::" in doc and "@hookimpl" in doc and ".. versionadded::" in doc, name


def test_the_public_api_is_described_in_types_md() -> None:
    text = (DOCS / "types.md").read_text(encoding="utf-8")
    for name in funes_core.__all__:
        if name == "__version__":
            continue
        assert re.search(rf"^## {re.escape(name)}$", text, re.M), f"types.md has no section for {name}"


def test_relative_links_in_plugin_docs_resolve() -> None:
    for page in [*DOCS.glob("*.md"), REPO / "COMMUNITY.md", REPO / "plugins" / "funes-echo" / "README.md"]:
        for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", page.read_text(encoding="utf-8")):
            resolved = (page.parent / target).resolve()
            if resolved.is_relative_to(REPO / "plugins") and not resolved.is_relative_to(
                REPO / "plugins" / "funes-echo"
            ):
                continue  # first-party plugins other than echo are written alongside this work
            assert resolved.exists(), f"{page.relative_to(REPO)} links to missing {target}"


def test_the_import_block_of_types_md_names_every_exported_name() -> None:
    text = (DOCS / "types.md").read_text(encoding="utf-8")
    block = text.split("```python", 1)[1].split("```", 1)[0]
    imported = set(re.findall(r"\b\w+\b", block))
    missing = [name for name in funes_core.__all__ if name != "__version__" and name not in imported]
    assert missing == [], f"types.md's import block leaves out {missing}"


def test_the_mutators_are_documented_with_the_signatures_the_kit_calls() -> None:
    """testing.md and the scaffold's fixtures package say what the kit really calls (issue 28)."""
    from funes_contracts.converter import ConverterContract

    testing = (DOCS / "testing.md").read_text(encoding="utf-8")
    scaffold = REPO / "funes_core" / "host" / "scaffold" / "template" / "src"
    template = (scaffold / "contract_fixtures" / "__init__.py.tmpl").read_text(encoding="utf-8")
    for name in ("make_earlier", "make_torn", "make_corrupt", "make_long"):
        params = [p for p in inspect.signature(getattr(ConverterContract, name)).parameters if p != "self"]
        shown = f"{name}({', '.join(params)})"
        assert f"`{shown}`" in testing, f"testing.md does not show {shown}"
        assert f"{shown} -> bool" in template.replace("\n", " ").replace("``", ""), (
            f"the scaffold does not show {shown}"
        )
