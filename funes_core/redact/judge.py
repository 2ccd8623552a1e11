"""Value judgements: whether a candidate a rule found is a real secret or a placeholder, code, a path.

A rule finds a *candidate* by its shape; these predicates decide on its value, and they are what
keeps false positives down (``<your-token>``, ``${API_KEY}``, ``args.password``, ``token: str``, a
sha256 digest). Apart from the rules so that each can be read, and tested, on its own.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable

from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString
from detect_secrets.plugins.jwt import JwtTokenDetector

# ---------------------------------------------------------------------------------------------
# Value judgements. A rule finds a *candidate*; these decide whether it is a real value or a
# placeholder, a variable, a type, a path. They are what keeps false positives down.
# ---------------------------------------------------------------------------------------------

#: Substrings that mark a documentation placeholder or an already-masked value.
_PLACEHOLDER_MARKERS = (
    "example",
    "your",
    "xxxx",
    "****",
    "...",
    "…",
    "placeholder",
    "redacted",
    "changeme",
    "change_me",
    "dummy",
    "replace",
    "insert",
    "<",
    ">",
    "${",
    "{{",
    "$(",
)
#: Leading characters of shell/env references, format strings, masks, YAML tags/anchors, markers.
_PLACEHOLDER_LEADS = frozenset("$%@*!&{[<#")
#: Whole values that are types, literals or status words, not credentials.
_CODEWORDS = frozenset(
    {
        "str",
        "string",
        "bytes",
        "int",
        "integer",
        "number",
        "bool",
        "boolean",
        "any",
        "object",
        "none",
        "null",
        "nil",
        "undefined",
        "true",
        "false",
        "yes",
        "no",
        "on",
        "off",
        "optional",
        "required",
        "secretstr",
        "text",
        "char",
        "varchar",
        "empty",
        "hidden",
        "masked",
        "sensitive",
        "encrypted",
        "default",
        "unset",
        "missing",
        "invalid",
        "changed",
        "updated",
        "test",
        "todo",
        "tbd",
        "fixme",
        "secret",
        "password",
        "passwd",
        "pass",
        "token",
        "key",
        "self",
        "this",
        "env",
        # metasyntactic values of examples and docs
        "foo",
        "bar",
        "baz",
        "qux",
        "quux",
        "foobar",
        "abc",
        "xyz",
        "sample",
    }
)
_NAME_WORDS = ("pass", "pwd", "secret", "token", "key", "auth", "cred")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]*")
#: ``args.password``, ``os.environ``, ``settings.SECRET_KEY``, ``this.apiKey``: a code reference. Each
#: part is a word-like identifier (lower, UPPER or camelCase; digits only at the end of a word), unlike
#: ``hvs.<random>`` vault tokens or ``abcdef.0123456789abcdef`` kubeadm tokens.
_WORDLIKE = r"(?:[a-z_$][a-z_$]*\d*(?:[A-Z][a-z_$]+\d*)*|[A-Z_$][A-Z0-9_$]*|(?:[A-Z][a-z_$]+\d*)+)"
_CODE_REF = re.compile(rf"{_WORDLIKE}(?:\.{_WORDLIKE})+")
#: ``get_token()``, ``os.getenv("X")``: a call, not a value.
_CALL = re.compile(r"[A-Za-z_$][\w.$]*\(.*\)")
_SNAKE_VAR = re.compile(r"[a-z_][a-z0-9]*(?:_[a-z0-9]+)+")
_CAMEL_WORDS = re.compile(r"[A-Z]?[a-z]+(?:[A-Z][a-z]+)*")
_FILE_EXT = re.compile(
    r"\.(?:pem|key|json|txt|env|crt|cer|p12|pfx|ya?ml|toml|ini|cfg|conf|gpg|asc|pub)$", re.I
)
_HEX = re.compile(r"[0-9a-f]+")


def _is_placeholder(value: str) -> bool:
    """A documentation placeholder, a variable reference or an already-masked value."""
    if not value or value[0] in _PLACEHOLDER_LEADS:
        return True
    low = value.lower()
    if any(marker in low for marker in _PLACEHOLDER_MARKERS):
        return True
    distinct = len(set(low))
    return distinct <= 2 or (len(value) >= 12 and distinct < 6)


def _not_placeholder(value: str) -> bool:
    return not _is_placeholder(value)


def _is_path_or_url(value: str) -> bool:
    return (
        value.startswith(("/", "./", "../", "~/", "file:"))
        or "://" in value
        or (len(value) > 2 and value[1] == ":" and value[2] in "\\/")
        or bool(_FILE_EXT.search(value))
    )


def _names_a_variable(value: str) -> bool:
    """``db_password``, ``OPENAI_API_KEY``, ``apiKey``: the value names where the secret lives."""
    if not _IDENT.fullmatch(value):
        return False
    low = value.lower()
    if not any(word in low for word in _NAME_WORDS):
        return False
    return not any(c.isdigit() for c in value) or "_" in value or "-" in value


def _looks_random(value: str, min_len: int) -> bool:
    """Plausibly machine-generated: long enough, mixed character classes, not an identifier."""
    if len(value) < min_len or len(set(value)) < 6:
        return False
    has_digit = any(c.isdigit() for c in value)
    has_upper = any(c.isupper() for c in value)
    has_lower = any(c.islower() for c in value)
    classes = has_digit + has_upper + has_lower
    if classes < 2:
        symbols = {c for c in value if c in "!@#$%^&*+=~/"}
        if not (classes == 1 and len(symbols) >= 2 and len(value) >= 16):
            return False
    return not (value.isalpha() and _CAMEL_WORDS.fullmatch(value))


def _plausible_generic(value: str) -> bool:
    """A value given to a ``*_TOKEN``/``*_SECRET``/``*_API_KEY`` name that looks like a credential."""
    return (
        not any(c.isspace() for c in value)
        and not _is_placeholder(value)
        and value.lower() not in _CODEWORDS
        and not _names_a_variable(value)
        and not _is_path_or_url(value)
        and not _CODE_REF.fullmatch(value)
        and not _CALL.fullmatch(value)
        and _looks_random(value, 8)
    )


def _plausible_password(value: str, *, unquoted: bool, strict: bool = False) -> bool:
    """A value given to a password-like name.

    Passwords may be short dictionary words (``postgres``), so no randomness is required; code
    and prose shapes are refused instead. ``unquoted`` also refuses variable-looking values
    (``password=db_password``); ``strict`` (after a CLI flag, where prose like "the --password
    option" is common) also refuses lowercase words.
    """
    if len(value) < 3 or any(c.isspace() for c in value):
        return False
    if _is_placeholder(value) or value.lower() in _CODEWORDS or _names_a_variable(value):
        return False
    if _is_path_or_url(value) or _CODE_REF.fullmatch(value) or _CALL.fullmatch(value):
        return False
    if unquoted and _SNAKE_VAR.fullmatch(value):
        return False
    if strict and value.isalpha() and value.islower():
        return False
    return not (value.isdigit() and len(value) < 4)


def _plausible_unquoted_password(value: str) -> bool:
    return _plausible_password(value, unquoted=True)


def _mixed_token(min_classes: int) -> Callable[[str], bool]:
    """A check that the random part of a vendor token mixes digits / upper / lower case.

    Refuses ``ghp_xxxxxxxx...``-style placeholders and long identifiers that merely share a prefix.
    """

    def check(value: str) -> bool:
        body = value[value.find("_") + 1 :] if value.startswith(("hf_", "gh")) else value
        classes = (
            any(c.isdigit() for c in body) + any(c.isupper() for c in body) + any(c.islower() for c in body)
        )
        return classes >= min_classes and not _is_placeholder(value)

    return check


def _has_digit_and_random(value: str) -> bool:
    return any(c.isdigit() for c in value) and _looks_random(value, 20) and not _is_placeholder(value)


def _aws_secret_ok(value: str) -> bool:
    """40 base64 characters, but not a 40-hex git SHA."""
    return not _HEX.fullmatch(value) and _looks_random(value, 40) and not _is_placeholder(value)


#: detect-secrets' base64 high-entropy detector; only its entropy measure is used (an instance touches no
#: global settings). Entropy alone cannot tell a key from a digest, so it is only consulted in a context
#: that already says "credential" (a key id nearby, a label on the line above).
_B64_ENTROPY = Base64HighEntropyString()
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


def _entropy(value: str) -> float:
    entropy: float = _B64_ENTROPY.calculate_shannon_entropy(value)
    return entropy


def _high_entropy(value: str) -> bool:
    """Random enough for a credential by detect-secrets' base64 limit; never hex, a UUID or a placeholder."""
    return (
        not _HEX.fullmatch(value.lower())
        and not _UUID.fullmatch(value)
        and _looks_random(value, 20)
        and not _is_placeholder(value)
        and _entropy(value) >= _B64_ENTROPY.entropy_limit
    )


def _aws_bare_secret_ok(value: str) -> bool:
    """A 40-character AWS secret without its name: mixed classes, high entropy, not a hex digest."""
    return _aws_secret_ok(value) and _entropy(value) >= 4.0


def _has_mixed_tail(value: str) -> bool:
    _, _, tail = value.partition(":")
    return _looks_random(tail, 20) and not _is_placeholder(tail)


def _is_jwt(value: str) -> bool:
    valid: bool = JwtTokenDetector.is_formally_valid(value)
    return valid


def _is_b64_userpass(value: str) -> bool:
    """``base64("user:password")``, the shape of Basic auth and of docker's ``"auth"``."""
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return False
    user, sep, password = decoded.partition(":")
    return bool(sep and user and password) and decoded.isprintable()


def _is_b64_private_key(value: str) -> bool:
    head = value[: min(len(value), 96) // 4 * 4]
    try:
        return b"PRIVATE KEY" in base64.b64decode(head)
    except binascii.Error:
        return False


def _bearer_ok(value: str) -> bool:
    return _looks_random(value, 8) and not _is_placeholder(value) and not _names_a_variable(value)


def _url_password_ok(value: str) -> bool:
    return (
        not _is_placeholder(value)
        and value.lower() not in _CODEWORDS
        and not _names_a_variable(value)
        and not (value.isdigit() and len(value) < 4)
    )
