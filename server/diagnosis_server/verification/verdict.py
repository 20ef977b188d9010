"""Effective verdict and evidence-retry eligibility, computed deterministically (R-V-1..4, R-V-7, R-R-4). Pure.

Verdicts are ordered REJECT < LOW_CONFID < PASS. The effective verdict is the lowest of the model's
verdict, the verdict the claim checks allow and the Gatekeeper ceiling; an unspecified or unknown
value anywhere gives REJECT (fail closed). No execution status string is ever a verdict.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from diagnosis.v1 import contracts_pb2

_V = contracts_pb2.Verdict
_C = contracts_pb2.ClaimClassification

PASS_GROUNDEDNESS_THRESHOLD = 0.5

_RANK: dict[contracts_pb2.Verdict.ValueType, int] = {
    _V.VERDICT_REJECT: 0,
    _V.VERDICT_LOW_CONFID: 1,
    _V.VERDICT_PASS: 2,
}
_BY_RANK = {rank: verdict for verdict, rank in _RANK.items()}
_CEILINGS: dict[contracts_pb2.GatekeeperSeverity.ValueType, contracts_pb2.Verdict.ValueType] = {
    contracts_pb2.GATEKEEPER_SEVERITY_PASS: _V.VERDICT_PASS,
    contracts_pb2.GATEKEEPER_SEVERITY_LOW_CONFID: _V.VERDICT_LOW_CONFID,
}

_KNOWN_CLASSIFICATIONS = frozenset(
    {
        _C.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION,
        _C.CLAIM_CLASSIFICATION_REASONABLE_INFERENCE,
        _C.CLAIM_CLASSIFICATION_OVERSTATED,
        _C.CLAIM_CLASSIFICATION_UNSUPPORTED,
        _C.CLAIM_CLASSIFICATION_EXTERNAL_UNKNOWN,
        _C.CLAIM_CLASSIFICATION_CONTRADICTED,
    }
)
_WEAK = frozenset(
    {
        _C.CLAIM_CLASSIFICATION_UNSUPPORTED,
        _C.CLAIM_CLASSIFICATION_EXTERNAL_UNKNOWN,
        _C.CLAIM_CLASSIFICATION_OVERSTATED,
    }
)


def verdict_ceiling(result: contracts_pb2.GatekeeperResult) -> contracts_pb2.Verdict.ValueType:
    """The Gatekeeper's normalized ceiling: PASS, LOW_CONFID, or REJECT for anything else (fail closed, R-GK-6)."""
    return _CEILINGS.get(result.severity, _V.VERDICT_REJECT)


def lowest_verdict(*verdicts: contracts_pb2.Verdict.ValueType) -> contracts_pb2.Verdict.ValueType:
    """The lowest of the verdicts; REJECT when any is unspecified or unknown, or none is given."""
    if not verdicts or any(v not in _RANK for v in verdicts):
        return _V.VERDICT_REJECT
    return _BY_RANK[min(_RANK[v] for v in verdicts)]


def claims_verdict(
    checks: Sequence[contracts_pb2.ClaimCheck], groundedness_score: float
) -> contracts_pb2.Verdict.ValueType:
    """The highest verdict the claim checks allow, judged over the critical checks.

    - any check with an unspecified or unknown classification: REJECT (fail closed);
    - a critical claim contradicted: REJECT (R-V-4);
    - a critical claim unsupported, external_unknown or overstated: LOW_CONFID (R-V-2);
    - critical claims all only reasonable_inference: LOW_CONFID (R-V-3);
    - PASS only when every critical claim is direct_observation or reasonable_inference, at least one is
      direct_observation and groundedness_score >= 0.5 (R-V-1); otherwise LOW_CONFID;
    - no critical check at all: LOW_CONFID (never PASS without a directly observed critical claim).
    """
    if any(check.classification not in _KNOWN_CLASSIFICATIONS for check in checks):
        return _V.VERDICT_REJECT
    critical = [check.classification for check in checks if check.critical]
    if not critical:
        return _V.VERDICT_LOW_CONFID
    if _C.CLAIM_CLASSIFICATION_CONTRADICTED in critical:
        return _V.VERDICT_REJECT
    if any(c in _WEAK for c in critical):
        return _V.VERDICT_LOW_CONFID
    if _C.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION not in critical:
        return _V.VERDICT_LOW_CONFID
    score = float(groundedness_score)
    if math.isnan(score) or score < PASS_GROUNDEDNESS_THRESHOLD or score > 1.0:
        return _V.VERDICT_LOW_CONFID
    return _V.VERDICT_PASS


def effective_verdict(
    *,
    model_verdict: contracts_pb2.Verdict.ValueType,
    checks: Sequence[contracts_pb2.ClaimCheck],
    groundedness_score: float,
    ceiling: contracts_pb2.Verdict.ValueType,
) -> contracts_pb2.Verdict.ValueType:
    """min(model verdict, claims verdict, ceiling); the ceiling is a hard upper bound (R-V-7)."""
    return lowest_verdict(model_verdict, claims_verdict(checks, groundedness_score), ceiling)


def valid_evidence_gaps(
    gaps: Sequence[contracts_pb2.EvidenceGap], verified_output: contracts_pb2.VerifiedExecutorOutput
) -> list[contracts_pb2.EvidenceGap]:
    """The gaps with a non-blank description whose claim_id, if given, names a verified claim."""
    claim_ids = {claim.claim_id for claim in verified_output.claims}
    return [gap for gap in gaps if gap.description.strip() and (not gap.claim_id or gap.claim_id in claim_ids)]


def critical_valid_gaps(
    gaps: Sequence[contracts_pb2.EvidenceGap], verified_output: contracts_pb2.VerifiedExecutorOutput
) -> list[contracts_pb2.EvidenceGap]:
    return [gap for gap in valid_evidence_gaps(gaps, verified_output) if gap.critical]


def evidence_retry_eligible(
    *,
    effective: contracts_pb2.Verdict.ValueType,
    ceiling: contracts_pb2.Verdict.ValueType,
    gaps: Sequence[contracts_pb2.EvidenceGap],
    verified_output: contracts_pb2.VerifiedExecutorOutput,
    evidence_retry_count: int,
) -> bool:
    """R-R-4: effective LOW_CONFID, ceiling PASS, a critical valid gap, no evidence retry yet.

    No groundedness threshold and no flag takes part.
    """
    return (
        effective == _V.VERDICT_LOW_CONFID
        and ceiling == _V.VERDICT_PASS
        and evidence_retry_count == 0
        and bool(critical_valid_gaps(gaps, verified_output))
    )


def retry_context_for(
    gaps: Sequence[contracts_pb2.EvidenceGap],
    verified_output: contracts_pb2.VerifiedExecutorOutput,
    *,
    evidence_retry_count: int,
) -> contracts_pb2.RetryContext:
    """What an EVIDENCE_GAP_ONLY cycle asks for: only the critical valid gaps, with the given retry count."""
    context = contracts_pb2.RetryContext(evidence_retry_count=evidence_retry_count)
    for gap in critical_valid_gaps(gaps, verified_output):
        context.evidence_gaps.add().CopyFrom(gap)
    return context
