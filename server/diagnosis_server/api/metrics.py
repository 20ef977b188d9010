"""Prometheus metrics of one server instance, in a registry of its own, served over HTTP.

Every metric of the service is named ``diagnosis_*``; the registry also holds the client library's standard
process, platform and garbage-collector collectors (``process_*``, ``python_*``), under their usual names.

- ``diagnosis_runs_total{status, verdict, end_reason}``: finished runs (status ``SUCCESS``/``FAILED``, verdict
  ``PASS``/``LOW_CONFID``/``REJECT``/``NONE``, end reason ``COMPOSED``, ``INTERRUPTED``, ...).
- ``diagnosis_runs_in_progress``: runs this instance is running now.
- ``diagnosis_node_latency_seconds{node}``: how long each node attempt took.
- ``diagnosis_rpcs_total{method, code}`` and ``diagnosis_rpc_duration_seconds{method, code}``: finished RPCs
  by status code, and how long each took (a server stream: until its end).
- ``diagnosis_active_streams{method}``: open server streams (Diagnose, WatchRun).
- ``diagnosis_tool_calls_total{tool, status}`` and ``diagnosis_tool_call_duration_seconds{tool, status}``: the
  recorded tool calls by tool and status (``OK``, ``ERROR``, ``TIMEOUT``, ``TRUNCATED``, ``BLOCKED``; a
  blocked call's tool is ``other``: an agent may name any tool), and how long each took.
- ``diagnosis_source_errors_total{source, error_class}``: failed calls by source (a tool name's first part,
  ``mcp.NAME`` for an MCP server) and class (``tools.error_classes``).
- ``diagnosis_model_endpoint_failures_total{node, failure_class}``: agent attempts whose model endpoint failed.
- ``diagnosis_store_writable``: 1 while the store's probe write succeeds, 0 while it fails.
- ``diagnosis_alert_groups_total{outcome}``: alert groups handed in (webhook or ``InvestigateAlert``) with firing
  alerts: ``started`` a run, or ``deduplicated`` onto an earlier one.
- ``diagnosis_notifications_total{channel, outcome}``: an alert run's notifications (``webhook``, ``slack``),
  ``delivered`` or ``failed`` after their retries.
"""

from __future__ import annotations

import time
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from threading import Thread
from typing import Any
from wsgiref.simple_server import WSGIServer

from prometheus_client import (
    GC_COLLECTOR,
    PLATFORM_COLLECTOR,
    PROCESS_COLLECTOR,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    start_http_server,
)

from diagnosis.v1 import contracts_pb2, run_pb2
from diagnosis_server.api.calls import CallInfo, Context
from diagnosis_server.conversions import enum_short_name
from diagnosis_server.settings import split_host_port
from diagnosis_server.tools.error_classes import error_class, source_of

PREFIX = "diagnosis_"
_LATENCY_BUCKETS = (0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)


