"""Converting an integration's sessions into its spool, skipping the unchanged ones cheaply.

Two callers share this: ``funes integrations install`` seeds the spool with the agent's existing
sessions, and ``funes index`` refreshes the *registered paths* (``install ID --path P``: folders or
files that no hook watches, such as a notes folder) before it drains the spools.

What makes it cheap: each source file's ``size:mtime_ns`` is recorded in the install record
(``$FUNES_HOME/integrations/<id>.json``, ``seeded``) once it is converted, so the next run only
``stat``\\ s a file it has seen and converts nothing unless that changed. A file the converter
refuses (an :class:`~funes_core.host.api.IntegrationError`, e.g. a note that is not UTF-8) is
recorded too (``refused``, with the one-line reason), reported once, and tried again only when it
changes; a file that disappears drops out of both maps (what it stored stays in the memory).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from funes_core.files import synced_once
from funes_core.host.api import Converter, InstallContext, IntegrationError, SessionRef
from funes_core.host.manager import Integration
from funes_core.wiring.integrations.common import InstallError, Orchestrator

__all__ = [
    "SeedResult",
    "check_path",
    "convert_changed",
    "recorded_map",
    "recorded_paths",
    "refresh_registered",
    "registered_refs",
]


@dataclass(slots=True)
class SeedResult:
    """What one pass converted: counts, and the maps to record for the next pass."""

    sessions: int = 0
    written: int = 0
    unchanged: int = 0
    failed: int = 0
    seeded: dict[str, str] = field(default_factory=dict)
    refused: dict[str, str] = field(default_factory=dict)
    #: Refusals not reported before (one line each).
    new_refusals: list[str] = field(default_factory=list)


def recorded_map(record: Mapping[str, Any], key: str) -> dict[str, str]:
    raw = record.get(key)
    return {str(k): str(v) for k, v in raw.items()} if isinstance(raw, dict) else {}


def recorded_paths(record: Mapping[str, Any]) -> list[Path]:
    """The paths registered with ``--path`` (absolute, in the order they were added)."""
    raw = record.get("paths")
    return [Path(p) for p in raw if isinstance(p, str)] if isinstance(raw, list) else []


def check_path(raw: Path) -> Path:
    """A ``--path`` made absolute, or :class:`InstallError` when it cannot be read.

    The user named it, so a link is followed here (only links found *inside* a folder are the
    converter's to skip). A folder must be listable and a file openable.
    """
    path = raw.expanduser().absolute()
    if not path.exists():
        raise InstallError(f"--path {raw}: no such folder or file")
    try:
        if path.is_dir():
            with os.scandir(path) as entries:
                next(entries, None)
        elif path.is_file():
            with path.open("rb") as fh:
                fh.read(1)
        else:
            raise InstallError(f"--path {raw}: not a folder or a regular file")
    except PermissionError:
        raise InstallError(f"--path {raw}: not readable (permission denied)") from None
    except OSError as exc:
        raise InstallError(f"--path {raw}: cannot read it ({exc.strerror or exc})") from None
    return path


def registered_refs(
    orch: Orchestrator, integ: Integration, converter: Converter, paths: Sequence[Path]
) -> tuple[list[SessionRef], list[Path]]:
    """The sessions under the registered ``paths``, and the paths that are gone or unreadable."""
    refs: list[SessionRef] = []
    missing: list[Path] = []
    for path in paths:
        if not path.exists():
            missing.append(path)
            continue
        refs.extend(orch.call(integ, "converter", functools.partial(converter.sessions_in, path)))
    return refs, missing


def convert_changed(
    orch: Orchestrator,
    integ: Integration,
    ctx: InstallContext,
    converter: Converter,
    refs: Iterable[SessionRef],
    previous: Mapping[str, str],
    refused_before: Mapping[str, str],
    *,
    advance: Callable[[], None] = lambda: None,
) -> SeedResult:
    """Convert into the spool every ref whose file changed since ``previous`` recorded it.

    The spool files are written without an fsync each and made durable together before this
    returns (:func:`funes_core.files.synced_once`): one per file was half of converting a history.
    """
    result = SeedResult()
    with synced_once():
        for ref in refs:
            result.sessions += 1
            key = f"{ref.path}::{ref.session_id}"
            try:
                info = ref.path.stat()
                signature = f"{info.st_size}:{info.st_mtime_ns}"
                if previous.get(key) == signature:
                    result.unchanged += 1
                elif refused_before.get(key, "").startswith(signature + " "):
                    result.refused[key] = refused_before[key]
                else:
                    writes = converter.write_spool(ref, ctx.funes_home)
                    fresh = sum(1 for w in writes if w.changed)
                    result.written += fresh
                    result.unchanged += 0 if fresh else 1
                if key not in result.refused:
                    result.seeded[key] = signature
            except IntegrationError as exc:
                reason = " ".join(str(exc).split())
                result.refused[key] = f"{signature} {reason}"
                result.new_refusals.append(reason)
            except Exception as exc:  # broad on purpose: one bad source must not stop the others
                result.failed += 1
                orch.ui.err(f"funes: {integ.id}: skipped {ref.path}: {type(exc).__name__}: {exc}")
            advance()
    return result


def refresh_registered(orch: Orchestrator, *, harness: str | None = None, full: bool = False) -> int:
    """``funes index``'s first step: convert what changed under every integration's registered paths.

    ``harness`` limits it to one integration; ``full`` ignores what was recorded (the memory is
    being rebuilt). Returns how many session files were written into spools. Problems are one
    line each on stderr; none of them stops the index run.
    """
    ctx = orch.context()
    folder = ctx.funes_home / "integrations"
    written = 0
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        ident = path.stem
        if harness is not None and ident != harness:
            continue
        record = orch.read_record(ctx, ident) or {}
        paths = recorded_paths(record)
        if not paths:
            continue
        integ = orch.pm.integration(ident)
        if integ is None or integ.converter is None:
            orch.ui.err(
                f"funes: {ident}: {len(paths)} registered paths, but no installed plugin converts them "
                f"(install it again: funes integrations install {ident})"
            )
            continue
        try:
            converter = orch.call(integ, "converter", integ.converter)
            refs, missing = registered_refs(orch, integ, converter, paths)
            for gone in missing:
                orch.ui.err(
                    f"funes: {ident}: registered path {gone} is gone; skipped "
                    f"(unregister it with: funes integrations remove {ident} --path {gone})"
                )
            previous = {} if full else recorded_map(record, "seeded")
            refused = {} if full else recorded_map(record, "refused")
            result = convert_changed(orch, integ, ctx, converter, refs, previous, refused)
        except InstallError as exc:
            orch.ui.err(f"funes: {exc}")
            continue
        for reason in result.new_refusals:
            orch.ui.err(f"funes: {ident}: refused {reason}")
        if result.written:
            orch.ui.err(f"funes: {ident}: {result.written} changed sessions converted into the spool")
        written += result.written
        before = (recorded_map(record, "seeded"), recorded_map(record, "refused"))
        if (result.seeded, result.refused) != before:
            orch.write_record(ctx, ident, {**record, "seeded": result.seeded, "refused": result.refused})
    return written
