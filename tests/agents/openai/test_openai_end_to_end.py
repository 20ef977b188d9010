"""End-to-end runs through the real graph with the openai provider on the fake endpoint (R-T-1, R-T-2).

Real HTTP and the real `openai` client, a real SQLite store, the built-in toolset over checkout-oom.
Each failure the endpoint can produce is followed to its route and its persisted record.
"""

from __future__ import annotations

from typing import Any

import pytest

from diagnosis.v1 import contracts_pb2, run_pb2
from diagnosis_server.agents.prompts import default_catalog
from diagnosis_server.conversions import message_to_json
from diagnosis_server.store import Repository

from .openai_e2e import attempts, diagnose, provider_for, route
from .openai_fake_endpoint import (
    Call,
    FakeOpenAI,
    Reply,
    answer,
    checks_for,
    content_filter,
    error,
    malformed,
    refusal,
    slow,
    tool_calls,
)

N = run_pb2.NodeName
FULL_ROUTE = ["planner", "executor", "gatekeeper", "verified_input_builder", "verifier", "composer"]
UP_TO_VERIFIER = FULL_ROUTE[:-1]


def _retries(run: run_pb2.DiagnosisRun) -> dict[int, int]:
    return {r.node: r.technical_retries for r in run.orchestration_trace.technical_retries}


# ------------------------------------------------------------------------------ the happy path
@pytest.mark.requirement("R-T-1")
async def test_pass_diagnosis_with_real_tool_calls(fake: FakeOpenAI, repository: Repository) -> None:
    run = await diagnose(repository, provider_for(fake, verifier_model="judge-model"))
    assert route(run) == FULL_ROUTE
    assert run.status == run_pb2.RUN_STATUS_SUCCESS
    assert run.verdict == contracts_pb2.VERDICT_PASS
    assert run.agent_provider == "openai"
    assert run.answer.source == contracts_pb2.COMPOSER_SOURCE_COMPOSER
    assert "OOMKilled (exit code 137)" in run.answer_text

    # R-C-2: the model's tool calls are this run's recorded invocations, and the claims bind to them.
    invocations = await repository.list_tool_invocations(run.run_id)
    assert [(i.tool_name, i.cycle, i.status) for i in invocations] == [
        ("k8s.events", 1, contracts_pb2.TOOL_INVOCATION_STATUS_OK)
    ] * 2
    evaluation = run.self_evaluation.verifier_evaluation
    assert {e.source_invocation_id for e in evaluation.verified_evidence} == {i.invocation_id for i in invocations}
    assert evaluation.gatekeeper_result.status == contracts_pb2.GATEKEEPER_STATUS_PASS
    assert not evaluation.classification_changes  # the guard found every direct observation founded

    # What was sent: the right model per agent, functions for the Executor, structured output elsewhere.
    assert [c.role for c in fake.calls] == ["planner", "executor", "executor", "verifier", "composer"]
    assert {c.role: c.model for c in fake.calls}["verifier"] == "judge-model"
    assert fake.calls_of("executor")[0].function_names == [
        "logs__search",
        "metrics__query",
        "deploys__list",
        "k8s__events",
        "topology__dependencies",
    ]
    assert [c.response_format_type for c in fake.calls if c.role != "executor"] == ["json_schema"] * 3


async def test_token_usage_and_model_are_recorded_per_node_step(fake: FakeOpenAI, repository: Repository) -> None:
    run = await diagnose(repository, provider_for(fake))
    steps = {s.node: s for s in await repository.list_node_steps(run.run_id)}
    usage = {node: (s.prompt_tokens, s.completion_tokens) for node, s in steps.items()}
    assert usage == {
        N.NODE_NAME_PLANNER: (11, 7),
        N.NODE_NAME_EXECUTOR: (22, 14),  # two endpoint calls in the executor's one attempt
        N.NODE_NAME_VERIFIER: (11, 7),
        N.NODE_NAME_COMPOSER: (11, 7),
    }
    assert all(s.model == "fake-model" and s.provider == "openai" for s in steps.values())
    assert all(s.latency_ms >= 0 for s in steps.values())
    # Node attempts and endpoint calls match one to one, except the Executor's tool loop.
    calls = {node: s.endpoint_calls for node, s in steps.items()}
    assert calls == {
        N.NODE_NAME_PLANNER: 1,
        N.NODE_NAME_EXECUTOR: 2,
        N.NODE_NAME_VERIFIER: 1,
        N.NODE_NAME_COMPOSER: 1,
    }


