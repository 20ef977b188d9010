"""The verified-input builder (R-C-4, R-C-5, R-VI-1..4, R-GK-6, R-GK-7)."""

from __future__ import annotations

from typing import Any

import pytest
from google.protobuf import json_format
from hypothesis import given, settings
from hypothesis import strategies as st

from diagnosis.v1 import contracts_pb2
from diagnosis_server.conversions import to_value
from diagnosis_server.gatekeeper import run_gatekeeper
from diagnosis_server.protocols.executor import parse_executor_output
from diagnosis_server.verification.verdict import verdict_ceiling
from diagnosis_server.verification.verified_input import (
    MAX_VERIFIED_EVIDENCE,
    build_verifier_input,
    serialize_verifier_input,
    verified_projection,
)

G = contracts_pb2
RUN = "run-1"
LOGS: Any = {"lines": ["ERROR upstream timeout after 3000ms", "WARN retry budget exhausted"], "secret": "UNREFERENCED"}
METRICS: Any = {"p99_ms": 3012, "error_rate": 0.231}
CONTEXT = contracts_pb2.DiagnosisContext(question="why is checkout failing?", scenario="checkout-timeouts", cycle=1)


def invocations() -> list[contracts_pb2.ToolInvocation]:
    return [
        contracts_pb2.ToolInvocation(invocation_id="inv-1", run_id=RUN, tool_name="logs", output=to_value(LOGS)),
        contracts_pb2.ToolInvocation(invocation_id="inv-2", run_id=RUN, tool_name="metrics", output=to_value(METRICS)),
    ]


def bind(ids: list[str], tool: str, path: str, text: str) -> dict[str, Any]:
    return {"source_invocation_ids": ids, "tool_name": tool, "raw_path": path, "matched_text": text}


def mixed_doc() -> dict[str, Any]:
    return {
        "contract": "executor_evidence_v2",
        "reasoning": "EXECUTOR-INTERMEDIATE-REASONING",
        "claims": [
            {
                "claim_id": "c1",
                "statement": "the upstream timed out",
                "critical": True,
                "status": "confirmed",
                "evidence_bindings": [
                    bind(["inv-1", "inv-404"], "logs", "/lines/0", "upstream timeout"),  # one pair passes
                    bind(["inv-2"], "metrics", "/p99_ms", "3012"),  # passes
                    bind(["inv-1"], "logs", "/lines/1", "FAILED-MATERIAL"),  # fails matched_text
                ],
            },
            {
                "claim_id": "c2",
                "statement": "the database is down",
                "critical": True,
                "status": "confirmed",
                "evidence_bindings": [bind(["inv-2"], "logs", "/error_rate", "0.231")],  # fails tool name
            },
            {
                "claim_id": "c3",
                "statement": "error rate is 23%",
                "critical": False,
                "status": "hypothesis",
                "evidence_bindings": [bind(["inv-2"], "metrics", "/error_rate", "0.231")],
            },
        ],
        "evidence_gaps": [{"description": "no upstream trace", "critical": True}],
    }


def checked(doc: dict[str, Any]) -> tuple[contracts_pb2.ExecutorEvidenceV2, contracts_pb2.GatekeeperResult]:
    parsed = parse_executor_output(doc)
    assert parsed.output is not None, parsed.error
    return parsed.output, run_gatekeeper(parsed, invocations(), run_id=RUN)


@pytest.mark.requirement("R-GK-7")
def pair(
    binding: contracts_pb2.CheckedBinding | contracts_pb2.VerifiedEvidence,
) -> tuple[str, str, str, str, str]:
    """What a checked binding and a verified evidence item share: the claim and the (invocation, path) pair."""
    return (binding.claim_id, binding.source_invocation_id, binding.tool_name, binding.raw_path, binding.matched_text)


