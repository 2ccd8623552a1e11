"""Installable artefacts: what every distribution carries, and the built wheels working outside the repo.

The slow test does what a user (or a third party) does: every wheel is built, installed into a
fresh virtual environment in a temporary folder, far from this checkout, and funes is run there.
funes' own names are installed with ``--no-index`` from the local folder of wheels, so nothing of
funes can come from a package index (the index has another project called ``funes``). With
``FUNES_DIST=<folder>`` the wheels already built there are used (the release workflow builds once).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tarfile
import tomllib
from pathlib import Path

import pytest

import funes_core

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))
import release_check  # noqa: E402

PROJECTS = release_check.projects()
#: The tests a plugin's own suite runs outside the repository: the real-agent ones install agent
#: CLIs and the slow ones start many processes; the repository's suite runs both.
FAST_LANE = "not slow and not agent_cli"


def _pyproject(project: Path) -> dict[str, object]:
    return tomllib.loads((project / "pyproject.toml").read_text(encoding="utf-8"))


@pytest.mark.parametrize("project", PROJECTS, ids=lambda p: p.name)
def test_every_distribution_carries_the_license_and_its_metadata(project: Path) -> None:
    data = _pyproject(project)
    meta = data["project"]
    assert isinstance(meta, dict)
    assert (project / "LICENSE").read_bytes() == (REPO / "LICENSE").read_bytes()
    assert "Apache License" in (REPO / "LICENSE").read_text(encoding="utf-8")[:200]
    assert meta["license"] == "Apache-2.0" and meta["license-files"] == ["LICENSE"]
    assert any(c.startswith("Programming Language :: Python :: 3.11") for c in meta["classifiers"])
    urls = meta["urls"]
    assert {"Homepage", "Source", "Issues", "Changelog"} <= set(urls)
    assert "readme" in meta["dynamic"] and (project / "README.md").is_file()


def test_the_core_sdist_packs_only_the_core() -> None:
    """A README pattern without a leading slash packed every plugin's README, and uv then refused
    the sdist: its workspace table named plugin folders without a pyproject.toml."""
    include = _pyproject(REPO)["tool"]["hatch"]["build"]["targets"]["sdist"]["include"]  # type: ignore[index]
    assert all(pattern.startswith("/") for pattern in include), include


def test_the_release_check_names_every_mismatch() -> None:
    assert release_check.problems(funes_core.__version__) == []
    found = release_check.problems("9.9.9")
    assert f"funes-memory declares {funes_core.__version__!r}, the release is '9.9.9'" in found
    assert "CHANGELOG.md has no '## [9.9.9]' section" in found
    assert len(found) == len(PROJECTS) + 1


def _uv() -> str:
    import uv

    return uv.find_uv_bin()


def _run(argv: list[str], cwd: Path, env: dict[str, str], timeout: float = 900) -> str:
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{argv[:4]} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.mark.slow
def test_the_built_wheels_work_in_a_fresh_venv_outside_the_repo(tmp_path: Path) -> None:
    assert not tmp_path.is_relative_to(REPO)
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "UV_PROJECT", "PYTHONPATH"))
    }
    given = os.environ.get("FUNES_DIST")
    dist = Path(given) if given else tmp_path / "dist"
    if not given:
        _run([_uv(), "build", "--all-packages", "-o", str(dist)], REPO, env)
    wheels = sorted(dist.glob("*.whl"))
    names = [_pyproject(p)["project"]["name"] for p in PROJECTS]  # type: ignore[index]
    assert len(wheels) == len(names), [w.name for w in wheels]

    venv = tmp_path / "venv"
    _run([_uv(), "venv", "--python", sys.executable, str(venv)], tmp_path, env)
    python = str(venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python"))
    # funes' names from the local folder only, then their dependencies from the usual index.
    common = [_uv(), "pip", "install", "--python", python, "--find-links", str(dist)]
    _run([*common, "--no-index", "--no-deps", *names], tmp_path, env)
    _run([*common, *[str(w) for w in wheels]], tmp_path, env)

    home = tmp_path / "home"
    home.mkdir()
    run_env = {**env, "HOME": str(home), "USERPROFILE": str(home), "FUNES_HOME": str(tmp_path / "fh")}
    funes = [python, "-m", "funes_core"]
    versions = _run([*funes, "--version"], tmp_path, run_env)
    assert versions.startswith(f"funes {funes_core.__version__} (funes-memory;")
    for name in names[2:]:
        assert re.search(rf"^plugin \S+: {re.escape(name)} \d", versions, re.M), (name, versions)
    plugins = json.loads(_run([*funes, "plugins", "--json"], tmp_path, run_env))
    assert all(p["status"] == "loaded" for p in plugins), plugins

    report = _run([*funes, "integrations", "check", "echo"], tmp_path, run_env, timeout=1200)
    assert report.splitlines()[0].startswith("echo (funes-memory-echo ")
    # Each plugin's own tests, and the kit's, pass outside the repository, run from its sdist
    # (fixtures through importlib.resources, markers from the kit). The real-agent ones install
    # agent CLIs and are run by the repository's own suite.
    for name in names[1:]:
        sdist = name.replace("-", "_")
        [archive] = dist.glob(f"{sdist}-*.tar.gz")
        with tarfile.open(archive) as tar:
            tar.extractall(tmp_path / "src", filter="data")
        tests = next((tmp_path / "src").glob(f"{sdist}-*")) / "tests"
        _run(
            [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", FAST_LANE, str(tests)],
            tests.parent,
            run_env,
        )

    # A scaffolded third-party plugin resolves funes from the local wheels (its CI's FUNES_GIT path).
    acme = tmp_path / "acme"
    _run([*funes, "integrations", "new", "acme", "--dir", str(acme)], tmp_path, run_env)
    _run([_uv(), "lock", "--find-links", str(dist)], acme, env)
    lock = (acme / "uv.lock").read_text(encoding="utf-8")
    for name in ("funes-memory", "funes-memory-contracts"):
        entry = f'name = "{name}"\nversion = "{funes_core.__version__}"\nsource = {{ registry = "{dist}" }}'
        assert entry.replace("\\", "\\\\") in lock or entry in lock, f"{name} not from {dist}"

    imported = _run(
        [python, "-c", "import funes_echo, funes_core; print(funes_core.__file__)"], tmp_path, env
    )
    assert Path(imported.strip()).is_relative_to(venv), "funes ran from the wheel, not the checkout"
