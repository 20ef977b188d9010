"""A real OTLP/gRPC trace receiver on loopback: the collector's TraceService from opentelemetry-proto."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent import futures
from contextlib import contextmanager
from typing import Any

import grpc
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc
from opentelemetry.proto.trace.v1 import trace_pb2


class Receiver(trace_service_pb2_grpc.TraceServiceServicer):
    def __init__(self) -> None:
        self.requests: list[trace_service_pb2.ExportTraceServiceRequest] = []
        self.received = threading.Condition()

    def Export(self, request: trace_service_pb2.ExportTraceServiceRequest, context: Any) -> Any:
        with self.received:
            self.requests.append(request)
            self.received.notify_all()
        return trace_service_pb2.ExportTraceServiceResponse()

    def spans(self) -> list[tuple[dict[str, Any], trace_pb2.Span]]:
        """(resource attributes, span) of everything received so far."""
        out: list[tuple[dict[str, Any], trace_pb2.Span]] = []
        with self.received:
            for request in self.requests:
                for resource_spans in request.resource_spans:
                    resource = {a.key: a.value.string_value for a in resource_spans.resource.attributes}
                    for scope in resource_spans.scope_spans:
                        out.extend((resource, span) for span in scope.spans)
        return out

    def wait_for(self, name: str, timeout: float) -> trace_pb2.Span | None:
        with self.received:
            self.received.wait_for(lambda: any(s.name == name for _, s in self._unlocked()), timeout=timeout)
        return next((s for _, s in self.spans() if s.name == name), None)

    def _unlocked(self) -> Iterator[tuple[None, trace_pb2.Span]]:
        for request in self.requests:
            for resource_spans in request.resource_spans:
                for scope in resource_spans.scope_spans:
                    for span in scope.spans:
                        yield None, span


@contextmanager
def otlp_receiver() -> Iterator[tuple[Receiver, int]]:
    receiver = Receiver()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    # opentelemetry-proto's generated gRPC module has no annotations.
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(receiver, server)  # type: ignore[no-untyped-call]
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        yield receiver, port
    finally:
        server.stop(grace=None)


def attributes(span: trace_pb2.Span) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for item in span.attributes:
        kind = item.value.WhichOneof("value")
        values[item.key] = getattr(item.value, kind) if kind else None
    return values
