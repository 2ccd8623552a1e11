"""The secret gate: nothing leaves the machine unless two independent scanners find nothing in it.

Blocks were redacted when they were indexed, but by the rules of that day; rules improve, and a
pushed block cannot be taken back from every machine that pulled it. So every block is scanned
again right before it is published, by

1. funes' own redaction rules (:func:`funes_core.redact.redact`, today's version), and
2. detect-secrets, a well-kept scanner with its own detectors: every plugin except the
   high-entropy ones and the public-IP one (they flag git SHAs, digests, UUIDs and addresses in
   ordinary coding history, which would hold back most of it).

The gate fails closed: a block with any finding is held back *whole* (every chunk of it), never
partly published, and the caller reports the counts by detector. A scanner that raises holds the
block back too. ``funes push`` also scans the fields published beside each block (session and
turn ids, tool name, workdir, repo, role), each on its own: ids are never redacted at index time
(they make the chunk ids), so a token in a ``session_id`` is caught here or nowhere.

detect-secrets scans line by line in Python (about 2,400 lines/s here), far too slow for a memory
of 100k chunks. Its plugins are regex-based, and a line can only yield a finding if one of their
patterns matches it, so the gate first runs the same patterns (the plugins' own ``denylist``
regexes and the keyword detector's) over the whole block, and hands only the lines they hit to
detect-secrets' ``scan_line``, which then applies its own filters. Same findings, far fewer lines.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from funes_core.redact import redact

__all__ = ["EXCLUDED_DETECTORS", "GateReport", "Verdict", "scan_block", "scan_blocks"]

#: detect-secrets plugins left out, and why: their matches are common, harmless coding text.
EXCLUDED_DETECTORS = ("Base64HighEntropyString", "HexHighEntropyString", "IPPublicDetector")


@dataclass(frozen=True, slots=True)
class Verdict:
    """The findings in one block, by detector (empty when it is clean)."""

    findings: Counter[str]

    @property
    def clean(self) -> bool:
        return not self.findings


@dataclass(slots=True)
class GateReport:
    """What the gate decided over many blocks."""

    blocks: int = 0
    held_blocks: int = 0
    by_detector: Counter[str] = field(default_factory=Counter)

    def add(self, verdict: Verdict) -> None:
        self.blocks += 1
        if not verdict.clean:
            self.held_blocks += 1
            self.by_detector.update(verdict.findings)

    def summary(self) -> str:
        """``AWS×2, github_token×1`` (most frequent first)."""
        return ", ".join(
            f"{name}×{n}" for name, n in sorted(self.by_detector.items(), key=lambda kv: (-kv[1], kv[0]))
        )


@cache
def _plugins() -> tuple[list[dict[str, str]], re.Pattern[str] | None, list[re.Pattern[str]]]:
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.plugins.base import RegexBasedDetector
    from detect_secrets.plugins.keyword import DENYLIST_REGEX

    used: list[dict[str, str]] = []
    patterns: list[re.Pattern[str]] = []
    classes: list[Any] = list(get_mapping_from_secret_type_to_class().values())
    for cls in classes:
        if cls.__name__ in EXCLUDED_DETECTORS:
            continue
        used.append({"name": cls.__name__})
        if issubclass(cls, RegexBasedDetector):
            denylist: list[Any] = list(cls.denylist)
            patterns.extend(p if isinstance(p, re.Pattern) else re.compile(p) for p in denylist)
    keyword = DENYLIST_REGEX if isinstance(DENYLIST_REGEX, re.Pattern) else re.compile(DENYLIST_REGEX)
    return used, keyword, patterns


def _suspect_lines(text: str) -> list[str]:
    """The lines of ``text`` that one of detect-secrets' patterns matches (the only ones it can flag)."""
    _used, keyword, patterns = _plugins()
    starts: set[int] = set()
    for pattern in [*patterns, *([keyword] if keyword else [])]:
        for m in pattern.finditer(text):
            starts.add(text.rfind("\n", 0, m.start()) + 1)
    lines = []
    for start in sorted(starts):
        end = text.find("\n", start)
        lines.append(text[start : end if end >= 0 else len(text)])
    return lines


def _detect_secrets(lines: Sequence[str]) -> Counter[str]:
    if not lines:
        return Counter()
    from detect_secrets.core.scan import scan_line
    from detect_secrets.settings import transient_settings

    used, _k, _p = _plugins()
    found: Counter[str] = Counter()
    with transient_settings({"plugins_used": used}):
        for line in lines:
            for secret in scan_line(line):
                value = str(secret.secret_value or "")
                if "[REDACTED:" in value or value.startswith("REDACTED"):
                    continue  # our own marker is not a secret
                found[str(secret.type)] += 1
    return found


def scan_block(text: str) -> Verdict:
    """Scan one whole block (its splits stitched) with both scanners; any error counts as a finding."""
    findings: Counter[str] = Counter()
    try:
        _redacted, kinds = redact(text)
        findings.update(kinds)
        findings.update(_detect_secrets(_suspect_lines(text)))
    except Exception as exc:  # fail closed: a scanner that breaks holds the block back
        findings[f"scanner error ({type(exc).__name__})"] += 1
    return Verdict(findings)


def scan_blocks(blocks: Iterable[tuple[Any, str]]) -> Iterator[tuple[Any, Verdict]]:
    """Scan ``(key, text)`` pairs, yielding each key with its verdict."""
    for key, text in blocks:
        yield key, scan_block(text)
