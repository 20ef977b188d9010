"""`diagnosis serve` exporting its traces over OTLP/gRPC to a real receiver on loopback, configured only by
the standard OTEL_* variables; the caller's traceparent continues into the exported trace."""

from __future__ import annotations

from pathlib import Path

import grpc

from diagnosis.v1 import diagnosis_service_pb2 as pb
from diagnosis.v1 import diagnosis_service_pb2_grpc, run_pb2
from tests.support.serve import start_serve

from .otlp_receiver import attributes, otlp_receiver

TRACE_ID = "0af7651916cd43dd8448eb211c80319c"
TRACEPARENT = f"00-{TRACE_ID}-b7ad6b7169203331-01"


def diagnose_traced(target: str, question: str) -> run_pb2.DiagnosisRun:
    """One Diagnose call inside the trace TRACEPARENT names; the run as its last response has it."""
    with grpc.insecure_channel(target) as channel:
        stub = diagnosis_service_pb2_grpc.DiagnosisServiceStub(channel)
        request = pb.DiagnoseRequest(question=question)
        return list(stub.Diagnose(request, metadata=(("traceparent", TRACEPARENT),), timeout=60))[-1].run


def test_spans_reach_an_otlp_grpc_receiver(tmp_path: Path) -> None:
    with otlp_receiver() as (receiver, port):
        env = {
            "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{port}",
            "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
            "OTEL_EXPORTER_OTLP_INSECURE": "true",
            "OTEL_SERVICE_NAME": "diagnosis-under-test",
            "OTEL_BSP_SCHEDULE_DELAY": "100",
        }
        server = start_serve(tmp_path, tmp_path / "store.db", env=env)
        try:
            final = diagnose_traced(server.target, "Why is checkout-api returning 503s?")
            assert final.status == run_pb2.RUN_STATUS_SUCCESS
            span = receiver.wait_for("diagnosis.v1.DiagnosisService/Diagnose", timeout=20)
        finally:
            server.stop()
        assert span is not None, server.log_text()[-3000:]
        assert span.trace_id.hex() == TRACE_ID
        assert span.kind == span.SPAN_KIND_SERVER
        assert attributes(span)["rpc.method"] == "Diagnose"
        assert attributes(span)["diagnosis.run_id"] == final.run_id
        spans = receiver.spans()
        assert {resource.get("service.name") for resource, _ in spans} == {"diagnosis-under-test"}
        names = {s.name for _, s in spans if s.trace_id.hex() == TRACE_ID}
        assert any(name.startswith("node ") for name in names)
        assert any(name.startswith("execute_tool ") for name in names)
        tools = [s for _, s in spans if s.name.startswith("execute_tool ")]
        assert all(attributes(s)["diagnosis.invocation_id"].startswith("inv-") for s in tools)


def test_without_otel_variables_nothing_is_exported(tmp_path: Path) -> None:
    with otlp_receiver() as (receiver, _port):
        server = start_serve(tmp_path, tmp_path / "store.db", env={})
        try:
            with grpc.insecure_channel(server.target) as channel:
                stub = diagnosis_service_pb2_grpc.DiagnosisServiceStub(channel)
                list(stub.Diagnose(pb.DiagnoseRequest(question="Why is checkout-api failing?"), timeout=60))
        finally:
            server.stop()
        assert receiver.spans() == []
        assert '"tracing_on"' not in server.log_text()


def test_spans_reach_an_otlp_http_receiver(tmp_path: Path) -> None:
    """OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf: the same spans, POSTed to /v1/traces."""
    import http.server
    import threading

    from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

    received: list[trace_service_pb2.ExportTraceServiceRequest] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if self.path == "/v1/traces":
                received.append(trace_service_pb2.ExportTraceServiceRequest.FromString(body))
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:
            return None

    http_server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=http_server.serve_forever, daemon=True).start()
    try:
        env = {
            "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{http_server.server_port}",
            "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
            "OTEL_BSP_SCHEDULE_DELAY": "100",
        }
        server = start_serve(tmp_path, tmp_path / "store.db", env=env)
        try:
            diagnose_traced(server.target, "Why is checkout-api failing?")
        finally:
            server.stop()  # the batch processor flushes at shutdown
    finally:
        http_server.shutdown()
    names = {
        span.name
        for request in received
        for resource_spans in request.resource_spans
        for scope in resource_spans.scope_spans
        for span in scope.spans
        if span.trace_id.hex() == TRACE_ID
    }
    assert "diagnosis.v1.DiagnosisService/Diagnose" in names
