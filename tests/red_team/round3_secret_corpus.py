"""Round three's real-shaped (synthetic) secrets: issuers' formats and carriers none of the earlier corpora hold
(``secret_corpus``, ``tests/attacks/secrets_corpus.py``, ``tests/safety_attacks/corpus.py``), each with the part that
must be found nowhere (``needle``), and texts that hold no secret and must be kept as written.

None of these is a real credential: every value is made up, in the shape its issuer documents.
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


_PUTTY_LINE = "AAAAIHx0vq9dLx4Ke8bN3mZ2p5Qw7Rt1Yu9Io3Pa5Sd7Fg9H"
_SSH2_LINE = "P2/56wAAAi4AAAA3aWYtbW9kbntzaWdue3JzYS1wa2NzMS1zaGExfSxlbmNyeXB0"
_ENCRYPTED_PEM_LINE = "Zk9vQmFyQmF6UXV4Rm9vQmFyQmF6UXV4Rm9vQmFyQmF6UXV4Rm9vQmFy"
_AGE_KEY = "AGE-SECRET-KEY-1QQPQYVZ7XG0K5Y3W4S8D6F2H9J7L5N3P1R8T6V4X2Z0A9C7E5G3"
_JWT_NONE = "eyJhbGciOiJub25lIn0.eyJzdWIiOiJsZWRnZXItYWRtaW4iLCJyb2xlIjoib3BzIn0."
_JWT_COOKIE = "eyJhbGciOiJSUzI1NiIsImtpZCI6IjEifQ.eyJzdWIiOiJvcHMtYm90In0.c2lnbmF0dXJlLWJ5dGVzLWhlcmUtMTIzNA"
_REDIS_URL_PW = "Upst4sh-r3dis-pw-8812"
_KAFKA_PW = "k4fka-s4sl-pw-7731"
_FIREBASE = "AAAAx1Yz2Wq:APA91bH7q3Zk9Lm2Np4Rt6Vx8Za0Cb2De4Fg6Hi8Jk0Lm2No4Pq6Rs8Tu0Vw2Xy4Za6Bc8"
_DOCKER_PAT = "dckr_pat_2b3e36beeb386dfdaacb9b46004ccb7c"

SECRETS = [
    # Stripe and payment providers, in an SDK's own log and a settings repr
    Secret(
        "stripe-test-key-python-repr",
        "settings: {'STRIPE_API': 'sk_test_4eC39HqLyjWDarjtT1zdp7dc', 'currency': 'eur'}",
        "sk_test_4eC39HqLyjWDarjtT1zdp7dc",
    ),
    # Google: an OAuth client secret, an OAuth access token, a Firebase server key
    Secret(
        "google-oauth-client-secret",
        "oauth2: cannot fetch token: invalid_client for client GOCSPX-3kVx9Qz1Lp8Wm2Nr5Ts7Yu0Ab4C",
        "GOCSPX-3kVx9Qz1Lp8Wm2Nr5Ts7Yu0Ab4C",
    ),
    Secret(
        "google-oauth-access-token",
        "gcs upload 401 with ya29.a0AfH6SMBx3kQ9Zp2Lw8Nr5Tv7Yu0Ab4Cd6Ef8Gh1Ij3Kl5Mn7Op9Qr",
        "ya29.a0AfH6SMBx3kQ9Zp2Lw8Nr5Tv7Yu0Ab4Cd6Ef8Gh1Ij3Kl5Mn7Op9Qr",
    ),
    Secret("firebase-server-key", f"fcm send failed (401) using server key {_FIREBASE}", _FIREBASE),
    # Azure: a Service Bus connection string, an Entra ID client secret, a DevOps PAT in a git URL
    Secret(
        "azure-service-bus-connection",
        "Endpoint=sb://ledger-bus.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;"
        "SharedAccessKey=q8Z3xY5wV7uT9sR1pO3nM5lK7jH9gF1dS3aA5zX7cV9=",
        "q8Z3xY5wV7uT9sR1pO3nM5lK7jH9gF1dS3aA5zX7cV9",
    ),
    Secret(
        "azure-entra-client-secret",
        "AADSTS7000215: Invalid client secret provided: Xk28Q~p9Lm3Nr5Tv7Yu0Ab4Cd6Ef8Gh1Ij3Kl5Mn",
        "Xk28Q~p9Lm3Nr5Tv7Yu0Ab4Cd6Ef8Gh1Ij3Kl5Mn",
    ),
    Secret(
        "azure-devops-pat-git-url",
        "git fetch https://build:x7k2m9p4q1w8e5r3t6y0u2i4o7p9a1s3d5f8g0h2j4k6l8z1x3@dev.azure.com/acme/ledger/_git/ledger",
        "x7k2m9p4q1w8e5r3t6y0u2i4o7p9a1s3d5f8g0h2j4k6l8z1x3",
    ),
    # Package registries: an .npmrc line (legacy UUID token), a PyPI token, a Docker Hub PAT on a login line
    Secret(
        "npmrc-auth-token-uuid",
        "//registry.npmjs.org/:_authToken=8f14e45f-ceea-467a-9af8-1b2c3d4e5f60",
        "8f14e45f-ceea-467a-9af8-1b2c3d4e5f60",
    ),
    Secret(
        "pypi-upload-token",
        "twine upload failed 403 with pypi-AgEIcHlwaS5vcmcCJDU0ZmQ2NDkzLWI1ZGQtNGZkZi05OTQxLWE4ZmI3OGZl",
        "pypi-AgEIcHlwaS5vcmcCJDU0ZmQ2NDkzLWI1ZGQtNGZkZi05OTQxLWE4ZmI3OGZl",
    ),
    Secret("docker-hub-pat-stdin", f"echo {_DOCKER_PAT} | docker login -u ci --password-stdin", _DOCKER_PAT),
    # Chat and notification webhooks and bots
    Secret(
        "discord-webhook",
        "POST https://discord.com/api/webhooks/112233445566778899/"
        "Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0LzXcVbNm_aB-cD returned 429",
        "Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0LzXcVbNm_aB-cD",
    ),
    Secret(
        "telegram-bot-token-url",
        "GET https://api.telegram.org/bot7012345678:AAHq9ZkL3mN5pR7tV9xZ1bD3fH5jL7nP9rT/sendMessage 409",
        "AAHq9ZkL3mN5pR7tV9xZ1bD3fH5jL7nP9rT",
    ),
    Secret(
        "slack-config-token",
        "slack manifest update: token xoxe.xoxp-1-Mi0yLTEyMzQ1Njc4OTAxMi0xMjM0NTY3ODkwMTIzLTk4NzY1NDMyMTA expired",
        "Mi0yLTEyMzQ1Njc4OTAxMi0xMjM0NTY3ODkwMTIzLTk4NzY1NDMyMTA",
    ),
    Secret(
        "twilio-auth-in-url",
        "POST https://AC0123456789abcdef0123456789abcdef:9f8e7d6c5b4a39281706f5e4d3c2b1a0@api.twilio.com/"
        "2010-04-01 401",
        "9f8e7d6c5b4a39281706f5e4d3c2b1a0",
    ),
    # SaaS API tokens by their documented prefixes
    Secret(
        "shopify-admin-token",
        "shopify 401 for 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",
        "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",
    ),
    Secret(
        "atlassian-api-token",
        "jira: basic auth failed with ATATT3xFfGF0Zk9Lm2Np4Rt6Vx8Za0Cb2De4Fg6Hi8Jk0Lm2No4Pq6Rs8Tu0=1A2B3C4D",
        "ATATT3xFfGF0Zk9Lm2Np4Rt6Vx8Za0Cb2De4Fg6Hi8Jk0Lm2No4Pq6Rs8Tu0",
    ),
    Secret(
        "digitalocean-token",
        "doctl: unable to authenticate with dop_v1_3f9a1c7e5b2d4f6a8c0e1b3d5f7a9c2e4b6d8f0a1c3e5b7d9f1a3c5e7b9d1f3a",
        "dop_v1_3f9a1c7e5b2d4f6a8c0e1b3d5f7a9c2e4b6d8f0a1c3e5b7d9f1a3c5e7b9d1f3a",
    ),
    Secret(
        "grafana-service-account-token",
        "grafana api 401 for glsa_Zk9Lm2Np4Rt6Vx8Za0Cb2De4Fg6Hi8Jk_1a2b3c4d",
        "glsa_Zk9Lm2Np4Rt6Vx8Za0Cb2De4Fg6Hi8Jk_1a2b3c4d",
    ),
    Secret(
        "datadog-api-key-header",
        "curl -X POST https://api.datadoghq.eu/api/v2/series -H 'DD-API-KEY: 0f1e2d3c4b5a69788796a5b4c3d2e1f0' -d @-",
        "0f1e2d3c4b5a69788796a5b4c3d2e1f0",
    ),
    Secret(
        "newrelic-user-key",
        "newrelic graphql 403 for NRAK-7XK3P9QZ1LM5N8R2T4V6W0Y3A5C",
        "NRAK-7XK3P9QZ1LM5N8R2T4V6W0Y3A5C",
    ),
    Secret(
        "databricks-token",
        "databricks-cli: Error 403 with token dapi0123456789abcdef0123456789abcdef-3",
        "dapi0123456789abcdef0123456789abcdef",
    ),
    Secret("age-secret-key", f"sops: failed to decrypt with {_AGE_KEY}", _AGE_KEY),
    # Basic auth and passwords on command lines (long flags, other tools)
    Secret(
        "curl-user-long-flag-equals",
        "exec curl --user=admin:Cu7l-l0ng-pw-51 https://ledger-admin.internal/flush exited 7",
        "Cu7l-l0ng-pw-51",
    ),
    Secret("sshpass-flag", "run: sshpass -p 'Ssh-p4ss-9913' ssh ops@bastion uptime", "Ssh-p4ss-9913"),
    Secret("redis-cli-a-flag", "healthcheck: redis-cli -h cart-redis -a R3d1s-cl1-pw-44 ping", "R3d1s-cl1-pw-44"),
    Secret(
        "wget-http-password", "wget --http-user=ops --http-password=Wg3t-pw-2287 https://ledger/export", "Wg3t-pw-2287"
    ),
    # Secrets in environment assignments (shell, Dockerfile, systemd)
    Secret("export-pgpassword-quoted", "entrypoint: export PGPASSWORD='pg-3xp0rt-pw-19'; exec psql", "pg-3xp0rt-pw-19"),
    Secret("mysql-pwd-env", "MYSQL_PWD=My-pwd-env-6620 mysqladmin ping", "My-pwd-env-6620"),
    Secret("rediscli-auth-env", "env REDISCLI_AUTH=R3dis-auth-env-71 redis-cli ping", "R3dis-auth-env-71"),
    Secret(
        "systemd-environment",
        'Environment="LEDGER_DB_PASS=Sysd-env-pw-3384" "LEDGER_PORT=8080"',
        "Sysd-env-pw-3384",
    ),
    # DSNs without a scheme's user-info, or with several hosts
    Secret(
        "rediss-default-user",
        f"dial rediss://default:{_REDIS_URL_PW}@eu1-cart.upstash.io:6379 i/o timeout",
        _REDIS_URL_PW,
    ),
    Secret(
        "mongodb-multi-host",
        "MongoServerSelectionError: mongodb://ledger:M0ng0-multi-pw-5@mongo-0:27017,mongo-1:27017/?replicaSet=rs0",
        "M0ng0-multi-pw-5",
    ),
    Secret(
        "go-mysql-dsn-no-scheme",
        "sql: open ledger:G0-mysql-dsn-pw@tcp(ledger-db:3306)/ledger?parseTime=true: connection refused",
        "G0-mysql-dsn-pw",
    ),
    Secret(
        "oracle-ezconnect",
        "ORA-12541: TNS:no listener (connect ledger/Or4cle-ez-pw-6@//ledger-ora:1521/LEDGER)",
        "Or4cle-ez-pw-6",
    ),
    Secret(
        "libpq-keyword-dsn",
        "pq: could not connect (host=ledger-pg port=5432 user=ledger password=Lib-pq-kv-pw-90 dbname=ledger)",
        "Lib-pq-kv-pw-90",
    ),
    Secret(
        "odbc-connection-string",
        "[unixODBC] Driver={ODBC Driver 18 for SQL Server};Server=ledger-sql;Uid=sa;Pwd=0dbc-Pwd-4421;Encrypt=yes",
        "0dbc-Pwd-4421",
    ),
    Secret(
        "kafka-jaas-config",
        "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
        f'username="ledger" password="{_KAFKA_PW}";',
        _KAFKA_PW,
    ),
    Secret("amqps-vhost", "amqps://ledger:Amqps-vh-pw-12@mq.internal:5671/%2Fledger closed", "Amqps-vh-pw-12"),
    # Private keys in other armours
    Secret(
        "putty-private-key",
        "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: ops\nPublic-Lines: 2\nAAAAC3NzaC1lZDI1NTE5\n"
        f"AAAAIJ\nPrivate-Lines: 1\n{_PUTTY_LINE}\nPrivate-MAC: 5f1c",
        _PUTTY_LINE,
    ),
    Secret(
        "ssh2-encrypted-private-key",
        f'---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\nComment: "ops"\n{_SSH2_LINE}\n'
        "---- END SSH2 ENCRYPTED PRIVATE KEY ----",
        _SSH2_LINE,
    ),
    Secret(
        "pem-with-encryption-headers",
        "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\n"
        "DEK-Info: AES-128-CBC,0F1E2D3C4B5A69788796A5B4C3D2E1F0\n\n"
        f"{_ENCRYPTED_PEM_LINE}\n-----END RSA PRIVATE KEY-----",
        _ENCRYPTED_PEM_LINE,
    ),
    Secret(
        "pem-crlf-escaped-one-line",
        f'tls: failed to parse key \\"-----BEGIN EC PRIVATE KEY-----\\r\\n{_ENCRYPTED_PEM_LINE[::-1]}\\r\\n\\"',
        _ENCRYPTED_PEM_LINE[::-1],
    ),
    # JWTs in cookies, unsigned, in a URL fragment
    Secret(
        "jwt-set-cookie-attrs",
        f"upstream set session={_JWT_COOKIE}; Path=/; HttpOnly; Secure",
        _JWT_COOKIE.split(".")[1],
    ),
    Secret(
        "jwt-alg-none",
        f"accepted unsigned token {_JWT_NONE} for ledger-admin",
        "eyJzdWIiOiJsZWRnZXItYWRtaW4iLCJyb2xlIjoib3BzIn0",
    ),
    Secret(
        "oauth-token-in-fragment",
        "redirect to https://ops.acme.io/cb#access_token=Fr4gm3nt-t0k3n-7Qz9&token_type=bearer&expires_in=3600",
        "Fr4gm3nt-t0k3n-7Qz9",
    ),
    # Config formats: XML, .NET app settings, Java properties, INI
    Secret(
        "xml-password-element",
        "<datasource><user>ledger</user><password>Xml-pw-el-5531</password></datasource>",
        "Xml-pw-el-5531",
    ),
    Secret(
        "dotnet-appsetting",
        '<add key="Payments:ApiKey" value="N3t-4pp-k3y-2290" />',
        "N3t-4pp-k3y-2290",
    ),
    Secret(
        "spring-datasource-property",
        "spring.datasource.password=Spr1ng-ds-pw-66",
        "Spr1ng-ds-pw-66",
    ),
    Secret(
        "helm-set-flag",
        "helm upgrade ledger ./chart --set postgresql.auth.postgresPassword=H3lm-set-pw-08",
        "H3lm-set-pw-08",
    ),
    Secret(
        "basic-auth-base64-of-user-colon-pw",
        json.dumps({"proxy": {"header": "Basic " + base64.b64encode(b"ops:B4sic-json-pw-3").decode()}}),
        base64.b64encode(b"ops:B4sic-json-pw-3").decode().rstrip("="),
    ),
]
BY_KIND = {s.kind: s for s in SECRETS}
assert len(BY_KIND) == len(SECRETS)

# Texts that hold no secret: kept as written in the store (a redaction there is a false positive).
READABLE = [
    "password reset mail queued for user 4411",
    "token bucket refilled: 200 of 200 tokens",
    "session affinity: ClientIP, timeoutSeconds=10800",
    "secretRef cart-svc-db not found in namespace shop",
    "GET /api/v1/keys?page=2 200",
    "sk_live mode disabled for this tenant",
    "connected to mongodb://mongo-0:27017,mongo-1:27017/?replicaSet=rs0",
    "x-request-id: 6c1f9e2a-77b0-4c1e-9a5e-2f4b8d1c3e77",
]
