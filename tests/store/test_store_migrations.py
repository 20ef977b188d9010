"""Opening the store: migrations at start-up, idempotent, matching the table definitions; URL handling."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.ext.asyncio import create_async_engine

from diagnosis_server.store import StoreError, open_repository
from diagnosis_server.store.engine import SQLITE_BUSY_TIMEOUT_MS, create_engine
from diagnosis_server.store.migrate import MIGRATIONS_DIR, current_revision, head_revision
from diagnosis_server.store.tables import metadata

from .store_builders import make_run

T = TypeVar("T")


async def on_connection(url: str, read: Callable[[Connection], T]) -> T:
    """``read`` run on a connection of a fresh engine for ``url`` (disposed after)."""
    engine = create_async_engine(url)
    try:
        async with engine.connect() as conn:
            return await conn.run_sync(read)
    finally:
        await engine.dispose()


async def test_migrations_are_idempotent_and_keep_data(empty_database_url: str) -> None:
    """Opening twice applies nothing the second time and loses nothing (R-T-2 repository)."""
    first = await open_repository(empty_database_url, owner="first")
    await first.create_run(make_run("run-1"))
    await first.close()

    second = await open_repository(empty_database_url, owner="second")
    try:
        stored = await second.get_run("run-1")
        assert stored is not None
        assert stored.question == make_run("run-1").question
    finally:
        await second.close()

    revision = await on_connection(empty_database_url, current_revision)
    assert revision == head_revision() == "0004"


async def test_migrated_schema_matches_the_table_definitions(empty_database_url: str) -> None:
    """What the migrations create is what the queries are written against."""
    repository = await open_repository(empty_database_url)
    await repository.close()

    def differences(connection: Connection) -> list[object]:
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        return list(compare_metadata(context, metadata))

    diff = await on_connection(empty_database_url, differences)
    assert diff == []


def test_migration_scripts_need_no_ini_file() -> None:
    assert (MIGRATIONS_DIR / "env.py").is_file()
    assert (MIGRATIONS_DIR / "versions" / "0001_initial.py").is_file()
    assert not (MIGRATIONS_DIR / "alembic.ini").exists()


async def test_a_sqlite_file_url_creates_its_folder(tmp_path: Path) -> None:
    """A SQLite file's folder is created on first use (the default file's too: settings.default_database_path)."""
    repository = await open_repository(f"sqlite+aiosqlite:///{tmp_path / 'var' / 'diagnosis.db'}")
    try:
        await repository.create_run(make_run("run-1"))
        assert repository.backend == "sqlite"
    finally:
        await repository.close()
    assert (tmp_path / "var" / "diagnosis.db").is_file()


async def test_sqlite_file_is_in_wal_mode(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'wal.db'}"
    repository = await open_repository(url)
    await repository.close()
    engine = create_async_engine(url)
    try:
        async with engine.connect() as conn:
            mode = (await conn.exec_driver_sql("PRAGMA journal_mode")).scalar_one()
    finally:
        await engine.dispose()
    assert str(mode).lower() == "wal"


async def test_sqlite_connections_enforce_foreign_keys_and_wait_when_busy(tmp_path: Path) -> None:
    # The URL users give runs on the synchronous driver, on the store's worker thread.
    engine = create_engine(f"sqlite+aiosqlite:///{tmp_path / 'pragmas.db'}")
    assert isinstance(engine, Engine)
    try:
        with engine.connect() as conn:
            foreign_keys = conn.exec_driver_sql("PRAGMA foreign_keys").scalar_one()
            busy_timeout = conn.exec_driver_sql("PRAGMA busy_timeout").scalar_one()
    finally:
        engine.dispose()
    assert foreign_keys == 1
    assert busy_timeout == SQLITE_BUSY_TIMEOUT_MS > 0


@pytest.mark.parametrize(
    "url",
    [
        "not a url",
        "mysql+aiomysql://user@127.0.0.1/db",
        "sqlite:///var/sync-driver.db",
    ],
)
async def test_unusable_url_is_a_store_error(url: str) -> None:
    with pytest.raises(StoreError):
        await open_repository(url)


async def test_unreachable_postgres_is_a_store_error() -> None:
    """A driver error (connection refused) surfaces as StoreError with the cause chained."""
    with pytest.raises(StoreError) as caught:
        await open_repository("postgresql+asyncpg://nobody@127.0.0.1:1/none")
    assert caught.value.__cause__ is not None


async def test_sqlite_path_that_is_a_folder_is_a_store_error(tmp_path: Path) -> None:
    (tmp_path / "taken.db").mkdir()
    with pytest.raises(StoreError, match="folder"):
        await open_repository(f"sqlite+aiosqlite:///{tmp_path / 'taken.db'}")


async def test_a_file_that_is_no_database_is_a_store_error(tmp_path: Path) -> None:
    """A driver error surfaces as StoreError with the cause chained."""
    (tmp_path / "garbage.db").write_bytes(bytes(range(256)) * 16)
    with pytest.raises(StoreError) as caught:
        await open_repository(f"sqlite+aiosqlite:///{tmp_path / 'garbage.db'}")
    assert caught.value.__cause__ is not None
