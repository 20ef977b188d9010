"""`check_expect`: what a golden case's ``expect`` pins (R-T-2: the evaluation contract stays covered).

``evaluation_has`` and ``trace_has`` accept paths that must be present, and dotted paths with the value they
must hold, so that a persisted field stripped of its content (R-P-1) or forced to another value (R-P-2,
R-P-6) turns a case red, not only a missing key.
"""

from __future__ import annotations

from typing import Any

import pytest

from diagnosis_server.evaluation import check_expect, lookup, matches

EVALUATION: dict[str, Any] = {
    "verifier_status": "NODE_OUTCOME_RETRYABLE_FAILED",
    "groundedness_score": 0.5,
    "composer_output": {"source": "COMPOSER_SOURCE_POST_VERIFICATION_FALLBACK"},
    "gatekeeper_result": {
        "status": "GATEKEEPER_STATUS_FAIL",
        "rules": [{"rule": "schema.executor_v2", "status": "GATEKEEPER_STATUS_PASS"}],
        "errors": [{"rule": "evidence.matched_text", "claim_id": "c2"}],
        "checked_bindings": [{"claim_id": "c1", "passed": True}, {"claim_id": "c2"}],
    },
    "prompt_audit": {"version": "v1", "prompts": [{"agent": "planner", "name": "planner.diagnose", "version": "2"}]},
    "verified_evidence_dropped": "3",
}
REPORT: dict[str, Any] = {
    "verifier_evaluation": EVALUATION,
    "orchestration_trace": {"evidence_retry_count": 1, "technical_retries": [{"node": "NODE_NAME_VERIFIER"}]},
}


def test_the_list_form_still_checks_presence_only() -> None:
    assert check_expect({"evaluation_has": ["verifier_status", "gatekeeper_result"]}, REPORT) == []
    assert check_expect({"evaluation_has": "prompt_audit"}, REPORT) == []
    assert check_expect({"evaluation_has": ["model_verdict"]}, REPORT) == ["evaluation_has: 'model_verdict' missing"]
    assert check_expect({"evaluation_lacks": ["model_verdict"]}, REPORT) == []
    assert check_expect({"evaluation_lacks": ["verifier_status"]}, REPORT) == [
        "evaluation_lacks: 'verifier_status' present"
    ]


def test_dotted_paths_name_nested_fields_and_list_elements() -> None:
    assert lookup(EVALUATION, "gatekeeper_result.errors.0.rule") == "evidence.matched_text"
    assert lookup(EVALUATION, "gatekeeper_result.errors.-1.claim_id") == "c2"
    assert lookup(EVALUATION, "gatekeeper_result.rules.#") == 1
    assert lookup(EVALUATION, "prompt_audit.#") == 2
    for missing in ("gatekeeper_result.errors.1", "gatekeeper_result.errors.x", "nothing.here", "groundedness_score.0"):
        assert check_expect({"evaluation_has": [missing]}, REPORT), missing
    assert check_expect({"evaluation_has": ["gatekeeper_result.errors.0.rule"]}, REPORT) == []
    assert check_expect({"evaluation_lacks": ["gatekeeper_result.warnings"]}, REPORT) == []
    assert check_expect({"evaluation_lacks": ["gatekeeper_result.errors.0"]}, REPORT)


def test_an_object_pins_values_by_path() -> None:
    good = {
        "verifier_status": "RETRYABLE_FAILED",
        "groundedness_score": 0.5,
        "composer_output.source": "post_verification_fallback",
        "gatekeeper_result.status": "fail",
        "gatekeeper_result.errors.0": {"rule": "evidence.matched_text"},
        "gatekeeper_result.rules.#": 1,
        "gatekeeper_result.warnings": None,
        "verified_evidence_dropped": 3,
    }
    assert check_expect({"evaluation_has": good}, REPORT) == []
    assert check_expect({"evaluation_has": ["prompt_audit", good]}, REPORT) == []


@pytest.mark.parametrize(
    ("path", "wrong"),
    [
        ("verifier_status", "OK"),
        ("groundedness_score", 1.0),
        ("composer_output.source", "COMPOSER"),
        ("gatekeeper_result.status", "pass"),
        ("gatekeeper_result.rules.#", 5),
        ("gatekeeper_result.errors", []),
        ("gatekeeper_result.errors.0", {"rule": "evidence.raw_path"}),
        ("gatekeeper_result.checked_bindings.1", {"passed": True}),
        ("gatekeeper_result.errors", None),
        ("prompt_audit.prompts", [{"agent": "planner", "name": ""}]),
        ("prompt_audit.prompts", [{"agent": "planner"}, {"agent": "executor"}]),
        ("model_verdict", "PASS"),
    ],
)
def test_a_pinned_value_that_differs_is_a_mismatch(path: str, wrong: object) -> None:
    (mismatch,) = check_expect({"evaluation_has": {path: wrong}}, REPORT)
    assert mismatch.startswith(f"evaluation_has: {path!r}")


def test_trace_has_pins_the_orchestration_trace() -> None:
    assert (
        check_expect({"trace_has": {"evidence_retry_count": 1, "technical_retries.0.node": "verifier"}}, REPORT) == []
    )
    assert check_expect({"trace_has": {"degraded": None}}, REPORT) == []
    assert check_expect({"trace_has": {"evidence_retry_count": 2}}, REPORT)
    assert check_expect({"trace_has": {"technical_retries": [{"node": "composer"}]}}, REPORT)
    assert check_expect({"trace_has": ["steps"]}, REPORT) == ["trace_has: 'steps' missing"]


def test_matches_compares_kinds_strictly() -> None:
    assert matches(True, True) and not matches(True, 1) and not matches(1, True)
    assert matches(3, "3") and matches(0.5, 0.5) and not matches(3, "three") and not matches(3, [3])
    assert matches("VERDICT_PASS", "pass") and not matches("PASS", "LOW_CONFID") and not matches("PASS", {"a": 1})
    assert matches({"a": None}, {}) and not matches({"a": 1}, {}) and not matches({"a": 1}, [1])
    assert matches([], []) and not matches([1], [1, 2]) and not matches([1], {"0": 1})
    assert matches(None, None) and not matches(None, 0)
