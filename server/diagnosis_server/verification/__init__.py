"""Verification: facts mapping, effective verdict and evidence-retry eligibility (pure, deterministic)."""

from __future__ import annotations

from diagnosis_server.verification.facts import (
    FACT_SUPPORT_BY_CLASSIFICATION,
    derive_facts_checked,
    fact_support_for,
)
from diagnosis_server.verification.verdict import (
    PASS_GROUNDEDNESS_THRESHOLD,
    claims_verdict,
    critical_valid_gaps,
    effective_verdict,
    evidence_retry_eligible,
    lowest_verdict,
    retry_context_for,
    valid_evidence_gaps,
)

__all__ = [
    "FACT_SUPPORT_BY_CLASSIFICATION",
    "PASS_GROUNDEDNESS_THRESHOLD",
    "claims_verdict",
    "critical_valid_gaps",
    "derive_facts_checked",
    "effective_verdict",
    "evidence_retry_eligible",
    "fact_support_for",
    "lowest_verdict",
    "retry_context_for",
    "valid_evidence_gaps",
]
