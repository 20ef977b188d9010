"""Spans recorded in memory: the SDK's in-memory exporter behind the process's tracer provider."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from diagnosis_server.telemetry import use_tracer_provider


@contextmanager
def recorded_spans() -> Iterator[InMemorySpanExporter]:
    """The exporter every span ends in while the block runs; the tracer provider is unset (and shut down) after."""
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    use_tracer_provider(provider)
    try:
        yield memory
    finally:
        use_tracer_provider(None)
        provider.shutdown()
