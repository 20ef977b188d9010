"""The sources' name for the one redaction (``text.redaction``), kept so that their imports read as before."""

from diagnosis_server.text.redaction import (
    DEFAULT,
    LAST_APPLIED,
    MIN_SECRET_CHARS,
    PATTERN_MARKERS,
    REDACTED,
    Redactor,
    is_secret_key,
    may_hold_a_token,
    pattern,
    redact_text,
    redact_value,
)

__all__ = [
    "DEFAULT",
    "LAST_APPLIED",
    "MIN_SECRET_CHARS",
    "PATTERN_MARKERS",
    "REDACTED",
    "Redactor",
    "is_secret_key",
    "may_hold_a_token",
    "pattern",
    "redact_text",
    "redact_value",
]
