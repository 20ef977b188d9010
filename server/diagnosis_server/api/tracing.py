"""A SERVER span per RPC (gRPC semantic conventions), continuing the caller's trace context (traceparent).

The span is current while the call runs, so the lines logged inside it carry its trace id.
"""

from __future__ import annotations

import contextlib
from typing import Any

import grpc
from opentelemetry import context as otel_context
from opentelemetry import propagate, trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

from diagnosis_server.api.calls import CallInfo, Context
from diagnosis_server.telemetry import tracer

# gRPC semantic conventions: the status codes that mark a server span as an error.
_SERVER_ERROR_CODES = frozenset(
    {
        grpc.StatusCode.UNKNOWN,
        grpc.StatusCode.DEADLINE_EXCEEDED,
        grpc.StatusCode.UNIMPLEMENTED,
        grpc.StatusCode.INTERNAL,
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.DATA_LOSS,
    }
)


def server_span(method: str, context: Context) -> Span:
    """The RPC's SERVER span, continuing the caller's trace context from its metadata (traceparent)."""
    carrier: dict[str, str] = {}
    for key, value in context.invocation_metadata() or ():
        if isinstance(value, str) and not key.endswith("-bin"):
            carrier[key.lower()] = value
    parent = propagate.extract(carrier)
    service, _, name = method.partition("/")
    attributes: dict[str, str | int] = {"rpc.system": "grpc", "rpc.service": service, "rpc.method": name}
    peer = context.peer() or ""
    kind, _, address = peer.partition(":")
    if kind in ("ipv4", "ipv6") and address:
        host, _, port = address.rpartition(":")
        attributes["network.peer.address"] = host.strip("[]")
        if port.isdigit():
            attributes["network.peer.port"] = int(port)
    return tracer().start_span(method, context=parent, kind=SpanKind.SERVER, attributes=attributes)


class Traced:
    """The call's span, current while it runs; its status code, tenant and run id set as it ends."""

    __slots__ = ("_call", "_span", "_token")

    def __init__(self, request: Any, context: Context, call: CallInfo) -> None:
        self._call = call
        self._span = server_span(call.method, context)
        self._token: object = None

    async def __aenter__(self) -> None:
        self._token = otel_context.attach(trace.set_span_in_context(self._span))

    async def __aexit__(self, *exc_info: object) -> None:
        call, span = self._call, self._span
        span.set_attribute("rpc.grpc.status_code", call.code.value[0])
        if call.run_id:
            span.set_attribute("diagnosis.run_id", call.run_id)
        if call.tenant:
            span.set_attribute("diagnosis.tenant", call.tenant)
        if call.code in _SERVER_ERROR_CODES:
            span.set_status(Status(StatusCode.ERROR, call.code.name))
        span.end()
        with contextlib.suppress(ValueError):  # a stream closed from another context
            otel_context.detach(self._token)  # type: ignore[arg-type]
