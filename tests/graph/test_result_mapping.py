"""Graph result mapping: the final state as the persisted run (R-P-1, R-P-2, R-P-3, R-P-4, R-P-6, R-A-6, R-R-7).

Each persisted field is the state's value, whole: the Gatekeeper result with its rules, errors, warnings and
checked bindings; the Verifier's groundedness score and rationale as given; the composer output with the
source that produced it; the verifier status after a pre-verification fallback; the trace's evidence-retry
count apart from its technical retries.
"""

from __future__ import annotations

from diagnosis.v1 import contracts_pb2, run_pb2
from diagnosis_server.agents.prompts import default_catalog
from diagnosis_server.graph.result import TRACEABILITY_VERSION, complete_run, orchestration_trace, verifier_evaluation
from diagnosis_server.graph.state import DiagnosisState
from diagnosis_server.protocols.executor import ExecutorParse

N = run_pb2.NodeName
S = contracts_pb2.ComposerSource


def _gatekeeper() -> contracts_pb2.GatekeeperResult:
    result = contracts_pb2.GatekeeperResult(
        status=contracts_pb2.GATEKEEPER_STATUS_FAIL,
        severity=contracts_pb2.GATEKEEPER_SEVERITY_LOW_CONFID,
        failed_rules=["evidence.matched_text"],
    )
    result.checked_bindings.add(claim_id="c1", source_invocation_id="inv-1", raw_path="/a", passed=True)
    result.checked_bindings.add(
        claim_id="c1",
        binding_index=1,
        source_invocation_id="inv-1",
        raw_path="/b",
        failed_rules=["evidence.matched_text"],
    )
    result.checked_bindings.add(
        claim_id="c2", source_invocation_id="inv-1", raw_path="/c", passed=True, warning_rules=["evidence.matched_text"]
    )
    result.rules.add(rule="schema.executor_v2", status=contracts_pb2.GATEKEEPER_STATUS_PASS)
    result.rules.add(rule="evidence.matched_text", status=contracts_pb2.GATEKEEPER_STATUS_FAIL, failures=1, warnings=1)
    result.errors.add(rule="evidence.matched_text", claim_id="c1", binding_index=1, message="not found at /b")
    result.warnings.add(rule="evidence.matched_text", claim_id="c2", message="matches after case folding")
    return result


def _verified_state() -> DiagnosisState:
    gatekeeper = _gatekeeper()
    verifier_input = contracts_pb2.VerifierInput(
        gatekeeper_audit=gatekeeper, verdict_ceiling=contracts_pb2.VERDICT_LOW_CONFID
    )
    verifier_input.verified_executor_output.claims.add(claim_id="c1", statement="pods are OOMKilled")
    verifier_input.verified_evidence.add(claim_id="c1", source_invocation_id="inv-1", raw_path="/a", matched_text="OOM")
    output = contracts_pb2.VerifierOutput(
        verdict=contracts_pb2.VERDICT_PASS, groundedness_score=0.37, rationale="checked against /a"
    )
    output.claim_checks.add(claim_id="c1", classification=contracts_pb2.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION)
    output.facts_checked.add(
        claim_id="c1", fact="pods are OOMKilled", support=contracts_pb2.FACT_SUPPORT_DIRECT_EVIDENCE
    )
    output.evidence_gaps.add(claim_id="c1", description="memory was not read", critical=True)
    output.evidence_gaps.add(claim_id="c9", description="names no verified claim", critical=True)
    return DiagnosisState(
        run_id="run-map",
        question="why?",
        scenario="",
        executor_parse=ExecutorParse(status=contracts_pb2.PARSE_STATUS_OK, output=contracts_pb2.ExecutorEvidenceV2()),
        executor_parse_status=contracts_pb2.PARSE_STATUS_OK,
        gatekeeper_result=gatekeeper,
        verdict_ceiling=contracts_pb2.VERDICT_LOW_CONFID,
        verifier_input=verifier_input,
        verifier_input_bytes=b"{}",
        verifier_status=run_pb2.NODE_OUTCOME_OK,
        verifier_output=output,
        model_verdict=contracts_pb2.VERDICT_PASS,
        effective_verdict=contracts_pb2.VERDICT_LOW_CONFID,
    )


