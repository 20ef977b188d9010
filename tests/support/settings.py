"""Settings for tests (loopback port 0, a SQLite file, no metrics endpoint) and an environment without the shell's."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from diagnosis_server.settings import Settings, load_settings

# The variables a test must not inherit from the shell: the server's settings and OpenTelemetry's.
SHELL_PREFIXES = ("DIAGNOSIS_", "OTEL_")


def clean_environment(monkeypatch: pytest.MonkeyPatch, prefixes: tuple[str, ...] = SHELL_PREFIXES) -> None:
    """Removes every variable named with one of ``prefixes`` for the test (restored after it)."""
    for name in list(os.environ):
        if name.startswith(prefixes):
            monkeypatch.delenv(name)


def set_environment(monkeypatch: pytest.MonkeyPatch, variables: dict[str, str]) -> None:
    """Sets each of ``variables`` for the test (restored after it)."""
    for name, value in variables.items():
        monkeypatch.setenv(name, value)


def sqlite_url(database: Path) -> str:
    return f"sqlite+aiosqlite:///{database}"


def make_settings(database: Path, **overrides: Any) -> Settings:
    """Settings of a server on 127.0.0.1 port 0 over the SQLite file ``database``; ``overrides`` win."""
    values: dict[str, Any] = {
        "address": "127.0.0.1:0",
        "database_url": sqlite_url(database),
        "metrics_address": "",
        "http_address": "",
        "shutdown_grace_s": 5.0,
    }
    values.update(overrides)
    return load_settings(**values)
