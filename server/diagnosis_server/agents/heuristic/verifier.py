"""The heuristic Verifier: a deterministic derivability check of each verified claim (R-V-1..R-V-6).

Each claim is classified by the guard's own ceiling (``verification.classification_ceiling.Ceilings``: derivability
against its own verified evidence, failed bindings, instruction-like evidence), so the embedded Verifier
and the guard beside every other Verifier agree; its evidence refs are exactly those items.
``groundedness_score`` is the share of critical claims that are direct observations (0.0 without a
critical claim). The verdict is ``claims_verdict``, REJECT when a critical claim fabricates a fact (R-V-4), lowered
to LOW_CONFID while the verified output carries a critical executor evidence gap, and never above the
ceiling. The Executor's gaps are passed on with their structured ``next_calls``; a critical claim that is
neither observed nor inferred adds a critical gap of its own, which names the claim but not its content.
"""

from __future__ import annotations

import json
from typing import Any, cast

from google.protobuf import json_format

from diagnosis.v1 import contracts_pb2
from diagnosis_server.agents.base import AgentNonRetryableError, AgentReply, AgentRequest
from diagnosis_server.conversions import EnumType, JsonObject, JsonValue, enum_short_name, message_to_dict
from diagnosis_server.offload import off_loop
from diagnosis_server.verification.classification_ceiling import Ceilings
from diagnosis_server.verification.verdict import claims_verdict, lowest_verdict

MODEL = "heuristic"
_C = contracts_pb2.ClaimClassification
_CLASSIFICATION: EnumType = cast(Any, contracts_pb2.ClaimClassification)
_VERDICT: EnumType = cast(Any, contracts_pb2.Verdict)
# Classifications an answer can show: a critical claim with another one asks for evidence of its own.
_SHOWN = frozenset({_C.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION, _C.CLAIM_CLASSIFICATION_REASONABLE_INFERENCE})


def parse_verifier_input(raw: bytes) -> contracts_pb2.VerifierInput:
    message = contracts_pb2.VerifierInput()
    try:
        json_format.Parse(raw.decode("utf-8"), message)
    except (UnicodeDecodeError, json_format.ParseError) as exc:
        raise AgentNonRetryableError(f"the verifier input is not a VerifierInput: {exc}") from None
    return message


def verify(verifier_input: contracts_pb2.VerifierInput) -> JsonObject:
    """The pinned verifier JSON for one verified input."""
    evidence: dict[str, list[contracts_pb2.VerifiedEvidence]] = {}
    for item in verifier_input.verified_evidence:
        evidence.setdefault(item.claim_id, []).append(item)
    checks: list[contracts_pb2.ClaimCheck] = []
    gaps: list[JsonValue] = []
    checks_json: list[JsonValue] = []
    seen: set[str] = set()
    fabricated = False
    ceilings = Ceilings(verifier_input)
    for claim in verifier_input.verified_executor_output.claims:
        if claim.claim_id in seen:
            continue
        seen.add(claim.claim_id)
        items = evidence.get(claim.claim_id, [])
        bound = ceilings.of(claim)
        classification, reason = bound.classification, bound.reason
        fabricated = fabricated or (claim.critical and bound.fabricated)  # R-V-4: critical claims only
        check = contracts_pb2.ClaimCheck(
            claim_id=claim.claim_id,
            classification=classification,  # type: ignore[arg-type]
            critical=claim.critical,
        )
        checks.append(check)
        refs: list[JsonValue] = [
            {
                "claim_id": item.claim_id,
                "source_invocation_id": item.source_invocation_id,
                "tool_name": item.tool_name,
                "raw_path": item.raw_path,
            }
            for item in items
        ]
        short = enum_short_name(_CLASSIFICATION, classification, lower=True)
        checks_json.append(
            {
                "claim_id": claim.claim_id,
                "classification": short,
                "critical": claim.critical,
                "evidence_refs": refs,
                "rationale": reason[:500],
            }
        )
        if claim.critical and classification not in _SHOWN:
            # The description names the claim, never its content: an unverified claim stays out of the answer.
            gaps.append(
                {
                    "claim_id": claim.claim_id,
                    "description": f"Critical claim {claim.claim_id} is {short} by its verified evidence; "
                    "it needs evidence that shows it directly",
                    "critical": True,
                }
            )
    critical = [c for c in checks if c.critical]
    direct = [c for c in critical if c.classification == _C.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION]
    score = round(len(direct) / len(critical), 4) if critical else 0.0
    verdict = claims_verdict(checks, score)
    if fabricated:
        verdict = contracts_pb2.VERDICT_REJECT
    executor_gaps = list(verifier_input.verified_executor_output.evidence_gaps)
    open_critical = [gap for gap in executor_gaps if gap.critical and gap.description.strip()]
    if open_critical:
        verdict = lowest_verdict(verdict, contracts_pb2.VERDICT_LOW_CONFID)
    ceiling = verifier_input.verdict_ceiling
    if ceiling in (contracts_pb2.VERDICT_PASS, contracts_pb2.VERDICT_LOW_CONFID, contracts_pb2.VERDICT_REJECT):
        verdict = lowest_verdict(verdict, ceiling)
    passed_on: list[JsonValue] = []
    for gap in executor_gaps:
        if gap.description:
            gap_json: JsonObject = {"description": gap.description, "critical": gap.critical}
            if gap.next_calls:
                gap_json["next_calls"] = [message_to_dict(call) for call in gap.next_calls]
            passed_on.append(gap_json)
    gaps = passed_on + gaps
    verdict_name = enum_short_name(_VERDICT, verdict)
    rationale = (
        f"{len(direct)} of {len(critical)} critical claim(s) directly observed in their verified evidence; "
        f"{len(open_critical)} critical evidence gap(s) open; verdict {verdict_name}"
    )
    return {
        "claim_checks": checks_json,
        "verdict": verdict_name,
        "groundedness_score": score,
        "rationale": rationale,
        "evidence_gaps": gaps,
    }


class HeuristicVerifier:
    async def run(self, request: AgentRequest) -> AgentReply:
        return await off_loop(verify_reply, request.input_message, request.input_bytes)  # CPU work: off the loop


def verify_reply(given: object, input_bytes: bytes) -> AgentReply:
    """The Verifier's reply to its input: the message it was given, else the one its bytes hold."""
    verifier_input = given if isinstance(given, contracts_pb2.VerifierInput) else parse_verifier_input(input_bytes)
    return AgentReply(text=json.dumps(verify(verifier_input), ensure_ascii=False), model=MODEL)