def test_a_completed_evaluation_persists_every_field_whole() -> None:
    """R-P-1, R-P-4: the Gatekeeper result whole; the Verifier's score, rationale, checks and facts as given."""
    state = _verified_state()
    state.post_fallback_output = contracts_pb2.ComposerOutput(
        summary="s", source=S.COMPOSER_SOURCE_POST_VERIFICATION_FALLBACK
    )
    audit = default_catalog().audit()
    evaluation = verifier_evaluation(state, audit)
    assert state.gatekeeper_result is not None and state.verifier_output is not None
    assert evaluation.gatekeeper_result == state.gatekeeper_result
    assert len(evaluation.gatekeeper_result.errors) == 1 and len(evaluation.gatekeeper_result.warnings) == 1
    assert len(evaluation.gatekeeper_result.rules) == 2 and len(evaluation.gatekeeper_result.checked_bindings) == 3
    assert evaluation.groundedness_score == 0.37
    assert evaluation.rationale == "checked against /a"
    assert list(evaluation.claim_checks) == list(state.verifier_output.claim_checks)
    assert list(evaluation.facts_checked) == list(state.verifier_output.facts_checked)
    assert evaluation.verifier_status == run_pb2.NODE_OUTCOME_OK
    assert evaluation.model_verdict == contracts_pb2.VERDICT_PASS
    assert evaluation.effective_verdict == evaluation.verdict == contracts_pb2.VERDICT_LOW_CONFID
    assert evaluation.verdict_ceiling == contracts_pb2.VERDICT_LOW_CONFID
    assert evaluation.executor_output_parse_status == contracts_pb2.PARSE_STATUS_OK
    assert evaluation.traceability_version == TRACEABILITY_VERSION == "verified-evidence/1"
    assert state.verifier_input is not None
    assert evaluation.verified_executor_output == state.verifier_input.verified_executor_output
    assert list(evaluation.verified_evidence) == list(state.verifier_input.verified_evidence)
    assert evaluation.verified_evidence_dropped == 0
    # Only the valid gaps (naming a verified claim) are persisted.
    assert [g.claim_id for g in evaluation.evidence_gaps] == ["c1"]
    # R-P-2: the answer that was used, with its source.
    assert evaluation.composer_output == state.post_fallback_output
    assert evaluation.composer_output.source == S.COMPOSER_SOURCE_POST_VERIFICATION_FALLBACK
    # R-P-3: the prompt audit as given: catalog version, every agent's prompt name and version.
    assert evaluation.prompt_audit == audit
    assert evaluation.failure_reason == ""


def test_the_composer_output_keeps_the_composers_source() -> None:
    state = _verified_state()
    state.composer_output = contracts_pb2.ComposerOutput(summary="c", source=S.COMPOSER_SOURCE_COMPOSER)
    state.post_fallback_output = contracts_pb2.ComposerOutput(
        summary="f", source=S.COMPOSER_SOURCE_POST_VERIFICATION_FALLBACK
    )
    evaluation = verifier_evaluation(state, contracts_pb2.PromptAudit())
    assert evaluation.composer_output == state.composer_output


def test_a_pre_verification_fallback_keeps_the_verifier_status_and_no_verdict() -> None:
    """R-P-6: status, Gatekeeper audit, failure reason and prompt audit; no model or effective verdict."""
    state = _verified_state()
    state.verifier_status = run_pb2.NODE_OUTCOME_RETRYABLE_FAILED
    state.verifier_output = None
    state.model_verdict = state.effective_verdict = contracts_pb2.VERDICT_UNSPECIFIED
    state.pre_fallback_output = contracts_pb2.ComposerOutput(source=S.COMPOSER_SOURCE_PRE_VERIFICATION_FALLBACK)
    state.fallback_reason = "VERIFIER_FAILED"
    audit = default_catalog().audit()
    evaluation = verifier_evaluation(state, audit)
    assert evaluation.verifier_status == run_pb2.NODE_OUTCOME_RETRYABLE_FAILED
    assert evaluation.failure_reason == "VERIFIER_FAILED"
    assert evaluation.gatekeeper_result == state.gatekeeper_result
    assert evaluation.prompt_audit == audit
    for field in ("model_verdict", "effective_verdict", "verdict", "composer_output", "groundedness_score"):
        assert not evaluation.HasField(field), field
    assert not evaluation.claim_checks and not evaluation.facts_checked
    done = complete_run(run_pb2.DiagnosisRun(run_id="run-map"), state, audit)
    assert done.status == run_pb2.RUN_STATUS_SUCCESS and done.verdict == contracts_pb2.VERDICT_UNSPECIFIED
    assert done.answer.source == S.COMPOSER_SOURCE_PRE_VERIFICATION_FALLBACK


