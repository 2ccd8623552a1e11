"""Wires funes into pi through a small pi extension (pi has no hooks and no MCP of its own).

The extension is a pi package shipped inside this distribution (``funes_pi/extension``). At
install time it is copied into ``$FUNES_HOME/integrations/pi-extension/`` with a
``funes.json`` beside it that records what it should run, and that folder is added to the
``packages`` array of pi's ``settings.json``, exactly where ``pi install <dir>`` would record it
(``pi list`` shows it; ``pi remove <dir>`` would drop it). funes makes that edit itself rather
than running ``pi install``, because pi's CLI rewrites the whole settings file (and leaves an
empty ``packages`` behind on removal): the user's bytes would not survive.

The two parts of the integration share that extension and own one key each of ``funes.json``:

* :class:`PiHookInstaller` owns ``hook``: after every turn (``turn_end``) and when a session
  closes (``session_shutdown``), the extension starts ``funes pi hook <session file>`` detached;
* :class:`PiToolRegistrar` owns ``mcp``: the extension starts ``funes mcp [MEMORY]`` once over
  stdio and registers each tool it lists as a pi tool named ``mcp__funes__<tool>``.

Whichever part is installed first puts the extension in place; the last one removed takes it
away again, and with it the ``packages`` entry (and the member or file, if funes created them),
so the user's ``settings.json`` gets its original bytes back.
"""

from __future__ import annotations

import contextlib
import json
import os
from importlib import resources
from pathlib import Path
from typing import Any

from funes_core import (
    Capabilities,
    ConfigError,
    EditError,
    HookInstaller,
    InstallContext,
    Outcome,
    Status,
    ToolRegistrar,
    WiringState,
)
from funes_pi.paths import settings_path
from funes_pi.settings import Created, PackagesFile

__all__ = [
    "CONFIG_NAME",
    "EXTENSION_FILES",
    "SESSION_PLACEHOLDER",
    "TOOL_PREFIX",
    "PiHookInstaller",
    "PiToolRegistrar",
    "extension_dir",
    "hook_command",
]

#: The files of the pi package, relative to ``funes_pi/extension`` and to the installed copy.
EXTENSION_FILES = ("package.json", "extensions/funes.ts")
#: The extension's configuration, written beside the package files.
CONFIG_NAME = "funes.json"
#: What the extension substitutes with the session file's path in the hook command.
SESSION_PLACEHOLDER = "{session_file}"
#: The prefix of the pi tool names under which funes' MCP tools are registered.
TOOL_PREFIX = "mcp__funes__"
#: The version of the ``funes.json`` layout the extension reads.
CONFIG_FORMAT = 1


def extension_dir(ctx: InstallContext) -> Path:
    """Where the pi package is installed: ``$FUNES_HOME/integrations/pi-extension``."""
    return ctx.funes_home / "integrations" / "pi-extension"


def hook_command(ctx: InstallContext) -> list[str]:
    """What the extension runs after each turn: ``funes pi hook {session_file}``."""
    return [*ctx.funes_command, "pi", "hook", SESSION_PLACEHOLDER]


def _shown(path: Path, ctx: InstallContext) -> str:
    try:
        return "~/" + path.relative_to(ctx.home).as_posix()
    except ValueError:
        return str(path)


def _packaged(name: str) -> bytes:
    return resources.files("funes_pi").joinpath("extension", *name.split("/")).read_bytes()