# ------------------------------------------------------------------------------ failure routes (R-R-1, R-R-6)
@pytest.mark.requirement("R-R-6")
async def test_verifier_rate_limited_twice_falls_back_before_verification(
    fake: FakeOpenAI, repository: Repository
) -> None:
    fake.script("verifier", error(429, "Rate limit reached"), error(429, "Rate limit reached"))
    run = await diagnose(repository, provider_for(fake))
    assert route(run) == [*UP_TO_VERIFIER, "verifier", "pre_verification_fallback"]
    assert await attempts(repository, run.run_id, N.NODE_NAME_VERIFIER) == [
        (1, "RETRYABLE_FAILED"),
        (2, "RETRYABLE_FAILED"),
    ]
    verifier_calls = fake.calls_of("verifier")
    assert len(verifier_calls) == 2  # one request per attempt: no client-side retries
    assert verifier_calls[0].messages == verifier_calls[1].messages  # R-VI-4: byte-identical input
    assert all(c.headers.get("x-stainless-retry-count", "0") == "0" for c in verifier_calls)
    assert len(fake.calls_of("executor")) == 2  # R-VI-4: nothing before the Verifier reran
    evaluation = run.self_evaluation.verifier_evaluation
    assert run.status == run_pb2.RUN_STATUS_SUCCESS  # R-A-6
    assert run.answer.source == contracts_pb2.COMPOSER_SOURCE_PRE_VERIFICATION_FALLBACK
    assert not evaluation.HasField("effective_verdict") and not evaluation.HasField("model_verdict")  # R-P-6
    assert not run.answer.confirmed_facts  # R-A-4


# One agent's scripted replies: the route the run takes and the attempts the agent's node records, each
# attempt one request (the client never retries on its own).
ONE_AGENT_FAILS = [
    pytest.param(
        "verifier",
        [slow(1.5, answer("{}"))],
        {"timeout_s": 0.5},
        [*UP_TO_VERIFIER, "verifier", "composer"],
        [(1, "RETRYABLE_FAILED"), (2, "VERDICT_PASS")],
        id="verifier-timeout-retried",
        marks=pytest.mark.requirement("R-R-1"),
    ),
    pytest.param(
        "planner",
        [malformed()],
        {},
        ["planner", *FULL_ROUTE],
        [(1, "INVALID_OUTPUT"), (2, "OK")],
        id="malformed-planner-text-retried-once",
        marks=pytest.mark.requirement("R-R-1"),
    ),
    pytest.param(
        "executor",
        [error(429, "Rate limit reached")],
        {},
        ["planner", "executor", "pre_verification_fallback"],
        [(1, "FAILED")],
        id="executor-endpoint-failure-not-retried",
        marks=pytest.mark.requirement("R-R-2"),
    ),
]
ROLE_NODE = {"planner": N.NODE_NAME_PLANNER, "executor": N.NODE_NAME_EXECUTOR, "verifier": N.NODE_NAME_VERIFIER}


@pytest.mark.parametrize(("role", "replies", "options", "expected_route", "expected_attempts"), ONE_AGENT_FAILS)
async def test_one_agent_failing_takes_its_route(
    fake: FakeOpenAI,
    repository: Repository,
    role: str,
    replies: list[Reply],
    options: dict[str, Any],
    expected_route: list[str],
    expected_attempts: list[tuple[int, str]],
) -> None:
    fake.script(role, *replies)
    run = await diagnose(repository, provider_for(fake, **options))
    assert route(run) == expected_route
    assert await attempts(repository, run.run_id, ROLE_NODE[role]) == expected_attempts
    assert len(fake.calls_of(role)) == len(expected_attempts)


