"""The pytest plugin of funes-memory-contracts (entry point ``pytest11``): markers, options and every fixture.

Plugin authors install funes-memory-contracts and subclass its ``*Contract`` classes; everything those
classes need is registered here, so nobody copies a conftest. The plugin also:

* rejects a test marked with a requirement id the manifest does not list (a typo would otherwise
  silently report conformance to nothing);
* turns the failure of a *provisional* requirement into a non-strict xfail (a warning);
* writes a JSON conformance report with ``--funes-report PATH`` (what ``funes integrations
  check`` prints from);
* regenerates golden files with ``--funes-regen-goldens``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import Any

import pytest

from funes_contracts import requirements
from funes_core.host.api import CONTRACT_VERSION, InstallContext

_RESULTS = pytest.StashKey[list[dict[str, Any]]]()

#: The funes command the suite records in agent configs: this interpreter, this funes.
FUNES_COMMAND: tuple[str, ...] = (sys.executable, "-m", "funes_core")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("funes-memory-contracts", "funes plugin contract suite")
    group.addoption(
        "--funes-report",
        metavar="PATH",
        default=None,
        help="write a JSON conformance report (one entry per contract test) to PATH",
    )
    group.addoption(
        "--funes-regen-goldens",
        action="store_true",
        default=False,
        help="rewrite each case's expected.funes.jsonl from the converter's output (review the diff!)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "requirement(id): the funes contract requirement this test checks (funes_contracts)"
    )
    config.addinivalue_line("markers", "contract: a test of the funes plugin contract suite")
    config.addinivalue_line(
        "markers", "slow: takes seconds (a real model, LanceDB or a subprocess); deselect with -m 'not slow'"
    )
    config.addinivalue_line(
        "markers",
        "agent_cli: drives a real agent CLI (funes_contracts.agent_cli); deselect with -m 'not agent_cli'",
    )
    config.stash[_RESULTS] = []


def requirement_of(item: pytest.Item) -> str | None:
    marker = item.get_closest_marker("requirement")
    if marker is None or not marker.args:
        return None
    value = marker.args[0]
    return requirements.resolve(value, getattr(item, "cls", None)) if isinstance(value, str) else None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        rid = requirement_of(item)
        if rid is None:
            continue
        if rid.split(":", 1)[0] in requirements.ROLES and rid not in requirements.REQUIREMENTS:
            raise pytest.UsageError(
                f"{item.nodeid}: unknown requirement id {rid!r} (see funes_contracts.requirements)"
            )
        item.add_marker(pytest.mark.contract)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Run every ``contract_case`` test once per folder in ``<fixtures_dir>/cases``."""
    if "contract_case" not in metafunc.fixturenames:
        return
    root = getattr(metafunc.cls, "fixtures_dir", None)
    cases: list[Path] = []
    if root is not None and (Path(root) / "cases").is_dir():
        cases = sorted(
            p for p in (Path(root) / "cases").iterdir() if p.is_dir() and not p.name.startswith((".", "_"))
        )
    if cases:
        metafunc.parametrize("contract_case", cases, ids=[c.name for c in cases])
    else:
        metafunc.parametrize("contract_case", [None], ids=["no-cases"])


def _first_line(text: str, limit: int = 300) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    line = lines[0] if lines else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    rid = requirement_of(item)
    req = requirements.get(rid) if rid else None
    if req is not None and req.provisional and report.failed and call.when == "call":
        reason = _first_line(call.excinfo.exconly()) if call.excinfo else ""
        report.outcome = "skipped"
        report.wasxfail = f"provisional requirement {rid}: {reason}"
    results = item.config.stash.get(_RESULTS, None)
    if results is None or rid is None:
        return report
    outcome = ""
    reason = ""
    if hasattr(report, "wasxfail") and report.skipped:
        outcome, reason = "xfailed", str(report.wasxfail)
    elif report.skipped:
        outcome = "skipped"
        longrepr = report.longrepr
        if isinstance(longrepr, tuple) and len(longrepr) == 3:
            reason = str(longrepr[2]).removeprefix("Skipped: ")
    elif report.failed:
        outcome = "failed" if call.when == "call" else "error"
        reason = _first_line(call.excinfo.exconly()) if call.excinfo else ""
    elif call.when == "call":
        outcome = "passed"
    if outcome:
        results.append(
            {
                "test": item.nodeid.split("::", 1)[-1],
                "class": item.cls.__name__ if isinstance(item, pytest.Function) and item.cls else "",
                "requirement": rid,
                "outcome": outcome,
                "reason": reason,
                "when": call.when,
            }
        )
    return report


def pytest_sessionfinish(session: pytest.Session) -> None:
    target = session.config.getoption("--funes-report", None)
    if not target:
        return
    results = session.config.stash.get(_RESULTS, [])
    Path(target).write_text(
        json.dumps({"contract_version": CONTRACT_VERSION, "results": results}, indent=2) + "\n",
        encoding="utf-8",
    )


# -- fixtures ------------------------------------------------------------------------------------


@pytest.fixture
def decoy_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty folder the process's ``HOME`` points at: a plugin that writes there is caught."""
    decoy = tmp_path / "decoy-home"
    decoy.mkdir()
    monkeypatch.setenv("HOME", str(decoy))
    return decoy


@pytest.fixture
def funes_ctx(tmp_path: Path, decoy_home: Path) -> InstallContext:
    """An :class:`InstallContext` over a throwaway HOME and FUNES_HOME, recording this funes."""
    home = tmp_path / "home"
    home.mkdir()
    return InstallContext(home=home, funes_home=tmp_path / "funes-home", funes_command=FUNES_COMMAND)


@pytest.fixture
def regen_goldens(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--funes-regen-goldens", False))


_PROBES: dict[tuple[str, ...], str | None] = {}


def _probe_mcp(command: tuple[str, ...]) -> str | None:
    """``None`` when ``command --help`` runs (the MCP verb exists), else why it cannot be tested."""
    if command in _PROBES:
        return _PROBES[command]
    try:
        done = subprocess.run(
            [*command, "--help"], capture_output=True, text=True, timeout=60, check=False, errors="replace"
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        reason: str | None = f"cannot run {' '.join(command)}: {exc}"
    else:
        reason = None
        if done.returncode != 0:
            shown = " ".join([*command, "--help"])
            reason = f"funes mcp is not available in this funes build (`{shown}` exited {done.returncode})"
    _PROBES[command] = reason
    return reason


@pytest.fixture(scope="session")
def mcp_probe() -> Callable[[tuple[str, ...]], str | None]:
    """Ask whether an MCP command can be started at all; returns a skip reason or ``None``."""
    return _probe_mcp


@pytest.fixture
def chdir_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Run with the working directory in a throwaway folder (stray relative writes land there)."""
    monkeypatch.chdir(tmp_path)
    yield tmp_path
