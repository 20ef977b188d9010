"""Each secret format the redaction knows is found in its carriers, and ordinary ops text around it is not (R-C-2).

The tokens are built here from their issuers' documented shapes (prefix, charset, length) with a seeded generator:
none is a real credential.
"""

from __future__ import annotations

import base64
import json
import random
import string

import pytest

from diagnosis_server.conversions import JsonValue
from diagnosis_server.text.redaction import REDACTED, Redactor, redact_text

_RNG = random.Random(20260311)
_BASE62 = string.ascii_letters + string.digits
_B64URL = _BASE62 + "_-"


def _chars(alphabet: str, n: int) -> str:
    return "".join(_RNG.choice(alphabet) for _ in range(n))


def _b64url(data: JsonValue) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()


# Stripe: "sk_"/"rk_" (secret, restricted), "live"/"test", then base62 (24 to 99 characters); webhook "whsec_".
STRIPE_SECRET = f"sk_live_{_chars(_BASE62, 99)}"
STRIPE_TEST = f"sk_test_{_chars(_BASE62, 24)}"
STRIPE_RESTRICTED = f"rk_live_{_chars(_BASE62, 99)}"
STRIPE_WEBHOOK = f"whsec_{_chars(_BASE62, 32)}"
# SendGrid: "SG.", a 22-character key id, ".", a 43-character secret (base64url; 69 characters in all).
SENDGRID = f"SG.{_chars(_B64URL, 22)}.{_chars(_B64URL, 43)}"
# npm (2021 format): "npm_" and 36 base62 characters (the last six a CRC32).
NPM = f"npm_{_chars(_BASE62, 36)}"
# Vault 1.10+: "hvs." service, "hvb." batch, "hvr." recovery tokens, then base62.
VAULT = [f"{prefix}{_chars(_BASE62 + '_-', 91)}" for prefix in ("hvs.", "hvb.", "hvr.")]
# Hugging Face user access tokens: "hf_" and 34 letters.
HUGGING_FACE = f"hf_{_chars(string.ascii_letters, 34)}"
JWT = ".".join(
    (_b64url({"alg": "RS256", "typ": "JWT"}), _b64url({"sub": "svc-cart", "exp": 1767225600}), _chars(_B64URL, 43))
)
AZURE_KEY = base64.b64encode(bytes(_RNG.randrange(256) for _ in range(64))).decode()
SAS_SIGNATURE = base64.b64encode(bytes(_RNG.randrange(256) for _ in range(32))).decode().replace("=", "%3D")
DOCKER_AUTH = base64.b64encode(b"ci-bot:r3g1stry-pw-20").decode()
_HEX = "0123456789abcdef"
_UPPER_ALNUM = string.ascii_uppercase + string.digits
# Google: OAuth client secrets "GOCSPX-" and 28 base64url; access tokens "ya29." and base64url (dots in some).
GOOGLE_CLIENT_SECRET = f"GOCSPX-{_chars(_B64URL, 28)}"
GOOGLE_ACCESS_TOKEN = f"ya29.c.b0{_chars(_B64URL, 120)}.{_chars(_BASE62, 40)}"
# Firebase Cloud Messaging legacy server key: "AAAA", 7 characters, ":APA91b", then base64url.
FIREBASE = f"AAAA{_chars(_B64URL, 7)}:APA91b{_chars(_B64URL, 134)}"
# Microsoft Entra ID client secret (40 characters): 3, a digit, "Q~", 34 of base64url, '~' and '.'.
ENTRA = f"{_chars(_BASE62, 3)}{_RNG.randrange(10)}Q~{_chars(_B64URL + '~.', 33)}{_chars(_BASE62, 1)}"
# PyPI: "pypi-" and a base64url macaroon whose first bytes make "AgEIcHlwaS5vcmc" (pypi.org).
PYPI = f"pypi-AgEIcHlwaS5vcmc{_chars(_B64URL, 160)}"
# Docker Hub personal access tokens: "dckr_pat_" and 27 base64url characters.
DOCKER_PAT = f"dckr_pat_{_chars(_B64URL, 27)}"
# Discord webhook: a snowflake id and a 68-character token; Telegram bot token: id, ":", "AA" and 33 more.
DISCORD_TOKEN = _chars(_B64URL, 68)
TELEGRAM_TOKEN = f"AA{_chars(_B64URL, 32)}-"
# Shopify "shpat_" (admin API) and 32 hex; DigitalOcean "dop_v1_" and 64 hex.
SHOPIFY = f"shpat_{_chars(_HEX, 32)}"
DIGITALOCEAN = f"dop_v1_{_chars(_HEX, 64)}"
# Atlassian API tokens: "ATATT3" and base64url, "=" and an 8-hex checksum.
ATLASSIAN = f"ATATT3{_chars(_B64URL, 180)}={_chars(_HEX.upper(), 8)}"
# Grafana service account tokens: "glsa_", 32 base62, "_", an 8-hex checksum; New Relic user keys "NRAK-" and 27.
GRAFANA = f"glsa_{_chars(_BASE62, 32)}_{_chars(_HEX, 8)}"
NEW_RELIC = f"NRAK-{_chars(_UPPER_ALNUM, 27)}"
PUTTY_PRIVATE = _chars(_BASE62 + "+/", 64)
SSH2_LINE = _chars(_BASE62 + "+/", 64)