@dataclass
class Metrics:
    registry: CollectorRegistry = field(default_factory=lambda: CollectorRegistry(auto_describe=True))

    def __post_init__(self) -> None:
        registry = self.registry
        # The standard collectors read this process (/proc, the interpreter): shared, stateless, registered here.
        for collector in (PROCESS_COLLECTOR, PLATFORM_COLLECTOR, GC_COLLECTOR):
            registry.register(collector)
        self.runs = Counter(PREFIX + "runs", "Finished runs", ("status", "verdict", "end_reason"), registry=registry)
        self.runs_in_progress = Gauge(PREFIX + "runs_in_progress", "Runs this instance runs now", registry=registry)
        self.node_latency = Histogram(
            PREFIX + "node_latency_seconds",
            "Node attempt latency",
            ("node",),
            registry=registry,
            buckets=_LATENCY_BUCKETS,
        )
        self.active_streams = Gauge(PREFIX + "active_streams", "Open server streams", ("method",), registry=registry)
        self.rpcs = Counter(PREFIX + "rpcs", "Finished RPCs", ("method", "code"), registry=registry)
        self.rpc_duration = Histogram(
            PREFIX + "rpc_duration_seconds",
            "How long each RPC took (a server stream: until its end)",
            ("method", "code"),
            registry=registry,
            buckets=_LATENCY_BUCKETS,
        )
        self.tool_calls = Counter(PREFIX + "tool_calls", "Recorded tool calls", ("tool", "status"), registry=registry)
        self.tool_call_duration = Histogram(
            PREFIX + "tool_call_duration_seconds",
            "How long each recorded tool call took",
            ("tool", "status"),
            registry=registry,
            buckets=_LATENCY_BUCKETS,
        )
        self.source_errors = Counter(
            PREFIX + "source_errors",
            "Failed tool calls by source and class",
            ("source", "error_class"),
            registry=registry,
        )
        self.endpoint_failures = Counter(
            PREFIX + "model_endpoint_failures",
            "Agent attempts whose model endpoint failed",
            ("node", "failure_class"),
            registry=registry,
        )
        self.store_writable = Gauge(
            PREFIX + "store_writable", "1 while the store takes writes (the probe)", registry=registry
        )
        self.alert_groups = Counter(
            PREFIX + "alert_groups", "Alert groups with firing alerts, by outcome", ("outcome",), registry=registry
        )
        self.notifications = Counter(
            PREFIX + "notifications",
            "Alert runs' notifications, by channel and outcome",
            ("channel", "outcome"),
            registry=registry,
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
        status = enum_short_name(run_pb2.RunStatus, run.status)
        self.runs.labels(status=status, verdict=verdict, end_reason=end_reason).inc()

    def observe_interrupted(self, count: int, end_reason: str) -> None:
        """Runs marked FAILED without running to their end (orphans, runs cut by a shutdown)."""
        if count:
            self.runs.labels(status="FAILED", verdict="NONE", end_reason=end_reason).inc(count)

    def observe_invocation(self, invocation: contracts_pb2.ToolInvocation) -> None:
        """One recorded tool call: by tool and status, its duration, and its source's error class if it failed."""
        status = enum_short_name(contracts_pb2.ToolInvocationStatus, invocation.status)
        tool = "other" if invocation.status == contracts_pb2.TOOL_INVOCATION_STATUS_BLOCKED else invocation.tool_name
        self.tool_calls.labels(tool=tool, status=status).inc()
        self.tool_call_duration.labels(tool=tool, status=status).observe(invocation.duration_ms / 1000.0)
        failure = error_class(invocation)
        if failure is not None:
            self.source_errors.labels(source=source_of(invocation.tool_name), error_class=failure).inc()

    def observe_alert_group(self, *, deduplicated: bool) -> None:
        self.alert_groups.labels(outcome="deduplicated" if deduplicated else "started").inc()

    def observe_notification(self, outcome: run_pb2.RunNotification) -> None:
        self.notifications.labels(channel=outcome.channel, outcome="delivered" if outcome.delivered else "failed").inc()

    def counted(self, request: Any, context: Context, call: CallInfo) -> AbstractAsyncContextManager[None]:
        """The layer of every call that counts it and times it (``diagnosis_rpcs_total``,
        ``diagnosis_rpc_duration_seconds``) and its open stream (``diagnosis_active_streams``)."""
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
    __slots__ = ("_call", "_metrics", "_started", "_streams")

    def __init__(self, metrics: Metrics, call: CallInfo) -> None:
        self._metrics = metrics
        self._call = call
        self._streams = metrics.active_streams.labels(method=call.method) if call.streaming else None
        self._started = 0.0

    async def __aenter__(self) -> None:
        self._started = time.perf_counter()
        if self._streams is not None:
            self._streams.inc()

    async def __aexit__(self, *exc_info: object) -> None:
        if self._streams is not None:
            self._streams.dec()
        method, code = self._call.method, self._call.code.name
        self._metrics.rpcs.labels(method=method, code=code).inc()
        self._metrics.rpc_duration.labels(method=method, code=code).observe(time.perf_counter() - self._started)
