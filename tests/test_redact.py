from __future__ import annotations

import base64
import json
import random
import string
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from funes_core.redact import KINDS, redact

# Secret values are generated here from a fixed seed, never written out literally: literal
# real-looking keys in the repository would trip push protection and secret scanners.
SEED = 20250611
DIGITS = string.digits
B62 = string.ascii_letters + string.digits
B64 = B62 + "+/"
URLSAFE = B62 + "-_"
HEX = "0123456789abcdef"
BASE32_UPPER = string.ascii_uppercase + "234567"
#: Passwords: no whitespace, quotes or shell/URL metacharacters, so they sit unquoted in a `.env`.
PASSWORD_CHARS = B62 + "!*-_+="


class SecretFactory:
    """Deterministic secret values in the right alphabets and lengths for each format."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def chars(self, n: int, alphabet: str = B62) -> str:
        """``n`` characters from ``alphabet``, using every character class the alphabet has."""
        needed: list[Callable[[str], bool]] = [
            pred for pred in (str.isdigit, str.isupper, str.islower) if any(pred(c) for c in alphabet)
        ]
        while True:
            value = "".join(self.rng.choice(alphabet) for _ in range(n))
            if all(any(pred(c) for c in value) for pred in needed[:n]):
                return value

    def password(self, n: int = 14, alphabet: str = PASSWORD_CHARS) -> str:
        return self.rng.choice(string.ascii_letters) + self.chars(n - 1, alphabet)

    def b64(self, raw: bytes) -> str:
        return base64.b64encode(raw).decode("ascii")

    def b64url(self, raw: bytes) -> str:
        return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")

    def jwt(self) -> str:
        header = self.b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
        payload = self.b64url(
            json.dumps({"sub": self.chars(12), "iat": 1_700_000_000 + self.rng.randrange(10**6)}).encode()
        )
        return f"{header}.{payload}.{self.b64url(self.rng.randbytes(32))}"

    def pem(self, label: str = "RSA PRIVATE KEY", width: int = 64, nbytes: int = 600) -> str:
        body = self.b64(self.rng.randbytes(nbytes))
        lines = [body[i : i + width] for i in range(0, len(body), width)]
        return f"-----BEGIN {label}-----\n" + "\n".join(lines) + f"\n-----END {label}-----"


@dataclass(frozen=True)
class Planted:
    """A realistic piece of tool output with secrets in it.

    ``secrets``: (value, kind) pairs, each value occurring exactly once in ``text``. ``keep``: text
    around the secrets that must survive (variable names, commands, hosts).
    """

    name: str
    text: str
    secrets: tuple[tuple[str, str], ...]
    keep: tuple[str, ...]

    def expected(self) -> str:
        out = self.text
        for value, kind in self.secrets:
            out = out.replace(value, f"[REDACTED:{kind}]")
        return out


def _gap_cases(f: SecretFactory, add: Callable[[str, str, list[tuple[str, str]], list[str]], None]) -> None:
    """Issue 13: escaped slashes, AWS secrets beside their key id, labelled next-line tokens, and
    more of detect-secrets' detectors."""
    # JSON with escaped slashes (PHP json_encode, some JS serialisers): credentials in URLs.
    pg_pw = f.password(16, B62)
    add(
        "url credentials with JSON-escaped slashes",
        '{"DATABASE_URL": "postgres:\\/\\/app:' + pg_pw + '@db.internal:5432\\/app"}',
        [(pg_pw, "url_credentials")],
        ['"postgres:\\/\\/app:', "@db.internal:5432\\/app"],
    )
    git_pw = f.chars(40, B62)
    add(
        "git remote with a token, JSON-escaped",
        '{"remote": "https:\\/\\/deploy:' + git_pw + '@git.example.com\\/acme\\/app.git"}',
        [(git_pw, "url_credentials")],
        ["https:\\/\\/deploy:", "@git.example.com\\/acme\\/app.git"],
    )
    # An AWS secret holding '/' inside a JSON document written with escaped slashes.
    raw = f.chars(40, B64)
    while "/" not in raw:
        raw = f.chars(40, B64)
    escaped = raw.replace("/", "\\/")
    add(
        "AWS secret with JSON-escaped slashes",
        '{"AWS_SECRET_ACCESS_KEY": "' + escaped + '", "region": "eu-west-1"}',
        [(escaped, "aws_secret_key")],
        ['"AWS_SECRET_ACCESS_KEY": "', '", "region": "eu-west-1"'],
    )
    hook = f"T{f.chars(8, BASE32_UPPER)}\\/B{f.chars(10, BASE32_UPPER)}\\/{f.chars(24)}"
    add(
        "Slack webhook with JSON-escaped slashes",
        '{"webhook": "https:\\/\\/hooks.slack.com\\/services\\/' + hook + '"}',
        [("https:\\/\\/hooks.slack.com\\/services\\/" + hook, "slack_webhook")],
        ['{"webhook": "'],
    )
    # A bare 40-character AWS secret on the line after its key id (aws configure list, a CSV, a table).
    kid, sec = "AKIA" + f.chars(16, BASE32_UPPER), f.chars(40, B64)
    add(
        "AWS secret on the line after its key id",
        f"Here are the new credentials:\n{kid}\n{sec}\nStore them in ~/.aws/credentials.",
        [(kid, "aws_access_key"), (sec, "aws_secret_key")],
        ["Here are the new credentials:\n", "\nStore them in ~/.aws/credentials."],
    )
    kid2, sec2 = "AKIA" + f.chars(16, BASE32_UPPER), f.chars(40, B64)
    add(
        "AWS credentials CSV",
        f"User name,Access key ID,Secret access key\nci-deployer,{kid2},{sec2}\n",
        [(kid2, "aws_access_key"), (sec2, "aws_secret_key")],
        ["User name,Access key ID,Secret access key\nci-deployer,"],
    )
    kid3, sec3 = "ASIA" + f.chars(16, BASE32_UPPER), f.chars(40, B64)
    add(
        "AWS key pair in a markdown table",
        f"| AccessKeyId | SecretAccessKey |\n|---|---|\n| {kid3} | {sec3} |",
        [(kid3, "aws_access_key"), (sec3, "aws_secret_key")],
        ["| AccessKeyId | SecretAccessKey |\n|---|---|\n| "],
    )
    # Keyword context, value on the next line: only a high-entropy value counts.
    minted = f.chars(32, URLSAFE)
    add(
        "token printed on the line after its label",
        f"Your new personal access token (it will not be shown again):\n  {minted}\n",
        [(minted, "secret_assignment")],
        ["Your new personal access token (it will not be shown again):\n  "],
    )
    # detect-secrets' Telegram and Discord bot token detectors.
    tg = f"{f.chars(10, DIGITS)}:AA{f.chars(33, URLSAFE)}"
    add(
        "Telegram bot token",
        f"curl https://api.telegram.org/bot{tg}/getMe",
        [(tg, "telegram_token")],
        ["curl https://api.telegram.org/bot", "/getMe"],
    )


