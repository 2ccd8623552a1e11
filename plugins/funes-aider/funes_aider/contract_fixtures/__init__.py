"""Sample aider histories, their reviewed goldens, and the kit's mutators for markdown histories.

Shipped inside the package so ``funes integrations check aider`` runs the golden tests on the
installed plugin. ``cases/basic/app/`` is a real history aider 0.86.2 wrote in two runs against
the fake model (an edit applied, multi-byte text, a notice of several lines); ``cases/edge/`` is
written by hand in aider's format (two sessions started in one second, a ``<blank>`` input, a
quote inside an answer, an input still waiting for its answer). The goldens' ``cwd`` is
``{case}/app`` and ``{case}``: the folder the history is in.

aider's history is not JSON lines, so the kit's variants are made here (what each must produce:
docs/plugins/testing.md#awkward-inputs). A "record" is a run of lines of one kind (an input, a
notice, an answer) or a session header.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["make_corrupt", "make_earlier", "make_long", "make_torn"]

_NAME = ".aider.chat.history.md"
#: Not UTF-8: what an unreadable line of a history file is (the converter skips such a line).
GARBAGE = b"\xff\xfe not \x80 utf-8 \xc3\n"


def _histories(folder: Path) -> list[Path]:
    return sorted(folder.rglob(_NAME))


def _starts(lines: list[str]) -> list[int]:
    """The index of each line that starts a record (a header, an input, a notice, an answer)."""

    def kind(line: str) -> str:
        if line.startswith("# aider chat started at "):
            return "header"
        if line.startswith("####") and line.endswith("  "):
            return "user"
        if line.startswith(">") and line.endswith("  "):
            return "system"
        return "assistant"

    starts: list[int] = []
    previous = ""
    for number, line in enumerate(lines):
        if not line.strip():
            previous = "" if previous != "assistant" else previous
            continue
        current = kind(line)
        if current != previous or current == "header":
            starts.append(number)
        previous = current
    return starts


def make_earlier(folder: Path) -> bool:
    """Each history as it was earlier: cut before its middle record (aider only appends)."""
    done = False
    for path in _histories(folder):
        lines = path.read_text(encoding="utf-8").split("\n")
        starts = _starts(lines)
        if len(starts) < 4:
            continue
        cut = starts[len(starts) // 2]
        path.write_text("\n".join(lines[:cut]), encoding="utf-8")
        done = True
    return done


def make_torn(folder: Path) -> bool:
    """Each history with its last record cut inside its text, no newline: aider mid-write."""
    done = False
    for path in _histories(folder):
        text = path.read_text(encoding="utf-8").rstrip("\n")
        lines = text.split("\n")
        starts = _starts(lines)
        if len(starts) < 2:
            continue
        last = lines[starts[-1]]
        lines[starts[-1]] = last[: max(6, len(last) // 2)]
        path.write_text("\n".join(lines[: starts[-1] + 1]), encoding="utf-8")
        done = True
    return done


def make_corrupt(folder: Path) -> bool:
    """Each history with a line that is not UTF-8 after its first header."""
    done = False
    for path in _histories(folder):
        data = path.read_bytes()
        header = data.find(b"# aider chat started at ")
        if header < 0:
            continue
        end = data.index(b"\n", header) + 1
        path.write_bytes(data[:end] + GARBAGE + data[end:])
        done = True
    return done


def make_long(folder: Path, filler: str, expected: Path) -> bool:
    """``filler`` appended to the longest answer line the golden keeps, in the first history."""
    kept = expected.read_text(encoding="utf-8")
    for path in _histories(folder):
        lines = path.read_text(encoding="utf-8").split("\n")
        candidates = [
            n
            for n, line in enumerate(lines)
            if len(line) >= 8 and not line.startswith(("#", ">")) and line.strip() in kept
        ]
        if not candidates:
            continue
        # Not the file's last answer: the converter holds back the last record.
        number = max(candidates[:-1] or candidates, key=lambda n: len(lines[n]))
        lines[number] += filler
        path.write_text("\n".join(lines), encoding="utf-8")
        return True
    return False
