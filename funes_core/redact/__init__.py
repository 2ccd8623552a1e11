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
                       data file ``secret_formats.toml`` beside this package (Azure SAS and
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

import bisect
import re
from collections import Counter

from funes_core.redact.names import _assignment_spans, _next_line_spans
from funes_core.redact.rules import _RULES, FORMAT_KINDS, KINDS, _Span

__all__ = ["FORMAT_KINDS", "KINDS", "redact"]


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
