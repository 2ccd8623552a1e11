"""The contract suite fails the right requirements for deliberately broken plugins.

Each broken class below is funes-echo with one bug. The suite runs in a fresh pytest process
(as ``funes integrations check`` runs it) and writes its JSON report; the assertions are on the
outcome per requirement id, so a contract test that stops catching its bug (or starts blaming
the wrong requirement) fails here.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

#: The ``run_suite`` fixture (conftest.py): the suite in a fresh pytest, and its report.
RunSuite = Callable[..., Any]


BROKEN = """
import json
import sys
import uuid
from dataclasses import replace
from pathlib import Path

import funes_echo
from funes_contracts import ConverterContract, HookInstallerContract, ToolRegistrarContract
from funes_core import Outcome
from funes_echo import EchoConverter, EchoHookInstaller, EchoToolRegistrar
from kit_mutants import NonAtomicSpool

FIX = Path(funes_echo.__file__).parent / "contract_fixtures"


class DropsThinking(EchoConverter):
    def convert(self, ref):
        return [
            replace(t, blocks=tuple(b for b in t.blocks if b.block_type != "thinking"))
            for t in super().convert(ref)
        ]


class SparseSeq(EchoConverter):
    def convert(self, ref):
        return [replace(t, seq=2 * t.seq) for t in super().convert(ref)]


class LocalTime(EchoConverter):
    def convert(self, ref):
        return [replace(t, ts=t.ts.replace("Z", "+00:00")) for t in super().convert(ref)]


class Strict(EchoConverter):
    def convert(self, ref):
        for line in ref.path.read_text(encoding="utf-8").splitlines():
            json.loads(line)  # raises on a torn or corrupt line
        return super().convert(ref)


class UnstableIds(EchoConverter):
    def convert(self, ref):
        return [replace(t, turn_uuid=uuid.uuid4().hex) for t in super().convert(ref)]


class WrongHarness(EchoConverter):
    def convert(self, ref):
        return [replace(t, harness="other") for t in super().convert(ref)]


class NonAtomic(NonAtomicSpool, EchoConverter):
    pass


class Clobbering(EchoHookInstaller):
    def install(self, ctx):
        path = self.where("config", ctx)
        text = path.read_text(encoding="utf-8") if path.exists() else "{}"
        data = json.loads(text)  # a malformed config escapes as ValueError
        data.setdefault("hooks", {})["funes"] = self.entries(ctx)[0].value
        new = json.dumps(data, indent=4, sort_keys=True) + "\\n"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(new, encoding="utf-8")
        return Outcome(new != text, "rewrote the config")


class Greedy(EchoHookInstaller):
    def uninstall(self, ctx):
        path = self.where("config", ctx)
        if not path.exists() or "funes-echo" not in path.read_text(encoding="utf-8"):
            return Outcome(False, "nothing to remove")
        path.unlink()  # the user's other settings go with it
        return Outcome(True, "deleted the config")


def _with_value(entries, value):
    return [replace(entries[0], value=value)]


class HardcodedCommand(EchoToolRegistrar):
    def entries(self, ctx):
        value = {"command": "/nonexistent/funes", "args": ["mcp"], "managed_by": "funes-echo"}
        return _with_value(super().entries(ctx), value)


class NotAServer(EchoToolRegistrar):
    def entries(self, ctx):
        value = {"command": sys.executable, "args": ["-c", "print('not json')"], "managed_by": "funes-echo"}
        return _with_value(super().entries(ctx), value)


# -- the blind spots of contract 1, one realistic bug each --------------------------------------


class SideEffect(EchoConverter):
    # Caches its work next to the transcript.

    def convert(self, ref):
        turns = super().convert(ref)
        (ref.path.parent / (ref.path.name + ".cache")).write_text(str(len(turns)), encoding="utf-8")
        return turns


class Truncating(EchoConverter):
    # Cuts every text at 1,000 characters.

    def convert(self, ref):
        cut = lambda b: replace(b, text=b.text[:1000])
        return [replace(t, blocks=tuple(cut(b) for b in t.blocks)) for t in super().convert(ref)]


class NaiveLocalTime(EchoConverter):
    # Reads a time without an offset as the machine's local time.

    def convert(self, ref):
        import funes_echo.converter as module
        from datetime import UTC, datetime
        from funes_core import format_ts, parse_ts

        def local(value, epoch="auto"):
            if isinstance(value, str) and value.strip():
                try:
                    moment = datetime.fromisoformat(value.strip())
                except ValueError:
                    return parse_ts(value, epoch=epoch)
                if moment.tzinfo is None:
                    return format_ts(moment.astimezone(UTC))
            return parse_ts(value, epoch=epoch)

        original = module.parse_ts
        module.parse_ts = local
        try:
            return super().convert(ref)
        finally:
            module.parse_ts = original


