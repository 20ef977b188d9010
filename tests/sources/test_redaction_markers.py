"""The redaction pattern's literal prefilter never lets a token-looking string through unredacted."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diagnosis_server.text.redaction import (
    PATTERN_MARKERS,
    REDACTED,
    Redactor,
    command_pattern,
    may_hold_a_token,
    pattern,
)
from diagnosis_server.text.secret_formats import COMMAND_MARKERS

_FRAGMENTS = (
    "-----BEGIN RSA PRIVATE KEY-----", "MIIEow", "-----END RSA PRIVATE KEY-----", "eyJhbGciOi", "eyJzdWIi", ".",
    "Bearer ", "basic ", "Token ", "abcdefgh12345678", "https://", "http://", "user:pa55@", "db.local", "ghp_",
    "gho_", "github_pat_", "glpat-", "xoxb-", "sk-", "AKIA", "AIza", "ABCDEFGHIJKLMNOP0123456789abcdefghij",
    "password", "PASSWD", "Pwd", "secret", "api_key", "API-KEY", "apikey", "access_key", "AccessKey",
    "private-key", "credentials", "=", ": ", '"', " ", "DB_", "_VALUE", "hunter22", "1234", "pod", "Started",
    "container", "checkout-api-7f9c", "\n", "ASIA", "ghr_", "ghs_", "ghu_", "glrt-", "gldt-", "xoxp-", "xapp-1-",
    "hooks.slack.com/services/", "T0123/B0456/", "Authorization", "Cookie: ", "X-Api-Key", "sk-", "key-", "token-",
    "a1b2c3", "-----BEGIN OPENSSH PRIVATE KEY-----", "-----BEGIN PGP PRIVATE KEY BLOCK-----", "client_secret",
    "X-Amz-Signature", "session_id", "?", "&", "sk_live_", "rk_test_", "whsec_", "SG.", "npm_", "hvs.", "hf_",
    "%2E", "%3D", ":\\/\\/", "\\/", "hooks.slack.com\\/services\\/", " -u ", " --user ", "--password ", " -p",
    "sig=", '"auth"', "AccountKey", "machine ", " login ", "password ", "default ", "=>", "[", "{", "mysql ",
    "redis-cli ", "sshpass ", " -a ", "1000", "@",
    "---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----", "---- END SSH2 ENCRYPTED PRIVATE KEY ----", "PuTTY-User-Key-File-3:",
    "Private-Lines: 1", "Private-MAC: 5f1c", "discord.com/api/webhooks/", "112233445566778899/", "/bot", "7012345678",
    ":AA", "Xk28Q~", "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", "@tcp(", "@unix(", "@//", "jdbc:oracle:thin:", "/",
    "GOCSPX-", "ya29.", ":APA91b", "pypi-AgE", "dckr_pat_", "shpat_", "0a1b2c3d4e5f60718293a4b5c6d7e8f9", "ATATT3",
    "dop_v1_", "glsa_", "glc_", "NRAK-", "NRII-", "REDISCLI_AUTH=", "AUTH ", "127.0.0.1:6379> ", "<password>",
    "</password>", "<![CDATA[", "]]>", '<add key="', 'ApiKey" ', 'value="', '"/>', "<", ">",
)  # fmt: skip


@settings(max_examples=3000, deadline=None, derandomize=True)
@given(st.lists(st.sampled_from(_FRAGMENTS), min_size=1, max_size=10))
def test_every_text_the_pattern_redacts_holds_a_marker(parts: list[str]) -> None:
    """Secrets are never echoed: the prefilter skips only texts the pattern cannot match."""
    text = "".join(parts)
    if pattern().search(text) is not None:
        assert may_hold_a_token(text), text  # so the pattern runs on it exactly as without the prefilter
    if command_pattern().search(text) is not None:
        assert any(marker in text.lower() for marker in COMMAND_MARKERS), text


@pytest.mark.parametrize(
    "text",
    [
        "Authorization: Bearer abcdefgh12345678",
        "postgres://app:hunter22@orders-db:5432/orders",
        "DB_PASSWORD=hunter22",
        "token: eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig",
        "using key AKIAABCDEFGHIJKLMNOP",
        "mysql -uroot -phunter22 orders",
        "curl -u deploy:hunter22 https://a.io",
    ],
)
def test_tokens_are_still_redacted(text: str) -> None:
    assert REDACTED in Redactor().text(text)


def test_ordinary_text_is_left_as_is_without_the_pattern() -> None:
    line = "Started container checkout-api in pod checkout-api-7f9c (image registry.local/checkout-api:1.4.2)"
    assert not may_hold_a_token(line)
    assert Redactor().text(line) == line
    assert all(marker == marker.lower() for marker in (*PATTERN_MARKERS, *COMMAND_MARKERS))
