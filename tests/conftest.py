"""Shared fixtures for the core's tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from funes_core.home import Home
from funes_core.models.embed import Embedder, HashEmbedder

# Property tests check properties, not speed: on a shared or loaded machine one example can take
# seconds, which must not fail a test (no deadline, no "input generation is slow" health check).
settings.register_profile(
    "funes", deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.large_base_example]
)
settings.load_profile("funes")


@pytest.fixture(autouse=True)
def _no_stats_in_real_home(monkeypatch: pytest.MonkeyPatch) -> None:
    """Usage figures stay off unless a test turns them on: a test without its own FUNES_HOME
    must not write ``~/.funes/stats`` (tests of telemetry set ``FUNES_STATS`` themselves)."""
    monkeypatch.setenv("FUNES_STATS", "off")


@pytest.fixture
def funes_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Home]:
    """An isolated, empty ``$FUNES_HOME`` (set in the environment for subprocesses too)."""
    root = tmp_path / "funes-home"
    monkeypatch.setenv("FUNES_HOME", str(root))
    monkeypatch.delenv("FUNES_EMBEDDER", raising=False)
    yield Home(root)


@pytest.fixture(scope="session")
def real_embedder(tmp_path_factory: pytest.TempPathFactory) -> Embedder:
    """funes' pinned model, loaded once per test session (shared with the StoreContract suite)."""
    from funes_contracts.store import shared_real_embedder

    return shared_real_embedder(tmp_path_factory.mktemp("funes-model-cache"))


@pytest.fixture
def hash_embedder() -> HashEmbedder:
    """The deterministic test double, for tests where retrieval quality does not matter."""
    return HashEmbedder()