def _gap_lookalikes(rng: random.Random, hexs: Callable[[int], str], uuid: Callable[[], str]) -> list[str]:
    """Issue 13: what the new context rules must leave alone (digests, ids, images, lock files, keys)."""

    def b64(n: int) -> str:
        return base64.b64encode(rng.randbytes(n)).decode()

    png = base64.b64encode(rng.randbytes(3000)).decode()
    return [
        # git SHAs next to a key-id-shaped placeholder and in an escaped URL
        f"AKIAIOSFODNN7EXAMPLE\n{hexs(40)}\n",
        f'{{"url": "https:\\/\\/github.com\\/acme\\/app\\/commit\\/{hexs(40)}"}}',
        '{"homepage": "https:\\/\\/example.com\\/docs", "repo": "git@github.com:acme\\/app.git"}',
        '{"clone": "https:\\/\\/oauth2@gitlab.example.com\\/group\\/app.git"}',  # user, no password
        # UUIDs in every spelling
        f"{uuid()}\n{uuid().upper()}\n{{{uuid()}}}\nurn:uuid:{uuid()}",
        # base64 images: a Claude image block, a bare payload on its own line, wrapped at 76
        json.dumps({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png}}),
        f"screenshot.png (base64):\n{png[:76]}\n{png[76:152]}\n{png[152:228]}",
        # lock-file hashes
        f'[[package]]\nname = "anyio"\nsdist = {{ url = "https://files.pythonhosted.org/a.tar.gz", '
        f'hash = "sha256:{hexs(64)}" }}',
        f'[[package]]\nname = "serde"\nchecksum = "{hexs(64)}"',
        f"golang.org/x/text v0.14.0 h1:{b64(32)}\ngolang.org/x/text v0.14.0/go.mod h1:{b64(32)}",
        f'left-pad@^1.3.0:\n  version "1.3.0"\n  integrity sha1-{b64(20)}',
        f"  /left-pad@1.3.0:\n    resolution: {{integrity: sha512-{b64(64)}}}",
        # public keys and fingerprints
        f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{b64(32)} dev@laptop",
        f"The key fingerprint is SHA256:{b64(32).rstrip('=')}.",
        # keyword context whose next line is not a secret
        "API key:\n  stored in 1Password under 'staging'\nToken:\n  42\nPassword:\n  (none)\n",
        f"Your token expires in:\n  3600 seconds\nsecret rotation id:\n  {uuid()}\n",
        f"key:\n  {hexs(40)}\n",  # a hex digest after a bare keyword: hex is never high-entropy enough
    ]


