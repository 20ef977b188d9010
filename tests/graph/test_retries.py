"""Runs with both technical and evidence retries (R-R-7, R-R-1, R-R-4, R-C-4, R-VI-4).

Technical-retry counters are per node and cycle, apart from the run's evidence-retry count: a Verifier that
fails once in each of two cycles is retried in each, and the trace counts one evidence retry and two
technical ones. The second cycle's Verifier gets the retry context the first cycle's Verifier prepared
(R-C-4), and its retry gets the same bytes as its first attempt (R-VI-4).
"""

from __future__ import annotations

import json

from diagnosis.v1 import contracts_pb2, run_pb2
from diagnosis_server.agents.base import AgentRequest
from diagnosis_server.graph.orchestrator import Orchestrator
from diagnosis_server.store import Repository

from . import fakes

N = run_pb2.NodeName
O = run_pb2.NodeOutcome  # noqa: E741
GAP = {"description": "memory of checkout-api against its limit was not read", "critical": True}


async def _verifier(request: AgentRequest) -> str:
    """Invalid on each cycle's first attempt; LOW_CONFID with a critical gap in cycle 1, PASS in cycle 2."""
    if request.attempt == 1:
        return "no verdict today"
    reply = json.loads(await fakes.verify_pass(request))
    if request.cycle == 1:
        reply.update(verdict="LOW_CONFID", evidence_gaps=[GAP])
    return json.dumps(reply)


def _provider(**behaviours: fakes.Behaviour) -> fakes.FnProvider:
    defaults: dict[str, fakes.Behaviour] = {
        "planner": fakes.plan,
        "executor": fakes.executor_calling("k8s.events"),
        "verifier": _verifier,
        "composer": fakes.compose,
    }
    defaults.update(behaviours)
    return fakes.FnProvider(defaults)  # type: ignore[arg-type]


async def _run(repository: Repository, provider: fakes.FnProvider) -> run_pb2.DiagnosisRun:
    orchestrator = Orchestrator(store=repository, provider=provider, tools_for=lambda _: fakes.tools())
    return await orchestrator.run(question="why is checkout failing?", scenario="checkout-oom")


async def test_a_technical_retry_in_each_cycle_beside_one_evidence_retry(repository: Repository) -> None:
    """R-R-7, R-R-1: counters per node and cycle; the evidence retry counted apart."""
    run = await _run(repository, _provider())
    events = await repository.list_events(run.run_id)
    verifier = [(e.cycle, e.attempt, e.outcome) for e in events if e.node == N.NODE_NAME_VERIFIER]
    assert verifier == [
        (1, 1, O.NODE_OUTCOME_INVALID_OUTPUT),
        (1, 2, O.NODE_OUTCOME_VERDICT_LOW_CONFID_EVIDENCE_GAP),
        (2, 1, O.NODE_OUTCOME_INVALID_OUTPUT),
        (2, 2, O.NODE_OUTCOME_VERDICT_PASS),
    ]
    assert [(e.cycle, e.attempt) for e in events if e.node == N.NODE_NAME_PLANNER] == [(1, 1), (2, 1)]
    trace = run.orchestration_trace
    assert trace.evidence_retry_count == 1
    assert [(r.node, r.technical_retries) for r in trace.technical_retries] == [(N.NODE_NAME_VERIFIER, 2)]
    assert trace.steps == trace.event_count == len(events) == 13
    assert trace.end_reason == "COMPOSED" and trace.terminal_node == N.NODE_NAME_COMPOSER
    assert run.verdict == contracts_pb2.VERDICT_PASS
    assert [e.sequence for e in events] == list(range(1, 14))


