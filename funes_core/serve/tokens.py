"""The bearer tokens of team mode (``funes serve --http``): a JSON file that holds only their hashes.

Why a file of hashes. A replica must know which tokens to accept, and the file that tells it is
copied to every replica (and into backups, config repositories, container images). If it held
the tokens, every copy would be a key to the memory; it holds their SHA-256 instead, so a copy
reveals nothing a client could send. A token is shown once, when ``funes serve token add``
makes it (32 random bytes, ``funes_`` + URL-safe base64), and never stored.

The file (``$FUNES_HOME/serve-tokens.json`` unless ``--tokens PATH``), written 0600::

    {"version": 1, "tokens": [
      {"name": "alice", "sha256": "<64 hex>", "created": "2026-12-04T17:00:00Z", "revoked": null}
    ]}

A revoked token keeps its entry, with the time it was revoked: the service answers it 403
("revoked"), apart from a token it never issued (401), so whoever holds an old token learns it
was withdrawn rather than mistyped. A replica re-reads the file when it changes (looked at at
most once a second), so ``token revoke`` takes effect without a restart.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
import stat
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import Enum
from pathlib import Path
from typing import Any

__all__ = [
    "FILE_NAME",
    "TOKEN_PREFIX",
    "TokenEntry",
    "TokenFileError",
    "TokenTable",
    "Verdict",
    "add_token",
    "digest",
    "load_tokens",
    "revoke_token",
]

FILE_NAME = "serve-tokens.json"
TOKEN_PREFIX = "funes_"
_NAME = re.compile(r"[a-z][a-z0-9_-]{0,31}")
_HEX = re.compile(r"[0-9a-f]{64}")


class TokenFileError(ValueError):
    """The tokens file cannot be used, or a token command was given bad input; ``str()`` is one line."""


@dataclass(frozen=True, slots=True)
class TokenEntry:
    name: str
    sha256: str
    created: str
    revoked: str | None = None
    #: this token's requests a minute (``None``: the service's ``--rate``)
    rate: int | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "sha256": self.sha256,
            "created": self.created,
            "revoked": self.revoked,
        }
        if self.rate is not None:
            out["rate"] = self.rate
        return out


class Verdict(Enum):
    """What a presented token is: the three answers the service tells apart (200, 401, 403)."""

    OK = "ok"
    UNKNOWN = "unknown"
    REVOKED = "revoked"


def digest(token: str) -> str:
    """The SHA-256 (hex) a token is stored as. A plain hash suffices: tokens are 256 random bits."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def _stamp() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def load_tokens(path: Path) -> list[TokenEntry]:
    """The file's entries (none when it does not exist); a malformed or loose file is refused."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise TokenFileError(f"tokens file {path}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(st.st_mode):
        raise TokenFileError(f"tokens file {path} is not a regular file")
    if st.st_mode & 0o077:
        raise TokenFileError(
            f"tokens file {path} is readable by others "
            f"(mode {stat.S_IMODE(st.st_mode):04o}): chmod 600 {path}"
        )
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise TokenFileError(f"tokens file {path} is not valid JSON ({type(exc).__name__})") from None
    if not isinstance(data, dict) or data.get("version") != 1 or not isinstance(data.get("tokens"), list):
        raise TokenFileError(f'tokens file {path}: expected {{"version": 1, "tokens": [...]}}')
    entries: list[TokenEntry] = []
    for i, raw in enumerate(data["tokens"]):
        ok = (
            isinstance(raw, dict)
            and isinstance(raw.get("name"), str)
            and _NAME.fullmatch(raw["name"]) is not None
            and isinstance(raw.get("sha256"), str)
            and _HEX.fullmatch(raw["sha256"]) is not None
            and isinstance(raw.get("created", ""), str)
            and (raw.get("revoked") is None or isinstance(raw.get("revoked"), str))
            and (raw.get("rate") is None or (type(raw.get("rate")) is int and raw["rate"] >= 0))
        )
        if not ok:
            raise TokenFileError(
                f"tokens file {path}: entry {i + 1} needs a name, a 64-hex sha256 "
                "(and, if any, a rate of 0 or more)"
            )
        entries.append(
            TokenEntry(
                raw["name"], raw["sha256"], raw.get("created", ""), raw.get("revoked"), raw.get("rate")
            )
        )
    return entries


def _save(path: Path, entries: list[TokenEntry]) -> None:
    from funes_core.files import atomic_write_text

    body = {"version": 1, "tokens": [e.to_json() for e in entries]}
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(body, indent=2) + "\n", mode=0o600)


def add_token(path: Path, name: str, *, rate: int | None = None) -> str:
    """Make a token for ``name``, store its hash, and return the token (the only time it is seen).

    ``rate`` is its own limit, in requests a minute (a bot's lower, a dashboard's higher)."""
    if _NAME.fullmatch(name) is None:
        raise TokenFileError(f"token name {name[:40]!r}: 1-32 of a-z 0-9 - _, starting with a letter")
    entries = load_tokens(path)
    if any(e.name == name for e in entries):
        raise TokenFileError(f"a token named {name!r} exists already (revoke it, or choose another name)")
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    if rate is not None and rate < 0:
        raise TokenFileError("--rate must be 0 (no limit) or more")
    _save(path, [*entries, TokenEntry(name, digest(token), _stamp(), rate=rate)])
    return token


def revoke_token(path: Path, name: str) -> TokenEntry:
    """Mark ``name``'s token revoked (it stays listed, and is answered 403 from now on)."""
    entries = load_tokens(path)
    found = [e for e in entries if e.name == name]
    if not found:
        raise TokenFileError(f"no token named {name[:40]!r} in {path}")
    if found[0].revoked is not None:
        return found[0]
    old = found[0]
    revoked = TokenEntry(old.name, old.sha256, old.created, _stamp(), old.rate)
    _save(path, [revoked if e.name == name else e for e in entries])
    return revoked