def _planted_corpus() -> list[Planted]:
    f = SecretFactory(SEED)
    cases: list[Planted] = []

    def add(name: str, text: str, secrets: list[tuple[str, str]], keep: list[str]) -> None:
        for value, _ in secrets:
            assert text.count(value) == 1, (name, value)
        cases.append(Planted(name, text, tuple(secrets), tuple(keep)))

    # `env` output: several provider keys next to ordinary variables that must survive.
    ghp = "ghp_" + f.chars(36)
    sk_proj = "sk-proj-" + f.chars(156, URLSAFE)
    sk_ant = "sk-ant-api03-" + f.chars(93, URLSAFE) + "AA"
    hf = "hf_" + f.chars(34, string.ascii_letters)
    akia = "AKIA" + f.chars(16, BASE32_UPPER)
    aws_secret = f.chars(40, B64)
    add(
        "env dump",
        "[tool_result Bash] SHELL=/bin/bash\nPWD=/home/dev/project\nOLDPWD=/home/dev\n"
        f"GITHUB_TOKEN={ghp}\nOPENAI_API_KEY={sk_proj}\nANTHROPIC_API_KEY={sk_ant}\nHF_TOKEN={hf}\n"
        f"AWS_ACCESS_KEY_ID={akia}\nAWS_SECRET_ACCESS_KEY={aws_secret}\nLANG=en_US.UTF-8\n"
        "TOKENIZERS_PARALLELISM=false\nHOME=/home/dev\n",
        [
            (ghp, "github_token"),
            (sk_proj, "openai_key"),
            (sk_ant, "anthropic_key"),
            (hf, "hf_token"),
            (akia, "aws_access_key"),
            (aws_secret, "aws_secret_key"),
        ],
        ["GITHUB_TOKEN=", "OPENAI_API_KEY=", "PWD=/home/dev/project", "TOKENIZERS_PARALLELISM=false"],
    )

    # A `.env` file read by the agent, with Read-tool line numbers.
    db_url_pw = f.password(16, URLSAFE)
    db_pw = f.password()
    django = "django-insecure-" + f.chars(40, string.ascii_lowercase + DIGITS + "!@%^*-_=+")
    stripe = "sk_live_" + f.chars(24)
    slack = f"xoxb-{f.chars(12, DIGITS)}-{f.chars(13, DIGITS)}-{f.chars(24)}"
    add(
        ".env file",
        f"     1→DATABASE_URL=postgres://app:{db_url_pw}@localhost:5432/app\n"
        f"     2→DB_PASSWORD={db_pw}\n"
        f"     3→SECRET_KEY={django}\n"
        f"     4→STRIPE_SECRET_KEY={stripe}\n"
        f"     5→SLACK_BOT_TOKEN={slack}\n"
        "     6→NEXT_PUBLIC_API_URL=https://api.example.com\n",
        [
            (db_url_pw, "url_credentials"),
            (db_pw, "password_assignment"),
            (django, "secret_assignment"),
            (stripe, "stripe_key"),
            (slack, "slack_token"),
        ],
        ["DATABASE_URL=postgres://app:", "@localhost:5432/app", "DB_PASSWORD=", "SECRET_KEY=", "NEXT_PUBLIC"],
    )

    bearer = f.chars(40)
    add(
        "curl bearer",
        f'[tool_use Bash] curl -sS -H "Authorization: Bearer {bearer}" -H "Content-Type: application/json" '
        "https://api.internal.example.com/v1/jobs",
        [(bearer, "bearer_token")],
        ['-H "Authorization: Bearer ', "https://api.internal.example.com/v1/jobs"],
    )

    jwt = f.jwt()
    tool_input = json.dumps({"command": f'curl -H "Authorization: Bearer {jwt}" https://api.example.com/me'})
    add(
        "JSON tool input with a JWT",
        f"[tool_use Bash] {tool_input}",
        [(jwt, "jwt")],
        ['\\"Authorization: Bearer ', '"command": "curl'],
    )

    py_bearer = f.chars(32, URLSAFE)
    add(
        "python headers",
        f'headers = {{"Authorization": "Bearer {py_bearer}", "Accept": "application/json"}}\n'
        "resp = requests.get(url, headers=headers, timeout=10)",
        [(py_bearer, "bearer_token")],
        ['"Authorization": "Bearer ', "requests.get"],
    )

    api_hex = f.chars(32, HEX)
    cfg_pw = f.password()
    add(
        "JSON config",
        json.dumps(
            {
                "endpoint": "https://api.weather.example.com/v3",
                "api_key": api_hex,
                "database": {"host": "db.internal", "user": "svc", "password": cfg_pw},
                "retries": 3,
            },
            indent=2,
        ),
        [(api_hex, "secret_assignment"), (cfg_pw, "password_assignment")],
        ['"api_key": "', '"password": "', '"endpoint"'],
    )

    akia2 = "AKIA" + f.chars(16, BASE32_UPPER)
    secret2 = f.chars(40, B64)
    asia = "ASIA" + f.chars(16, BASE32_UPPER)
    secret3 = f.chars(40, B64)
    session = "IQoJb3JpZ2luX2VjE" + f.chars(300, B64)
    add(
        "AWS credentials file",
        f"[default]\naws_access_key_id = {akia2}\naws_secret_access_key = {secret2}\nregion = us-east-1\n\n"
        f"[prod]\naws_access_key_id = {asia}\naws_secret_access_key = {secret3}\n"
        f"aws_session_token = {session}\n",
        [
            (akia2, "aws_access_key"),
            (secret2, "aws_secret_key"),
            (asia, "aws_access_key"),
            (secret3, "aws_secret_key"),
            (session, "aws_session_token"),
        ],
        ["aws_access_key_id = ", "aws_secret_access_key = ", "aws_session_token = ", "region = us-east-1"],
    )

    sts_id = "ASIA" + f.chars(16, BASE32_UPPER)
    sts_secret = f.chars(40, B64)
    sts_token = "FwoGZXIvYXdzE" + f.chars(280, B64)
    add(
        "aws sts assume-role output",
        json.dumps(
            {
                "Credentials": {
                    "AccessKeyId": sts_id,
                    "SecretAccessKey": sts_secret,
                    "SessionToken": sts_token,
                    "Expiration": "2025-06-11T12:00:00+00:00",
                }
            },
            indent=4,
        ),
        [(sts_id, "aws_access_key"), (sts_secret, "aws_secret_key"), (sts_token, "aws_session_token")],
        ['"SecretAccessKey": "', '"SessionToken": "', '"Expiration"'],
    )

    kube_token = (
        f.chars(6, string.ascii_lowercase + DIGITS) + "." + f.chars(16, string.ascii_lowercase + DIGITS)
    )
    client_key = f.b64(f.pem("EC PRIVATE KEY", nbytes=120).encode())
    add(
        "kubeconfig",
        "apiVersion: v1\nkind: Config\nusers:\n- name: admin\n  user:\n"
        f"    client-key-data: {client_key}\n    token: {kube_token}\n"
        "contexts:\n- name: dev\n",
        [(client_key, "private_key"), (kube_token, "secret_assignment")],
        ["client-key-data: ", "    token: ", "kind: Config"],
    )

    ghs = "ghs_" + f.chars(36)
    glpat = "glpat-" + f.chars(20, URLSAFE)
    deploy_pw = f.password(18, URLSAFE)
    add(
        "git remotes",
        f"origin\thttps://x-access-token:{ghs}@github.com/acme/app.git (fetch)\n"
        f"gitlab\thttps://oauth2:{glpat}@gitlab.com/acme/app.git (push)\n"
        f"mirror\thttps://deploy:{deploy_pw}@git.example.org/acme/app.git (push)\n",
        [(ghs, "github_token"), (glpat, "gitlab_token"), (deploy_pw, "url_credentials")],
        ["https://x-access-token:", "@github.com/acme/app.git", "https://oauth2:", "https://deploy:"],
    )

    openssh = f.pem("OPENSSH PRIVATE KEY", width=70, nbytes=1200)
    add(
        "ssh private key",
        f"[tool_result Bash] $ cat ~/.ssh/id_ed25519\n{openssh}\n$ ls -la ~/.ssh\n",
        [(openssh, "private_key")],
        ["cat ~/.ssh/id_ed25519", "$ ls -la ~/.ssh"],
    )

    sa_pem = f.pem("PRIVATE KEY", nbytes=1200)
    escaped = json.dumps(sa_pem)[1:-1]
    add(
        "service account JSON (escaped PEM)",
        '{"type": "service_account", "project_id": "acme-prod", "private_key_id": "'
        + f.chars(40, HEX)
        + f'", "private_key": "{escaped}\\n", "client_email": "ci@acme-prod.iam.gserviceaccount.com"}}',
        [(escaped, "private_key")],
        ['"private_key": "', '\\n", "client_email"', '"private_key_id": "'],
    )

    docker_pw = f.password()
    add(
        "docker login",
        f"$ docker login -u deploy -p {docker_pw} registry.example.com\n"
        "WARNING! Using --password via the CLI is insecure. Use --password-stdin.\nLogin Succeeded\n",
        [(docker_pw, "password_assignment")],
        ["docker login -u deploy -p ", " registry.example.com", "Use --password-stdin."],
    )

    docker_auth = f.b64(f"deploy:{f.password()}".encode())
    add(
        "docker config.json",
        json.dumps({"auths": {"registry.example.com": {"auth": docker_auth}}, "credsStore": "desktop"}),
        [(docker_auth, "basic_auth")],
        ['"auth": "', '"credsStore": "desktop"'],
    )

    team, bot = f.chars(10, BASE32_UPPER), f.chars(10, BASE32_UPPER)
    webhook = f"https://hooks.slack.com/services/T{team}/B{bot}/{f.chars(24)}"
    add(
        "slack webhook",
        f"curl -X POST -H 'Content-type: application/json' --data '{{\"text\":\"deployed\"}}' {webhook}",
        [(webhook, "slack_webhook")],
        ["curl -X POST", '"text":"deployed"'],
    )

    aiza = "AIza" + f.chars(35, URLSAFE)
    add(
        "firebase config",
        f'const firebaseConfig = {{\n  apiKey: "{aiza}",\n  authDomain: "acme.firebaseapp.com",\n}};',
        [(aiza, "google_api_key")],
        ['apiKey: "', 'authDomain: "acme.firebaseapp.com"'],
    )

    npm = "npm_" + f.chars(36)
    add(
        ".npmrc",
        f"registry=https://registry.npmjs.org/\n//registry.npmjs.org/:_authToken={npm}\nalways-auth=true\n",
        [(npm, "npm_token")],
        ["//registry.npmjs.org/:_authToken=", "always-auth=true"],
    )

    sendgrid = f"SG.{f.chars(22, URLSAFE)}.{f.chars(43, URLSAFE)}"
    add(
        "sendgrid in settings.py",
        f"EMAIL_BACKEND = 'sendgrid_backend.SendgridBackend'\nSENDGRID_API_KEY = '{sendgrid}'\n",
        [(sendgrid, "sendgrid_key")],
        ["SENDGRID_API_KEY = '", "EMAIL_BACKEND"],
    )

    yaml_pw = f.password()
    add(
        "YAML config",
        f"database:\n  host: db.internal\n  port: 5432\n  username: app\n  password: {yaml_pw}\n  pool: 10\n",
        [(yaml_pw, "password_assignment")],
        ["  password: ", "  username: app", "  pool: 10"],
    )

    mysql_pw = f.password(12, B62)
    add(
        "mysql -p",
        f"[tool_use Bash] mysql -h db.internal -u root -p{mysql_pw} app_production -e 'SELECT 1'",
        [(mysql_pw, "password_assignment")],
        ["mysql -h db.internal -u root -p", " app_production"],
    )

    flag_key = f.chars(32)
    add(
        "--api-key flag",
        f"./scripts/deploy.sh --env staging --api-key {flag_key} --verbose",
        [(flag_key, "secret_assignment")],
        ["--api-key ", " --verbose", "--env staging"],
    )

    pg_pw = f.password()
    add(
        "PGPASSWORD inline",
        f"PGPASSWORD={pg_pw} psql -h localhost -U app -d app -c '\\dt'",
        [(pg_pw, "password_assignment")],
        ["PGPASSWORD=", " psql -h localhost"],
    )

    query_token = f.chars(40)
    add(
        "access_token query parameter",
        f"GET https://graph.example.com/v2/report?access_token={query_token}&format=json 200 OK",
        [(query_token, "secret_assignment")],
        ["?access_token=", "&format=json"],
    )

    header_key = f.chars(40, URLSAFE)
    add(
        "x-api-key header",
        f'curl https://api.example.net/v1/messages -H "x-api-key: {header_key}" '
        '-H "content-type: application/json"',
        [(header_key, "api_key_header")],
        ['-H "x-api-key: ', '-H "content-type: application/json"'],
    )

    rk = "rk_live_" + f.chars(99)
    add(
        "stripe restricted key in python",
        f'import stripe\nstripe.api_key = "{rk}"\ncustomer = stripe.Customer.create(email=email)',
        [(rk, "stripe_key")],
        ['stripe.api_key = "', "stripe.Customer.create"],
    )

    azure = f.chars(86, B64) + "=="
    add(
        "azure connection string",
        "AZURE_STORAGE_CONNECTION_STRING=DefaultEndpointsProtocol=https;AccountName=acmeprod;"
        f"AccountKey={azure};EndpointSuffix=core.windows.net",
        [(azure, "azure_key")],
        ["AccountName=acmeprod;AccountKey=", ";EndpointSuffix=core.windows.net"],
    )

    basic = f.b64(f"admin:{f.password()}".encode())
    add(
        "basic auth header",
        "> GET /api/json HTTP/1.1\n> Host: jenkins.example.com\n"
        f"> Authorization: Basic {basic}\n> Accept: */*\n",
        [(basic, "basic_auth")],
        ["> Authorization: Basic ", "> Host: jenkins.example.com"],
    )

    curl_pw = f.password()
    add(
        "curl -u",
        f"curl -s -u admin:{curl_pw} https://jenkins.example.com/api/json | jq .jobs",
        [(curl_pw, "basic_auth")],
        ["curl -s -u admin:", " https://jenkins.example.com/api/json"],
    )

    redis_pw = f.password(20, B62)
    add(
        "kubernetes env entry",
        "        env:\n        - name: REDIS_PASSWORD\n"
        f'          value: "{redis_pw}"\n'
        '        - name: LOG_LEVEL\n          value: "info"\n',
        [(redis_pw, "password_assignment")],
        ["- name: REDIS_PASSWORD", 'value: "info"'],
    )

    pat = f"github_pat_{f.chars(22)}_{f.chars(59)}"
    add(
        "gh auth with a fine-grained PAT",
        f"$ gh auth login --with-token <<< {pat}\n$ gh repo list acme --limit 5",
        [(pat, "github_token")],
        ["gh auth login --with-token <<< ", "gh repo list"],
    )

    legacy = f"sk-{f.chars(20)}T3BlbkFJ{f.chars(20)}"
    add(
        "legacy OpenAI key in code",
        f'import openai\nopenai.api_key = "{legacy}"\n',
        [(legacy, "openai_key")],
        ['openai.api_key = "'],
    )

    hf_code = "hf_" + f.chars(34, string.ascii_letters)
    add(
        "huggingface login call",
        f'from huggingface_hub import login\nlogin(token="{hf_code}")\nsnapshot_download("org/model")',
        [(hf_code, "hf_token")],
        ['login(token="', 'snapshot_download("org/model")'],
    )

    pypi = "pypi-AgEIcHlwaS5vcmc" + f.chars(80, URLSAFE)
    add(
        ".pypirc",
        f"[distutils]\nindex-servers = pypi\n\n[pypi]\nusername = __token__\npassword = {pypi}\n",
        [(pypi, "pypi_token")],
        ["username = __token__", "password = "],
    )

    tf_secret = f.chars(34, B62 + "~_.-")
    add(
        "terraform variables",
        f'tenant_id     = "72f988bf-86f1-41af-91ab-2d7cd011db47"\nclient_secret = "{tf_secret}"\n',
        [(tf_secret, "secret_assignment")],
        ['client_secret = "', 'tenant_id     = "72f988bf-86f1-41af-91ab-2d7cd011db47"'],
    )

    cookie_jwt = f.jwt()
    add(
        "Set-Cookie with a JWT",
        f"< HTTP/2 200\n< set-cookie: session={cookie_jwt}; Path=/; HttpOnly; Secure\n< content-length: 0\n",
        [(cookie_jwt, "jwt")],
        ["< set-cookie: session=", "; Path=/; HttpOnly"],
    )

    netrc_pw = f.chars(32, HEX)
    add(
        ".netrc",
        f"machine api.heroku.com login dev@example.com password {netrc_pw}\n",
        [(netrc_pw, "password_assignment")],
        ["machine api.heroku.com login dev@example.com password "],
    )

    gocspx = "GOCSPX-" + f.chars(28, URLSAFE)
    add(
        "google oauth client",
        json.dumps(
            {"installed": {"client_id": "1234567890-abc.apps.googleusercontent.com", "client_secret": gocspx}}
        ),
        [(gocspx, "google_client_secret")],
        ['"client_secret": "', "apps.googleusercontent.com"],
    )

    sshpass_pw = f.password()
    add(
        "sshpass",
        f"sshpass -p {sshpass_pw} ssh -o StrictHostKeyChecking=no deploy@10.0.0.12 'systemctl restart app'",
        [(sshpass_pw, "password_assignment")],
        ["sshpass -p ", " ssh -o StrictHostKeyChecking=no deploy@10.0.0.12"],
    )

    vault = "hvs." + f.chars(24)
    add(
        "vault token header",
        f'curl -H "X-Vault-Token: {vault}" https://vault.example.com/v1/secret/data/app',
        [(vault, "vault_token")],
        ['-H "X-Vault-Token: ', "https://vault.example.com/v1/secret/data/app"],
    )

    helm_pw = f.password(16, B62)
    add(
        "helm --set",
        f"helm upgrade --install redis bitnami/redis --set auth.password={helm_pw} --namespace cache",
        [(helm_pw, "password_assignment")],
        ["--set auth.password=", " --namespace cache"],
    )

    escaped_pw = f.password()
    escaped_token = f.chars(32)
    add(
        "env dump inside a JSON tool result (escaped newlines)",
        json.dumps(
            {
                "stdout": f"HOME=/root\nMYSQL_ROOT_PASSWORD={escaped_pw}\n"
                f"CI_JOB_TOKEN={escaped_token}\nCI=true\n"
            }
        ),
        [(escaped_pw, "password_assignment"), (escaped_token, "secret_assignment")],
        ["\\nMYSQL_ROOT_PASSWORD=", "\\nCI_JOB_TOKEN=", "\\nCI=true\\n"],
    )

    redis_cli_pw = f.password(20, B62)
    add(
        "redis-cli -a",
        f"$ redis-cli -h cache.internal -p 6379 -a {redis_cli_pw} INFO keyspace\n# Keyspace\ndb0:keys=12",
        [(redis_cli_pw, "password_assignment")],
        ["redis-cli -h cache.internal -p 6379 -a ", " INFO keyspace"],
    )

    truncated = f.pem("RSA PRIVATE KEY", nbytes=300).split("\n-----END")[0]
    add(
        "truncated PEM (head -5)",
        f"$ head -5 deploy_key.pem\n{truncated}\n$ echo done\n",
        [(truncated, "private_key")],
        ["$ head -5 deploy_key.pem", "$ echo done"],
    )
    _gap_cases(f, add)
    return cases


