"""Helpers of the API tests: google.rpc details of a failed call, waiting for a condition."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import grpc
import grpc.aio
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status


def rich_status(error: grpc.aio.AioRpcError) -> status_pb2.Status:
    status = rpc_status.from_call(error)  # checks code and message agree with the trailers
    assert status is not None, f"no google.rpc.Status details on {error.code()}: {error.details()}"
    return status


def field_violations(error: grpc.aio.AioRpcError) -> list[tuple[str, str]]:
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, (error.code(), error.details())
    violations: list[tuple[str, str]] = []
    for detail in rich_status(error).details:
        if detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
            bad_request = error_details_pb2.BadRequest()
            detail.Unpack(bad_request)
            violations += [(v.field, v.description) for v in bad_request.field_violations]
    return violations


def error_reason(error: grpc.aio.AioRpcError) -> str:
    for detail in rich_status(error).details:
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
            return info.reason
    return ""


def retry_delay_s(error: grpc.aio.AioRpcError | grpc.RpcError) -> float:
    """The google.rpc.RetryInfo delay of an error, in seconds (0 when it has none)."""
    for detail in rich_status(error).details:  # type: ignore[arg-type]
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