def test_mixed_bindings_project_only_passed_pairs() -> None:
    output, result = checked(mixed_doc())
    assert result.severity == G.GATEKEEPER_SEVERITY_LOW_CONFID
    projected, evidence = verified_projection(output, result)
    assert [c.claim_id for c in projected.claims] == ["c1", "c3"]
    c1 = projected.claims[0]
    assert [(list(b.source_invocation_ids), b.raw_path) for b in c1.evidence_bindings] == [
        (["inv-1"], "/lines/0"),
        (["inv-2"], "/p99_ms"),
    ]
    assert (c1.statement, c1.critical, c1.status) == ("the upstream timed out", True, G.CLAIM_STATUS_CONFIRMED)
    assert [(e.claim_id, e.source_invocation_id, e.raw_path) for e in evidence] == [
        ("c1", "inv-1", "/lines/0"),
        ("c1", "inv-2", "/p99_ms"),
        ("c3", "inv-2", "/error_rate"),
    ]
    assert [g.description for g in projected.evidence_gaps] == ["no upstream trace"]
    assert projected.contract == "executor_evidence_v2"


@pytest.mark.requirement("R-C-5")
def test_verified_evidence_is_traceable_to_its_check() -> None:
    output, result = checked(mixed_doc())
    _, evidence = verified_projection(output, result)
    for item in evidence:
        cb = result.checked_bindings[item.checked_binding_index]
        assert cb.passed
        assert pair(cb) == pair(item)
    assert [e.checked_binding_index for e in evidence] == [0, 2, 5]


@pytest.mark.requirement("R-VI-1", "R-VI-2")
def test_failed_unreferenced_and_raw_material_never_reach_the_verifier() -> None:
    output, result = checked(mixed_doc())
    verifier_input = build_verifier_input(output=output, result=result, context=CONTEXT)
    assert verifier_input is not None
    projection_bytes = serialize_verifier_input(
        contracts_pb2.VerifierInput(
            verified_executor_output=verifier_input.verified_executor_output,
            verified_evidence=verifier_input.verified_evidence,
        )
    )
    for absent in ["FAILED-MATERIAL", "inv-404", "the database is down", "UNREFERENCED", "retry budget"]:
        assert absent.encode() not in projection_bytes
    whole = serialize_verifier_input(verifier_input)
    assert b"EXECUTOR-INTERMEDIATE-REASONING" not in whole
    assert b"UNREFERENCED" not in whole  # tool output is never copied, only matched text
    assert b"3000ms" not in whole


@pytest.mark.requirement("R-C-4")
def test_verifier_input_holds_exactly_the_contract_blocks() -> None:
    output, result = checked(mixed_doc())
    verifier_input = build_verifier_input(output=output, result=result, context=CONTEXT)
    assert verifier_input is not None
    present = {field.name for field, _ in verifier_input.ListFields()}
    assert present == {
        "diagnosis_context",
        "verified_executor_output",
        "verified_evidence",
        "gatekeeper_audit",
        "verdict_ceiling",
    }
    assert verifier_input.diagnosis_context == CONTEXT
    assert not verifier_input.HasField("retry_context")


@pytest.mark.requirement("R-C-4")
def test_retry_context_only_when_given() -> None:
    output, result = checked(mixed_doc())
    retry = contracts_pb2.RetryContext(
        evidence_retry_count=1, evidence_gaps=[contracts_pb2.EvidenceGap(claim_id="c1", description="trace")]
    )
    verifier_input = build_verifier_input(output=output, result=result, context=CONTEXT, retry_context=retry)
    assert verifier_input is not None
    assert verifier_input.retry_context == retry
    empty = build_verifier_input(
        output=output, result=result, context=CONTEXT, retry_context=contracts_pb2.RetryContext()
    )
    assert empty is not None
    assert empty.HasField("retry_context")


@pytest.mark.requirement("R-VI-3")
def test_raw_audit_and_normalized_ceiling_are_separate() -> None:
    output, result = checked(mixed_doc())
    verifier_input = build_verifier_input(output=output, result=result, context=CONTEXT)
    assert verifier_input is not None
    assert verifier_input.gatekeeper_audit == result
    assert verifier_input.verdict_ceiling == G.VERDICT_LOW_CONFID
    assert verifier_input.gatekeeper_audit.severity == G.GATEKEEPER_SEVERITY_LOW_CONFID
    result.checked_bindings[0].passed = False  # the audit is a copy, not a view
    assert verifier_input.gatekeeper_audit.checked_bindings[0].passed


