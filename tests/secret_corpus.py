# ruff: noqa: E501  (one format a line: a table reads better than wrapped calls)
"""A labelled corpus of secret formats: one realistic line of agent history per format, with its secret.

Used by ``test_secret_corpus.py`` to measure both the index-time redactor and the push gate on the
same formats. Every value is synthetic: generated from a fixed seed in the format's alphabet and
length, most with ``FAKE`` in it where the format allows letters, so none is anyone's key and no
literal key-shaped string sits in the repository (which would trip push protection and scanners).
The probe of issue 29 found 10 of 53 formats reaching the bucket; each of those is here, marked
``probe=True``.
"""

from __future__ import annotations

import base64
import json
import random
import string
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["FORMATS", "Format", "SecretMaker"]

B62 = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
UPPER_ALNUM = string.ascii_uppercase + string.digits
BECH32 = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"


class SecretMaker:
    """Deterministic fake values, each using every character class of its alphabet."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def chars(self, n: int, alphabet: str = B62) -> str:
        classes = [p for p in (str.isdigit, str.isupper, str.islower) if any(p(c) for c in alphabet)]
        while True:
            value = "".join(self.rng.choice(alphabet) for _ in range(n))
            if all(any(p(c) for c in value) for p in classes[:n]):
                return value

    def fake(self, n: int, alphabet: str = B62) -> str:
        """``n`` characters holding ``FAKE`` (or ``fake``) when the alphabet has those letters."""
        word = "FAKE" if "F" in alphabet else "fake" if "f" in alphabet and "k" in alphabet else ""
        if not word or n < 12:
            return self.chars(n, alphabet)
        at = self.rng.randrange(2, n - len(word) - 2)
        return self.chars(at, alphabet) + word + self.chars(n - at - len(word), alphabet)

    def b64(self, nbytes: int) -> str:
        return base64.b64encode(self.rng.randbytes(nbytes)).decode()

    def b64url(self, raw: bytes) -> str:
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")


@dataclass(frozen=True)
class Format:
    """One secret format: its name, the redaction kind expected, and a maker of (text, secret)."""

    name: str
    kind: str
    make: Callable[[SecretMaker], tuple[str, str]]
    probe: bool = False


def _line(template: str, secret: str) -> tuple[str, str]:
    return template.format(s=secret), secret


def _jwt(f: SecretMaker) -> str:
    head = f.b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    body = f.b64url(json.dumps({"sub": f.chars(10), "iat": 1_700_000_000}).encode())
    return f"{head}.{body}.{f.b64url(f.rng.randbytes(32))}"


def _pem(f: SecretMaker, label: str) -> str:
    body = f.b64(400)
    lines = [body[i : i + 64] for i in range(0, len(body), 64)]
    return f"-----BEGIN {label}-----\n" + "\n".join(lines) + f"\n-----END {label}-----"


def _fcm(f: SecretMaker) -> str:
    return f"AAAA{f.chars(7)}:APA91b{f.fake(134, B62 + '-_')}"


FORMATS: tuple[Format, ...] = (
    # --- cloud providers
    Format("AWS access key id", "aws_access_key", lambda f: _line("aws_access_key_id = {s}", "AKIA" + f.chars(16, UPPER_ALNUM[:26] + "234567"))),
    Format("AWS secret access key", "aws_secret_key", lambda f: _line("AWS_SECRET_ACCESS_KEY={s}", f.fake(40, B62 + "/+"))),
    Format("AWS session token", "aws_session_token", lambda f: _line("aws_session_token = {s}", f.fake(300, B62 + "/+"))),
    Format("aws configure set secret", "aws_secret_key", lambda f: _line("$ aws configure set aws_secret_access_key {s}", f.fake(40, B62 + "/+")), probe=True),
    Format("aws configure set session token", "aws_session_token", lambda f: _line("aws configure set aws_session_token {s} --profile ci", f.fake(200, B62 + "/+")), probe=True),
    Format("Azure storage account key", "azure_key", lambda f: _line("DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={s};EndpointSuffix=core.windows.net", f.b64(64))),
    Format("Azure SAS signature", "azure_sas", lambda f: _line("https://acme.blob.core.windows.net/logs?sv=2022-11-02&ss=b&srt=sco&sp=rl&se=2026-01-01T00:00:00Z&sig={s}", f.b64(32).replace("+", "%2B").replace("/", "%2F").replace("=", "%3D")), probe=True),
    Format("Azure AD client secret", "azure_client_secret", lambda f: _line("client_secret: {s}", f.chars(3) + "8Q~" + f.fake(34, B62 + "_~.-"))),
    Format("Google API key", "google_api_key", lambda f: _line("key={s}", "AIza" + f.fake(35, B62 + "_-"))),
    Format("Google OAuth client secret", "google_client_secret", lambda f: _line('"client_secret": "{s}"', "GOCSPX-" + f.fake(28, B62 + "_-"))),
    Format("Google OAuth access token ya29", "google_oauth_token", lambda f: _line("token: {s}", "ya29." + f.fake(150, B62 + "_-")), probe=True),
    Format("Google OAuth refresh token", "google_oauth_token", lambda f: _line("refresh: {s}", "1//0" + f.fake(90, B62 + "_-"))),
    Format("Firebase Cloud Messaging server key", "fcm_server_key", lambda f: _line("FCM server key {s}", _fcm(f)), probe=True),
    Format("DigitalOcean personal token", "digitalocean_token", lambda f: _line("doctl auth init -t {s}", "dop_v1_" + f.chars(64, HEX)), probe=True),
    Format("DigitalOcean OAuth token", "digitalocean_token", lambda f: _line("token {s}", "doo_v1_" + f.chars(64, HEX)), probe=True),
    Format("Databricks token", "databricks_token", lambda f: _line("databricks configure --token {s}", "dapi" + f.chars(32, HEX)), probe=True),
    Format("Alibaba Cloud access key id", "alibaba_access_key", lambda f: _line("access key: {s}", "LTAI" + f.fake(20))),
    # --- code hosting and CI
    Format("GitHub classic token", "github_token", lambda f: _line("export GITHUB_TOKEN={s}", "ghp_" + f.fake(36))),
    Format("GitHub token joined to a tool name", "github_token", lambda f: _line("[tool_use Bash_{s}] ls", "ghp_" + f.fake(36)), probe=True),
    Format("GitHub fine-grained token", "github_token", lambda f: _line("gh auth login --with-token <<< {s}", "github_pat_" + f.fake(82, B62 + "_"))),
    Format("GitHub OAuth token", "github_token", lambda f: _line("oauth_token: {s}", "gho_" + f.fake(36))),
    Format("GitLab personal token", "gitlab_token", lambda f: _line("PRIVATE-TOKEN: {s}", "glpat-" + f.fake(20, B62 + "_-"))),
    Format("Bitbucket / URL credentials", "url_credentials", lambda f: _line("git clone https://dev:{s}@bitbucket.org/acme/app.git", f.fake(24))),
    Format("npm token", "npm_token", lambda f: _line("//registry.npmjs.org/:_authToken=npm_{s}", f.fake(36))),
    Format("PyPI token", "pypi_token", lambda f: _line("password = {s}", "pypi-AgEIcHlwaS5vcmc" + f.fake(150, B62 + "_-"))),
    Format("RubyGems key", "rubygems_key", lambda f: _line("GEM_HOST_API_KEY: {s}", "rubygems_" + f.chars(48, HEX))),
    Format("Docker Hub token", "docker_token", lambda f: _line("docker login -u acme --password-stdin <<< {s}", "dckr_pat_" + f.fake(27, B62 + "_-"))),
    Format("CircleCI token", "circleci_token", lambda f: _line("circle-token: {s}", "CCIPAT_" + f.fake(22) + "_" + f.chars(40, HEX))),
    Format("Buildkite token", "buildkite_token", lambda f: _line("BUILDKITE token {s}", "bkua_" + f.chars(40, HEX))),
    Format("Terraform Cloud token", "terraform_token", lambda f: _line('token = "{s}"', f.chars(14) + ".atlasv1." + f.fake(67))),
    Format("HashiCorp Vault token", "vault_token", lambda f: _line("VAULT_TOKEN={s}", "hvs." + f.fake(24))),
    Format("Pulumi token", "pulumi_token", lambda f: _line("pulumi login with {s}", "pul-" + f.chars(40, HEX))),
    # --- AI APIs
    Format("OpenAI project key", "openai_key", lambda f: _line("OPENAI_API_KEY={s}", "sk-proj-" + f.fake(48, B62 + "_-"))),
    Format("Anthropic key", "anthropic_key", lambda f: _line("x-api-key: {s}", "sk-ant-api03-" + f.fake(90, B62 + "_-"))),
    Format("OpenRouter key", "openai_key", lambda f: _line("--api-key {s}", "sk-or-v1-" + f.chars(64, HEX))),
    Format("Hugging Face token", "hf_token", lambda f: _line("huggingface-cli login --token {s}", "hf_" + f.fake(34))),
    Format("Groq key", "groq_key", lambda f: _line("client = Groq(api_key={s})", "gsk_" + f.fake(52))),
    Format("Replicate token", "replicate_token", lambda f: _line("r8 token {s}", "r8_" + f.fake(37))),
    Format("Perplexity key", "perplexity_key", lambda f: _line("pplx key {s}", "pplx-" + f.fake(48))),
    Format("xAI key", "xai_key", lambda f: _line("XAI key {s}", "xai-" + f.fake(80))),
    # --- messaging, payments, SaaS
    Format("Slack bot token", "slack_token", lambda f: _line("SLACK_BOT_TOKEN={s}", f"xoxb-{f.chars(12, string.digits)}-{f.chars(13, string.digits)}-{f.fake(24)}")),
    Format("Slack webhook", "slack_webhook", lambda f: _line("curl -X POST {s}", f"https://hooks.slack.com/services/T{f.chars(10, UPPER_ALNUM)}/B{f.chars(10, UPPER_ALNUM)}/{f.fake(24)}")),
    Format("Discord webhook", "discord_webhook", lambda f: _line("webhook: {s}", f"https://discord.com/api/webhooks/{f.chars(18, string.digits)}/{f.fake(68, B62 + '_-')}"), probe=True),
    Format("Discord bot token", "discord_token", lambda f: _line("DISCORD_BOT={s}", f"M{f.chars(23)}.{f.chars(6, B62 + '_-')}.{f.chars(27, B62 + '_-')}")),
    Format("Telegram bot token", "telegram_token", lambda f: _line("bot token {s}", f"{f.chars(9, string.digits)}:AA{f.fake(33, B62 + '_-')}")),
    Format("Mailgun API key", "mailgun_key", lambda f: _line("api:{s}", "key-" + f.chars(32, HEX)), probe=True),
    Format("Mailgun new API key", "mailgun_key", lambda f: _line("MAILGUN_KEY {s}", f"{f.chars(32, HEX)}-{f.chars(8, HEX)}-{f.chars(8, HEX)}"), probe=True),
    Format("SendGrid key", "sendgrid_key", lambda f: _line("SENDGRID {s}", f"SG.{f.fake(22, B62 + '_-')}.{f.fake(43, B62 + '_-')}")),
    Format("Twilio API key", "twilio_key", lambda f: _line("twilio api key {s}", "SK" + f.chars(32, HEX))),
    Format("Stripe live key", "stripe_key", lambda f: _line("stripe.api_key = {s}", "sk_live_" + f.fake(24))),
    Format("Stripe webhook secret", "stripe_key", lambda f: _line("endpoint secret {s}", "whsec_" + f.fake(32))),
    Format("Square access token", "square_secret", lambda f: _line("square {s}", "sq0csp-" + f.fake(43, B62 + "_-"))),
    Format("Shopify access token", "shopify_token", lambda f: _line("X-Shopify-Access-Token {s}", "shpat_" + f.chars(32, HEX))),
    Format("Okta API token", "okta_token", lambda f: _line("Authorization: SSWS {s}", "00" + f.fake(40, B62 + "_-")), probe=True),
    Format("Atlassian API token", "atlassian_token", lambda f: _line("jira token {s}", "ATATT3xFfGF0" + f.fake(180, B62 + "_-=") + "=" + f.chars(8, UPPER_ALNUM))),
    Format("Linear API key", "linear_key", lambda f: _line("linear {s}", "lin_api_" + f.fake(40))),
    Format("Notion token", "notion_token", lambda f: _line("NOTION {s}", "ntn_" + f.fake(46))),
    Format("Postman API key", "postman_key", lambda f: _line("postman {s}", f"PMAK-{f.chars(24, HEX)}-{f.chars(34, HEX)}")),
    Format("Grafana service account token", "grafana_token", lambda f: _line("grafana {s}", f"glsa_{f.fake(32)}_{f.chars(8, HEX)}")),
    Format("New Relic user key", "newrelic_key", lambda f: _line("newrelic {s}", "NRAK-" + f.chars(27, UPPER_ALNUM))),
    Format("Sentry auth token", "sentry_token", lambda f: _line("SENTRY {s}", "sntrys_" + f.fake(100, B62 + "_+/="))),
    Format("Doppler token", "doppler_token", lambda f: _line("doppler {s}", "dp.st." + f.fake(43))),
    Format("Supabase token", "supabase_token", lambda f: _line("supabase {s}", "sbp_" + f.chars(40, HEX))),
    Format("PlanetScale token", "planetscale_token", lambda f: _line("pscale {s}", "pscale_tkn_" + f.fake(43, B62 + "_-"))),
    Format("Mapbox secret token", "mapbox_token", lambda f: _line("MAPBOX {s}", "sk.eyJ" + f.fake(60, B62 + "_-") + "." + f.fake(22, B62 + "_-"))),
    Format("Age secret key", "age_secret_key", lambda f: _line("# created: 2026-01-01\n{s}", "AGE-SECRET-KEY-1" + f.chars(58, BECH32)), probe=True),
    # --- generic shapes
    Format("JWT", "jwt", lambda f: _line("id_token={s}", _jwt(f))),
    Format("Bearer header", "bearer_token", lambda f: _line('curl -H "Authorization: Bearer {s}" https://api.acme.dev', f.fake(40))),
    Format("Basic auth header", "basic_auth", lambda f: _line("Authorization: Basic {s}", base64.b64encode(f"ci:{f.fake(16)}".encode()).decode())),
    Format("Postgres URL password", "url_credentials", lambda f: _line("DATABASE_URL=postgres://app:{s}@db.internal:5432/app", f.fake(20))),
    Format("Password assignment", "password_assignment", lambda f: _line("DB_PASSWORD={s}", f.fake(16))),
    Format("Secret assignment", "secret_assignment", lambda f: _line("DATADOG_API_KEY={s}", f.chars(32, HEX))),
    Format("RSA private key", "private_key", lambda f: _line("{s}", _pem(f, "RSA PRIVATE KEY"))),
    Format("OpenSSH private key", "private_key", lambda f: _line("{s}", _pem(f, "OPENSSH PRIVATE KEY"))),
)  # fmt: skip