@pytest.mark.requirement("R-R-1")
@pytest.mark.parametrize(
    "reply",
    [
        pytest.param(error(400, "This model's maximum context length is 8192 tokens."), id="bad-request"),
        pytest.param(refusal(), id="refusal"),
    ],
)
async def test_a_non_retryable_verifier_reply_is_not_retried(
    fake: FakeOpenAI, repository: Repository, reply: Reply
) -> None:
    fake.script("verifier", reply)
    run = await diagnose(repository, provider_for(fake))
    assert route(run) == [*UP_TO_VERIFIER, "pre_verification_fallback"]
    assert await attempts(repository, run.run_id, N.NODE_NAME_VERIFIER) == [(1, "NON_RETRYABLE_FAILED")]
    assert len(fake.calls_of("verifier")) == 1


@pytest.mark.requirement("R-R-1")
async def test_verifier_server_error_once_is_retried_and_succeeds(fake: FakeOpenAI, repository: Repository) -> None:
    fake.script("verifier", error(500, "The server had an error while processing your request."))
    run = await diagnose(repository, provider_for(fake))
    assert route(run) == [*UP_TO_VERIFIER, "verifier", "composer"]
    assert await attempts(repository, run.run_id, N.NODE_NAME_VERIFIER) == [
        (1, "RETRYABLE_FAILED"),
        (2, "VERDICT_PASS"),
    ]
    assert _retries(run) == {N.NODE_NAME_VERIFIER: 1}
    assert run.verdict == contracts_pb2.VERDICT_PASS


@pytest.mark.requirement("R-R-1")
async def test_malformed_verifier_text_is_invalid_output_then_retried(fake: FakeOpenAI, repository: Repository) -> None:
    fake.script("verifier", malformed())
    run = await diagnose(repository, provider_for(fake))
    assert await attempts(repository, run.run_id, N.NODE_NAME_VERIFIER) == [(1, "INVALID_OUTPUT"), (2, "VERDICT_PASS")]
    assert run.verdict == contracts_pb2.VERDICT_PASS


@pytest.mark.requirement("R-A-5")
async def test_composer_content_filter_falls_back_after_verification(fake: FakeOpenAI, repository: Repository) -> None:
    fake.script("composer", content_filter())
    run = await diagnose(repository, provider_for(fake))
    assert route(run) == [*FULL_ROUTE, "post_verification_fallback"]
    assert await attempts(repository, run.run_id, N.NODE_NAME_COMPOSER) == [(1, "NON_RETRYABLE_FAILED")]
    assert run.answer.source == contracts_pb2.COMPOSER_SOURCE_POST_VERIFICATION_FALLBACK
    assert run.verdict == contracts_pb2.VERDICT_PASS


@pytest.mark.requirement("R-R-2")
async def test_malformed_executor_text_goes_to_the_fallback(fake: FakeOpenAI, repository: Repository) -> None:
    fake.script("executor", malformed())
    run = await diagnose(repository, provider_for(fake))
    assert route(run) == ["planner", "executor", "pre_verification_fallback"]
    evaluation = run.self_evaluation.verifier_evaluation
    assert evaluation.executor_output_parse_status == contracts_pb2.PARSE_STATUS_INVALID_OUTPUT  # R-P-6
    assert "The checkout service looks unhealthy" not in run.answer_text  # R-A-1


