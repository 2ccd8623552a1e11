"""Before a release: every distribution declares the same version, the tag's, and the changelog has it.

Usage: ``uv run --no-project python scripts/release_check.py VERSION`` (the release workflow passes
the tag without its ``v``). Standard library only, so it runs before anything is installed. Exits 1
with one line per problem.
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def projects() -> list[Path]:
    """Every distribution's folder: the core, the kit, each plugin."""
    return [ROOT, ROOT / "contracts", *sorted((ROOT / "plugins").glob("funes-*"))]


def declared_version(project: Path) -> tuple[str, str | None]:
    """(distribution name, the version its one version source declares)."""
    data = tomllib.loads((project / "pyproject.toml").read_text(encoding="utf-8"))
    source = project / data["tool"]["hatch"]["version"]["path"]
    found = re.search(r'^__version__ = "([^"]+)"$', source.read_text(encoding="utf-8"), re.M)
    return data["project"]["name"], found.group(1) if found else None


def problems(version: str) -> list[str]:
    out: list[str] = []
    for project in projects():
        name, declared = declared_version(project)
        if declared != version:
            out.append(f"{name} declares {declared!r}, the release is {version!r}")
        if not (project / "LICENSE").is_file():
            out.append(f"{name} has no LICENSE")
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    if not re.search(rf"^## \[{re.escape(version)}\]", changelog, re.M):
        out.append(f"CHANGELOG.md has no '## [{version}]' section")
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: release_check.py VERSION", file=sys.stderr)
        return 2
    found = problems(argv[0])
    for line in found:
        print(f"release_check: {line}", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
