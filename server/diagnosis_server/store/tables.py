"""The store's tables (SQLAlchemy Core). Migrations create them; queries use these definitions.

Each table keeps a proto as deterministic bytes in ``payload`` plus the columns queries need;
``records.py`` derives both from the proto in one place.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    BigInteger,
    Column,
    DateTime,
    Dialect,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)
from sqlalchemy.types import TypeDecorator

NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

metadata = MetaData(naming_convention=NAMING_CONVENTION)

# An auto-incrementing 64-bit key; on SQLite it must be spelled INTEGER to alias the rowid.
AutoIncrementId = BigInteger().with_variant(Integer(), "sqlite")


class UtcDateTime(TypeDecorator[datetime]):
    """A point in time, always timezone-aware UTC in Python.

    PostgreSQL stores ``timestamptz``; SQLite stores naive UTC text with microseconds, which sorts
    in time order, so keyset comparisons work on both.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to a UTC column")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if not isinstance(value, datetime):
            raise TypeError(f"expected a datetime from the database, got {type(value).__name__}")
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


diagnosis_run = Table(
    "diagnosis_run",
    metadata,
    Column("run_id", String(128), primary_key=True),
    Column("tenant", String(128), nullable=False),
    Column("status", Integer, nullable=False),
    Column("verdict", Integer, nullable=False),
    Column("question", Text, nullable=False),
    Column("scenario", String(256), nullable=False),
    Column("created_at", UtcDateTime, nullable=False),
    Column("updated_at", UtcDateTime, nullable=False),
    Column("owner", String(64), nullable=False),
    Column("heartbeat_at", UtcDateTime, nullable=False),
    Column("payload", LargeBinary, nullable=False),
    # What started the run (TriggerKind) and, for an alert group, its dedupe key (AlertGroupTrigger.dedupe_key).
    Column("trigger_kind", Integer, nullable=False, server_default="0"),
    Column("trigger_key", String(64), nullable=True),
    Index(None, "created_at", "run_id"),
    Index(None, "tenant", "created_at", "run_id"),
    Index(None, "status", "owner"),
    Index(None, "tenant", "trigger_key"),
)

tool_invocation = Table(
    "tool_invocation",
    metadata,
    # Recording order; the key of the row. (run_id, invocation_id) is the natural key.
    Column("seq", AutoIncrementId, primary_key=True, autoincrement=True),
    Column("run_id", String(128), ForeignKey("diagnosis_run.run_id", ondelete="CASCADE"), nullable=False),
    Column("invocation_id", String(128), nullable=False),
    Column("tool_name", String(128), nullable=False),
    Column("payload", LargeBinary, nullable=False),
    UniqueConstraint("run_id", "invocation_id"),
)

orchestration_event = Table(
    "orchestration_event",
    metadata,
    Column(
        "run_id",
        String(128),
        ForeignKey("diagnosis_run.run_id", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column("sequence", BigInteger, primary_key=True, autoincrement=False),
    Column("node", Integer, nullable=False),
    Column("outcome", Integer, nullable=False),
    Column("payload", LargeBinary, nullable=False),
)

node_step = Table(
    "node_step",
    metadata,
    Column("id", AutoIncrementId, primary_key=True, autoincrement=True),
    Column("run_id", String(128), ForeignKey("diagnosis_run.run_id", ondelete="CASCADE"), nullable=False),
    Column("node", Integer, nullable=False),
    Column("attempt", Integer, nullable=False),
    Column("payload", LargeBinary, nullable=False),
    Index(None, "run_id", "id"),
)

# One row (id 1) that every instance rewrites now and then: a write that proves the store takes writes.
store_probe = Table(
    "store_probe",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=False),
    Column("owner", String(64), nullable=False),
    Column("probed_at", UtcDateTime, nullable=False),
)
