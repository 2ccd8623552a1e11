"""funes-memory-notes passes the funes plugin contract: the kit's classes, pointed at this plugin.

Notes are not JSON lines: the mutators the suite needs (a note as it was before its last section,
a note saved in Latin-1, a lengthened section, files that are not notes) live in the
``contract_fixtures`` package, where the kit finds them, so ``funes integrations check notes``
runs exactly these tests on an installed funes-memory-notes.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from funes_contracts import PluginContract
from funes_notes import NotesConverter

FIXTURES = Path(str(resources.files("funes_notes.contract_fixtures")))


class TestNotes(PluginContract):
    converter_cls = NotesConverter
    fixtures_dir = FIXTURES
