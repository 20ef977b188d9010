"""Builders of verified inputs, Verifier outputs and allowed material for composition tests."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from diagnosis.v1 import contracts_pb2
from diagnosis_server.composition.material import AllowedMaterial, allowed_material
from diagnosis_server.composition.suggestions import RecordedCall
from diagnosis_server.conversions import to_struct
from tests.support.verdicts import CONTRADICTED, DIRECT, EXTERNAL, INFERENCE, OVERSTATED, UNSUPPORTED

V = contracts_pb2.Verdict

QUESTION = "why is checkout-api returning 503s?"


@dataclass(frozen=True)
class Spec:
    """One verified claim: its classification by the (guarded) Verifier and the values it is bound to."""

    claim_id: str
    statement: str
    classification: int | None
    bindings: Sequence[tuple[str, str, str]] = (("inv-1", "/service", "checkout-api"),)
    hypothesis: bool = False
    critical: bool = True


def claim_pair(
    specs: Sequence[Spec], *, gaps: Sequence[contracts_pb2.EvidenceGap] = (), question: str = QUESTION
) -> tuple[contracts_pb2.VerifierInput, contracts_pb2.VerifierOutput]:
    verified = contracts_pb2.VerifiedExecutorOutput(contract="executor_evidence_v2")
    output = contracts_pb2.VerifierOutput(verdict=V.VERDICT_PASS, groundedness_score=0.9)
    evidence: list[contracts_pb2.VerifiedEvidence] = []
    for spec in specs:
        status = contracts_pb2.CLAIM_STATUS_HYPOTHESIS if spec.hypothesis else contracts_pb2.CLAIM_STATUS_CONFIRMED
        claim = verified.claims.add(
            claim_id=spec.claim_id, statement=spec.statement, critical=spec.critical, status=status
        )
        for invocation_id, path, text in spec.bindings:
            claim.evidence_bindings.add(
                source_invocation_ids=[invocation_id], tool_name="k8s.events", raw_path=path, matched_text=text
            )
            evidence.append(
                contracts_pb2.VerifiedEvidence(
                    claim_id=spec.claim_id,
                    source_invocation_id=invocation_id,
                    tool_name="k8s.events",
                    raw_path=path,
                    matched_text=text,
                )
            )
        if spec.classification is not None:
            output.claim_checks.add(claim_id=spec.claim_id, classification=spec.classification, critical=spec.critical)
    output.evidence_gaps.extend(gaps)
    verifier_input = contracts_pb2.VerifierInput(
        diagnosis_context=contracts_pb2.DiagnosisContext(question=question, scenario="checkout", cycle=1),
        verified_executor_output=verified,
        verified_evidence=evidence,
        verdict_ceiling=V.VERDICT_PASS,
    )
    return verifier_input, output


def call(tool: str, **arguments: object) -> contracts_pb2.SuggestedCall:
    return contracts_pb2.SuggestedCall(tool_name=tool, arguments=to_struct(dict(arguments)))  # type: ignore[arg-type]


def recorded(invocation_id: str, tool: str, **arguments: object) -> RecordedCall:
    return RecordedCall(invocation_id, tool, dict(arguments), None, contracts_pb2.TOOL_INVOCATION_STATUS_OK)  # type: ignore[arg-type]


@dataclass
class Built:
    verifier_input: contracts_pb2.VerifierInput
    verifier_output: contracts_pb2.VerifierOutput
    material: AllowedMaterial
    calls: list[RecordedCall] = field(default_factory=list)


def build(
    specs: Sequence[Spec],
    verdict: int,
    *,
    gaps: Sequence[contracts_pb2.EvidenceGap] = (),
    calls: Sequence[RecordedCall] = (),
    known: Sequence[str] = (),
    tools: Sequence[str] | None = None,
) -> Built:
    verifier_input, output = claim_pair(specs, gaps=gaps)
    material = allowed_material(
        verifier_input=verifier_input,
        verifier_output=output,
        effective=verdict,  # type: ignore[arg-type]
        recorded_calls=calls,
        known_values=known,
        tool_names=tools,
    )
    return Built(verifier_input, output, material, list(calls))


# A confirmed observation, a cause resting on it, a hypothesis, and one claim of each excluded class.
OOM = Spec(
    "c1",
    "checkout-api containers were OOMKilled",
    DIRECT,
    (("inv-1", "/events/0/reason", "OOMKilled"), ("inv-1", "/events/0/involvedObject/name", "checkout-api")),
)
ERRORS = Spec("c2", "checkout-api returns 503 to its callers", DIRECT, (("inv-2", "/lines/0/message", "status=503"),))
CAUSE = Spec(
    "c3",
    "checkout-api containers were OOMKilled, which explains the observed symptoms",
    INFERENCE,
    (("inv-1", "/events/0/reason", "OOMKilled"),),
)
HYPOTHESIS = Spec(
    "c4",
    "a deploy of checkout-api may be involved",
    DIRECT,
    (("inv-3", "/deploys/0/service", "checkout-api"),),
    hypothesis=True,
)
# An inference with no verified evidence item: it rests on nothing verified, so no verdict shows it (one on its own
# verified evidence is a possible direction under LOW_CONFID: test_material_inferences).
LONE_INFERENCE = Spec("c5", "vault-7Q fails, which explains the symptoms", INFERENCE, ())
OVERSTATED_CLAIM = Spec("c6", "checkout-api breaks for every tenant in zebra-region", OVERSTATED)
UNSUPPORTED_CLAIM = Spec("c7", "the orders-db disk is full", UNSUPPORTED)
EXTERNAL_CLAIM = Spec("c8", "the payment provider had an outage", EXTERNAL)
CONTRADICTED_CLAIM = Spec("c9", "no errors were logged by checkout-api", CONTRADICTED)
UNCHECKED = Spec("c10", "the ingress is misconfigured", None)
ALL = [
    OOM,
    ERRORS,
    CAUSE,
    HYPOTHESIS,
    LONE_INFERENCE,
    OVERSTATED_CLAIM,
    UNSUPPORTED_CLAIM,
    EXTERNAL_CLAIM,
    CONTRADICTED_CLAIM,
    UNCHECKED,
]
EXCLUDED = [LONE_INFERENCE, OVERSTATED_CLAIM, UNSUPPORTED_CLAIM, EXTERNAL_CLAIM, CONTRADICTED_CLAIM, UNCHECKED]
