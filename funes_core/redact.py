"""Secret redaction for transcript text, applied at index time. Pure, deterministic, no I/O.

Why this exists: a coding agent's history is full of credentials it printed or typed (``env``
dumps, ``cat .env``, ``curl -H "Authorization: ..."``, git remotes with tokens, JSON configs).
Whatever is indexed is kept verbatim and can be recalled into another session, so secrets are
replaced before a block is stored. The opposite failure matters as much: the text is someone's
coding history, and blanking git SHAs, digests, UUIDs or the word "password" in prose would destroy
it. So every rule looks for a *specific* shape (a vendor prefix, an assignment to a secret-sounding
name, a credential header) and refuses values that are plainly placeholders (``<your-token>``,
``${API_KEY}``, ``$TOKEN``, ``****``, ``xxx``, ``your-api-key-here``) or code
(``password=args.password``, ``token: str``). There is deliberately no free-standing "high entropy
string" rule: it cannot tell a leaked key from a sha256 digest or a base64 blob. Entropy (measured
the way detect-secrets' ``Base64HighEntropyString`` measures it) is consulted only where the
context already says "credential": a 40-character AWS secret near its key id (same CSV or table
row, or the next two lines), or a value alone on the line after a label naming a credential
(``Your new API token:``). Hex strings and UUIDs never count as high entropy.

JSON writers that escape ``/`` (PHP, some JavaScript serialisers) write ``postgres:\\/\\/user:pw@host``
and split a base64 secret at every ``/``. Text holding such escapes is scanned through a view with
them undone, and each span found is mapped back to the original text, so every rule sees them.

Only the secret value is replaced, by ``[REDACTED:<kind>]``, so ``export GITHUB_TOKEN=ghp_...``
becomes ``export GITHUB_TOKEN=[REDACTED:github_token]`` and stays readable and searchable. No rule
matches a marker, so redacting twice changes nothing (idempotence).

Where detect-secrets (1.5) already has a precise regex it is reused: the ``denylist`` patterns of
its plugin *classes* are read directly (AWS key ids, AWS secrets near an AWS-ish name, GitHub,
GitLab, legacy OpenAI, Slack, Stripe, SendGrid, PyPI, Square, Mailchimp, Telegram, Discord,
credentials in URLs), its JWT validator decides whether an ``eyJ...`` string really is a JWT, and
its base64 high-entropy plugin measures entropy (an instance of it holds only a charset and a
limit). Its scanning entry points (``scan_line``, settings, plugin registry, baselines) are not
used: they mutate process-global settings, and ``analyze_line`` may attempt network verification.
Class attributes need no config, and a pattern gives a *span*, so exactly the secret is replaced.

Speed: this runs on every indexed block. Each pattern either starts with a literal (which the
regex engine finds with a fast substring search) or is gated by a cheap substring test on the
lowercased text; secret-sounding names are found by one keyword scan, then examined only where a
keyword sits in a secret-like name. Every scan is bounded so that hostile or degenerate input (a
megabyte of ``sk-sk-sk-...``, many ``BEGIN`` lines without ``END``) stays linear.

Kinds (stable; counted per chunk):

=====================  ==================================================================
kind                   what
=====================  ==================================================================
private_key            PEM/OpenSSH/PGP/SSH2 private-key block, whole (also with
                       ``\\n``-escaped newlines inside JSON; a truncated block up to the end
                       of its base64 body); PuTTY private lines; base64-encoded PEM
                       (kubeconfig ``client-key-data``)
aws_access_key         AWS access key id (``AKIA...``, ``ASIA...``)
aws_secret_key         AWS secret access key next to an AWS-ish name, or near its key id
aws_session_token      AWS session token assigned to ``aws_session_token``/``SessionToken``
github_token           ``ghp_``/``gho_``/``ghu_``/``ghs_``/``ghr_`` and ``github_pat_`` tokens
gitlab_token           ``glpat-`` and the other GitLab token prefixes
openai_key             ``sk-...``, ``sk-proj-...``, ``sk-svcacct-...``, ``sk-admin-...``
anthropic_key          ``sk-ant-...``
hf_token               Hugging Face ``hf_...``
slack_token            ``xox[abposre]-...`` and ``xapp-...``
slack_webhook          ``https://hooks.slack.com/services/...``
stripe_key             ``sk_live_``/``rk_live_``
google_api_key         ``AIza...``
google_client_secret   ``GOCSPX-...``
sendgrid_key           ``SG.xxx.yyy``
pypi_token             ``pypi-AgEIcHlwaS5vcmc...``
npm_token              ``npm_...`` and ``.npmrc`` ``_authToken=`` values
telegram_token         a Telegram bot token ``<bot id>:<35 chars>`` (detect-secrets' pattern)
discord_token          a Discord bot token (detect-secrets' pattern, mixed character classes)
square_secret          ``sq0csp-...``
mailchimp_key          ``<32 hex>-usNN``
azure_key              ``AccountKey=``/``SharedAccessKey=`` in Azure connection strings
(vendor kinds)          the formats detect-secrets has no detector for, one rule each in the
                       data file ``secret_formats.toml`` beside this module (Azure SAS and
                       client secrets, Google OAuth tokens, FCM, DigitalOcean, Databricks,
                       Mailgun, Discord webhooks, Okta, age keys, Docker, Vault, Grafana, ...;
                       ``aws configure set`` values; a GitHub token glued to a name by ``_``):
                       see :data:`FORMAT_KINDS`
jwt                    a JSON Web Token whose header and payload decode to JSON
bearer_token           ``Authorization: Bearer|Token|Bot <value>``; a bare random
                       ``Bearer <value>``
basic_auth             ``Authorization: Basic <b64>``, ``curl -u user:pass``, docker's
                       ``"auth": "<b64 user:pass>"``
api_key_header         value of a credential header (``x-api-key``, ``private-token``, ...)
url_credentials        the password in ``scheme://user:password@host``
password_assignment    a value given to a password-like name (``DB_PASSWORD=...``,
                       ``"password": "..."``, ``--password ...``, ``docker login -p``,
                       ``mysql -p...``, ``.netrc``)
secret_assignment      a value given to another secret-like name (``*_TOKEN``, ``*_SECRET``,
                       ``*_API_KEY``, ``*_PRIVATE_KEY``, ``*_ACCESS_KEY``, ...), or a
                       high-entropy value alone on the line after a credential label
=====================  ==================================================================

When rules overlap, the longest span wins (it hides the most); on a tie the more specific kind wins,
so ``GITHUB_TOKEN=ghp_...`` counts as ``github_token``, not ``secret_assignment``.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import functools
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from detect_secrets.plugins.aws import AWSKeyDetector
from detect_secrets.plugins.basic_auth import BasicAuthDetector
from detect_secrets.plugins.discord import DiscordBotTokenDetector
from detect_secrets.plugins.github_token import GitHubTokenDetector
from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString
from detect_secrets.plugins.jwt import JwtTokenDetector
from detect_secrets.plugins.mailchimp import MailchimpDetector
from detect_secrets.plugins.openai import OpenAIDetector
from detect_secrets.plugins.pypi_token import PypiTokenDetector
from detect_secrets.plugins.sendgrid import SendGridDetector
from detect_secrets.plugins.slack import SlackDetector
from detect_secrets.plugins.square_oauth import SquareOAuthDetector
from detect_secrets.plugins.stripe import StripeDetector
from detect_secrets.plugins.telegram_token import TelegramBotTokenDetector

__all__ = ["FORMAT_KINDS", "KINDS", "redact"]

_BUILTIN_KINDS: frozenset[str] = frozenset(
    {
        "private_key",
        "aws_access_key",
        "aws_secret_key",
        "aws_session_token",
        "github_token",
        "gitlab_token",
        "openai_key",
        "anthropic_key",
        "hf_token",
        "slack_token",
        "slack_webhook",
        "stripe_key",
        "google_api_key",
        "google_client_secret",
        "sendgrid_key",
        "pypi_token",
        "npm_token",
        "telegram_token",
        "discord_token",
        "square_secret",
        "mailchimp_key",
        "azure_key",
        "jwt",
        "bearer_token",
        "basic_auth",
        "api_key_header",
        "url_credentials",
        "password_assignment",
        "secret_assignment",
    }
)

# Tie-break between rules matching the very same span: vendor formats beat context rules, which
# beat the generic "assigned to a secret-sounding name" rules.
_P_FORMAT = 30
_P_AWS_CONTEXT = 25
_P_HEADER = 20
_P_LOOSE = 15
_P_ASSIGN = 10


@dataclass(frozen=True, slots=True)
class _Span:
    start: int
    end: int
    kind: str
    priority: int


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


# ---------------------------------------------------------------------------------------------
# Pattern rules.
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Rule:
    """A compiled pattern whose group ``group`` is the secret.

    ``triggers``: lowercase substrings; when given, the pattern runs only if one occurs in the
    lowercased text. They gate the patterns the regex engine cannot find by a fast literal search
    (case-insensitive ones, ones starting with a class or an alternation), which it would otherwise
    try at every position. ``not_after``: when given, the match must not follow a letter, a digit
    or one of these characters; checked here rather than with a leading look-behind, which would
    also disable the literal search.
    """

    kind: str
    pattern: re.Pattern[str]
    group: int | str = 0
    check: Callable[[str], bool] | None = None
    priority: int = _P_FORMAT
    triggers: tuple[str, ...] = ()
    not_after: str | None = None
    #: a cheap pattern (starting with a literal) that must match first, for a pattern that has no
    #: literal to find and no substring to gate it (``secret_formats.toml``'s ``prefilter``)
    gate: re.Pattern[str] | None = None

    def find(self, text: str, lowered: str, out: list[_Span]) -> None:
        """Append this rule's spans in ``text`` to ``out``."""
        if self.triggers and not any(t in lowered for t in self.triggers):
            return
        if self.gate is not None and self.gate.search(text) is None:
            return
        m = self.pattern.search(text)  # the common case: one fast scan, no match
        while m is not None:
            start = m.start()
            value = m[self.group]
            if (
                value
                and (
                    self.not_after is None
                    or start == 0
                    or not (text[start - 1].isalnum() or text[start - 1] in self.not_after)
                )
                and (self.check is None or self.check(value))
            ):
                out.append(_Span(m.start(self.group), m.end(self.group), self.kind, self.priority))
            m = self.pattern.search(text, m.end() if m.end() > start else start + 1)


