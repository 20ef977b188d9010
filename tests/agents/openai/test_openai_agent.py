"""One agent attempt against the fake endpoint over real HTTP: messages, usage, failures, structured output,
and the Executor's bounded tool loop (every tool call through the run's tool runner)."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from diagnosis.v1 import contracts_pb2
from diagnosis_server.agents.base import (
    AgentNonRetryableError,
    AgentRequest,
    AgentRetryableError,
    AgentRole,
)
from diagnosis_server.agents.openai import AgentRefusalError, OpenAIProvider, OpenAISettings
from diagnosis_server.agents.openai.executor import FINAL_TURN
from diagnosis_server.agents.prompts import default_catalog
from diagnosis_server.conversions import JsonValue, canonical_json_bytes
from diagnosis_server.tools.runner import ToolBlockedError, ToolRunner

from .openai_e2e import provider_for, scenario_tools
from .openai_fake_endpoint import (
    Call,
    FakeOpenAI,
    Reply,
    answer,
    content_filter,
    error,
    evidence_from_results,
    malformed,
    refusal,
    slow,
    tool_calls,
)

PLANNER_INPUT: dict[str, Any] = {"question": "Why are checkouts failing?", "mode": "FULL", "tools": [], "cycle": 1}


def _request(role: AgentRole, payload: dict[str, Any], *, tools: ToolRunner | None = None) -> AgentRequest:
    input_bytes = canonical_json_bytes(payload)
    prompt = default_catalog().prompt(role)
    return AgentRequest(
        role=role,
        input_bytes=input_bytes,
        run_id="run-agent-test",
        attempt=1,
        cycle=1,
        prompt_name=prompt.name,
        prompt_version=prompt.version,
        prompt_text=prompt.render(input_bytes.decode()),
        tools=tools,
    )


class _Recorded:
    def __init__(self) -> None:
        self.invocations: list[contracts_pb2.ToolInvocation] = []

    async def __call__(self, invocation: contracts_pb2.ToolInvocation) -> None:
        self.invocations.append(invocation)


def _runner(recorded: _Recorded, *, allowed: list[str] | None = None) -> ToolRunner:
    return ToolRunner(run_id="run-agent-test", toolset=scenario_tools().toolset, recorder=recorded, allowed=allowed)


def _executor_input(steps: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "question": "Why are checkouts failing?",
        "scenario": "checkout-oom",
        "cycle": 1,
        "mode": "FULL",
        "plan": {"steps": steps},
        "tools": list[JsonValue](scenario_tools().toolset.specs()),
    }


OOM_STEP: dict[str, Any] = {
    "tool_name": "k8s.events",
    "arguments": {"service": "checkout-api", "reason": "OOMKilled"},
    "purpose": "p",
}


# ------------------------------------------------------------------------------ one call
async def test_the_rendered_prompt_is_the_system_message_and_the_raw_text_comes_back(fake: FakeOpenAI) -> None:
    provider = provider_for(fake, verifier_model="judge-model")
    fake.script("planner", malformed())
    request = _request("planner", PLANNER_INPUT)
    reply = await provider.agent("planner").run(request)
    await provider.aclose()
    assert reply.text == "Sure! The checkout service looks unhealthy; I would restart it."  # the parser judges it
    (call,) = fake.calls
    assert call.role == "planner"
    assert call.model == "fake-model"
    assert call.messages[0] == {"role": "system", "content": request.prompt_text}
    assert [m["role"] for m in call.messages] == ["system", "user"]
    assert call.headers["authorization"] == "Bearer test-key"
    assert call.headers.get("x-stainless-retry-count", "0") == "0"
    assert call.response_format_type == "json_schema"
    assert call.body["response_format"]["json_schema"]["name"] == "planner_plan"
    assert "tools" not in call.body


async def test_usage_model_and_latency_are_reported_never_the_prompt(fake: FakeOpenAI) -> None:
    provider = provider_for(fake, verifier_model="judge-model")
    fake.script("verifier", answer("{}", model="judge-model-2025"))
    request = _request("verifier", {"verified_executor_output": {"claims": []}})
    reply = await provider.agent("verifier").run(request)
    await provider.aclose()
    assert fake.calls[0].model == "judge-model"  # the per-agent override
    assert reply.model == "judge-model-2025"  # what the endpoint says it ran
    assert (reply.prompt_tokens, reply.completion_tokens) == (11, 7)
    assert reply.extra["endpoint_calls"] == 1
    assert isinstance(reply.extra["latency_ms"], int) and reply.extra["latency_ms"] >= 0
    assert reply.extra["response_format"] == "json_schema"
    assert request.prompt_text not in json.dumps(reply.extra)


@pytest.mark.parametrize("reply", [refusal(), content_filter()], ids=["refusal", "content_filter"])
async def test_a_refusal_is_non_retryable(fake: FakeOpenAI, reply: Reply) -> None:
    provider = provider_for(fake)
    fake.script("composer", reply)
    with pytest.raises(AgentRefusalError) as caught:
        await provider.agent("composer").run(_request("composer", {"verdict": "PASS"}))
    await provider.aclose()
    assert isinstance(caught.value, AgentNonRetryableError)


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (error(429, "Rate limit reached"), AgentRetryableError),
        (error(500, "upstream crashed"), AgentRetryableError),
        (error(503, "overloaded"), AgentRetryableError),
        (error(400, "messages: too long"), AgentNonRetryableError),
        (error(401, "bad key"), AgentNonRetryableError),
        (error(404, "no such model"), AgentNonRetryableError),
        (
            Reply(body={"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": []}),
            AgentRetryableError,
        ),
    ],
    ids=["429", "500", "503", "400", "401", "404", "no-choice"],
)
async def test_endpoint_failures_map_to_typed_errors_with_one_request_each(
    fake: FakeOpenAI, reply: Reply, expected: type[Exception]
) -> None:
    """max_retries=0: one attempt is one request; the graph alone retries (R-R-1)."""
    provider = provider_for(fake)
    fake.script("planner", reply)
    with pytest.raises(expected):
        await provider.agent("planner").run(_request("planner", PLANNER_INPUT))
    await provider.aclose()
    assert len(fake.calls) == 1


async def test_a_slow_endpoint_times_out_as_retryable(fake: FakeOpenAI) -> None:
    provider = provider_for(fake, timeout_s=0.3)
    fake.script("planner", slow(3.0, answer("{}")))
    started = time.monotonic()
    with pytest.raises(AgentRetryableError, match="in time"):
        await provider.agent("planner").run(_request("planner", PLANNER_INPUT))
    await provider.aclose()
    assert time.monotonic() - started < 2.0
    assert len(fake.calls) == 1


async def test_an_unreachable_endpoint_is_retryable() -> None:
    import socket

    with socket.socket() as sock:  # a loopback port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    provider = OpenAIProvider(OpenAISettings(base_url=f"http://127.0.0.1:{port}/v1", model="m", timeout_s=2))
    with pytest.raises(AgentRetryableError, match="could not reach"):
        await provider.agent("planner").run(_request("planner", PLANNER_INPUT))
    await provider.aclose()


async def test_a_request_without_a_rendered_prompt_is_refused(fake: FakeOpenAI) -> None:
    provider = provider_for(fake)
    request = _request("planner", PLANNER_INPUT)
    bare = AgentRequest(
        role="planner",
        input_bytes=request.input_bytes,
        run_id="r",
        attempt=1,
        cycle=1,
        prompt_name="p",
        prompt_version="1",
    )
    with pytest.raises(AgentNonRetryableError, match="no rendered prompt"):
        await provider.agent("planner").run(bare)
    assert not fake.calls


# ------------------------------------------------------------------------------ structured output
async def test_json_schema_rejected_falls_back_to_json_mode_once_per_provider(fake: FakeOpenAI) -> None:
    fake.reject_json_schema = True
    fake.script("verifier", answer("{}"))
    provider = provider_for(fake)
    first = await provider.agent("planner").run(_request("planner", PLANNER_INPUT))
    second = await provider.agent("verifier").run(_request("verifier", {"verified_executor_output": {}}))
    await provider.aclose()
    assert [c.response_format_type for c in fake.calls] == ["json_schema", "json_object", "json_object"]
    assert first.extra["endpoint_calls"] == 2 and second.extra["endpoint_calls"] == 1
    assert second.extra["response_format"] == "json_object"


async def test_an_endpoint_without_json_mode_is_asked_for_plain_text(fake: FakeOpenAI) -> None:
    fake.reject_json_schema = fake.reject_json_object = True
    provider = provider_for(fake)
    await provider.agent("planner").run(_request("planner", PLANNER_INPUT))
    await provider.aclose()
    assert [c.response_format_type for c in fake.calls] == ["json_schema", "json_object", None]


async def test_json_schema_on_does_not_fall_back(fake: FakeOpenAI) -> None:
    fake.reject_json_schema = True
    provider = provider_for(fake, json_schema="on")
    with pytest.raises(AgentNonRetryableError, match="400"):
        await provider.agent("planner").run(_request("planner", PLANNER_INPUT))
    await provider.aclose()
    assert [c.response_format_type for c in fake.calls] == ["json_schema"]


async def test_json_schema_off_forces_json_mode(fake: FakeOpenAI) -> None:
    provider = provider_for(fake, json_schema="off")
    fake.script("composer", answer("{}"))
    await provider.agent("composer").run(_request("composer", {"verdict": "PASS"}))
    await provider.aclose()
    assert [c.response_format_type for c in fake.calls] == ["json_object"]


# ------------------------------------------------------------------------------ the executor loop
async def test_executor_calls_tools_through_the_runner_and_binds_their_invocation_ids(fake: FakeOpenAI) -> None:
    """R-C-2: every tool call of the model is a recorded invocation; the final JSON binds to their ids."""
    recorded = _Recorded()
    provider = provider_for(fake)
    request = _request("executor", _executor_input([OOM_STEP]), tools=_runner(recorded))
    reply = await provider.agent("executor").run(request)
    await provider.aclose()
    first, second = fake.calls_of("executor")
    assert "k8s__events" in first.function_names and first.response_format_type is None
    assert [i.tool_name for i in recorded.invocations] == ["k8s.events"]
    (result,) = second.tool_results()
    assert result["invocation_id"] == recorded.invocations[0].invocation_id
    assert result["status"] == "ok" and result["output"]["events"][0]["reason"] == "OOMKilled"
    assert second.messages[2]["tool_calls"][0]["function"]["name"] == "k8s__events"
    evidence = json.loads(reply.text)
    assert evidence["claims"][0]["evidence_bindings"][0]["source_invocation_ids"] == [result["invocation_id"]]
    assert reply.extra["tool_calls"] == 1 and reply.extra["endpoint_calls"] == 2
    assert (reply.prompt_tokens, reply.completion_tokens) == (22, 14)  # summed over the attempt's calls


async def test_executor_tool_calls_are_capped_and_the_last_turn_offers_no_tools(fake: FakeOpenAI) -> None:
    recorded = _Recorded()
    provider = provider_for(fake, max_tool_calls=1)
    backoff = {"service": "checkout-api", "reason": "BackOff"}
    fake.script("executor", tool_calls(("k8s__events", OOM_STEP["arguments"]), ("k8s__events", backoff)))
    reply = await provider.agent("executor").run(
        _request("executor", _executor_input([OOM_STEP]), tools=_runner(recorded))
    )
    await provider.aclose()
    assert len(recorded.invocations) == 1  # the second call was not run
    final = fake.calls_of("executor")[-1]
    run_one, not_run = final.tool_results()
    assert run_one["status"] == "ok" and not_run["status"] == "not_run"
    assert "tools" not in final.body and final.response_format_type == "json_schema"
    assert final.messages[-1] == {"role": "user", "content": FINAL_TURN}
    assert len(json.loads(reply.text)["claims"]) == 1


async def test_executor_tool_output_fed_back_is_bounded(fake: FakeOpenAI) -> None:
    recorded = _Recorded()
    provider = provider_for(fake, max_tool_output_chars=120)
    fake.script("executor", tool_calls(("k8s__events", OOM_STEP["arguments"])))
    reply = await provider.agent("executor").run(
        _request("executor", _executor_input([OOM_STEP]), tools=_runner(recorded))
    )
    await provider.aclose()
    final = fake.calls_of("executor")[-1]
    (result,) = final.tool_results()
    assert result["output_truncated"] is True and len(result["output_prefix"]) == 120
    assert result["invocation_id"] == recorded.invocations[0].invocation_id
    assert result["output_chars"] > 120
    assert "tools" not in final.body  # the budget is spent: the final turn offers no tools
    assert reply.extra["tool_output_chars"] == 120


async def test_executor_loop_ends_within_its_call_budget_even_if_the_model_never_stops(fake: FakeOpenAI) -> None:
    recorded = _Recorded()
    provider = provider_for(fake, max_tool_calls=3)

    def always_call(call: Call) -> Reply:
        if call.body.get("tools"):
            return tool_calls(("topology__dependencies", {"service": "checkout-api"}))
        return answer(evidence_from_results(call.tool_results()))

    fake.behaviours["executor"] = always_call
    reply = await provider.agent("executor").run(_request("executor", _executor_input([]), tools=_runner(recorded)))
    await provider.aclose()
    assert len(recorded.invocations) == 3
    assert reply.extra["endpoint_calls"] == 4  # max_tool_calls turns, then the final turn


async def test_executor_bad_arguments_are_answered_without_calling_a_tool(fake: FakeOpenAI) -> None:
    recorded = _Recorded()
    provider = provider_for(fake)
    fake.script("executor", tool_calls(("k8s__events", "{not json"), ("k8s__events", "[1, 2]")))
    await provider.agent("executor").run(_request("executor", _executor_input([]), tools=_runner(recorded)))
    await provider.aclose()
    assert not recorded.invocations
    results = fake.calls_of("executor")[-1].tool_results()
    assert [r["status"] for r in results] == ["error", "error"]
    assert "not JSON" in results[0]["error"] and "not a JSON object" in results[1]["error"]


async def test_executor_tool_error_is_recorded_and_fed_back(fake: FakeOpenAI) -> None:
    recorded = _Recorded()
    provider = provider_for(fake)
    fake.script("executor", tool_calls(("k8s__events", {"service": "no-such-service"})))
    await provider.agent("executor").run(_request("executor", _executor_input([]), tools=_runner(recorded)))
    await provider.aclose()
    (invocation,) = recorded.invocations
    assert invocation.status == contracts_pb2.TOOL_INVOCATION_STATUS_ERROR
    (result,) = fake.calls_of("executor")[-1].tool_results()
    assert result["status"] == "error" and "unknown service" in result["error"]
    assert result["invocation_id"] == invocation.invocation_id


@pytest.mark.parametrize("function", ["deploys__list", "shell__exec"], ids=["not-allowed", "unknown"])
async def test_a_blocked_tool_propagates_and_is_recorded(fake: FakeOpenAI, function: str) -> None:
    recorded = _Recorded()
    provider = provider_for(fake)
    fake.script("executor", tool_calls((function, {})))
    request = _request("executor", _executor_input([]), tools=_runner(recorded, allowed=["k8s.events"]))
    with pytest.raises(ToolBlockedError):
        await provider.agent("executor").run(request)
    await provider.aclose()
    (invocation,) = recorded.invocations
    assert invocation.tool_name == function.replace("__", ".")
    assert invocation.status == contracts_pb2.TOOL_INVOCATION_STATUS_BLOCKED
