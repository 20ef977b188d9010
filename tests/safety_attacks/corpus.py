"""Real-shaped secrets, built from their issuers' documented formats (never real credentials), and the texts
that carry them in each source's outputs and in tool arguments."""

from __future__ import annotations

import base64
import json
import random
import string

_RNG = random.Random(20261202)
_BASE62 = string.ascii_letters + string.digits
_UPPER = string.ascii_uppercase + string.digits
_HEX = "abcdef0123456789"
_D = string.digits


def _chars(alphabet: str, n: int) -> str:
    return "".join(_RNG.choice(alphabet) for _ in range(n))


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _jwt() -> str:
    header = _b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    payload = _b64url(json.dumps({"sub": "svc-orders", "iat": 1764662400, "scope": "read"}).encode())
    return f"{header}.{payload}.{_b64url(bytes(_RNG.randrange(256) for _ in range(32)))}"


def _pem(label: str, *, end: bool = True) -> str:
    body = "\n".join(_chars(_BASE62 + "+/", 64) for _ in range(4))
    block = f"-----BEGIN {label}-----\n{body}\n"
    return block + (f"-----END {label}-----" if end else "")


# GitHub (2021 token formats: ghp_ personal, gho_ OAuth, ghu_ user-to-server, ghs_ server-to-server, ghr_
# refresh; each the prefix and 36 base62 characters; fine-grained PATs github_pat_<22>_<59>).
GITHUB = [f"{prefix}{_chars(_BASE62, 36)}" for prefix in ("ghp_", "gho_", "ghu_", "ghs_", "ghr_")] + [
    f"github_pat_{_chars(_BASE62, 22)}_{_chars(_BASE62, 59)}"
]
# GitLab personal, deploy and runner tokens: a prefix and 20 characters.
GITLAB = [f"{prefix}{_chars(_BASE62 + '_-', 20)}" for prefix in ("glpat-", "gldt-", "glrt-")]
# Slack bot, user and app-level tokens; an incoming webhook's URL (its path is the credential).
SLACK = [
    f"xoxb-{_chars(_D, 12)}-{_chars(_D, 13)}-{_chars(_BASE62, 24)}",
    f"xoxp-{_chars(_D, 12)}-{_chars(_D, 12)}-{_chars(_D, 13)}-{_chars(_HEX, 32)}",
    f"xapp-1-A{_chars(_UPPER, 10)}-{_chars(_D, 13)}-{_chars(_HEX, 64)}",
]
SLACK_WEBHOOK_PATH = f"T{_chars(_UPPER, 8)}/B{_chars(_UPPER, 10)}/{_chars(_BASE62, 24)}"
# AWS access key ids: a four-letter prefix (AKIA long-term, ASIA STS temporary) and 16 of [A-Z2-7].
AWS_KEY_IDS = [f"{prefix}{_chars(string.ascii_uppercase + '234567', 16)}" for prefix in ("AKIA", "ASIA")]
AWS_SECRET = _chars(_BASE62 + "/+", 40)
JWT = _jwt()
OPENAI = f"sk-proj-{_chars(_BASE62, 40)}"
GOOGLE = f"AIza{_chars(_BASE62 + '_-', 35)}"
PEM_BLOCKS = [
    _pem("RSA PRIVATE KEY"),
    _pem("PRIVATE KEY"),
    _pem("EC PRIVATE KEY"),
    _pem("OPENSSH PRIVATE KEY"),
    _pem("ENCRYPTED PRIVATE KEY"),
    _pem("PGP PRIVATE KEY BLOCK"),
    _pem("RSA PRIVATE KEY", end=False),  # cut short by an output bound
]
PASSWORD = "Tr0ub4dor&3-" + _chars(_BASE62, 8)
BASIC = base64.b64encode(f"deploy:{PASSWORD}".encode()).decode()