def _ds(pattern: re.Pattern[str], *, guard_start: bool = False) -> re.Pattern[str]:
    """A detect-secrets pattern that must also not run on into letters or digits.

    detect-secrets scans source lines and only reports values; here the match must not sit inside
    a longer identifier or base64 blob. The trailing side is a look-ahead. The leading side is
    ``_Rule.not_after`` for fixed-length patterns (a leading look-behind would disable the fast
    literal search); ``guard_start`` puts it in the pattern instead, for patterns with an unbounded
    repeat, so that a start inside a long run is refused at once rather than scanned (quadratic).
    """
    lead = r"(?<![A-Za-z0-9_\-])" if guard_start else ""
    return re.compile(rf"{lead}(?:{pattern.pattern})(?![A-Za-z0-9])", pattern.flags)


def _before_host(pattern: re.Pattern[str]) -> re.Pattern[str]:
    """A ``user:password@`` pattern that must be followed by a host (not ``org:repo@/path``)."""
    return re.compile(rf"(?:{pattern.pattern})(?=[A-Za-z0-9\[])", pattern.flags)


def _token(prefix: str, rest: str, flags: int = 0) -> re.Pattern[str]:
    """``prefix`` + ``rest``, where ``prefix`` (fixed width) must not continue an identifier.

    The check is a look-behind placed *after* the literal prefix: the engine still finds
    candidates by a fast substring search, and a prefix preceded by a letter, digit, ``_`` or ``-``
    is refused before ``rest`` is tried (so ``sk-sk-sk-...`` stays linear).
    """
    return re.compile(rf"{prefix}(?<![A-Za-z0-9_\-]{prefix}){rest}(?![A-Za-z0-9_\-])", flags)


