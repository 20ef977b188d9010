"""Model calls as GenAI client spans: model, token counts, finish reasons; never a prompt or an output."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from diagnosis_server.store import Repository
from tests.support.spans import recorded_spans

from .openai_e2e import diagnose, provider_for
from .openai_fake_endpoint import FakeOpenAI, error


@pytest.fixture
def exporter() -> Iterator[InMemorySpanExporter]:
    with recorded_spans() as memory:
        yield memory


async def test_model_calls_are_genai_spans_without_content(
    fake: FakeOpenAI, repository: Repository, exporter: InMemorySpanExporter
) -> None:
    run = await diagnose(repository, provider_for(fake))
    chats = [s for s in exporter.get_finished_spans() if s.name.startswith("chat ")]
    assert len(chats) == len(fake.calls) > 0
    for span in chats:
        attributes = dict(span.attributes or {})
        assert span.kind == SpanKind.CLIENT
        assert attributes["gen_ai.operation.name"] == "chat"
        assert attributes["gen_ai.provider.name"] == "openai"
        assert attributes["gen_ai.request.model"]
        assert isinstance(attributes["gen_ai.usage.input_tokens"], int)
        assert isinstance(attributes["gen_ai.usage.output_tokens"], int)
        assert attributes["server.address"] == "127.0.0.1"
        text = " ".join(str(v) for v in attributes.values())
        assert run.question not in text  # never the prompt (which holds the question)
        assert "claims" not in text  # never the output
    node_spans = {s.context.span_id for s in exporter.get_finished_spans() if s.name.startswith("node ")}
    assert all(s.parent is not None and s.parent.span_id in node_spans for s in chats)


async def test_a_failed_model_call_is_an_error_span(
    fake: FakeOpenAI, repository: Repository, exporter: InMemorySpanExporter
) -> None:
    fake.script("planner", error(503, "overloaded"), error(503, "overloaded"))
    await diagnose(repository, provider_for(fake))
    failed = [
        s
        for s in exporter.get_finished_spans()
        if s.name.startswith("chat ") and s.status.status_code == StatusCode.ERROR
    ]
    assert len(failed) == 2
    assert all((s.attributes or {}).get("error.type") == "InternalServerError" for s in failed)