# (name, secret, text carrying it).
FOUND = [
    ("stripe secret", STRIPE_SECRET, f"stripe.error.AuthenticationError: Invalid API Key provided: {STRIPE_SECRET}"),
    ("stripe test", STRIPE_TEST, f"STRIPE_KEY={STRIPE_TEST} in the staging values"),
    ("stripe restricted", STRIPE_RESTRICTED, f"payout job uses {STRIPE_RESTRICTED}"),
    ("stripe webhook", STRIPE_WEBHOOK, f"No signatures found matching the expected signature ({STRIPE_WEBHOOK})"),
    ("sendgrid", SENDGRID, f"POST https://api.sendgrid.com/v3/mail/send 401 key {SENDGRID}"),
    ("npm", NPM, f"//registry.npmjs.org/:_authToken={NPM}"),
    ("npm bare", NPM, f"npm ERR! code E401 for {NPM}"),
    *((f"vault {t[:4]}", t, f"vault read secret/cart: 403 permission denied (token {t})") for t in VAULT),
    ("hugging face", HUGGING_FACE, f"huggingface_hub.errors.HfHubHTTPError: 401 for {HUGGING_FACE}"),
    ("jwt percent-encoded dots", JWT.split(".")[1], "GET /cb?id_token=" + JWT.replace(".", "%2E") + " 302"),
    ("jwt lower-case %2e", JWT.split(".")[1], "redirect /cb/" + JWT.replace(".", "%2e")),
    ("jwt after %3D", JWT.split(".")[1], "next=%2Fcb%3Fjwt%3D" + JWT + " 302"),
    (
        "slack webhook escaped",
        "Qm9vTm9Pb3BzMTIzNDU2Nzg",
        r'{"webhook":"https:\/\/hooks.slack.com\/services\/T01ABCDEF\/B01ABCDEF\/Qm9vTm9Pb3BzMTIzNDU2Nzg"}',
    ),
    (
        "slack webhook escaped twice",
        "Qm9vTm9Pb3BzMTIzNDU2Nzg",
        json.dumps({"msg": r'{"url":"https:\/\/hooks.slack.com\/services\/T01A\/B01A\/Qm9vTm9Pb3BzMTIzNDU2Nzg"}'}),
    ),
    ("userinfo slash", "pa/ss+w=rd", "dial redis://default:pa/ss+w=rd@cache.shop.svc:6379/0: i/o timeout"),
    ("userinfo hash", "pa#ss#9", "amqp://cart:pa#ss#9@rabbitmq.shop.svc:5672/ connection refused"),
    ("userinfo question mark", "pa?ss9", "mongodb://cart:pa?ss9@mongo-0.mongo:27017/cart?authSource=admin"),
    ("userinfo at sign", "p@ss@word9", "postgres://cart:p@ss@word9@cart-db:5432/cart?sslmode=require"),
    ("userinfo escaped slashes", "esc-pw-31", r'{"dsn":"postgres:\/\/cart:esc-pw-31@cart-db:5432\/cart"}'),
    ("userinfo digits then letters", "1234abc/x", "redis://:1234abc/x@cache:6379"),
    ("curl -u", "curl-pw-77", "+ curl -sf -u deploy:curl-pw-77 https://nexus.acme.io/service/rest/v1/status"),
    ("curl -u attached", "curl-pw-78", "curl -udeploy:curl-pw-78 https://nexus.acme.io"),
    ("curl --user=", "curl-pw-79", "curl --user=deploy:curl-pw-79 https://nexus.acme.io"),
    ("curl --proxy-user", "proxy-pw-80", "curl --proxy-user ops:proxy-pw-80 -x http://proxy:3128 https://acme.io"),
    ("--password space", "flag-pw-81", "exec /app/migrate --password flag-pw-81 --host cart-db"),
    ("--db-password quoted", "flag pw 82", 'args: --db-password "flag pw 82" --verbose'),
    ("-storepass", "store-pw-83", "keytool -list -keystore ks.jks -storepass store-pw-83"),
    ("--token", "opaque-token-84", "helm repo add acme https://charts.acme.io --token opaque-token-84"),
    ("mysql -p", "MyPw-85", "mysql -h cart-db -uroot -pMyPw-85 cart < dump.sql"),
    ("mysqldump -p quoted", "My Pw 86", "mysqldump --single-transaction -u root -p'My Pw 86' cart | gzip"),
    ("mariadb -p", "Maria-87", "mariadb -u app -pMaria-87 -e 'select 1'"),
    ("redis-cli -a", "redis-88", "redis-cli -h cache -p 6379 -a redis-88 ping"),
    ("sshpass -p", "ssh-pw-89", "sshpass -p ssh-pw-89 ssh ops@bastion uptime"),
    ("netrc", "netrc-pw-90", "machine git.acme.io login ci password netrc-pw-90"),
    ("netrc default", "netrc-pw-91", "default login anonymous password netrc-pw-91"),
    ("ruby hash rocket", "rb-pw-92", 'production: {"password" => "rb-pw-92", "host" => "db"}'),
    ("ruby symbol", "rb-key-93", "Stripe.api_key => 'rb-key-93'"),
    (
        "azure account key",
        AZURE_KEY,
        f"DefaultEndpointsProtocol=https;AccountName=cartlogs;AccountKey={AZURE_KEY};EndpointSuffix=core.windows.net",
    ),
    (
        "azure service bus",
        "c2VydmljZWJ1cy1rZXktOTQ",
        "Endpoint=sb://cart.servicebus.windows.net/;SharedAccessKeyName=send;SharedAccessKey=c2VydmljZWJ1cy1rZXktOTQ",
    ),
    (
        "azure sas",
        SAS_SIGNATURE,
        f"GET https://cart.blob.core.windows.net/exports/a.csv?sv=2022-11-02&sr=b&sp=r&sig={SAS_SIGNATURE} 403",
    ),
    ("docker auth", DOCKER_AUTH, json.dumps({"auths": {"ghcr.io": {"auth": DOCKER_AUTH}}})),
    ("docker auth escaped", DOCKER_AUTH, json.dumps({"msg": json.dumps({"auths": {"x.io": {"auth": DOCKER_AUTH}}})})),
    ("json numeric password", "73920415", json.dumps({"db": {"password": 73920415}})),
    ("json list password", "list-pw-95", json.dumps({"db_password": ["list-pw-95"]})),
    ("json nested password", "nest-pw-96", json.dumps({"password": {"value": "nest-pw-96"}})),
    ("google oauth client secret", GOOGLE_CLIENT_SECRET, f"oauth2: invalid_client for {GOOGLE_CLIENT_SECRET}"),
    ("google access token", GOOGLE_ACCESS_TOKEN, f"storage 401 with {GOOGLE_ACCESS_TOKEN}."),
    ("firebase server key", FIREBASE, json.dumps({"fcm": {"key": FIREBASE}})),
    ("entra client secret", ENTRA, f"AADSTS7000215: Invalid client secret provided: '{ENTRA}'"),
    ("pypi token", PYPI, f"twine upload -u __token__ -p {PYPI} dist/*"),
    ("docker hub pat", DOCKER_PAT, f"echo {DOCKER_PAT} | docker login -u ci --password-stdin"),
    (
        "discord webhook",
        DISCORD_TOKEN,
        f"POST https://discord.com/api/webhooks/1122334455667788990/{DISCORD_TOKEN} 429",
    ),
    (
        "discord webhook escaped",
        DISCORD_TOKEN,
        json.dumps({"hook": f"https:\\/\\/discordapp.com\\/api\\/webhooks\\/112233445566778899\\/{DISCORD_TOKEN}"}),
    ),
    ("telegram bot url", TELEGRAM_TOKEN, f"GET https://api.telegram.org/bot7012345678:{TELEGRAM_TOKEN}/getUpdates 409"),
    ("telegram bot token", TELEGRAM_TOKEN, f"TELEGRAM={'123456789'}:{TELEGRAM_TOKEN} rejected"),
    ("shopify", SHOPIFY, f"shopify 401 for {SHOPIFY}"),
    ("atlassian", ATLASSIAN, f"jira: basic auth failed with {ATLASSIAN}"),
    ("digitalocean", DIGITALOCEAN, f"doctl auth init -t {DIGITALOCEAN}"),
    ("grafana", GRAFANA, f"grafana api 401 for {GRAFANA}"),
    ("new relic", NEW_RELIC, f"newrelic graphql 403 for {NEW_RELIC}"),
    ("rediscli_auth env", "r3dis-env-71", "env REDISCLI_AUTH=r3dis-env-71 redis-cli -h cache ping"),
    ("redis-cli AUTH", "r3dis-auth-72", "redis-cli -h cache AUTH default r3dis-auth-72 | grep OK"),
    ("redis prompt AUTH", "r3dis-auth-73", "127.0.0.1:6379> auth r3dis-auth-73"),
    ("go mysql dsn", "g0-dsn-pw-74", "sql: open ledger:g0-dsn-pw-74@tcp(ledger-db:3306)/ledger?parseTime=true"),
    ("go mysql dsn at sign", "g0@dsn-75", "dsn=app:g0@dsn-75@unix(/run/mysqld/mysqld.sock)/app"),
    ("oracle ezconnect", "0ra-ez-pw-76", "sqlplus -s ledger/0ra-ez-pw-76@//ledger-ora:1521/LEDGER"),
    ("oracle ezconnect quoted", "0ra p@ss 77", 'connect ledger/"0ra p@ss 77"@//ledger-ora/LEDGER'),
    ("oracle jdbc thin", "jdbc-pw-78", "url=jdbc:oracle:thin:ledger/jdbc-pw-78@ledger-ora:1521:ORCL"),
    ("oracle net service name", "t1ger-pw-79", "sqlplus -s scott/t1ger-pw-79@ORCL @report.sql"),
    ("oracle connect alias", "l3dger-pw-80", "SQL> CONNECT ledger/l3dger-pw-80@LEDGERPRD"),
    ("oracle expdp no alias", "exp-pw-81", "expdp system/exp-pw-81 DIRECTORY=dp FULL=y"),
    (
        "putty private key",
        PUTTY_PRIVATE,
        "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: ops\nPublic-Lines: 1\nAAAAC3NzaC1lZDI1NTE5\n"
        f"Private-Lines: 1\n{PUTTY_PRIVATE}\nPrivate-MAC: {_chars(_HEX, 64)}",
    ),
    (
        "ssh2 private key",
        SSH2_LINE,
        f'---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\nComment: "ops"\n{SSH2_LINE}\n'
        "---- END SSH2 ENCRYPTED PRIVATE KEY ----",
    ),
    ("xml password element", "xml-pw-79", "<datasource><user>app</user><password>xml-pw-79</password></datasource>"),
    ("xml secret element attrs", "xml-key-80", '<ClientSecret encrypted="false">xml-key-80</ClientSecret>'),
    ("xml cdata", "xml p&w 81", "<db:password><![CDATA[xml p&w 81]]></db:password>"),
    ("dotnet appsetting", "n3t-key-82", '<add key="Payments:ApiKey" value="n3t-key-82" />'),
    ("dotnet appsetting single", "n3t-pw-83", "<add key='Smtp.Password' value='n3t-pw-83'/>"),
    ("dotnet appsetting escaped", "n3t-tk-84", json.dumps({"cfg": '<add key="Bot:Token" value="n3t-tk-84"/>'})),
]


