"""Real-shaped (made-up) secrets in the formats their issuers document, each with the part that must never appear.

The values are synthetic; AWS's own documentation example key ids are used where the format is AWS's.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Secret:
    kind: str
    text: str  # as it appears in an output or argument
    needle: str  # the credential itself, which must be found nowhere


PEM_BODY = "MIIEowIBAAKCAQEAzq3Kx9Lw2mZpQ7vRrTt8uYyN0aBcDeFgHiJkLmNoPqRsTuVw"

SECRETS = [
    Secret("url-userinfo", "dsn postgres://ledger:Pa55w0rd-ledger7@ledger-pg:5432/ledger failed", "Pa55w0rd-ledger7"),
    Secret("url-userinfo-redis", "connect redis://:r3dis-pass-9931@cache.payments.svc:6379/0", "r3dis-pass-9931"),
    Secret(
        "bearer-header", "Authorization: Bearer 3f9a1c7e5b2d4f6a8c0e1b3d5f7a9c2e", "3f9a1c7e5b2d4f6a8c0e1b3d5f7a9c2e"
    ),
    Secret(
        "basic-header", "proxy said Authorization: Basic bGVkZ2VyOnMzY3JldC1iYXNpYw==", "bGVkZ2VyOnMzY3JldC1iYXNpYw"
    ),
    Secret("password-pair", "retrying login password=hunter2-ledger-prod user=ledger", "hunter2-ledger-prod"),
    Secret("secret-pair", "loaded secret=s3cr3t-value-ledger9 from vault", "s3cr3t-value-ledger9"),
    Secret("token-pair", "webhook token=tok9f8e7d6c5b4a3f2e1d signature rejected", "tok9f8e7d6c5b4a3f2e1d"),
    Secret("api-key-pair", "upstream api_key=ak7live51HxYzQwErTy0 was refused", "ak7live51HxYzQwErTy0"),
    Secret("json-password", '{"user": "ledger", "password": "json-pass-77310"}', "json-pass-77310"),
    Secret("json-client-secret", '{"client_secret":"cs-abc-1234567890"}', "cs-abc-1234567890"),
    Secret("query-string", "GET /v1/settle?api_key=qs-key-88231x&batch=7 502", "qs-key-88231x"),
    Secret("aws-akia", "aws sdk: credentials AKIAIOSFODNN7EXAMPLE were denied", "AKIAIOSFODNN7EXAMPLE"),
    Secret("aws-asia", "assumed role session ASIAY34FZKBOKMUTVV7A expired", "ASIAY34FZKBOKMUTVV7A"),
    Secret(
        "aws-secret-key",
        "aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    ),
    Secret(
        "github-ghp",
        "git clone with ghp_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R failed",
        "ghp_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R",
    ),
    Secret(
        "github-pat",
        "GH token github_pat_11ABCDEFG0123456789abc_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVW",
        "github_pat_11ABCDEFG0123456789abc",
    ),
    Secret("gitlab-pat", "registry login glpat-xY3kP9qR2sT5vW8zA1bC denied", "glpat-xY3kP9qR2sT5vW8zA1bC"),
    Secret(
        "slack-bot",
        "notify failed for xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
        "AbCdEfGhIjKlMnOpQrStUvWx",
    ),
    Secret(
        "slack-hook",
        "POST https://hooks.slack.com/services/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 timed out",
        "q8W9e0R1t2Y3u4I5o6P7a8S9",
    ),
    Secret(
        "jwt",
        "session eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJsZWRnZXIifQ"
        ".Zx9q8W7e6R5t4Y3u2I1o0P9a8S7d6F5g4H3j2K1l0 expired",
        "eyJzdWIiOiJsZWRnZXIifQ",
    ),
    Secret(
        "pem-block",
        f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\n-----END RSA PRIVATE KEY-----",
        PEM_BODY,
    ),
    Secret("pem-cut", f"key dump: -----BEGIN PRIVATE KEY----- {PEM_BODY}", PEM_BODY),
    Secret("x-api-key", "X-Api-Key: xak-44a9-1bd2-77fe-c0de", "xak-44a9-1bd2-77fe-c0de"),
    Secret("env-assignment", "PGPASSWORD=pgpw-91827-ledger psql -h ledger-pg", "pgpw-91827-ledger"),
    Secret("yaml-pair", "DB_PASSWORD: 'quoted pw 4471'", "quoted pw 4471"),
]