@pytest.mark.requirement("R-R-2")
async def test_a_blocked_tool_ends_in_tool_blocked(fake: FakeOpenAI, repository: Repository) -> None:
    """The plan keeps to the allow-list; the model calls another tool anyway: recorded as BLOCKED."""
    logs = {"service": "checkout-api", "query": "OutOfMemoryError"}
    fake.script("planner", answer({"steps": [{"tool_name": "logs.search", "arguments": logs, "purpose": "errors"}]}))
    fake.script("executor", tool_calls(("k8s__events", {"service": "checkout-api"})))
    run = await diagnose(repository, provider_for(fake), allowed_tools=["logs.search"])
    assert route(run) == ["planner", "executor", "pre_verification_fallback"]
    assert await attempts(repository, run.run_id, N.NODE_NAME_EXECUTOR) == [(1, "TOOL_BLOCKED")]
    invocations = await repository.list_tool_invocations(run.run_id)
    assert [(i.tool_name, i.status) for i in invocations] == [
        ("k8s.events", contracts_pb2.TOOL_INVOCATION_STATUS_BLOCKED)
    ]


# ------------------------------------------------------------------------------ evidence retry (R-R-4)
def _low_confid_with_gap(call: Call) -> Reply:
    checks = checks_for(call, "reasonable_inference")
    gap = {
        "claim_id": checks[0]["claim_id"],
        "description": "no sign yet that users see the failures",
        "critical": True,
    }
    return answer(
        {
            "claim_checks": checks,
            "verdict": "LOW_CONFID",
            "groundedness_score": 0.6,
            "rationale": "the restarts are seen; their effect on checkouts is not",
            "evidence_gaps": [gap],
        }
    )


@pytest.mark.requirement("R-R-4")
async def test_low_confid_with_a_critical_gap_runs_a_second_planner_cycle(
    fake: FakeOpenAI, repository: Repository
) -> None:
    fake.script("verifier", _low_confid_with_gap)
    run = await diagnose(repository, provider_for(fake))
    assert route(run) == [*UP_TO_VERIFIER, *UP_TO_VERIFIER, "composer"]
    assert run.orchestration_trace.evidence_retry_count == 1
    assert not run.orchestration_trace.technical_retries
    second_plan = fake.calls_of("planner")[1].input()
    assert second_plan["mode"] == "EVIDENCE_GAP_ONLY"
    assert second_plan["retry_context"]["evidence_gaps"][0]["description"] == "no sign yet that users see the failures"
    invocations = await repository.list_tool_invocations(run.run_id)
    assert [(i.tool_name, i.cycle) for i in invocations] == [("k8s.events", 1), ("k8s.events", 1), ("logs.search", 2)]
    assert run.verdict == contracts_pb2.VERDICT_PASS
    assert "connect() failed (111: Connection refused)" in run.answer_text


# ------------------------------------------------------------------------------ the guarded Verifier
def _overclaiming_executor(call: Call) -> Reply:
    """Claims more than it binds to: 'exit code 77' and '512Mi' are not in the matched text 'OOMKilled' ('512Mi' is
    in another field of the same event, the code nowhere)."""
    results = call.tool_results()
    if not results:
        return tool_calls(("k8s__events", {"service": "checkout-api", "reason": "OOMKilled"}))
    (result,) = results
    claim = {
        "claim_id": "c1",
        "statement": "checkout-api containers were OOMKilled with exit code 77 at the 512Mi limit",
        "critical": True,
        "status": "confirmed",
        "evidence_bindings": [
            {
                "source_invocation_ids": [result["invocation_id"]],
                "tool_name": "k8s.events",
                "raw_path": "/events/0/reason",
                "matched_text": "OOMKilled",
            }
        ],
    }
    return answer({"contract": "executor_evidence_v2", "claims": [claim], "evidence_gaps": []})


