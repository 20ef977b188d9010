"""Reading what a call returned: the google.rpc details of a failed call, the rest of a stream, and waiting
for state that has no event to await."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterable, Callable
from typing import Any, TypeVar, cast

import grpc
import grpc.aio
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

RpcError = grpc.aio.AioRpcError | grpc.RpcError
T = TypeVar("T")


def rich_status(error: RpcError) -> status_pb2.Status:
    """The google.rpc.Status of a failed call (``from_call`` also checks code and message agree)."""
    status: status_pb2.Status | None = rpc_status.from_call(error)
    assert status is not None, f"no google.rpc.Status details on {error.code()}: {error.details()}"
    return status


def bad_request(error: RpcError) -> list[error_details_pb2.BadRequest.FieldViolation]:
    """The field violations of the BadRequest details of an INVALID_ARGUMENT call."""
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, (error.code(), error.details())
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
            return str(info.reason)
    return ""


def retry_delay_s(error: RpcError) -> float:
    """The google.rpc.RetryInfo delay of an error, in seconds (0 when it has none)."""
    for detail in rich_status(error).details:
        if detail.Is(error_details_pb2.RetryInfo.DESCRIPTOR):
            info = error_details_pb2.RetryInfo()
            detail.Unpack(info)
            return float(info.retry_delay.ToMilliseconds() / 1000)
    return 0.0


def raw_unary_unary(channel: grpc.aio.Channel, method: str) -> grpc.aio.UnaryUnaryMultiCallable[bytes, bytes]:
    """The method at ``method`` taking and returning raw bytes (no client-side serialization)."""
    return cast("grpc.aio.UnaryUnaryMultiCallable[bytes, bytes]", channel.unary_unary(method))


def raw_unary_stream(channel: grpc.aio.Channel, method: str) -> grpc.aio.UnaryStreamMultiCallable[bytes, bytes]:
    """A server-streaming method taking raw bytes and streaming raw bytes."""
    return cast("grpc.aio.UnaryStreamMultiCallable[bytes, bytes]", channel.unary_stream(method))


async def collect(stream: AsyncIterable[T]) -> list[T]:
    return [message async for message in stream]


async def next_message(call: grpc.aio.UnaryStreamCall[Any, T]) -> T:
    """The next message of a stream read with ``read()``; fails the test at the stream's end."""
    message = await call.read()
    assert message is not grpc.aio.EOF, "the stream ended"
    return cast(T, message)


async def read_rest(call: grpc.aio.UnaryStreamCall[Any, T]) -> list[T]:
    """The remaining messages of a stream already read with ``read()`` (the two styles do not mix)."""
    messages: list[T] = []
    while (message := await call.read()) is not grpc.aio.EOF:
        messages.append(cast(T, message))
    return messages


async def eventually(condition: Callable[[], bool], *, within_s: float = 5.0) -> None:
    """Until ``condition()`` holds (for state that has no event to await, such as a server-side subscription)."""
    async with asyncio.timeout(within_s):
        while True:
            if condition():
                return
            await asyncio.sleep(0.005)
