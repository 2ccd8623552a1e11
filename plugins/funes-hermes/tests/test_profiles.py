"""Hermes profiles (issue 19): every profile's sessions are read; install wires the profile in effect."""

from __future__ import annotations

import shutil
from importlib import resources
from pathlib import Path

import pytest

from funes_hermes import HermesConverter
from funes_hermes.agent import HERMES, hermes_root, state_dbs

CASES = Path(str(resources.files("funes_hermes.contract_fixtures"))) / "cases"


@pytest.fixture(autouse=True)
def _no_hermes_home(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HERMES_HOME", raising=False)


def test_discover_reads_the_default_profile_and_every_named_one(tmp_path: Path) -> None:
    root = tmp_path / ".hermes"
    shutil.copytree(CASES / "basic", root, ignore=shutil.ignore_patterns("*.sql", "*.jsonl"))
    shutil.copytree(
        CASES / "two-sessions", root / "profiles" / "work", ignore=shutil.ignore_patterns("*.sql", "*.jsonl")
    )
    refs = HermesConverter().discover(tmp_path)
    assert {r.path for r in refs} == {root / "state.db", root / "profiles" / "work" / "state.db"}
    assert len({r.session_id for r in refs}) == len(refs) >= 3


def test_the_profile_in_effect(tmp_path: Path) -> None:
    root = tmp_path / ".hermes"
    (root / "profiles" / "work").mkdir(parents=True)
    assert HERMES.path("home", tmp_path) == root
    (root / "active_profile").write_text("work\n", encoding="utf-8")
    assert HERMES.path("home", tmp_path) == root / "profiles" / "work"
    assert state_dbs(tmp_path) == [root / "profiles" / "work" / "state.db", root / "state.db"]
    (root / "active_profile").write_text("gone\n", encoding="utf-8")
    assert HERMES.path("home", tmp_path) == root, (
        "a sticky profile whose folder is gone falls back to the default"
    )


def test_hermes_home_of_a_profile_keeps_the_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("HERMES_HOME", str(tmp_path / ".hermes" / "profiles" / "work"))
    assert hermes_root(tmp_path) == tmp_path / ".hermes"
    custom = tmp_path / "srv" / "profiles" / "bot"
    monkeypatch.setenv("HERMES_HOME", str(custom))
    assert hermes_root(tmp_path) == tmp_path / "srv" and HERMES.path("home", tmp_path) == custom