async def test_technical_retries_of_several_nodes_are_counted_per_node(repository: Repository) -> None:
    """R-R-7: the Planner fails once in each cycle, the Composer once; each node's count is its own."""

    async def planner(request: AgentRequest) -> str:
        return "not a plan" if request.attempt == 1 else fakes.PLAN

    async def composer(request: AgentRequest) -> str:
        return "not an answer" if request.attempt == 1 else await fakes.compose(request)

    run = await _run(repository, _provider(planner=planner, composer=composer))
    trace = run.orchestration_trace
    assert trace.evidence_retry_count == 1
    assert [(r.node, r.technical_retries) for r in trace.technical_retries] == [
        (N.NODE_NAME_PLANNER, 2),
        (N.NODE_NAME_VERIFIER, 2),
        (N.NODE_NAME_COMPOSER, 1),
    ]
    events = await repository.list_events(run.run_id)
    assert [(e.cycle, e.attempt) for e in events if e.node == N.NODE_NAME_PLANNER] == [(1, 1), (1, 2), (2, 1), (2, 2)]
    assert [(e.cycle, e.attempt) for e in events if e.node == N.NODE_NAME_COMPOSER] == [(2, 1), (2, 2)]
    assert run.verdict == contracts_pb2.VERDICT_PASS


async def test_a_second_failure_in_a_cycle_ends_that_cycle(repository: Repository) -> None:
    """R-R-1: one technical retry per node and cycle, not one more for the second cycle's first failure; the
    failed retry cycle ends in the pre-verification fallback, which hands cycle 1's verified answer on."""

    async def verifier(request: AgentRequest) -> str:
        if request.cycle == 2:
            return "no verdict today"
        return await _verifier(request)

    run = await _run(repository, _provider(verifier=verifier))
    trace = run.orchestration_trace
    assert list(trace.path[-2:]) == [N.NODE_NAME_PRE_VERIFICATION_FALLBACK, N.NODE_NAME_COMPOSER]
    assert trace.end_reason == "COMPOSED"
    assert trace.evidence_retry_count == 1
    assert [(r.node, r.technical_retries) for r in trace.technical_retries] == [(N.NODE_NAME_VERIFIER, 2)]
    events = await repository.list_events(run.run_id)
    verifier_events = [(e.cycle, e.attempt, e.outcome) for e in events if e.node == N.NODE_NAME_VERIFIER]
    assert verifier_events[2:] == [(2, 1, O.NODE_OUTCOME_INVALID_OUTPUT), (2, 2, O.NODE_OUTCOME_INVALID_OUTPUT)]
    evaluation = run.self_evaluation.verifier_evaluation
    assert evaluation.effective_verdict == contracts_pb2.VERDICT_LOW_CONFID
    assert [c.claim_id for c in evaluation.claim_checks] == ["c1"]


async def test_the_second_cycles_verifier_gets_the_retry_context(repository: Repository) -> None:
    """R-C-4: retry_context only after the evidence-retry preparation: absent in cycle 1, present in cycle 2,
    holding the critical valid gap and the retry count; R-VI-4: a retry's bytes are its first attempt's."""
    provider = _provider()
    await _run(repository, provider)
    seen = provider.seen["verifier"]
    assert [(r.cycle, r.attempt) for r in seen] == [(1, 1), (1, 2), (2, 1), (2, 2)]
    first, second = json.loads(seen[0].input_bytes), json.loads(seen[2].input_bytes)
    assert seen[0].input_bytes == seen[1].input_bytes and seen[2].input_bytes == seen[3].input_bytes
    assert "retry_context" not in first
    assert second["retry_context"] == {"evidence_retry_count": 1, "evidence_gaps": [GAP]}
    assert set(second) == fakes.VERIFIER_BLOCKS
    assert second["diagnosis_context"] == {
        "question": "why is checkout failing?",
        "scenario": "checkout-oom",
        "cycle": 2,
    }
    # The message given beside the bytes is the same input.
    message = seen[2].input_message
    assert isinstance(message, contracts_pb2.VerifierInput)
    assert message.retry_context.evidence_retry_count == 1
    # The Planner and the Executor of cycle 2 get it too, in EVIDENCE_GAP_ONLY mode.
    for role in ("planner", "executor"):
        payloads = [json.loads(r.input_bytes) for r in provider.seen[role]]
        assert [p["mode"] for p in payloads] == ["FULL", "EVIDENCE_GAP_ONLY"], role
        assert "retry_context" not in payloads[0]
        assert payloads[1]["retry_context"] == {"evidence_retry_count": 1, "evidence_gaps": [GAP]}, role


