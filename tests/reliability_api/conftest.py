"""Fixtures of the service-level reliability tests: the real server in-process on a loopback port 0.

Each server gets its own SQLite file (``Api.database``), so a test can compare a snapshot of the whole
store before and after what it does. ``provider="heuristic"`` runs the embedded default provider over
the bundled scenarios; otherwise the deterministic ``PassProvider`` (optionally gated) drives every run
to SUCCESS.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.support.api import Api, ApiFactory, api_servers
from tests.support.settings import clean_environment

__all__ = ["Api", "ApiFactory"]


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """No DIAGNOSIS_* variable of the shell leaks into a test's settings."""
    clean_environment(monkeypatch)


@pytest.fixture
async def api_factory(tmp_path: Path) -> AsyncIterator[ApiFactory]:
    """Starts servers (stopped at the end). Keywords are settings, plus ``provider`` and ``start_kwargs``."""
    async with api_servers(lambda n: tmp_path / f"store-{n}.db") as factory:
        yield factory


@pytest.fixture
async def api(api_factory: ApiFactory) -> Api:
    return await api_factory()
