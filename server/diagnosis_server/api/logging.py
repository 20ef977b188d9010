"""Structured logs: one JSON object a line on stderr (structlog), configured once per process.

What is logged is chosen where it is logged: ids, codes, counts and durations. Bearer tokens, prompt
texts and questions are never passed to a logger. Tracebacks are rendered without their frames'
local variables: those hold requests, questions, prompt texts and run state, which a log line must not.
Lines written inside an RPC or a run carry its ``method``, ``tenant`` and ``run_id`` (structlog contextvars,
bound by ``calls``) and, when tracing is on, the current ``trace_id`` and ``span_id``. ``RpcLogLine`` is the
layer of every call that writes its one line: method, peer, code, duration_ms, tenant and run_id when known.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import MutableMapping
from typing import Any, TextIO, cast

import structlog

from diagnosis_server.api.calls import CallInfo, Context
from diagnosis_server.telemetry import add_trace_ids
from diagnosis_server.text.redaction import redact_value

log = structlog.get_logger("diagnosis_server.api")

# structlog's dict_tracebacks shows every frame's locals by default; ours never do.
_TRACEBACKS = structlog.processors.ExceptionRenderer(structlog.tracebacks.ExceptionDictTransformer(show_locals=False))
_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR}


def _redacted(_logger: object, _method: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    """The last step before a line is written: every text of the event (an upstream's error, a rendered
    traceback) through the one redaction, so a token that reached a message is never logged."""
    return {key: redact_value(value) if isinstance(value, str | list | dict) else value for key, value in event.items()}


class _Stderr:
    """``sys.stderr`` as it is when a line is written, not when logging was configured: a caller that swaps it
    for a while (a test's capture, a command run in-process) must not leave the loggers writing to a closed one."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


def configure_logging(level: str = "info", *, stream: TextIO | None = None) -> None:
    """JSON lines on ``stream`` (stderr) for every structlog logger of the process, at ``level`` and above."""
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            add_trace_ids,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.StackInfoRenderer(),
            _TRACEBACKS,
            _redacted,
            structlog.processors.JSONRenderer(sort_keys=True),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(_LEVELS.get(level.lower(), logging.INFO)),
        logger_factory=structlog.WriteLoggerFactory(file=stream or cast(TextIO, _Stderr())),
        cache_logger_on_first_use=False,
    )


class RpcLogLine:
    """The call's one line, written as it ends."""

    __slots__ = ("_call", "_started")

    def __init__(self, request: Any, context: Context, call: CallInfo) -> None:
        self._call = call
        self._started = time.perf_counter()

    async def __aenter__(self) -> None:
        return None

    async def __aexit__(self, *exc_info: object) -> None:
        call = self._call
        fields: dict[str, Any] = {
            "method": call.method,
            "peer": call.peer,
            "code": call.code.name,
            "duration_ms": round((time.perf_counter() - self._started) * 1000, 3),
        }
        if call.tenant:
            fields["tenant"] = call.tenant
        if call.run_id:
            fields["run_id"] = call.run_id
        log.info("rpc", **fields)