@pytest.mark.requirement("R-C-2")
@pytest.mark.parametrize(("name", "secret", "text"), FOUND, ids=[name for name, _, _ in FOUND])
def test_a_secret_in_its_documented_format_is_redacted(name: str, secret: str, text: str) -> None:
    redacted = Redactor().text(text)
    assert secret not in redacted and REDACTED in redacted, redacted
    assert secret not in redact_text(text)


def test_a_redacted_text_keeps_what_is_around_the_secret() -> None:
    """Only the secret goes: the flag, the user, the host and the rest of the line stay readable."""
    redact = Redactor().text
    assert redact("curl -u deploy:pw-1234 https://a.io") == f"curl -u deploy:{REDACTED} https://a.io"
    assert redact("migrate --password pw-1234 --host db") == f"migrate --password {REDACTED} --host db"
    assert redact("mysql -uroot -ppw-1234 cart") == f"mysql -uroot -p{REDACTED} cart"
    assert redact("redis://:a/b@cache:6379/0") == f"redis://{REDACTED}@cache:6379/0"
    assert redact("postgres://u:p@ss@db/x?to=a@b") == f"postgres://{REDACTED}@db/x?to=a@b"
    assert redact(f"x {STRIPE_SECRET} y") == f"x {REDACTED} y"
    assert redact("GET /cb/" + JWT.replace(".", "%2E") + " 302") == f"GET /cb/{REDACTED} 302"
    assert redact("a?sv=1&sig=c2lnbmF0dXJl%3D&se=2") == f"a?sv=1&sig={REDACTED}&se=2"


