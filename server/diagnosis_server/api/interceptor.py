"""The one server interceptor: authentication, error mapping, the RPC's log line and its metrics.

It wraps every method of the ``diagnosis.v1`` services. Health and reflection pass through untouched
(open to everyone, unlogged). For a wrapped method:

- the bearer token names the tenant (UNAUTHENTICATED otherwise), kept in ``calls.current_call()``;
- a request that does not decode as its message (corrupt wire format, a string field that is not
  UTF-8) is INVALID_ARGUMENT naming ``request``, after authentication, instead of the library's UNKNOWN
  with its internal exception text;
- an ``ApiError`` becomes ``abort_with_status`` with its google.rpc details; any other exception is
  logged (with the run id when known) and becomes INTERNAL with a generic message, except a store
  failure, which is UNAVAILABLE with a google.rpc.RetryInfo (the store may recover; the caller may retry);
- one JSON log line per RPC: method, peer, code, duration_ms, tenant and run_id when known;
- ``rpc_total{method, code}`` and, for server streams, ``active_streams{method}``;
- a SERVER span per RPC (gRPC semantic conventions), continuing the caller's trace context; the log lines
  written inside the call carry its tenant (structlog contextvars) and trace id.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc
import grpc.aio
import structlog
from google.protobuf.message import DecodeError
from opentelemetry import context as otel_context
from opentelemetry import propagate, trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

from diagnosis_server.api.auth import TokenAuthenticator
from diagnosis_server.api.calls import CallInfo, bind_call
from diagnosis_server.api.errors import ApiError, internal, invalid_argument, store_unavailable
from diagnosis_server.api.metrics import Metrics
from diagnosis_server.store import StoreError
from diagnosis_server.telemetry import tracer

PROTECTED_PREFIX = "/diagnosis.v1."

log = structlog.get_logger("diagnosis_server.api")

Deserializer = Callable[[bytes], Any]
UnaryBehaviour = Callable[[Any, grpc.aio.ServicerContext[Any, Any]], Awaitable[Any]]
StreamBehaviour = Callable[[Any, grpc.aio.ServicerContext[Any, Any]], AsyncIterator[Any]]


class _Undecodable:
    """Stands for a request whose bytes did not decode; the wrapped method refuses it."""


UNDECODABLE = _Undecodable()


def _lenient(deserializer: Deserializer | None) -> Deserializer | None:
    """``deserializer``, with a decode failure turned into ``UNDECODABLE`` for the wrapped method to refuse."""
    if deserializer is None:
        return None
    strict = deserializer

    def deserialize(data: bytes) -> Any:
        try:
            return strict(data)
        except DecodeError:
            return UNDECODABLE

    return deserialize


def _check_decoded(request: Any) -> None:
    if request is UNDECODABLE:
        raise invalid_argument(
            "request",
            "not a valid protobuf encoding of the request message (corrupt, or nested deeper than it decodes)",
        )


def _ended_code(context: grpc.aio.ServicerContext[Any, Any]) -> grpc.StatusCode:
    """Why a call stopped without an answer: its deadline passed, or the caller went away."""
    remaining = context.time_remaining()
    if remaining is not None and remaining <= 0:
        return grpc.StatusCode.DEADLINE_EXCEEDED
    return grpc.StatusCode.CANCELLED


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


def _server_span(method: str, context: grpc.aio.ServicerContext[Any, Any]) -> Span:
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


class ApiInterceptor(grpc.aio.ServerInterceptor):
    def __init__(self, authenticator: TokenAuthenticator, metrics: Metrics) -> None:
        self._auth = authenticator
        self._metrics = metrics

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler[Any, Any] | None]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler[Any, Any] | None:
        handler = await continuation(handler_call_details)
        full_method = handler_call_details.method
        if handler is None or not full_method.startswith(PROTECTED_PREFIX):
            return handler
        method = full_method.lstrip("/")
        if handler.unary_unary is not None and not handler.request_streaming:
            return grpc.unary_unary_rpc_method_handler(
                self._unary(method, handler.unary_unary),  # type: ignore[arg-type]
                request_deserializer=_lenient(handler.request_deserializer),
                response_serializer=handler.response_serializer,
            )
        if handler.unary_stream is not None and not handler.request_streaming:
            return grpc.unary_stream_rpc_method_handler(
                self._stream(method, handler.unary_stream),  # type: ignore[arg-type]
                request_deserializer=_lenient(handler.request_deserializer),
                response_serializer=handler.response_serializer,
            )
        # Client-streaming methods: none in these services; refuse rather than serve them unauthenticated.
        return None

    def _begin(self, method: str, context: grpc.aio.ServicerContext[Any, Any]) -> tuple[CallInfo, Span]:
        call = CallInfo(method=method, peer=context.peer())
        bind_call(call)
        structlog.contextvars.clear_contextvars()
        return call, _server_span(method, context)

    def _unary(self, method: str, behaviour: UnaryBehaviour) -> UnaryBehaviour:
        async def wrapped(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
            call, span = self._begin(method, context)
            token = otel_context.attach(trace.set_span_in_context(span))
            started = time.perf_counter()
            code = grpc.StatusCode.OK
            try:
                call.tenant = self._auth.tenant_for(context.invocation_metadata())
                structlog.contextvars.bind_contextvars(tenant=call.tenant)
                _check_decoded(request)
                return await behaviour(request, context)
            except ApiError as exc:
                code = exc.code
                await context.abort_with_status(exc.to_status())
            except asyncio.CancelledError:
                code = _ended_code(context)
                raise
            except grpc.aio.AbortError:
                code = context.code() or grpc.StatusCode.UNKNOWN
                raise
            except StoreError as exc:
                code = grpc.StatusCode.UNAVAILABLE
                log.warning("rpc_store_failed", method=method, run_id=call.run_id or None, error=str(exc)[:300])
                await context.abort_with_status(store_unavailable().to_status())
            except Exception:
                code = grpc.StatusCode.INTERNAL
                log.exception("rpc_failed", method=method, run_id=call.run_id or None)
                await context.abort_with_status(internal().to_status())
            finally:
                self._finish(call, code, started, span)
                otel_context.detach(token)

        return wrapped

    def _stream(self, method: str, behaviour: StreamBehaviour) -> StreamBehaviour:
        async def wrapped(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> AsyncIterator[Any]:
            call, span = self._begin(method, context)
            token = otel_context.attach(trace.set_span_in_context(span))
            started = time.perf_counter()
            code = grpc.StatusCode.OK
            streams = self._metrics.active_streams.labels(method=method)
            streams.inc()
            try:
                call.tenant = self._auth.tenant_for(context.invocation_metadata())
                structlog.contextvars.bind_contextvars(tenant=call.tenant)
                _check_decoded(request)
                async for response in behaviour(request, context):
                    yield response
            except ApiError as exc:
                code = exc.code
                await context.abort_with_status(exc.to_status())
            except (asyncio.CancelledError, GeneratorExit):
                code = _ended_code(context)
                raise
            except grpc.aio.AbortError:
                code = context.code() or grpc.StatusCode.UNKNOWN
                raise
            except StoreError as exc:
                code = grpc.StatusCode.UNAVAILABLE
                log.warning("rpc_store_failed", method=method, run_id=call.run_id or None, error=str(exc)[:300])
                await context.abort_with_status(store_unavailable().to_status())
            except Exception:
                code = grpc.StatusCode.INTERNAL
                log.exception("rpc_failed", method=method, run_id=call.run_id or None)
                await context.abort_with_status(internal().to_status())
            finally:
                streams.dec()
                self._finish(call, code, started, span)
                with contextlib.suppress(ValueError):  # a generator closed from another context
                    otel_context.detach(token)

        return wrapped

    def _finish(self, call: CallInfo, code: grpc.StatusCode, started: float, span: Span) -> None:
        duration_ms = round((time.perf_counter() - started) * 1000, 3)
        span.set_attribute("rpc.grpc.status_code", code.value[0])
        if call.run_id:
            span.set_attribute("diagnosis.run_id", call.run_id)
        if call.tenant:
            span.set_attribute("diagnosis.tenant", call.tenant)
        if code in _SERVER_ERROR_CODES:
            span.set_status(Status(StatusCode.ERROR, code.name))
        span.end()
        self._metrics.rpcs.labels(method=call.method, code=code.name).inc()
        fields: dict[str, Any] = {
            "method": call.method,
            "peer": call.peer,
            "code": code.name,
            "duration_ms": duration_ms,
        }
        if call.tenant:
            fields["tenant"] = call.tenant
        if call.run_id:
            fields["run_id"] = call.run_id
        log.info("rpc", **fields)
