"""OpenTelemetry traces: off by default, on with the standard ``OTEL_*`` variables.

Tracing is on when ``OTEL_TRACES_EXPORTER`` names ``otlp`` or ``console``, or when an OTLP endpoint is set
(``OTEL_EXPORTER_OTLP_ENDPOINT`` / ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``); ``OTEL_SDK_DISABLED=true`` or
``OTEL_TRACES_EXPORTER=none`` keep it off. ``OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`` /
``OTEL_EXPORTER_OTLP_PROTOCOL`` choose ``grpc`` (the default, as the Python distribution's) or
``http/protobuf``; the exporters read the rest of their ``OTEL_EXPORTER_OTLP_*`` settings (headers,
insecure, timeout) themselves, and ``OTEL_SERVICE_NAME`` / ``OTEL_RESOURCE_ATTRIBUTES`` name the service.

What is traced (``tracer()`` is a no-op tracer while tracing is off):
- one SERVER span per RPC of the diagnosis services (gRPC semantic conventions), continuing the caller's
  trace context from its metadata (W3C ``traceparent``, the global propagator);
- one span per node attempt, one per tool call (``execute_tool``: invocation id, tool name, status and
  duration), and one CLIENT span per model call (GenAI conventions: model, token counts; never a prompt
  or an output).
Outgoing HTTP (sources, MCP servers) carries the context with ``opentelemetry.propagate.inject``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, MutableMapping
from contextlib import AbstractContextManager, nullcontext
from typing import Any

import structlog
from opentelemetry import trace
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SpanExporter
from opentelemetry.trace import Span, SpanKind, Tracer

INSTRUMENTATION = "diagnosis_server"
DEFAULT_SERVICE_NAME = "diagnosis-graph"

log = structlog.get_logger("diagnosis_server.telemetry")

_provider: TracerProvider | None = None
_NO_SPAN: AbstractContextManager[Span] = nullcontext(trace.INVALID_SPAN)  # reusable


class TelemetryError(ValueError):
    """An OTEL_* setting the service cannot use; the message names it."""


def tracing_wanted(environ: Mapping[str, str]) -> bool:
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    exporters = {name.strip().lower() for name in environ.get("OTEL_TRACES_EXPORTER", "").split(",") if name.strip()}
    if exporters == {"none"}:
        return False
    if exporters & {"otlp", "console"}:
        return True
    return bool(environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") or environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))


def _exporters(environ: Mapping[str, str]) -> list[SpanExporter]:
    names = {name.strip().lower() for name in environ.get("OTEL_TRACES_EXPORTER", "").split(",") if name.strip()}
    names = names or {"otlp"}
    unknown = names - {"otlp", "console", "none"}
    if unknown:
        raise TelemetryError(f"OTEL_TRACES_EXPORTER: unsupported exporter(s) {sorted(unknown)} (use otlp or console)")
    exporters: list[SpanExporter] = []
    if "console" in names:
        exporters.append(ConsoleSpanExporter())
    if "otlp" in names:
        protocol = (
            environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") or environ.get("OTEL_EXPORTER_OTLP_PROTOCOL") or "grpc"
        ).strip()
        if protocol == "grpc":
            from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcExporter

            exporters.append(GrpcExporter())
        elif protocol == "http/protobuf":
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpExporter

            exporters.append(HttpExporter())
        else:
            raise TelemetryError(
                f"OTEL_EXPORTER_OTLP_PROTOCOL: unsupported protocol {protocol!r} (use grpc or http/protobuf)"
            )
    return exporters


def configure_tracing(environ: Mapping[str, str] | None = None, *, set_global: bool = True) -> TracerProvider | None:
    """Tracing as the OTEL_* variables say; None (and nothing changed) when they leave it off."""
    env = os.environ if environ is None else environ
    if not tracing_wanted(env):
        return None
    resource = Resource.create({SERVICE_NAME: env.get("OTEL_SERVICE_NAME") or DEFAULT_SERVICE_NAME})
    provider = TracerProvider(resource=resource)
    for exporter in _exporters(env):
        provider.add_span_processor(BatchSpanProcessor(exporter))
    use_tracer_provider(provider)
    if set_global:
        trace.set_tracer_provider(provider)
    log.info("tracing_on", exporter=env.get("OTEL_TRACES_EXPORTER") or "otlp")
    return provider


def use_tracer_provider(provider: TracerProvider | None) -> None:
    """The provider this service's spans go to (None: the global one, a no-op unless someone set it)."""
    global _provider
    _provider = provider


def tracer() -> Tracer:
    if _provider is not None:
        return _provider.get_tracer(INSTRUMENTATION)
    return trace.get_tracer(INSTRUMENTATION)


def active() -> bool:
    """Whether spans are recorded anywhere: this service's provider, or a global one someone set."""
    return _provider is not None or not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)


def span(
    name: str, attributes: Mapping[str, str | int], *, kind: SpanKind = SpanKind.INTERNAL
) -> AbstractContextManager[Span]:
    """A current span for the hot paths (node attempts, tool calls); nothing at all while tracing is off."""
    if not active():
        return _NO_SPAN
    return tracer().start_as_current_span(name, kind=kind, attributes=attributes)


def shutdown_tracing() -> None:
    """Flushes and stops the configured provider (at server shutdown)."""
    provider = _provider
    if provider is not None:
        provider.shutdown()


def add_trace_ids(_logger: Any, _method: str, event_dict: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    """structlog processor: the current span's trace and span ids on every line written inside one."""
    context = trace.get_current_span().get_span_context()
    if context.is_valid:
        event_dict.setdefault("trace_id", format(context.trace_id, "032x"))
        event_dict.setdefault("span_id", format(context.span_id, "016x"))
    return event_dict