_TOKEN_CHARS = "_-"
_NL = r"(?:\r?\n|\\r\\n|\\n)"  # a newline, real or JSON-escaped
_AUTH_PREFIX = r"(?:proxy-)?authorization\\?[\"']?[ \t]*[:=][ \t]*\\?[\"']?[ \t]*"
#: A command line up to an option: bounded, so a long line with many command names stays linear.
_ARGS = r"\b[^\n]{0,300}?[ \t]"

_CHECKS: dict[str, Callable[[str], bool] | None] = {
    "any": None,
    "mixed2": _mixed_token(2),
    "mixed3": _mixed_token(3),
    "random": lambda v: _looks_random(v, 16) and not _is_placeholder(v),
}


def _format_rules() -> tuple[_Rule, ...]:
    """The rules of ``secret_formats.toml`` (see its header): vendor formats kept as data, not code."""
    import tomllib
    from importlib import resources

    raw = resources.files("funes_core").joinpath("secret_formats.toml").read_text(encoding="utf-8")
    rules: list[_Rule] = []
    for entry in tomllib.loads(raw)["format"]:
        check = _CHECKS[entry["check"]]
        if "pattern" in entry:
            rules.append(
                _Rule(
                    entry["kind"],
                    re.compile(entry["pattern"]),
                    group="val",
                    check=check,
                    triggers=tuple(entry.get("triggers", ())),
                    gate=re.compile(entry["prefilter"]) if "prefilter" in entry else None,
                )
            )
            continue
        prefix, body = entry["prefix"], entry["body"]
        before = r"A-Za-z0-9\-" if entry.get("joins_underscore") else r"A-Za-z0-9_\-"
        pattern = re.compile(rf"{prefix}(?<![{before}]{prefix}){body}(?![A-Za-z0-9_\-])")
        rules.append(_Rule(entry["kind"], pattern, check=check))
    return tuple(rules)


