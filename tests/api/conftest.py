"""Fixtures of the API tests: the real server on a loopback port, a real SQLite store, real channels.

Every server of a test shares one SQLite file (``tmp_path / "api.db"``), so a second server sees the first's runs.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from diagnosis_server.settings import Settings
from tests.support import settings as support_settings
from tests.support.api import Api, ApiFactory, api_servers

__all__ = ["Api", "ApiFactory", "make_settings"]


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """No DIAGNOSIS_* variable of the shell leaks into a test's settings."""
    support_settings.clean_environment(monkeypatch)


def make_settings(tmp_path: Path, **overrides: Any) -> Settings:
    return support_settings.make_settings(tmp_path / "api.db", **overrides)


@pytest.fixture
async def api_factory(tmp_path: Path) -> AsyncIterator[ApiFactory]:
    """Starts servers (stopped at the end); keyword arguments are settings, plus ``provider``."""
    async with api_servers(lambda _: tmp_path / "api.db") as factory:
        yield factory


@pytest.fixture
async def api(api_factory: ApiFactory) -> Api:
    return await api_factory()
