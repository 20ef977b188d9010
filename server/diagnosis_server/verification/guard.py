"""The guarded Verifier: a model can never raise a classification above what the evidence shows.

After the model's claim checks are parsed, the deterministic derivability checker runs on the same
verified evidence; a claim the model calls direct_observation whose matched text does not contain its
concrete facts is downgraded to reasonable_inference, and the downgrade is recorded.
"""

from __future__ import annotations

from diagnosis.v1 import contracts_pb2
from diagnosis_server.verification.derivability import derive_claim
from diagnosis_server.verification.facts import derive_facts_checked

C = contracts_pb2.ClaimClassification
GUARD_SOURCE = "guard"


def guard_claim_checks(
    output: contracts_pb2.VerifierOutput, verifier_input: contracts_pb2.VerifierInput
) -> contracts_pb2.VerifierOutput:
    """A copy of ``output`` with unfounded direct observations downgraded (each change recorded)."""
    claims = {claim.claim_id: claim for claim in verifier_input.verified_executor_output.claims}
    guarded = contracts_pb2.VerifierOutput()
    guarded.CopyFrom(output)
    changed = False
    for check in guarded.claim_checks:
        claim = claims.get(check.claim_id)
        if claim is None or check.classification != C.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION:
            continue
        derivation = derive_claim(claim, verifier_input.verified_evidence)
        if derivation.classification == C.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION:
            continue
        check.classification = C.CLAIM_CLASSIFICATION_REASONABLE_INFERENCE
        guarded.classification_changes.append(
            contracts_pb2.ClassificationChange(
                claim_id=check.claim_id,
                from_classification=C.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION,
                to_classification=C.CLAIM_CLASSIFICATION_REASONABLE_INFERENCE,
                reason=f"matched text lacks the claim's concrete facts: {derivation.reason()}"[:300],
                source=GUARD_SOURCE,
            )
        )
        changed = True
    if changed:
        # facts_checked follows the guarded classifications (R-V-6).
        del guarded.facts_checked[:]
        guarded.facts_checked.extend(derive_facts_checked(guarded.claim_checks, list(claims.values())))
    return guarded
