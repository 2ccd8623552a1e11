"""What every config-file format funes edits has in common: a place, an adapter, a file, a ledger.

An integration wires funes into an agent by adding a few *entries* to the agent's config files
(a hook, an MCP server) and taking exactly them out again. The formats differ (JSON, TOML, YAML);
what an entry is does not:

* a :class:`Place`: a member ``key`` of the mapping at ``path``, or (``key`` is ``None``) an item
  of the list at ``path``;
* an :class:`Adapter` per format, which finds what sits at a place, adds a value there (creating
  the containers it needs, and saying which), and drops values again, always by splicing text so
  that every other byte of the user's file survives, and always checking the result with a real
  parser before it is used;
* a :class:`ConfigFile`, which reads and writes one file and refuses, *before* anything is
  changed, what cannot be edited safely: text that is not UTF-8, a document the parser refuses,
  a read-only file, a dangling symbolic link, a parent that is not a folder. Every refusal is a
  :class:`~funes_core.ConfigError` naming the file and saying why;
* a :class:`Ledger` (``$FUNES_HOME/integrations/<id>.wiring.json``), which remembers which files
  and containers funes created, so removal deletes a file or prunes a container only if funes
  made it: a file that existed as ``{}`` (or held an empty ``"hooks": {}``) comes back byte for
  byte.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from funes_core.files import atomic_write_text
from funes_core.host.api import ConfigError

__all__ = ["Adapter", "Added", "ConfigFile", "EditError", "Ledger", "Place", "shown_path"]

#: A path of keys into a config document.
KeyPath = tuple[str, ...]


class EditError(ValueError):
    """A document an adapter cannot edit safely; the message says why, without the file's name."""


@dataclass(frozen=True, slots=True)
class Place:
    """Where an entry lives: member ``key`` of the mapping at ``path``, or an item of the list at ``path``."""

    path: KeyPath
    key: str | None = None

    @property
    def container(self) -> KeyPath:
        """The mapping (for a member) or list (for an item) that holds the entry."""
        return self.path

    def shown(self) -> str:
        dotted = ".".join(self.path)
        if self.key is None:
            return f"{dotted}[]" if dotted else "[]"
        return f"{dotted}.{self.key}" if dotted else self.key


@dataclass(frozen=True, slots=True)
class Added:
    """The text after an addition, and the containers (key paths) the addition had to create."""

    text: str
    created: tuple[KeyPath, ...] = ()


class Adapter(Protocol):
    """One config format. Every method splices text and checks the result with the format's parser."""

    #: The format's name, for messages ("JSON", "TOML", "YAML").
    label: str

    def parse(self, text: str) -> dict[str, Any]:
        """The document as plain data; :class:`EditError` when it is not a mapping of this format."""

    def find(self, text: str, place: Place, *, note: str) -> list[Any]:
        """The values at ``place`` funes could remove: the member's value, or the list's items.

        A format may report less than is there: TOML reports a table only inside funes' marked
        block. :class:`EditError` when the path runs through something that is not a container.
        """

    def occupied(self, text: str, place: Place, *, note: str) -> bool:
        """Whether a member ``place.key`` exists at all (funes' or not); ``False`` for list places."""

    def add(self, text: str | None, place: Place, value: Any, *, note: str) -> Added:
        """``text`` (``None``: a new file) with ``value`` added at ``place``.

        ``note`` is the comment that marks what funes writes, for formats that have comments
        (TOML, YAML); JSON ignores it. Raises :class:`EditError` when the edit cannot be made safely.
        """

    def drop(self, text: str, place: Place, ours: Callable[[Any], bool], *, note: str) -> str:
        """``text`` without the values at ``place`` that ``ours`` accepts (no pruning)."""

    def prune(self, text: str, container: KeyPath) -> str:
        """``text`` without the (empty) container at ``container``; unchanged if it is not empty."""

    def empty(self, text: str) -> bool:
        """Whether the document holds nothing (what a file funes created is when its entries go)."""


def shown_path(path: Path, home: Path) -> str:
    """``~/…`` for a path under ``home`` (how messages name agent configs), else the path itself."""
    try:
        return "~/" + path.relative_to(home).as_posix()
    except ValueError:
        return str(path)


