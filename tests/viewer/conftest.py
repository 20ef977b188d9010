"""Fixtures of the viewer tests: the real server with its HTTP side on a loopback port."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.support import settings as support_settings
from tests.support.api import ApiFactory, api_servers


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    support_settings.clean_environment(monkeypatch)


@pytest.fixture
async def api_factory(tmp_path: Path) -> AsyncIterator[ApiFactory]:
    async with api_servers(lambda n: tmp_path / f"viewer-{n}.db") as factory:
        yield factory
