"""The initial schema: runs, tool invocations, orchestration events, node steps, checkpoints.

Revision ID: 0001
Revises:
Create Date: 2026-11-30
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def _goes_with_its_run(table: str) -> sa.ForeignKeyConstraint:
    """The foreign key of a table of a run's rows: deleting the run deletes them."""
    return sa.ForeignKeyConstraint(
        ["run_id"], ["diagnosis_run.run_id"], name=f"fk_{table}_run_id_diagnosis_run", ondelete="CASCADE"
    )


def _create_keyed_by_run(table: str, key: sa.Column[Any], *columns: sa.Column[Any]) -> None:
    """A table of a run's rows keyed by (run_id, ``key``)."""
    op.create_table(
        table,
        sa.Column("run_id", sa.String(128), nullable=False),
        key,
        *columns,
        sa.PrimaryKeyConstraint("run_id", key.name, name=f"pk_{table}"),
        _goes_with_its_run(table),
    )


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
        _goes_with_its_run("tool_invocation"),
        sa.UniqueConstraint("run_id", "invocation_id", name="uq_tool_invocation_run_id_invocation_id"),
    )

    _create_keyed_by_run(
        "orchestration_event",
        sa.Column("sequence", sa.BigInteger(), nullable=False, autoincrement=False),
        sa.Column("node", sa.Integer(), nullable=False),
        sa.Column("outcome", sa.Integer(), nullable=False),
        sa.Column("payload", sa.LargeBinary(), nullable=False),
    )

    op.create_table(
        "node_step",
        sa.Column("id", _ID, nullable=False, autoincrement=True),
        sa.Column("run_id", sa.String(128), nullable=False),
        sa.Column("node", sa.Integer(), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("payload", sa.LargeBinary(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_node_step"),
        _goes_with_its_run("node_step"),
    )
    op.create_index("ix_node_step_run_id_id", "node_step", ["run_id", "id"])

    create_checkpoint()


def create_checkpoint() -> None:
    """The checkpoint table (dropped by 0003, whose downgrade makes it again with this)."""
    _create_keyed_by_run(
        "checkpoint",
        sa.Column("step", sa.Integer(), nullable=False, autoincrement=False),
        sa.Column("node", sa.Integer(), nullable=False),
        sa.Column("state", sa.LargeBinary(), nullable=False),
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