@pytest.mark.requirement("R-VI-4")
def test_same_inputs_give_byte_identical_serialized_input() -> None:
    output, result = checked(mixed_doc())
    first = build_verifier_input(output=output, result=result, context=CONTEXT)
    output2, result2 = checked(mixed_doc())
    second = build_verifier_input(output=output2, result=result2, context=CONTEXT)
    assert first is not None
    assert second is not None
    data = serialize_verifier_input(first)
    assert data == serialize_verifier_input(second)
    assert data == serialize_verifier_input(first)
    parsed_back = contracts_pb2.VerifierInput()
    json_format.Parse(data.decode("utf-8"), parsed_back)
    assert parsed_back == first


@pytest.mark.requirement("R-GK-6")
def test_reject_ceiling_means_no_verifier_input() -> None:
    doc = mixed_doc()
    doc["diagnosis_summary"] = "it is the database"
    output, result = checked(doc)
    assert verdict_ceiling(result) == G.VERDICT_REJECT
    assert build_verifier_input(output=output, result=result, context=CONTEXT) is None


@pytest.mark.requirement("R-GK-6")
@pytest.mark.parametrize("severity", [G.GATEKEEPER_SEVERITY_UNSPECIFIED, 9])
def test_unknown_severity_means_no_verifier_input(severity: int) -> None:
    output, result = checked(mixed_doc())
    result.severity = severity  # type: ignore[assignment]
    assert build_verifier_input(output=output, result=result, context=CONTEXT) is None


@pytest.mark.requirement("R-GK-6")
def test_low_confid_with_zero_passed_bindings_means_no_verifier_input() -> None:
    output, result = checked(mixed_doc())
    for cb in result.checked_bindings:
        cb.passed = False
    assert result.severity == G.GATEKEEPER_SEVERITY_LOW_CONFID
    assert build_verifier_input(output=output, result=result, context=CONTEXT) is None


@pytest.mark.requirement("R-GK-7")
def test_pass_ceiling_builds_full_input() -> None:
    doc = mixed_doc()
    doc["claims"] = [doc["claims"][2]]
    output, result = checked(doc)
    verifier_input = build_verifier_input(output=output, result=result, context=CONTEXT)
    assert verifier_input is not None
    assert verifier_input.verdict_ceiling == G.VERDICT_PASS
    assert len(verifier_input.verified_evidence) == 1


def test_a_result_of_another_output_contributes_nothing() -> None:
    output, result = checked(mixed_doc())
    other = contracts_pb2.ExecutorEvidenceV2()
    other.CopyFrom(output)
    other.claims[0].evidence_bindings[0].matched_text = "upstream"  # altered after the check
    projected, evidence = verified_projection(other, result)
    assert ("c1", "/lines/0") not in {(e.claim_id, e.raw_path) for e in evidence}
    assert "/lines/0" not in [b.raw_path for c in projected.claims for b in c.evidence_bindings]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("source_invocation_id", "inv-2"),
        ("tool_name", "metrics"),
        ("raw_path", "/lines/1"),
        ("matched_text", "upstream"),
    ],
)
def test_a_passed_check_that_differs_from_its_binding_in_one_field_is_dropped_alone(field: str, value: str) -> None:
    """The first passed check no longer matches the output's binding (c1's first): that pair and that binding
    are left out, every later passed pair and binding is still projected (R-VI-1)."""
    output, result = checked(mixed_doc())
    setattr(result.checked_bindings[0], field, value)
    projected, evidence = verified_projection(output, result)
    assert [(e.claim_id, e.source_invocation_id, e.raw_path) for e in evidence] == [
        ("c1", "inv-2", "/p99_ms"),
        ("c3", "inv-2", "/error_rate"),
    ]
    assert [(c.claim_id, [b.raw_path for b in c.evidence_bindings]) for c in projected.claims] == [
        ("c1", ["/p99_ms"]),
        ("c3", ["/error_rate"]),
    ]


def test_claims_with_duplicate_ids_are_never_projected() -> None:
    output, result = checked(mixed_doc())
    output.claims[2].claim_id = "c1"
    projected, evidence = verified_projection(output, result)
    assert len(projected.claims) == 0
    assert evidence == []


