"""Alembic environment: runs the migrations on the connection the store hands it.

The store calls Alembic programmatically (``diagnosis_server.store.migrate``) inside
``async with engine.begin() as conn: await conn.run_sync(...)``; the sync connection arrives in
``config.attributes["connection"]``. There is no offline (SQL script) mode.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy.engine import Connection

from diagnosis_server.store.tables import metadata


def run_migrations(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def main() -> None:
    connection = context.config.attributes.get("connection")
    if not isinstance(connection, Connection):
        raise RuntimeError("the store's migrations run only through diagnosis_server.store.migrate")
    run_migrations(connection)


main()
