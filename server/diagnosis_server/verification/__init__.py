"""Verification: the verified input, claim-classification ceilings, the Gatekeeper ceiling, effective verdict and
evidence-retry eligibility (pure, deterministic). The facts mapping (R-V-6) is ``protocols.facts``."""

from __future__ import annotations

from diagnosis_server.verification.verdict import (
    PASS_GROUNDEDNESS_THRESHOLD,
    claims_verdict,
    critical_valid_gaps,
    effective_verdict,
    evidence_retry_eligible,
    lowest_verdict,
    retry_context_for,
    valid_evidence_gaps,
    verdict_ceiling,
)

__all__ = [
    "PASS_GROUNDEDNESS_THRESHOLD",
    "claims_verdict",
    "critical_valid_gaps",
    "effective_verdict",
    "evidence_retry_eligible",
    "lowest_verdict",
    "retry_context_for",
    "valid_evidence_gaps",
    "verdict_ceiling",
]