async def _first_cycle_low_confid(request: AgentRequest) -> str:
    """LOW_CONFID with a critical gap in cycle 1 (no technical failure)."""
    reply = json.loads(await fakes.verify_pass(request))
    reply.update(verdict="LOW_CONFID", evidence_gaps=[GAP])
    return json.dumps(reply)


def _retry_planner(cycle_two_reply: str) -> fakes.Behaviour:
    async def planner(request: AgentRequest) -> str:
        return await fakes.plan(request) if request.cycle == 1 else cycle_two_reply

    return planner


def _first_answer_stands(run: run_pb2.DiagnosisRun) -> None:
    """The run ends composed from cycle 1's verified claim: no fallback, the claim checked, a LOW_CONFID verdict."""
    trace = run.orchestration_trace
    assert run.status == run_pb2.RUN_STATUS_SUCCESS
    assert trace.terminal_node == N.NODE_NAME_COMPOSER and trace.end_reason == "COMPOSED"
    assert run.answer.source == contracts_pb2.COMPOSER_SOURCE_COMPOSER
    assert [f.text for f in run.answer.confirmed_facts] == ["pods are OOMKilled"]
    evaluation = run.self_evaluation.verifier_evaluation
    assert evaluation.effective_verdict == contracts_pb2.VERDICT_LOW_CONFID and not evaluation.failure_reason
    assert [c.claim_id for c in evaluation.claim_checks] == ["c1"]


async def test_a_retry_with_nothing_to_call_ends_the_retry_and_the_first_answer_stands(
    repository: Repository,
) -> None:
    """An evidence retry whose gaps name nothing the run can call ends at the Composer, not PLANNER_FAILED."""
    provider = _provider(planner=_retry_planner('{"steps": []}'), verifier=_first_cycle_low_confid)
    run = await _run(repository, provider)
    _first_answer_stands(run)
    events = await repository.list_events(run.run_id)
    planner = [(e.cycle, e.outcome, e.reason_code) for e in events if e.node == N.NODE_NAME_PLANNER]
    assert planner == [(1, O.NODE_OUTCOME_OK, "PLANNED"), (2, O.NODE_OUTCOME_NOTHING_TO_CALL, "RETRY_NOTHING_TO_CALL")]
    assert [r.cycle for r in provider.seen["executor"]] == [1]


async def test_an_empty_first_plan_is_still_invalid(repository: Repository) -> None:
    """No step in a FULL plan is no plan: the Planner is invalid there (only a retry may have nothing to call)."""

    async def planner(_: AgentRequest) -> str:
        return '{"steps": []}'

    run = await _run(repository, _provider(planner=planner, verifier=_first_cycle_low_confid))
    assert run.orchestration_trace.terminal_node == N.NODE_NAME_PRE_VERIFICATION_FALLBACK
    assert run.orchestration_trace.end_reason == "PLANNER_FAILED"
    # Said plainly: no tool of the run is one the Planner can call (not "a reply that is not valid").
    assert "No tool of this run is one the Planner can call" in run.answer_text


async def test_a_failed_retry_planner_keeps_the_first_cycles_verified_answer(repository: Repository) -> None:
    """No fallback discards verified claims: a retry Planner that fails twice hands cycle 1's answer on."""
    run = await _run(repository, _provider(planner=_retry_planner("no plan"), verifier=_first_cycle_low_confid))
    _first_answer_stands(run)
    events = await repository.list_events(run.run_id)
    fallback = [(e.outcome, e.reason_code) for e in events if e.node == N.NODE_NAME_PRE_VERIFICATION_FALLBACK]
    assert fallback == [(O.NODE_OUTCOME_EARLIER_VERIFIED, "RETRY_PLANNER_FAILED")]


