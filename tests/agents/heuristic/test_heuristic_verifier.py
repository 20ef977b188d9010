"""The heuristic Verifier: derivability classification, groundedness and verdict (R-V-1..R-V-6, R-R-4)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import pytest

from diagnosis.v1 import contracts_pb2 as c
from diagnosis_server.agents.base import AgentNonRetryableError
from diagnosis_server.agents.heuristic import create_provider, verify
from diagnosis_server.protocols.verifier import parse_verifier_output
from diagnosis_server.verification.verdict import effective_verdict, evidence_retry_eligible
from diagnosis_server.verification.verified_input import serialize_verifier_input

from ._support import request

OOM = "checkout-api containers were OOMKilled (exit code 137)"


def _input(
    claims: list[tuple[str, str, bool, list[str]]],
    *,
    gaps: list[c.EvidenceGap] | None = None,
    ceiling: int = c.VERDICT_PASS,
    failed: tuple[str, ...] = (),
) -> c.VerifierInput:
    """(claim id, statement, critical, matched texts) -> a verified input; ``failed`` claims had a failed binding."""
    verifier_input = c.VerifierInput(
        diagnosis_context=c.DiagnosisContext(question="why?", scenario="s", cycle=1),
        verdict_ceiling=ceiling,  # type: ignore[arg-type]
    )
    output = verifier_input.verified_executor_output
    output.contract = "executor_evidence_v2"
    audit = verifier_input.gatekeeper_audit
    for claim_id, statement, critical, texts in claims:
        claim = output.claims.add(
            claim_id=claim_id, statement=statement, critical=critical, status=c.CLAIM_STATUS_CONFIRMED
        )
        for index, text in enumerate(texts):
            path = f"/events/{index}/message"
            claim.evidence_bindings.add(
                source_invocation_ids=[f"inv-{claim_id}"], tool_name="k8s.events", raw_path=path, matched_text=text
            )
            audit.checked_bindings.add(
                claim_id=claim_id,
                binding_index=index,
                source_invocation_id=f"inv-{claim_id}",
                tool_name="k8s.events",
                raw_path=path,
                matched_text=text,
                passed=True,
            )
            verifier_input.verified_evidence.add(
                claim_id=claim_id,
                source_invocation_id=f"inv-{claim_id}",
                tool_name="k8s.events",
                raw_path=path,
                matched_text=text,
                checked_binding_index=len(audit.checked_bindings) - 1,
            )
        if claim_id in failed:
            audit.checked_bindings.add(
                claim_id=claim_id,
                binding_index=len(texts),
                source_invocation_id="inv-x",
                tool_name="k8s.events",
                raw_path="/x",
                matched_text="y",
                passed=False,
                failed_rules=["evidence.matched_text"],
            )
    output.evidence_gaps.extend(gaps or [])
    return verifier_input


def _checks(result: Mapping[str, Any]) -> dict[str, str]:
    checks = result["claim_checks"]
    assert isinstance(checks, list)
    return {check["claim_id"]: check["classification"] for check in checks}


@pytest.mark.requirement("R-V-1")
def test_all_critical_claims_directly_observed_is_pass() -> None:
    vi = _input(
        [
            ("c1", OOM, True, ["Container checkout-api was OOMKilled (exit code 137)"]),
            ("c2", "checkout-api error rate peaked at 0.2457", False, ["checkout-api", "0.2457"]),
        ]
    )
    result = verify(vi)
    assert _checks(result) == {"c1": "direct_observation", "c2": "direct_observation"}
    assert (result["verdict"], result["groundedness_score"]) == ("PASS", 1.0)
    parsed = parse_verifier_output(json.dumps(result), vi)
    assert parsed.ok and parsed.output is not None and not parsed.output.warnings
    assert [len(check.evidence_refs) for check in parsed.output.claim_checks] == [1, 2]
    assert (
        effective_verdict(
            model_verdict=parsed.output.verdict,
            checks=parsed.output.claim_checks,
            groundedness_score=parsed.output.groundedness_score,
            ceiling=vi.verdict_ceiling,
        )
        == c.VERDICT_PASS
    )


@pytest.mark.requirement("R-V-4")
def test_a_fact_missing_from_the_evidence_is_fabricated_and_rejects() -> None:
    # (exit code 139 is a segfault's: no signal its evidence names gives it)
    vi = _input([("c1", OOM.replace("137", "139"), True, ["OOMKilled", "checkout-api"])])
    result = verify(vi)
    assert _checks(result) == {"c1": "contradicted"}
    assert result["verdict"] == "REJECT" and result["groundedness_score"] == 0.0
    gaps: Any = result["evidence_gaps"]
    (gap,) = gaps
    assert gap["claim_id"] == "c1" and gap["critical"] and OOM not in gap["description"]


@pytest.mark.requirement("R-V-3")
def test_a_conclusion_from_its_evidence_is_an_inference_and_low_confid() -> None:
    vi = _input([("c1", "checkout-api was OOMKilled, which caused the errors", True, ["OOMKilled", "checkout-api"])])
    result = verify(vi)
    assert _checks(result) == {"c1": "reasonable_inference"}
    assert result["verdict"] == "LOW_CONFID" and result["groundedness_score"] == 0.0
    assert result["evidence_gaps"] == []  # an inference is shown as inferred; it asks for no gap of its own


@pytest.mark.requirement("R-V-4")
def test_a_conflicting_fact_is_contradicted_and_rejects() -> None:
    vi = _input([("c1", "checkout-api pods status=Running", True, ["pod checkout-api-1 status=CrashLoopBackOff"])])
    result = verify(vi)
    assert _checks(result) == {"c1": "contradicted"}
    assert result["verdict"] == "REJECT"


@pytest.mark.requirement("R-V-5")
def test_a_claim_whose_binding_failed_is_never_more_than_unsupported() -> None:
    vi = _input(
        [("c1", OOM, True, ["checkout-api"]), ("c2", "checkout-api restarted", True, ["checkout-api"])],
        failed=("c1", "c2"),
    )
    result = verify(vi)
    # c1's facts are missing from its passed evidence (fabricated); c2's are all there, but a binding failed.
    assert _checks(result) == {"c1": "contradicted", "c2": "unsupported"}
    assert result["verdict"] == "REJECT"


@pytest.mark.requirement("R-R-4")
def test_a_critical_executor_gap_lowers_pass_and_is_passed_on_verbatim() -> None:
    description = "the cause is not established (next: k8s.events service=warehouse-gateway)"
    gap = c.EvidenceGap(description=description, critical=True)
    vi = _input([("c1", OOM, True, ["Container checkout-api was OOMKilled (exit code 137)"])], gaps=[gap])
    result = verify(vi)
    assert result["verdict"] == "LOW_CONFID" and result["groundedness_score"] == 1.0
    assert result["evidence_gaps"] == [{"description": description, "critical": True}]
    parsed = parse_verifier_output(json.dumps(result), vi)
    assert parsed.output is not None
    effective = effective_verdict(
        model_verdict=parsed.output.verdict,
        checks=parsed.output.claim_checks,
        groundedness_score=1.0,
        ceiling=c.VERDICT_PASS,
    )
    assert evidence_retry_eligible(
        effective=effective,
        ceiling=c.VERDICT_PASS,
        gaps=parsed.output.evidence_gaps,
        verified_output=vi.verified_executor_output,
        evidence_retry_count=0,
    )


@pytest.mark.requirement("R-V-1")
def test_no_critical_claim_scores_zero_and_never_passes() -> None:
    result = verify(_input([("c1", OOM, False, ["Container checkout-api was OOMKilled (exit code 137)"])]))
    assert result["groundedness_score"] == 0.0 and result["verdict"] == "LOW_CONFID"


@pytest.mark.requirement("R-V-7")
def test_never_above_the_ceiling() -> None:
    vi = _input(
        [("c1", OOM, True, ["Container checkout-api was OOMKilled (exit code 137)"])], ceiling=c.VERDICT_LOW_CONFID
    )
    assert verify(vi)["verdict"] == "LOW_CONFID"


async def test_the_agent_reads_the_canonical_input_bytes_and_refuses_garbage() -> None:
    verifier = create_provider().agent("verifier")
    vi = _input([("c1", OOM, True, ["Container checkout-api was OOMKilled (exit code 137)"])])
    base = request("verifier", {})
    reply = await verifier.run(replace(base, input_bytes=serialize_verifier_input(vi)))
    assert json.loads(reply.text)["verdict"] == "PASS"
    with pytest.raises(AgentNonRetryableError):
        await verifier.run(replace(base, input_bytes=b'{"no_such_field": 1}'))
