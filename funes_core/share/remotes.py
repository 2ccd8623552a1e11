"""Named remotes: memories on storage the user owns, listed in ``$FUNES_HOME/remotes.toml``.

A remote is a name for a LanceDB dataset on object storage (``s3://``, ``s3+ddb://``, ``gs://``,
``az://``) or in a plain folder (NFS, a synced drive), plus the storage options LanceDB needs to
reach it (an endpoint for an S3-compatible store, a region, ``allow_http`` for a loopback server).

Why a file of names rather than URIs on every command: an agent (over MCP) may name only
``local`` or a remote the user configured, never a URI or a path of its choosing; and the
options (endpoint, region) are written once, not retyped.

What is never in this file: credentials. They come from the cloud SDKs' own chain (environment,
``~/.aws``, instance roles, ``GOOGLE_APPLICATION_CREDENTIALS``, ...), so that funes is never one
more place a secret leaks from. Option keys that look like credentials are refused. The file is
still written 0600: the bucket names and endpoints are the user's business.

The format (documented in docs/sharing.md)::

    # funes remotes: names for memories on storage you own. No credentials here, ever.
    version = 1

    [remotes.team]
    uri = "s3://team-bucket/funes"
    taint = "internal"            # or "external": passages are marked third-party when read

    [remotes.team.options]        # LanceDB storage options, strings
    region = "eu-west-1"
    endpoint = "https://s3.example.com"
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from funes_core.files import atomic_write_text

if TYPE_CHECKING:
    from funes_core.home import Home

__all__ = [
    "FOLDER_SCHEME",
    "MAX_URI_CHARS",
    "OBJECT_SCHEMES",
    "OPTION_KEYS",
    "REMOTES_FILE",
    "TAINTS",
    "Remote",
    "RemoteConfigError",
    "load_remotes",
    "parse_option",
    "remotes_path",
    "save_remotes",
    "validate_name",
    "validate_uri",
]

REMOTES_FILE = "remotes.toml"
FORMAT_VERSION = 1
#: Object stores LanceDB reaches natively (``s3+ddb`` is S3 with a DynamoDB commit store, for
#: S3-compatible stores without conditional PUT; ``hf`` is documented but untested here).
OBJECT_SCHEMES = ("s3", "s3+ddb", "gs", "az", "hf")
FOLDER_SCHEME = "file"
TAINTS = ("internal", "external")
_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")
#: Names that would be ambiguous in ``--memory``: the local memory, and words a user may mean.
_RESERVED = frozenset({"local", "all"})

#: Storage options a remote may carry, and what each means (``funes remote add --help`` lists them).
OPTION_KEYS: dict[str, str] = {
    "endpoint": "URL of an S3-compatible store (MinIO, R2, Ceph, a loopback test server)",
    "region": "the bucket's region (S3)",
    "allow_http": "true to allow a plain-http endpoint (loopback and private networks only)",
    "virtual_hosted_style_request": "true for bucket-in-hostname addressing (some S3-compatible stores)",
    "connect_timeout": "seconds to wait for a connection, e.g. 5s",
    "timeout": "seconds a whole request may take, e.g. 30s",
    "dynamodb_endpoint": "URL of the DynamoDB commit store for s3+ddb:// (tests, local DynamoDB)",
    "account_name": "the storage account (az://)",
}
#: Fragments of option keys that name a credential: refused, whatever the spelling.
_CREDENTIAL_WORDS = (
    "secret",
    "token",
    "password",
    "credential",
    "access_key",
    "key_id",
    "sas",
    "account_key",
)


class RemoteConfigError(ValueError):
    """A remote name, URI, option or the remotes file is wrong; ``str()`` is the one line to show."""


#: A URI, or an option value, is at most this long.
MAX_URI_CHARS = 1000
_USERINFO = re.compile(r"(?<=://)[^/@?#\s]*@")
_QUERY = re.compile(r"\?[^#\s]*")


def _quote(text: str) -> str:
    """``text`` as a refusal may echo it: whatever sits in a URI's user-info or query masked (where
    credentials go: ``KEY:SECRET@``, ``?X-Amz-Security-Token=``), redacted, one line, cut, quoted."""
    from funes_core.redact import redact  # lazy: only a refusal pays for detect-secrets
    from funes_core.safetext import one_line, shorten

    masked = _QUERY.sub("?…", _USERINFO.sub("…@", text))
    return repr(shorten(one_line(redact(masked)[0]), 80))


@dataclass(frozen=True, slots=True)
class Remote:
    """One configured remote. ``uri`` is the memory's folder (the table ``chunks.lance`` is inside)."""

    name: str
    uri: str
    options: Mapping[str, str] = field(default_factory=dict)
    taint: str = "internal"

    @property
    def scheme(self) -> str:
        return urlsplit(self.uri).scheme if "://" in self.uri else FOLDER_SCHEME

    @property
    def is_folder(self) -> bool:
        return self.scheme == FOLDER_SCHEME

    @property
    def folder(self) -> Path:
        """The local folder of a folder remote (``file://`` stripped)."""
        return Path(self.uri.removeprefix("file://"))


