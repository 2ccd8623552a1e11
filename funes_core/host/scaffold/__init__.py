"""``funes integrations new ID``: a separately packaged integration, ready to pass ``check`` as generated.

The template (``template/``, rendered with ``{{name}}`` placeholders) is a complete integration
of a made-up agent that keeps JSON-lines sessions in ``~/.<id>/sessions/`` and its hooks and MCP
servers in ``~/.<id>/settings.json``: converter, hook installer, tool registrar, per-turn hook,
contract fixtures with a golden, the contract test, a CI workflow and a README saying what to
change. It is built on the core's helpers only (:class:`~funes_core.Agent`, the converter
helpers, :class:`~funes_core.wiring.configedit.ManagedEntry`, the hook runtime), so what an author
edits is the agent-specific part and nothing else.

``--converter-only`` (an agent with no hooks and no MCP client, such as aider, or an importer of
exported files) leaves out the wiring, the hook and the config fixture, and registers the converter
alone: installing it then writes nothing into the agent's config, and removing it has nothing to
undo. Template text between ``{{#wired}}`` and ``{{/wired}}`` is kept only for a wired integration,
text between ``{{^wired}}`` and ``{{/wired}}`` only for a converter-only one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from funes_core.host.api import ID_PATTERN
from funes_core.version import DISTRIBUTION, KIT_DISTRIBUTION, __version__

__all__ = ["Names", "ScaffoldError", "names_for", "render"]

#: Where the rendered package goes inside the project (``src/`` in the template).
_PACKAGE_DIR = "src"
_TEMPLATE_SUFFIX = ".tmpl"
_PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")
_SECTION = re.compile(r"\{\{([#^])(\w+)\}\}\n?(.*?)\{\{/\2\}\}\n?", re.S)
#: Template files a converter-only integration leaves out (paths relative to the template).
_WIRED_ONLY = (
    ("src", "wiring.py.tmpl"),
    ("src", "hook.py.tmpl"),
    ("src", "contract_fixtures", "config-home"),
)


class ScaffoldError(Exception):
    """A request ``integrations new`` refuses; the message is one line for the user."""


@dataclass(frozen=True, slots=True)
class Names:
    """Every spelling of the new integration's name the template needs."""

    id: str
    label: str
    module: str
    dist: str
    Class: str
    ENV: str
    core_dist: str
    kit_dist: str
    #: The requirement range of compatible cores (``>=0.1,<0.2``), for the core and the kit.
    core_range: str
    #: The plugin contract the generated integration is written for.
    contract: str
    #: Whether the integration wires the agent (a hook and an MCP server), or only converts.
    wired: bool = True

    def mapping(self) -> dict[str, str]:
        return {name: str(getattr(self, name)) for name in self.__dataclass_fields__ if name != "wired"}


def names_for(ident: str, label: str | None = None, *, wired: bool = True) -> Names:
    """The names of integration ``ident``; :class:`ScaffoldError` when it is not a usable id."""
    if not ID_PATTERN.fullmatch(ident) or not ident[0].isalpha():
        raise ScaffoldError(
            f"{ident!r} is not a usable integration id: use lowercase letters, digits, '-' and '_', "
            "starting with a letter"
        )
    words = [w for w in re.split(r"[-_]", ident) if w]
    from funes_core.host.api import CONTRACT_VERSION
    from funes_core.host.versions import compatible_range

    return Names(
        id=ident,
        label=label or " ".join(w.capitalize() for w in words),
        module="funes_" + ident.replace("-", "_"),
        dist="funes-memory-" + ident.replace("_", "-"),
        Class="".join(w.capitalize() for w in words),
        ENV=ident.upper().replace("-", "_"),
        core_dist=DISTRIBUTION,
        kit_dist=KIT_DISTRIBUTION,
        core_range=compatible_range(__version__),
        contract=str(CONTRACT_VERSION),
        wired=wired,
    )


def _fill(text: str, names: dict[str, str], flags: dict[str, bool] | None = None) -> str:
    if flags is not None:
        text = _SECTION.sub(lambda m: m.group(3) if (m.group(1) == "#") == flags[m.group(2)] else "", text)
    return _PLACEHOLDER.sub(lambda m: names[m.group(1)], text)


def _walk(node: Traversable, rel: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Traversable]]:
    out: list[tuple[tuple[str, ...], Traversable]] = []
    for child in sorted(node.iterdir(), key=lambda c: c.name):
        if child.name == "__pycache__":
            continue
        if child.is_dir():
            out.extend(_walk(child, (*rel, child.name)))
        elif child.name.endswith(_TEMPLATE_SUFFIX):
            out.append(((*rel, child.name), child))
    return out


def render(dest: Path, names: Names) -> list[Path]:
    """Write the project into ``dest`` (absent or empty); returns the files written, sorted."""
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise ScaffoldError(f"{dest} is not empty; choose a new folder with --dir")
    values = names.mapping()
    flags = {"wired": names.wired}
    written: list[Path] = []
    template = resources.files(__name__).joinpath("template")
    for rel, node in _walk(template):
        if not names.wired and any(rel[: len(skip)] == skip for skip in _WIRED_ONLY):
            continue
        parts = [_fill(part, values) for part in rel]
        parts[-1] = parts[-1].removesuffix(_TEMPLATE_SUFFIX)
        if parts[0] == _PACKAGE_DIR:
            parts[0] = names.module
        if parts[-1] == "gitignore":
            parts[-1] = ".gitignore"
        target = dest.joinpath(*parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(_fill(node.read_text(encoding="utf-8"), values, flags), encoding="utf-8")
        written.append(target)
    return sorted(written)