_FORMAT_RULES = _format_rules()
#: The kinds of ``secret_formats.toml``'s rules.
FORMAT_KINDS: frozenset[str] = frozenset(r.kind for r in _FORMAT_RULES)
KINDS: frozenset[str] = _BUILTIN_KINDS | FORMAT_KINDS
"""Every kind :func:`redact` can report (see the table in the module docstring)."""

_RULES: tuple[_Rule, ...] = (
    *_FORMAT_RULES,
    # Private keys: the whole block including the body; or, when the END line is missing
    # (truncated output), the header plus the base64 lines that follow. The body cannot contain
    # "-----", so a BEGIN without an END costs one scan to the next marker, not to the text's end.
    _Rule(
        "private_key",
        re.compile(
            r"----[- ]BEGIN (?P<label>[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?) ?-{4,5}"
            r"(?:(?:[A-Za-z0-9+/=\s\\:,.]|-(?!----))*----[- ]END (?P=label) ?-{4,5}"
            r"|(?:" + _NL + r"+(?:[A-Za-z0-9+/=]{16,}|(?:Proc-Type|DEK-Info|Comment):[^\r\n\\]*)"
            r"(?=\r?\n|\\r|\\n|$|[\"']))+)"
        ),
    ),
    _Rule(
        "private_key",
        re.compile(r"Private-Lines:[ \t]*\d+(?:" + _NL + r"[A-Za-z0-9+/=]{16,}(?=\r?\n|\\r|\\n|$))+"),
    ),
    _Rule("private_key", _token("LS0tLS1CRUdJTi", r"[A-Za-z0-9+/]*={0,2}"), check=_is_b64_private_key),
    # Vendor token formats.
    _Rule("anthropic_key", _token("sk-ant-", r"[a-z0-9]{2,10}-[A-Za-z0-9_\-]{20,}"), check=_mixed_token(2)),
    _Rule(
        "openai_key",
        _token("sk-", r"(?!ant-)(?:(?:proj|svcacct|admin)-)?[A-Za-z0-9_\-]{20,}"),
        check=_mixed_token(3),
    ),
    _Rule("github_token", _token("gh[pousr]_", r"[A-Za-z0-9]{36,251}"), check=_mixed_token(2)),
    _Rule("github_token", _token("github_pat_", r"[A-Za-z0-9_]{22,251}"), check=_mixed_token(2)),
    _Rule("hf_token", _token("hf_", r"[A-Za-z0-9]{30,}"), check=_mixed_token(2)),
    _Rule(
        "slack_token",
        _token("x(?:ox[abposre]|app)-", r"(?:[A-Za-z0-9]+-)*[A-Za-z0-9]{6,}"),
        check=_has_digit_and_random,
    ),
    _Rule(
        "stripe_key", _token("[rs]k_live_", r"[A-Za-z0-9]{20,}"), check=_not_placeholder, triggers=("_live_",)
    ),
    _Rule("google_api_key", _token("AIza", r"[A-Za-z0-9_\-]{35}"), check=_not_placeholder),
    _Rule("google_client_secret", _token("GOCSPX-", r"[A-Za-z0-9_\-]{24,}"), check=_not_placeholder),
    _Rule("npm_token", _token("npm_", r"[A-Za-z0-9]{36}"), check=_mixed_token(2)),
    _Rule(
        "npm_token",
        re.compile(r"_authToken[ \t]*=[ \t]*[\"']?(?P<val>[^\s\"'`\\]+)"),
        group="val",
        check=_not_placeholder,
        priority=_P_HEADER,
    ),
    _Rule(
        "azure_key",
        re.compile(r"(?:AccountKey|SharedAccessKey)=(?P<val>[A-Za-z0-9+/]{20,}={0,2})"),
        group="val",
        check=_not_placeholder,
        triggers=("accountkey=", "sharedaccesskey="),
    ),
    _Rule(
        "jwt",
        re.compile(
            r"eyJ(?<![A-Za-z0-9_\-.]eyJ)[A-Za-z0-9_\-]{4,}={0,2}\.eyJ[A-Za-z0-9_\-]{4,}={0,2}\.[A-Za-z0-9_\-]*={0,2}"
        ),
        check=_is_jwt,
    ),
    # AWS secrets, recognised by the name they are given.
    _Rule(
        "aws_secret_key",
        re.compile(
            r"(?:aws_?)?secret_?access_?key\\?[\"']?[ \t]*[:=][ \t]*\\?[\"']?"
            r"(?P<val>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])",
            re.IGNORECASE,
        ),
        group="val",
        check=_aws_secret_ok,
        priority=_P_AWS_CONTEXT,
        triggers=("secret_access_key", "secretaccesskey", "secret_accesskey"),
        not_after="",
    ),
    _Rule(
        "aws_session_token",
        re.compile(
            r"(?:aws_?)?session_?token\\?[\"']?[ \t]*[:=][ \t]*\\?[\"']?"
            r"(?P<val>[A-Za-z0-9/+]{100,}={0,2})(?![A-Za-z0-9/+=])",
            re.IGNORECASE,
        ),
        group="val",
        check=_not_placeholder,
        priority=_P_AWS_CONTEXT,
        triggers=("session_token", "sessiontoken"),
        not_after="",
    ),
    # Credential headers, commands and URLs.
    _Rule(
        "bearer_token",
        re.compile(
            _AUTH_PREFIX + r"(?:bearer|token|bot)[ \t]+(?P<val>[A-Za-z0-9._~+/\-]{8,}=*)", re.IGNORECASE
        ),
        group="val",
        check=_bearer_ok,
        priority=_P_HEADER,
        triggers=("authorization",),
        not_after="_-",
    ),
    _Rule(
        "basic_auth",
        re.compile(
            _AUTH_PREFIX + r"basic[ \t]+(?P<val>[A-Za-z0-9+/]{4,}={0,2})(?![A-Za-z0-9+/=])", re.IGNORECASE
        ),
        group="val",
        check=_is_b64_userpass,
        priority=_P_HEADER,
        triggers=("authorization",),
        not_after="_-",
    ),
    _Rule(
        "basic_auth",
        re.compile(r"auth\\?\"[ \t]*:[ \t]*\\?\"(?P<val>[A-Za-z0-9+/]{6,}={0,2})\\?\""),
        group="val",
        check=_is_b64_userpass,
        priority=_P_HEADER,
        not_after="_-",
    ),
    _Rule(
        "basic_auth",
        re.compile(
            r"curl"
            + _ARGS
            + r"(?:-u|--user)[ \t]*(?P<q>[\"']?)[^\s:\"'$]+:(?P<val>[^\s\"'`@,;]+)(?P=q)(?=\s|$)"
        ),
        group="val",
        check=_plausible_unquoted_password,
        priority=_P_HEADER,
        not_after=_TOKEN_CHARS,
    ),
    _Rule(
        "bearer_token",
        re.compile(r"(?<![\w-])bearer[ \t]+(?P<val>[A-Za-z0-9._~+/\-]{20,}=*)", re.IGNORECASE),
        group="val",
        check=_has_digit_and_random,
        priority=_P_LOOSE,
        triggers=("bearer",),
    ),
    _Rule(
        "url_credentials",
        re.compile(r"://:(?P<val>[^\s:/?#@\[\]\"'<>`]+)@(?=[A-Za-z0-9\[])"),
        group="val",
        check=_url_password_ok,
        priority=_P_HEADER,
    ),
    # Commands whose -p (redis-cli: -a) means password, and .netrc one-liners.
    _Rule(
        "password_assignment",
        re.compile(
            r"(?:docker[ \t]+login"
            + _ARGS
            + r"-p(?:=|[ \t]+)|sshpass[ \t]+-p[ \t]*|redis-cli"
            + _ARGS
            + r"-a[ \t]+"
            r"|mysql(?:dump|admin)?" + _ARGS + r"-p)(?P<q>[\"']?)(?P<val>[^\s\"'`;&|\\]+)(?P=q)"
        ),
        group="val",
        check=_plausible_unquoted_password,
        priority=_P_ASSIGN,
        triggers=("docker", "sshpass", "redis-cli", "mysql"),
        not_after=_TOKEN_CHARS,
    ),
    _Rule(
        "password_assignment",
        re.compile(r"machine[ \t]+\S+[ \t]+login[ \t]+\S+[ \t]+password[ \t]+(?P<val>[^\s\"'`]+)"),
        group="val",
        check=_plausible_unquoted_password,
        priority=_P_ASSIGN,
        not_after=_TOKEN_CHARS,
    ),
    # detect-secrets' vendor patterns (class attributes; see the module docstring).
    _Rule("url_credentials", _before_host(BasicAuthDetector.denylist[0]), 1, _url_password_ok, _P_HEADER),
    _Rule("aws_access_key", _ds(AWSKeyDetector.denylist[0]), check=_not_placeholder, not_after="/+"),
    _Rule(
        "aws_secret_key",
        AWSKeyDetector.denylist[1],
        1,
        _aws_secret_ok,
        _P_AWS_CONTEXT,
        triggers=("aws",),
    ),
    _Rule(
        "github_token",
        _ds(GitHubTokenDetector.denylist[0]),
        check=_mixed_token(2),
        not_after=_TOKEN_CHARS,
    ),
    *(
        _Rule("gitlab_token", _ds(p), check=_mixed_token(2), not_after=_TOKEN_CHARS)
        for p in GitLabTokenDetector.denylist
    ),
    _Rule(
        "openai_key",
        _ds(OpenAIDetector.denylist[0], guard_start=True),
        check=_not_placeholder,
        triggers=("t3blbkfj",),
    ),
    _Rule(
        "slack_token",
        _ds(SlackDetector.denylist[0], guard_start=True),
        check=_has_digit_and_random,
        triggers=("xox",),
    ),
    _Rule("slack_webhook", SlackDetector.denylist[1], check=_not_placeholder, triggers=("hooks.slack.com",)),
    _Rule(
        "stripe_key",
        _ds(StripeDetector.denylist[0]),
        check=_not_placeholder,
        triggers=("_live_",),
        not_after=_TOKEN_CHARS,
    ),
    _Rule("sendgrid_key", _ds(SendGridDetector.denylist[0]), check=_not_placeholder, not_after=_TOKEN_CHARS),
    *(
        _Rule("pypi_token", _ds(p), check=_not_placeholder, not_after=_TOKEN_CHARS)
        for p in PypiTokenDetector.denylist
    ),
    _Rule(
        "square_secret", _ds(SquareOAuthDetector.denylist[0]), check=_not_placeholder, not_after=_TOKEN_CHARS
    ),
    _Rule(
        "mailchimp_key",
        _ds(MailchimpDetector.denylist[0]),
        check=_not_placeholder,
        triggers=("-us",),
        not_after=_TOKEN_CHARS,
    ),
    _Rule(
        "telegram_token",
        # detect-secrets' pattern; the token follows ``/bot`` in API URLs, so only a digit may not precede it.
        re.compile(rf"(?<![0-9])(?:{TelegramBotTokenDetector.denylist[0].pattern})(?![A-Za-z0-9_\-])"),
        check=_has_mixed_tail,
        triggers=(":aa",),
    ),
    _Rule("discord_token", _ds(DiscordBotTokenDetector.denylist[0], guard_start=True), check=_mixed_token(3)),
    # An AWS secret written without its name, near its key id: on the same row of a CSV or a table, or
    # on one of the next two lines (``aws iam create-access-key`` tables, a pasted key pair).
    _Rule(
        "aws_secret_key",
        re.compile(
            r"(?:AKIA|ASIA)[A-Z2-7]{16}(?![A-Za-z0-9])[^\n]{0,80}?(?:\r?\n[^\n]{0,80}?){0,2}?"
            r"(?<![A-Za-z0-9/+=])(?P<val>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"
        ),
        group="val",
        check=_aws_bare_secret_ok,
        priority=_P_AWS_CONTEXT,
        triggers=("akia", "asia"),
    ),
)


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


