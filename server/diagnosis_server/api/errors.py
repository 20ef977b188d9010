"""Errors the servicers raise, and their wire form: a status code with ``google.rpc`` details.

A servicer raises ``ApiError``; ``MappedErrors`` (a layer of every call) turns it into
``context.abort_with_status`` with a ``google.rpc.Status`` whose details hold a ``BadRequest`` (bad input)
or an ``ErrorInfo`` (everything else). Anything else raised is logged (with the run id when known) and is
INTERNAL with a generic message: no traceback or internal text leaves the server. A store failure is
UNAVAILABLE with a google.rpc.RetryInfo instead (the store may recover; the caller may retry).

Messages and field-violation descriptions are clipped to ``MAX_TEXT_BYTES`` of UTF-8: both travel in the
response trailers (``grpc-message`` and ``grpc-status-details-bin``), and a caller's metadata limit (8 KiB
soft, 16 KiB hard by default) would otherwise turn an error that echoes a huge input into a bare
RESOURCE_EXHAUSTED with no details.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping
from typing import Any

import grpc
import grpc.aio
import structlog
from google.protobuf import any_pb2, duration_pb2
from google.protobuf.message import Message
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

from diagnosis_server.api.calls import CallInfo, Context
from diagnosis_server.store import StoreError

ERROR_DOMAIN = "diagnosis.v1"
INTERNAL_MESSAGE = "internal error"
MAX_TEXT_BYTES = 1024
# The retry hint sent with a store outage.
STORE_RETRY_AFTER_S = 2.0
_ELLIPSIS = "..."

log = structlog.get_logger("diagnosis_server.api")


def clip(text: str, limit: int = MAX_TEXT_BYTES) -> str:
    """``text`` if its UTF-8 form fits in ``limit`` bytes, else its longest prefix that does, plus "..."."""
    data = text.encode("utf-8", errors="replace")
    if len(data) <= limit:
        return text
    return data[: limit - len(_ELLIPSIS)].decode("utf-8", errors="ignore") + _ELLIPSIS


class ApiError(Exception):
    """A canonical status code, a message for the caller, and google.rpc details."""

    def __init__(self, code: grpc.StatusCode, message: str, details: Iterable[Message] = ()) -> None:
        message = clip(message)
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = list(details)

    def to_status(self) -> grpc.Status:
        status = status_pb2.Status(code=self.code.value[0], message=self.message)
        for detail in self.details:
            packed = any_pb2.Any()
            packed.Pack(detail)
            status.details.append(packed)
        result: grpc.Status = rpc_status.to_status(status)
        return result


def error_info(reason: str, metadata: Mapping[str, str] | None = None) -> error_details_pb2.ErrorInfo:
    return error_details_pb2.ErrorInfo(reason=reason, domain=ERROR_DOMAIN, metadata=dict(metadata or {}))


def invalid_argument(field: str, description: str) -> ApiError:
    """INVALID_ARGUMENT with one BadRequest field violation; the message is ``field: description``."""
    description = clip(description)
    violation = error_details_pb2.BadRequest.FieldViolation(field=field, description=description)
    return ApiError(
        grpc.StatusCode.INVALID_ARGUMENT,
        f"{field}: {description}",
        [error_details_pb2.BadRequest(field_violations=[violation])],
    )


def run_not_found(run_id: str) -> ApiError:
    return ApiError(
        grpc.StatusCode.NOT_FOUND,
        f"run {run_id!r} not found",
        [error_info("RUN_NOT_FOUND", {"run_id": run_id})],
    )


def unauthenticated(description: str) -> ApiError:
    return ApiError(grpc.StatusCode.UNAUTHENTICATED, description, [error_info("UNAUTHENTICATED")])


def resource_exhausted(
    reason: str, description: str, metadata: Mapping[str, str] | None = None, *, retry_after_s: float | None = None
) -> ApiError:
    """RESOURCE_EXHAUSTED with an ErrorInfo, and a RetryInfo when the caller may try again after a while."""
    details: list[Message] = [error_info(reason, metadata)]
    if retry_after_s is not None:
        details.append(retry_info(retry_after_s))
    return ApiError(grpc.StatusCode.RESOURCE_EXHAUSTED, description, details)


def retry_info(seconds: float) -> error_details_pb2.RetryInfo:
    """google.rpc.RetryInfo: how long a caller should wait before it tries again."""
    delay = duration_pb2.Duration()
    delay.FromMilliseconds(int(seconds * 1000))
    return error_details_pb2.RetryInfo(retry_delay=delay)


def unavailable(reason: str, description: str, *, retry_after_s: float | None = None) -> ApiError:
    details: list[Message] = [error_info(reason)]
    if retry_after_s is not None:
        details.append(retry_info(retry_after_s))
    return ApiError(grpc.StatusCode.UNAVAILABLE, description, details)


def store_unavailable(problem: str = "") -> ApiError:
    """The store cannot be read or written now: UNAVAILABLE with a RetryInfo (the cause is logged, not sent)."""
    description = "the store is unavailable; retry later"
    if problem:
        description = f"the store is unavailable ({problem}); retry later"
    return unavailable("STORE_UNAVAILABLE", description, retry_after_s=STORE_RETRY_AFTER_S)


def internal() -> ApiError:
    return ApiError(grpc.StatusCode.INTERNAL, INTERNAL_MESSAGE, [error_info("INTERNAL")])


def _ended_code(context: Context) -> grpc.StatusCode:
    """Why a call stopped without an answer: its deadline passed, or the caller went away."""
    remaining = context.time_remaining()
    if remaining is not None and remaining <= 0:
        return grpc.StatusCode.DEADLINE_EXCEEDED
    return grpc.StatusCode.CANCELLED


class MappedErrors:
    """Every way a call can end, as its status code (``call.code``) and, for an error, its wire form."""

    __slots__ = ("_call", "_context")

    def __init__(self, request: Any, context: Context, call: CallInfo) -> None:
        self._context = context
        self._call = call

    async def __aenter__(self) -> None:
        return None

    async def __aexit__(self, _type: type[BaseException] | None, exc: BaseException | None, _tb: object) -> None:
        call, context = self._call, self._context
        if exc is None:
            return
        if isinstance(exc, ApiError):
            call.code = exc.code
            await context.abort_with_status(exc.to_status())
        elif isinstance(exc, (asyncio.CancelledError, GeneratorExit)):
            call.code = _ended_code(context)
        elif isinstance(exc, grpc.aio.AbortError):
            call.code = context.code() or grpc.StatusCode.UNKNOWN
        elif isinstance(exc, StoreError):
            call.code = grpc.StatusCode.UNAVAILABLE
            log.warning("rpc_store_failed", method=call.method, run_id=call.run_id or None, error=str(exc)[:300])
            await context.abort_with_status(store_unavailable().to_status())
        elif isinstance(exc, Exception):
            call.code = grpc.StatusCode.INTERNAL
            log.exception("rpc_failed", method=call.method, run_id=call.run_id or None, exc_info=exc)
            await context.abort_with_status(internal().to_status())
