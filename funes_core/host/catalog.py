"""The integration catalog (``catalog.toml``) and the COMMUNITY.md directory generated from it.

One machine-readable file answers two questions: which distribution does ``funes integrations
install ID`` fetch (and may it do so without asking?), and what does the public directory of
integrations say. Rendering COMMUNITY.md from the same data, and testing that the checked-in
file matches, means the directory can never promise something the installer does not do.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any

from funes_core.host.api import CONTRACT_VERSION, ID_PATTERN

__all__ = [
    "CATALOG_RESOURCE",
    "ROLES",
    "TIERS",
    "Catalog",
    "CatalogEntry",
    "CatalogError",
    "load_catalog",
    "render_community",
]

CATALOG_RESOURCE = "catalog.toml"
TIERS = ("maintained", "community")
ROLES = ("converter", "hook installer", "tool registrar")
_DIST = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$")
_KNOWN = {
    "dist",
    "label",
    "tier",
    "author",
    "summary",
    "roles",
    "contract_version",
    "source",
    "repo",
    "requirement",
    "shadowed",
}


class CatalogError(ValueError):
    """The catalog file is malformed; the message names the entry and the field."""


@dataclass(frozen=True, slots=True)
class CatalogEntry:
    """One integration the catalog knows about."""

    id: str
    dist: str
    label: str
    tier: str
    author: str
    summary: str
    roles: tuple[str, ...]
    contract_version: int
    source: str | None = None
    repo: str | None = None
    requirement: str | None = None
    shadowed: bool = False

    @property
    def vouched(self) -> bool:
        """Whether funes installs it without asking: only the entries its maintainers ship."""
        return self.tier == "maintained"

    @property
    def install_spec(self) -> str:
        """What to hand the standard installer (a requirement string)."""
        return self.requirement or self.dist

    @property
    def link(self) -> str:
        return self.repo or self.source or ""


@dataclass(frozen=True, slots=True)
class Catalog:
    version: int
    entries: Mapping[str, CatalogEntry]

    def get(self, ident: str) -> CatalogEntry | None:
        return self.entries.get(ident)

    def by_dist(self, dist: str) -> CatalogEntry | None:
        wanted = _norm(dist)
        return next((e for e in self.entries.values() if _norm(e.dist) == wanted), None)


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _entry(ident: str, raw: Mapping[str, Any]) -> CatalogEntry:
    where = f"catalog entry {ident!r}"
    if not ID_PATTERN.fullmatch(ident):
        raise CatalogError(f"{where}: the id must match [a-z0-9_-]+")
    unknown = sorted(set(raw) - _KNOWN)
    if unknown:
        raise CatalogError(f"{where}: unknown field {unknown[0]!r}")

    def text(name: str, *, required: bool = True) -> str | None:
        value = raw.get(name)
        if value is None and not required:
            return None
        if not isinstance(value, str) or not value.strip():
            raise CatalogError(f"{where}: {name} must be a non-empty string")
        return value

    dist = text("dist") or ""
    if not _DIST.fullmatch(dist):
        raise CatalogError(f"{where}: dist {dist!r} is not a distribution name")
    tier = text("tier") or ""
    if tier not in TIERS:
        raise CatalogError(f"{where}: tier must be one of {', '.join(TIERS)}")
    roles = raw.get("roles")
    if not isinstance(roles, list) or not roles or any(r not in ROLES for r in roles):
        raise CatalogError(f"{where}: roles must list some of {', '.join(ROLES)}")
    version = raw.get("contract_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise CatalogError(f"{where}: contract_version must be a positive integer")
    source = text("source", required=False)
    repo = text("repo", required=False)
    if tier == "community" and not repo:
        raise CatalogError(f"{where}: a community entry needs repo (a URL)")
    if tier == "maintained" and not (source or repo):
        raise CatalogError(f"{where}: a maintained entry needs source or repo")
    shadowed = raw.get("shadowed", False)
    if not isinstance(shadowed, bool):
        raise CatalogError(f"{where}: shadowed must be true or false")
    return CatalogEntry(
        id=ident,
        dist=dist,
        label=text("label") or "",
        tier=tier,
        author=text("author") or "",
        summary=text("summary") or "",
        roles=tuple(roles),
        contract_version=version,
        source=source,
        repo=repo,
        requirement=text("requirement", required=False),
        shadowed=shadowed,
    )


def load_catalog(text: str | None = None) -> Catalog:
    """Parse and validate the catalog (the packaged ``catalog.toml`` unless ``text`` is given)."""
    if text is None:
        text = resources.files("funes_core.host").joinpath(CATALOG_RESOURCE).read_text(encoding="utf-8")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise CatalogError(f"catalog: not valid TOML ({exc})") from None
    version = data.get("catalog_version")
    if version != 1:
        raise CatalogError(f"catalog: unknown catalog_version {version!r} (this funes reads 1)")
    raw = data.get("integrations", {})
    if not isinstance(raw, dict):
        raise CatalogError("catalog: integrations must be a table")
    entries = {ident: _entry(ident, value) for ident, value in sorted(raw.items())}
    dists: dict[str, str] = {}
    for entry in entries.values():
        other = dists.setdefault(_norm(entry.dist), entry.id)
        if other != entry.id:
            raise CatalogError(f"catalog: {entry.dist} is listed twice ({other!r} and {entry.id!r})")
    return Catalog(version=version, entries=entries)


_HEADER = """\
<!-- Generated from funes_core/host/catalog.toml by scripts/gen_community.py. Do not edit by hand:
     edit the catalog, run `uv run python scripts/gen_community.py`, commit both. -->

