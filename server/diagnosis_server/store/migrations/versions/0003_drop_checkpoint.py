"""Drops the checkpoint table: a node's state snapshot was written on every node and never read.

A run is not resumed from its last node: a run whose instance died is marked FAILED (INTERRUPTED) by the
orphan sweep. A node commit's status check is now its first event's conditional insert.

Revision ID: 0003
Revises: 0002
Create Date: 2027-01-12
"""

from __future__ import annotations

import importlib

from alembic import op

revision = "0003"
down_revision = "0002"


def upgrade() -> None:
    op.drop_table("checkpoint")


def downgrade() -> None:
    """The table again, empty, as 0001 made it (the runs stored since have no checkpoints)."""
    initial = importlib.import_module("diagnosis_server.store.migrations.versions.0001_initial")
    initial.create_checkpoint()