# Ordinary ops text: none of it is a secret, and all of it must read as written.
_UUID = "0c3b7e0e-1111-4222-8333-944455556666"
_SHA = "3f786850e387550fdab836ed7e6dc881de23001b"
READABLE = [
    "GET /api/v1/orders/1234 200 12ms",
    # a word after "token", "bearer" or "basic" is no credential
    "token validation failed for user deploy",
    "401 Unauthorized: invalid token signature",
    "Basic authentication required for /admin",
    "token refreshed successfully; bearer token-expiry in 300s",
    'level=info msg="password reset email sent" user=42',
    "login failed: invalid password for user deploy",
    "the password policy requires 12 characters",
    "image registry.io/a/b:1.2.3 pulled in 2.1s",
    "Pulling image ghcr.io/acme/cart:v1.2.3@sha256:" + "a" * 64,
    "pod cart-svc-7f9c6d8b5-tr6zn in namespace shop is CrashLoopBackOff",
    f"uid {_UUID} assigned",
    f"deployed commit {_SHA} to prod",
    "URL https://cart.acme.io:8443/api/v1/orders?email=a@b.example 503",
    "scrape http://cart-svc.shop.svc:9090/metrics failed",
    r'{"url":"https:\/\/status.acme.io\/api\/v2\/summary.json"}',
    "docker run -p 8080:80 nginx:1.25",
    "kubectl port-forward svc/cart 8080:80 -n shop",
    "ssh -p 2222 ops@bastion uptime",
    "mysql -h cart-db -P 3306 -u root -p cart",
    "docker run -u 1000:1000 busybox id",
    "find /var/log -name '*.gz' -print",
    "dockerd --password-file /run/secrets/registry",
    "docker login --password-stdin ghcr.io",
    "kube-apiserver --token-ttl 300 --v=2",
    "node_disk_live_bytes_total 1.2e+09 and task_test_runs 4",
    "shelf_items 12 cached",
    "SG.1 replicas ready",
    "the machine restarted at 12:00",
    "--secret-name cart-db-creds mounted",
    "status=200 sig=ok",
    '{"auth": "required", "mode": "tls"}',
    # The new formats' negatives: a prefix without its token, a public part, a carrier without a password.
    "client secrets start with GOCSPX- and access tokens with ya29.",
    "fcm registration token prefix APA91b rotated on reinstall",
    "cd ~/ledger && echo 8Q~ is no secret",
    "pypi-AgE tokens are scoped per project",
    "dckr_pat_ tokens expire after 90 days",
    "see https://discord.com/api/webhooks for the docs",
    "bot 7012345678:offline since noon",
    "shpat_ and dop_v1_ and glsa_ and NRAK- are prefixes",
    "the ATATT3 prefix marks Atlassian API tokens",
    "redis-cli -h cache --no-auth-warning ping",
    "AUTH failed: WRONGPASS invalid username-password pair",
    "dial tcp(10.0.0.7:3306): connection refused for app@tcp(db:3306)/app",
    "docker pull library/nginx@sha256:" + "b" * 64,
    "npm i @acme/ui@1.4.2",
    "PuTTY-User-Key-File-3: ssh-ed25519",
    "---- BEGIN SSH2 PUBLIC KEY ----",
    "<user>ledger</user><tokenTTL>300</tokenTTL><passwordPolicy/>",
    '<add key="LogLevel" value="Debug" />',
]


