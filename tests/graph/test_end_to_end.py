"""End-to-end graph runs on recorded cases (R-T-1, R-T-2): route, persisted evaluation, answer safety, trace.

Each case of the golden set (tests/golden/*.jsonl) runs through the real graph (scripted agents, SQLite store); its
``expect`` pins route, verdicts and evaluation fields, and the checks below hold for every case.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from diagnosis.v1 import contracts_pb2, run_pb2
from diagnosis_server.conversions import message_to_dict
from diagnosis_server.evaluation import EvalCase, read_cases, run_case
from diagnosis_server.store import Repository

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
CASES = [case for path in sorted(GOLDEN.glob("*.jsonl")) for case in read_cases(path)]
CATALOG = json.loads(
    (Path(__file__).resolve().parents[2] / "server/diagnosis_server/agents/prompts/catalog.json").read_text("utf-8")
)
FORBIDDEN_KEYS = ("reasoning", "tool_trace_summary", "user_facing_answer", "diagnosis_summary", "prompt_text")


def _executor_statements(case: EvalCase) -> dict[str, str]:
    statements: dict[str, str] = {}
    for raw in case.agent_outputs.executor:
        try:
            data = json.loads(raw)
        except ValueError:
            continue
        for claim in data.get("claims", []) if isinstance(data, dict) else []:
            statements[claim["claim_id"]] = claim["statement"]
    return statements


@pytest.mark.requirement("R-T-1")
@pytest.mark.parametrize("case", CASES, ids=[c.case_id for c in CASES])
async def test_case_runs_to_a_safe_stored_answer(case: EvalCase, repository: Repository) -> None:
    result = await run_case(case, repository)
    assert result.expect_ok, result.mismatches
    run = result.run

    # R-A-6: a safe answer, degraded or not, is SUCCESS; degradation shows in the verdict and the trace.
    assert run.status == run_pb2.RUN_STATUS_SUCCESS
    assert run.answer_text.strip()
    trace = run.orchestration_trace
    fallback_used = run.answer.source != contracts_pb2.COMPOSER_SOURCE_COMPOSER
    assert trace.degraded == (fallback_used or run.verdict != contracts_pb2.VERDICT_PASS)

    # R-S-3: one event per node attempt, persisted in order; the trace path is the events' nodes.
    events = await repository.list_events(run.run_id)
    assert [e.sequence for e in events] == list(range(1, len(events) + 1))
    assert [e.node for e in events] == list(trace.path)
    assert all(e.run_id == run.run_id for e in events)

    # R-A-1, R-A-2, R-A-4: no statement of a claim outside the allowed material reaches the answer.
    evaluation = run.self_evaluation.verifier_evaluation
    shown = (*run.answer.confirmed_facts, *run.answer.possible_directions, run.answer.likely_cause)
    # An answer names a claim by its id, or by "#N" (its position in the verified output) when the id is more
    # than a plain label.
    verified = [c.claim_id for c in evaluation.verified_executor_output.claims]
    cited = {verified[int(cid[1:]) - 1] if cid.startswith("#") else cid for item in shown for cid in item.claim_ids}
    allowed = {c.claim_id for c in evaluation.claim_checks if c.classification in _CITABLE}
    assert cited <= allowed
    for claim_id, statement in _executor_statements(case).items():
        if claim_id not in cited:
            assert statement not in run.answer_text, f"{claim_id} leaked into the answer"
    if run.answer.source == contracts_pb2.COMPOSER_SOURCE_PRE_VERIFICATION_FALLBACK:
        assert not cited
        assert not evaluation.HasField("effective_verdict")  # R-P-6

    # R-P-3, R-P-5, R-S-4: prompt audit always; never prompt text, reasoning or raw executor text.
    assert evaluation.prompt_audit.version
    assert {p.agent for p in evaluation.prompt_audit.prompts} == {"planner", "executor", "verifier", "composer"}
    # Every prompt by its catalog name and version, on every path (fallbacks too), as the catalog file says.
    assert evaluation.prompt_audit.version == CATALOG["version"]
    assert {(p.agent, p.name, p.version) for p in evaluation.prompt_audit.prompts} == {
        (agent, entry["name"], entry["version"]) for agent, entry in CATALOG["prompts"].items()
    }
    stored = run.SerializeToString().decode("utf-8", errors="replace")
    assert not _keys(message_to_dict(run)) & set(FORBIDDEN_KEYS)
    assert "Return exactly one JSON object" not in stored
    for raw in case.agent_outputs.executor:
        if len(raw) > 40:
            assert raw not in stored

    # R-S-5: the parsed trace lives only at run.orchestration_trace, never inside the self-evaluation.
    assert not _keys(message_to_dict(run.self_evaluation)) & {"orchestration_trace", "path", "end_reason"}

    # R-P-7: the rule channels given to the run are preserved beside the verifier evaluation.
    if case.rule_evaluation is not None:
        assert message_to_dict(run.self_evaluation.rule_evaluation) == case.rule_evaluation
    if case.aiops_rule_evaluation is not None:
        assert message_to_dict(run.self_evaluation.aiops_rule_evaluation) == case.aiops_rule_evaluation


def _keys(value: object) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in _keys(v)}
    if isinstance(value, list):
        return {k for v in value for k in _keys(v)}
    return set()


_CITABLE = {
    contracts_pb2.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION,
    contracts_pb2.CLAIM_CLASSIFICATION_REASONABLE_INFERENCE,
    contracts_pb2.CLAIM_CLASSIFICATION_OVERSTATED,
}


@pytest.mark.requirement("R-R-4")
async def test_evidence_retry_counts_are_independent_of_technical_retries(repository: Repository) -> None:
    case = next(c for c in CASES if c.case_id == "evidence-retry-then-pass")
    run = (await run_case(case, repository)).run
    trace = run.orchestration_trace
    assert trace.evidence_retry_count == 1
    assert not trace.technical_retries
    events = await repository.list_events(run.run_id)
    assert [e.cycle for e in events if e.node == run_pb2.NODE_NAME_PLANNER] == [1, 2]
    # Cycle 2's claims may bind to cycle 2's invocations; all stay this run's rows.
    invocations = await repository.list_tool_invocations(run.run_id)
    assert {i.cycle for i in invocations} == {1, 2}


@pytest.mark.requirement("R-R-1")
async def test_technical_retry_counter_is_recorded(repository: Repository) -> None:
    case = next(c for c in CASES if c.case_id == "verifier-retry-succeeds")
    run = (await run_case(case, repository)).run
    retries = {r.node: r.technical_retries for r in run.orchestration_trace.technical_retries}
    assert retries == {run_pb2.NODE_NAME_VERIFIER: 1}
    events = await repository.list_events(run.run_id)
    verifier_attempts = [(e.attempt, e.outcome) for e in events if e.node == run_pb2.NODE_NAME_VERIFIER]
    assert verifier_attempts == [(1, run_pb2.NODE_OUTCOME_INVALID_OUTPUT), (2, run_pb2.NODE_OUTCOME_VERDICT_PASS)]


@pytest.mark.requirement("R-S-5")
def test_the_trace_has_exactly_one_home_in_the_contracts() -> None:
    """No message but DiagnosisRun carries an OrchestrationTrace, and it carries one."""
    from diagnosis.v1 import contracts_pb2, diagnosis_service_pb2, gatekeeper_service_pb2

    homes = [
        f"{message.full_name}.{f.name}"
        for module in (contracts_pb2, run_pb2, diagnosis_service_pb2, gatekeeper_service_pb2)
        for message in module.DESCRIPTOR.message_types_by_name.values()
        for f in message.fields
        if f.message_type is not None and f.message_type.full_name == "diagnosis.v1.OrchestrationTrace"
    ]
    assert homes == ["diagnosis.v1.DiagnosisRun.orchestration_trace"]