@pytest.mark.requirement("R-P-4")
def test_projection_is_bounded_and_stays_consistent() -> None:
    output, result = checked(mixed_doc())
    projected, evidence = verified_projection(output, result, max_items=2)
    assert len(evidence) == 2
    kept = {(e.claim_id, e.source_invocation_id, e.raw_path) for e in evidence}
    in_claims = {
        (c.claim_id, s, b.raw_path)
        for c in projected.claims
        for b in c.evidence_bindings
        for s in b.source_invocation_ids
    }
    assert in_claims == kept
    assert MAX_VERIFIED_EVIDENCE == 200


def test_verified_projection_bound_defaults_to_max_verified_evidence() -> None:
    claims = [
        {
            "claim_id": f"c{n}",
            "statement": "s",
            "critical": False,
            "status": "confirmed",
            "evidence_bindings": [bind(["inv-2"], "metrics", "/p99_ms", "3012")],
        }
        for n in range(MAX_VERIFIED_EVIDENCE + 10)
    ]
    output, result = checked({"contract": "executor_evidence_v2", "claims": claims})
    projected, evidence = verified_projection(output, result)
    assert len(evidence) == MAX_VERIFIED_EVIDENCE
    assert len(projected.claims) == MAX_VERIFIED_EVIDENCE


# ---------------------------------------------------------------- properties

IDS = ["inv-1", "inv-2", "inv-x"]
PATHS = ["/lines/0", "/lines/1", "/p99_ms", "/error_rate", "/secret", "", "/nope", "x"]
TEXTS = ["upstream timeout", "UPSTREAM  timeout", "3012", "0.231", "retry", "UNREFERENCED", "zz", ""]
bindings = st.fixed_dictionaries(
    {
        "source_invocation_ids": st.lists(st.sampled_from(IDS), max_size=3),
        "tool_name": st.sampled_from(["logs", "metrics"]),
        "raw_path": st.sampled_from(PATHS),
        "matched_text": st.sampled_from(TEXTS),
    }
)
docs = st.fixed_dictionaries(
    {
        "contract": st.just("executor_evidence_v2"),
        "claims": st.lists(
            st.fixed_dictionaries(
                {
                    "claim_id": st.sampled_from(["c1", "c2", "c3", "c4", "c5"]),
                    "statement": st.just("s"),
                    "critical": st.booleans(),
                    "status": st.sampled_from(["confirmed", "hypothesis"]),
                    "evidence_bindings": st.lists(bindings, max_size=3),
                }
            ),
            max_size=5,
        ),
    }
)


@pytest.mark.requirement("R-VI-1")
@settings(max_examples=200, deadline=None)
@given(docs, st.integers(0, 12))
def test_builder_never_emits_a_failed_pair(doc: dict[str, Any], max_items: int) -> None:
    output, result = checked(doc)
    projected, evidence = verified_projection(output, result, max_items=max_items)
    assert len(evidence) <= max_items
    passed = {pair(cb) for cb in result.checked_bindings if cb.passed}
    for item in evidence:
        cb = result.checked_bindings[item.checked_binding_index]
        assert cb.passed
        assert not cb.failed_rules
        assert pair(cb) == pair(item)
    kept = {pair(e) for e in evidence}
    for claim in projected.claims:
        assert claim.evidence_bindings
        for binding in claim.evidence_bindings:
            assert binding.source_invocation_ids
            for sid in binding.source_invocation_ids:
                key = (claim.claim_id, sid, binding.tool_name, binding.raw_path, binding.matched_text)
                assert key in passed
                assert key in kept
    verifier_input = build_verifier_input(output=output, result=result, context=CONTEXT)
    if verifier_input is None:
        assert verdict_ceiling(result) == G.VERDICT_REJECT or not any(cb.passed for cb in result.checked_bindings)
    else:
        assert verifier_input.verdict_ceiling in (G.VERDICT_PASS, G.VERDICT_LOW_CONFID)
        again = build_verifier_input(output=output, result=result, context=CONTEXT)
        assert again is not None
        assert serialize_verifier_input(verifier_input) == serialize_verifier_input(again)
