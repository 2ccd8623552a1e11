"""The core's shape, read from its code: every import goes down a floor, and the map names every module.

The floors are the order in docs/architecture.md ("Rules that keep the rooms apart"): a module may
import modules of its own room or of a room below it, never above. Every import counts, including
one inside a function (a lazy import is still a dependency: it only moves the cost), except one
under ``if TYPE_CHECKING:``, which exists for the type checker alone and never runs.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "funes_core"
MAP = ROOT / "docs" / "architecture.md"

#: Bottom to top. A room is a top-level module or a package; a nested package that is a room of
#: its own (``wiring/integrations``) is listed apart from its parent and ranks where it is listed.
FLOORS: tuple[str, ...] = (
    "portable",
    "version",
    "safetext",
    "files",
    "redact",
    "homepath",
    "home",
    "telemetry",
    "turns",
    "host",
    "wiring",
    "models",
    "store",
    "ingest",
    "share",
    "read",
    "wiring/integrations",
    "__init__",
    "faces",
    "serve",
    "__main__",
)

#: The arrows that still climb, each named exactly, so that no other can join them. The memory
#: service runs the faces' code (the MCP server, the CLI verbs' output) in one long-lived process,
#: while the faces reach the service through its client: ``serve/client`` and ``serve/relay``
#: belong a floor below ``faces/`` and ``serve/service`` above it, and that split is not done yet.
CLIMBS_KNOWN: frozenset[tuple[str, str]] = frozenset(
    {
        ("funes_core.faces.cli.read", "funes_core.serve.client"),
        ("funes_core.faces.cli.fast", "funes_core.serve.client"),
        ("funes_core.faces.cli.serve", "funes_core.serve.client"),
        ("funes_core.faces.cli.serve", "funes_core.serve.wire"),
        ("funes_core.faces.cli.serve", "funes_core.serve.service"),
        ("funes_core.faces.cli.serve", "funes_core.serve.http"),
        ("funes_core.faces.cli.serve", "funes_core.serve.tokens"),
        ("funes_core.faces.cli.status", "funes_core.serve.client"),
        ("funes_core.faces.cli.ui_front", "funes_core.serve.client"),
        ("funes_core.faces.mcp_front", "funes_core.serve.relay"),
        ("funes_core.faces.mcp_front", "funes_core.serve.client"),
    }
)


def _modules() -> list[Path]:
    return sorted(p for p in CORE.rglob("*.py") if "__pycache__" not in p.parts)


def _dotted(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _room(dotted: str) -> str:
    """The room of a module: the longest entry of FLOORS that holds it."""
    inner = dotted.split(".")[1:]
    if not inner:
        return "__init__"
    best = ""
    for room in FLOORS:
        parts = room.split("/")
        if inner[: len(parts)] == parts and len(room) > len(best):
            best = room
    return best


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(path: Path, package: str | None = None) -> list[tuple[int, str]]:
    """(line, dotted target) of every ``funes_core`` import in the file that runs.

    ``package`` is the package relative imports start from (default: the file's own).
    """
    tree = ast.parse(path.read_text(encoding="utf-8"))
    if package is None:
        package = _dotted(path) if path.name == "__init__.py" else _dotted(path).rpartition(".")[0]
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for inner in node.body:
                skipped.update(id(n) for n in ast.walk(inner))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.startswith("funes_core")]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            if not module.startswith("funes_core"):
                continue
            # ``from funes_core.x import y``: y may be a module (``from funes_core import portable``).
            for alias in node.names:
                candidate = f"{module}.{alias.name}"
                found.append((node.lineno, candidate if _exists(candidate) else module))
    return found


def _exists(dotted: str) -> bool:
    path = ROOT.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def test_every_module_of_the_core_has_a_floor() -> None:
    homeless = [str(p.relative_to(ROOT)) for p in _modules() if _room(_dotted(p)) == ""]
    assert not homeless, f"place these rooms in FLOORS (and in docs/architecture.md): {homeless}"


def test_no_import_climbs_back_up_a_floor() -> None:
    rank = {room: i for i, room in enumerate(FLOORS)}
    upward: list[str] = []
    for path in _modules():
        source = _dotted(path)
        here = _room(source)
        for line, target in _imports(path):
            there = _room(target)
            if (source, target) in CLIMBS_KNOWN:
                continue
            if there and there != here and rank[there] > rank[here]:
                upward.append(
                    f"{path.relative_to(ROOT)}:{line}: {here} imports {target} ({there}, a floor above)"
                )
    assert not upward, "\n".join(upward)


def test_the_floor_test_sees_lazy_imports_and_ignores_type_checking_ones(tmp_path: Path) -> None:
    """The reader the test above relies on: an import in a function counts, one for mypy does not."""
    sample = tmp_path / "sample.py"
    sample.write_text(
        "from typing import TYPE_CHECKING\n"
        "from funes_core import portable\n"
        "from . import lance\n"
        "if TYPE_CHECKING:\n"
        "    from funes_core.read.handle import Memory\n"
        "def f():\n"
        "    from funes_core.share.mirror import sync_mirror\n",
        encoding="utf-8",
    )
    targets = {target for _, target in _imports(sample, package="funes_core.store")}
    assert targets == {"funes_core.portable", "funes_core.store.lance", "funes_core.share.mirror"}
    assert [_room(t) for t in sorted(targets)] == ["portable", "share", "store"]


# ----------------------------------------------------------------------------- the map


def _map_rows() -> list[tuple[list[str], set[str]]]:
    """(room paths named in the first cell, every backticked name in the row) of the map's table."""
    rows: list[tuple[list[str], set[str]]] = []
    for line in MAP.read_text(encoding="utf-8").splitlines():
        if not line.startswith("| `"):
            continue
        cells = line.split(" | ")
        rooms = re.findall(r"`([^`]+)`", cells[0])
        rows.append((rooms, set(re.findall(r"`([^`]+)`", line))))
    return rows


def _row_for(rel: Path, rows: list[tuple[list[str], set[str]]]) -> set[str] | None:
    """The names of the row whose first cell is the deepest room holding ``rel``."""
    best: tuple[int, set[str]] | None = None
    text = rel.as_posix()
    for rooms, names in rows:
        for room in rooms:
            key = room.removeprefix("funes_core/")
            held = text == key or (key.endswith("/") and text.startswith(key))
            if held and (best is None or len(key) > best[0]):
                best = (len(key), names)
    return None if best is None else best[1]


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(CORE)))
def test_the_map_names_every_module(path: Path) -> None:
    rel = path.relative_to(CORE)
    if rel.name == "__init__.py" and len(rel.parts) > 1:
        return  # a package's __init__ is its room's row
    names = _row_for(rel, _map_rows())
    assert names is not None, f"docs/architecture.md has no row for the room of {rel}"
    stem = rel.stem
    nested = "/".join([*rel.parts[1:-1], stem]) if len(rel.parts) > 2 else stem
    wanted = {stem, f"{stem}.py", nested, f"{nested}.py", f"funes_core/{rel.as_posix()}", rel.as_posix()}
    assert names & wanted, f"docs/architecture.md: the row of {rel}'s room does not name it (`{stem}`)"
