from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from diagnosis_server.store import Repository, open_repository


@pytest.fixture
async def repository(tmp_path: Path) -> AsyncIterator[Repository]:
    repo = await open_repository(f"sqlite+aiosqlite:///{tmp_path / 'heuristic.db'}")
    try:
        yield repo
    finally:
        await repo.close()
