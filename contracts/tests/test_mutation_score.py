"""The kit's mutation score: of plausible bugs put into a reference plugin, how many the kit alone catches.

Issue 28 injected 56 plausible converter bugs into the claude and codex plugins; `funes
integrations check` caught 45 of them (80%). The mutants below are bugs of the same kinds (lost or
altered blocks, ids, times, torn and corrupt records, side effects, discovery and locations, the
spool) plus broken per-turn hooks, each applied to funes-codex, the reference plugin here (JSON
lines, a hook module, ``CODEX_HOME``, archived sessions). The contract suite runs once over all of
them, in a fresh pytest as ``check`` runs it; a mutant is caught when at least one requirement fails
(or warns, for a provisional one). The target is 95%.

Mutants that change nothing observable in Codex's output (naming a session after its file, whose
name holds the same id; sorting a turn's blocks by type, when a Codex turn's blocks are all of one
type) are not in the set: no test could catch them, and they would only dilute the figure.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

#: The share of mutants the kit must catch.
TARGET = 0.95

CONVERTER_MUTANTS = """
import json
import os
import random
import re
import sys
import tempfile
import uuid
from dataclasses import replace
from pathlib import Path

import funes_codex.converter as _module
import kit_mutants
from funes_codex import CodexConverter
from funes_core import Block, format_ts


def _blocks(turns, keep):
    out = []
    for t in turns:
        blocks = tuple(b for b in t.blocks if keep(b))
        if blocks:
            out.append(replace(t, blocks=blocks))
    return [replace(t, seq=i, turn_uuid=f"{t.session_id}-{i}") for i, t in enumerate(out)]


def _lines(ref):
    return [line for line in ref.path.read_bytes().split(b"\\n") if line.strip()]


class DropsThinking(CodexConverter):
    def convert(self, ref):
        return _blocks(super().convert(ref), lambda b: b.block_type != "thinking")


class DropsToolResults(CodexConverter):
    def convert(self, ref):
        return _blocks(super().convert(ref), lambda b: b.block_type != "tool_result")


class DropsToolCalls(CodexConverter):
    def convert(self, ref):
        return _blocks(super().convert(ref), lambda b: b.block_type != "tool_use")


class SwapsRoles(CodexConverter):
    def convert(self, ref):
        swap = {"user": "assistant", "assistant": "user"}
        return [replace(t, role=swap.get(t.role, t.role)) for t in super().convert(ref)]


class SeqFromOne(CodexConverter):
    def convert(self, ref):
        return [replace(t, seq=t.seq + 1) for t in super().convert(ref)]


class SeqCountsRecords(CodexConverter):
    # seq is the line number, not the count of turns kept.
    def convert(self, ref):
        return [replace(t, seq=3 * t.seq) for t in super().convert(ref)]


class RandomIds(CodexConverter):
    def convert(self, ref):
        return [replace(t, turn_uuid=uuid.uuid4().hex) for t in super().convert(ref)]


class IdsFromLinePosition(CodexConverter):
    # Ids from the line's position among all lines: an unreadable line shifts every later id.
    def convert(self, ref):
        turns = super().convert(ref)
        bad = sum(1 for line in _lines(ref)[:2] if not _readable(line))
        return [replace(t, turn_uuid=f"{t.session_id}-{t.seq + bad}") for t in turns]


def _readable(line):
    try:
        json.loads(line)
        return True
    except ValueError:
        return False


class OffsetNotZ(CodexConverter):
    def convert(self, ref):
        return [replace(t, ts=t.ts.replace("Z", "+00:00")) for t in super().convert(ref)]


class DropsMilliseconds(CodexConverter):
    def convert(self, ref):
        return [replace(t, ts=re.sub(r"\\.\\d+Z$", "Z", t.ts)) for t in super().convert(ref)]


class ReadsLocalTime(CodexConverter):
    # A time without an offset read as the machine's local time.
    def convert(self, ref):
        from datetime import UTC, datetime

        original = _module.parse_ts

        def local(value, **kwargs):
            if isinstance(value, str):
                try:
                    moment = datetime.fromisoformat(value.strip())
                except ValueError:
                    return original(value, **kwargs)
                if moment.tzinfo is None:
                    return format_ts(moment.astimezone(UTC))
            return original(value, **kwargs)

        _module.parse_ts = local
        try:
            return super().convert(ref)
        finally:
            _module.parse_ts = original


class WrongHarness(CodexConverter):
    def convert(self, ref):
        return [replace(t, harness="openai-codex") for t in super().convert(ref)]


class StripsText(CodexConverter):
    def convert(self, ref):
        fix = lambda b: replace(b, text=b.text.strip())
        return [replace(t, blocks=tuple(fix(b) for b in t.blocks)) for t in super().convert(ref)]