def test_a_verifier_that_completed_before_a_later_fallback_persists_no_verdict() -> None:
    """R-P-6: a fallback after a completed Verifier (a later cycle) fabricates no verdict from the earlier one."""
    state = _verified_state()
    state.pre_fallback_output = contracts_pb2.ComposerOutput(source=S.COMPOSER_SOURCE_PRE_VERIFICATION_FALLBACK)
    state.fallback_reason = "GATEKEEPER_REJECT"
    evaluation = verifier_evaluation(state, contracts_pb2.PromptAudit())
    assert not evaluation.HasField("effective_verdict") and not evaluation.claim_checks
    assert evaluation.verifier_status == run_pb2.NODE_OUTCOME_OK


def test_a_parse_failure_is_visible_in_the_failure_reason() -> None:
    """R-P-6: the parse failure shows as such (status and reason), never as a verdict."""
    state = DiagnosisState(
        run_id="run-map",
        question="q",
        scenario="",
        executor_parse=ExecutorParse(status=contracts_pb2.PARSE_STATUS_INVALID_OUTPUT, output=None, error="x" * 400),
        executor_parse_status=contracts_pb2.PARSE_STATUS_INVALID_OUTPUT,
        pre_fallback_output=contracts_pb2.ComposerOutput(source=S.COMPOSER_SOURCE_PRE_VERIFICATION_FALLBACK),
        fallback_reason="EXECUTOR_INVALID_OUTPUT",
    )
    evaluation = verifier_evaluation(state, contracts_pb2.PromptAudit())
    assert evaluation.failure_reason == "EXECUTOR_INVALID_OUTPUT: " + "x" * 300
    assert evaluation.executor_output_parse_status == contracts_pb2.PARSE_STATUS_INVALID_OUTPUT
    assert not evaluation.HasField("gatekeeper_result") and not evaluation.HasField("verdict")


def test_the_trace_counts_evidence_and_technical_retries_apart() -> None:
    """R-R-7: the evidence-retry count is the state's; technical retries per node, as counted."""
    state = _verified_state()
    state.composer_output = contracts_pb2.ComposerOutput(source=S.COMPOSER_SOURCE_COMPOSER)
    state.effective_verdict = contracts_pb2.VERDICT_PASS
    state.evidence_retry_count = 1
    state.technical_retries = ((N.NODE_NAME_PLANNER, 2), (N.NODE_NAME_VERIFIER, 1))
    state.orchestration_events = tuple(
        run_pb2.OrchestrationEvent(node=n) for n in (N.NODE_NAME_PLANNER, N.NODE_NAME_COMPOSER)
    )
    state.dropped_events, state.steps = 3, 5
    trace = orchestration_trace(state)
    assert trace.evidence_retry_count == 1
    assert [(r.node, r.technical_retries) for r in trace.technical_retries] == [
        (N.NODE_NAME_PLANNER, 2),
        (N.NODE_NAME_VERIFIER, 1),
    ]
    assert list(trace.path) == [N.NODE_NAME_PLANNER, N.NODE_NAME_COMPOSER]
    assert (trace.event_count, trace.dropped_events, trace.steps) == (5, 3, 5)
    assert trace.terminal_node == N.NODE_NAME_COMPOSER and trace.end_reason == "COMPOSED"
    assert not trace.degraded
    state.composer_output = None
    state.post_fallback_output = contracts_pb2.ComposerOutput(source=S.COMPOSER_SOURCE_POST_VERIFICATION_FALLBACK)
    state.orchestration_events = (run_pb2.OrchestrationEvent(node=N.NODE_NAME_POST_VERIFICATION_FALLBACK),)
    trace = orchestration_trace(state)
    assert trace.degraded and trace.end_reason == "COMPOSER_FALLBACK"  # R-A-6: a PASS degraded by the fallback