@dataclass(slots=True)
class ConfigFile:
    """One agent config file in one format: read, check, write or delete it, refusing what is unsafe."""

    path: Path
    adapter: Adapter

    def _fail(self, problem: str) -> ConfigError:
        return ConfigError(self.path, problem)

    def read(self) -> str | None:
        """The file's text (``None`` when it does not exist), checked to parse; else :class:`ConfigError`."""
        if self.path.is_symlink() and not self.path.exists():
            target = os.readlink(self.path)
            raise self._fail(
                f"is a symbolic link to {target}, which does not exist; create it or remove the link"
            )
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return None
        except IsADirectoryError:
            raise self._fail("is a folder, not a file") from None
        except OSError as exc:
            raise self._fail(f"cannot be read ({exc.strerror or exc})") from None
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise self._fail("is not UTF-8 text") from None
        self.parse(text)
        return text

    def parse(self, text: str) -> dict[str, Any]:
        try:
            return self.adapter.parse(text)
        except EditError as exc:
            raise self._fail(str(exc)) from None

    def check_writable(self) -> None:
        """Refuse now, before any file is changed, what a later write would fail on or get wrong."""
        target = self.path
        if target.is_symlink():
            if not target.exists():
                raise self._fail(
                    f"is a symbolic link to {os.readlink(target)}, which does not exist; "
                    "create it or remove the link"
                )
            target = target.resolve()
        try:
            mode = target.stat().st_mode
        except FileNotFoundError:
            mode = None
        if mode is not None:
            if not stat.S_ISREG(mode):
                raise self._fail("is not a regular file")
            if not mode & stat.S_IWUSR or not os.access(target, os.W_OK):
                raise self._fail(
                    f"is read-only (mode {stat.S_IMODE(mode):04o}); make it writable to let funes edit it"
                )
        folder = target.parent
        while not folder.exists():
            if folder.is_symlink():
                raise self._fail(f"its folder {folder} is a symbolic link to a folder that does not exist")
            folder = folder.parent
        if not folder.is_dir():
            raise self._fail(f"{folder} is not a folder")
        if target.parent.exists() and not os.access(target.parent, os.W_OK):
            raise self._fail(f"its folder {target.parent} is read-only")

    def write(self, text: str) -> None:
        """Replace the file atomically, keeping its mode (new files 0600), through a symlink if it is one."""
        self.parse(text)  # a bug in an edit must never leave a broken config behind
        self.check_writable()
        target = self.path.resolve() if self.path.is_symlink() else self.path
        try:
            atomic_write_text(target, text, mode=None)
        except OSError as exc:
            raise self._fail(f"cannot be written ({exc.strerror or exc})") from None

    def delete(self) -> None:
        try:
            self.path.unlink(missing_ok=True)
        except OSError as exc:
            raise self._fail(f"cannot be deleted ({exc.strerror or exc})") from None


@dataclass(slots=True)
class Ledger:
    """What funes created in agents' config files, kept in ``$FUNES_HOME/integrations/<id>.wiring.json``.

    Per file: whether funes created it, and the containers (key paths) funes created in it. It is
    funes' own record, never the user's file, so it works for formats that cannot hold a marker
    (JSON) and for agents that validate their config's schema.
    """

    path: Path
    data: dict[str, dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def load(cls, funes_home: Path, ident: str) -> Ledger:
        path = funes_home / "integrations" / f"{ident}.wiring.json"
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            raw = {}
        files = raw.get("files") if isinstance(raw, dict) else None
        return cls(path, dict(files) if isinstance(files, dict) else {})

    def _record(self, config: Path) -> dict[str, Any]:
        return self.data.setdefault(str(config), {"created_file": False, "created": []})

    def created_file(self, config: Path) -> bool:
        return bool(self.data.get(str(config), {}).get("created_file"))

    def created(self, config: Path) -> list[KeyPath]:
        raw = self.data.get(str(config), {}).get("created", [])
        return [tuple(p) for p in raw if isinstance(p, list) and all(isinstance(k, str) for k in p)]

    def created_dirs(self, config: Path) -> list[Path]:
        raw = self.data.get(str(config), {}).get("created_dirs", [])
        return [Path(p) for p in raw if isinstance(p, str)]

    def note(
        self, config: Path, *, new_file: bool, created: Iterable[KeyPath], dirs: Iterable[Path] = ()
    ) -> None:
        record = self._record(config)
        if new_file:
            record["created_file"] = True
            record["created_dirs"] = [str(d) for d in dirs]
        known = [tuple(p) for p in record["created"]]
        for path in created:
            if path not in known:
                known.append(path)
        record["created"] = [list(p) for p in known]

    def forget(self, config: Path, containers: Iterable[KeyPath] = (), *, whole: bool = False) -> None:
        if whole:
            self.data.pop(str(config), None)
            return
        record = self.data.get(str(config))
        if record is None:
            return
        gone = set(containers)
        record["created"] = [p for p in record["created"] if tuple(p) not in gone]

    def entries(self, config: Path) -> dict[str, dict[str, Any]]:
        """The entries funes wrote into ``config``, by place: enough to take them out without the plugin."""
        raw = self.data.get(str(config), {}).get("entries", {})
        return {k: v for k, v in raw.items() if isinstance(v, dict)} if isinstance(raw, dict) else {}

    def remember(self, config: Path, place: str, entry: dict[str, Any]) -> bool:
        """Record what funes wrote at ``place`` of ``config``; whether the ledger changed."""
        known = self._record(config).setdefault("entries", {})
        if known.get(place) == entry:
            return False
        known[place] = entry
        return True

    def forget_entry(self, config: Path, place: str) -> None:
        record = self.data.get(str(config))
        if record is not None and isinstance(record.get("entries"), dict):
            record["entries"].pop(place, None)

    def configs(self) -> list[Path]:
        """Every config file the ledger knows about."""
        return [Path(p) for p in self.data]

    def save(self) -> None:
        """Write the ledger (0600), or delete it when it records nothing any more."""
        live = {
            k: v
            for k, v in self.data.items()
            if v.get("created_file") or v.get("created") or v.get("entries")
        }
        if not live:
            self.path.unlink(missing_ok=True)
            return
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        atomic_write_text(
            self.path, json.dumps({"version": 1, "files": live}, indent=2, sort_keys=True) + "\n"
        )