def _lookalike_corpus() -> list[str]:
    """Text that resembles secrets but is not: it must come back byte-for-byte unchanged."""
    rng = random.Random(SEED + 1)

    def hexs(n: int) -> str:
        return "".join(rng.choice(HEX) for _ in range(n))

    def uuid() -> str:
        h = hexs(32)
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:]}"

    integrity = base64.b64encode(rng.randbytes(64)).decode()
    return [
        "\n".join(f"{hexs(7)} {msg}" for msg in ("Fix flaky test", "Add redaction", "Bump deps to 1.2.3")),
        f"commit {hexs(40)}\nMerge: {hexs(7)} {hexs(7)}\n"
        "Author: Dev <dev@example.com>\n\n    Refactor token refresh",
        f"{hexs(64)}  dist/funes-0.1.0-py3-none-any.whl\n{hexs(64)}  dist/funes-0.1.0.tar.gz",
        json.dumps({"id": uuid(), "session_id": uuid(), "parent_uuid": uuid(), "role": "assistant"}),
        f'"node_modules/left-pad": {{"version": "1.3.0", "integrity": "sha512-{integrity}"}}',
        f"docker pull python@sha256:{hexs(64)}\nDigest: sha256:{hexs(64)}\nStatus: Image is up to date",
        f"stored chunk {hexs(16)} (split 0) and chunk {hexs(16)} (split 1)",
        "Please reset your password and rotate the token after the incident; the key was never shared.",
        "The model used 1200 tokens for this turn (900 prompt tokens, 300 completion tokens).",
        json.dumps({"usage": {"input_tokens": 900, "output_tokens": 300, "cache_read_input_tokens": 0}}),
        "password=<your-password>\nAPI_KEY=your-api-key-here\nSECRET_KEY=changeme\ntoken: xxx\n",
        'export OPENAI_API_KEY=${OPENAI_API_KEY}\ncurl -H "Authorization: Bearer $TOKEN" https://api.example.com',
        'password: "****"\nGITHUB_TOKEN=$(gh auth token)\nDB_PASSWORD=${DB_PASSWORD:-postgres}',
        "echo aGVsbG8gd29ybGQ= | base64 -d\nmessage: SGVsbG8sIFdvcmxkIQ==\n",
        "/home/dev/.config/gcloud/application_default_credentials.json\nsrc/auth/token_refresh.py:42",
        "def test_redaction_handles_many_cases():\nclass PasswordResetTokenGenerator(BaseTokenGenerator):",
        'password = getpass.getpass()\ntoken = os.environ["GITHUB_TOKEN"]\napi_key = settings.OPENAI_API_KEY',
        "def login(username: str, password: str) -> Token:\n    client = OpenAI(api_key=api_key)\n",
        "interface Creds {\n  password: string;\n  token?: string;\n}\nconst auth = login(password=password)",
        "42 passed, 1 skipped in 3.21s\nPASSED tests/test_auth.py::test_token_refresh_keeps_password_hash",
        "PWD=/home/dev/project\nOLDPWD=/home/dev\nSHLVL=1\nTERM=xterm-256color",
        json.dumps({"bos_token": "<s>", "eos_token": "</s>", "pad_token": None, "max_tokens": 4096}),
        json.dumps({"items": [], "next_page_token": base64.urlsafe_b64encode(rng.randbytes(30)).decode()}),
        "valueFrom:\n  secretKeyRef:\n    name: db-credentials\n    key: password\nsecretName: tls-secret",
        "      - uses: actions/checkout@v4\n        with:\n          token: ${{ secrets.GITHUB_TOKEN }}",
        "git@github.com:acme/app.git\nhttps://github.com/acme/app.git\nssh://git@git.example.com:2222/app.git",
        "http://localhost:8080/api/items?page=2&limit=50&sort=desc\nmailto:ops@example.com",
        "AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\nAWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "OPENAI_API_KEY=sk-...\nGITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\nHF_TOKEN=hf_...",
        "JWTs look like eyJhbGciOi... and are base64url encoded.",
        "| option   | type   | description           |\n| password | string | The database password |",
        "  --password TEXT     Password for the registry\n  --token-file PATH   Read the token from PATH\n"
        "  --password-stdin    Take the password from stdin",
        "INFO auth: token refreshed (expires_in=3600)\nWARN retrying with new key (attempt 2/3)",
        "PASSWORD_MIN_LENGTH=12\nPASSWORD_RESET_TIMEOUT=3600\nTOKEN_EXPIRY_SECONDS=900\nSECRET_NAME=prod/db",
        f'ETag: "{hexs(40)}"\nX-Request-Id: {uuid()}',
        "Use the Bearer scheme for the Authorization header; see the docs.",
        'curl -H "Authorization: Bearer <token>" https://api.example.com/v1/me',
        "postgres://user:password@localhost:5432/db\npostgresql://postgres:${POSTGRES_PASSWORD}@db/app",
        'private static final String TOKEN_HEADER = "X-Auth-Token";\nString password = "";',
        f"key_id: {hexs(16)}\ntoken_count: 1532\nsecret_ref: vault/app/db\n"
        "password_hash: $argon2id$v=19$m=65536",
        "the --password flag is deprecated; pass --password-file instead",
        '{"password": "Password", "token": "Token", "apiKey": "API key"}',
        "GOOGLE_APPLICATION_CREDENTIALS=/secrets/sa.json\nSSH_PRIVATE_KEY_PATH=~/.ssh/id_ed25519",
        *_gap_lookalikes(rng, hexs, uuid),
    ]


