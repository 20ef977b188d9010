"""Each node attempt is one span, named for its node, carrying the run's id, the attempt, its cycle, outcome,
reason code and failure class (the SDK's in-memory exporter behind the process's tracer provider)."""

from __future__ import annotations

from opentelemetry.sdk.trace import ReadableSpan

from diagnosis_server.agents.base import AgentRequest, AgentRetryableError
from diagnosis_server.store import Repository
from tests.support.spans import recorded_spans

from . import fakes


def _attributes(span: ReadableSpan) -> dict[str, object]:
    return dict(span.attributes or {})


async def test_every_attempt_is_a_span_with_what_it_did(repository: Repository) -> None:
    failed: list[bool] = []

    async def flaky(request: AgentRequest) -> str:
        if not failed:
            failed.append(True)
            raise AgentRetryableError("busy", failure_class="http_503")
        return await fakes.plan(request)

    with recorded_spans() as memory:
        run = await fakes.diagnose(repository, fakes.pipeline(planner=flaky))
    nodes = [span for span in memory.get_finished_spans() if span.name.startswith("node ")]
    assert [span.name for span in nodes] == [
        "node planner",
        "node planner",
        "node executor",
        "node gatekeeper",
        "node verified_input_builder",
        "node verifier",
        "node composer",
    ]
    first, second = (_attributes(span) for span in nodes[:2])
    assert first == {
        "diagnosis.run_id": run.run_id,
        "diagnosis.node": "planner",
        "diagnosis.attempt": 1,
        "diagnosis.cycle": 1,
        "diagnosis.outcome": "RETRYABLE_FAILED",
        "diagnosis.reason_code": "PLANNER_RETRYABLE_FAILED",
        "error.type": "http_503",
    }
    assert second["diagnosis.attempt"] == 2 and second["diagnosis.outcome"] == "OK"
    assert "error.type" not in second
    gatekeeper = _attributes(nodes[3])
    assert gatekeeper["diagnosis.node"] == "gatekeeper" and gatekeeper["diagnosis.reason_code"] == "CEILING_PASS"
    assert all(_attributes(span)["diagnosis.run_id"] == run.run_id for span in nodes)
