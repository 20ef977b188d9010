"""The initial schema: runs, tool invocations, orchestration events, node steps, checkpoints.

Revision ID: 0001
Revises:
Create Date: 2026-11-30
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "diagnosis_run",
        sa.Column("run_id", sa.String(128), nullable=False),
        sa.Column("tenant", sa.String(128), nullable=False),
        sa.Column("status", sa.Integer(), nullable=False),
        sa.Column("verdict", sa.Integer(), nullable=False),
        sa.Column("question", sa.Text(), nullable=False),
        sa.Column("scenario", sa.String(256), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("owner", sa.String(64), nullable=False),
        sa.Column("heartbeat_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("payload", sa.LargeBinary(), nullable=False),
        sa.PrimaryKeyConstraint("run_id", name="pk_diagnosis_run"),
    )
    op.create_index("ix_diagnosis_run_created_at_run_id", "diagnosis_run", ["created_at", "run_id"])
    op.create_index("ix_diagnosis_run_tenant_created_at_run_id", "diagnosis_run", ["tenant", "created_at", "run_id"])
    op.create_index("ix_diagnosis_run_status_owner", "diagnosis_run", ["status", "owner"])

    op.create_table(
        "tool_invocation",
        sa.Column("seq", _ID, nullable=False, autoincrement=True),
        sa.Column("run_id", sa.String(128), nullable=False),
        sa.Column("invocation_id", sa.String(128), nullable=False),
        sa.Column("tool_name", sa.String(128), nullable=False),
        sa.Column("payload", sa.LargeBinary(), nullable=False),
        sa.PrimaryKeyConstraint("seq", name="pk_tool_invocation"),
        sa.ForeignKeyConstraint(
            ["run_id"],
            ["diagnosis_run.run_id"],
            name="fk_tool_invocation_run_id_diagnosis_run",
            ondelete="CASCADE",
        ),
        sa.UniqueConstraint("run_id", "invocation_id", name="uq_tool_invocation_run_id_invocation_id"),
    )

    op.create_table(
        "orchestration_event",
        sa.Column("run_id", sa.String(128), nullable=False),
        sa.Column("sequence", sa.BigInteger(), nullable=False, autoincrement=False),
        sa.Column("node", sa.Integer(), nullable=False),
        sa.Column("outcome", sa.Integer(), nullable=False),
        sa.Column("payload", sa.LargeBinary(), nullable=False),
        sa.PrimaryKeyConstraint("run_id", "sequence", name="pk_orchestration_event"),
        sa.ForeignKeyConstraint(
            ["run_id"],
            ["diagnosis_run.run_id"],
            name="fk_orchestration_event_run_id_diagnosis_run",
            ondelete="CASCADE",
        ),
    )

    op.create_table(
        "node_step",
        sa.Column("id", _ID, nullable=False, autoincrement=True),
        sa.Column("run_id", sa.String(128), nullable=False),
        sa.Column("node", sa.Integer(), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("payload", sa.LargeBinary(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_node_step"),
        sa.ForeignKeyConstraint(
            ["run_id"],
            ["diagnosis_run.run_id"],
            name="fk_node_step_run_id_diagnosis_run",
            ondelete="CASCADE",
        ),
    )
    op.create_index("ix_node_step_run_id_id", "node_step", ["run_id", "id"])

    op.create_table(
        "checkpoint",
        sa.Column("run_id", sa.String(128), nullable=False),
        sa.Column("step", sa.Integer(), nullable=False, autoincrement=False),
        sa.Column("node", sa.Integer(), nullable=False),
        sa.Column("state", sa.LargeBinary(), nullable=False),
        sa.PrimaryKeyConstraint("run_id", "step", name="pk_checkpoint"),
        sa.ForeignKeyConstraint(
            ["run_id"],
            ["diagnosis_run.run_id"],
            name="fk_checkpoint_run_id_diagnosis_run",
            ondelete="CASCADE",
        ),
    )


def downgrade() -> None:
    op.drop_table("checkpoint")
    op.drop_index("ix_node_step_run_id_id", table_name="node_step")
    op.drop_table("node_step")
    op.drop_table("orchestration_event")
    op.drop_table("tool_invocation")
    op.drop_index("ix_diagnosis_run_status_owner", table_name="diagnosis_run")
    op.drop_index("ix_diagnosis_run_tenant_created_at_run_id", table_name="diagnosis_run")
    op.drop_index("ix_diagnosis_run_created_at_run_id", table_name="diagnosis_run")
    op.drop_table("diagnosis_run")
