"""The server interceptor: every method of the ``diagnosis.v1`` services runs inside the same layers.

Health and reflection pass through untouched (open to everyone, unlogged). A wrapped call, unary or
server-streaming, runs inside these layers, outermost first, each one concern in its own module:

- ``tracing.Traced``: a SERVER span per RPC, continuing the caller's trace context;
- ``logging.RpcLogLine``: one JSON log line per RPC (method, peer, code, duration_ms, tenant, run_id);
- ``Metrics.counted``: ``diagnosis_rpcs_total`` and ``diagnosis_rpc_duration_seconds{method, code}`` and,
  for server streams, ``diagnosis_active_streams{method}``;
- ``errors.MappedErrors``: an ``ApiError`` as its status with google.rpc details, anything else as
  INTERNAL (a store failure as UNAVAILABLE), and the code the call ended with;
- ``TokenAuthenticator.authenticate``: the bearer token names the tenant (UNAUTHENTICATED otherwise);
- ``decoding.refuse_undecodable``: a request that did not decode is INVALID_ARGUMENT naming ``request``.

``calls.begin_call`` makes the call current and binds ``method`` (then ``tenant``, ``run_id``) to the
structlog contextvars, so every line logged inside the call, and inside a run it starts, names them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import grpc
import grpc.aio

from diagnosis_server.api.auth import TokenAuthenticator
from diagnosis_server.api.calls import CallLayer, Context, begin_call
from diagnosis_server.api.decoding import lenient, refuse_undecodable
from diagnosis_server.api.errors import MappedErrors
from diagnosis_server.api.logging import RpcLogLine
from diagnosis_server.api.metrics import Metrics
from diagnosis_server.api.tracing import Traced

PROTECTED_PREFIX = "/diagnosis.v1."

UnaryBehaviour = Callable[[Any, Context], Awaitable[Any]]
StreamBehaviour = Callable[[Any, Context], AsyncIterator[Any]]


class ApiInterceptor(grpc.aio.ServerInterceptor):
    def __init__(self, authenticator: TokenAuthenticator, metrics: Metrics) -> None:
        self._layers: tuple[CallLayer, CallLayer, CallLayer, CallLayer, CallLayer, CallLayer] = (
            Traced,
            RpcLogLine,
            metrics.counted,
            MappedErrors,
            authenticator.authenticate,
            refuse_undecodable,
        )

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
        if handler.request_streaming:
            # Client-streaming methods: none in these services; refuse rather than serve them unauthenticated.
            return None
        if handler.unary_unary is not None:
            return grpc.unary_unary_rpc_method_handler(
                self._unary(method, handler.unary_unary),  # type: ignore[arg-type]
                request_deserializer=lenient(handler.request_deserializer),
                response_serializer=handler.response_serializer,
            )
        if handler.unary_stream is not None:
            return grpc.unary_stream_rpc_method_handler(
                self._stream(method, handler.unary_stream),  # type: ignore[arg-type]
                request_deserializer=lenient(handler.request_deserializer),
                response_serializer=handler.response_serializer,
            )
        return None

    @asynccontextmanager
    async def _layered(self, method: str, request: Any, context: Context, *, streaming: bool) -> AsyncIterator[None]:
        """The one code path of every call: its layers entered in order (each built as the one before is in), left
        in reverse."""
        call = begin_call(method, context.peer(), streaming=streaming)
        traced, log_line, counted, errors, authenticated, decoded = self._layers
        # Nested by the statement itself (an AsyncExitStack costs more than the six layers together).
        async with (
            traced(request, context, call),
            log_line(request, context, call),
            counted(request, context, call),
            errors(request, context, call),
            authenticated(request, context, call),
            decoded(request, context, call),
        ):
            yield

    def _unary(self, method: str, behaviour: UnaryBehaviour) -> UnaryBehaviour:
        async def wrapped(request: Any, context: Context) -> Any:
            async with self._layered(method, request, context, streaming=False):
                return await behaviour(request, context)

        return wrapped

    def _stream(self, method: str, behaviour: StreamBehaviour) -> StreamBehaviour:
        async def wrapped(request: Any, context: Context) -> AsyncIterator[Any]:
            async with self._layered(method, request, context, streaming=True):
                async for response in behaviour(request, context):
                    yield response

        return wrapped
