"""The store: runs, tool invocations, orchestration events and node steps, behind one ``RunStore`` protocol.

A SQLite file (``sqlite+aiosqlite:///path``; the settings name the default one), PostgreSQL by URL
(``postgresql+asyncpg://...``), the schema migrated with Alembic when the store opens (``open_repository``);
or one process's memory (``MemoryStore``: tests and the bench).
"""

from __future__ import annotations

from diagnosis_server.store.base import (
    DEFAULT_STALE_AFTER_S,
    INTERRUPTED,
    MAX_EVENTS_LIMIT,
    LiveRuns,
    NodeCommit,
    RunStore,
    Watch,
)
from diagnosis_server.store.errors import (
    DuplicateRecord,
    InvalidPageToken,
    InvalidRecord,
    RunAlreadyFinished,
    RunNotFound,
    StoreError,
    StoreFileLost,
)
from diagnosis_server.store.memory import MemoryStore
from diagnosis_server.store.pagination import (
    MAX_PAGE_SIZE,
    PageToken,
    RunFilter,
    RunPage,
    decode_page_token,
    encode_page_token,
)
from diagnosis_server.store.repository import Repository, open_repository

__all__ = [
    "DEFAULT_STALE_AFTER_S",
    "INTERRUPTED",
    "MAX_EVENTS_LIMIT",
    "MAX_PAGE_SIZE",
    "DuplicateRecord",
    "InvalidPageToken",
    "InvalidRecord",
    "LiveRuns",
    "MemoryStore",
    "NodeCommit",
    "PageToken",
    "Repository",
    "RunAlreadyFinished",
    "RunFilter",
    "RunNotFound",
    "RunPage",
    "RunStore",
    "StoreError",
    "StoreFileLost",
    "Watch",
    "decode_page_token",
    "encode_page_token",
    "open_repository",
]