# ---------------------------------------------------------------------------------------------


def _choose(spans: list[_Span]) -> list[_Span]:
    """Non-overlapping spans, longest first, then most specific; returned in text order."""
    chosen: list[_Span] = []  # kept sorted by start
    starts: list[int] = []
    for span in sorted(spans, key=lambda s: (s.start - s.end, -s.priority, s.start, s.kind)):
        i = bisect.bisect_right(starts, span.start)
        if i > 0 and chosen[i - 1].end > span.start:
            continue
        if i < len(chosen) and chosen[i].start < span.end:
            continue
        chosen.insert(i, span)
        starts.insert(i, span.start)
    return chosen


#: JSON writers that escape ``/`` (PHP's json_encode, some JavaScript serialisers) turn
#: ``https://user:pw@host`` into ``https:\\/\\/user:pw@host`` and split a base64 secret at every ``/``.
_ESCAPED_SLASH = re.compile(r"\\+/|\\u002[fF]")


def _unescaped_view(text: str) -> tuple[str, list[int]] | None:
    """``text`` with escaped slashes unescaped, and where each of its characters came from.

    ``offsets[i]`` is the index in ``text`` of the first character that produced ``view[i]``;
    ``offsets[len(view)] == len(text)``. ``None`` when there is nothing to unescape (the fast path).
    """
    if "\\/" not in text and "\\u002" not in text:
        return None
    pieces: list[str] = []
    offsets: list[int] = []
    pos = 0
    for m in _ESCAPED_SLASH.finditer(text):
        pieces.append(text[pos : m.start()])
        offsets.extend(range(pos, m.start()))
        pieces.append("/")
        offsets.append(m.start())
        pos = m.end()
    pieces.append(text[pos:])
    offsets.extend(range(pos, len(text) + 1))
    return "".join(pieces), offsets