class SalvagesTorn(EchoConverter):
    # Rescues a torn last line by regex: the right id, a placeholder for the text it cannot read.

    def convert(self, ref):
        import re
        from funes_core import Block

        turns = super().convert(ref)
        lines = [l for l in ref.path.read_bytes().split(b"\\n") if l.strip()]
        try:
            json.loads(lines[-1])
            return turns
        except ValueError:
            last = lines[-1].decode("utf-8", "replace")
        found_id = re.search(r'"id":\\s*"([^"]+)"', last)
        if found_id and turns and found_id.group(1) not in {t.turn_uuid for t in turns}:
            placeholder = (Block("text", "[message still being written]"),)
            turns.append(replace(turns[-1], turn_uuid=found_id.group(1), seq=len(turns), blocks=placeholder))
        return turns


class CountsRecords(EchoConverter):
    # Stamps every text with the transcript's length: earlier turns change as the session grows.

    def convert(self, ref):
        turns = super().convert(ref)
        stamp = lambda b: replace(b, text=f"[{len(turns)}] " + b.text)
        return [replace(t, blocks=(stamp(t.blocks[0]), *t.blocks[1:])) for t in turns]


class DropsOneTurn(EchoConverter):
    def convert(self, ref):
        turns = super().convert(ref)
        if len(turns) > 2:
            del turns[1]
        return [replace(t, seq=i) for i, t in enumerate(turns)]


# -- what the kit of issue 14 still let through (issue 28, item 3) ----------------------------------


class GivesUpWhenTorn(EchoConverter):
    # A torn last line makes it give up on the whole file: zero turns passed the prefix rule.

    def convert(self, ref):
        lines = [l for l in ref.path.read_bytes().split(b"\\n") if l.strip()]
        try:
            json.loads(lines[-1])
        except ValueError:
            return []
        return super().convert(ref)


class CachesInXdg(EchoConverter):
    # Keeps a cache in $XDG_CACHE_HOME.

    def convert(self, ref):
        import os

        turns = super().convert(ref)
        cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "funes-echo"
        cache.mkdir(parents=True, exist_ok=True)
        (cache / (ref.session_id + ".n")).write_text(str(len(turns)), encoding="utf-8")
        return turns


class CachesInTmp(EchoConverter):
    # Leaves a temporary file behind.

    def convert(self, ref):
        import os
        import tempfile

        handle, _ = tempfile.mkstemp(prefix="funes-echo-")
        os.close(handle)
        return super().convert(ref)


class NaiveLocalNoFixtureTime(NaiveLocalTime):
    # The same bug as NaiveLocalTime, on fixtures whose every time has an offset: the kit makes one.
    pass


class CountsRecordsLate(CountsRecords):
    # The same bug, on a case whose first half of records gives no turn (echo's two-sessions): the
    # kit's earlier variant then keeps all but the last record, or it would exercise nothing.
    pass


ONLY_OFFSETS = Path(__file__).parent / "only-offsets"
LATE_TURNS = Path(__file__).parent / "late-turns"
if not ONLY_OFFSETS.exists():
    import shutil

    shutil.copytree(FIX / "cases" / "basic", ONLY_OFFSETS / "cases" / "basic")
    shutil.copytree(FIX / "cases" / "two-sessions", LATE_TURNS / "cases" / "two-sessions")


def converter_case(cls):
    fixtures = {NaiveLocalNoFixtureTime: ONLY_OFFSETS, CountsRecordsLate: LATE_TURNS}.get(cls, FIX)
    return type(f"Test{cls.__name__}", (ConverterContract,), {"converter_cls": cls, "fixtures_dir": fixtures})


def installer_case(cls):
    home = FIX / "config-home"
    return type(f"Test{cls.__name__}", (HookInstallerContract,), {"installer_cls": cls, "config_home": home})


def registrar_case(cls):
    home = FIX / "config-home"
    return type(f"Test{cls.__name__}", (ToolRegistrarContract,), {"registrar_cls": cls, "config_home": home})


for _cls in (
    DropsThinking,
    SparseSeq,
    LocalTime,
    Strict,
    UnstableIds,
    WrongHarness,
    NonAtomic,
    SideEffect,
    Truncating,
    NaiveLocalTime,
    SalvagesTorn,
    CountsRecords,
    DropsOneTurn,
    GivesUpWhenTorn,
    CachesInXdg,
    CachesInTmp,
    NaiveLocalNoFixtureTime,
    CountsRecordsLate,
):
    globals()[f"Test{_cls.__name__}"] = converter_case(_cls)
