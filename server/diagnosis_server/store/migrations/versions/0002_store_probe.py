"""The store probe: one row every instance rewrites to prove the store takes writes (health).

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    table = op.create_table(
        "store_probe",
        sa.Column("id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("owner", sa.String(64), nullable=False),
        sa.Column("probed_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_store_probe"),
    )
    now = datetime.now(UTC)
    if op.get_context().dialect.name == "sqlite":
        now = now.replace(tzinfo=None)  # SQLite keeps naive UTC (tables.UtcDateTime)
    op.bulk_insert(table, [{"id": 1, "owner": "", "probed_at": now}])


def downgrade() -> None:
    op.drop_table("store_probe")
