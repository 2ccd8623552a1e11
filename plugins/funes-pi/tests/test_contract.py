"""funes-pi passes the whole funes plugin contract: the kit's classes, subclassed.

pi writes its sessions with ``JSON.stringify``, which leaves U+2028 and U+2029 raw inside
strings. The kit's own line mutators split with ``str.splitlines()``, which breaks such a line
in two and then (rightly) refuses to treat the file as JSON lines, so the ``edge`` case (which
holds a raw U+2028 on purpose) would skip the earlier/torn/corrupt variants. The overrides below
derive the same variants by splitting on ``\\n`` bytes only, which is how pi and the converter
read the file.
"""

from __future__ import annotations

from pathlib import Path

from funes_contracts import ConverterContract, HookInstallerContract, ToolRegistrarContract
from funes_contracts.files import GARBAGE_RECORD
from funes_pi import PiConverter, PiHookInstaller, PiToolRegistrar

FIXTURES = Path(__file__).resolve().parents[1] / "funes_pi" / "contract_fixtures"


def _transcripts(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.jsonl") if p.is_file() and not p.name.endswith(".funes.jsonl"))


def _records(path: Path) -> list[bytes]:
    return [line for line in path.read_bytes().split(b"\n") if line.strip()]


class TestPiConverter(ConverterContract):
    converter_cls = PiConverter
    fixtures_dir = FIXTURES

    def make_earlier(self, folder: Path) -> bool:
        """Keep the first half of each session's records (the session as it was earlier)."""
        paths = _transcripts(folder)
        for path in paths:
            records = _records(path)
            path.write_bytes(b"".join(r + b"\n" for r in records[: max(1, len(records) // 2)]))
        return bool(paths)

    def make_torn(self, folder: Path) -> bool:
        """Cut the last record in half by bytes (possibly inside a multi-byte character)."""
        paths = _transcripts(folder)
        for path in paths:
            records = _records(path)
            records[-1] = records[-1][: max(1, len(records[-1]) // 2)]
            path.write_bytes(b"\n".join(records))
        return bool(paths)

    def make_corrupt(self, folder: Path) -> bool:
        """Insert an unreadable record after the first one."""
        paths = _transcripts(folder)
        for path in paths:
            records = _records(path)
            records.insert(1, GARBAGE_RECORD.rstrip("\n").encode("utf-8"))
            path.write_bytes(b"".join(r + b"\n" for r in records))
        return bool(paths)


class TestPiHookInstaller(HookInstallerContract):
    installer_cls = PiHookInstaller
    config_home = FIXTURES / "config-home"


class TestPiToolRegistrar(ToolRegistrarContract):
    registrar_cls = PiToolRegistrar
    config_home = FIXTURES / "config-home"
