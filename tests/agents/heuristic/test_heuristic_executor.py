"""The heuristic Executor: runs the plan through the tool runner and emits only executor_evidence_v2 (R-C-1)."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from diagnosis_server.agents.base import AgentNonRetryableError
from diagnosis_server.agents.heuristic import create_provider
from diagnosis_server.conversions import JsonValue
from diagnosis_server.gatekeeper import run_gatekeeper
from diagnosis_server.protocols.executor import FORBIDDEN_FIELDS, parse_executor_output
from diagnosis_server.sources.packs import pack_toolset
from diagnosis_server.tools.runner import ToolBlockedError

from ._support import SCENARIOS, Recorded, executor_payload, planner_payload, request


async def _plan(name: str) -> list[JsonValue]:
    reply = await create_provider().agent("planner").run(request("planner", planner_payload(name)))
    steps = json.loads(reply.text)["steps"]
    assert isinstance(steps, list)
    return steps


@pytest.mark.requirement("R-C-1")
@pytest.mark.parametrize("name", ["checkout-oom", "healthy-noisy", "inventory-ambiguous"])
async def test_output_is_executor_evidence_v2_bound_to_recorded_calls(name: str) -> None:
    recorded = Recorded(pack_toolset(SCENARIOS[name]))
    steps = await _plan(name)
    reply = (
        await create_provider()
        .agent("executor")
        .run(request("executor", executor_payload(steps), tools=recorded.runner()))
    )
    data = json.loads(reply.text)
    assert not set(FORBIDDEN_FIELDS) & set(data)
    parsed = parse_executor_output(reply.text)
    assert parsed.ok and not parsed.schema_issues and not parsed.forbidden_fields
    assert parsed.output is not None
    # One recorded invocation per plan step; claims are c1, c2, ... in order.
    assert len(recorded.invocations) == len(steps)
    assert [c.claim_id for c in parsed.output.claims] == [f"c{i}" for i in range(1, len(parsed.output.claims) + 1)]
    # Every binding passes the Gatekeeper against exactly what was recorded (R-GK-5).
    result = run_gatekeeper(parsed, recorded.invocations, run_id="run-test")
    assert not result.failed_rules and not result.warnings
    assert all(b.passed for b in result.checked_bindings)
    critical = [c for c in parsed.output.claims if c.critical]
    assert critical


async def test_the_executor_calls_tools_only_through_the_runner_and_a_blocked_tool_propagates() -> None:
    recorded = Recorded(pack_toolset(SCENARIOS["checkout-oom"]))
    steps: list[JsonValue] = [
        {"tool_name": "deploys.list", "arguments": {}, "purpose": "x"},
        {"tool_name": "k8s.events", "arguments": {}, "purpose": "y"},
    ]
    executor = create_provider().agent("executor")
    with pytest.raises(ToolBlockedError):
        await executor.run(
            request("executor", executor_payload(steps), tools=recorded.runner(allowed=["deploys.list"]))
        )
    assert [i.tool_name for i in recorded.invocations] == ["deploys.list", "k8s.events"]  # the blocked call is recorded


async def test_a_failing_call_becomes_a_non_critical_gap_not_a_crash() -> None:
    recorded = Recorded(pack_toolset(SCENARIOS["checkout-oom"]))
    steps: list[JsonValue] = [
        {"tool_name": "metrics.query", "arguments": {"metric": "nope", "service": "checkout-api"}, "purpose": "x"},
        {
            "tool_name": "metrics.query",
            "arguments": {"metric": "http_requests_error_rate", "service": "checkout-api"},
            "purpose": "y",
        },
    ]
    reply = (
        await create_provider()
        .agent("executor")
        .run(request("executor", executor_payload(steps), tools=recorded.runner()))
    )
    parsed = parse_executor_output(reply.text)
    assert parsed.ok and parsed.output is not None
    failures = [g for g in parsed.output.evidence_gaps if "gave no output" in g.description]
    assert len(failures) == 1 and not failures[0].critical


async def test_bad_input_is_a_clear_non_retryable_error() -> None:
    executor = create_provider().agent("executor")
    recorded = Recorded(pack_toolset(SCENARIOS["checkout-oom"]))
    with pytest.raises(AgentNonRetryableError, match="tools"):
        await executor.run(request("executor", executor_payload([])))
    with pytest.raises(AgentNonRetryableError, match=r"plan\.steps"):
        await executor.run(request("executor", {"plan": {}}, tools=recorded.runner()))
    bad = replace(request("executor", {}, tools=recorded.runner()), input_bytes=b"{nope")
    with pytest.raises(AgentNonRetryableError, match="not JSON"):
        await executor.run(bad)
