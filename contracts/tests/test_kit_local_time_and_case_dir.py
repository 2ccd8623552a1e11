"""The kit's answers for agents that are not like Claude Code: local time, and a ``cwd`` from the case's path.

aider writes ``# aider chat started at 2026-03-02 09:14:03`` (local time, no offset) into
``.aider.chat.history.md`` in the repository it works in, so its converter reads times as local
and takes the file's folder as the ``cwd``. The suite runs in a fresh pytest process (as ``funes
integrations check`` runs it) on funes-echo variants, and the assertions are on the outcome per
requirement.
"""

from __future__ import annotations

import dataclasses
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import funes_echo
from funes_contracts.converter import CASE_DIR, case_relative
from funes_core import read_turns_file, turns_to_jsonl

#: The ``run_suite`` fixture (conftest.py): the suite in a fresh pytest, and its report.
RunSuite = Callable[..., Any]

FIX = Path(funes_echo.__file__).parent / "contract_fixtures"

LOCAL = """
from dataclasses import replace
from pathlib import Path

import funes_echo.converter as module
from funes_contracts import ConverterContract
from funes_core import Capabilities, parse_ts
from funes_echo import EchoConverter

FIX = Path({fixtures!r})



def _with(reader):
    class Patched(EchoConverter):
        def convert(self, ref):
            original = module.parse_ts
            module.parse_ts = reader
            try:
                return super().convert(ref)
            finally:
                module.parse_ts = original

    return Patched


def local(value, epoch="auto"):
    return parse_ts(value, epoch=epoch, naive="local")


def twice(value, epoch="auto"):
    # Applies the zone's offset twice: the kind of sum a hand-written conversion gets wrong.
    from datetime import datetime

    first, utc = parse_ts(value, epoch=epoch, naive="local"), parse_ts(value, epoch=epoch)
    if first is None or first == utc:
        return first
    a = datetime.fromisoformat(first.replace("Z", "+00:00"))
    b = datetime.fromisoformat(utc.replace("Z", "+00:00"))
    return parse_ts((a - (b - a)).isoformat())


def case(name, reader):
    caps = Capabilities(local_time=True)
    attrs = {{"converter_cls": _with(reader), "fixtures_dir": FIX, "capabilities": caps}}
    return type(name, (ConverterContract,), attrs)


TestReadsLocal = case("TestReadsLocal", local)
TestIgnoresLocal = case("TestIgnoresLocal", parse_ts)
TestOffsetTwice = case("TestOffsetTwice", twice)
"""

CWD = """
from dataclasses import replace
from pathlib import Path

from funes_contracts import ConverterContract
from funes_echo import EchoConverter

FIX = Path({fixtures!r})


class RepoCwd(EchoConverter):
    # The transcript's folder is the cwd (aider's history file lives in the repository).
    def convert(self, ref):
        return [replace(t, cwd=str(ref.path.parent)) for t in super().convert(ref)]


class ParentCwd(EchoConverter):
    # One folder too high: outside the case, so the golden's "{{case}}" does not match it.
    def convert(self, ref):
        return [replace(t, cwd=str(ref.path.parent.parent)) for t in super().convert(ref)]


class TestRepoCwd(ConverterContract):
    converter_cls = RepoCwd
    fixtures_dir = FIX


class TestParentCwd(ConverterContract):
    converter_cls = ParentCwd
    fixtures_dir = FIX
"""


def fixtures_with(tmp_path: Path, case: str, cwd: str | None = None) -> Path:
    """A fixtures folder holding one echo case (its golden's ``cwd`` set to ``cwd`` when given)."""
    root = tmp_path / "fixtures"
    shutil.copytree(FIX / "cases" / case, root / "cases" / case)
    if cwd is not None:
        golden = root / "cases" / case / "expected.funes.jsonl"
        turns = [dataclasses.replace(t, cwd=cwd) for t in read_turns_file(golden).turns]
        golden.write_text(turns_to_jsonl(turns), encoding="utf-8")
    return root


def failures(results: list[dict[str, str]]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for result in results:
        assert result["outcome"] != "error", result
        if result["outcome"] == "failed":
            out.setdefault(result["class"], set()).add(result["requirement"])
    return out


@pytest.mark.slow
def test_local_time_must_move_by_exactly_the_zones_offset(tmp_path: Path, run_suite: RunSuite) -> None:
    # The edge case holds a time without an offset, beside ones with offsets and a Z.
    fixtures = fixtures_with(tmp_path, "edge")
    done, results = run_suite(tmp_path, LOCAL.format(fixtures=str(fixtures)))
    failed = failures(results)
    assert failed == {
        "TestIgnoresLocal": {"converter:timezone"},
        "TestOffsetTwice": {"converter:timezone"},
    }, done.stdout[-3000:]
    reasons = {r["class"]: r["reason"] for r in results if r["outcome"] == "failed"}
    assert (
        "declares local_time, but no time of case edge moved under Pacific/Kiritimati"
        in (reasons["TestIgnoresLocal"])
    )
    assert "a local time must move by exactly that" in reasons["TestOffsetTwice"]
    passed = {
        r["requirement"] for r in results if r["class"] == "TestReadsLocal" and r["outcome"] == "passed"
    }
    assert {"converter:timezone", "converter:golden"} <= passed, "goldens are read in UTC"


@pytest.mark.slow
def test_a_golden_cwd_may_name_the_cases_folder(tmp_path: Path, run_suite: RunSuite) -> None:
    fixtures = fixtures_with(tmp_path, "basic", cwd=CASE_DIR)
    done, results = run_suite(tmp_path, CWD.format(fixtures=str(fixtures)))
    failed = failures(results)
    # A cwd outside the case moves with every copy: only one inside it can be expressed.
    moving = {"converter:golden", "converter:stable-ids", "converter:torn-tail", "converter:bad-record"}
    assert failed == {"TestParentCwd": moving}, done.stdout[-3000:]
    repo = {r["requirement"] for r in results if r["class"] == "TestRepoCwd" and r["outcome"] == "passed"}
    assert moving <= repo


def test_case_relative_rewrites_only_a_cwd_inside_the_folder(tmp_path: Path) -> None:
    golden = FIX / "cases" / "basic" / "expected.funes.jsonl"
    turn = read_turns_file(golden).turns[0]
    inside = dataclasses.replace(turn, cwd=str(tmp_path / "case" / "app"))
    same = dataclasses.replace(turn, cwd=str(tmp_path / "case"))
    beside = dataclasses.replace(turn, cwd=str(tmp_path / "case-2"))
    out = case_relative([inside, same, beside, turn], tmp_path / "case")
    assert [t.cwd for t in out] == ["{case}/app", "{case}", str(tmp_path / "case-2"), turn.cwd]
