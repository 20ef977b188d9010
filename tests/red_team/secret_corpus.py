"""Real-shaped (synthetic) secrets in their issuers' documented formats, each in the text a log line, an event, a
tool's error or a config dump would carry it, with the part that must be found nowhere (``needle``).

None of these is a real credential: the values are made up (AWS's own documentation examples where the format is
AWS's). The carriers differ from ``tests/attacks/secrets_corpus.py`` and ``tests/safety_attacks/corpus.py``.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Secret:
    kind: str
    text: str
    needle: str


_DSN = "postgres://ledger:k8s-Secret-pw-4410@ledger-pg:5432/ledger"
K8S_SECRET_B64 = base64.b64encode(_DSN.encode()).decode()
DOCKER_AUTH = base64.b64encode(b"ledger-bot:d0cker-cfg-pw-77").decode()
_PEM_LINE = "MIIEvAIBADANBgkqhkiG9w0BAQEFAASCBKYwggSiAgEAAoIBAQC7xR3dT"

SECRETS = [
    # Stripe (sk_live_, rk_live_, whsec_)
    Secret(
        "stripe-secret-key",
        "stripe: charge ch_3Q failed (402) with key sk_live_51HqLyjWDarjtT1zdp7dcXGMDnA2sJ9kQ3uV8wYxZ0aBcDeF",
        "sk_live_51HqLyjWDarjtT1zdp7dcXGMDnA2sJ9kQ3uV8wYxZ0aBcDeF",
    ),
    Secret(
        "stripe-restricted-key",
        "refund worker using restricted key rk_live_51HqLyjWDarjtT1zdQ7mNpZx for payouts",
        "rk_live_51HqLyjWDarjtT1zdQ7mNpZx",
    ),
    Secret(
        "stripe-webhook-secret",
        "webhook signature mismatch, endpoint secret whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
        "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
    ),
    # OpenAI and Anthropic style sk- keys, in a JSON error and a header
    Secret(
        "openai-key-in-json-error",
        json.dumps({"error": {"message": "Incorrect API key provided: sk-T3BlbkFJx9Qw2Er4Ty6Ui8Op0As2Df4Gh6Jk8Lz0Xc"}}),
        "sk-T3BlbkFJx9Qw2Er4Ty6Ui8Op0As2Df4Gh6Jk8Lz0Xc",
    ),
    Secret(
        "anthropic-key-header",
        "x-api-key sk-ant-api03-AbC123dEf456GhI789jKl012MnO345pQr678StU901vWx234YzA567",
        "sk-ant-api03-AbC123dEf456GhI789jKl012MnO345pQr678StU901vWx234YzA567",
    ),
    # Slack: a webhook URL JSON-escaped ("\/"), a user token under an ordinary key
    Secret(
        "slack-webhook-escaped-slashes",
        '{"url":"https:\\/\\/hooks.slack.com\\/services\\/T0ABCDEF1\\/B0ABCDEF2\\/Zq8W9e0R1t2Y3u4I5o6P7a8S"}',
        "Zq8W9e0R1t2Y3u4I5o6P7a8S",
    ),
    Secret(
        "slack-user-token-ordinary-key",
        json.dumps(
            {"channel": "#ledger", "via": "xoxp-1234567890-1234567890-1234567890123-0a1b2c3d4e5f60718293a4b5c6d7e8f9"}
        ),
        "0a1b2c3d4e5f60718293a4b5c6d7e8f9",
    ),
    # AWS: an STS answer, a SigV4 header
    Secret(
        "aws-sts-credentials-json",
        json.dumps(
            {
                "Credentials": {
                    "AccessKeyId": "ASIAY34FZKBOKMUTVV7B",
                    "SecretAccessKey": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY",
                    "SessionToken": "FwoGZXIvYXdzEJr//////////wEaDNjZ3kq8ExampleSessionToken",
                }
            }
        ),
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY",
    ),
    Secret(
        "aws-sigv4-header",
        "upstream said 403 for Authorization=AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20261130/eu-west-1/s3/"
        "aws4_request, Signature=fe5f80f77d5fa3beca038a248ff027d0445342fe2855ddc963176630326f1024",
        "AKIAIOSFODNN7EXAMPLE",
    ),
    # GitHub and GitLab in other carriers
    Secret(
        "github-server-token-scheme",
        "Authorization: token ghs_16C7e42F292c6912E7710c838347Ae178B4a",
        "ghs_16C7e42F292c6912E7710c838347Ae178B4a",
    ),
    Secret(
        "github-fine-grained-in-git-url",
        "fatal: unable to access 'https://oauth2:github_pat_11ABCDEFG0aBcDeFgHiJkL_mNoPqRsTuVwXyZ0123456789@github.com/acme/ledger.git/'",
        "github_pat_11ABCDEFG0aBcDeFgHiJkL_mNoPqRsTuVwXyZ0123456789",
    ),
    Secret(
        "gitlab-token-json-header",
        json.dumps({"PRIVATE-TOKEN": "glpat-Zk3pQ9rT2sV5wX8yA1bC", "url": "https://gitlab.acme.io/api/v4"}),
        "glpat-Zk3pQ9rT2sV5wX8yA1bC",
    ),
    # Google, JWT
    Secret(
        "google-key-in-url",
        "GET https://maps.googleapis.com/maps/api/geocode/json?address=Main+St"
        "&key=AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY 403",
        "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY",
    ),
    Secret(
        "jwt-url-encoded-dots",
        "GET /sso/callback/eyJhbGciOiJIUzI1NiJ9%2EeyJzdWIiOiJsZWRnZXItYWRtaW4ifQ%2EZx9q8W7e6R5t4Y3u2I1o0P9a 302",
        "eyJzdWIiOiJsZWRnZXItYWRtaW4ifQ",
    ),
    # PEM in a JSON service-account key (escaped newlines)
    Secret(
        "pem-in-service-account-json",
        json.dumps(
            {
                "type": "service_account",
                "private_key": f"-----BEGIN PRIVATE KEY-----\n{_PEM_LINE}\n-----END PRIVATE KEY-----\n",
            }
        ),
        _PEM_LINE,
    ),
    # URL user-info whose password holds characters user-info patterns stop at
    Secret(
        "userinfo-password-with-slash",
        "connect redis://:Zx9/abc+def=Qw@cache.payments.svc:6379/0 refused",
        "Zx9/abc+def=Qw",
    ),
    Secret(
        "userinfo-password-with-hash",
        "dial postgres://ledger:pw#with#hash9@ledger-pg:5432/ledger failed",
        "pw#with#hash9",
    ),
    # Basic auth and passwords on command lines
    Secret(
        "curl-user-flag", "exec curl -u deploy:S3cr3t-curl-pw https://api.acme.io/v1/settle exited 22", "S3cr3t-curl-pw"
    ),
    Secret(
        "password-flag-with-space",
        "exec: /usr/bin/ledger-migrate --password Cl1-flag-pw-88 --host ledger-pg",
        "Cl1-flag-pw-88",
    ),
    Secret("mysql-p-flag", "backup: mysqldump -uroot -pMyS9l-pw-771 ledger | gzip", "MyS9l-pw-771"),
    Secret("netrc-line", "machine api.acme.io login deploy password n3trc-pw-5521", "n3trc-pw-5521"),
    Secret("ruby-hash-rocket", 'config: {"password" => "rb-hash-pw-6612", "host" => "db"}', "rb-hash-pw-6612"),
    Secret(
        "basic-in-python-repr",
        "{'headers': {'authorization': 'basic bGVkZ2VyOmJhc2ljLXB3LTk5', 'accept': '*/*'}}",
        "bGVkZ2VyOmJhc2ljLXB3LTk5",
    ),
    # Connection strings
    Secret(
        "azure-storage-account-key",
        "DefaultEndpointsProtocol=https;AccountName=ledgerlogs;"
        "AccountKey=Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4Zm9vYmF6cXV4MTI=;EndpointSuffix=core.windows.net",
        "Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4Zm9vYmF6cXV4MTI",
    ),
    Secret(
        "azure-sas-signature",
        "GET https://ledgerlogs.blob.core.windows.net/c/x?sv=2022-11-02&se=2026-12-01&sp=r"
        "&sig=sv2fXq8J3kL9mN0pR4tV6wY8zA1cE3gI5kM7oQ9sU1w%3D 403",
        "sv2fXq8J3kL9mN0pR4tV6wY8zA1cE3gI5kM7oQ9sU1w",
    ),
    Secret(
        "mssql-connection-string",
        "Server=tcp:ledger.database.windows.net,1433;Initial Catalog=ledger;User ID=sa;"
        "Password=Sup3r$ecretMs;Encrypt=True",
        "Sup3r$ecretMs",
    ),
    Secret(
        "jdbc-query-password",
        "jdbc:mysql://ledger-db:3306/ledger?user=ledger&password=jdbc-pw-3391&useSSL=true",
        "jdbc-pw-3391",
    ),
    Secret(
        "sentry-dsn",
        "sentry: DSN https://0123456789abcdef0123456789abcdef@o450123.ingest.sentry.io/5501234",
        "0123456789abcdef0123456789abcdef",
    ),
    # Registry credentials, base64 (the decoded text is the password)
    Secret("docker-config-auth", json.dumps({"auths": {"registry.acme.io": {"auth": DOCKER_AUTH}}}), DOCKER_AUTH),
    # Password values that are no strings in JSON
    Secret("json-numeric-password", json.dumps({"db": {"user": "ledger", "password": 84629173}}), "84629173"),
    Secret("json-list-password", json.dumps({"db_password": ["l1st-pw-4410"]}), "l1st-pw-4410"),
    Secret("json-nested-password", json.dumps({"password": {"value": "n3st-pw-9931"}}), "n3st-pw-9931"),
    # Other issuers' documented prefixes
    Secret(
        "sendgrid-key",
        "sendgrid 401 for key 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",
        "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",
    ),
    Secret(
        "npm-token",
        "npm ERR! 401 Unauthorized using npm_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R",
        "npm_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R",
    ),
    Secret(
        "vault-service-token",
        "vault: permission denied for hvs.CAESIJ2Xq8k9rT3sV6wY0zA4cE7gI1kM5oQ9sU3w",
        "hvs.CAESIJ2Xq8k9rT3sV6wY0zA4cE7gI1kM5oQ9sU3w",
    ),
    Secret(
        "huggingface-token",
        "hub download 401 with hf_aBcDeFgHiJkLmNoPqRsTuVwXyZ012345678",
        "hf_aBcDeFgHiJkLmNoPqRsTuVwXyZ012345678",
    ),
]
BY_KIND = {s.kind: s for s in SECRETS}
assert len(BY_KIND) == len(SECRETS)

# A Kubernetes Secret's base64 data (the decoded value is a DSN with a password): the base64 is the needle.
K8S_SECRET_DATA = Secret("k8s-secret-base64-data", K8S_SECRET_B64, K8S_SECRET_B64)
