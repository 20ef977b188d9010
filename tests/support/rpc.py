"""Reading what a call returned: the google.rpc details of a failed call, the rest of a stream, and waiting
for state that has no event to await."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import grpc
import grpc.aio
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

RpcError = grpc.aio.AioRpcError | grpc.RpcError


def rich_status(error: RpcError) -> status_pb2.Status:
    """The google.rpc.Status of a failed call (``from_call`` also checks code and message agree)."""
    status = rpc_status.from_call(error)  # type: ignore[arg-type]  # an RpcError of a sync call is its Call too
    assert status is not None, f"no google.rpc.Status details on {_code(error)}: {_details(error)}"
    return status


def _code(error: RpcError) -> grpc.StatusCode:
    code: grpc.StatusCode = error.code()  # type: ignore[union-attr]
    return code


def _details(error: RpcError) -> str | None:
    details: str | None = error.details()  # type: ignore[union-attr]
    return details


def bad_request(error: RpcError) -> list[error_details_pb2.BadRequest.FieldViolation]:
    """The field violations of the BadRequest details of an INVALID_ARGUMENT call."""
    assert _code(error) == grpc.StatusCode.INVALID_ARGUMENT, (_code(error), _details(error))
    violations: list[error_details_pb2.BadRequest.FieldViolation] = []
    for detail in rich_status(error).details:
        if detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
            request = error_details_pb2.BadRequest()
            detail.Unpack(request)
            violations += request.field_violations
    return violations


def field_violations(error: RpcError) -> list[tuple[str, str]]:
    """(field, description) of each BadRequest violation."""
    return [(violation.field, violation.description) for violation in bad_request(error)]


def violation_fields(error: RpcError) -> list[str]:
    """The fields named by the BadRequest details of an INVALID_ARGUMENT call."""
    return [violation.field for violation in bad_request(error)]


def error_reason(error: RpcError) -> str:
    """The google.rpc.ErrorInfo reason of an error ("" when it has none)."""
    for detail in rich_status(error).details:
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
            return info.reason
    return ""


def retry_delay_s(error: RpcError) -> float:
    """The google.rpc.RetryInfo delay of an error, in seconds (0 when it has none)."""
    for detail in rich_status(error).details:
        if detail.Is(error_details_pb2.RetryInfo.DESCRIPTOR):
            info = error_details_pb2.RetryInfo()
            detail.Unpack(info)
            return float(info.retry_delay.ToMilliseconds() / 1000)
    return 0.0


async def collect(stream: AsyncIterator[Any]) -> list[Any]:
    return [message async for message in stream]


async def read_rest(call: grpc.aio.UnaryStreamCall[Any, Any]) -> list[Any]:
    """The remaining messages of a stream already read with ``read()`` (the two styles do not mix)."""
    messages: list[Any] = []
    while (message := await call.read()) is not grpc.aio.EOF:
        messages.append(message)
    return messages


async def eventually(condition: Callable[[], bool], *, within_s: float = 5.0) -> None:
    """Until ``condition()`` holds (for state that has no event to await, such as a server-side subscription)."""
    async with asyncio.timeout(within_s):
        while True:
            if condition():
                return
            await asyncio.sleep(0.005)
