"""``ConverterContract``: the conformance tests every funes converter passes.

Subclass it in your plugin's tests, point it at your converter class and at a fixtures folder::

    class TestEchoConverter(ConverterContract):
        converter_cls = EchoConverter
        fixtures_dir = Path(__file__).parent / "fixtures"

Fixtures layout (only ``cases/`` is required)::

    fixtures/
      cases/<name>/            native transcripts as the agent writes them, plus
        expected.funes.jsonl   the turns they must convert to (all sessions, in sessions_in order)
      home/                    a HOME as the agent leaves it (discover() must find its sessions)

Run ``pytest --funes-regen-goldens`` to write the expected files from your converter, then read
the diff: a golden is only worth what its review was.

Variants of each case (the transcript as it was earlier, a torn last record, an unreadable record,
a very long text) are derived by *mutators*. For JSON-lines transcripts the kit has them; for any
other format (a database, markdown) define ``make_earlier``, ``make_torn``, ``make_corrupt`` and
``make_long`` as functions in your ``contract_fixtures`` package (or override them on your test
class): the kit, and so ``funes integrations check``, finds them there.

A skip counts as conformance only when a declared capability explains it; every such skip's reason
starts with ``capability``. Any other skip is a failure in ``funes integrations check``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import inspect
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, ClassVar
from zoneinfo import ZoneInfo

import pytest

from funes_contracts import files
from funes_contracts.diff import diff_turns
from funes_contracts.hookrun import location_variables, moves, relocate
from funes_core.host.api import (
    CONTRACT_VERSION,
    ID_PATTERN,
    SPOOL_SUFFIX,
    Capabilities,
    Converter,
    IntegrationError,
    IntegrationPart,
    SessionRef,
    last_activity,
    spool_filename,
)
from funes_core.turns.format import Turn, is_utc_ts, parse_line, read_turns_file, turns_to_jsonl

__all__ = ["CASE_DIR", "ConverterContract"]

requirement = pytest.mark.requirement
_EXPECTED = "expected.funes.jsonl"

#: In a golden's ``cwd``, the folder the case was copied to. An agent whose transcript lives in the
#: repository it worked in (aider's ``.aider.chat.history.md``) has that folder as its ``cwd``, and
#: the kit copies each case to a new folder: ``"cwd": "{case}/app"`` says "the ``app`` folder of
#: the case". Every comparison (golden, earlier, torn, corrupt) sees a ``cwd`` inside the converted
#: folder written this way, so regenerated goldens hold it too.
CASE_DIR = "{case}"

#: Far-off zones for an agent that writes local time (``Capabilities(local_time=True)``): the
#: farthest ahead, the farthest behind, a quarter-hour offset and one with daylight-saving time.
LOCAL_TIME_ZONES = ("Pacific/Kiritimati", "Pacific/Pago_Pago", "Asia/Kathmandu", "America/St_Johns")


def assert_identity(cls: type[IntegrationPart], base: type[IntegrationPart]) -> None:
    """The part's id, label and contract version are well formed, and it is a concrete ``base``."""
    assert isinstance(getattr(cls, "id", None), str) and ID_PATTERN.fullmatch(cls.id), (
        f"{cls.__name__}.id must match [a-z0-9_-]+"
    )
    assert isinstance(getattr(cls, "label", None), str) and cls.label.strip(), "label must be non-empty"
    assert getattr(cls, "contract_version", None) == CONTRACT_VERSION, (
        f"contract_version must be {CONTRACT_VERSION}"
    )
    assert not getattr(cls, "__abstractmethods__", None), f"abstract: {cls.__abstractmethods__}"
    assert isinstance(cls(), base)


def case_relative(turns: Sequence[Turn], folder: Path) -> list[Turn]:
    """``turns`` with a ``cwd`` at or under ``folder`` written as :data:`CASE_DIR` plus the rest."""
    roots = sorted({str(folder), str(folder.resolve())}, key=len, reverse=True)
    out: list[Turn] = []
    for turn in turns:
        cwd = turn.cwd
        for root in roots if cwd else ():
            assert cwd is not None
            if cwd == root or cwd.startswith((root + "/", root + os.sep)):
                cwd = CASE_DIR + cwd[len(root) :].replace(os.sep, "/")
                break
        out.append(turn if cwd == turn.cwd else dataclasses.replace(turn, cwd=cwd))
    return out


def _moment(ts: str) -> datetime:
    return datetime.fromisoformat(ts.replace("Z", "+00:00"))


