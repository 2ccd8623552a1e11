"""Values given to secret-sounding names: ``NAME=value``, ``"name": "value"``, ``name: v``, ``--name v``.

Found by one keyword scan (``pass``, ``pwd``, ``secret``, ``token``, ``key``), then examined only
where a keyword sits in a secret-like name; the name decides the kind (password or other secret),
the value judgement whether it is a value at all. Also the high-entropy value alone on the line
after a label naming a credential.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator

from funes_core.redact.judge import _high_entropy, _plausible_generic, _plausible_password
from funes_core.redact.rules import _P_ASSIGN, _P_LOOSE, _Span

# ---------------------------------------------------------------------------------------------
# Values given to secret-sounding names: NAME=value, "name": "value", name: value, --name value.
# ---------------------------------------------------------------------------------------------

_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_NAME_SEPARATORS = re.compile(r"[_.\-]+")
_PASSWORD_WORDS = frozenset({"password", "passwd", "passphrase", "pass", "pwd"})
_KEY_QUALIFIERS = frozenset(
    {
        "api",
        "private",
        "access",
        "secret",
        "auth",
        "client",
        "signing",
        "encryption",
        "master",
        "service",
        "account",
        "app",
        "license",
        "webhook",
        "subscription",
        "functions",
    }
)
#: Trailing name parts that keep the meaning "the secret itself": ``SECRET_KEY_BASE``, ``TOKEN_VALUE``.
_HARMLESS_SUFFIXES = frozenset(
    {"value", "val", "str", "string", "b64", "base64", "hex", "raw", "plain", "data", "base"}
)
#: ``*_token`` names that are not credentials: pagination cursors, tokenizer specials, counters.
_NOT_CREDENTIAL_TOKENS = frozenset(
    {
        "page",
        "next",
        "prev",
        "continuation",
        "pagination",
        "cursor",
        "sync",
        "resume",
        "cancel",
        "cancellation",
        "bos",
        "eos",
        "pad",
        "unk",
        "sep",
        "cls",
        "mask",
        "special",
        "max",
        "min",
        "num",
        "total",
        "input",
        "output",
        "prompt",
        "completion",
        "cache",
        "count",
        "start",
        "end",
        "stop",
        "reasoning",
        "tokenizer",
        "word",
        "eot",
        "image",
        "chat",
        "split",
    }
)
#: Credential header names, reported as ``api_key_header`` whatever the syntax around them.
_CREDENTIAL_HEADERS = frozenset(
    {
        "x-api-key",
        "api-key",
        "x-auth-token",
        "x-access-token",
        "private-token",
        "x-goog-api-key",
        "x-api-token",
        "x-subscription-token",
        "ocp-apim-subscription-key",
        "x-functions-key",
    }
)


@functools.lru_cache(maxsize=4096)
def _name_kind(name: str) -> str | None:
    """The kind of a value given to ``name``, or None if ``name`` does not name a secret.

    The secret word must be the *last* part of the name (``DB_PASSWORD``, ``githubToken``,
    ``client-secret``, ``OPENAI_API_KEY``), so ``max_tokens``, ``token_count``, ``secret_name``,
    ``password_reset_url`` and ``PASSWORD_MIN_LENGTH`` are not secrets. Pure, hence cached.
    """
    if name.lower() in _CREDENTIAL_HEADERS:
        return "api_key_header"
    parts = [p for p in _NAME_SEPARATORS.split(_CAMEL_BOUNDARY.sub("_", name).lower()) if p]
    while len(parts) > 1 and (parts[-1] in _HARMLESS_SUFFIXES or parts[-1].isdigit()):
        parts.pop()
    if not parts or "public" in parts:
        return None  # publishable keys, .NET publicKeyToken: public by definition
    last = parts[-1]
    prev = parts[-2] if len(parts) > 1 else ""
    if last in _PASSWORD_WORDS or last.endswith(("password", "passwd")):
        if last == "pwd" and prev in {"", "old"}:
            return None  # the shell's $PWD / $OLDPWD: a directory, not a password
        return "password_assignment"
    if last.endswith(("token", "secret")) or last in {
        "apikey",
        "privatekey",
        "accesskey",
        "secretkey",
        "authkey",
    }:
        if last == "token" and prev in _NOT_CREDENTIAL_TOKENS:
            return None
        return "secret_assignment"
    if last == "key" and prev in _KEY_QUALIFIERS:
        return "secret_assignment"
    return None


def _value_ok(kind: str, value: str, name: str, *, unquoted: bool, strict: bool = False) -> bool:
    """Whether ``value``, given to ``name``, is a credential rather than a placeholder or code."""
    if value.rsplit(".", 1)[-1] == name:
        return False  # `FooKey = module.FooKey`: a re-export
    if kind == "password_assignment":
        return _plausible_password(value, unquoted=unquoted, strict=strict)
    return _plausible_generic(value)


#: Found in the lowercased text; the name around each hit is then judged by `_name_kind`.
_KEYWORD = re.compile(r"pass|pwd|secret|token|key")
_KEYWORD_ANY_CASE = re.compile(r"pass|pwd|secret|token|key", re.IGNORECASE)
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_NAME_REST = re.compile(r"[A-Za-z0-9_.\-]*")
_MAX_NAME = 100

# Each of these is matched right after a secret-sounding name.
#: `` = "value"``, ``": "value"``, ``: 'value'``, `` := "value"``, `` == "value"`` (JSON inside a
#: JSON string has backslash-escaped quotes).
_QUOTED_VALUE = re.compile(
    r"(?:\\?[\"'])?\]?[ \t]*(?::=|=>|==|=|:)[ \t]*(?P<q>\\?[\"'])(?P<val>[^\"'`\\\n]{1,500})(?P=q)"
)
#: ``: value"`` inside a quoted header argument: ``-H "x-api-key: value"``.
_HEADER_VALUE = re.compile(r"[ \t]*:[ \t]*(?P<val>[A-Za-z0-9._~+/\-]{8,}=*)(?=\\?[\"'])")
#: ``=value`` / ``: value`` that ends its line (``.env``, ``env``, YAML, INI); lines may be
#: ``\n``-escaped; a trailing ``# comment`` is allowed.
_LINE_VALUE = re.compile(
    r"[ \t]*[=:][ \t]*(?P<val>[^\s\"'`\\\[\]{}()<>,;]+)(?:[ \t]+#[^\n]*)?[ \t]*(?=\r?\n|\r?\Z|\\r|\\n)"
)
#: What may precede the name on such a line: a tool-render header, a line number (``cat -n``, the
#: Read tool's ``12→``), a ``grep -n`` location, ``export``/``set``/``env``, a YAML/diff marker.
_LINE_PREFIX = re.compile(
    r"(?:\[tool_[a-z]+[^\]\n]*\][ \t]*)?(?:[ \t]*\d+(?:→|\t|:|\|)|[^\s:=\"']+:\d+:)?"
    r"[ \t]*(?:(?:export|set|env)[ \t]+|[-+][ \t]*)?",
    re.IGNORECASE,
)
#: ``=value`` as a shell word or query parameter: ``PGPASSWORD=x psql``, ``-e TOKEN=x``, ``?token=x&``.
_WORD_VALUE = re.compile(r"=(?P<val>[^\s\"'`\\\[\]{}()<>,;&|#]+)(?=[\s\"'`;&|)},\\#]|\Z)")
_WORD_LEADS = frozenset(" \t\r\n;&|(\"'?,{")
#: `` value`` / ``=value`` after a ``--flag`` (not the next ``--flag``).
_FLAG_VALUE = re.compile(r"(?:=|[ \t]+)(?P<q>[\"']?)(?P<val>[^\s\"'`;&|\\\-][^\s\"'`;&|\\]*)(?P=q)")
#: Kubernetes ``env:`` entries: ``- name: DB_PASSWORD`` then ``value: hunter2`` on the next line.
_K8S_ENV = re.compile(
    r"name:[ \t]*[\"']?(?P<name>[A-Za-z0-9_.\-]+)[\"']?[ \t]*\r?\n[ \t]*value:[ \t]*"
    r"(?P<q>[\"']?)(?P<val>[^\s\"'#]+)(?P=q)[ \t]*(?=\r?\n|\r?\Z)"
)


#: How far back a line start is looked for: a line prefix (tool header, line number, grep location)
#: is short, and an unbounded search per name would make a long single line quadratic.
_MAX_LINE_PREFIX = 200


def _line_start(text: str, pos: int) -> int | None:
    """Start of the line holding ``pos`` (a JSON-escaped ``\\n`` counts as a line break), or None
    if it is further back than any line prefix could reach."""
    lo = max(0, pos - _MAX_LINE_PREFIX)
    real = text.rfind("\n", lo, pos)
    escaped = text.rfind("\\n", lo, pos)
    best = max(real + 1 if real >= 0 else -1, escaped + 2 if escaped >= 0 else -1)
    if best >= 0:
        return best
    return 0 if lo == 0 else None


def _after_escape(text: str, pos: int) -> bool:
    """``text[pos]`` ends a JSON escape (``\\n``, ``\\t``, ``\\r``): a line break, not part of a name."""
    return pos > 0 and text[pos] in "ntr" and text[pos - 1] == "\\"


def _value_after_name(text: str, start: int, end: int, kind: str) -> _Span | None:
    """The secret given to the name ``text[start:end]``, if any, in the first syntax that fits."""
    name = text[start:end]
    m = _QUOTED_VALUE.match(text, end)
    if m:
        ok = _value_ok(kind, m["val"], name, unquoted=False)
        return _Span(m.start("val"), m.end("val"), kind, _P_ASSIGN) if ok else None
    m = _HEADER_VALUE.match(text, end)
    if m and _value_ok(kind, m["val"], name, unquoted=True):
        return _Span(m.start("val"), m.end("val"), kind, _P_ASSIGN)
    if text.startswith("--", start):
        m = _FLAG_VALUE.match(text, end)
        if m and _value_ok(kind, m["val"], name, unquoted=True, strict=True):
            return _Span(m.start("val"), m.end("val"), kind, _P_ASSIGN)
        return None
    line_start = _line_start(text, start)
    if line_start is not None and _LINE_PREFIX.fullmatch(text, line_start, start):
        m = _LINE_VALUE.match(text, end)
        if m and _value_ok(kind, m["val"], name, unquoted=True):
            return _Span(m.start("val"), m.end("val"), kind, _P_ASSIGN)
    if start == 0 or text[start - 1] in _WORD_LEADS or _after_escape(text, start - 1):
        m = _WORD_VALUE.match(text, end)
        if m and _value_ok(kind, m["val"], name, unquoted=True):
            return _Span(m.start("val"), m.end("val"), kind, _P_ASSIGN)
    return None


def _assignment_spans(text: str, lowered: str) -> Iterator[_Span]:
    """Values given to secret-sounding names, in the syntaxes coding agents print."""
    # `str.lower` keeps positions only if no character lowercases to several (rare, e.g. 'İ').
    hits = _KEYWORD.finditer(lowered) if len(lowered) == len(text) else _KEYWORD_ANY_CASE.finditer(text)
    covered = 0  # end of the last name examined: later keywords inside it are the same name
    for hit in hits:
        if hit.start() < covered:
            continue
        start = hit.start()
        while start > 0 and text[start - 1] in _NAME_CHARS and not _after_escape(text, start - 1):
            start -= 1
        rest = _NAME_REST.match(text, hit.end())
        end = covered = rest.end() if rest else hit.end()
        if end - start > _MAX_NAME:
            continue  # not a variable name but a long run of identifier characters
        kind = _name_kind(text[start:end])
        if kind is not None:
            span = _value_after_name(text, start, end, kind)
            if span is not None:
                yield span
    if "name:" in text:
        for m in _K8S_ENV.finditer(text):
            name = m["name"]
            kind = _name_kind(name)
            if kind is not None and _value_ok(kind, m["val"], name, unquoted=True):
                yield _Span(m.start("val"), m.end("val"), kind, _P_ASSIGN)


#: ``<label>:`` ending a line, then a value alone on the next line (``Your new API token:\n  <value>``).
_LABELLED_NEXT_LINE = re.compile(r":[ \t]*\r?\n[ \t]*(?P<val>[A-Za-z0-9+/=_\-.~]{20,200})[ \t]*(?=\r?\n|\Z)")
#: The label must name a credential (as a word): ``token``, ``API key``, ``secret``, ``password``...
_CREDENTIAL_LABEL = re.compile(
    r"\b(?:api[ _-]?key|access[ _-]?key|secret[ _-]?key|private[ _-]?key|token|secret|password"
    r"|passphrase)s?\b"
)


def _next_line_spans(text: str, lowered: str) -> Iterator[_Span]:
    """A high-entropy value alone on the line after a label naming a credential.

    Entropy is what decides here (detect-secrets' base64 limit), and only because the label already says
    "credential": the same string without such a label (a digest, an image chunk) is never touched.
    """
    if ":" not in text:
        return
    for m in _LABELLED_NEXT_LINE.finditer(text):
        line_start = text.rfind("\n", max(0, m.start() - 80), m.start()) + 1
        label = lowered[max(line_start, m.start() - 80) : m.start()]
        if _CREDENTIAL_LABEL.search(label) and _high_entropy(m["val"]):
            yield _Span(m.start("val"), m.end("val"), "secret_assignment", _P_LOOSE)
