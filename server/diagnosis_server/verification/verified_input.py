"""The verified-input builder: exactly what the Verifier may see (R-C-4, R-C-5, R-VI-1..4).

Only claims with a passed checked binding reach the Verifier, each with only its passed bindings,
and within a binding only the source invocation ids whose pair passed (R-VI-1, R-GK-7). Nothing of a
failed pair, no unreferenced tool material, no reasoning and no raw Executor text is ever copied
(R-VI-2). The raw Gatekeeper audit and the normalized ceiling travel separately (R-VI-3), and the
serialized input is canonical: the same inputs give byte-identical bytes for a technical retry (R-VI-4).
"""

from __future__ import annotations

from collections import Counter

from diagnosis.v1 import contracts_pb2
from diagnosis_server.conversions import canonical_bytes
from diagnosis_server.verification.verdict import verdict_ceiling

MAX_VERIFIED_EVIDENCE = 200

_BindingKey = tuple[str, int]  # (claim_id, binding_index)


def verified_projection(
    output: contracts_pb2.ExecutorEvidenceV2,
    result: contracts_pb2.GatekeeperResult,
    *,
    max_items: int = MAX_VERIFIED_EVIDENCE,
) -> tuple[contracts_pb2.VerifiedExecutorOutput, list[contracts_pb2.VerifiedEvidence]]:
    """The executor output reduced to passed pairs, and one verified evidence item per passed pair.

    A passed checked binding is used only when it matches the output's binding field by field (so a
    result of another output contributes nothing); claims whose id is not unique are left out, since
    evidence for them could not be traced to one claim. At most ``max_items`` items are kept (the first
    ones, in check order), and the projected claims hold exactly the kept items' pairs.
    """
    counts = Counter(claim.claim_id for claim in output.claims)
    bindings: dict[_BindingKey, contracts_pb2.EvidenceBinding] = {}
    for claim in output.claims:
        if counts[claim.claim_id] == 1:
            for binding_index, binding in enumerate(claim.evidence_bindings):
                bindings[(claim.claim_id, binding_index)] = binding

    evidence: list[contracts_pb2.VerifiedEvidence] = []
    kept: dict[_BindingKey, set[str]] = {}
    for checked_index, checked in enumerate(result.checked_bindings):
        if len(evidence) >= max_items:
            break
        if not checked.passed or checked.failed_rules:
            continue
        key = (checked.claim_id, checked.binding_index)
        source = bindings.get(key)
        if (
            source is None
            or checked.source_invocation_id not in source.source_invocation_ids
            or checked.tool_name != source.tool_name
            or checked.raw_path != source.raw_path
            or checked.matched_text != source.matched_text
        ):
            continue
        evidence.append(
            contracts_pb2.VerifiedEvidence(
                claim_id=checked.claim_id,
                source_invocation_id=checked.source_invocation_id,
                tool_name=checked.tool_name,
                raw_path=checked.raw_path,
                matched_text=checked.matched_text,
                checked_binding_index=checked_index,
            )
        )
        kept.setdefault(key, set()).add(checked.source_invocation_id)

    projected = contracts_pb2.VerifiedExecutorOutput(contract=output.contract)
    for claim in output.claims:
        kept_bindings: list[contracts_pb2.EvidenceBinding] = []
        for binding_index, binding in enumerate(claim.evidence_bindings):
            passed_ids = kept.get((claim.claim_id, binding_index))
            if passed_ids is None or counts[claim.claim_id] != 1:
                continue
            kept_bindings.append(
                contracts_pb2.EvidenceBinding(
                    source_invocation_ids=[sid for sid in binding.source_invocation_ids if sid in passed_ids],
                    tool_name=binding.tool_name,
                    raw_path=binding.raw_path,
                    matched_text=binding.matched_text,
                )
            )
        if kept_bindings:
            projected.claims.add(
                claim_id=claim.claim_id,
                statement=claim.statement,
                critical=claim.critical,
                status=claim.status,
                evidence_bindings=kept_bindings,
            )
    projected.evidence_gaps.extend(output.evidence_gaps)
    return projected, evidence


def build_verifier_input(
    *,
    output: contracts_pb2.ExecutorEvidenceV2,
    result: contracts_pb2.GatekeeperResult,
    context: contracts_pb2.DiagnosisContext,
    retry_context: contracts_pb2.RetryContext | None = None,
) -> contracts_pb2.VerifierInput | None:
    """The Verifier's whole input, or None when the run must fall back before verification (R-GK-6).

    None when the normalized ceiling is REJECT (REJECT, unknown or unspecified severity) or when no
    pair passed; otherwise the input holds exactly the R-C-4 blocks, ``retry_context`` only when given.
    """
    ceiling = verdict_ceiling(result)
    if ceiling == contracts_pb2.VERDICT_REJECT:
        return None
    projected, evidence = verified_projection(output, result)
    if not evidence:
        return None
    verifier_input = contracts_pb2.VerifierInput(
        diagnosis_context=context,
        verified_executor_output=projected,
        verified_evidence=evidence,
        gatekeeper_audit=result,
        verdict_ceiling=ceiling,
    )
    if retry_context is not None:
        verifier_input.retry_context.CopyFrom(retry_context)
    return verifier_input


def serialize_verifier_input(verifier_input: contracts_pb2.VerifierInput) -> bytes:
    """The canonical bytes of a Verifier input: same input -> same bytes (R-VI-4)."""
    return canonical_bytes(verifier_input)
