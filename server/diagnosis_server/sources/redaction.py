"""Redaction: what of an upstream's answer never reaches a recorded invocation, a log line or an error.

Applied to every source's output before the tool runner sees it (so before anything is recorded):
- the configured secrets themselves (bearer tokens, MCP ``env`` values), wherever they appear;
- token-looking strings: JWTs, ``Bearer``/``Basic`` credentials, ``password=...``-style pairs, URL userinfo,
  PEM private keys and well-known API key shapes (GitHub, GitLab, Slack, OpenAI-style, AWS, Google);
- in Kubernetes objects: every ``env`` value, every secret reference (``secretKeyRef``, ``secretRef``, secret
  volumes, ``imagePullSecrets``), ``metadata.managedFields`` and the last-applied-configuration annotation.

A redacted value becomes ``[REDACTED]``; keys, list lengths and everything else stay where they were, so
JSON Pointers into the redacted output resolve as they would into the upstream's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from diagnosis_server.conversions import JsonValue

REDACTED = "[REDACTED]"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
MIN_SECRET_CHARS = 4
_REMEMBERED_CHARS = 256
_REMEMBERED_STRINGS = 1 << 16

_SECRET_WORDS = r"(?:password|passwd|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|credentials?)"
_PATTERNS = re.compile(
    "|".join(
        [
            r"(?P<pem>-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----)",
            r"(?P<jwt>\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*)",
            r"(?P<scheme>\b(?:[Bb]earer|[Bb]asic|[Tt]oken)\s+)(?P<credential>[A-Za-z0-9._~+/=-]{8,})",
            r"(?P<userinfo_prefix>\b[a-zA-Z][a-zA-Z0-9+.-]*://)(?P<userinfo>[^/\s:@]+:[^/\s@]+)@",
            r"(?P<vendor>\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|glpat-[A-Za-z0-9_-]{20,}"
            r"|xox[abprs]-[A-Za-z0-9-]{10,}|sk-[A-Za-z0-9_-]{20,}|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{35})\b)",
            rf"(?P<pair_key>(?i:[A-Za-z0-9_.-]*{_SECRET_WORDS}[A-Za-z0-9_.-]*)\"?\s*[=:]\s*\"?)"
            r"(?P<pair_value>(?!\d+\b)[^\s\"',;&)}\]]{4,})",
        ]
    ),
    re.DOTALL,
)


# Every alternative of _PATTERNS holds one of these (compared lower-case): a text holding none cannot match, and
# most strings of an answer hold none. The pattern's run of name characters before a secret word costs time
# quadratic in a long word's length, so the whole of a large Kubernetes listing is not put through it.
PATTERN_MARKERS = (
    "-----begin", "eyj", "bearer", "basic", "token", "://", "gh", "github_pat_", "glpat-", "xox", "sk-", "akia",
    "aiza", "pass", "pwd", "secret", "key", "credential",
)  # fmt: skip


def may_hold_a_token(text: str) -> bool:
    lowered = text.lower()
    return any(marker in lowered for marker in PATTERN_MARKERS)


def pattern() -> re.Pattern[str]:
    """The whole pattern (for the test that its markers cover every alternative)."""
    return _PATTERNS


def _replace(match: re.Match[str]) -> str:
    groups = match.groupdict()
    if groups["credential"] is not None:
        return groups["scheme"] + REDACTED
    if groups["userinfo"] is not None:
        return groups["userinfo_prefix"] + REDACTED + "@"
    if groups["pair_value"] is not None:
        if groups["pair_value"] == REDACTED:
            return match.group(0)
        return groups["pair_key"] + REDACTED
    return REDACTED


class Redactor:
    """Redacts known secrets and token-looking strings from text and JSON values."""

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
        return _PATTERNS.sub(_replace, text)

    def value(self, value: JsonValue) -> JsonValue:
        """Every string of ``value`` (not its keys) redacted."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.value(item) for item in value]
        if isinstance(value, dict):
            return {key: self.value(item) for key, item in value.items()}
        return value

    def kubernetes(self, value: JsonValue) -> JsonValue:
        """A Kubernetes object or List: the structural redactions, then every string."""
        return self.value(_strip_kubernetes(value))


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