def _local_time_problem(utc: Sequence[Turn], moved: Sequence[Turn], zone: str) -> tuple[str | None, int]:
    """Why ``moved`` (converted in ``zone``) is not ``utc`` with local times moved by the zone's offset.

    A time written without an offset, read as local, is N in UTC and N - offset(N) in ``zone``:
    every turn must be the same but for its ``ts``, which is either the same (the agent wrote an
    offset or an epoch there) or earlier by exactly the zone's offset at that wall-clock time.
    Returns the problem (``None``: none) and how many turns moved.
    """
    if len(utc) != len(moved):
        return f"{len(utc)} turns under UTC, {len(moved)} under {zone}", 0
    shifted = 0
    for base, other in zip(utc, moved, strict=True):
        if dataclasses.replace(other, ts=base.ts) != base:
            problem = diff_turns([other], [base])
            return f"turn {base.turn_uuid} differs beyond its time under {zone}: {problem}", shifted
        if other.ts == base.ts:
            continue
        delta = _moment(base.ts) - _moment(other.ts)
        wall = _moment(base.ts).replace(tzinfo=None)
        offset = ZoneInfo(zone).utcoffset(wall) or timedelta(0)
        if delta != offset:
            return (
                f"turn {base.turn_uuid}: ts {base.ts} under UTC, {other.ts} under {zone}: moved by "
                f"{delta}, but {zone} is {offset} from UTC then (a local time must move by exactly that)"
            ), shifted
        shifted += 1
    return None, shifted


def _prefix_problem(earlier: list[Turn], later: list[Turn], *, may_drop_last: bool = False) -> str | None:
    """Why, session by session, ``earlier``'s turns are not a prefix of ``later``'s (``None``: they are).

    Whole turns are compared (ids, seq, time, role, every block), not only ids: a converter whose
    earlier turns change content when the transcript grows, or that "rescues" a torn record into a
    turn with a cut text, breaks what a memory of the session already holds. With
    ``may_drop_last`` the earlier conversion may lack the later one's last turns (a torn record
    is skipped), but every turn it has must be exactly the later one's.
    """
    by_session: dict[str, list[Turn]] = {}
    for turn in later:
        by_session.setdefault(turn.session_id, []).append(turn)
    mine: dict[str, list[Turn]] = {}
    for turn in earlier:
        mine.setdefault(turn.session_id, []).append(turn)
    for session_id, turns in mine.items():
        grown = by_session.get(session_id, [])
        if len(turns) > len(grown):
            return f"session {session_id}: {len(turns)} turns before, only {len(grown)} after"
        problem = diff_turns(turns, grown[: len(turns)])
        if problem is not None:
            return f"session {session_id}: {problem}"
    del may_drop_last  # every turn of the earlier conversion is compared; fewer is fine
    return None


def _field_difference(actual: str, expected: str) -> str:
    """The first field two turn lines disagree on, e.g. ``seq: expected 1, got 2``."""
    try:
        got, want = json.loads(actual), json.loads(expected)
    except ValueError:
        return f"expected {expected[:120]!r}, got {actual[:120]!r}"
    for key in [*want, *(k for k in got if k not in want)]:
        if got.get(key) != want.get(key):
            a = json.dumps(got.get(key), ensure_ascii=False)[:120]
            b = json.dumps(want.get(key), ensure_ascii=False)[:120]
            return f"{key}: expected {b}, got {a}"
    return "the same fields in another order"


def _first_difference(actual: str, expected: str) -> str:
    """One line saying where two turns files first differ (the detail follows on the next lines)."""
    got = actual.split("\n")
    want = expected.split("\n")
    for number, (a, b) in enumerate(zip(got, want, strict=False), start=1):
        if a != b:
            return f"line {number}: {_field_difference(a, b)}\n  expected: {b}\n  actual:   {a}"
    if len(got) != len(want):
        return f"expected {len(want)} lines, got {len(got)}"
    return "the files differ in line endings or a trailing newline"