@pytest.mark.parametrize("text", READABLE)
def test_ordinary_ops_text_reads_as_written(text: str) -> None:
    assert Redactor().text(text) == text
    assert redact_text(text) == text


def _configmap(data: dict[str, JsonValue]) -> JsonValue:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cart-config"}, "data": data}


def _secret(**fields: JsonValue) -> dict[str, JsonValue]:
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "cart-db"}, "type": "Opaque", **fields}


@pytest.mark.requirement("R-C-2")
def test_every_value_of_a_secret_object_is_redacted_whatever_its_key() -> None:
    encoded = base64.b64encode(b"postgres://cart:db-pw-97@cart-db/cart").decode()
    secret = _secret(data={"DATABASE_URL": encoded, "ca.crt": "LS0tLS1CRUdJTg=="}, stringData={"mode": "plain-pw-98"})
    redacted = Redactor().kubernetes(secret)
    kept = {"DATABASE_URL": REDACTED, "ca.crt": REDACTED}
    assert redacted == {**secret, "data": kept, "stringData": {"mode": REDACTED}}
    listed = Redactor().value({"kind": "SecretList", "items": [{"metadata": {"name": "x"}, "data": {"k": encoded}}]})
    assert encoded not in json.dumps(listed)
    # In any JSON value too (an MCP server answering with a Secret).
    assert encoded not in json.dumps(Redactor().value({"result": secret}))


