"""Versions that guard compatibility: one source per distribution, real ranges, skew refused in one line.

The skew cases are real distributions (a ``.dist-info`` with ``Requires-Dist`` lines and a module
on a ``sys.path`` entry), and their module raises if imported: a plugin made for another core
must be refused from its metadata, before its code runs.
"""

from __future__ import annotations

import io
import re
import textwrap
import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner

import funes_core
from funes_core.faces.cli.app import make_app
from funes_core.host.manager import FunesPluginManager
from funes_core.host.versions import compatible_range, requirement_problem

REPO = Path(__file__).resolve().parents[1]
PROJECTS = [REPO / "contracts", *sorted((REPO / "plugins").glob("funes-*"))]

POISON = "raise RuntimeError('imported although its requirements exclude this core')\n"
GOOD = """
from funes_core import hookimpl
from funes_echo import EchoConverter

class Good(EchoConverter):
    id = "{ident}"

@hookimpl
def funes_register_converters():
    return [Good]
"""


def make_dist(site: Path, dist: str, module: str, source: str, requires: list[str]) -> None:
    site.mkdir(parents=True, exist_ok=True)
    (site / f"{module}.py").write_text(textwrap.dedent(source), encoding="utf-8")
    info = site / f"{dist.replace('-', '_')}-1.0.dist-info"
    info.mkdir()
    lines = "".join(f"Requires-Dist: {r}\n" for r in requires)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n{lines}", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(f"[funes]\n{module} = {module}\n", encoding="utf-8")


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "site"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.setattr(funes_core.version, "__version__", "0.1.0")
    return folder


def _load(site: Path) -> tuple[FunesPluginManager, list[str]]:
    err = io.StringIO()
    pm = FunesPluginManager(environ={}, stderr=err)
    pm.load_entrypoints(path=[str(site)])
    return pm, err.getvalue().splitlines()


def _name(tmp_path: Path, stem: str) -> str:
    return f"{stem}_{abs(hash(tmp_path)) % 10**8}"


def test_a_plugin_that_needs_a_newer_core_is_refused_before_it_is_imported(
    site: Path, tmp_path: Path
) -> None:
    module = _name(tmp_path, "needs_newer")
    make_dist(site, "funes-memory-future", module, POISON, ["funes-memory>=0.3,<0.4"])
    pm, lines = _load(site)
    assert len(lines) == 1
    assert lines[0].startswith(f"funes: skipped plugin {module} from funes-memory-future 1.0: ")
    assert "it needs funes-memory<0.4,>=0.3, but this is funes-memory 0.1.0; upgrade funes-memory" in lines[0]
    info = pm.plugin_info(module)
    assert info is not None and info.status == "skipped"


def test_a_plugin_made_for_an_older_core_names_the_plugin_to_upgrade(site: Path, tmp_path: Path) -> None:
    module = _name(tmp_path, "needs_older")
    make_dist(site, "funes-memory-past", module, POISON, ["funes-memory>=0.0.1,<0.1"])
    _, lines = _load(site)
    assert len(lines) == 1
    assert (
        "but this is funes-memory 0.1.0; upgrade funes-memory-past to a release for funes-memory 0.1.0"
        in (lines[0])
    )


@pytest.mark.parametrize("wrong", ["funes", "funes-core", "Funes_Core>=1"])
def test_a_plugin_depending_on_the_wrong_name_is_refused(site: Path, tmp_path: Path, wrong: str) -> None:
    module = _name(tmp_path, "wrong_name")
    make_dist(site, "funes-memory-typo", module, POISON, [wrong])
    _, lines = _load(site)
    assert len(lines) == 1
    assert "another project on PyPI, not funes (funes is 'funes-memory')" in lines[0]
    assert "its author should require funes-memory>=0.1,<0.2" in lines[0]


def test_a_plugin_in_range_loads(site: Path, tmp_path: Path) -> None:
    module = _name(tmp_path, "in_range")
    ident = module.replace("_", "-")
    make_dist(
        site,
        "funes-memory-fine",
        module,
        GOOD.format(ident=ident),
        ["funes-memory>=0.1,<0.2", "funes ; extra == 'never'", "other-thing>=1"],
    )
    pm, lines = _load(site)
    assert lines == []
    assert pm.integration(ident) is not None


@pytest.mark.parametrize(
    ("version", "expected"),
    [("0.1.0", ">=0.1,<0.2"), ("0.12.3", ">=0.12,<0.13"), ("1.4.0", ">=1.4,<2"), ("2.0.0rc1", ">=2.0,<3")],
)
def test_the_compatible_range(version: str, expected: str) -> None:
    assert compatible_range(version) == expected


def test_requirements_without_a_range_or_for_other_projects_are_fine() -> None:
    assert requirement_problem(["funes-memory", "rich>=13", "not a requirement !!"]) is None


@pytest.mark.parametrize("project", PROJECTS, ids=lambda p: p.name)
def test_every_distribution_has_one_version_source_and_a_real_range(project: Path) -> None:
    """No version in pyproject.toml: hatch reads the package's ``__version__``; the core is a range."""
    data = tomllib.loads((project / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in data["project"] and "version" in data["project"]["dynamic"]
    source = project / data["tool"]["hatch"]["version"]["path"]
    assert re.search(r'^__version__ = "\d+\.\d+\.\d+"$', source.read_text(encoding="utf-8"), re.M)
    wanted = compatible_range(funes_core.__version__)
    ours = [d for d in data["project"]["dependencies"] if d.startswith("funes-memory")]
    core = [d for d in ours if re.split(r"[<>=!~ \[;]", d, maxsplit=1)[0] == "funes-memory"]
    assert core == [f"funes-memory{wanted}"]
    # A plugin built on another first-party plugin (kilo on opencode) pins it to the same range.
    for other in set(ours) - set(core):
        assert other.endswith(wanted), other


@pytest.mark.parametrize("project", sorted((REPO / "plugins").glob("funes-*")), ids=lambda p: p.name)
def test_every_first_party_plugin_declares_its_contract_in_code(project: Path) -> None:
    agent = next(project.glob("funes_*/agent.py")).read_text(encoding="utf-8")
    assert re.search(r"^    contract_version=\d+,", agent, re.M), f"{project.name} inherits its contract"


def test_version_lists_the_core_the_kit_and_the_plugins() -> None:
    from funes_core.host.manager import load_plugins

    pm = load_plugins(environ={"FUNES_LOAD_PLUGINS": "echo"}, stderr=io.StringIO())
    done = CliRunner().invoke(make_app(pm), ["--version"])
    assert done.exit_code == 0, done.output
    lines = done.output.splitlines()
    assert lines[0] == f"funes {funes_core.__version__} (funes-memory; plugin contract 2, loads 1, 2)"
    assert lines[1].startswith("kit ") and lines[1].endswith("(funes-memory-contracts)")
    assert any(re.fullmatch(r"plugin echo: funes-memory-echo \d+\.\d+\.\d+", line) for line in lines)
    assert any(
        line.startswith("plugin claude: funes-memory-claude") and "(not selected)" in line for line in lines
    )