async def test_a_failed_retry_executor_keeps_the_first_cycles_verified_answer(repository: Repository) -> None:
    """The retry's Executor fails (invalid output): the Composer still answers from cycle 1's verified claims."""
    first = fakes.executor_calling("k8s.events")

    async def executor(request: AgentRequest) -> str:
        return await first(request) if request.cycle == 1 else "not evidence"

    run = await _run(repository, _provider(executor=executor, verifier=_first_cycle_low_confid))
    _first_answer_stands(run)


def _retry_executor(reply: str, *, tool: str = "k8s.events") -> fakes.Behaviour:
    """Cycle 1: the usual Executor; cycle 2: calls ``tool`` and replies ``reply``."""
    first = fakes.executor_calling(tool)

    async def executor(request: AgentRequest) -> str:
        if request.cycle == 1:
            return await first(request)
        assert request.tools is not None
        await request.tools.call(tool, {})
        return reply

    return executor


def _unrecorded_claim_reply() -> str:
    """A confirmed claim bound to an invocation id this run never recorded (R-GK-3): the Gatekeeper REJECTs."""
    claim = {
        "claim_id": "c2",
        "statement": "the node ran out of disk",
        "critical": True,
        "status": "confirmed",
        "evidence_bindings": [
            {
                "source_invocation_ids": ["inv-never-recorded"],
                "tool_name": "k8s.events",
                "raw_path": "/events/0/reason",
                "matched_text": "OOMKilled",
            }
        ],
    }
    return json.dumps({"contract": "executor_evidence_v2", "claims": [claim]})


async def _retry_failure(repository: Repository, run: run_pb2.DiagnosisRun) -> list[tuple[int, int, str]]:
    """The cycle-2 events of the run, as (node, outcome, reason code)."""
    events = await repository.list_events(run.run_id)
    return [(e.node, e.outcome, e.reason_code) for e in events if e.cycle == 2]


def _first_cycles_record(run: run_pb2.DiagnosisRun, retry_failure: str) -> None:
    """The persisted evaluation is cycle 1's (its Gatekeeper result, verified evidence, Verifier status), and it
    names the retry's failure."""
    evaluation = run.self_evaluation.verifier_evaluation
    assert evaluation.verifier_status == run_pb2.NODE_OUTCOME_OK
    assert evaluation.gatekeeper_result.status == contracts_pb2.GATEKEEPER_STATUS_PASS
    assert evaluation.verdict_ceiling == contracts_pb2.VERDICT_PASS
    assert [c.claim_id for c in evaluation.verified_executor_output.claims] == ["c1"]
    assert [e.claim_id for e in evaluation.verified_evidence] == ["c1"]
    assert any(retry_failure in w and "cycle 1" in w for w in evaluation.warnings), list(evaluation.warnings)
    assert run.verdict == contracts_pb2.VERDICT_LOW_CONFID
    assert run.orchestration_trace.degraded and run.orchestration_trace.evidence_retry_count == 1


async def test_a_retry_the_gatekeeper_rejects_keeps_the_first_cycles_verified_answer(repository: Repository) -> None:
    """No fallback discards verified claims: a retry whose Executor binds a call never recorded is REJECTed by the
    Gatekeeper (R-GK-3, R-GK-6): the retry's pre-verification fallback hands cycle 1's answer to the Composer."""
    provider = _provider(executor=_retry_executor(_unrecorded_claim_reply()), verifier=_first_cycle_low_confid)
    run = await _run(repository, provider)
    _first_answer_stands(run)
    _first_cycles_record(run, "GATEKEEPER_REJECT")
    assert "the node ran out of disk" not in run.answer_text
    assert await _retry_failure(repository, run) == [
        (N.NODE_NAME_PLANNER, O.NODE_OUTCOME_OK, "PLANNED"),
        (N.NODE_NAME_EXECUTOR, O.NODE_OUTCOME_OK, "EXECUTOR_EVIDENCE_V2"),
        (N.NODE_NAME_GATEKEEPER, O.NODE_OUTCOME_CEILING_REJECT, "GATEKEEPER_REJECT"),
        (N.NODE_NAME_PRE_VERIFICATION_FALLBACK, O.NODE_OUTCOME_EARLIER_VERIFIED, "RETRY_GATEKEEPER_REJECT"),
        (N.NODE_NAME_COMPOSER, O.NODE_OUTCOME_OK, "COMPOSED"),
    ]
    # The Verifier saw cycle 1 only: the retry never reached it.
    assert [r.cycle for r in provider.seen["verifier"]] == [1]


