"""Fixtures every suite may use. What suites share beyond fixtures is in ``tests.support``.

The tests are one package tree (``tests.<suite>.<module>``): a module imports a neighbour relatively and shared
code as ``tests.support.<module>``, never through ``sys.path``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from diagnosis_server.store import Repository, open_repository
from tests.support.settings import sqlite_url


@pytest.fixture
async def repository(tmp_path: Path) -> AsyncIterator[Repository]:
    """A migrated SQLite store of the test's own."""
    repo = await open_repository(sqlite_url(tmp_path / "store.db"))
    try:
        yield repo
    finally:
        await repo.close()