# funes integrations

An integration teaches funes about one coding agent: it converts the agent's transcripts into
the turns format, wires a per-turn hook so new turns are indexed, and registers `funes mcp` with
the agent. Install one with:

```sh
funes integrations install <id>
```

This page is generated from the same catalog `funes integrations install` reads, so every entry
below is installable by its id. Maintained entries are installed without a prompt; anything else
is confirmed at a terminal first (see [the trust rules](docs/plugins/index.md#trust)).
"""

_FOOTER = """\
## How to get listed

1. Install funes and its contract kit by name (`uv tool install funes-memory --with
   funes-memory-contracts`, or `pip install funes-memory funes-memory-contracts`), then scaffold
   your integration with `funes integrations new <agent>`: a distribution named
   `funes-memory-<agent>` with a `funes` entry point ([tutorial](docs/plugins/tutorial.md)).
   Install it into funes' own environment with `funes integrations install <agent> --from .`.
2. Run the contract suite in your own CI (`funes-memory-contracts`, see
   [testing](docs/plugins/testing.md)) and make sure `funes integrations check <id>` passes.
3. Publish it on PyPI, with the `funes-plugin` keyword and GitHub topic.
4. Open a pull request adding a `[integrations.<id>]` table with `tier = "community"` to
   `funes_core/host/catalog.toml`, then run `uv run python scripts/gen_community.py`. The catalog's
   tests check the entry (fields, one distribution per listing, one listing per id) and, for
   every listed distribution installed in CI, that it really registers the id and roles it
   declares.

## Not an endorsement

Community integrations are written and released by their authors, not by the funes
maintainers. A listing means the integration passed the contract suite when it was listed; it is
not a security review. Read what you install: an integration runs with your permissions every
time funes starts.
"""


def _bullet(entry: CatalogEntry) -> str:
    link = entry.link
    name = f"[{entry.dist}]({link})" if link else entry.dist
    roles = ", ".join(entry.roles)
    shadow = " (shadowed by another listing)" if entry.shadowed else ""
    return (
        f"- **{name}**, {entry.label} (`{entry.id}`){shadow}, by {entry.author}: {entry.summary}. "
        f"Provides: {roles}; contract {entry.contract_version}."
    )


def render_community(catalog: Catalog) -> str:
    """COMMUNITY.md, rendered from the catalog (byte-stable: entries sorted by id)."""
    parts = [_HEADER]
    for tier, title, empty in (
        ("maintained", "Maintained", "_None._"),
        (
            "community",
            "Community",
            "_None listed yet: yours could be the first (see below)._",
        ),
    ):
        entries = [e for e in catalog.entries.values() if e.tier == tier]
        parts.append(f"## {title}\n")
        if entries:
            parts.append("\n".join(_bullet(e) for e in entries) + "\n")
        else:
            parts.append(empty + "\n")
    parts.append(f"All entries speak plugin contract {CONTRACT_VERSION} unless noted.\n")
    parts.append(_FOOTER)
    return "\n".join(parts)
