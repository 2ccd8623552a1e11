"""Converts Kilo Code CLI sessions (rows of ``kilo.db``) into funes turns.

Kilo's CLI is an OpenCode fork with OpenCode's tables unchanged (checked on a real ``kilo.db``
written by @kilocode/cli 7.7.7), so the reading is OpenCode's converter, pointed at Kilo's
database: one message is one turn, parts become blocks, an assistant message still being written
waits until it completes (see :mod:`funes_opencode.converter`).
"""

from __future__ import annotations

from pathlib import Path

from funes_kilo.agent import AGENT, databases
from funes_opencode.converter import OpenCodeConverter

__all__ = ["KiloConverter"]


class KiloConverter(OpenCodeConverter, agent=AGENT):
    """OpenCode's converter on Kilo's ``kilo*.db`` files."""

    #: A real session of the Kilo CLI, goldens, and OpenCode's SQL mutators.
    contract_fixtures = "funes_kilo.contract_fixtures"
    db_stem = "kilo"

    def session_roots(self, home: Path) -> list[Path]:
        return databases(home)

    def retention(self, home: Path) -> str:
        return (
            "Kilo keeps sessions in kilo.db until you delete them; its compaction (compaction.prune, "
            "off with KILO_DISABLE_PRUNE) may clear old tool outputs in place"
        )
