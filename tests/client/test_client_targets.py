"""Targets as people type them: HOST:PORT, http:// and https:// URLs, gRPC's own schemes."""

from __future__ import annotations

import pytest

from diagnosis import ConnectionConfig, parse_target


@pytest.mark.parametrize(
    ("text", "target", "tls"),
    [
        ("127.0.0.1:50051", "127.0.0.1:50051", None),
        ("http://127.0.0.1:50051", "127.0.0.1:50051", False),
        ("HTTP://localhost:1/", "localhost:1", False),
        ("https://diag.example.com", "diag.example.com:443", True),
        ("http://[::1]:50051", "[::1]:50051", False),
        ("unix:/tmp/diagnosis.sock", "unix:/tmp/diagnosis.sock", None),
        ("dns:///diag.example.com:443", "dns:///diag.example.com:443", None),
    ],
)
def test_parse_target(text: str, target: str, tls: bool | None) -> None:
    assert parse_target(text) == (target, tls)


@pytest.mark.parametrize("text", ["http://h:1/path", "https://user:pw@h:1", "ftp://h:1", "http://"])
def test_unusable_urls_are_refused_with_what_to_give(text: str) -> None:
    with pytest.raises(ValueError, match="HOST:PORT"):
        parse_target(text)


def test_config_takes_the_scheme_for_tls() -> None:
    assert ConnectionConfig(target="https://h:1").tls is True
    assert ConnectionConfig(target="http://h:1").target == "h:1"
    with pytest.raises(ValueError, match="plaintext"):
        ConnectionConfig(target="http://h:1", tls=True)


@pytest.mark.parametrize("target", ["127.0.0.1", "localhost", "::1", "[::1]"])
def test_a_plaintext_target_without_a_port_is_refused(target: str) -> None:
    with pytest.raises(ValueError, match="no port"):
        ConnectionConfig(target=target)
    assert ConnectionConfig(target=target, tls=True).target == target  # TLS's port 443 is meant