class ConverterContract:
    """The converter half of the funes plugin contract (``converter:*`` requirements)."""

    #: The converter class under test (required).
    converter_cls: ClassVar[type[Converter]]
    #: A folder laid out as described in the module docstring (``None``: fixture tests skip).
    fixtures_dir: ClassVar[Path | None] = None
    #: Override the converter's own :class:`Capabilities` declaration (rarely needed).
    capabilities: ClassVar[Capabilities | None] = None

    # -- hooks an author may override (non-line-based transcript formats) ------------------------

    def make_earlier(self, folder: Path) -> bool:
        """Rewrite the transcripts in ``folder`` as they were earlier (fewer records).

        Return ``False`` when you cannot; the default handles JSON-lines transcripts.
        """
        return files.earlier_lines(folder)

    def make_torn(self, folder: Path) -> bool:
        """Cut the last record of the transcripts in ``folder`` mid-write (default: JSON lines)."""
        return files.tear_lines(folder)

    def make_corrupt(self, folder: Path) -> bool:
        """Insert an unreadable record after the first one (default: JSON lines)."""
        return files.corrupt_lines(folder)

    def make_long(self, folder: Path, filler: str, expected: Path) -> bool:
        """Append ``filler`` to a text the converter keeps (default: JSON lines, guided by the golden)."""
        return files.lengthen_lines(folder, filler, expected)

    def _mutator(self, name: str) -> Callable[..., Any]:
        """The class's own override, else ``<contract_fixtures>.<name>``, else the kit's default."""
        mine = getattr(type(self), name)
        if mine is not getattr(ConverterContract, name):
            return getattr(self, name)  # type: ignore[no-any-return]
        package = self.converter_cls.contract_fixtures
        if package:
            try:
                module = importlib.import_module(package)
            except ImportError:
                module = None
            found = getattr(module, name, None)
            if callable(found):
                return found  # type: ignore[no-any-return]
        return getattr(self, name)  # type: ignore[no-any-return]

    def _kit_default(self, name: str) -> bool:
        """Whether the kit's own JSON-lines mutator ``name`` is the one in use (no override anywhere)."""
        return self._mutator(name) == getattr(self, name) and getattr(type(self), name) is getattr(
            ConverterContract, name
        )

    def foreign_files(self, folder: Path) -> None:
        """Fill ``folder`` with files that are not this agent's transcripts.

        An integration whose sessions *are* such files (notes read ``README.txt``) defines
        ``foreign_files`` in its ``contract_fixtures`` package, like the mutators.
        """
        (folder / "README.txt").write_text("not a transcript\n", encoding="utf-8")
        (folder / "notes.json").write_text('{"title": "not a transcript"}\n', encoding="utf-8")
        (folder / "empty.jsonl").write_text("", encoding="utf-8")
        (folder / "other.jsonl").write_text('{"kind": "unrelated"}\n[1, 2, 3]\n', encoding="utf-8")
        (folder / "binary.jsonl").write_bytes(b"\x00\xff\xfe garbage \x00\n")

    # -- fixtures --------------------------------------------------------------------------------

    @pytest.fixture
    def converter(self) -> Converter:
        return self.converter_cls()

    @pytest.fixture
    def caps(self) -> Capabilities:
        return self.capabilities or self.converter_cls.capabilities

    @pytest.fixture
    def case(self, contract_case: Path | None, tmp_path: Path) -> Path:
        """A private copy of one fixture case (without its golden file)."""
        if contract_case is None:
            if self.fixtures_dir is not None:
                # A configured folder that is not there is a broken test set-up, not a missing
                # feature: skipping would turn a wrong path into a green run.
                pytest.fail(self._missing_fixtures())
            pytest.skip(f"{type(self).__name__} has no fixtures_dir with cases/ (see funes_contracts docs)")
        return files.copy_case(contract_case, tmp_path / "case")

    @pytest.fixture
    def expected(self, contract_case: Path | None) -> Path:
        assert contract_case is not None
        return contract_case / _EXPECTED

    # -- helpers ---------------------------------------------------------------------------------

    @staticmethod
    def _convert_all(converter: Converter, folder: Path) -> list[Turn]:
        """Every session in ``folder``, converted; a session the converter refuses is left out.

        ``convert`` may refuse one unreadable session with :class:`IntegrationError` (its one line is
        what the host shows, e.g. a note that is not UTF-8): the host skips it and converts the rest,
        and so does the suite. A refused session is still missing from the golden comparison, so a
        converter cannot pass by refusing what it should read.
        """
        turns: list[Turn] = []
        for ref in converter.sessions_in(folder):
            try:
                turns.extend(converter.convert(ref))
            except IntegrationError:
                continue
        return turns

    def _relative(self, converter: Converter, folder: Path) -> list[Turn]:
        """:meth:`_convert_all`, with a ``cwd`` inside ``folder`` written as :data:`CASE_DIR`."""
        return case_relative(self._convert_all(converter, folder), folder)

    def _converted(self, converter: Converter, case: Path) -> list[Turn]:
        turns = self._convert_all(converter, case)
        if not turns:
            pytest.fail(f"the case {case.name} converts to no turns; a fixture case must hold a session")
        return turns

    def _variant(self, case: Path, tmp_path: Path, what: str, *args: Any) -> Path:
        # Under the case's own folder name: a converter may name sessions after the folder it reads.
        folder = files.copy_case(case, tmp_path / f"variant-{what}" / case.name)
        if not self._mutator(f"make_{what}")(folder, *args):
            package = self.converter_cls.contract_fixtures or "the converter's contract_fixtures package"
            pytest.skip(
                f"cannot derive {what} transcripts from this case: it has no JSON-lines transcript; "
                f"define make_{what}() in {package} (where `funes integrations check` finds it: a "
                "method on your own test class is seen only by your own pytest run), see "
                "docs/plugins/testing.md#awkward-inputs"
            )
        return folder

    def _missing_fixtures(self) -> str:
        where = Path(self.fixtures_dir) if self.fixtures_dir is not None else None
        what = "does not exist" if where is None or not where.is_dir() else "has no cases/ folder"
        return (
            f"{type(self).__name__}.fixtures_dir {where} {what}: point it at the contract_fixtures "
            "package (importlib.resources.files('<your_package>.contract_fixtures')), or leave it unset"
        )

    @staticmethod
    def _skip_capability(name: str, why: str) -> None:
        pytest.skip(f"capability {name}: {why}")

    # -- tests -----------------------------------------------------------------------------------

    @requirement("converter:identity")
    def test_identity(self) -> None:
        assert_identity(self.converter_cls, Converter)

    @requirement("converter:discover-empty-home")
    def test_discover_empty_home(self, converter: Converter, caps: Capabilities, tmp_path: Path) -> None:
        if not caps.discover:
            self._skip_capability("discover", "the converter declares it cannot discover sessions")
        home = tmp_path / "empty-home"
        home.mkdir()
        assert converter.discover(home) == []
        assert converter.agent_found(home) is False
        assert list(home.iterdir()) == [], "discover() must not create anything in HOME"

    @requirement("converter:discover")
    def test_discover(
        self, converter: Converter, caps: Capabilities, tmp_path: Path, decoy_home: Path
    ) -> None:
        source, home = self._home_copy(caps, tmp_path)
        # The process's own ~ holds the agent's sessions too: a converter reading it instead of the
        # HOME it was given finds them there.
        shutil.copytree(source, decoy_home, dirs_exist_ok=True)
        seeded = files.snapshot(decoy_home)
        refs = converter.discover(home)
        assert refs, "discover() found no session in the fixture home"
        assert all(isinstance(r, SessionRef) for r in refs)
        stamps = [r.last_activity for r in refs]
        assert stamps == sorted(stamps, reverse=True), "discover() must list sessions newest first"
        for ref in refs:
            assert ref.path.is_relative_to(home), f"{ref.path} is outside the HOME it was given" + (
                " (in the process's own ~)" if ref.path.is_relative_to(decoy_home) else ""
            )
            converter.convert(ref)
        assert converter.agent_found(home) is True
        assert files.snapshot(decoy_home) == seeded, "discover() wrote into the process's own ~"

    @requirement("converter:golden")
    def test_golden(
        self, converter: Converter, case: Path, expected: Path, regen_goldens: bool, caps: Capabilities
    ) -> None:
        # An agent writing local time has goldens written, and checked, in UTC.
        with _time_zone("UTC") if caps.local_time else contextlib.nullcontext():
            turns = self._relative(converter, case)
        actual = turns_to_jsonl(turns)
        if regen_goldens:
            expected.write_text(actual, encoding="utf-8")
            pytest.skip(f"wrote {expected}")
        if not expected.is_file():
            pytest.fail(f"{expected} is missing; run pytest --funes-regen-goldens and review it")
        want = expected.read_text(encoding="utf-8")
        if actual != want:
            problem = diff_turns(turns, list(read_turns_file(expected).turns))
            pytest.fail(
                f"{expected.parent.name}: {problem or _first_difference(actual, want)}", pytrace=False
            )

    @requirement("converter:schema")
    def test_schema(self, converter: Converter, case: Path) -> None:
        for turn in self._converted(converter, case):
            line = turns_to_jsonl([turn])
            assert parse_line(line, path=f"<{converter.id} output>") == turn

    @requirement("converter:harness")
    def test_harness(self, converter: Converter, case: Path) -> None:
        wrong = {t.harness for t in self._converted(converter, case)} - {converter.id}
        assert not wrong, f"turns carry harness {sorted(wrong)}, expected {converter.id!r}"

    @requirement("converter:seq-dense")
    def test_seq_dense(self, converter: Converter, case: Path) -> None:
        by_session: dict[str, list[int]] = {}
        for turn in self._converted(converter, case):
            by_session.setdefault(turn.session_id, []).append(turn.seq)
        for session_id, seqs in by_session.items():
            assert seqs == list(range(len(seqs))), (
                f"session {session_id}: seq is {seqs}, not 0..{len(seqs) - 1}"
            )

    @requirement("converter:unique-ids")
    def test_unique_ids(self, converter: Converter, case: Path) -> None:
        seen: set[tuple[str, str]] = set()
        for turn in self._converted(converter, case):
            key = (turn.session_id, turn.turn_uuid)
            assert key not in seen, f"session {turn.session_id}: turn_uuid {turn.turn_uuid} repeats"
            seen.add(key)

    @requirement("converter:ts-utc")
    def test_ts_utc(self, converter: Converter, case: Path) -> None:
        for turn in self._converted(converter, case):
            assert is_utc_ts(turn.ts), f"turn {turn.turn_uuid}: ts {turn.ts!r} is not RFC 3339 UTC with Z"

    @requirement("converter:deterministic")
    def test_deterministic(self, case: Path) -> None:
        first = turns_to_jsonl(self._convert_all(self.converter_cls(), case))
        second = turns_to_jsonl(self._convert_all(self.converter_cls(), case))
        assert first == second, _first_difference(second, first)

    @requirement("converter:stable-ids")
    def test_stable_ids_when_transcript_grows(self, converter: Converter, case: Path, tmp_path: Path) -> None:
        full = case_relative(self._converted(converter, case), case)
        earlier_folder = self._variant(case, tmp_path, "earlier")
        earlier = self._relative(converter, earlier_folder)
        if not earlier and len(full) > 1 and self._kit_default("make_earlier"):
            # Half the records gave no turn (a case whose turns all come late): an empty earlier
            # conversion is a prefix of anything and proves nothing, so keep all but the last record.
            earlier_folder = files.copy_case(case, tmp_path / "variant-earlier-last" / case.name)
            files.earlier_lines(earlier_folder, keep_all_but_last=True)
            earlier = self._relative(converter, earlier_folder)
            assert earlier, (
                f"the case {case.name} converts to {len(full)} turns, but without its last record to "
                "none: the earlier variant exercises nothing (a growing transcript keeps what it had)"
            )
        assert len(earlier) <= len(full)
        problem = _prefix_problem(earlier, full)
        assert problem is None, f"the turns of the earlier transcript must keep their ids: {problem}"

    @requirement("converter:torn-tail")
    def test_torn_tail(self, converter: Converter, case: Path, tmp_path: Path) -> None:
        full = case_relative(self._converted(converter, case), case)
        torn_folder = self._variant(case, tmp_path, "torn")
        torn = self._relative(converter, torn_folder)
        problem = _prefix_problem(torn, full, may_drop_last=True)
        assert problem is None, f"a torn last record must not change the turns before it: {problem}"
        if self._kit_default("make_torn"):
            # The kit knows what was complete before the tear: exactly those records must convert,
            # not fewer (a converter giving up on the whole file passed the prefix rule).
            complete = files.copy_case(case, tmp_path / "variant-complete" / case.name)
            files.complete_lines(complete)
            before = self._relative(converter, complete)
            problem = diff_turns(torn, before)
            assert problem is None, (
                f"a torn last record must leave the complete records before it converted as is: {problem}"
            )

    @requirement("converter:bad-record")
    def test_bad_record(self, converter: Converter, case: Path, tmp_path: Path) -> None:
        full = case_relative(self._converted(converter, case), case)
        corrupt_folder = self._variant(case, tmp_path, "corrupt")
        survived = self._relative(converter, corrupt_folder)
        problem = diff_turns(survived, full)
        assert problem is None, f"an unreadable record must be skipped: {problem}"

    @requirement("converter:foreign-files")
    def test_foreign_files(self, converter: Converter, tmp_path: Path) -> None:
        folder = tmp_path / "foreign"
        folder.mkdir()
        self._mutator("foreign_files")(folder)
        turns = self._convert_all(converter, folder)
        assert turns == [], f"files that are not {converter.id} transcripts produced {len(turns)} turns"

    def _spool_all(self, converter: Converter, case: Path, funes_home: Path) -> list[Any]:
        writes = []
        for ref in converter.sessions_in(case):
            writes.extend(converter.write_spool(ref, funes_home))
        return writes

    @requirement("converter:spool-atomic")
    def test_spool_atomic(
        self, converter: Converter, case: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        funes_home = tmp_path / "funes-home"
        renames: list[tuple[str, str]] = []
        real_replace, real_rename = os.replace, os.rename

        def spy_replace(src: Any, dst: Any, *args: Any, **kwargs: Any) -> None:
            renames.append((os.fspath(src), os.fspath(dst)))
            real_replace(src, dst, *args, **kwargs)

        def spy_rename(src: Any, dst: Any, *args: Any, **kwargs: Any) -> None:
            renames.append((os.fspath(src), os.fspath(dst)))
            real_rename(src, dst, *args, **kwargs)

        monkeypatch.setattr(os, "replace", spy_replace)
        monkeypatch.setattr(os, "rename", spy_rename)
        writes = self._spool_all(converter, case, funes_home)
        monkeypatch.undo()
        spool = converter.spool_dir(funes_home)
        assert writes, "write_spool() wrote nothing"
        for write in writes:
            final = os.fspath(write.path)
            sources = [src for src, dst in renames if dst == final]
            assert sources, f"{write.path.name} was not renamed into place (write a temp name, then rename)"
            src = Path(sources[-1])
            assert src.parent == write.path.parent, f"temp file {src} is not in the spool folder"
            assert not src.name.endswith(".jsonl"), (
                f"temp name {src.name} ends in .jsonl: funes could read it"
            )
        leftovers = [p.name for p in spool.iterdir() if not p.name.endswith(SPOOL_SUFFIX)]
        assert leftovers == [], f"temporary files left in the spool: {leftovers}"

    @requirement("converter:spool-layout")
    def test_spool_layout(self, converter: Converter, case: Path, tmp_path: Path) -> None:
        funes_home = tmp_path / "funes-home"
        self._spool_all(converter, case, funes_home)
        turns = self._converted(converter, case)
        by_session: dict[str, list[Turn]] = {}
        for turn in turns:
            by_session.setdefault(turn.session_id, []).append(turn)
        spool = funes_home / "spool" / converter.id
        assert converter.spool_dir(funes_home) == spool
        names = sorted(p.name for p in spool.iterdir())
        assert names == sorted(spool_filename(s) for s in by_session), (
            "one <session_id>.funes.jsonl per session"
        )
        for session_id, items in by_session.items():
            parsed = read_turns_file(spool / spool_filename(session_id))
            assert parsed.turns == items, f"{session_id}: the spool file does not hold the session's turns"
        assert (spool.stat().st_mode & 0o077) == 0, "the spool folder must be private (0700)"

    @requirement("converter:spool-mtime")
    def test_spool_mtime(self, converter: Converter, case: Path, tmp_path: Path) -> None:
        funes_home = tmp_path / "funes-home"
        for write in self._spool_all(converter, case, funes_home):
            newest = last_activity(read_turns_file(write.path).turns)
            assert newest is not None
            assert abs(write.path.stat().st_mtime - newest) < 0.001, (
                f"{write.path.name}: mtime is not the session's last activity"
            )

    @requirement("converter:spool-idempotent")
    def test_spool_idempotent(self, converter: Converter, case: Path, tmp_path: Path) -> None:
        funes_home = tmp_path / "funes-home"
        first = self._spool_all(converter, case, funes_home)
        before = files.snapshot(funes_home)
        stamps = {p: p.stat().st_mtime for p in (w.path for w in first)}
        second = self._spool_all(converter, case, funes_home)
        assert all(not w.changed for w in second), "a second write of the same sessions reported changes"
        assert files.snapshot(funes_home) == before
        assert {p: p.stat().st_mtime for p in stamps} == stamps

    # -- contract 2 --------------------------------------------------------------------------------

    @requirement("converter:no-side-effects")
    def test_no_side_effects(
        self,
        converter: Converter,
        case: Path,
        tmp_path: Path,
        decoy_home: Path,
        caps: Capabilities,
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        """Discover, convert, write an output folder and the spool: only those two change.

        Watched besides the test's folder and the decoy HOME: the temporary folder (``TMPDIR``,
        and ``tempfile``'s), the XDG folders (cache, data, state, config, runtime) and the
        converter's own package folder, the places a converter caches things.
        """
        elsewhere = tmp_path.parent / f"{tmp_path.name}-elsewhere"
        watched = {name: elsewhere / name.lower() for name in _WATCHED_ENV}
        for name, folder in watched.items():
            folder.mkdir(parents=True)
            monkeypatch.setenv(name, str(folder))
        monkeypatch.setattr(tempfile, "tempdir", str(watched["TMPDIR"]))
        package = Path(inspect.getfile(type(converter))).parent
        package_before = _package_files(package)
        home = tmp_path / "home"
        source = Path(self.fixtures_dir) / "home" if self.fixtures_dir else None
        if source is not None and source.is_dir():
            shutil.copytree(source, home)
        else:
            home.mkdir()
        out, funes_home = tmp_path / "out", tmp_path / "funes-home"
        before = files.snapshot(tmp_path)
        with files.read_only(case), files.read_only(home):
            refs = [*converter.sessions_in(case), *(converter.discover(home) if caps.discover else [])]
            for ref in refs:
                converter.convert(ref)
                converter.convert_into(ref, out)
                converter.write_spool(ref, funes_home)
        after = files.snapshot(tmp_path)
        allowed = ("out/", "funes-home/")
        changed = sorted(
            k for k in set(before) | set(after) if before.get(k) != after.get(k) and not k.startswith(allowed)
        )
        assert not changed, f"the converter wrote outside the output folder and the spool: {changed[:5]}"
        assert files.snapshot(decoy_home) == {}, "the converter wrote into the process's own ~"
        for name, folder in watched.items():
            written = sorted(files.snapshot(folder))
            assert not written, f"the converter wrote into ${name}: {written[:5]}"
        assert _package_files(package) == package_before, f"the converter wrote into its package {package}"

    @requirement("converter:timezone")
    def test_timezone(self, case: Path, caps: Capabilities, contract_case: Path | None) -> None:
        """Convert under UTC and under UTC+14: the same turns (the golden test runs in the zone CI has).

        An agent that declares ``local_time`` writes times without an offset in the machine's zone:
        under each of :data:`LOCAL_TIME_ZONES` those times, and only those, must move by exactly the
        zone's offset, and under UTC+14 at least one must (else nothing is read as local).
        """
        with _time_zone("UTC"):
            utc = self._convert_all(self.converter_cls(), case)
        if caps.local_time:
            for zone in LOCAL_TIME_ZONES:
                with _time_zone(zone):
                    moved = self._convert_all(self.converter_cls(), case)
                problem, shifted = _local_time_problem(utc, moved, zone)
                if problem is not None:
                    pytest.fail(f"local time read wrongly: {problem}", pytrace=False)
                if zone == LOCAL_TIME_ZONES[0] and not shifted:
                    pytest.fail(
                        f"the converter declares local_time, but no time of case "
                        f"{(contract_case or case).name} moved under "
                        f"{zone} (UTC+14): it reads no time as local (parse_ts(value, naive='local'))",
                        pytrace=False,
                    )
            return
        with _time_zone("Pacific/Kiritimati"):
            plus14 = turns_to_jsonl(self._convert_all(self.converter_cls(), case))
        if turns_to_jsonl(utc) != plus14:
            problem = diff_turns([parse_line(line) for line in plus14.split("\n") if line], utc)
            pytest.fail(f"the output depends on the time zone (UTC+14 against UTC): {problem}", pytrace=False)
        # A case may hold no time without an offset: make one, so reading it as local time is caught.
        naive = files.copy_case(case, case.parent / "variant-naive" / case.name)
        if files.strip_offsets(naive):
            with _time_zone("UTC"):
                naive_utc = self._convert_all(self.converter_cls(), naive)
            with _time_zone("Pacific/Kiritimati"):
                naive_plus14 = self._convert_all(self.converter_cls(), naive)
            if turns_to_jsonl(naive_utc) != turns_to_jsonl(naive_plus14):
                problem = diff_turns(naive_plus14, naive_utc)
                pytest.fail(
                    "with its times written without an offset, the case converts differently under "
                    f"UTC+14 than under UTC (a time without an offset is UTC): {problem}",
                    pytrace=False,
                )

    @requirement("converter:long-text")
    def test_long_text(self, converter: Converter, case: Path, expected: Path, tmp_path: Path) -> None:
        """A 70,000-character text (multi-byte, across 4 KiB boundaries) comes through verbatim."""
        filler = files.long_filler()
        folder = self._variant(case, tmp_path, "long", filler, expected)
        texts = [b.text for t in self._convert_all(converter, folder) for b in t.blocks]
        if any(filler in text for text in texts):
            return
        longest = max((len(t) for t in texts if files.FILLER_MARK in t), default=0)
        assert longest, "the long text is missing from the output altogether"
        pytest.fail(
            f"the long text was cut or changed: {longest} characters of it came through, "
            f"{len(filler)} were written",
            pytrace=False,
        )

    # -- where the agent keeps its sessions (issue 28) ---------------------------------------------

    def _home_copy(self, caps: Capabilities, tmp_path: Path) -> tuple[Path, Path]:
        """The fixture HOME (``home/``) and a private copy of it; skips when there is none."""
        if not caps.discover:
            self._skip_capability("discover", "the converter declares it cannot discover sessions")
        if self.fixtures_dir is not None and not Path(self.fixtures_dir).is_dir():
            pytest.fail(self._missing_fixtures())
        source = Path(self.fixtures_dir) / "home" if self.fixtures_dir else None
        if source is None or not source.is_dir():
            pytest.skip("no home/ folder in fixtures_dir (a HOME as the agent leaves it)")
        home = tmp_path / "home"
        shutil.copytree(source, home)
        return source, home

    @requirement("location:env")
    def test_location_variables(
        self,
        converter: Converter,
        caps: Capabilities,
        tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch,
        decoy_home: Path,
    ) -> None:
        """Each declared location variable, pointed at the agent's folder moved out of HOME, is followed."""
        agent = self.converter_cls.agent
        if agent is None or not any(loc.env for loc in agent.locations):
            self._skip_capability("location-env", "the agent declares no location a variable moves")
        source, _ = self._home_copy(caps, tmp_path)
        found = moves(agent, source)
        if not found:
            pytest.skip("the fixture home holds none of the folders the agent's location variables move")
        for var in location_variables(agent):
            monkeypatch.delenv(var, raising=False)
        want = sorted({r.session_id for r in converter.discover(tmp_path / "home")})
        for number, (_, var, default) in enumerate(found):
            home = tmp_path / f"moved-{number}" / "home"
            shutil.copytree(source, home)
            moved = relocate(home, source, default)
            with monkeypatch.context() as env:
                env.setenv("HOME", str(home))  # the variables apply to the process's own HOME
                env.setenv(var, str(moved))
                got = sorted({r.session_id for r in self.converter_cls().discover(home)})
            what = "HOME" if default == source else default.relative_to(source).as_posix()
            assert got == want, (
                f"with {what} moved to {moved} and ${var} naming it, discover() found "
                f"{len(got)} sessions, not the {len(want)} it finds in place "
                f"(missing: {sorted(set(want) - set(got))[:3]})"
            )

    @requirement("location:every-session")
    def test_every_session_is_discovered(
        self, converter: Converter, caps: Capabilities, tmp_path: Path, decoy_home: Path
    ) -> None:
        """Every session a file of the fixture HOME holds is discovered (archived sessions too)."""
        _, home = self._home_copy(caps, tmp_path)
        held: dict[str, Path] = {}
        for path in sorted(home.rglob("*")):
            if path.is_file():
                for ref in converter.sessions_in(path):
                    held.setdefault(ref.session_id, path)
        found = {r.session_id for r in converter.discover(home)}
        missing = sorted(set(held) - found)
        assert not missing, (
            f"discover() misses {len(missing)} of the {len(held)} sessions in the fixture HOME: "
            + ", ".join(f"{sid} ({held[sid].relative_to(home)})" for sid in missing[:3])
        )


#: The variables naming folders a converter might write to, each pointed at an empty decoy.
_WATCHED_ENV = (
    "TMPDIR",
    "XDG_CACHE_HOME",
    "XDG_DATA_HOME",
    "XDG_STATE_HOME",
    "XDG_CONFIG_HOME",
    "XDG_RUNTIME_DIR",
)


def _package_files(package: Path) -> dict[str, tuple[bytes, int]]:
    """The converter's package folder: each file's bytes and mtime (bytecode caches left out: Python
    writes them). The mtime catches a cache rewritten with the bytes it already had: the package's
    files were there before the test, and earlier tests may have written it."""
    return {
        name: (data, (package / name).lstat().st_mtime_ns)
        for name, data in files.snapshot(package).items()
        if "__pycache__" not in name and not name.endswith((".pyc", ".pyo"))
    }


@contextlib.contextmanager
def _time_zone(name: str) -> Iterator[None]:
    """Run with ``TZ=name`` (and ``time.tzset``), restoring the zone after.

    Windows has no ``tzset``: a process cannot change its own zone there, so the requirement is
    skipped on Windows (the same suite run on Linux or macOS checks it).
    """
    tzset = getattr(time, "tzset", None)
    if tzset is None:
        pytest.skip("Windows cannot change a running process' time zone (checked on Linux and macOS)")
    old = os.environ.get("TZ")
    os.environ["TZ"] = name
    tzset()
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("TZ", None)
        else:
            os.environ["TZ"] = old
        tzset()
