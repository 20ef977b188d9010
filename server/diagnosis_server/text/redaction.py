"""Redaction: the one place that decides which text is a secret, applied before anything is recorded, logged or shown.

Applied to every source's output and to every tool call's arguments before the tool runner records them, to log
events, to model endpoints' errors and to every text the service renders (``display``):
- the configured secrets themselves (bearer tokens, the MCP ``env`` values an environment reads from
  ``{ env = ... }`` or ``{ file = ... }``, passwords inside configured URLs), wherever they appear;
- token-shaped strings, in the formats their issuers document: URL user-info (``postgres://user:pass@host``),
  ``Authorization``/``Proxy-Authorization``/``Cookie`` header values, ``Bearer``/``Basic``/``token`` credentials,
  ``password``/``secret``/``token``/``api_key``-style pairs in text, JSON and query strings (a quoted value whole,
  to its closing quote, also when the quotes are escaped in JSON inside a JSON string), AWS access key ids
  (``AKIA``/``ASIA``/...), GitHub (``ghp_``, ``gho_``, ``ghu_``, ``ghs_``, ``ghr_``, ``github_pat_``), GitLab
  (``glpat-`` and its other prefixes), Slack (``xoxb-``, ``xoxp-``, ``xapp-``, incoming-webhook URLs), OpenAI-style
  ``sk-`` keys, Google API keys, JWTs and PEM/PGP private key blocks (a block cut before its END line too);
- in JSON values: the string value of a key that names a secret (``{"password": ...}``);
- in Kubernetes objects: every ``env`` value, every secret reference (``secretKeyRef``, ``secretRef``, secret
  volumes, ``imagePullSecrets``), ``metadata.managedFields`` and the last-applied-configuration annotation.

Nothing else is touched: a URL without credentials, a host, a query or an ordinary configuration value stays as
written. Matching runs on RE2 (linear in the text's length, no backtracking), after a literal prefilter.

A redacted value becomes ``[REDACTED]``; keys, list lengths and everything else stay where they were, so
JSON Pointers into the redacted output resolve as they would into the upstream's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import re2

from diagnosis_server.conversions import JsonValue

REDACTED = "[REDACTED]"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
MIN_SECRET_CHARS = 4
_REMEMBERED_CHARS = 256
_REMEMBERED_STRINGS = 1 << 16

# Key words that name a secret, in a key of a pair or a JSON object ("DB_PASSWORD", "aws_secret_access_key",
# "X-Amz-Security-Token", "client-secret", "apiKey").
_SECRET_WORDS = (
    r"(?:password|passwd|passphrase|pwd|pass(?:[_.-]|\b)|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key"
    r"|credentials?|signature|session[_-]?id)"
)
_KEY_CHARS = r"[A-Za-z0-9_.-]"
# The quote that may close a key: none, "'", '"', or '\\"' (a JSON string escaped inside another).
_KEY_QUOTE = r"""(?:\\?["'])?"""
_HEADERS = r"(?:proxy-)?authorization|x-api-key|x-auth-token|x-vault-token|cookie|set-cookie"
_ALTERNATIVES = [
    # A PEM (or PGP) private key block, up to its END line or, cut short, to the end of the text.
    r"(?P<pem>-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?s:.*?)(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
    r"|\z))",
    # RFC 7519: three base64url parts, the first (a JOSE header) a JSON object, so "eyJ".
    r"(?P<jwt>\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*)",
    # HTTP credentials headers (RFC 9110 section 11.6.2, 11.7.2; cookies RFC 6265): the value to the line's end.
    rf"(?P<header>(?i:\b(?:{_HEADERS}))[\"']?\s*[:=]\s*[\"']?)(?P<header_value>[^\r\n\"']+)",
    # RFC 6750 (Bearer), RFC 7617 (Basic) and GitHub's "token" scheme.
    r"(?P<scheme>\b(?i:bearer|basic|token)\s+)(?P<credential>[A-Za-z0-9._~+/=-]{8,})",
    # RFC 3986 user-info before the host: "scheme://user:password@" (and "scheme://token@").
    r"(?P<userinfo_prefix>\b[a-zA-Z][a-zA-Z0-9+.-]*://)(?P<userinfo>[^/\s:@?#]*:[^/\s@?#]*|[^/\s:@?#]{16,})@",
    # Slack incoming webhooks: https://hooks.slack.com/services/T.../B.../secret (the path is the credential).
    r"(?P<hook_prefix>hooks\.slack\.com/(?:services|workflows|triggers)/)(?P<hook>[A-Za-z0-9/_-]{8,})",
    # Vendors' token formats.
    r"(?P<vendor>\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}"
    r"|gl(?:pat|dt|rt|ptt|cbt|oas|soat|ffct|imt|agent)-[A-Za-z0-9_-]{20,}"
    r"|xox[abposer]-[A-Za-z0-9-]{10,}|xapp-[0-9]-[A-Za-z0-9-]{10,}"
    r"|sk-[A-Za-z0-9_-]{20,}|(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|APKA|AROA|ASCA)[0-9A-Z]{16}"
    r"|AIza[0-9A-Za-z_-]{35})\b)",
    # A key-like word ("sk-live-...", "token-ab12cd34..."): redacted when it holds a digit ("token-bucket" stays).
    r"(?P<keylike_prefix>\b(?i:sk|key|token)-)(?P<keylike>[A-Za-z0-9_-]{6,})",
    # A quoted value after a secret-named key, spaces and all, to its closing quote: "DB_PASSWORD: 'pw 4471'",
    # '"password": "..."', and the same escaped inside a JSON string ('\\"client_secret\\":\\"...\\"').
    rf"(?P<quoted_key>(?i:{_KEY_CHARS}*{_SECRET_WORDS}{_KEY_CHARS}*){_KEY_QUOTE}\s*[=:]\s*)"
    r"(?:(?P<sq_open>')(?P<sq_value>[^'\r\n]+)'|(?P<dq_open>\")(?P<dq_value>(?:[^\"\\\r\n]|\\[^\r\n])+)\""
    r"|(?P<eq_open>\\\")(?P<eq_value>(?:[^\"\\\r\n]|\\[^\"\r\n])+)\\\")",
    # "password=...", "api_key: ...", '"token": "..."', "?access_token=...&": the value, not the key.
    rf"(?P<pair_key>(?i:{_KEY_CHARS}*{_SECRET_WORDS}{_KEY_CHARS}*){_KEY_QUOTE}\s*[=:]\s*(?:\\?\")?)"
    r"(?P<pair_value>[^\s\"',;&)}\]\\]{4,})",
]
_PATTERN = re2.compile("|".join(_ALTERNATIVES))
_SECRET_KEY = re2.compile(rf"(?i){_SECRET_WORDS}")
_DIGITS = re2.compile(r"[0-9]+")
_DIGIT = re2.compile(r"[0-9]")
_AUTH_SCHEME = re2.compile(r"(?i)(?:bearer|basic|token|digest|negotiate|aws4-hmac-sha256|apikey)\s+")

# Every alternative of the pattern holds one of these (compared lower-case): a text holding none cannot match,
# and most strings of an answer hold none (the test of the markers checks that they cover every alternative).
PATTERN_MARKERS = (
    "-----begin", "eyj", "authorization", "x-api-key", "x-auth-token", "x-vault-token", "cookie", "bearer",
    "basic", "token", "://", "hooks.slack.com/", "gh", "github_pat_", "gl", "xox", "xapp-", "sk-", "akia", "asia",
    "abia", "acca", "agpa", "aida", "aipa", "anpa", "anva", "apka", "aroa", "asca", "aiza", "pass", "pwd", "secret",
    "key", "credential", "signature", "session",
)  # fmt: skip


_PASSWORD_KEY = re2.compile(r"(?i)pass|pwd|pin")


def may_hold_a_token(text: str) -> bool:
    lowered = text.lower()
    return any(marker in lowered for marker in PATTERN_MARKERS)


def pattern() -> Any:
    """The whole pattern (for the test that its markers cover every alternative)."""
    return _PATTERN


def _replace(match: Any) -> str:
    groups: dict[str, str | None] = match.groupdict()
    header_value = groups["header_value"]
    if header_value is not None:
        scheme = _AUTH_SCHEME.match(header_value)  # "Bearer ...": the scheme stays readable
        return f"{groups['header']}{scheme.group(0) if scheme else ''}{REDACTED}"
    if groups["credential"] is not None:
        return f"{groups['scheme']}{REDACTED}"
    if groups["userinfo"] is not None:
        return f"{groups['userinfo_prefix']}{REDACTED}@"
    if groups["hook"] is not None:
        return f"{groups['hook_prefix']}{REDACTED}"
    if groups["keylike"] is not None:
        if _DIGIT.search(groups["keylike"]) is None:
            return str(match.group(0))
        return f"{groups['keylike_prefix']}{REDACTED}"
    for quote in ("sq", "dq", "eq"):
        quoted = groups[f"{quote}_value"]
        if quoted is not None:
            opening = groups[f"{quote}_open"] or ""
            if quoted == REDACTED or _ordinary_value(groups["quoted_key"] or "", quoted):
                return str(match.group(0))
            return f"{groups['quoted_key']}{opening}{REDACTED}{opening}"
    value = groups["pair_value"]
    if value is not None:
        key = groups["pair_key"] or ""
        if value == REDACTED or _ordinary_value(key, value):
            return str(match.group(0))  # a count ("max_tokens=4096"), or already redacted
        return f"{key}{REDACTED}"
    return REDACTED


def _ordinary_value(key: str, value: str) -> bool:
    """A count under a key that is no password ("max_tokens=4096"), or a value that is only blanks."""
    return (_DIGITS.fullmatch(value) is not None and not _PASSWORD_KEY.search(key)) or not value.strip()


def redact_text(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` without the given secrets and without token-shaped strings (linear in its length)."""
    for secret in sorted({s for s in secrets if len(s) >= MIN_SECRET_CHARS}, key=len, reverse=True):
        if secret in text:
            text = text.replace(secret, REDACTED)
    if not may_hold_a_token(text):
        return text
    return str(_PATTERN.sub(_replace, text))


def is_secret_key(key: str) -> bool:
    """A JSON key or pair key that names a secret ("password", "client_secret", "X-Amz-Security-Token")."""
    return _SECRET_KEY.search(key) is not None


class Redactor:
    """Redacts known secrets and token-shaped strings from text and JSON values."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        # Longest first, so a secret that contains another is replaced whole.
        self._secrets = sorted({s for s in secrets if len(s) >= MIN_SECRET_CHARS}, key=len, reverse=True)
        # Short strings already redacted (a Kubernetes listing repeats its names, images, phases and stamps).
        self._seen: dict[str, str] = {}

    def with_secrets(self, secrets: Iterable[str]) -> Redactor:
        return Redactor([*self._secrets, *secrets])

    def text(self, text: str) -> str:
        if len(text) > _REMEMBERED_CHARS:
            return self._redacted(text)
        seen = self._seen.get(text)
        if seen is None:
            if len(self._seen) >= _REMEMBERED_STRINGS:
                self._seen.clear()
            seen = self._seen[text] = self._redacted(text)
        return seen

    def _redacted(self, text: str) -> str:
        for secret in self._secrets:
            if secret in text:
                text = text.replace(secret, REDACTED)
        if not may_hold_a_token(text):
            return text
        return str(_PATTERN.sub(_replace, text))

    def value(self, value: JsonValue) -> JsonValue:
        """Every string of ``value`` redacted (keys are kept); a string under a key that names a secret whole."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.value(item) for item in value]
        if isinstance(value, dict):
            return {key: self._item(key, item) for key, item in value.items()}
        return value

    def _item(self, key: str, item: JsonValue) -> JsonValue:
        if isinstance(item, str) and item and item != REDACTED and is_secret_key(key):
            return REDACTED
        return self.value(item)

    def arguments(self, arguments: Mapping[str, JsonValue]) -> dict[str, JsonValue]:
        """A tool call's arguments as they may be recorded."""
        return {key: self._item(key, item) for key, item in arguments.items()}

    def kubernetes(self, value: JsonValue) -> JsonValue:
        """A Kubernetes object or List: the structural redactions, then every string."""
        return self.value(_strip_kubernetes(value))


DEFAULT = Redactor()


def redact_value(value: JsonValue) -> JsonValue:
    """``value`` with its token-shaped strings redacted (no configured secrets: for logs and shown texts)."""
    return DEFAULT.value(value)


def _strip_kubernetes(value: JsonValue) -> JsonValue:
    if isinstance(value, list):
        return [_strip_kubernetes(item) for item in value]
    if not isinstance(value, dict):
        return value
    out: dict[str, JsonValue] = {}
    for key, item in value.items():
        if key == "managedFields":
            continue
        if key == "annotations" and isinstance(item, dict):
            out[key] = {k: _strip_kubernetes(v) for k, v in item.items() if k != LAST_APPLIED}
        elif key == "env" and isinstance(item, list):
            out[key] = [_env_var(entry) for entry in item]
        elif key in ("secretKeyRef", "secretRef") and isinstance(item, dict):
            out[key] = _names_redacted(item, ("name", "key"))
        elif key == "secret" and isinstance(item, dict):
            out[key] = _strip_kubernetes(_names_redacted(item, ("secretName", "name")))
        elif key == "imagePullSecrets" and isinstance(item, list):
            out[key] = [_names_redacted(entry, ("name",)) if isinstance(entry, dict) else REDACTED for entry in item]
        else:
            out[key] = _strip_kubernetes(item)
    return out


def _env_var(entry: JsonValue) -> JsonValue:
    if not isinstance(entry, dict):
        return REDACTED
    out = dict(entry)
    if "value" in out:
        out["value"] = REDACTED
    if "valueFrom" in out:
        out["valueFrom"] = _strip_kubernetes(out["valueFrom"])
    return out


def _names_redacted(item: dict[str, JsonValue], keys: tuple[str, ...]) -> dict[str, JsonValue]:
    return {k: (REDACTED if k in keys and v is not None else v) for k, v in item.items()}
