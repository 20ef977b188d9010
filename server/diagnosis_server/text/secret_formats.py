"""The secret formats redaction knows (R-C-2), as RE2 alternatives (linear time) with the literals each needs."""

from __future__ import annotations

from typing import Any

import re2

# Key words that name a secret, in a key of a pair, a flag or a JSON object ("DB_PASSWORD", "aws_secret_access_key",
# "X-Amz-Security-Token", "client-secret", "apiKey", Azure's "AccountKey").
SECRET_WORDS = (
    r"(?:password|passwd|passphrase|pwd|pass(?:[_.-]|\b)|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key"
    r"|account[_-]?key|credentials?|signature|session[_-]?id)"
)
_KEY_CHARS = r"[A-Za-z0-9_.-]"
# The quote that may close a key: none, "'", '"', or '\\"' (a JSON string escaped inside another).
_KEY_QUOTE = r"""(?:\\?["'])?"""
_SECRET_KEY = rf"(?i:{_KEY_CHARS}*{SECRET_WORDS}{_KEY_CHARS}*){_KEY_QUOTE}"
# Between a key and its value: "=", ":" or Ruby's "=>"; then, in JSON, the value may be a list's first item or a
# nested object's first value ('"password": ["..."]', '"password": {"value": "..."}').
_SEPARATOR = r"""\s*(?:=>|[=:])\s*(?:\[\s*|\{\s*\\?"[A-Za-z0-9_.-]{1,64}\\?"\s*:\s*)?"""
_HEADERS = r"(?:proxy-)?authorization|x-api-key|x-auth-token|x-vault-token|cookie|set-cookie"
# "://", also JSON-escaped once or more (":\/\/", ":\\\/\\\/").
_SCHEME = r"\b[a-zA-Z][a-zA-Z0-9+.-]*:\\*/\\*/"
# RFC 3986 user-info "user:password@host". A password may hold '/', '?', '#' unescaped (clients split at the last
# '@' before the host); one that starts as a port does ("host:8443/path?to=a@b" is no user-info). Quotes and
# angle brackets end it (the URL inside a JSON string or a tag).
_USER = r"""[^/\s:@?#"'<>`\\]*"""
_NOT_PASSWORD = r"""\s@"'<>`"""
_PASSWORD = (
    rf"(?:[^{_NOT_PASSWORD}0-9][^{_NOT_PASSWORD}]*|[0-9]+(?:[^{_NOT_PASSWORD}/?#0-9][^{_NOT_PASSWORD}]*)?)?"
    rf"(?:@[^{_NOT_PASSWORD}/?#\\]*)*"
)
# Issuers' documented token formats, each a prefix and its charset (and length where documented).
_VENDOR_TOKENS = (
    r"gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}",  # GitHub
    r"gl(?:pat|dt|rt|ptt|cbt|oas|soat|ffct|imt|agent)-[A-Za-z0-9_-]{20,}",  # GitLab
    r"xox[abposer]-[A-Za-z0-9-]{10,}|xapp-[0-9]-[A-Za-z0-9-]{10,}",  # Slack
    r"sk-[A-Za-z0-9_-]{20,}",  # OpenAI, Anthropic
    r"(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|APKA|AROA|ASCA)[0-9A-Z]{16}",  # AWS key ids
    r"AIza[0-9A-Za-z_-]{35}",  # Google API keys
    r"(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{10,}",  # Stripe secret and restricted keys
    r"whsec_[A-Za-z0-9+/=]{20,}",  # Stripe webhook signing secrets
    r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}",  # SendGrid (69 characters)
    r"npm_[A-Za-z0-9]{36}",  # npm (30 random, 6 CRC32, base62)
    r"hv[sbr]\.[A-Za-z0-9_-]{24,}",  # HashiCorp Vault service, batch, recovery tokens
    r"hf_[A-Za-z0-9]{30,}",  # Hugging Face user access tokens
    r"GOCSPX-[A-Za-z0-9_-]{24,}",  # Google OAuth client secrets
    r"ya29\.[A-Za-z0-9_.-]{19,}[A-Za-z0-9_]",  # Google OAuth access tokens ("ya29.a0...", "ya29.c.b0...")
    r"[A-Za-z0-9_-]{4,}:APA91b[A-Za-z0-9_-]{20,}",  # Firebase Cloud Messaging server keys ("AAAA...:APA91b...")
    r"pypi-AgE[A-Za-z0-9_-]{30,}",  # PyPI API tokens (a macaroon, base64url: "pypi-AgEIcHlwaS5vcmc...")
    r"dckr_(?:pat|oat)_[A-Za-z0-9_-]{20,}",  # Docker Hub personal and organization access tokens
    r"shp(?:at|ca|pa|ss)_[A-Fa-f0-9]{32}",  # Shopify access tokens (admin, custom app, private app, shared secret)
    r"ATATT3[A-Za-z0-9_-]{20,}(?:=[A-Fa-f0-9]{8})?",  # Atlassian API tokens (their CRC32 after "=")
    r"do[opr]_v1_[a-f0-9]{64}",  # DigitalOcean personal, OAuth and refresh tokens
    r"glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|glc_[A-Za-z0-9_+/-]{32,}",  # Grafana service account, Cloud tokens
    r"NRAK-[A-Z0-9]{27}|NRI[IQ]-[A-Za-z0-9_-]{28,}",  # New Relic user keys, insights insert and query keys
)
# Command-line flags whose name names a secret, then a space: "--password pw", "-storepass pw", "--token t".
_FLAG = rf"(?:^|\s)--?(?i:[A-Za-z0-9_-]*{SECRET_WORDS}[A-Za-z0-9_-]*)\s+"
_FLAG_VALUE = r"""[^\s"'-][^\s"']*|"[^"\r\n]*"|'[^'\r\n]*'"""
# An XML element or a .NET setting whose name names a secret ("<password>", "<add key="Payments:ApiKey" ...>").
_XML_NAME = rf"(?i:[A-Za-z0-9_.:-]*{SECRET_WORDS}[A-Za-z0-9_.:-]*)"
# The characters of a Microsoft Entra ID client secret (3 characters, a digit, "Q~", 31 to 34 more).
_ENTRA = r"A-Za-z0-9_~.-"