# (name, secret, text carrying it): the shapes a log line, an event message, an error or a config dump has.
CARRIED: list[tuple[str, str, str]] = [
    *((f"github {t[:4]}", t, f"git clone https://x-access-token:{t}@github.com/acme/ops.git failed") for t in GITHUB),
    *((f"github bare {t[:4]}", t, f"using GITHUB_TOKEN {t} for the release") for t in GITHUB),
    *(
        (f"gitlab {t[:5]}", t, f'curl --header "PRIVATE-TOKEN: {t}" https://gitlab.example.com/api/v4/projects')
        for t in GITLAB
    ),
    *((f"slack {t[:4]}", t, f"slack notify failed: invalid_auth for token {t}") for t in SLACK),
    ("slack webhook", SLACK_WEBHOOK_PATH, f"POST https://hooks.slack.com/services/{SLACK_WEBHOOK_PATH} returned 404"),
    *(
        (f"aws id {k[:4]}", k, f"credential={k}/20261202/eu-west-1/s3/aws4_request signature mismatch")
        for k in AWS_KEY_IDS
    ),
    *((f"aws id bare {k[:4]}", k, f"assumed role with access key {k}") for k in AWS_KEY_IDS),
    ("aws secret", AWS_SECRET, f"aws_secret_access_key = {AWS_SECRET}"),
    ("jwt bearer", JWT, f"GET /api/orders Authorization: Bearer {JWT}"),
    ("jwt bare", JWT, f"id_token={JWT}"),
    ("jwt in json", JWT, json.dumps({"headers": {"authorization": f"Bearer {JWT}"}})),
    ("basic header", BASIC, f"Proxy-Authorization: Basic {BASIC}"),
    ("bearer lower", "8f1c2e7a9b3d4f60a1b2", "calling payments with authorization: bearer 8f1c2e7a9b3d4f60a1b2"),
    ("x-api-key", "k3y-9f8e7d6c5b4a", "X-Api-Key: k3y-9f8e7d6c5b4a"),
    ("cookie", "s%3Aabcdef0123456789", "Cookie: connect.sid=s%3Aabcdef0123456789; theme=dark"),
    ("postgres url", PASSWORD, f"could not connect: postgres://orders:{PASSWORD}@orders-db.shop.svc:5432/orders"),
    ("mongodb url", "m0ng0-pw-77", "MongoNetworkError: mongodb+srv://app:m0ng0-pw-77@cluster0.example.net/db"),
    ("redis no user", "r3dis-pw-42", "Error: connect to redis://:r3dis-pw-42@cache:6379/0 refused"),
    ("amqp url", "rabbit-pw-5", "amqp://guest:rabbit-pw-5@rabbitmq:5672/ connection reset"),
    ("password pair", PASSWORD, f"DB_PASSWORD={PASSWORD} loaded"),
    ("pass suffix", "s3cr3t-mysql", "MYSQL_PASS=s3cr3t-mysql"),
    ("pwd pair", "hunter2-prod", "login pwd: hunter2-prod"),
    ("secret pair", "cl1ent-s3cret", "client_secret=cl1ent-s3cret&grant_type=client_credentials"),
    ("token query", "tok-81f7a2c4", "GET /download?file=report.csv&access_token=tok-81f7a2c4&lang=en"),
    ("api_key query", "ak-55c1e9d2", "https://api.example.com/v1/rates?api_key=ak-55c1e9d2"),
    ("json password", "js0n-pw-93", '{"user": "orders", "password": "js0n-pw-93"}'),
    ("yaml secret", "y4ml-s3cret", "  secret: y4ml-s3cret"),
    ("quoted with spaces", "quoted pw 4471", "DB_PASSWORD: 'quoted pw 4471'"),
    ("double-quoted with spaces", "correct horse battery", 'PGPASSWORD="correct horse battery" psql -h db'),
    ("json escaped quote", 'pw\\"x9y8z7', '{"user": "orders", "password": "pw\\"x9y8z7"}'),
    (
        "json in a json line",
        "js0n-n3sted-pw",
        json.dumps({"level": "error", "msg": json.dumps({"user": "orders", "password": "js0n-n3sted-pw"})}),
    ),
    (
        "escaped pair without spaces",
        "cs-n3sted-1234567",
        json.dumps({"msg": '{"client_secret":"cs-n3sted-1234567","grant_type":"client_credentials"}'}),
    ),
    ("openai key", OPENAI, f"openai.AuthenticationError: Incorrect API key provided: {OPENAI}"),
    ("google key", GOOGLE, f"maps geocode failed for key={GOOGLE}"),
    *(
        (f"pem {i}", block.splitlines()[1], f"loaded key material:\n{block}\nstarting")
        for i, block in enumerate(PEM_BLOCKS)
    ),
]

# Texts that hold no secret and must stay exactly as written.
READABLE = [
    "scrapeUrl: http://prometheus.monitoring.svc:9090/metrics",
    "upstream error for url: http://loki.monitoring.svc:3100/loki/api/v1/query_range?query=%7Bapp%3D%22api%22%7D",
    "dial tcp orders-db.shop.svc:5432: connect: connection refused",
    "GET https://api.partner.example/v2/orders?page=3&limit=50 returned 503",
    "max_tokens=4096 exceeded by the prompt",
    "the token bucket is empty: 0 of 200 tokens left",
    "tests passed=14 failed=0",
    "image registry.local/checkout-api:1.4.2 pulled",
    "Started container checkout-api in pod checkout-api-7f9c6d8b5-tr6zn",
    "ssh git@github.com: Permission denied (publickey)",
    "mail to oncall@example.com bounced",
    "max_tokens: '4096' and password: '' in the defaults",
    json.dumps({"level": "info", "msg": json.dumps({"user": "orders", "token_ttl_seconds": 300})}),
    "connect to redis://cache.shop.svc:6379/0 refused",
]
