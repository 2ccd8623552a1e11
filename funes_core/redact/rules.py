"""The pattern rules: one compiled pattern per secret format, the vendor formats of ``secret_formats.toml``.

Each rule names a kind, the group of its pattern that is the secret, the value judgement that must
accept it (:mod:`funes_core.redact.judge`) and the cheap gate that keeps it from running on text
that cannot hold it. The table is data in code: adding a format is adding one ``_Rule`` (or one
entry of the TOML file, for a format that needs no code).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from detect_secrets.plugins.aws import AWSKeyDetector
from detect_secrets.plugins.basic_auth import BasicAuthDetector
from detect_secrets.plugins.discord import DiscordBotTokenDetector
from detect_secrets.plugins.github_token import GitHubTokenDetector
from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
from detect_secrets.plugins.mailchimp import MailchimpDetector
from detect_secrets.plugins.openai import OpenAIDetector
from detect_secrets.plugins.pypi_token import PypiTokenDetector
from detect_secrets.plugins.sendgrid import SendGridDetector
from detect_secrets.plugins.slack import SlackDetector
from detect_secrets.plugins.square_oauth import SquareOAuthDetector
from detect_secrets.plugins.stripe import StripeDetector
from detect_secrets.plugins.telegram_token import TelegramBotTokenDetector

from funes_core.redact.judge import (
    _aws_bare_secret_ok,
    _aws_secret_ok,
    _bearer_ok,
    _has_digit_and_random,
    _has_mixed_tail,
    _is_b64_private_key,
    _is_b64_userpass,
    _is_jwt,
    _is_placeholder,
    _looks_random,
    _mixed_token,
    _not_placeholder,
    _plausible_unquoted_password,
    _url_password_ok,
)

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
