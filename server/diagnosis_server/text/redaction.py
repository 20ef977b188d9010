"""Redaction: the one place that decides which text is a secret, applied before anything is recorded, logged or shown.

Applied to every source's output and to every tool call's arguments before the tool runner records them, to the
question before a run is created, to log events, to model endpoints' errors and to every text the service renders
(``display``); requirement R-C-2:
- the configured secrets themselves (bearer tokens, the MCP ``env`` values an environment reads from
  ``{ env = ... }`` or ``{ file = ... }``, passwords inside configured URLs), wherever they appear;
- token-shaped strings, in the formats their issuers document (``secret_formats``): URL user-info
  (``postgres://user:pass@host``; RFC 3986, the password to the last '@' before the host, JSON-escaped slashes
  too), ``Authorization``/``Proxy-Authorization``/``Cookie`` header values, ``Bearer``/``Basic``/``token``
  credentials, ``password``/``secret``/``token``/``api_key``/``AccountKey``-style pairs in text, JSON, Ruby
  (``=>``) and query strings (a quoted value whole, to its closing quote, also when the quotes are escaped in JSON
  inside a JSON string; a JSON list's first item or a nested object's first value), a shared access signature's
  ``sig=``, a Docker config's ``auth``, credentials on command lines (``curl -u user:pw``, ``--password pw``,
  mysql's ``-ppw``, redis-cli's ``-a pw``, sshpass's ``-p pw``), ``.netrc`` entries, vendors' tokens: AWS access
  key ids (``AKIA``/``ASIA``/...), GitHub (``ghp_``, ``gho_``, ``ghu_``, ``ghs_``, ``ghr_``, ``github_pat_``),
  GitLab (``glpat-`` and its other prefixes), Slack (``xoxb-``, ``xoxp-``, ``xapp-``, incoming-webhook URLs, also
  JSON-escaped), OpenAI/Anthropic ``sk-``, Stripe (``sk_live_``, ``rk_live_``, ``whsec_``), SendGrid (``SG.``),
  npm (``npm_``), Vault (``hvs.``, ``hvb.``, ``hvr.``), Hugging Face (``hf_``), Google API keys, OAuth client
  secrets (``GOCSPX-``) and access tokens (``ya29.``), Firebase server keys (``...:APA91b...``), Entra ID client
  secrets (``xxx8Q~...``), PyPI (``pypi-AgE...``), Docker Hub (``dckr_pat_``), Shopify (``shpat_``), Atlassian
  (``ATATT3``), DigitalOcean (``dop_v1_``), Grafana (``glsa_``, ``glc_``), New Relic (``NRAK-``, ``NRII-``),
  Discord webhook and Telegram bot tokens, redis-cli's ``REDISCLI_AUTH`` and Redis ``AUTH``, Go MySQL DSNs
  (``user:pw@tcp(...)``), Oracle EZConnect (``user/pw@//host``) and JDBC thin strings, secret-named XML elements and
  .NET ``<add key=... value=...>`` settings, JWTs (their dots percent-encoded too) and PEM/PGP, SSH2 and PuTTY
  private keys (a block cut before its END line too);
- in JSON values: whatever a key that names a secret holds (``{"password": ...}``): a string, a password's
  number, every string of a list or nested object under it;
- in Kubernetes objects: every ``env`` value but a plain address under a name that names no secret
  (``CART_SERVICE_ADDR=cartservice:7070`` stays: where a workload sends its calls), every secret reference
  (``secretKeyRef``, ``secretRef``, secret volumes, ``imagePullSecrets``), ``metadata.managedFields``, the
  last-applied-configuration annotation and every ``data``/``stringData`` value of a Secret (in any JSON value,
  an MCP server's answer too).

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
from diagnosis_server.text.secret_formats import (
    COMMAND_GROUPS,
    COMMAND_MARKERS,
    COMMAND_PATTERN,
    PATTERN,
    SECRET_WORDS,
    VALUE_GROUPS,
)
from diagnosis_server.text.secret_formats import (
    PATTERN_MARKERS as PATTERN_MARKERS,  # (re-exported: its test and the sources read it here)
)

REDACTED = "[REDACTED]"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
MIN_SECRET_CHARS = 4
_REMEMBERED_CHARS = 256
_REMEMBERED_STRINGS = 1 << 16

_SECRET_KEY = re2.compile(rf"(?i){SECRET_WORDS}")
_PASSWORD_KEY = re2.compile(r"(?i)pass|pwd|pin")
_DIGITS = re2.compile(r"[0-9]+")
_DIGIT = re2.compile(r"[0-9]")
# A word after "token", "bearer" or "basic" ("token validation failed", "Basic authentication required"): letters
# only, lower-case after the first, hyphens between; a credential mixes cases, digits or symbols.
_WORD_AFTER_SCHEME = re2.compile(r"[A-Za-z][a-z]+(?:-[a-z]+)*")
_AUTH_SCHEME = re2.compile(r"(?i)(?:bearer|basic|token|digest|negotiate|aws4-hmac-sha256|apikey)\s+")
# A secret-named flag that takes no secret: a file, a name, a duration ("--password-file", "--token-ttl").
_FLAG_NOT_SECRET = re2.compile(
    r"(?i)[_-](?:file|stdin|path|name|dir|ttl|env|prompt|length|type|mode|timeout|expiry|expiration|version)\s*$"
)
_NOT_SECRET_WORDS = frozenset(("true", "false", "yes", "no", "none", "null", "auto"))
# Words of a secret-named key that make it a setting about secrets, not one ("password_min_length", "tokenTTL").
_META_WORDS = frozenset(
    (
        "length", "len", "min", "max", "ttl", "expiry", "expires", "expiration", "age", "count", "policy", "size",
        "rotation", "attempts", "retries", "version", "timeout", "interval", "seconds", "days", "hours", "minutes",
        "required", "enabled", "strength", "history", "limit",
    )
)  # fmt: skip
_CAMEL = re2.compile(r"([a-z0-9])([A-Z])")
_WORD_SPLIT = re2.compile(r"[^a-z0-9]+")
_SECRET_KINDS = ("Secret", "SecretList")
# The key of a nested object's first value, at the end of what precedes that value ('"password": {"type": ').
_INNER_KEY = re2.compile(r"""\{\s*\\?"([A-Za-z0-9_.-]{1,64})\\?"\s*:\s*(?:\\?")?\z""")
_SECRET_KEYS_WHOLE = frozenset(("auth", "sig"))
# Keys of an object under a secret-named key whose string says where or what, never the secret: a projected
# volume's {"serviceAccountToken": {"path": "token"}}, {"credentials": {"type": "oauth2"}}.
_STRUCTURAL_KEYS = frozenset(
    ("path", "mountPath", "type", "kind", "apiVersion", "namespace", "audience", "mode", "format", "algorithm")
)


def may_hold_a_token(text: str) -> bool:
    lowered = text.lower()
    return any(marker in lowered for marker in PATTERN_MARKERS)


def pattern() -> Any:
    """The whole pattern (for the test that its markers cover every alternative)."""
    return PATTERN


def command_pattern() -> Any:
    """The pattern of tool-specific password flags (for the test that its markers cover it)."""
    return COMMAND_PATTERN


# Each redacted group's name and number (RE2's match looks a name up by building the whole table anew).
_GROUPS = tuple((name, PATTERN.groupindex[name]) for name in VALUE_GROUPS)
_COMMAND_GROUPS = tuple((name, COMMAND_PATTERN.groupindex[name]) for name in COMMAND_GROUPS)
_CLIUSER_NAME = PATTERN.groupindex["cliuser_name"]


def _replace(match: Any) -> str:
    """The match with the part its alternative names redacted, unless that part is an ordinary value."""
    return _redacted_part(match, _GROUPS)


def _command_replace(match: Any) -> str:
    return _redacted_part(match, _COMMAND_GROUPS)


def _redacted_part(match: Any, groups: tuple[tuple[str, int], ...]) -> str:
    whole: str = match.group(0)
    for name, group in groups:
        value: str | None = match.group(group)
        if value is None:
            continue
        start, end = match.start(group) - match.start(0), match.end(group) - match.start(0)
        if _already_redacted(match, group, value) or _kept(match, name, whole[:start], value):
            return whole
        if name == "header":  # "Bearer ...": the scheme stays readable
            scheme = _AUTH_SCHEME.match(value)
            start += len(scheme.group(0)) if scheme else 0
        return f"{whole[:start]}{REDACTED}{whole[end:]}"
    return whole


def _already_redacted(match: Any, group: int, value: str) -> bool:
    """The value is the marker, or the marker's inside ("token: [REDACTED]" read as a list holding "REDACTED")."""
    start: int = match.start(group)
    return value == REDACTED or (start > 0 and str(match.string).startswith(REDACTED, start - 1))


# The groups that hold what a secret-named key, element or setting holds ("password=12" under "max_tokens" stays).
_VALUE_OF_A_KEY = frozenset(("sq", "dq", "eq", "pair", "xml", "xmlcdata", "appsetting", "appsetting_sq"))


def _kept(match: Any, name: str, key: str, value: str) -> bool:
    """Whether a matched value is no secret after all."""
    if name == "keylike":
        return _DIGIT.search(value) is None  # "token-bucket-refill" stays
    if name in _VALUE_OF_A_KEY:
        return _ordinary_value(key, value) or _structural_inner_key(key)
    if name == "flag":
        return _FLAG_NOT_SECRET.search(key) is not None or _ordinary_value(key, value) or value in _NOT_SECRET_WORDS
    if name == "credential":
        return len(value) <= 20 and _WORD_AFTER_SCHEME.fullmatch(value) is not None
    if name == "cliuser":  # "docker run -u 1000:1000" is a uid and a gid
        return _DIGITS.fullmatch(value) is not None and _DIGITS.fullmatch(match.group(_CLIUSER_NAME)) is not None
    return False


def _structural_inner_key(key: str) -> bool:
    """The value is a nested object's first, under a key that says where or what ('"token": {"type": "jwt"}')."""
    inner = _INNER_KEY.search(key)
    return inner is not None and inner.group(1) in _STRUCTURAL_KEYS


def _ordinary_value(key: str, value: str) -> bool:
    """A count under a key that is no password ("max_tokens=4096"), or a value that is only blanks."""
    return (_DIGITS.fullmatch(value) is not None and not _PASSWORD_KEY.search(key)) or not value.strip()


def _tokens_redacted(text: str) -> str:
    """``text`` without token-shaped strings: the pattern where a marker says it may match, then the flags of
    tools that take a password their own way."""
    lowered = text.lower()
    if any(marker in lowered for marker in PATTERN_MARKERS):
        text = str(PATTERN.sub(_replace, text))
    if any(marker in lowered for marker in COMMAND_MARKERS):
        text = str(COMMAND_PATTERN.sub(_command_replace, text))
    return text


def redact_text(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` without the given secrets and without token-shaped strings (linear in its length)."""
    for secret in sorted({s for s in secrets if len(s) >= MIN_SECRET_CHARS}, key=len, reverse=True):
        if secret in text:
            text = text.replace(secret, REDACTED)
    return _tokens_redacted(text)


def is_secret_key(key: str) -> bool:
    """A JSON key or pair key that names a secret ("password", "client_secret", "X-Amz-Security-Token"), or is one
    whole (a Docker config's "auth", a shared access signature's "sig")."""
    return _SECRET_KEY.search(key) is not None or key.lower() in _SECRET_KEYS_WHOLE


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
        return _tokens_redacted(text)

    def value(self, value: JsonValue) -> JsonValue:
        """Every string of ``value`` redacted (keys are kept); what a key that names a secret holds whole (see
        ``_item``); a Kubernetes Secret's ``data`` and ``stringData`` values whatever their keys."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.value(item) for item in value]
        if isinstance(value, dict):
            if value.get("kind") in _SECRET_KINDS:
                value = _without_secret_data(value)
            return {key: self._item(key, item) for key, item in value.items()}
        return value

    def _item(self, key: str, item: JsonValue) -> JsonValue:
        """A value under ``key``: under a key that names a secret, its strings at any depth (in a list or a nested
        object) and, under a password's key, its numbers; booleans and nulls stay (they hold no secret)."""
        if not is_secret_key(key):
            return self.value(item)
        if isinstance(item, str):
            return REDACTED if item else item
        # A key that is a secret only whole ("auth") or a setting about secrets ("tokenPolicy"): read as usual.
        if _SECRET_KEY.search(key) is None or _is_setting_about_secrets(key):
            return self.value(item)
        return _secret_held(item, numbers=_PASSWORD_KEY.search(key) is not None)

    def arguments(self, arguments: Mapping[str, JsonValue]) -> dict[str, JsonValue]:
        """A tool call's arguments as they may be recorded."""
        return {key: self._item(key, item) for key, item in arguments.items()}

    def kubernetes(self, value: JsonValue) -> JsonValue:
        """A Kubernetes object or List: the structural redactions, then every string."""
        return self.value(_strip_kubernetes(value))


def _secret_held(item: JsonValue, *, numbers: bool) -> JsonValue:
    if isinstance(item, str):
        return REDACTED if item else item
    if isinstance(item, bool) or item is None:
        return item
    if isinstance(item, int | float):
        return REDACTED if numbers else item
    if isinstance(item, list):
        return [_secret_held(entry, numbers=numbers) for entry in item]
    return {
        key: entry if key in _STRUCTURAL_KEYS and isinstance(entry, str) else _secret_held(entry, numbers=numbers)
        for key, entry in item.items()
    }


def _is_setting_about_secrets(key: str) -> bool:
    words = _WORD_SPLIT.split(str(_CAMEL.sub(r"\1_\2", key)).lower())
    return any(word in _META_WORDS for word in words)


def _without_secret_data(obj: dict[str, JsonValue]) -> dict[str, JsonValue]:
    """A Secret (or SecretList) with its ``data``/``stringData`` values redacted, keys kept: values are base64 or
    plain secrets whatever their keys are called."""
    items = obj.get("items")
    if obj.get("kind") == "SecretList" and isinstance(items, list):
        return {**obj, "items": [_without_secret_data(i) if isinstance(i, dict) else i for i in items]}
    out = dict(obj)
    for key in ("data", "stringData"):
        data = out.get(key)
        if isinstance(data, dict):
            out[key] = {name: REDACTED for name in data}
        elif data is not None:
            out[key] = REDACTED
    return out


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


# An env value that is only an address: a lower-case host (a name or an IP), a port, a scheme and a path of a few
# plain words (``/api/v1``); no user-info, no query, no path segment that could be a token.
_PLAIN_ADDRESS = re2.compile(
    r"(?:[a-z][a-z0-9+.-]{0,15}://)?[a-z0-9](?:[a-z0-9.-]{0,251}[a-z0-9])?(?::[0-9]{1,5})?"
    r"(?:/(?:[a-z]{1,20}|v[0-9]{1,2})){0,4}/?"
)


def _plain_address(name: JsonValue, value: JsonValue) -> bool:
    """Whether an env variable holds an address and nothing else, under a name that names no secret: where a
    workload sends its calls (``CART_SERVICE_ADDR=cartservice:7070``) is evidence, not a secret."""
    if not isinstance(name, str) or not isinstance(value, str) or is_secret_key(name):
        return False
    if not any(c in value for c in ".:/") or _PLAIN_ADDRESS.fullmatch(value) is None:
        return False
    return redact_text(value) == value


def _env_var(entry: JsonValue) -> JsonValue:
    if not isinstance(entry, dict):
        return REDACTED
    out = dict(entry)
    if "value" in out and not _plain_address(out.get("name"), out["value"]):
        out["value"] = REDACTED
    if "valueFrom" in out:
        out["valueFrom"] = _strip_kubernetes(out["valueFrom"])
    return out


def _names_redacted(item: dict[str, JsonValue], keys: tuple[str, ...]) -> dict[str, JsonValue]:
    return {k: (REDACTED if k in keys and v is not None else v) for k, v in item.items()}
