"""``funes integrations new``: refusals in one line, and a generated plugin that passes as generated.

The generated project is made importable the way an editable install would (its folder on the
path and a ``.dist-info`` declaring its ``funes`` entry point), without a build or the network;
then its own tests run, and so does ``funes integrations check``, each in a fresh process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from funes_core.faces.cli.app import make_app
from funes_core.host.manager import load_plugins
from funes_core.host.scaffold import names_for


def fake_install(project: Path, site: Path, ident: str) -> dict[str, str]:
    """What an editable install leaves behind, by hand: the environment for subprocesses to use it."""
    names = names_for(ident)
    info = site / f"{names.module}-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {names.dist}\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text(f"[funes]\n{ident} = {names.module}.plugin\n")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(site), str(project)])
    env.pop("PYTEST_ADDOPTS", None)
    return env


def run_cli(
    *args: str, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "funes_core", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=600,
        check=False,
    )


def test_a_taken_id_is_refused_in_one_line(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        make_app(load_plugins()), ["integrations", "new", "echo", "--dir", str(tmp_path / "x")]
    )
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        "funes: 'echo' is taken: funes-memory-echo 0.1.0 provides it; choose another id"
    ]
    assert not (tmp_path / "x").exists()


def test_a_folder_that_is_not_empty_is_refused_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("mine")
    result = CliRunner().invoke(
        make_app(load_plugins()), ["integrations", "new", "acme", "--dir", str(tmp_path)]
    )
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        f"funes: {tmp_path} is not empty; choose a new folder with --dir"
    ]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.txt"]


@pytest.mark.parametrize("ident", ["Acme", "9lives", "a b", "x!"])
def test_an_unusable_id_is_refused_in_one_line(tmp_path: Path, ident: str) -> None:
    result = CliRunner().invoke(
        make_app(load_plugins()), ["integrations", "new", ident, "--dir", str(tmp_path / "x")]
    )
    assert result.exit_code != 0
    assert len(result.output.strip().splitlines()) == 1, result.output


WIRED_FILES = [
    ".github/workflows/ci.yml",
    ".gitignore",
    "README.md",
    "funes_acme/__init__.py",
    "funes_acme/agent.py",
    "funes_acme/contract_fixtures/__init__.py",
    "funes_acme/contract_fixtures/cases/basic/expected.funes.jsonl",
    "funes_acme/contract_fixtures/cases/basic/s-basic.jsonl",
    "funes_acme/contract_fixtures/config-home/.acme/settings.json",
    "funes_acme/contract_fixtures/home/.acme/sessions/s-basic.jsonl",
    "funes_acme/converter.py",
    "funes_acme/hook.py",
    "funes_acme/plugin.py",
    "funes_acme/py.typed",
    "funes_acme/wiring.py",
    "pyproject.toml",
    "tests/test_contract.py",
]
#: --converter-only: no wiring, no hook, no config fixture.
CONVERTER_FILES = [
    f
    for f in WIRED_FILES
    if f not in ("funes_acme/wiring.py", "funes_acme/hook.py")
    and not f.startswith("funes_acme/contract_fixtures/config-home/")
]


@pytest.mark.slow
@pytest.mark.parametrize("converter_only", [False, True], ids=["wired", "converter-only"])
def test_a_generated_plugin_passes_its_tests_and_check_as_generated(
    tmp_path: Path, converter_only: bool
) -> None:
    project = tmp_path / "funes-memory-acme"
    flags = ["--converter-only"] if converter_only else []
    made = run_cli("integrations", "new", "acme", "--dir", str(project), *flags)
    assert made.returncode == 0, made.stderr
    files = sorted(p.relative_to(project).as_posix() for p in project.rglob("*") if p.is_file())
    assert files == (CONVERTER_FILES if converter_only else WIRED_FILES)
    leftover = [f for f in files if "{{" in (project / f).read_text(encoding="utf-8")]
    assert leftover == [], f"template markup left in {leftover}"
    env = fake_install(project, tmp_path / "site", "acme")
    env["HOME"] = str(tmp_path / "home")
    env["FUNES_HOME"] = str(tmp_path / "funes-home")
    tests = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert tests.returncode == 0, tests.stdout[-3000:]
    assert " passed" in tests.stdout and "skipped" not in tests.stdout, tests.stdout[-500:]
    check = run_cli("integrations", "check", "acme", "--json", env=env)
    assert check.returncode == 0, check.stdout[-3000:] + check.stderr[-2000:]
    verdicts = {line["requirement"]: line["verdict"] for line in json.loads(check.stdout)["requirements"]}
    assert verdicts and set(verdicts.values()) == {"pass"}, verdicts
    roles = {rid.split(":", 1)[0] for rid in verdicts}
    # The generated agent declares ACME_HOME, and a wired one a hook module: the hook and location
    # requirements are all checked (and pass), none skipped.
    wired = {"converter", "installer", "registrar", "hook", "location"}
    assert roles == ({"converter", "location"} if converter_only else wired)
    if converter_only:
        # Installing it writes nothing into the agent's config, and removing it has nothing to undo.
        installed = run_cli("integrations", "install", "acme", "--no-index", env=env)
        assert installed.returncode == 0, installed.stderr
        assert not (tmp_path / "home" / ".acme").exists()
        removed = run_cli("integrations", "remove", "acme", env=env)
        assert removed.returncode == 0, removed.stderr