# Each alternative names the part it redacts: the whole match, or one group of it (the rest is kept).
ALTERNATIVES = [
    # A PEM (or PGP) private key block, up to its END line or, cut short, to the end of the text.
    r"(?P<pem>-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?s:.*?)(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
    r"|\z))",
    # An SSH2 (RFC 4716, SSH.com) private key block, up to its END line or, cut short, to the end of the text.
    r"(?P<ssh2>---- BEGIN SSH2 [A-Z0-9 ]*PRIVATE KEY ----(?s:.*?)(?:---- END SSH2 [A-Z0-9 ]*PRIVATE KEY ----|\z))",
    # A PuTTY key file's private part: "Private-Lines: N", its lines and the MAC after them (the header and the
    # public lines before it stay: the header is matched whole and kept, so "Key-File-3" is read as no key-like word).
    r"(?P<putty>Private-Lines:[ \t]*[0-9]+(?s:.*?)(?:Private-(?:MAC|Hash):[ \t]*[0-9A-Fa-f]*|\z))"
    r"|PuTTY-User-Key-File-[0-9]+:",
    # RFC 7519: three base64url parts, the first (a JOSE header) a JSON object, so "eyJ"; dots percent-encoded too,
    # and the token right after a percent-encoded delimiter ("token%3DeyJ...").
    r"(?:\b|%[0-9A-Fa-f]{2})(?P<jwt>eyJ[A-Za-z0-9_-]{4,}(?:\.|%2[Ee])[A-Za-z0-9_-]{4,}(?:\.|%2[Ee])[A-Za-z0-9_-]*)",
    # HTTP credentials headers (RFC 9110 section 11.6.2, 11.7.2; cookies RFC 6265): the value to the line's end.
    rf"(?i:\b(?:{_HEADERS}))[\"']?\s*[:=]\s*[\"']?(?P<header>[^\r\n\"']+)",
    # RFC 6750 (Bearer), RFC 7617 (Basic) and GitHub's "token" scheme.
    r"\b(?i:bearer|basic|token)\s+(?P<credential>[A-Za-z0-9._~+/=-]{8,})",
    # RFC 3986 user-info before the host: "scheme://user:password@" (and "scheme://token@").
    rf"{_SCHEME}(?P<userinfo>{_USER}:{_PASSWORD}|[^/\s:@?#\\]{{16,}})@",
    # Slack incoming webhooks: https://hooks.slack.com/services/T.../B.../secret (the path is the credential), also
    # JSON-escaped once or more ("hooks.slack.com\/services\/...").
    r"hooks\.slack\.com\\*/(?:services|workflows|triggers)\\*/(?P<hook>(?:[A-Za-z0-9_-]|\\*/){8,})",
    # Discord webhooks: https://discord.com/api/webhooks/<id>/<token> (the token is the credential), also
    # JSON-escaped.
    r"discord(?:app)?\.com\\*/api\\*/(?:v[0-9]{1,2}\\*/)?webhooks\\*/[0-9]{15,21}\\*/(?P<discord>[A-Za-z0-9_-]{20,})",
    # Telegram bot tokens: "<bot id>:AA<33 characters>", in a Bot API path ("/bot<id>:<token>/sendMessage") too.
    r"(?:/bot|\b)[0-9]{6,12}:(?P<telegram>AA[A-Za-z0-9_-]{33})(?:\z|[^A-Za-z0-9_-])",
    # Microsoft Entra ID client secrets: "xxx8Q~..." (no word boundary: '~', '.' and '-' are in its charset).
    rf"(?:\A|[^{_ENTRA}])(?P<entra>[{_ENTRA}]{{3}}[0-9]Q~[{_ENTRA}]{{31,34}})(?:\z|[^{_ENTRA}])",
    # Go's MySQL DSN, without a scheme: "user:password@tcp(host:3306)/db" (the password to the last '@').
    r"""[A-Za-z0-9_.+-]*:(?P<godsn>[^\s"']+?)@(?:tcp[46]?|unix)\(""",
    # Oracle EZConnect "user/password@//host:1521/service" and the JDBC thin driver's "user/password@host...".
    r"""[A-Za-z0-9_$#.]+/(?P<oracle>[^\s"'/@]+|"[^"\r\n]*")@//""",
    r"""(?i:jdbc:oracle:thin:)[A-Za-z0-9_$#.]+/(?P<jdbcoracle>[^\s"'/@]+|"[^"\r\n]*")@""",
    # An XML element whose name names a secret, to the next tag: "<password>pw</password>", CDATA too.
    rf"<{_XML_NAME}(?:\s[^<>]*)?>(?:<!\[CDATA\[(?P<xmlcdata>[^\]\r\n]+)\]\]>|(?P<xml>[^<\r\n]+))</",
    # A .NET appSettings entry: <add key="Payments:ApiKey" value="..."/>, its quotes escaped in JSON too.
    rf"""<add\s+key\s*=\s*(?:\\?"{_XML_NAME}\\?"|'{_XML_NAME}')\s+value\s*=\s*"""
    r"""(?:\\?"(?P<appsetting>[^"\\\r\n]+)\\?"|'(?P<appsetting_sq>[^'\r\n]+)')""",
    # Vendors' token formats.
    rf"\b(?P<vendor>{'|'.join(_VENDOR_TOKENS)})\b",
    # A key-like word ("sk-live-...", "token-ab12cd34..."): redacted when it holds a digit ("token-bucket" stays).
    r"\b(?i:sk|key|token)-(?P<keylike>[A-Za-z0-9_-]{6,})",
    # A Docker config's "auth": base64 of "user:password".
    r"""\\?["']auth\\?["']\s*:\s*\\?["'](?P<dockerauth>[A-Za-z0-9+/]{12,}={0,2})""",
    # An Azure (or any) shared access signature in a query: "&sig=...".
    r"[?&;](?i:sig)=(?P<sas>[^&\s\"'#;]{8,})",
    # Basic credentials on a command line: "curl -u user:password", "--proxy-user user:password".
    r"""(?:^|\s)(?:-[uU]\s*|--(?:proxy-)?user(?:\s+|=))["']?(?P<cliuser_name>[^\s:"'@/]+):(?P<cliuser>[^\s"']+)""",
    # A secret-named flag and its value after a space ("--password pw"; "--password=pw" is a pair).
    rf"{_FLAG}(?P<flag>{_FLAG_VALUE})",
    # A .netrc entry: "machine host login user password pw" (also "default ... password pw").
    r"\b(?:machine\s+\S+|default)\s+(?:(?:login|account)\s+\S+\s+){0,2}password\s+(?P<netrc>\S+)",
    # A quoted value after a secret-named key, spaces and all, to its closing quote: "DB_PASSWORD: 'pw 4471'",
    # '"password": "..."', '"password" => "..."' and the same escaped inside a JSON string ('\\"secret\\":\\"...\\"').
    rf"{_SECRET_KEY}{_SEPARATOR}"
    r"(?:'(?P<sq>[^'\r\n]+)'|\"(?P<dq>(?:[^\"\\\r\n]|\\[^\r\n])+)\"|\\\"(?P<eq>(?:[^\"\\\r\n]|\\[^\"\r\n])+)\\\")",
    # "password=...", "api_key: ...", '"token": "..."', "?access_token=...&": the value, not the key.
    rf"{_SECRET_KEY}{_SEPARATOR}(?:\\?\")?(?P<pair>[^\s\"',;&)}}\]\\]{{4,}})",
]
# The groups an alternative redacts, in the pattern's order.
VALUE_GROUPS = (
    "pem", "ssh2", "putty", "jwt", "header", "credential", "userinfo", "hook", "discord", "telegram", "entra", "godsn",
    "oracle", "jdbcoracle", "xmlcdata", "xml", "appsetting", "appsetting_sq", "vendor", "keylike", "dockerauth", "sas",
    "cliuser", "flag", "netrc", "sq", "dq", "eq", "pair",
)  # fmt: skip
PATTERN: Any = re2.compile("|".join(ALTERNATIVES))