for _cls in (Clobbering, Greedy):
    globals()[f"Test{_cls.__name__}"] = installer_case(_cls)
for _cls in (HardcodedCommand, NotAServer):
    globals()[f"Test{_cls.__name__}"] = registrar_case(_cls)
"""

#: The requirements each broken class must fail, and nothing else.
EXPECTED_FAILURES = {
    "TestDropsThinking": {"converter:golden"},
    "TestSparseSeq": {"converter:golden", "converter:seq-dense"},
    "TestLocalTime": {
        "converter:golden",
        "converter:schema",
        "converter:ts-utc",
        "converter:spool-layout",
        "converter:spool-mtime",
    },
    "TestStrict": {"converter:torn-tail", "converter:bad-record"},
    "TestUnstableIds": {
        "converter:golden",
        "converter:deterministic",
        "converter:stable-ids",
        "converter:torn-tail",
        "converter:bad-record",
        "converter:spool-layout",
        "converter:spool-idempotent",
        "converter:timezone",
    },
    "TestWrongHarness": {"converter:golden", "converter:harness"},
    "TestNonAtomic": {"converter:spool-atomic"},
    # The blind spots of contract 1: each of these passed every test of the old kit.
    "TestSideEffect": {"converter:no-side-effects"},
    "TestTruncating": {"converter:long-text"},
    "TestNaiveLocalTime": {"converter:timezone"},
    "TestSalvagesTorn": {"converter:torn-tail"},
    "TestCountsRecords": {"converter:golden", "converter:stable-ids", "converter:torn-tail"},
    "TestDropsOneTurn": {"converter:golden", "converter:stable-ids", "converter:long-text"},
    # What the kit of contract 2 still let through (issue 28): one requirement each.
    "TestGivesUpWhenTorn": {"converter:torn-tail"},
    # Without XDG_CACHE_HOME it writes ~/.cache, which discover's decoy HOME catches too.
    "TestCachesInXdg": {"converter:no-side-effects", "converter:discover"},
    "TestCachesInTmp": {"converter:no-side-effects"},
    "TestNaiveLocalNoFixtureTime": {"converter:timezone"},
    # Caught by stable-ids only because the kit keeps more records when half give no turn.
    "TestCountsRecordsLate": {"converter:golden", "converter:stable-ids", "converter:torn-tail"},
    "TestClobbering": {
        "installer:preserves-config",
        "installer:remove-restores",
        "installer:remove-restores-empty",
        "installer:refresh",
        "installer:malformed-config",
        "installer:refuses-read-only",
        "installer:refuses-dangling-link",
        "installer:fuzz-restores",
    },
    # It also never checks the config before deleting it, so a malformed one is not refused.
    "TestGreedy": {
        "installer:remove-restores",
        "installer:remove-restores-empty",
        "installer:refresh",
        "installer:malformed-config",
        "installer:fuzz-restores",
    },
    "TestHardcodedCommand": {"registrar:records-command", "registrar:records-memory"},
    "TestNotAServer": {"registrar:records-command", "registrar:records-memory", "registrar:mcp-tools-list"},
}


@pytest.mark.slow
def test_each_bug_fails_exactly_its_requirements(tmp_path: Path, run_suite: RunSuite) -> None:
    done, results = run_suite(tmp_path, BROKEN)
    assert done.returncode == 1, done.stdout[-3000:]
    failed: dict[str, set[str]] = {name: set() for name in EXPECTED_FAILURES}
    for result in results:
        assert result["outcome"] != "error", result
        if result["outcome"] == "failed":
            failed[result["class"]].add(result["requirement"])
    assert failed == EXPECTED_FAILURES
    skipped = {(r["class"], r["requirement"]) for r in results if r["outcome"] == "skipped"}
    assert ("TestHardcodedCommand", "registrar:mcp-tools-list") in skipped, (
        "an unstartable command is skipped"
    )
    dropped = next(
        r for r in results if r["class"] == "TestDropsOneTurn" and r["requirement"] == "converter:golden"
    )
    assert "missing turn m2" in dropped["reason"], "a dropped turn is named, not shown as a shifted id"


MUTATORS_IN_FIXTURES = """
import shutil
from pathlib import Path

import funes_echo
from funes_contracts import ConverterContract
from funes_echo import EchoConverter