def test_a_configmap_keeps_its_base64_and_ordinary_values() -> None:
    """Base64 of what is no secret (a JSON config, a certificate bundle's name) is a ConfigMap's business."""
    data: dict[str, JsonValue] = {
        "settings.json": base64.b64encode(b'{"log":"info"}').decode(),
        "feature.flags": "checkout_v2=on",
        "image": "registry.io/a/b:1.2.3",
    }
    assert Redactor().kubernetes(_configmap(data)) == _configmap(data)


@pytest.mark.requirement("R-C-2")
def test_what_a_secret_named_key_holds_is_redacted_whatever_its_json_type() -> None:
    value: JsonValue = {
        "db": {"user": "cart", "password": 73920415},
        "db_password": ["list-pw-95", "list-pw-99"],
        "password": {"value": "nest-pw-96", "previous": ["old-pw-1"], "rotated": 3},
        "client_secret": {"enabled": True, "expires": None},
    }
    assert Redactor().value(value) == {
        "db": {"user": "cart", "password": REDACTED},
        "db_password": [REDACTED, REDACTED],
        "password": {"value": REDACTED, "previous": [REDACTED], "rotated": REDACTED},
        "client_secret": {"enabled": True, "expires": None},
    }


def test_counts_and_settings_under_secret_named_keys_stay() -> None:
    """A number under a key that is no password's, and a setting about secrets, are not secrets."""
    value: JsonValue = {
        "max_tokens": 4096,
        "usage": {"prompt_tokens": 812, "completion_tokens": 64},
        "password_min_length": 12,
        "passwordPolicy": {"minLength": 12, "requireDigits": True},
        "token_bucket": {"capacity": 200},
    }
    assert Redactor().value(value) == value


