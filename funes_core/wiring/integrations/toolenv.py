"""Plugins that survive ``uv tool upgrade``: recorded in the tool's receipt with ``uv tool install --with``.

``uv tool install funes-memory`` makes an environment and a receipt (``uv-receipt.toml`` in it)
naming what it was asked for; ``uv tool upgrade`` rebuilds the environment from the receipt
alone. A plugin that ``integrations install`` added with ``uv pip install`` is not in the
receipt, so the next upgrade uninstalled it while its hooks stayed wired. After installing a
plugin into a uv tool environment, funes therefore asks uv itself to record it: ``uv tool install
<what the receipt names> --with <each plugin>``, which rewrites the receipt through uv's own code
(the receipt's format is uv's, and read here only to repeat what it already names).
"""

from __future__ import annotations

import sys
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from funes_core.wiring.integrations.common import Runner, RunResult

__all__ = ["RECEIPT", "receipt_of", "record", "record_command", "requirement_spec", "tool_env"]

RECEIPT = "uv-receipt.toml"


def receipt_of(prefix: str | None = None) -> Path | None:
    """The receipt of the uv tool environment funes runs in (``None``: not a uv tool environment)."""
    path = Path(prefix or sys.prefix) / RECEIPT
    return path if path.is_file() else None


def requirement_spec(req: Mapping[str, Any]) -> str | None:
    """One receipt requirement as a command-line spec (``None``: a shape this funes does not know)."""
    name = req.get("name")
    if not isinstance(name, str):
        return None
    for key in ("directory", "path"):
        if isinstance(req.get(key), str):
            return str(req[key])
    if isinstance(req.get("url"), str):
        return f"{name} @ {req['url']}"
    if isinstance(req.get("git"), str):
        return f"{name} @ git+{req['git']}"
    extras = req.get("extras")
    spec = name + (f"[{','.join(str(e) for e in extras)}]" if isinstance(extras, list) and extras else "")
    specifier = req.get("specifier")
    return spec + (str(specifier) if isinstance(specifier, str) else "")


def _names(req: Mapping[str, Any]) -> str:
    return str(req.get("name", "")).lower().replace("_", "-")


def record_command(uv: str, receipt: Path, new: Sequence[tuple[str, str]]) -> list[str] | None:
    """``uv tool install`` keeping what ``receipt`` names and adding ``new`` (``(dist, spec)``) as ``--with``.

    ``None`` when every new distribution is already in the receipt (nothing to record) or the
    receipt cannot be repeated faithfully.
    """
    data = tomllib.loads(receipt.read_text(encoding="utf-8")).get("tool", {})
    reqs = [r for r in data.get("requirements", []) if isinstance(r, dict)]
    if not reqs:
        return None
    have = {_names(r) for r in reqs}
    adding = [(d, s) for d, s in new if d.lower().replace("_", "-") not in have]
    if not adding:
        return None
    specs = [requirement_spec(r) for r in reqs]
    if any(s is None for s in specs):
        return None
    argv = [uv, "tool", "install", str(specs[0])]
    for spec in specs[1:]:
        argv += ["--with", str(spec)]
    for _, spec in adding:
        argv += ["--with", spec]
    python = data.get("python")
    if isinstance(python, str):
        argv += ["--python", python]
    return argv


def tool_env(receipt: Path) -> dict[str, str]:
    """UV_TOOL_DIR / UV_TOOL_BIN_DIR so uv edits *this* tool (wherever its folders were put)."""
    env = {"UV_TOOL_DIR": str(receipt.parent.parent)}
    data = tomllib.loads(receipt.read_text(encoding="utf-8")).get("tool", {})
    for point in data.get("entrypoints", []):
        where = point.get("install-path") if isinstance(point, dict) else None
        if isinstance(where, str):
            env["UV_TOOL_BIN_DIR"] = str(Path(where).parent)
            break
    return env


def record(
    runner: Runner,
    uv: str | None,
    dist: str,
    spec: str,
    environ: Mapping[str, str],
    prefix: str | None = None,
) -> tuple[str, RunResult | None]:
    """Record ``dist`` in this tool environment's receipt; what happened, as a line, and the run."""
    receipt = receipt_of(prefix)
    if receipt is None:
        return "", None
    if uv is None:
        return (
            f"{dist} is not in the uv tool receipt and no uv was found to record it: a `uv tool upgrade` "
            f"will drop it (then `funes integrations check --all` says how to restore it)"
        ), None
    try:
        argv = record_command(uv, receipt, [(dist, spec)])
    except (OSError, tomllib.TOMLDecodeError) as exc:
        return f"cannot read the uv tool receipt {receipt} ({exc}); a `uv tool upgrade` may drop {dist}", None
    if argv is None:
        return "", None
    env = {**environ, **tool_env(receipt)}
    done = runner(argv, env=env, stream=False)
    if done.returncode != 0:
        return (
            f"could not record {dist} in the uv tool receipt (exit {done.returncode}: {done.last_line()}); "
            f"a `uv tool upgrade` will drop it: run `{' '.join(argv)}`"
        ), done
    return f"recorded {dist} in the uv tool receipt ({receipt}), so `uv tool upgrade` keeps it", done
