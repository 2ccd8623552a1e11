"""docs/plugins/tutorial.md, executed: every ``sh`` block, in order, from ``integrations new`` to ``check``.

``funes`` is this funes (``python -m funes_core``), HOME and FUNES_HOME are throwaway folders,
and the one thing replaced is the package installer: ``install --from .`` runs ``uv pip install
--python <funes' python> <folder>``, and a stand-in ``uv`` on PATH installs the folder the way an
editable install does (a ``.dist-info`` with its entry points, the folder on the path), without a
build or the network. Everything else (the handover to a fresh funes, the wiring, ``check``'s
pytest run) is the real thing.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

TUTORIAL = Path(__file__).resolve().parents[1] / "docs" / "plugins" / "tutorial.md"

FAKE_UV = r'''#!{python}
"""Stand-in for `uv pip install --python PY SPEC`: an editable-style install into {site}."""
import sys, tomllib, pathlib
args = sys.argv[1:]
assert args[:2] == ["pip", "install"], args
assert args[2] == "--python" and args[3] == {python!r}, "the install must target funes' own interpreter"
project = pathlib.Path(args[4]).resolve()
meta = tomllib.loads((project / "pyproject.toml").read_text())["project"]
name = meta["name"].replace("-", "_")
info = pathlib.Path({site!r}) / f"{{name}}-{{meta['version']}}.dist-info"
info.mkdir(parents=True, exist_ok=True)
header = f"Metadata-Version: 2.1\nName: {{meta['name']}}\nVersion: {{meta['version']}}\n"
(info / "METADATA").write_text(header)
points = meta.get("entry-points", {{}}).get("funes", {{}})
(info / "entry_points.txt").write_text("[funes]\n" + "".join(f"{{k}} = {{v}}\n" for k, v in points.items()))
print(f"installed {{meta['name']}} from {{project}} (stand-in)")
'''


def tutorial_commands() -> list[str]:
    """The lines of every ``sh`` block, in order, comments stripped."""
    text = TUTORIAL.read_text(encoding="utf-8")
    lines: list[str] = []
    for block in re.findall(r"```sh\n(.*?)```", text, flags=re.S):
        for line in block.splitlines():
            line = line.split("  #", 1)[0].strip()
            if line and not line.startswith("#"):
                lines.append(line)
    return lines


def test_the_tutorial_has_the_steps_from_new_to_check() -> None:
    commands = tutorial_commands()
    assert commands[0].startswith("funes integrations new acme")
    assert any(c.startswith("funes integrations install acme --from .") for c in commands)
    assert any(c == "funes integrations check acme" for c in commands)


@pytest.mark.slow
def test_the_tutorial_runs_as_written(tmp_path: Path) -> None:
    work, site, bin_dir = tmp_path / "work", tmp_path / "site", tmp_path / "bin"
    for folder in (work, site, bin_dir, tmp_path / "home"):
        folder.mkdir()
    uv = bin_dir / "uv"
    uv.write_text(FAKE_UV.format(python=sys.executable, site=str(site)), encoding="utf-8")
    uv.chmod(0o755)
    env = dict(os.environ)
    env.update(
        HOME=str(tmp_path / "home"),
        FUNES_HOME=str(tmp_path / "funes-home"),
        FUNES_EMBEDDER="hash",
        PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}",
        PYTHONPATH=os.pathsep.join([str(site), str(work / "funes-memory-acme")]),
    )
    env.pop("PYTEST_ADDOPTS", None)
    cwd = work
    for command in tutorial_commands():
        words = shlex.split(command)
        if words[0] == "cd":
            cwd = (cwd / words[1]).resolve()
            continue
        assert words[0] == "funes", f"the tutorial runs only funes commands: {command}"
        done = subprocess.run(
            [sys.executable, "-m", "funes_core", *words[1:]],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
        assert done.returncode == 0, (
            f"`{command}` exited {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        )
        if words[:3] == ["funes", "integrations", "check"]:
            assert "0 failed, 0 skipped" in done.stdout, done.stdout