def test_where_and_what_under_a_secret_named_key_stay() -> None:
    """A projected volume's token path and a credential's type say where and what, not the secret."""
    volume: JsonValue = {"serviceAccountToken": {"path": "token", "expirationSeconds": 3607, "audience": "api"}}
    credentials: JsonValue = {"credentials": {"type": "oauth2", "clientSecret": "cs-pw-77", "token": "t-100"}}
    assert Redactor().value(volume) == volume
    as_text = json.dumps({"credentials": {"type": "oauth2", "client_secret": "cs-pw-77"}})
    assert Redactor().text(as_text) == as_text.replace("cs-pw-77", REDACTED)
    assert Redactor().value(credentials) == {
        "credentials": {"type": "oauth2", "clientSecret": REDACTED, "token": REDACTED}
    }


def test_docker_auth_is_redacted_as_a_json_value() -> None:
    config: JsonValue = {"auths": {"ghcr.io": {"auth": DOCKER_AUTH, "email": "ci@acme.io"}}}
    assert Redactor().value(config) == {"auths": {"ghcr.io": {"auth": REDACTED, "email": "ci@acme.io"}}}
    # "auth" names a secret only as a string: an "auth" section is read as any other object.
    section: JsonValue = {"auth": {"type": "basic", "username": "grafana"}}
    assert Redactor().value(section) == section


@pytest.mark.parametrize(("name", "secret", "text"), FOUND, ids=[name for name, _, _ in FOUND])
def test_redacting_twice_changes_nothing_more(name: str, secret: str, text: str) -> None:
    """A recorded output redacted again (a replay, a display of a stored quote) keeps its markers as they were."""
    once = Redactor().text(text)
    assert Redactor().text(once) == once


def test_a_marker_read_as_a_list_is_left_alone() -> None:
    """'token: [REDACTED]' could read as a list whose first item is 'REDACTED': it is the marker, kept whole."""
    for text in ("failed to fetch oauth token: [REDACTED] status 401", 'API_TOKEN = [REDACTED]"API_TOKEN"]'):
        assert Redactor().text(text) == text


@pytest.mark.parametrize(
    ("name", "value", "kept"),
    [
        ("CART_SERVICE_ADDR", "cartservice:7070", True),
        ("DB_HOST", "orders-db.shop.svc", True),
        ("LEDGER_URL", "http://ledger-api.payments:8080/api/v1", True),
        ("DB_PASSWORD", "orders-db.shop.svc:5432", False),  # a name that names a secret
        ("DATABASE_URL", "postgres://app:s3cret@orders-db:5432/orders", False),  # user-info
        ("WEBHOOK", "hooks.example/T0AB12CD/B9XY87ZW/C1AXJpVLfMdQsXybI43Iplut", False),  # a token-like path
        ("CALLBACK", "http://notify:8080/hook?key=abc123", False),  # a query
        ("LOG_LEVEL", "debug", False),  # not an address: every other value stays hidden
    ],
)
def test_a_pods_env_keeps_a_plain_address_and_nothing_else(name: str, value: str, kept: bool) -> None:
    """Where a workload sends its calls is evidence (a caller configured with another service's address); any
    other env value is redacted."""
    pod: JsonValue = {"kind": "Pod", "spec": {"containers": [{"name": "app", "env": [{"name": name, "value": value}]}]}}
    out = Redactor().kubernetes(pod)
    shown = json.dumps(out)
    assert (value in shown) is kept and (REDACTED in shown) is not kept
