"""The requirements manifest and the contract tests stay in step, in both directions."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

import funes_contracts
from funes_contracts import ConverterContract, HookInstallerContract, ToolRegistrarContract
from funes_contracts.models import EmbedderContract, RerankerContract
from funes_contracts.requirements import REQUIREMENTS, ROLES, render_markdown, resolve
from funes_core.host.api import CONTRACT_VERSION

REPO = Path(__file__).resolve().parents[2]
CONTRACTS = (
    ConverterContract,
    HookInstallerContract,
    ToolRegistrarContract,
    EmbedderContract,
    RerankerContract,
)
#: The roles whose requirements each contract class checks (the hook and the agent's locations
#: are checked where the parts they need are: the installer's hook, the converter's discovery).
ROLE_OF = {
    ConverterContract: ("converter", "location"),
    HookInstallerContract: ("installer", "hook", "location"),
    ToolRegistrarContract: ("registrar",),
    EmbedderContract: ("embedder",),
    RerankerContract: ("reranker",),
}


def contract_tests() -> list[tuple[type, str, str | None]]:
    """(contract class, test name, requirement id) for every test method the kit ships."""
    found = []
    for cls in CONTRACTS:
        for name, fn in inspect.getmembers(cls, inspect.isfunction):
            if not name.startswith("test_"):
                continue
            marks = [m for m in getattr(fn, "pytestmark", []) if m.name == "requirement"]
            found.append((cls, name, resolve(marks[0].args[0], cls) if marks else None))
    return found


def test_every_contract_test_names_exactly_one_known_requirement() -> None:
    for cls, name, rid in contract_tests():
        assert rid is not None, f"{cls.__name__}.{name} has no @requirement"
        assert rid in REQUIREMENTS, f"{cls.__name__}.{name}: unknown requirement {rid!r}"
        assert rid.split(":")[0] in ROLE_OF[cls], f"{cls.__name__}.{name} checks another role's requirement"


def test_every_requirement_has_a_test() -> None:
    tested = {rid for _, _, rid in contract_tests()}
    assert sorted(set(REQUIREMENTS) - tested) == []


def test_requirement_ids_are_well_formed() -> None:
    for rid, req in REQUIREMENTS.items():
        assert req.id == rid
        assert re.fullmatch(r"[a-z]+:[a-z0-9-]+", rid), rid
        assert req.role in ROLES
        assert 1 <= req.added_in <= CONTRACT_VERSION
        assert req.behaviour.endswith(".") and req.source


def test_the_kit_speaks_the_core_contract_version() -> None:
    assert funes_contracts.CONTRACT_VERSION == CONTRACT_VERSION


def test_the_requirements_page_is_generated_from_the_manifest() -> None:
    page = REPO / "docs" / "plugins" / "requirements.md"
    if not (REPO / "funes_core").is_dir():
        # The page belongs to the funes repository's docs; an unpacked kit sdist has no such page.
        pytest.skip("the requirements page is in the funes repository, not in this distribution")
    assert page.read_text(encoding="utf-8") == render_markdown(), (
        "docs/plugins/requirements.md is stale: run `uv run python scripts/gen_plugin_docs.py`"
    )


def test_markers_are_registered_by_the_pytest11_plugin(pytestconfig: pytest.Config) -> None:
    lines = pytestconfig.getini("markers")
    assert any(str(line).startswith("requirement(id)") for line in lines)
    assert any(str(line).startswith("contract:") for line in lines)