PLANTED = _planted_corpus()
LOOKALIKES = _lookalike_corpus()


@pytest.mark.parametrize("case", PLANTED, ids=lambda c: c.name)
def test_planted_secret_is_replaced_by_its_marker_and_context_survives(case: Planted) -> None:
    out, counts = redact(case.text)
    for value, kind in case.secrets:
        assert value not in out, f"{kind} leaked"
        assert f"[REDACTED:{kind}]" in out
    for fragment in case.keep:
        assert fragment in out, f"lost context {fragment!r}"
    assert out == case.expected()
    assert counts == Counter(kind for _, kind in case.secrets)


@pytest.mark.parametrize("text", LOOKALIKES, ids=lambda t: t[:40])
def test_lookalike_is_left_alone(text: str) -> None:
    assert redact(text) == (text, Counter())


def test_corpus_counts() -> None:
    planted = sum(len(case.secrets) for case in PLANTED)
    found = 0
    for case in PLANTED:
        out, _ = redact(case.text)
        found += sum(1 for value, kind in case.secrets if value not in out and f"[REDACTED:{kind}]" in out)
    false_positives = sum(1 for text in LOOKALIKES if redact(text) != (text, Counter()))
    print(
        f"\nredact corpus: {found}/{planted} planted secrets found in {len(PLANTED)} snippets; "
        f"{false_positives} false positives in {len(LOOKALIKES)} look-alikes"
    )
    assert planted >= 30
    assert len(LOOKALIKES) >= 30
    assert found == planted
    assert false_positives == 0


