"""Graph result mapping: the final state as a persisted run (self-evaluation and orchestration trace).

Nothing of another run, no prompt text, reasoning, raw Executor text or complete tool output is written
(R-P-5, R-S-4); the parsed trace lives only at ``orchestration_trace`` (R-S-5).
"""

from __future__ import annotations

from diagnosis.v1 import contracts_pb2, run_pb2
from diagnosis_server.composition.render import answer_text
from diagnosis_server.graph.spec import GRAPH
from diagnosis_server.graph.standing import retry_failed, standing_answer
from diagnosis_server.graph.state import DiagnosisState
from diagnosis_server.verification.verdict import valid_evidence_gaps
from diagnosis_server.verification.verified_input import MAX_VERIFIED_EVIDENCE

TRACEABILITY_VERSION = "verified-evidence/1"


def final_answer(state: DiagnosisState) -> contracts_pb2.ComposerOutput | None:
    return state.composer_output or state.post_fallback_output or state.pre_fallback_output


def verifier_evaluation(state: DiagnosisState, prompt_audit: contracts_pb2.PromptAudit) -> run_pb2.VerifierEvaluation:
    # The latest completed verification (a failed evidence retry's is the cycle before it): its Gatekeeper result,
    # ceiling and evidence are persisted together, so the verified evidence traces to the check it passed (R-C-5).
    # A pre-verification fallback answer persists no claim checks and no verdicts (R-P-6).
    answer = standing_answer(state) if state.pre_fallback_output is None else None
    evaluation = run_pb2.VerifierEvaluation(
        verifier_status=run_pb2.NODE_OUTCOME_OK if answer is not None else state.verifier_status,  # type: ignore[arg-type]
        executor_output_parse_status=state.executor_parse_status,  # type: ignore[arg-type]
        verdict_ceiling=answer.verdict_ceiling if answer is not None else state.verdict_ceiling,  # type: ignore[arg-type]
        traceability_version=TRACEABILITY_VERSION,
    )
    evaluation.prompt_audit.CopyFrom(prompt_audit)
    if state.fallback_reason:
        evaluation.failure_reason = _failure_reason(state)
    gatekeeper_result = answer.gatekeeper_result if answer is not None else state.gatekeeper_result
    if gatekeeper_result is not None:
        evaluation.gatekeeper_result.CopyFrom(gatekeeper_result)
    verifier_input = answer.verifier_input if answer is not None else _own_verifier_input(state)
    if verifier_input is not None:
        evaluation.verified_executor_output.CopyFrom(verifier_input.verified_executor_output)
        evidence = verifier_input.verified_evidence
        evaluation.verified_evidence.extend(evidence[:MAX_VERIFIED_EVIDENCE])
        evaluation.verified_evidence_dropped = max(0, len(evidence) - MAX_VERIFIED_EVIDENCE)
    if answer is not None:
        output = answer.verifier_output
        evaluation.claim_checks.extend(output.claim_checks)
        evaluation.facts_checked.extend(output.facts_checked)
        evaluation.model_verdict = answer.model_verdict  # type: ignore[assignment]
        evaluation.effective_verdict = answer.effective_verdict  # type: ignore[assignment]
        evaluation.verdict = answer.effective_verdict  # type: ignore[assignment]
        evaluation.groundedness_score = output.groundedness_score
        evaluation.rationale = output.rationale
        evaluation.classification_changes.extend(output.classification_changes)
        evaluation.warnings.extend(output.warnings)
        evaluation.evidence_gaps.extend(
            valid_evidence_gaps(output.evidence_gaps, answer.verifier_input.verified_executor_output)
        )
        if state.retry_failure and retry_failed(state):
            evaluation.warnings.append(
                f"evidence retry (cycle {answer.cycle + 1}) failed: {state.retry_failure}; "
                f"the answer is cycle {answer.cycle}'s verified answer"
            )
    answer_output = final_answer(state)
    if answer_output is not None and answer_output.source != contracts_pb2.COMPOSER_SOURCE_PRE_VERIFICATION_FALLBACK:
        evaluation.composer_output.CopyFrom(answer_output)
    return evaluation


def _own_verifier_input(state: DiagnosisState) -> contracts_pb2.VerifierInput | None:
    """The verifier input of a run no Verifier completed, while it belongs to the persisted Gatekeeper result."""
    verifier_input, gatekeeper_result = state.verifier_input, state.gatekeeper_result
    if (
        verifier_input is not None
        and gatekeeper_result is not None
        and verifier_input.gatekeeper_audit != gatekeeper_result
    ):
        return None
    return verifier_input


def _failure_reason(state: DiagnosisState) -> str:
    reason = state.fallback_reason
    parse = state.executor_parse
    if reason == "EXECUTOR_INVALID_OUTPUT" and parse is not None and parse.error:
        return f"{reason}: {parse.error[:300]}"
    return reason


def orchestration_trace(state: DiagnosisState) -> run_pb2.OrchestrationTrace:
    events = state.orchestration_events
    terminal = events[-1].node if events else run_pb2.NODE_NAME_UNSPECIFIED
    answer = final_answer(state)
    fallback_used = answer is None or answer.source != contracts_pb2.COMPOSER_SOURCE_COMPOSER
    standing = standing_answer(state)
    verdict = standing.effective_verdict if standing is not None else state.effective_verdict
    trace = run_pb2.OrchestrationTrace(
        path=[event.node for event in events],
        degraded=fallback_used or verdict != contracts_pb2.VERDICT_PASS,
        terminal_node=terminal,
        evidence_retry_count=state.evidence_retry_count,
        technical_retries=[
            run_pb2.NodeRetryCount(node=node, technical_retries=count)  # type: ignore[arg-type]
            for node, count in state.technical_retries
        ],
        event_count=len(events) + state.dropped_events,
        dropped_events=state.dropped_events,
        end_reason=state.fallback_reason or GRAPH.end_reason(terminal),
        steps=state.steps,
    )
    return trace


def complete_run(
    run: run_pb2.DiagnosisRun, state: DiagnosisState, prompt_audit: contracts_pb2.PromptAudit
) -> run_pb2.DiagnosisRun:
    """The run as it is stored at its end: SUCCESS with a safe answer (R-A-6), FAILED without one."""
    done = run_pb2.DiagnosisRun()
    done.CopyFrom(run)
    done.self_evaluation.verifier_evaluation.CopyFrom(verifier_evaluation(state, prompt_audit))
    done.orchestration_trace.CopyFrom(orchestration_trace(state))
    answer = final_answer(state)
    if answer is None:
        done.status = run_pb2.RUN_STATUS_FAILED
        done.failure_reason = "NO_SAFE_ANSWER"
    else:
        done.status = run_pb2.RUN_STATUS_SUCCESS
        done.answer.CopyFrom(answer)
        done.answer_text = answer_text(answer)
        done.failure_reason = ""
    verdict = done.self_evaluation.verifier_evaluation
    done.verdict = verdict.effective_verdict if verdict.HasField("effective_verdict") else 0  # type: ignore[assignment]
    done.updated_at.GetCurrentTime()
    done.completed_at.CopyFrom(done.updated_at)
    return done
