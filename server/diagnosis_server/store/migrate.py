"""Applies the store's Alembic migrations programmatically (no alembic.ini needed)."""

from __future__ import annotations

import functools
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import text
from sqlalchemy.engine import Connection

from diagnosis_server.store.runners import StoreRunner

MIGRATIONS_DIR = Path(__file__).with_name("migrations")
# Any constant: instances starting together against one PostgreSQL migrate one at a time.
_PG_MIGRATION_LOCK = 0x64696167


def alembic_config(connection: Connection | None = None) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


@functools.cache
def head_revision() -> str | None:
    return ScriptDirectory.from_config(alembic_config()).get_current_head()


def current_revision(connection: Connection) -> str | None:
    return MigrationContext.configure(connection).get_current_revision()


def upgrade_connection(connection: Connection) -> None:
    """Migrates the database behind a sync connection (inside its transaction) to the head revision."""
    if connection.dialect.name == "postgresql":
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_MIGRATION_LOCK})
    if current_revision(connection) == head_revision():
        return
    command.upgrade(alembic_config(connection), "head")


async def upgrade(runner: StoreRunner) -> None:
    """Brings the database behind ``runner`` to the latest schema; a no-op when it is there already."""
    await runner.prepare()
    await runner.write(upgrade_connection)
