"""What a fallback says happened, pinned word for word: the notes are read by the user (R-A-4, R-A-5, R-P-6)."""

from __future__ import annotations

import pytest

from diagnosis.v1 import contracts_pb2
from diagnosis_server.composition.notes import RunRecord, post_verification_notes, pre_verification_notes
from diagnosis_server.composition.suggestions import RecordedCall

S = contracts_pb2


def _call(invocation_id: str, tool: str, status: int) -> RecordedCall:
    return RecordedCall(invocation_id, tool, {}, None, status)


@pytest.mark.requirement("R-A-4")
@pytest.mark.parametrize(
    ("last_reason", "why"),
    [
        ("MODEL_ENDPOINT_FAILED", "the model endpoint failed"),
        ("verifier_model_endpoint_failed", "the model endpoint failed"),
        ("VERIFIER_TIMEOUT", "it timed out"),
        ("VERIFIER_INVALID_OUTPUT", "its reply was not valid"),
        ("COMPOSER_GUARD_REJECTED", "its reply was not valid"),
        ("VERIFIER_NON_RETRYABLE_FAILED", "it refused or failed for good"),
        ("VERIFIER_REFUSED", "it refused or failed for good"),
        ("refused", "it refused or failed for good"),
        ("VERIFIER_RETRYABLE_FAILED", "it failed twice"),
        ("retryable", "it failed twice"),
        ("VERIFIER_FAILED", "it failed"),
        ("", "it failed"),
    ],
)
def test_why_a_step_failed_is_said_from_its_reason_code(last_reason: str, why: str) -> None:
    (note,) = pre_verification_notes(RunRecord(reason_code="VERIFIER_FAILED", last_reason=last_reason))
    assert note == f"The Verifier did not complete ({why}), so no claim could be classified."


@pytest.mark.requirement("R-A-4", "R-A-5")
@pytest.mark.parametrize(
    ("reason_code", "note"),
    [
        (
            "PLANNER_FAILED",
            "The Planner did not return a usable plan (it timed out), so no tool was called.",
        ),
        (
            " planner_failed ",
            "The Planner did not return a usable plan (it timed out), so no tool was called.",
        ),
        (
            "EXECUTOR_INVALID_OUTPUT",
            "The Executor's output was not a valid executor_evidence_v2 result, so none of its claims was checked.",
        ),
        ("EXECUTOR_FAILED", "The Executor did not return claims (it timed out)."),
        (
            "TOOL_BLOCKED",
            "The Executor asked for a tool that is not allowed in this run, so the investigation stopped.",
        ),
        ("NO_VERIFIED_EVIDENCE", "The Executor returned no claims, so there was nothing to verify."),
        ("GATEKEEPER_REJECT", "The Executor returned no claims, so there was nothing to verify."),
        ("RECURSION_LIMIT", "The diagnosis reached its step limit before it finished."),
        (
            "MODEL_ENDPOINT_FAILED: planner APIConnectionError",
            "The model endpoint failed (the agents could not reach it, or it answered with an error), "
            "so the investigation could not go on.",
        ),
        ("SOMETHING_ELSE", "An internal step of the diagnosis did not complete."),
    ],
)
def test_each_reason_code_has_its_own_note(reason_code: str, note: str) -> None:
    record = RunRecord(reason_code=reason_code, last_reason="PLANNER_TIMEOUT")
    assert pre_verification_notes(record) == [note]


@pytest.mark.requirement("R-A-5")
def test_the_recorded_calls_are_counted_by_status_and_the_failed_tools_named() -> None:
    calls = (
        _call("inv-1", "k8s.events", S.TOOL_INVOCATION_STATUS_OK),
        _call("inv-2", "metrics.query", S.TOOL_INVOCATION_STATUS_TIMEOUT),
        _call("inv-3", "logs.search", S.TOOL_INVOCATION_STATUS_ERROR),
        _call("inv-4", "metrics.query", S.TOOL_INVOCATION_STATUS_TIMEOUT),
        _call("inv-5", "k8s.events", S.TOOL_INVOCATION_STATUS_OK),
    )
    record = RunRecord(reason_code="EXECUTOR_FAILED", last_reason="EXECUTOR_TIMEOUT", calls=calls, calls_known=True)
    assert pre_verification_notes(record) == [
        "The Executor did not return claims (it timed out).",
        "5 tool call(s) were recorded (1 error, 2 ok, 2 timeout); without usable output: logs.search, metrics.query.",
    ]
    ok_only = RunRecord(reason_code="EXECUTOR_FAILED", calls=calls[:1], calls_known=True)
    assert pre_verification_notes(ok_only)[1] == "1 tool call(s) were recorded (1 ok)."
    none = RunRecord(reason_code="EXECUTOR_FAILED", calls_known=True)
    assert pre_verification_notes(none)[1] == "No tool call was recorded."
    # Calls that were not looked at are not spoken of.
    assert len(pre_verification_notes(RunRecord(reason_code="EXECUTOR_FAILED", calls=calls))) == 1


@pytest.mark.requirement("R-A-4", "R-P-6")
def test_the_post_verification_note_names_the_refused_rules_or_why_the_composer_failed() -> None:
    tail = "; this answer was rendered by the service from the verified material alone."
    refused = RunRecord(
        reason_code="COMPOSER_FAILED", composer_refusal=("composer.citation", "composer.allowed", "composer.citation")
    )
    assert post_verification_notes(refused) == [
        "The Composer's answer was refused (composer.allowed, composer.citation)" + tail
    ]
    timed_out = RunRecord(reason_code="COMPOSER_FAILED", last_reason="COMPOSER_TIMEOUT")
    assert post_verification_notes(timed_out) == ["The Composer did not return an answer (it timed out)" + tail]
