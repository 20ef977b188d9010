"""The Verifier-allowed material: the only claims and gaps a user-facing answer may use (R-R-3, R-A-1..3).

Statements come only from ``verifier_input.verified_executor_output`` (never raw Executor output);
classifications from the Verifier's claim checks; gaps only from the Verifier's valid gaps.

| effective verdict | confirmed facts may cite              | possible directions may cite          |
| ----------------- | ------------------------------------- | ------------------------------------- |
| PASS              | direct_observation, reasonable_inf.   | overstated                            |
| LOW_CONFID        | direct_observation                    | reasonable_inference, overstated      |
| REJECT            | direct_observation                    | nothing (no root-cause conclusion)    |

contradicted, unsupported and external_unknown claims, and claims without a check, are never cited.
An unspecified or unknown effective verdict is treated as REJECT (fail closed).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import Any, cast

from diagnosis.v1 import contracts_pb2
from diagnosis_server.conversions import EnumType, JsonObject, JsonValue, enum_short_name
from diagnosis_server.verification.verdict import valid_evidence_gaps

_C = contracts_pb2.ClaimClassification
_V = contracts_pb2.Verdict

# The generated enum wrapper as conversions.EnumType (cast through Any: its Name() takes ValueType).
_VERDICT_ENUM: EnumType = cast(Any, contracts_pb2.Verdict)

_REDACTED = "[an unverified claim]"

_CONFIRMABLE = {
    _V.VERDICT_PASS: frozenset(
        {_C.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION, _C.CLAIM_CLASSIFICATION_REASONABLE_INFERENCE}
    ),
    _V.VERDICT_LOW_CONFID: frozenset({_C.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION}),
    _V.VERDICT_REJECT: frozenset({_C.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION}),
}
_DIRECTIONS = {
    _V.VERDICT_PASS: frozenset({_C.CLAIM_CLASSIFICATION_OVERSTATED}),
    _V.VERDICT_LOW_CONFID: frozenset(
        {_C.CLAIM_CLASSIFICATION_REASONABLE_INFERENCE, _C.CLAIM_CLASSIFICATION_OVERSTATED}
    ),
    _V.VERDICT_REJECT: frozenset[contracts_pb2.ClaimClassification.ValueType](),
}


@dataclass(frozen=True, slots=True)
class MaterialClaim:
    claim_id: str
    statement: str
    classification: contracts_pb2.ClaimClassification.ValueType


@dataclass(frozen=True, slots=True)
class AllowedMaterial:
    verdict: contracts_pb2.Verdict.ValueType
    question: str
    # May be cited as confirmed facts.
    confirmable: tuple[MaterialClaim, ...]
    # May be cited as possible directions.
    directions: tuple[MaterialClaim, ...]
    # Only the Verifier's valid gaps.
    evidence_gaps: tuple[contracts_pb2.EvidenceGap, ...]

    def to_json(self) -> JsonObject:
        """The Composer's input projection."""
        gaps: list[JsonValue] = [
            {"claim_id": gap.claim_id, "description": gap.description, "critical": gap.critical}
            for gap in self.evidence_gaps
        ]
        return {
            "verdict": enum_short_name(_VERDICT_ENUM, self.verdict),
            "question": self.question,
            "confirmed_facts": [{"claim_id": c.claim_id, "statement": c.statement} for c in self.confirmable],
            "possible_directions": [{"claim_id": c.claim_id, "statement": c.statement} for c in self.directions],
            "evidence_gaps": gaps,
        }

    def allowed_claim_ids(self) -> frozenset[str]:
        """Claims the answer may cite and state: the confirmable and the direction claims."""
        return frozenset(c.claim_id for c in (*self.confirmable, *self.directions))

    def gap_claim_ids(self) -> frozenset[str]:
        """Claims the Verifier's gaps name; an answer may name them beside a gap or next step, never state them."""
        return frozenset(gap.claim_id for gap in self.evidence_gaps if gap.claim_id)

    def allowed_statements(self) -> tuple[str, ...]:
        return tuple(c.statement for c in (*self.confirmable, *self.directions))


