"""Compatibility ``facts_checked``, derived from claim checks (R-V-6). Pure.

Beside the parsers: the Verifier parser holds a reply's facts to it, and ``verification`` derives them again
after its ceilings lower a classification.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType

from diagnosis.v1 import contracts_pb2

_C = contracts_pb2.ClaimClassification
_F = contracts_pb2.FactSupport

FACT_SUPPORT_BY_CLASSIFICATION: Mapping[
    contracts_pb2.ClaimClassification.ValueType, contracts_pb2.FactSupport.ValueType
] = MappingProxyType(
    {
        _C.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION: _F.FACT_SUPPORT_DIRECT_EVIDENCE,
        _C.CLAIM_CLASSIFICATION_REASONABLE_INFERENCE: _F.FACT_SUPPORT_INDIRECT_SUPPORT,
        _C.CLAIM_CLASSIFICATION_OVERSTATED: _F.FACT_SUPPORT_INDIRECT_SUPPORT,
        _C.CLAIM_CLASSIFICATION_UNSUPPORTED: _F.FACT_SUPPORT_NO_EVIDENCE,
        _C.CLAIM_CLASSIFICATION_EXTERNAL_UNKNOWN: _F.FACT_SUPPORT_NO_EVIDENCE,
        _C.CLAIM_CLASSIFICATION_CONTRADICTED: _F.FACT_SUPPORT_CONTRADICTED,
    }
)


def fact_support_for(
    classification: contracts_pb2.ClaimClassification.ValueType,
) -> contracts_pb2.FactSupport.ValueType:
    """The fact support a classification maps to; an unknown or unspecified one claims no evidence (fail closed)."""
    return FACT_SUPPORT_BY_CLASSIFICATION.get(classification, _F.FACT_SUPPORT_NO_EVIDENCE)


def derive_facts_checked(
    checks: Sequence[contracts_pb2.ClaimCheck], claims: Sequence[contracts_pb2.Claim]
) -> list[contracts_pb2.FactCheck]:
    """One fact a check, in check order: the claim's statement with the support its classification maps to.

    A check whose claim is not among ``claims`` has no statement to state and gives no fact.
    """
    statements: dict[str, str] = {}
    for claim in claims:
        statements.setdefault(claim.claim_id, claim.statement)
    facts: list[contracts_pb2.FactCheck] = []
    for check in checks:
        if check.claim_id not in statements:
            continue
        facts.append(
            contracts_pb2.FactCheck(
                claim_id=check.claim_id,
                fact=statements[check.claim_id],
                support=fact_support_for(check.classification),
            )
        )
    return facts
