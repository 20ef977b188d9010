"""Fixtures of the openai provider tests: the fake endpoint, settings pointing at it, a SQLite store."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from openai_fake_endpoint import FakeOpenAI

from diagnosis_server.store import Repository, open_repository


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No DIAGNOSIS_* or OPENAI_* variable of the machine leaks into a test."""
    import os

    for name in list(os.environ):
        if name.startswith(("DIAGNOSIS_", "OPENAI_")):
            monkeypatch.delenv(name)


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as endpoint:
        yield endpoint
    assert not endpoint.errors, endpoint.errors


@pytest.fixture
async def repository(tmp_path: Path) -> AsyncIterator[Repository]:
    repo = await open_repository(f"sqlite+aiosqlite:///{tmp_path / 'openai.db'}")
    try:
        yield repo
    finally:
        await repo.close()
