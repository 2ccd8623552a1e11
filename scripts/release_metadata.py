"""Give a plugin distribution the release metadata every funes distribution carries (idempotent).

Usage: ``python3 scripts/release_metadata.py plugins/funes-NAME`` for a new first-party plugin:
it copies the root ``LICENSE``, and adds to its ``pyproject.toml`` what is missing of
``license-files``, classifiers, ``[project.urls]``, the long description with absolute links
(hatch-fancy-pypi-readme) and the build requirements. ``tests/test_release.py`` fails for a
distribution without them.
"""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REPO = "https://github.com/funes-memory/funes"
CLASSIFIERS = [
    "Development Status :: 3 - Alpha",
    "Intended Audience :: Developers",
    "Operating System :: OS Independent",
    "Programming Language :: Python :: 3",
    "Programming Language :: Python :: 3 :: Only",
    "Programming Language :: Python :: 3.11",
    "Programming Language :: Python :: 3.12",
    "Programming Language :: Python :: 3.13",
]


def _readme(prefix: str) -> str:
    raw = REPO.replace("github.com", "raw.githubusercontent.com")
    return f"""[tool.hatch.metadata.hooks.fancy-pypi-readme]
content-type = "text/markdown"

[[tool.hatch.metadata.hooks.fancy-pypi-readme.fragments]]
path = "README.md"

# The long description is read on the package index, where a relative link leads nowhere: images
# point at the raw files, other links at the repository (docs/releasing.md).
[[tool.hatch.metadata.hooks.fancy-pypi-readme.substitutions]]
pattern = '!\\[([^\\]]*)\\]\\((?!https?://|#)([^)\\s]+)\\)'
replacement = '![\\1]({raw}/main/{prefix}\\2)'

[[tool.hatch.metadata.hooks.fancy-pypi-readme.substitutions]]
pattern = '\\]\\((?!https?://|#|mailto:)([^)\\s]+)\\)'
replacement = ']({REPO}/blob/main/{prefix}\\1)'

"""


def apply(project: Path) -> None:
    shutil.copyfile(ROOT / "LICENSE", project / "LICENSE")
    pp = project / "pyproject.toml"
    s = pp.read_text(encoding="utf-8")
    prefix = project.resolve().relative_to(ROOT).as_posix() + "/"
    if 'readme = "README.md"\n' in s:
        s = s.replace('readme = "README.md"\n', "")
        s = s.replace('dynamic = ["version"]', 'dynamic = ["version", "readme"]', 1)
    if "license-files" not in s:
        s = s.replace('license = "Apache-2.0"\n', 'license = "Apache-2.0"\nlicense-files = ["LICENSE"]\n', 1)
    if "classifiers" not in s:
        block = "classifiers = [\n" + "".join(f'    "{c}",\n' for c in CLASSIFIERS) + "]\n"
        m = re.search(r"^(keywords|authors) = .*\n", s, re.M)
        at = m.end() if m else s.index("dependencies")
        s = s[:at] + block + s[at:]
    if "[project.urls]" not in s:
        urls = (
            f'[project.urls]\nHomepage = "{REPO}"\nDocumentation = "{REPO}/tree/main/{prefix[:-1]}"\n'
            f'Source = "{REPO}/tree/main/{prefix[:-1]}"\nIssues = "{REPO}/issues"\n'
            f'Changelog = "{REPO}/blob/main/CHANGELOG.md"\n\n'
        )
        s = s.replace("[tool.hatch.version]", urls + "[tool.hatch.version]", 1)
    if "fancy-pypi-readme]" not in s:
        s = s.replace("[tool.hatch.version]", _readme(prefix) + "[tool.hatch.version]", 1)
    s = re.sub(
        r'requires = \["hatchling>=[0-9.]+"\]',
        'requires = ["hatchling>=1.27", "hatch-fancy-pypi-readme>=24"]',
        s,
    )
    pp.write_text(s, encoding="utf-8")


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        apply(Path(arg))