# Every alternative of the pattern holds one of these (compared lower-case): a text holding none cannot match,
# and most strings of an answer hold none (the test of the markers checks that they cover every alternative).
PATTERN_MARKERS = (
    "-----begin", "eyj", "authorization", "x-api-key", "x-auth-token", "x-vault-token", "cookie", "bearer",
    "basic", "token", "://", ":\\", "hooks.slack.com", "gh", "github_pat_", "gl", "xox", "xapp-", "sk-", "akia",
    "asia", "abia", "acca", "agpa", "aida", "aipa", "anpa", "anva", "apka", "aroa", "asca", "aiza", "sk_", "rk_",
    "whsec_", "sg.", "npm_", "hvs.", "hvb.", "hvr.", "hf_", "\"auth", "'auth", "sig=", "-u", "pass", "pwd", "secret",
    "key", "credential", "signature", "session", "---- begin ssh2", "private-lines:", "putty-user-key-file-",
    "discord", ":aa", "q~", "@tcp", "@unix(", "@//", "oracle:thin:", "gocspx-", "ya29.", ":apa91b", "pypi-age",
    "dckr_", "shpat_", "shpca_", "shppa_", "shpss_", "atatt3", "dop_v1_", "doo_v1_", "dor_v1_", "glsa_", "glc_",
    "nrak-", "nrii-", "nriq-",
)  # fmt: skip