@pytest.mark.requirement("R-V-4")
async def test_guard_rejects_facts_the_evidence_does_not_hold(fake: FakeOpenAI, repository: Repository) -> None:
    """The model calls the claim direct_observation and PASS; no recorded output holds exit code 77, so the claim
    fabricates an error code (R-V-4, R-V-5): contradicted and REJECT whatever the model said. '512Mi' stands in the
    same output outside the bound text: the reason names it too, with where it was found."""
    fake.behaviours["executor"] = _overclaiming_executor
    run = await diagnose(repository, provider_for(fake))
    evaluation = run.self_evaluation.verifier_evaluation
    (change,) = evaluation.classification_changes
    assert change.source == "guard"
    assert change.claim_id == "c1"
    assert change.from_classification == contracts_pb2.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION
    assert change.to_classification == contracts_pb2.CLAIM_CLASSIFICATION_CONTRADICTED
    assert "77" in change.reason and "512Mi" in change.reason
    assert "512Mi (found in the same output)" in change.reason
    (check,) = evaluation.claim_checks
    assert check.classification == contracts_pb2.CLAIM_CLASSIFICATION_CONTRADICTED
    assert evaluation.model_verdict == contracts_pb2.VERDICT_PASS
    assert evaluation.effective_verdict == contracts_pb2.VERDICT_REJECT
    assert run.verdict == contracts_pb2.VERDICT_REJECT
    assert not run.answer.confirmed_facts and not run.answer.possible_directions  # R-A-2, R-A-3
    assert "exit code 77" not in run.answer_text


# ------------------------------------------------------------------------------ R-P-3, R-S-4
def _distinctive_lines() -> dict[str, str]:
    catalog = default_catalog()
    return {role: catalog.prompt(role).text.splitlines()[0] for role in catalog.prompts}


async def _stored_text(repository: Repository, run_id: str) -> str:
    run = await repository.get_run(run_id)
    assert run is not None
    parts: list[Any] = [message_to_json(run), run.SerializeToString().decode("utf-8", errors="replace")]
    parts += [message_to_json(e) for e in await repository.list_events(run_id)]
    parts += [message_to_json(s) for s in await repository.list_node_steps(run_id)]
    parts += [message_to_json(i) for i in await repository.list_tool_invocations(run_id)]
    return "\n".join(parts)


@pytest.mark.requirement("R-P-3")
async def test_prompt_text_never_reaches_a_stored_record(fake: FakeOpenAI, repository: Repository) -> None:
    ok = await diagnose(repository, provider_for(fake))
    fake.script("verifier", error(429, "slow down"), error(429, "slow down"))
    degraded = await diagnose(repository, provider_for(fake))
    lines = _distinctive_lines()
    # The lines really went to the endpoint...
    for role, line in lines.items():
        assert any(line in c.system for c in fake.calls_of(role)), role
    # ...and never into the store, on the PASS path or the fallback path.
    for run in (ok, degraded):
        stored = await _stored_text(repository, run.run_id)
        for role, line in lines.items():
            assert line not in stored, f"{role} prompt text stored for {run.run_id}"
        assert "Return exactly one JSON object" not in stored
        audit = {p.agent: p.version for p in run.self_evaluation.verifier_evaluation.prompt_audit.prompts}
        catalog = default_catalog()
        assert audit == {role: catalog.prompt(role).version for role in ("planner", "executor", "verifier", "composer")}


async def test_json_schema_rejection_falls_back_to_json_mode_within_the_run(
    fake: FakeOpenAI, repository: Repository
) -> None:
    fake.reject_json_schema = True
    run = await diagnose(repository, provider_for(fake))
    assert route(run) == FULL_ROUTE and run.verdict == contracts_pb2.VERDICT_PASS
    formats = [(c.role, c.response_format_type) for c in fake.calls]
    assert formats[:2] == [("planner", "json_schema"), ("planner", "json_object")]  # once, then remembered
    assert all(kind != "json_schema" for _, kind in formats[2:])
    assert await attempts(repository, run.run_id, N.NODE_NAME_PLANNER) == [(1, "OK")]  # one attempt, two calls
    assert fake.calls_of("verifier")[0].body["response_format"] == {"type": "json_object"}
