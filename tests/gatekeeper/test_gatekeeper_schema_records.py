"""What the Gatekeeper records of an output's schema faults, field for field: the rule, the claim, the binding
(-1: the claim or the output itself), the message, and each rule's count (R-GK-1, R-GK-6, R-P-1)."""

from __future__ import annotations

from typing import Any

import pytest

from diagnosis.v1 import contracts_pb2
from diagnosis_server.conversions import to_value
from diagnosis_server.gatekeeper import SCHEMA, run_gatekeeper
from diagnosis_server.protocols.executor import ExecutorParse, parse_executor_output

RUN = "run-1"
INVOCATION = contracts_pb2.ToolInvocation(
    invocation_id="inv-1",
    run_id=RUN,
    tool_name="k8s_events",
    output=to_value({"events": [{"reason": "OOMKilled"}]}),
    status=contracts_pb2.TOOL_INVOCATION_STATUS_OK,
)
BINDING = {
    "source_invocation_ids": ["inv-1"],
    "tool_name": "k8s_events",
    "raw_path": "/events/0/reason",
    "matched_text": "OOMKilled",
}


def _claim(claim_id: str, *bindings: dict[str, Any]) -> dict[str, Any]:
    return {"claim_id": claim_id, "statement": f"s {claim_id}", "critical": True, "status": "confirmed",
            "evidence_bindings": list(bindings)}  # fmt: skip


def _parse(*claims: dict[str, Any], **extra: Any) -> ExecutorParse:
    parsed = parse_executor_output({"contract": "executor_evidence_v2", "claims": list(claims), **extra})
    assert parsed.ok, parsed.error
    return parsed


def _records(result: contracts_pb2.GatekeeperResult) -> list[tuple[str, str, int, str]]:
    return [(e.rule, e.claim_id, e.binding_index, e.message) for e in result.errors]


def _counts(result: contracts_pb2.GatekeeperResult) -> dict[str, int]:
    return {rule.rule: rule.failures for rule in result.rules if rule.failures}


@pytest.mark.requirement("R-GK-1", "R-P-1")
def test_each_removed_field_is_one_schema_error_of_the_output() -> None:
    parsed = _parse(_claim("c1", BINDING), diagnosis_summary="x", user_facing_answer="y")
    result = run_gatekeeper(parsed, [INVOCATION], run_id=RUN)
    assert _records(result) == [
        (SCHEMA, "", -1, "diagnosis_summary is a removed field of executor_evidence_v2"),
        (SCHEMA, "", -1, "user_facing_answer is a removed field of executor_evidence_v2"),
    ]
    assert _counts(result) == {SCHEMA: 2}
    assert result.severity == contracts_pb2.GATEKEEPER_SEVERITY_REJECT


@pytest.mark.requirement("R-GK-6", "R-P-1")
def test_a_claims_own_faults_are_errors_of_the_claim() -> None:
    bare = run_gatekeeper(_parse(_claim("c1")), [INVOCATION], run_id=RUN)
    assert _records(bare) == [(SCHEMA, "c1", -1, "confirmed claim has no evidence_bindings")]
    assert _counts(bare) == {SCHEMA: 1}
    parsed = _parse(_claim("c1", BINDING), _claim("c2", BINDING), _claim("c3", BINDING))
    assert parsed.output is not None
    parsed.output.claims[1].status = contracts_pb2.CLAIM_STATUS_UNSPECIFIED
    parsed.output.claims[2].status = contracts_pb2.CLAIM_STATUS_UNSPECIFIED
    unspecified = run_gatekeeper(parsed, [INVOCATION], run_id=RUN)
    assert _records(unspecified) == [
        (SCHEMA, "c2", -1, "claim status is unspecified"),
        (SCHEMA, "c3", -1, "claim status is unspecified"),
    ]
    assert _counts(unspecified) == {SCHEMA: 2}


@pytest.mark.requirement("R-GK-1", "R-P-1")
def test_a_bindings_schema_faults_are_one_error_of_that_binding() -> None:
    broken = {"source_invocation_ids": [], "tool_name": "", "raw_path": "bad", "matched_text": ""}
    result = run_gatekeeper(_parse(_claim("c1", BINDING, broken)), [INVOCATION], run_id=RUN)
    assert _records(result) == [
        (
            SCHEMA,
            "c1",
            1,
            "source_invocation_ids is empty; tool_name is empty; raw_path 'bad' is not a JSON Pointer (RFC 6901); "
            "matched_text is empty",
        )
    ]
    assert _counts(result) == {SCHEMA: 1}
    assert result.severity == contracts_pb2.GATEKEEPER_SEVERITY_REJECT


def test_a_parse_that_is_not_legal_is_refused_with_why() -> None:
    invalid = parse_executor_output("not json")
    assert not invalid.ok
    with pytest.raises(ValueError, match="run_gatekeeper needs a legal executor_evidence_v2 parse: INVALID_OUTPUT "
                       "is a parse status, not a Gatekeeper verdict"):  # fmt: skip
        run_gatekeeper(invalid, [INVOCATION], run_id=RUN)