# Passwords a command line carries in a flag only its tool reads so: mysql's "-p<password>" (attached; "-p 8080"
# or "-P3306" elsewhere is a port), redis-cli's "-a <password>", sshpass's "-p <password>". The tool named first,
# then the flag in the same command (up to a pipe, ';', '&' or the line's end).
_CLI_VALUE = r"""'[^'\r\n]*'|"[^"\r\n]*"|[^\s'"]+"""
_REDIS_AUTH_VALUE = r"""'[^'\r\n]*'|"[^"\r\n]*"|[^\s'"|;&]+"""
COMMAND_ALTERNATIVES = [
    r"\b(?:mysql(?:dump|admin|import|show|check|pump|sh|binlog)?|mariadb(?:-?dump|-?admin)?)\b[^\r\n|;&]*?"
    rf"\s-p(?P<mysql>{_CLI_VALUE})",
    rf"\bredis-cli\b[^\r\n|;&]*?\s-a\s+(?P<rediscli>{_CLI_VALUE})",
    # redis-cli's password in its environment, and Redis's AUTH command ("AUTH [user] password") given to redis-cli
    # or typed at its prompt ("127.0.0.1:6379> AUTH pw").
    rf"\bREDISCLI_AUTH\s*=\s*(?P<rediscliauth>{_CLI_VALUE})",
    r"(?:\bredis-cli\b[^\r\n|;&]*?\s|[A-Za-z0-9_.-]:[0-9]{1,5}> ?)(?i:auth)\s+(?:[^\s'\"|;&]+\s+)?"
    rf"(?P<redisauth>{_REDIS_AUTH_VALUE})",
    rf"\bsshpass\b[^\r\n|;&]*?\s-p\s*(?P<sshpass>{_CLI_VALUE})",
    # Oracle's tools and SQL*Plus CONNECT with a net service name ("sqlplus scott/tiger@ORCL", "CONNECT app/pw@LEDGER";
    # the EZConnect "@//host" form is the main pattern's): the password between "/" and "@" or the command's end.
    r"""\b(?:sqlplus|sqlldr|expdp|impdp|rman|(?i:conn(?:ect)?))\s+(?:-[A-Za-z]+\s+)*[A-Za-z0-9_$#.]+/"""
    r"""(?P<oraclealias>"[^"\r\n]*"|[^\s"'/@|;&]+)(?:@[A-Za-z]|\s|\z)""",
]
COMMAND_GROUPS = ("mysql", "rediscli", "rediscliauth", "redisauth", "sshpass", "oraclealias")
COMMAND_PATTERN: Any = re2.compile("|".join(COMMAND_ALTERNATIVES))
COMMAND_MARKERS = (
    "mysql", "mariadb", "redis-cli", "rediscli_auth", "> auth", ">auth", "sshpass", "sqlplus", "sqlldr", "expdp",
    "impdp", "rman", "conn",
)  # fmt: skip
