"""Stand-ins for the person and the subprocesses of ``funes integrations`` (its tests share them)."""

from __future__ import annotations

import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import funes_echo
from funes_core.wiring.integrations.common import UI, RunResult


@dataclass
class FakeRunner:
    """Records subprocess calls; answers with ``results`` in order (default: success)."""

    results: list[RunResult] = field(default_factory=list)
    calls: list[tuple[list[str], dict[str, str] | None]] = field(default_factory=list)

    def __call__(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
        stream: bool = False,
    ) -> RunResult:
        self.calls.append((list(argv), dict(env) if env is not None else None))
        return self.results.pop(0) if self.results else RunResult(0, "")


@dataclass
class FakeUI:
    terminal: bool = False
    answer: bool = False
    out: list[str] = field(default_factory=list)
    err: list[str] = field(default_factory=list)
    asked: list[str] = field(default_factory=list)

    def ui(self) -> UI:
        def confirm(question: str) -> bool:
            self.asked.append(question)
            return self.answer

        return UI(
            out=self.out.append, err=self.err.append, is_terminal=lambda: self.terminal, confirm=confirm
        )


def echo_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A HOME holding echo's realistic config (no sessions), an empty FUNES_HOME, a pinned FUNES_BIN."""
    home = tmp_path / "home"
    shutil.copytree(Path(funes_echo.__file__).parent / "contract_fixtures" / "config-home", home)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("FUNES_HOME", str(tmp_path / "funes-home"))
    monkeypatch.setenv("FUNES_BIN", "funes-under-test")
    return home