async def test_a_retry_verifier_that_fails_keeps_the_first_cycles_verified_answer(repository: Repository) -> None:
    """The retry's Verifier fails twice (R-R-1, R-R-6): the retry ends in the pre-verification fallback, which hands
    cycle 1's verified answer to the Composer; its claim checks and verdicts are cycle 1's (no status string is a
    verdict, R-V-7)."""

    async def verifier(request: AgentRequest) -> str:
        return "no verdict today" if request.cycle == 2 else await _first_cycle_low_confid(request)

    provider = _provider(verifier=verifier)
    run = await _run(repository, provider)
    _first_answer_stands(run)
    _first_cycles_record(run, "VERIFIER_FAILED")
    assert [(r.cycle, r.attempt) for r in provider.seen["verifier"]] == [(1, 1), (2, 1), (2, 2)]
    failure = await _retry_failure(repository, run)
    assert failure[-2:] == [
        (N.NODE_NAME_PRE_VERIFICATION_FALLBACK, O.NODE_OUTCOME_EARLIER_VERIFIED, "RETRY_VERIFIER_FAILED"),
        (N.NODE_NAME_COMPOSER, O.NODE_OUTCOME_OK, "COMPOSED"),
    ]


async def test_a_retry_composer_that_fails_renders_the_verified_claims(repository: Repository) -> None:
    """The retry verified (cycle 2 LOW_CONFID, no further retry) and its Composer fails twice: the post-verification
    fallback renders the allowed material (R-A-5), the claim cycle 1 verified and the retry carried among it."""

    async def composer(_: AgentRequest) -> str:
        return "not an answer"

    run = await _run(repository, _provider(verifier=_first_cycle_low_confid, composer=composer))
    trace = run.orchestration_trace
    assert run.status == run_pb2.RUN_STATUS_SUCCESS
    assert trace.terminal_node == N.NODE_NAME_POST_VERIFICATION_FALLBACK and trace.end_reason == "COMPOSER_FALLBACK"
    assert run.answer.source == contracts_pb2.COMPOSER_SOURCE_POST_VERIFICATION_FALLBACK
    assert [f.text for f in run.answer.confirmed_facts] == ["pods are OOMKilled"]
    evaluation = run.self_evaluation.verifier_evaluation
    assert evaluation.effective_verdict == contracts_pb2.VERDICT_LOW_CONFID
    assert [c.claim_id for c in evaluation.claim_checks] == ["c1"]


async def test_a_failed_retrys_composer_renders_the_first_cycles_claims(repository: Repository) -> None:
    """The retry is REJECTed by its Gatekeeper and then the Composer fails on cycle 1's material: the
    post-verification fallback renders cycle 1's material, not nothing (R-A-5)."""

    async def composer(_: AgentRequest) -> str:
        return "not an answer"

    provider = _provider(
        executor=_retry_executor(_unrecorded_claim_reply()), verifier=_first_cycle_low_confid, composer=composer
    )
    run = await _run(repository, provider)
    assert run.status == run_pb2.RUN_STATUS_SUCCESS
    assert run.orchestration_trace.terminal_node == N.NODE_NAME_POST_VERIFICATION_FALLBACK
    assert run.answer.source == contracts_pb2.COMPOSER_SOURCE_POST_VERIFICATION_FALLBACK
    assert [f.text for f in run.answer.confirmed_facts] == ["pods are OOMKilled"]
    assert "the node ran out of disk" not in run.answer_text
    _first_cycles_record(run, "GATEKEEPER_REJECT")
    assert [c.claim_id for c in run.self_evaluation.verifier_evaluation.claim_checks] == ["c1"]
