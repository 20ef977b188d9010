"""The store: runs, tool invocations, orchestration events, node steps and checkpoints.

A SQLite file by default (``sqlite+aiosqlite:///var/diagnosis.db``), PostgreSQL by URL
(``postgresql+asyncpg://...``); the schema is migrated with Alembic when the store opens.
"""

from __future__ import annotations

from diagnosis_server.store.engine import DEFAULT_DATABASE_URL
from diagnosis_server.store.errors import (
    DuplicateRecord,
    InvalidPageToken,
    InvalidRecord,
    RunAlreadyFinished,
    RunNotFound,
    StoreError,
    StoreFileLost,
)
from diagnosis_server.store.pagination import (
    PageToken,
    RunFilter,
    RunPage,
    decode_page_token,
    encode_page_token,
)
from diagnosis_server.store.records import Checkpoint
from diagnosis_server.store.repository import (
    DEFAULT_STALE_AFTER_S,
    INTERRUPTED,
    MAX_PAGE_SIZE,
    Repository,
    open_repository,
)

__all__ = [
    "DEFAULT_DATABASE_URL",
    "DEFAULT_STALE_AFTER_S",
    "INTERRUPTED",
    "MAX_PAGE_SIZE",
    "Checkpoint",
    "DuplicateRecord",
    "InvalidPageToken",
    "InvalidRecord",
    "PageToken",
    "Repository",
    "RunAlreadyFinished",
    "RunFilter",
    "RunNotFound",
    "RunPage",
    "StoreError",
    "StoreFileLost",
    "decode_page_token",
    "encode_page_token",
    "open_repository",
]