def _write_atomic(path: Path, data: bytes, mode: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with tmp.open("wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _missing_dirs(folder: Path) -> list[Path]:
    """The folders that writing into ``folder`` will create, deepest first."""
    missing: list[Path] = []
    while not folder.exists() and folder.parent != folder:
        missing.append(folder)
        folder = folder.parent
    return missing


def _remove_empty_dirs(recorded: object) -> None:
    """Remove the folders funes created for pi's settings, deepest first, while they are empty."""
    if not isinstance(recorded, list):
        return
    for name in recorded:
        if not isinstance(name, str):
            return
        try:
            Path(name).rmdir()
        except FileNotFoundError:
            continue
        except OSError:
            return


class _Extension:
    """The shared pi package: its files, its ``funes.json`` and its ``packages`` entry."""

    #: The key of ``funes.json`` this part owns (``hook`` or ``mcp``).
    part: str
    #: How the part is named to the user.
    what: str

    def value(self, ctx: InstallContext) -> dict[str, Any]:
        raise NotImplementedError

    # -- the pieces ------------------------------------------------------------------------------

    @staticmethod
    def settings(ctx: InstallContext) -> PackagesFile:
        return PackagesFile(settings_path(ctx.home, ctx.env()))

    @staticmethod
    def _config_path(ctx: InstallContext) -> Path:
        return extension_dir(ctx) / CONFIG_NAME

    def _config(self, ctx: InstallContext) -> dict[str, Any]:
        """``funes.json`` (``{}`` when missing or unreadable: it is funes' own file, rewritten)."""
        try:
            data = json.loads(self._config_path(ctx).read_bytes())
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    @staticmethod
    def _entry(ctx: InstallContext) -> str:
        return str(extension_dir(ctx))

    def _matches(self, ctx: InstallContext, doc: PackagesFile, packages: list[Any]) -> list[int]:
        """Indices of ``packages`` naming our folder (as funes writes it, or as ``pi install`` does)."""
        ours = os.path.normpath(self._entry(ctx))
        found: list[int] = []
        for index, item in enumerate(packages):
            if not isinstance(item, str) or not item.strip():
                continue
            value = item.strip()
            if value == "~" or value.startswith("~/"):
                candidate = str(ctx.home / value[2:]) if value != "~" else str(ctx.home)
            elif os.path.isabs(value):
                candidate = value
            else:
                candidate = str(doc.path.parent / value)
            if os.path.normpath(candidate) == ours:
                found.append(index)
        return found

    def _read_settings(self, ctx: InstallContext) -> tuple[PackagesFile, str | None, list[Any]]:
        doc = self.settings(ctx)
        try:
            text = doc.read()
            return doc, text, doc.packages(text)
        except EditError as exc:
            raise ConfigError(doc.path, str(exc)) from None

    def _files_current(self, ctx: InstallContext) -> bool:
        root = extension_dir(ctx)
        for name in EXTENSION_FILES:
            try:
                if (root / name).read_bytes() != _packaged(name):
                    return False
            except OSError:
                return False
        return True

    def _write_config(self, ctx: InstallContext, config: dict[str, Any]) -> None:
        body = json.dumps(config, indent=2, ensure_ascii=False) + "\n"
        _write_atomic(self._config_path(ctx), body.encode("utf-8"), 0o600)

    def _private_dirs(self, ctx: InstallContext) -> None:
        """Create the extension folder (and the folders above it inside FUNES_HOME) as 0700."""
        for folder in (ctx.funes_home, ctx.funes_home / "integrations", extension_dir(ctx)):
            if not folder.is_dir():
                folder.mkdir(mode=0o700, parents=True, exist_ok=True)

    def _delete_extension(self, ctx: InstallContext) -> bool:
        root = extension_dir(ctx)
        removed = False
        for name in (*EXTENSION_FILES, CONFIG_NAME):
            try:
                (root / name).unlink()
                removed = True
            except FileNotFoundError:
                pass
        # Folders go only when empty: never anything funes did not write.
        for folder in (root / "extensions", root):
            try:
                folder.rmdir()
            except FileNotFoundError:
                continue
            except OSError:
                return removed
        if removed:
            with contextlib.suppress(OSError):
                (ctx.funes_home / "integrations").rmdir()
        return removed

    # -- install / remove ------------------------------------------------------------------------

    def _put(self, ctx: InstallContext) -> Outcome:
        doc, text, packages = self._read_settings(ctx)
        shown = _shown(doc.path, ctx)
        config = self._config(ctx)
        wanted = self.value(ctx)
        changed = False
        new_config = dict(config)
        new_config["format"] = CONFIG_FORMAT
        new_config[self.part] = wanted
        new_text: str | None = None
        if not self._matches(ctx, doc, packages):
            try:
                new_text, created = doc.insert(text, self._entry(ctx))
            except EditError as exc:
                raise ConfigError(doc.path, str(exc)) from None
            new_config["settings"] = {"path": str(doc.path), "created": created.value}
            if created is Created.FILE:
                new_config["settings"]["created_dirs"] = [str(d) for d in _missing_dirs(doc.path.parent)]
        refresh = config.get(self.part) is not None
        self._private_dirs(ctx)
        for name in EXTENSION_FILES:
            target = extension_dir(ctx) / name
            data = _packaged(name)
            try:
                same = target.read_bytes() == data
            except OSError:
                same = False
            if not same:
                _write_atomic(target, data, 0o644)
                changed = True
        if new_config != config:
            self._write_config(ctx, new_config)
            changed = True
        if new_text is not None:
            doc.write(new_text)
            changed = True
        if not changed:
            return Outcome(False, f"{self.what} already set up (pi package in {shown})")
        verb = "updated" if refresh else "added"
        return Outcome(True, f"{verb} {self.what}: the funes pi package, listed in {shown}")

    def _drop(self, ctx: InstallContext) -> Outcome:
        doc, text, packages = self._read_settings(ctx)
        shown = _shown(doc.path, ctx)
        config = self._config(ctx)
        had_part = config.get(self.part) is not None
        others = [key for key in ("hook", "mcp") if key != self.part and config.get(key) is not None]
        if others:
            if not had_part:
                return Outcome(False, f"no {self.what} in the funes pi package")
            rest = {k: v for k, v in config.items() if k != self.part}
            self._write_config(ctx, rest)
            return Outcome(True, f"removed {self.what} (the funes pi package stays for the {others[0]})")
        # The last part out removes the package entry and the package itself.
        matches = self._matches(ctx, doc, packages)
        new_text: str | None = text
        record = config.get("settings")
        if matches and text is not None:
            created = Created.NOTHING
            if isinstance(record, dict) and record.get("path") == str(doc.path):
                try:
                    created = Created(str(record.get("created")))
                except ValueError:
                    created = Created.NOTHING
            try:
                new_text = doc.remove(text, matches, created)
            except EditError as exc:
                raise ConfigError(doc.path, str(exc)) from None
        removed = self._delete_extension(ctx)
        if matches and text is not None:
            if new_text is None:
                doc.path.unlink()
                _remove_empty_dirs(record.get("created_dirs") if isinstance(record, dict) else None)
            elif new_text != text:
                doc.write(new_text)
        if not (removed or matches or had_part):
            return Outcome(False, f"no {self.what} in {shown}")
        return Outcome(True, f"removed {self.what} and the funes pi package from {shown}")

    def _status(self, ctx: InstallContext) -> Status:
        try:
            doc, _, packages = self._read_settings(ctx)
        except ConfigError as exc:
            return Status(WiringState.BROKEN, str(exc))
        shown = _shown(doc.path, ctx)
        current = self._config(ctx).get(self.part)
        listed = bool(self._matches(ctx, doc, packages))
        if current is None:
            return Status(WiringState.NOT_WIRED, shown)
        if not listed:
            return Status(WiringState.NOT_WIRED, f"the funes pi package is not listed in {shown}")
        if not self._files_current(ctx):
            return Status(
                WiringState.OUTDATED, f"the funes pi package in {extension_dir(ctx)} is out of date"
            )
        if current != self.value(ctx):
            return Status(WiringState.OUTDATED, f"{extension_dir(ctx) / CONFIG_NAME} records another funes")
        return Status(WiringState.WIRED, shown)


class PiHookInstaller(_Extension, HookInstaller):
    """Installs the extension's per-turn automation: ``funes pi hook <session file>``, detached."""

    id = "pi"
    label = "pi"
    contract_version = 1
    capabilities = Capabilities()

    part = "hook"
    what = "per-turn indexing"

    def value(self, ctx: InstallContext) -> dict[str, Any]:
        return {"argv": hook_command(ctx), "env": {"FUNES_HOME": str(ctx.funes_home)}}

    def config_paths(self, ctx: InstallContext) -> list[Path]:
        return [self.settings(ctx).path]

    def install(self, ctx: InstallContext) -> Outcome:
        return self._put(ctx)

    def uninstall(self, ctx: InstallContext) -> Outcome:
        return self._drop(ctx)

    def status(self, ctx: InstallContext) -> Status:
        return self._status(ctx)


class PiToolRegistrar(_Extension, ToolRegistrar):
    """Records ``funes mcp [MEMORY]`` for the extension, which bridges its tools into pi."""

    id = "pi"
    label = "pi"
    contract_version = 1
    capabilities = Capabilities()

    part = "mcp"
    what = "the funes memory tools"

    def value(self, ctx: InstallContext) -> dict[str, Any]:
        return {
            "argv": ctx.mcp_command(),
            "memory": ctx.memory,
            "env": {"FUNES_HOME": str(ctx.funes_home)},
            "tool_prefix": TOOL_PREFIX,
        }

    def config_paths(self, ctx: InstallContext) -> list[Path]:
        return [self.settings(ctx).path]

    def register(self, ctx: InstallContext) -> Outcome:
        return self._put(ctx)

    def unregister(self, ctx: InstallContext) -> Outcome:
        return self._drop(ctx)

    def status(self, ctx: InstallContext) -> Status:
        return self._status(ctx)

    def registered_command(self, ctx: InstallContext) -> list[str] | None:
        doc, _, packages = self._read_settings(ctx)
        if not self._matches(ctx, doc, packages):
            return None
        current = self._config(ctx).get(self.part)
        argv = current.get("argv") if isinstance(current, dict) else None
        if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
            return None
        return list(argv)
