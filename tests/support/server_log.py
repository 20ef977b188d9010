"""The server's log into one buffer: every structlog line (at debug) and the stdlib's records."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator
from contextlib import contextmanager

import structlog

from diagnosis_server.api import configure_logging


@contextmanager
def server_log_buffer(stdlib_level: int = logging.NOTSET) -> Iterator[io.StringIO]:
    """While the block runs, structlog at debug and the stdlib records from ``stdlib_level`` up write to
    the buffer; the logging configuration is restored after."""
    saved = structlog.get_config()
    buffer = io.StringIO()
    configure_logging("debug", stream=buffer)
    handler = logging.StreamHandler(buffer)
    handler.setLevel(stdlib_level)
    logging.getLogger().addHandler(handler)
    try:
        yield buffer
    finally:
        logging.getLogger().removeHandler(handler)
        structlog.configure(**saved)
