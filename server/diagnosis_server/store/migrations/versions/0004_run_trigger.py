"""What started a run: its trigger kind and an alert group's dedupe key, as columns (ListRuns filters, dedupe).

Runs stored before this revision were all started by a question (TRIGGER_KIND_QUESTION, 1).

Revision ID: 0004
Revises: 0003
Create Date: 2027-01-20
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("diagnosis_run", sa.Column("trigger_kind", sa.Integer(), nullable=False, server_default="0"))
    op.add_column("diagnosis_run", sa.Column("trigger_key", sa.String(64), nullable=True))
    op.execute("UPDATE diagnosis_run SET trigger_kind = 1")
    op.create_index("ix_diagnosis_run_tenant_trigger_key", "diagnosis_run", ["tenant", "trigger_key"])


def downgrade() -> None:
    op.drop_index("ix_diagnosis_run_tenant_trigger_key", table_name="diagnosis_run")
    with op.batch_alter_table("diagnosis_run") as batch:
        batch.drop_column("trigger_key")
        batch.drop_column("trigger_kind")