class Truncates(CodexConverter):
    def convert(self, ref):
        cut = lambda b: replace(b, text=b.text[:4000])
        return [replace(t, blocks=tuple(cut(b) for b in t.blocks)) for t in super().convert(ref)]


class FirstBlockOnly(CodexConverter):
    def convert(self, ref):
        return [replace(t, blocks=t.blocks[:1]) for t in super().convert(ref)]


class NormalisesNewlines(CodexConverter):
    def convert(self, ref):
        fix = lambda b: replace(b, text=b.text.replace("\\n", " "))
        return [replace(t, blocks=tuple(fix(b) for b in t.blocks)) for t in super().convert(ref)]


class StrictJson(CodexConverter):
    def convert(self, ref):
        for line in _lines(ref):
            json.loads(line)
        return super().convert(ref)


class GivesUpWhenTorn(CodexConverter):
    def convert(self, ref):
        lines = _lines(ref)
        return [] if lines and not _readable(lines[-1]) else super().convert(ref)


class StopsAtBadLine(CodexConverter):
    # Reads up to the first unreadable line, as a streaming reader that gives up would.
    def convert(self, ref):
        turns = super().convert(ref)
        lines = _lines(ref)
        bad = next((i for i, line in enumerate(lines) if not _readable(line)), None)
        if bad is None or bad == len(lines) - 1:
            return turns
        return turns[:1]


class SalvagesTorn(CodexConverter):
    def convert(self, ref):
        turns = super().convert(ref)
        lines = _lines(ref)
        if turns and lines and not _readable(lines[-1]):
            n = len(turns)
            placeholder = (Block("text", "[still being written]"),)
            uid = f"{turns[-1].session_id}-{n}"
            turns.append(replace(turns[-1], seq=n, turn_uuid=uid, blocks=placeholder))
        return turns


class DropsCwd(CodexConverter):
    def convert(self, ref):
        return [replace(t, cwd=None) for t in super().convert(ref)]


class WrongParent(CodexConverter):
    def convert(self, ref):
        turns = super().convert(ref)
        return [replace(t, parent_uuid=turns[0].turn_uuid if i else None) for i, t in enumerate(turns)]


class StampsLength(CodexConverter):
    # Earlier turns change as the rollout grows.
    def convert(self, ref):
        turns = super().convert(ref)
        first = lambda t: replace(t.blocks[0], text=f"({len(turns)}) " + t.blocks[0].text)
        return [replace(t, blocks=(first(t), *t.blocks[1:])) for t in turns]


class ReversesSessions(CodexConverter):
    def sessions_in(self, path):
        return list(reversed(super().sessions_in(path)))


class AcceptsAnyJsonl(CodexConverter):
    def sessions_in(self, path):
        from funes_core import SessionRef

        found = super().sessions_in(path)
        if path.is_dir():
            known = {r.path for r in found}
            extra = [p for p in sorted(path.glob("*.jsonl")) if p not in known]
            found += [SessionRef(p.stem, p, p.stat().st_mtime) for p in extra]
        return found

    def convert(self, ref):
        turns = super().convert(ref)
        if turns:
            return turns
        from funes_core import Turn

        text = ref.path.read_text(errors="replace")[:50] or "?"
        return [Turn(ref.session_id, "0", 0, "2026-01-01T00:00:00Z", "user", "codex", (Block("text", text),))]


class ChokesOnBinary(CodexConverter):
    def sessions_in(self, path):
        for p in [path] if path.is_file() else sorted(path.rglob("*.jsonl")):
            p.read_text(encoding="utf-8")
        return super().sessions_in(path)


class OldestFirst(CodexConverter):
    def discover(self, home):
        return list(reversed(super().discover(home)))


class ReadsRealHome(CodexConverter):
    def session_roots(self, home):
        return [Path.home() / ".codex" / "sessions", *super().session_roots(home)]


class AgentAlwaysFound(CodexConverter):
    def agent_found(self, home):
        return True


class IgnoresCodexHome(kit_mutants.IgnoresCodexHome, CodexConverter):
    pass


class ForgetsArchived(kit_mutants.ForgetsArchived, CodexConverter):
    pass


class CacheBesideTranscript(CodexConverter):
    def convert(self, ref):
        turns = super().convert(ref)
        ref.path.with_name(ref.path.name + ".idx").write_text(str(len(turns)))
        return turns


class CacheInXdg(CodexConverter):
    def convert(self, ref):
        turns = super().convert(ref)
        cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "funes-codex"
        cache.mkdir(parents=True, exist_ok=True)
        (cache / ref.session_id).write_text(str(len(turns)))
        return turns