def remotes_path(home: Home) -> Path:
    return home.root / REMOTES_FILE


def validate_name(name: str) -> str:
    if name in _RESERVED:
        raise RemoteConfigError(f"{name!r} is reserved; choose another remote name")
    if not _NAME.match(name):
        raise RemoteConfigError(
            f"bad remote name {name!r}: use 1-32 of a-z, 0-9, '-' and '_', starting with a letter"
        )
    return name


def validate_uri(uri: str) -> str:
    """Check a remote URI and return it normalised (no trailing slash; folders absolute)."""
    raw = uri.strip()
    if not raw:
        raise RemoteConfigError("the remote URI is empty")
    if len(raw) > MAX_URI_CHARS:
        raise RemoteConfigError(
            f"bad remote URI {_quote(uri)}: {len(raw):,} characters; at most {MAX_URI_CHARS:,}"
        )
    if "://" not in raw:
        path = Path(raw).expanduser()
        if not path.is_absolute():
            raise RemoteConfigError(
                f"bad remote URI {_quote(uri)}: give an absolute folder or s3://, gs://, az://"
            )
        return str(path).rstrip("/") or "/"
    parts = urlsplit(raw)
    scheme = parts.scheme.lower()
    if scheme == FOLDER_SCHEME:
        if parts.netloc not in ("", "localhost") or not parts.path.startswith("/"):
            raise RemoteConfigError(f"bad remote URI {_quote(uri)}: a file:// URI needs an absolute path")
        return parts.path.rstrip("/") or "/"
    if scheme not in OBJECT_SCHEMES:
        schemes = ", ".join(OBJECT_SCHEMES)
        raise RemoteConfigError(
            f"bad remote URI {_quote(uri)}: the scheme must be one of {schemes}, or a folder"
        )
    if "@" in parts.netloc:
        raise RemoteConfigError(f"bad remote URI {_quote(uri)}: no credentials in the URI")
    if not parts.netloc or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{1,254}", parts.netloc):
        raise RemoteConfigError(f"bad remote URI {_quote(uri)}: name a bucket, e.g. {scheme}://bucket/prefix")
    if "@" in parts.netloc or parts.password:
        raise RemoteConfigError(f"bad remote URI {_quote(uri)}: no credentials in the URI")
    if parts.fragment or (parts.query and scheme != "s3+ddb"):
        raise RemoteConfigError(
            f"bad remote URI {_quote(uri)}: no query or fragment (options go in --option)"
        )
    if scheme == "s3+ddb" and not _DDB_QUERY.fullmatch(parts.query):
        raise RemoteConfigError(
            f"bad remote URI {_quote(uri)}: s3+ddb:// needs ?ddbTableName=TABLE, and nothing else"
        )
    prefix = parts.path.rstrip("/")
    if ".." in prefix.split("/"):
        raise RemoteConfigError(f"bad remote URI {_quote(uri)}: '..' is not allowed")
    query = f"?{parts.query}" if parts.query else ""
    return f"{scheme}://{parts.netloc}{prefix}{query}"


_DDB_QUERY = re.compile(r"ddbTableName=[A-Za-z0-9_.\-]{3,255}")
_DURATION = re.compile(r"(?P<n>\d{1,9})(?:ms|s|m|min|h)")
_REGION = re.compile(r"(?=.{1,32}$)[a-z0-9]+(?:[-_][a-z0-9]+)*")
_ACCOUNT = re.compile(r"[a-z0-9]{3,24}")


def _check_endpoint(key: str, value: str) -> str:
    """An ``http(s)://host[:port][/path]`` URL with nothing secret in it (no user-info, no query)."""
    parts = urlsplit(value)
    try:
        port_ok = parts.port is None or parts.port > 0
    except ValueError:
        port_ok = False
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname or not port_ok or " " in value:
        raise RemoteConfigError(
            f"bad option {key!r}: {_quote(value)} is not an http:// or https:// URL (host, port, path)"
        )
    if "@" in parts.netloc:
        raise RemoteConfigError(
            f"bad option {key!r}: no credentials in the endpoint ({_quote(value)}); "
            "your cloud SDK's environment or config supplies them"
        )
    if parts.query or parts.fragment or value.endswith("?"):
        raise RemoteConfigError(f"bad option {key!r}: no query or fragment in the endpoint ({_quote(value)})")
    return value


