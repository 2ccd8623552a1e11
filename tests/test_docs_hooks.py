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


# -- the contract version and the signatures the docs show (issue 28) -----------------------------


def _sections(text: str) -> dict[str, str]:
    """Heading text (``##`` and ``###``) -> the section's body, for one page."""
    out: dict[str, str] = {}
    current = None
    for line in text.splitlines(keepends=True):
        heading = re.match(r"^#{2,3} (.+)$", line)
        if heading:
            current = heading.group(1).strip()
            out[current] = ""
        elif current is not None:
            out[current] += line
    return out


def _call_args(text: str, start: int) -> str:
    """The text between the parenthesis at ``start`` and the one that closes it."""
    depth = 0
    for end in range(start, len(text)):
        depth += {"(": 1, ")": -1}.get(text[end], 0)
        if depth == 0:
            return text[start + 1 : end]
    raise AssertionError(f"unbalanced parenthesis in {text[start : start + 80]!r}")


def _documented(args: str) -> list[tuple[str, str | None]]:
    """``path, pattern="*.jsonl", *, mtime=None`` -> ``[("path", None), ("pattern", '"*.jsonl"'), ...]``."""
    pieces, depth, current = [], 0, ""
    for char in args:
        depth += {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}.get(char, 0)
        if char == "," and depth == 0:
            pieces.append(current)
            current = ""
        else:
            current += char
    pieces.append(current)
    out: list[tuple[str, str | None]] = []
    for piece in (p.strip() for p in pieces):
        if not piece or piece in ("*", "/", "..."):
            continue
        name, _, default = piece.lstrip("*").partition("=")
        out.append((name.split(":")[0].strip(), default.strip() or None))
    return out


def _signature_problem(shown: str, args: str, target: object) -> str | None:
    """Why the documented ``shown(args)`` is not ``target``'s signature (``None``: it is).

    Every documented parameter must exist, in the code's order; a parameter the docs leave out
    must be optional; a literal default the docs show must be the code's.
    """
    try:
        signature = inspect.signature(target)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    params = [p for name, p in signature.parameters.items() if name not in ("self", "cls")]
    names = [p.name for p in params]
    documented = _documented(args)
    missing = [name for name, _ in documented if name not in names]
    if missing:
        return f"{shown}({args}): no parameter {missing} in the code's ({', '.join(names)})"
    order = [names.index(name) for name, _ in documented]
    if order != sorted(order):
        return f"{shown}({args}): the parameters are in another order in the code ({', '.join(names)})"
    shown_names = {name for name, _ in documented}
    required = [p.name for p in params if p.name not in shown_names and p.default is p.empty]
    required = [
        n for n in required if signature.parameters[n].kind not in (inspect.Parameter.VAR_POSITIONAL,)
    ]
    if required:
        return f"{shown}({args}): leaves out the required {required}"
    for name, default in documented:
        code = signature.parameters[name].default
        if default is None or code is inspect.Parameter.empty:
            continue
        try:
            value = ast.literal_eval(default)
        except (ValueError, SyntaxError):
            continue
        if value is not Ellipsis and value != code:  # `same=...`: a default the docs do not spell out
            return f"{shown}({args}): {name} defaults to {code!r} in the code, not {default}"
    return None