class LeavesTempFile(CodexConverter):
    def convert(self, ref):
        handle, _ = tempfile.mkstemp(prefix="funes-codex-")
        os.close(handle)
        return super().convert(ref)


class CacheInPackage(CodexConverter):
    def convert(self, ref):
        turns = super().convert(ref)
        (Path(__file__).parent / f".cache-{ref.session_id}").write_text("x")
        return turns


class NonAtomicSpool(kit_mutants.NonAtomicSpool, CodexConverter):
    pass


class SpoolMtimeNow(CodexConverter):
    def write_turns(self, turns, out_dir, **kwargs):
        written = super().write_turns(turns, out_dir, **kwargs)
        for w in written:
            os.utime(w.path)
        return written


class MergesAssistantTurns(CodexConverter):
    # Consecutive assistant turns merged into one.
    def convert(self, ref):
        out = []
        for t in super().convert(ref):
            if out and out[-1].role == t.role == "assistant":
                out[-1] = replace(out[-1], blocks=out[-1].blocks + t.blocks)
            else:
                out.append(replace(t, seq=len(out), turn_uuid=f"{t.session_id}-{len(out)}"))
        return out


class DropsLastTurn(CodexConverter):
    # An off-by-one: the last item of the rollout is never converted.
    def convert(self, ref):
        return super().convert(ref)[:-1]


class SessionIdUppercase(CodexConverter):
    def convert(self, ref):
        return [replace(t, session_id=t.session_id.upper()) for t in super().convert(ref)]
"""

HOOK_CASES = """
import sys

from funes_codex import CodexConverter, CodexHookInstaller
from funes_contracts import HookInstallerContract


def hook_case(module):
    def hook_argv(self, module_name, ctx):
        home = str(ctx.funes_home)
        return [sys.executable, "-m", module_name, "--funes-home", home, "--", *ctx.funes_command]

    attrs = {
        "installer_cls": CodexHookInstaller,
        "converter_cls": CodexConverter,
        "hook_module": module,
        "hook_argv": hook_argv,
    }
    # Only the hook's own requirements: the installer itself is unbroken.
    for name in dir(HookInstallerContract):
        if name.startswith("test_") and not name.startswith("test_hook_"):
            attrs[name] = None
    return type(f"TestHook_{module}", (HookInstallerContract,), attrs)


for _module in MODULES:
    globals()[f"TestHook_{_module}"] = hook_case(_module)
"""


def converter_names() -> list[str]:
    return [
        line.split("(")[0].removeprefix("class ")
        for line in CONVERTER_MUTANTS.splitlines()
        if line.startswith("class ") and line.endswith("CodexConverter):")
    ]


def suite_source(hooks: list[str]) -> str:
    names = converter_names()
    cases = "\n".join(
        f"class Test_{n}(ConverterContract):\n    converter_cls = {n}\n    fixtures_dir = FIX\n"
        for n in names
    )
    head = (
        "import funes_codex\nfrom funes_contracts import ConverterContract\n"
        "FIX = Path(funes_codex.__file__).parent / 'contract_fixtures'\n"
    )
    return f"MODULES = {hooks!r}\n" + CONVERTER_MUTANTS + head + cases + HOOK_CASES


@pytest.mark.slow
def test_the_kit_alone_catches_at_least_95_percent_of_the_mutants(
    tmp_path: Path,
    run_suite: Any,
    hook_mutants: Callable[[Path], list[str]],
    capsys: pytest.CaptureFixture[str],
) -> None:
    hooks = hook_mutants(tmp_path)
    _, results = run_suite(tmp_path, suite_source(hooks), pythonpath=tmp_path)
    mutants = [f"Test_{n}" for n in converter_names()] + [f"TestHook_{m}" for m in hooks]
    caught: dict[str, set[str]] = {m: set() for m in mutants}
    for result in results:
        owner = result["test"].split("::", 1)[0]
        if result["outcome"] in ("failed", "error", "xfailed"):
            caught.setdefault(owner, set()).add(result["requirement"])
    assert set(caught) == set(mutants), (
        f"results of classes that are not mutants: {set(caught) - set(mutants)}"
    )
    survivors = sorted(m for m, rids in caught.items() if not rids)
    score = 1 - len(survivors) / len(mutants)
    with capsys.disabled():
        found = len(mutants) - len(survivors)
        print(f"\nmutation score: the kit caught {found} of {len(mutants)} ({score:.1%})")
        if survivors:
            print("survivors: " + ", ".join(survivors))
    assert score >= TARGET, f"the kit caught {score:.1%} of the mutants; survivors: {survivors}"