def _check_value(key: str, value: str) -> str:
    """``value`` checked for what ``key`` means, normalised (booleans in lower case).

    Only an endpoint is quoted back (masked: it is the one value whose host helps); any other value
    that does not fit may be a pasted secret of a shape no rule knows, so it is not echoed.
    """
    if key in ("endpoint", "dynamodb_endpoint"):
        return _check_endpoint(key, value)
    if key in ("allow_http", "virtual_hosted_style_request"):
        if value.lower() not in ("true", "false"):
            raise RemoteConfigError(f"bad option {key!r}: the value must be true or false")
        return value.lower()
    if key in ("timeout", "connect_timeout"):
        m = _DURATION.fullmatch(value)
        if m is None or int(m["n"]) == 0:
            raise RemoteConfigError(
                f"bad option {key!r}: the value must be a duration above zero (e.g. 30s, 500ms, 2m)"
            )
        return value
    pattern = _REGION if key == "region" else _ACCOUNT
    if not pattern.fullmatch(value):
        what = "a region such as eu-west-1" if key == "region" else "3-24 of a-z and 0-9"
        raise RemoteConfigError(f"bad option {key!r}: the value must be {what}")
    return value


def parse_option(text: str) -> tuple[str, str]:
    """``KEY=VALUE`` from ``--option``: a known, non-credential key and a value checked for what it means.

    The value of each key has a shape (a URL, a boolean, a duration, a name): anything else is
    refused, and so is any value the redactor finds a secret in, so that no credential is stored
    in an endpoint's user-info or query (``http://user:pass@…``, ``?X-Amz-Security-Token=``).
    Refusals quote the value masked and redacted.
    """
    key, sep, value = text.partition("=")
    key = key.strip().lower()
    if not sep or not key:
        raise RemoteConfigError(f"bad option {_quote(text)}: write KEY=VALUE, e.g. region=eu-west-1")
    if any(word in key for word in _CREDENTIAL_WORDS):
        raise RemoteConfigError(
            f"option {key!r} looks like a credential: funes never stores credentials; "
            "use your cloud SDK's environment or config (AWS_PROFILE, GOOGLE_APPLICATION_CREDENTIALS, ...)"
        )
    if key not in OPTION_KEYS:
        raise RemoteConfigError(f"unknown option {_quote(key)}: use one of {', '.join(OPTION_KEYS)}")
    value = value.strip()
    if not value or any(ch in value for ch in "\r\n\0") or len(value) > MAX_URI_CHARS:
        raise RemoteConfigError(f"bad option {key!r}: the value must be one non-empty line")
    from funes_core.redact import redact

    if key.endswith("endpoint"):
        value = _check_value(key, value)  # first: it says what is wrong with an endpoint's user-info
    if redact(value)[1]:
        raise RemoteConfigError(
            f"bad option {key!r}: the value looks like a credential ({_quote(value)}); funes never "
            "stores credentials"
        )
    return key, _check_value(key, value)


def _remote_from(name: str, table: object) -> Remote:
    if not isinstance(table, dict):
        raise RemoteConfigError(f"remotes file: [remotes.{name}] must be a table")
    uri = table.get("uri")
    if not isinstance(uri, str):
        raise RemoteConfigError(f'remotes file: [remotes.{name}] needs uri = "..."')
    options = table.get("options", {})
    if not isinstance(options, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in options.items()
    ):
        raise RemoteConfigError(f"remotes file: [remotes.{name}.options] must hold strings")
    taint = table.get("taint", "internal")
    if taint not in TAINTS:
        raise RemoteConfigError(f"remotes file: [remotes.{name}] taint must be internal or external")
    checked = dict(parse_option(f"{k}={v}") for k, v in options.items())
    return Remote(validate_name(name), validate_uri(uri), checked, taint)


def load_remotes(home: Home) -> dict[str, Remote]:
    """The configured remotes by name (none when the file does not exist)."""
    path = remotes_path(home)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise RemoteConfigError(f"cannot read {path}: {exc.strerror}") from None
    try:
        doc = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise RemoteConfigError(f"{path} is not valid TOML ({exc}); fix or remove it") from None
    version = doc.get("version", FORMAT_VERSION)
    if version != FORMAT_VERSION:
        raise RemoteConfigError(f"{path} has format version {version!r}; this funes reads {FORMAT_VERSION}")
    section = doc.get("remotes", {})
    if not isinstance(section, dict):
        raise RemoteConfigError(f"{path}: [remotes] must be a table")
    try:
        return {name: _remote_from(name, table) for name, table in section.items()}
    except RemoteConfigError as exc:
        raise RemoteConfigError(f"{path}: {exc}") from None


HEADER = "# funes remotes: names for memories on storage you own. No credentials here, ever.\n"


def save_remotes(home: Home, remotes: Iterable[Remote]) -> Path:
    """Write the remotes file atomically, mode 0600."""
    import tomli_w

    doc: dict[str, object] = {"version": FORMAT_VERSION, "remotes": {}}
    section: dict[str, object] = {}
    for remote in sorted(remotes, key=lambda r: r.name):
        entry: dict[str, object] = {"uri": remote.uri, "taint": remote.taint}
        if remote.options:
            entry["options"] = dict(sorted(remote.options.items()))
        section[remote.name] = entry
    doc["remotes"] = section
    home.ensure()
    path = remotes_path(home)
    atomic_write_text(path, HEADER + tomli_w.dumps(doc))
    return path