def redact(text: str) -> tuple[str, Counter[str]]:
    """Replace every secret in ``text`` with ``[REDACTED:<kind>]``.

    Returns the redacted text and how many secrets of each kind were replaced; for clean text, the
    very same string and an empty Counter. Deterministic, pure and idempotent: the markers it
    writes never match a rule. Text with JSON-escaped slashes is scanned as if they were plain
    (every rule sees ``https://``), and each secret found is replaced in the original text.
    """
    counts: Counter[str] = Counter()
    view = _unescaped_view(text)
    scanned = view[0] if view is not None else text
    lowered = scanned.lower()
    spans: list[_Span] = []
    for rule in _RULES:
        rule.find(scanned, lowered, spans)
    spans.extend(_assignment_spans(scanned, lowered))
    spans.extend(_next_line_spans(scanned, lowered))
    if not spans:
        return text, counts
    if view is not None:
        offsets = view[1]
        spans = [_Span(offsets[s.start], offsets[s.end], s.kind, s.priority) for s in spans]
    pieces: list[str] = []
    pos = 0
    for span in _choose(spans):
        pieces.append(text[pos : span.start])
        pieces.append(f"[REDACTED:{span.kind}]")
        counts[span.kind] += 1
        pos = span.end
    pieces.append(text[pos:])
    return "".join(pieces), counts