FIX = Path(funes_echo.__file__).parent / "contract_fixtures"


class SpiedEcho(EchoConverter):
    contract_fixtures = "spied_fixtures"


class TestSpied(ConverterContract):
    converter_cls = SpiedEcho
    fixtures_dir = FIX
"""

SPIED_PACKAGE = """
from pathlib import Path

from funes_contracts import files

CALLS = Path(__file__).parent / "calls.log"


def _spy(name):
    with CALLS.open("a") as fh:
        fh.write(name + "\\n")


def make_earlier(folder):
    _spy("earlier")
    return files.earlier_lines(folder)


def make_torn(folder):
    _spy("torn")
    return files.tear_lines(folder)


def make_corrupt(folder):
    _spy("corrupt")
    return files.corrupt_lines(folder)


def make_long(folder, filler, expected):
    _spy("long")
    return files.lengthen_lines(folder, filler, expected)
"""


@pytest.mark.slow
def test_the_kit_finds_the_mutators_in_the_fixtures_package(tmp_path: Path, run_suite: RunSuite) -> None:
    """What `check` needs for agents that do not write JSON lines (hermes' SQLite, markdown, ...)."""
    package = tmp_path / "spied_fixtures"
    package.mkdir()
    (package / "__init__.py").write_text(textwrap.dedent(SPIED_PACKAGE), encoding="utf-8")
    done, results = run_suite(tmp_path, MUTATORS_IN_FIXTURES, pythonpath=tmp_path)
    assert done.returncode == 0, done.stdout[-3000:]
    # Only what echo declares it lacks is skipped (it names no location variable): the mutators were found.
    skipped = [r for r in results if r["outcome"] == "skipped"]
    assert [r for r in skipped if not r["reason"].startswith("capability")] == [], "nothing else is skipped"
    calls = set((package / "calls.log").read_text(encoding="utf-8").split())
    assert calls == {"earlier", "torn", "corrupt", "long"}


PROVISIONAL = (
    BROKEN
    + """

import dataclasses
from funes_contracts import requirements as _requirements

_requirements.REQUIREMENTS["converter:golden"] = dataclasses.replace(
    _requirements.REQUIREMENTS["converter:golden"], provisional=True
)
"""
)


@pytest.mark.slow
def test_a_provisional_requirement_only_warns(tmp_path: Path, run_suite: RunSuite) -> None:
    done, results = run_suite(tmp_path, PROVISIONAL, "-k", "TestDropsThinking")
    assert done.returncode == 0, done.stdout[-3000:]
    golden = [r for r in results if r["requirement"] == "converter:golden"]
    assert {r["outcome"] for r in golden} == {"xfailed", "passed"}
    assert any("provisional requirement converter:golden" in r["reason"] for r in golden)


@pytest.mark.slow
def test_an_unknown_requirement_id_is_a_usage_error(tmp_path: Path, run_suite: RunSuite) -> None:
    source = """
    import pytest

    @pytest.mark.requirement("converter:no-such-rule")
    def test_typo():
        pass
    """
    done, _ = run_suite(tmp_path, source)
    assert done.returncode == pytest.ExitCode.USAGE_ERROR
    assert "unknown requirement id 'converter:no-such-rule'" in done.stderr + done.stdout


WRONG_FIXTURES = """
from pathlib import Path

import pytest

from funes_contracts import ConverterContract
from funes_echo import EchoConverter


class TestWrongPath(ConverterContract):
    converter_cls = EchoConverter
    fixtures_dir = Path(__file__).parent / "no-such-fixtures"


@pytest.mark.agent_cli
def test_the_kit_registers_the_agent_cli_marker():
    pass
"""


def test_a_configured_fixtures_folder_that_is_missing_fails(tmp_path: Path, run_suite: RunSuite) -> None:
    """A wrong path must not give a green run of skips; the kit's markers need no conftest."""
    done, results = run_suite(tmp_path, WRONG_FIXTURES, "--strict-markers")
    assert done.returncode == 1, done.stdout[-3000:]
    golden = next(r for r in results if r["requirement"] == "converter:golden")
    assert golden["outcome"] in ("failed", "error"), golden  # failed in the fixture: an error
    assert "TestWrongPath.fixtures_dir" in golden["reason"] and "does not exist" in golden["reason"]
    discover = next(r for r in results if r["requirement"] == "converter:discover")
    assert discover["outcome"] == "failed", discover
    assert not [r for r in results if r["outcome"] == "skipped" and "fixtures" in r.get("reason", "")]
    assert "PytestUnknownMarkWarning" not in done.stdout + done.stderr
