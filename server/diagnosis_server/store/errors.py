"""The store's errors: one base class, a few subclasses callers may want to tell apart."""

from __future__ import annotations


class StoreError(Exception):
    """A read or write failed; a failed write left nothing behind. The driver's error is chained."""


class StoreFileLost(StoreError):
    """The SQLite file the store opened was deleted or replaced: what is written now is lost on restart."""


class DuplicateRecord(StoreError):
    """A record with the same key exists (a run id, an invocation id, an event sequence)."""


class RunNotFound(StoreError):
    """No run has this id."""


class RunAlreadyFinished(StoreError):
    """The run is SUCCESS or FAILED: its record is final and takes no more writes."""


class InvalidRecord(StoreError, ValueError):
    """A record given to the store is inconsistent (e.g. an event of another run): nothing was written."""


class InvalidPageToken(ValueError):
    """A page token is malformed, tampered with, or was made for other filters or another tenant."""