def test_counts_per_kind_for_mixed_text() -> None:
    f = SecretFactory(SEED + 2)
    text = (
        f"GITHUB_TOKEN=ghp_{f.chars(36)}\n"
        f"GH_BACKUP=gho_{f.chars(36)}\n"
        f"AWS_ACCESS_KEY_ID=AKIA{f.chars(16, BASE32_UPPER)}\n"
        f"AWS_SECRET_ACCESS_KEY={f.chars(40, B64)}\n"
        f'{{"password": "{f.password()}"}}\n'
        f"Authorization: Bearer {f.jwt()}\n"
        f"{f.pem('EC PRIVATE KEY', nbytes=120)}\n"
        "done: 3 files changed, commit 1a2b3c4d\n"
    )
    out, counts = redact(text)
    assert counts == Counter(
        {
            "github_token": 2,
            "aws_access_key": 1,
            "aws_secret_key": 1,
            "password_assignment": 1,
            "jwt": 1,
            "private_key": 1,
        }
    )
    assert out.count("[REDACTED:") == 7
    assert out.endswith("done: 3 files changed, commit 1a2b3c4d\n")


def test_every_reported_kind_is_documented() -> None:
    reported: set[str] = set()
    for case in PLANTED:
        reported.update(redact(case.text)[1])
    assert reported <= KINDS
    assert {kind for case in PLANTED for _, kind in case.secrets} == reported


