"""Fixtures of the store tests: the same suite runs on SQLite (a file in tmp_path), PostgreSQL and, where the
test is backend-neutral (the ``repo`` and ``backend`` fixtures), on the in-memory store.

PostgreSQL comes from ``DIAGNOSIS_TEST_POSTGRES_URL`` (a throwaway database: the tests drop the
store's tables in it) or from a cluster this session starts itself (``tests.support.postgres``), stopped
and removed at the end.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine

from diagnosis_server.store import MemoryStore, RunStore, open_repository
from diagnosis_server.store.migrate import upgrade_connection
from tests.support.postgres import (
    POSTGRES_URL_ENV,
    Cluster,
    PostgresUnavailable,
    find_bin_dir,
    reset_postgres,
    runner,
    unavailable,
)


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A PostgreSQL URL for the session; skips with the reason when there is none."""
    configured = os.environ.get(POSTGRES_URL_ENV, "").strip()
    if configured:
        yield configured
        return
    try:
        server = Cluster(bin_dir=find_bin_dir(), base=Path(tempfile.mkdtemp(prefix="diagnosis-pg-")), runner=runner())
    except PostgresUnavailable as exc:
        unavailable(str(exc))
    try:
        url = server.start()
    except (PostgresUnavailable, OSError, subprocess.SubprocessError) as exc:
        server.stop()
        unavailable(f"could not start one: {exc}")
    try:
        yield url
    finally:
        server.stop()


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A migrated, empty SQLite file to copy: tests start from it instead of migrating each time."""
    path = tmp_path_factory.mktemp("template") / "diagnosis.db"
    engine = create_engine(f"sqlite:///{path}")
    try:
        with engine.begin() as conn:
            upgrade_connection(conn)
    finally:
        engine.dispose()
    return path


_BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]


@pytest.fixture(params=_BACKENDS)
async def empty_database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A database of each backend with no tables at all."""
    if request.param == "sqlite":
        return f"sqlite+aiosqlite:///{tmp_path / 'store' / 'diagnosis.db'}"
    url: str = request.getfixturevalue("postgres_url")
    await reset_postgres(url, drop=True)
    return url


async def _database(backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if backend == "sqlite":
        path = tmp_path / "diagnosis.db"
        shutil.copyfile(request.getfixturevalue("sqlite_template"), path)
        return f"sqlite+aiosqlite:///{path}"
    url: str = request.getfixturevalue("postgres_url")
    await reset_postgres(url, drop=False)
    return url


@pytest.fixture(params=_BACKENDS)
async def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A database of each backend whose store tables are empty (migrated, or migrated on open)."""
    return await _database(request.param, request, tmp_path)


@pytest.fixture(params=[*_BACKENDS, "memory"])
async def backend(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[Callable[[str], Awaitable[RunStore]]]:
    """Every store backend, empty, for the store contract tests: opens it as the instance of an owner id
    (``store_builders.OpenStore``)."""
    opened: list[RunStore] = []
    if request.param == "memory":
        data = MemoryStore()

        async def open_store(owner: str) -> RunStore:
            return data.instance(owner)
    else:
        url = await _database(request.param, request, tmp_path)

        async def open_store(owner: str) -> RunStore:
            store = await open_repository(url, owner=owner)
            opened.append(store)
            return store

    try:
        yield open_store
    finally:
        for store in opened:
            await store.close()


@pytest.fixture
async def repo(backend: Callable[[str], Awaitable[RunStore]]) -> RunStore:
    """The store of instance ``instance-a``, on each backend."""
    return await backend("instance-a")
