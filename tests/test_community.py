"""COMMUNITY.md is generated from the catalog install reads, and the catalog tells the truth."""

from __future__ import annotations

import importlib.metadata
import io
import re
import tomllib
from pathlib import Path

import pytest

from funes_core.host.api import CONTRACT_VERSION
from funes_core.host.catalog import CatalogError, load_catalog, render_community
from funes_core.host.manager import load_plugins

REPO = Path(__file__).resolve().parents[1]


def test_community_md_is_generated_from_the_catalog() -> None:
    current = (REPO / "COMMUNITY.md").read_text(encoding="utf-8")
    assert current == render_community(load_catalog()), (
        "COMMUNITY.md and funes_core/host/catalog.toml drifted: run `uv run python scripts/gen_community.py`"
    )


def test_the_catalog_lists_the_maintained_integrations() -> None:
    catalog = load_catalog()
    maintained = {e.id: e.dist for e in catalog.entries.values() if e.tier == "maintained"}
    assert maintained == {
        "claude": "funes-memory-claude",
        "codex": "funes-memory-codex",
        "echo": "funes-memory-echo",
        "hermes": "funes-memory-hermes",
        "notes": "funes-memory-notes",
        "pi": "funes-memory-pi",
        "opencode": "funes-memory-opencode",
        "gemini": "funes-memory-gemini",
        "copilot": "funes-memory-copilot",
        "aider": "funes-memory-aider",
        "continue": "funes-memory-continue",
        "chatgpt": "funes-memory-chatgpt",
        "claudeai": "funes-memory-claudeai",
        "vibe": "funes-memory-vibe",
        "cursor": "funes-memory-cursor",
        "crush": "funes-memory-crush",
        "kilo": "funes-memory-kilo",
        "droid": "funes-memory-droid",
        "openhands": "funes-memory-openhands",
    }
    assert all(
        e.contract_version == CONTRACT_VERSION and e.vouched
        for e in catalog.entries.values()
        if e.tier == "maintained"
    )


def _installed(dist: str) -> bool:
    try:
        importlib.metadata.distribution(dist)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


@pytest.mark.parametrize("ident", sorted(load_catalog().entries))
def test_installed_listings_register_what_they_declare(ident: str) -> None:
    entry = load_catalog().entries[ident]
    if entry.source:
        folder = REPO / entry.source
        if folder.is_dir():
            project = tomllib.loads((folder / "pyproject.toml").read_text(encoding="utf-8"))["project"]
            assert project["name"] == entry.dist
    if not _installed(entry.dist):
        pytest.skip(f"{entry.dist} is not installed in this environment")
    pm = load_plugins(environ={"FUNES_LOAD_PLUGINS": entry.dist}, stderr=io.StringIO())
    integ = pm.integration(ident)
    assert integ is not None, f"{entry.dist} does not register integration {ident!r}"
    assert integ.dist is not None and integ.dist.lower() == entry.dist
    provided = {role for role, cls in integ.parts().items() if cls is not None}
    assert provided == set(entry.roles)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("catalog_version = 2\n", "unknown catalog_version 2"),
        ("catalog_version = 1\n[integrations.x]\ndist = 'funes-x'\n", "tier must be a non-empty string"),
        (
            "catalog_version = 1\n[integrations.x]\ndist='funes-x'\nlabel='X'\ntier='community'\nauthor='a'\n"
            "summary='s'\nroles=['converter']\ncontract_version=1\n",
            "a community entry needs repo",
        ),
        (
            "catalog_version = 1\n[integrations.x]\ndist='funes-x'\nlabel='X'\ntier='maintained'\n"
            "author='a'\nsummary='s'\nroles=['converter']\ncontract_version=1\nsource='p'\nhomepage='h'\n",
            "unknown field 'homepage'",
        ),
        (
            "catalog_version = 1\n[integrations.x]\ndist='funes-x'\nlabel='X'\ntier='maintained'\n"
            "author='a'\nsummary='s'\nroles=['converter']\ncontract_version=1\nsource='p'\n"
            "[integrations.y]\ndist='Funes_X'\nlabel='Y'\ntier='maintained'\nauthor='a'\n"
            "summary='s'\nroles=['converter']\ncontract_version=1\nsource='p'\n",
            "Funes_X is listed twice ('x' and 'y')",
        ),
        ("catalog_version = 1\n[integrations.BAD]\n", "the id must match"),
        ("not toml = [", "not valid TOML"),
    ],
)
def test_a_malformed_catalog_is_refused_with_the_reason(text: str, message: str) -> None:
    with pytest.raises(CatalogError, match=re.escape(message)):
        load_catalog(text)


def test_community_entries_render_in_their_own_section() -> None:
    text = (
        "catalog_version = 1\n[integrations.zeta]\ndist='funes-zeta'\nlabel='Zeta'\ntier='community'\n"
        "author='Ada'\nrepo='https://example.org/funes-zeta'\nsummary='converts Zeta logs'\n"
        "roles=['converter']\ncontract_version=1\n"
    )
    page = render_community(load_catalog(text))
    community = page.split("## Community\n", 1)[1].split("##", 1)[0]
    assert (
        "- **[funes-zeta](https://example.org/funes-zeta)**, Zeta (`zeta`), by Ada: converts Zeta logs."
        in community
    )
    assert "## Not an endorsement" in page and "## How to get listed" in page