def test_deterministic() -> None:
    for text in [c.text for c in PLANTED] + LOOKALIKES:
        assert redact(text) == redact(text)


def test_idempotent() -> None:
    for case in PLANTED:
        once, _ = redact(case.text)
        twice, counts = redact(once)
        assert twice == once
        assert counts == Counter()


def test_only_the_value_is_replaced() -> None:
    f = SecretFactory(SEED + 3)
    token = "ghp_" + f.chars(36)
    assert redact(f"export GITHUB_TOKEN={token}") == (
        "export GITHUB_TOKEN=[REDACTED:github_token]",
        Counter({"github_token": 1}),
    )


def test_clean_text_is_returned_as_is() -> None:
    text = LOOKALIKES[0]
    out, counts = redact(text)
    assert out is text
    assert not counts


def test_the_speed_benchmark_times_a_clean_and_a_dirty_block(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """How fast the redactor is, is ``bench/redact_speed.py``'s to say (a test would time the load)."""
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[1] / "bench"))
    import redact_speed

    timed = redact_speed.blocks()
    assert redact(timed["clean"])[1] == Counter(), "the clean block has nothing to replace"
    assert redact(timed["dirty"])[1], "the dirty block has a secret to replace"
    out = tmp_path / "redact.json"
    figures = redact_speed.main(["--rounds", "1", "--repeats", "1", "--json", str(out)])
    assert json.loads(out.read_text(encoding="utf-8")) == figures