def test_the_signatures_types_md_shows_are_the_codes() -> None:
    """Every ``### Class.method(...)`` heading, and the first ``name(...)`` of each exported name's
    section, says the parameters the code has (the docs had ``where(name, ctx_or_home)``)."""
    from funes_core.host.api import IntegrationPart

    text = (DOCS / "types.md").read_text(encoding="utf-8")
    sections = _sections(text)
    problems: list[str] = []
    checked = 0
    for heading in sections:
        found = re.match(r"^(\w+)\.(\w+)\((.*)\)$", heading)
        if found:
            owner, method, args = found.groups()
            problem = _signature_problem(
                f"{owner}.{method}", args, getattr(getattr(funes_core, owner), method)
            )
            problems += [problem] if problem else []
            checked += 1
    for name in funes_core.__all__:
        body = sections.get(name, "")
        call = re.search(rf"`{re.escape(name)}\(", body)
        if call is None:
            continue
        args = _call_args(body, call.end() - 1)
        problem = _signature_problem(name, args, getattr(funes_core, name))
        problems += [problem] if problem else []
        checked += 1
    # How an agent's locations are read, named in the Agent section.
    agent_text = sections["Agent"]
    for shown, target in (("agent.locate", funes_core.Agent.locate), ("self.where", IntegrationPart.where)):
        for call in re.finditer(rf"`{re.escape(shown)}\(", agent_text):
            args = _call_args(agent_text, call.end() - 1)
            problem = _signature_problem(shown, args, target)
            problems += [problem] if problem else []
            checked += 1
    assert checked >= 10, f"only {checked} signatures found: the page's layout changed"
    assert problems == []


def test_the_contract_version_the_docs_state_is_the_codes() -> None:
    import funes_contracts
    from funes_core.host.agent import CONTRACT_VERSION, SUPPORTED_CONTRACTS
    from funes_core.models.base import MODEL_CONTRACT_VERSION

    older = sorted(SUPPORTED_CONTRACTS - {CONTRACT_VERSION})
    types = _sections((DOCS / "types.md").read_text(encoding="utf-8"))
    intro = types["The contract version"]
    assert f"The plugin contract this funes speaks: `{CONTRACT_VERSION}`" in intro
    assert f"(`contract_version={CONTRACT_VERSION}`)" in intro
    for version in older:
        assert f"contract `{version}`" in intro, f"types.md does not say contract {version} still loads"
    row = next(
        line for line in types["IntegrationPart"].splitlines() if line.startswith("| `contract_version`")
    )
    assert f"| `{CONTRACT_VERSION}`" in row, row
    assert f"contract_version={CONTRACT_VERSION}" in types["Agent"]
    assert f"`contract_version = {MODEL_CONTRACT_VERSION}` (the model contract)" in types["Embedder"]

    hooks = _sections((DOCS / "hooks.md").read_text(encoding="utf-8"))
    for name, version in hook_contracts(CONTRACT_VERSION, MODEL_CONTRACT_VERSION).items():
        body = hooks[hook_signatures()[name]]
        assert f"`contract_version = {version}`" in body, f"hooks.md, {name}: not contract {version}"

    readme = (REPO / "contracts" / "README.md").read_text(encoding="utf-8")
    release = ".".join(funes_contracts.__version__.split(".")[:2])
    assert f"This release ({release}) checks plugin contract {CONTRACT_VERSION}" in readme
    for heading in _sections((DOCS / "testing.md").read_text(encoding="utf-8")):
        for version in re.findall(r"\(contract (\d+)\)", heading):
            assert int(version) in SUPPORTED_CONTRACTS, f"testing.md: {heading}"


def hook_contracts(plugin: int, model: int) -> dict[str, int]:
    """The contract each registration hook's classes declare: the plugin's, or the model contract."""
    return {
        "funes_register_converters": plugin,
        "funes_register_hook_installers": plugin,
        "funes_register_tool_registrars": plugin,
        "funes_register_embedders": model,
        "funes_register_rerankers": model,
    }


def test_the_contract_methods_testing_md_shows_are_the_kits() -> None:
    """The fixtures-package functions the kit looks up, with the parameters it passes."""
    from funes_contracts import ConverterContract, HookInstallerContract

    testing = (DOCS / "testing.md").read_text(encoding="utf-8")
    for owner, name in (
        (ConverterContract, "foreign_files"),
        (HookInstallerContract, "hook_events"),
    ):
        params = [p for p in inspect.signature(getattr(owner, name)).parameters if p != "self"]
        shown = f"{name}({', '.join(params)})"
        assert f"`{shown}`" in testing, f"testing.md does not show {shown}"