def mentions(text: str, statement: str, *, covering: Iterable[str] = ()) -> bool:
    """Whether ``text`` holds ``statement`` verbatim (case-insensitive).

    An occurrence that lies inside an occurrence of a ``covering`` statement containing it (an allowed
    statement that says the same and more) does not count. A blank statement is never mentioned.
    """
    needle = statement.strip().casefold()
    if not needle:
        return False
    haystack = text.casefold()
    for cover in covering:
        folded = cover.strip().casefold()
        if folded and needle in folded:
            haystack = haystack.replace(folded, "\x00")
    return needle in haystack


def mentions_any(text: str, statements: Iterable[str], *, covering: Collection[str] = ()) -> bool:
    return any(mentions(text, statement, covering=covering) for statement in statements)


def normalized_verdict(verdict: contracts_pb2.Verdict.ValueType) -> contracts_pb2.Verdict.ValueType:
    """PASS, LOW_CONFID or REJECT as given; anything else is REJECT (fail closed)."""
    return verdict if verdict in _CONFIRMABLE else _V.VERDICT_REJECT


def _classifications(
    verifier_output: contracts_pb2.VerifierOutput,
) -> dict[str, contracts_pb2.ClaimClassification.ValueType]:
    out: dict[str, contracts_pb2.ClaimClassification.ValueType] = {}
    for check in verifier_output.claim_checks:
        out.setdefault(check.claim_id, check.classification)
    return out


def _safe_gap(
    gap: contracts_pb2.EvidenceGap, excluded: Collection[str], allowed: Collection[str]
) -> contracts_pb2.EvidenceGap | None:
    """The gap with any excluded statement it quotes redacted; None when it cannot be made safe."""
    if not mentions_any(gap.description, excluded, covering=allowed):
        return gap
    description = gap.description
    for statement in excluded:
        if statement.strip():
            description = re.sub(re.escape(statement.strip()), _REDACTED, description, flags=re.IGNORECASE)
    if mentions_any(description, excluded, covering=allowed):
        return None
    return contracts_pb2.EvidenceGap(claim_id=gap.claim_id, description=description, critical=gap.critical)


def allowed_material(
    *,
    verifier_input: contracts_pb2.VerifierInput,
    verifier_output: contracts_pb2.VerifierOutput,
    effective: contracts_pb2.Verdict.ValueType,
) -> AllowedMaterial:
    """What the Verifier allows an answer under the effective verdict to cite (see the module table)."""
    verdict = normalized_verdict(effective)
    classifications = _classifications(verifier_output)
    confirmable: list[MaterialClaim] = []
    directions: list[MaterialClaim] = []
    excluded: list[str] = []
    seen: set[str] = set()
    for claim in verifier_input.verified_executor_output.claims:
        if claim.claim_id in seen:
            # A repeated claim id is never material; its statement must not appear either.
            excluded.append(claim.statement)
            continue
        seen.add(claim.claim_id)
        classification = classifications.get(claim.claim_id, _C.CLAIM_CLASSIFICATION_UNSPECIFIED)
        item = MaterialClaim(claim_id=claim.claim_id, statement=claim.statement, classification=classification)
        if classification in _CONFIRMABLE[verdict]:
            confirmable.append(item)
        elif classification in _DIRECTIONS[verdict]:
            directions.append(item)
        else:
            excluded.append(claim.statement)
    allowed = [c.statement for c in (*confirmable, *directions)]
    gaps: list[contracts_pb2.EvidenceGap] = []
    for gap in valid_evidence_gaps(verifier_output.evidence_gaps, verifier_input.verified_executor_output):
        safe = _safe_gap(gap, excluded, allowed)
        if safe is not None:
            copy = contracts_pb2.EvidenceGap()
            copy.CopyFrom(safe)
            gaps.append(copy)
    return AllowedMaterial(
        verdict=verdict,
        question=verifier_input.diagnosis_context.question,
        confirmable=tuple(confirmable),
        directions=tuple(directions),
        evidence_gaps=tuple(gaps),
    )


def excluded_statements(*, verifier_input: contracts_pb2.VerifierInput, material: AllowedMaterial) -> tuple[str, ...]:
    """Statements of verified claims the material does not allow: an answer must never hold them verbatim."""
    allowed = {(c.claim_id, c.statement) for c in (*material.confirmable, *material.directions)}
    return tuple(
        claim.statement
        for claim in verifier_input.verified_executor_output.claims
        if (claim.claim_id, claim.statement) not in allowed and claim.statement.strip()
    )
