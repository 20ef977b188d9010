"""A plain API server per module, for the red-team modules that send questions only."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from tests.support import settings as support_settings
from tests.support.api import Api, api_servers


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def api(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Api]:
    with pytest.MonkeyPatch.context() as monkeypatch:
        support_settings.clean_environment(monkeypatch)
        folder = tmp_path_factory.mktemp("red-api")
        async with api_servers(lambda _: folder / "api.db") as factory:
            yield await factory()
