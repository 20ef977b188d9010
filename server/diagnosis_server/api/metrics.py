"""Prometheus metrics of one server instance, in a registry of its own, served over HTTP.

- ``runs_total{verdict, end_reason}``: finished runs (verdict ``PASS``/``LOW_CONFID``/``REJECT``/``NONE``).
- ``node_latency_seconds{node}``: how long each node attempt took.
- ``active_streams{method}``: open server streams (Diagnose, WatchRun).
- ``rpc_total{method, code}``: finished RPCs by status code.
- ``model_endpoint_failures_total{node, failure_class}``: agent attempts whose model endpoint failed.
- ``store_writable``: 1 while the store's probe write succeeds, 0 while it fails.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from threading import Thread
from typing import Any
from wsgiref.simple_server import WSGIServer

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest, start_http_server

from diagnosis.v1 import contracts_pb2, run_pb2
from diagnosis_server.api.calls import CallInfo, Context
from diagnosis_server.conversions import enum_short_name
from diagnosis_server.settings import split_host_port

_LATENCY_BUCKETS = (0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)


@dataclass
class Metrics:
    registry: CollectorRegistry = field(default_factory=lambda: CollectorRegistry(auto_describe=True))

    def __post_init__(self) -> None:
        self.runs = Counter("runs", "Finished runs", ("verdict", "end_reason"), registry=self.registry)
        self.node_latency = Histogram(
            "node_latency_seconds", "Node attempt latency", ("node",), registry=self.registry, buckets=_LATENCY_BUCKETS
        )
        self.active_streams = Gauge("active_streams", "Open server streams", ("method",), registry=self.registry)
        self.rpcs = Counter("rpc", "Finished RPCs", ("method", "code"), registry=self.registry)
        self.endpoint_failures = Counter(
            "model_endpoint_failures",
            "Agent attempts whose model endpoint failed",
            ("node", "failure_class"),
            registry=self.registry,
        )
        self.store_writable = Gauge(
            "store_writable", "1 while the store takes writes (the probe)", registry=self.registry
        )
        self._http: tuple[WSGIServer, Thread] | None = None

    def observe_event(self, event: run_pb2.OrchestrationEvent) -> None:
        node = enum_short_name(run_pb2.NodeName, event.node, lower=True)
        self.node_latency.labels(node=node).observe(event.duration_ms / 1000.0)

    def observe_endpoint_failure(self, step: run_pb2.NodeStep) -> None:
        node = enum_short_name(run_pb2.NodeName, step.node, lower=True)
        self.endpoint_failures.labels(node=node, failure_class=step.failure_class or "unknown").inc()

    def observe_run(self, run: run_pb2.DiagnosisRun) -> None:
        verdict = "NONE" if not run.verdict else enum_short_name(contracts_pb2.Verdict, run.verdict)
        end_reason = run.orchestration_trace.end_reason or run.failure_reason.split(":", 1)[0] or "UNKNOWN"
        self.runs.labels(verdict=verdict, end_reason=end_reason).inc()

    def counted(self, request: Any, context: Context, call: CallInfo) -> AbstractAsyncContextManager[None]:
        """The layer of every call that counts it (``rpc_total``) and its open stream (``active_streams``)."""
        return _Counted(self, call)

    def exposition(self) -> bytes:
        return generate_latest(self.registry)

    def serve(self, address: str) -> int:
        """Serves /metrics on ``address`` (HOST:PORT, port 0 for any) in a daemon thread; returns the port."""
        host, port = split_host_port(address)
        server, thread = start_http_server(port, addr=host, registry=self.registry)
        self._http = (server, thread)
        return int(server.server_port)

    def close(self) -> None:
        if self._http is not None:
            server, thread = self._http
            self._http = None
            server.shutdown()
            server.server_close()
            thread.join(timeout=5)


class _Counted:
    __slots__ = ("_call", "_metrics", "_streams")

    def __init__(self, metrics: Metrics, call: CallInfo) -> None:
        self._metrics = metrics
        self._call = call
        self._streams = metrics.active_streams.labels(method=call.method) if call.streaming else None

    async def __aenter__(self) -> None:
        if self._streams is not None:
            self._streams.inc()

    async def __aexit__(self, *exc_info: object) -> None:
        if self._streams is not None:
            self._streams.dec()
        self._metrics.rpcs.labels(method=self._call.method, code=self._call.code.name).inc()