class TokenTable:
    """The tokens a running service accepts, re-read when the file changes (checked once a second).

    A file that turns malformed while the service runs keeps the last good table (and says so
    once in the log) rather than locking every client out or letting everyone in.
    """

    def __init__(self, path: Path, *, log: Any = None) -> None:
        self.path = path
        self._log = log
        self._lock = threading.Lock()
        self._entries = load_tokens(path)
        self._seen = self._signature()
        self._checked = time.monotonic()

    def _signature(self) -> tuple[int, int, int] | None:
        try:
            st = os.stat(self.path)
        except OSError:
            return None
        return (st.st_mtime_ns, st.st_size, st.st_ino)

    def _maybe_reload(self) -> None:
        now = time.monotonic()
        if now - self._checked < 1.0:
            return
        self._checked = now
        sig = self._signature()
        if sig == self._seen:
            return
        try:
            entries = load_tokens(self.path)
        except TokenFileError as exc:
            if self._log is not None:
                self._log(f"{exc}; keeping the tokens read before")
            self._seen = sig
            return
        self._entries = entries
        self._seen = sig

    @property
    def active(self) -> int:
        """How many tokens are accepted (not revoked)."""
        with self._lock:
            self._maybe_reload()
            return sum(1 for e in self._entries if e.revoked is None)

    def check(self, token: str) -> tuple[Verdict, TokenEntry | None]:
        """What ``token`` is, and its entry (``None`` when unknown)."""
        wanted = digest(token)
        with self._lock:
            self._maybe_reload()
            entries = list(self._entries)
        found: TokenEntry | None = None
        for entry in entries:  # compare every entry in constant time: no early exit on a match
            if hmac.compare_digest(entry.sha256, wanted):
                found = entry
        if found is None:
            return Verdict.UNKNOWN, None
        return (Verdict.REVOKED if found.revoked is not None else Verdict.OK), found

    def hashes(self) -> frozenset[str]:
        with self._lock:
            return frozenset(e.sha256 for e in self._entries)
