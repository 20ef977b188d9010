"""Verifier protocol: raw Verifier text -> VerifierOutput, checked against the verified input (R-C-6, R-V-5, R-V-6).

Pinned shape::

    {"claim_checks": [{"claim_id", "classification", "critical", "evidence_refs": [{"claim_id"?,
      "source_invocation_id"?, "tool_name"?, "raw_path"?}], "rationale"}],
     "verdict", "groundedness_score", "rationale",
     "evidence_gaps": [{"claim_id"?, "description", "critical", "next_calls"?: [{"tool_name", "arguments"}]}],
     "facts_checked"?}

A check whose claim id names no verified claim is dropped (an id is never echoed whole in a warning); a gap
whose claim id names no claim is not a valid gap (``verification.verdict.valid_evidence_gaps``).

The shape is ``VerifierReply`` (``protocols.shapes``). Wrong JSON, unknown keys, unknown enum words or wrong
types are INVALID_OUTPUT. A well-formed reply
is then held to the verified input, and what does not hold is dropped or lowered, never raised:

- an evidence ref matches a verified evidence item when every field it gives equals the item's
  (a ref giving no field matches nothing); refs matching nothing, or only other claims' items, are
  dropped with a warning;
- a check left without a matching ref cannot stay direct_observation: it becomes unsupported,
  recorded as a ClassificationChange from the parser;
- checks of unknown claims and repeated checks of one claim are dropped with a warning; a verified
  claim without a check gets an unsupported one;
- ``critical`` comes from the verified claim, never from the model;
- ``facts_checked`` is derived when the model gave none (R-V-6), otherwise held to the verified claims.

Evidence gaps are kept as given; their validity is judged by ``verification.verdict``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from operator import itemgetter
from typing import Annotated, Any, cast

from pydantic import Field

from diagnosis.v1 import contracts_pb2
from diagnosis_server.conversions import EnumType, enum_short_name
from diagnosis_server.protocols import fields, shapes
from diagnosis_server.protocols.facts import derive_facts_checked, fact_support_for
from diagnosis_server.protocols.json_text import parse_json_object
from diagnosis_server.protocols.shapes import Shape

_C = contracts_pb2.ClaimClassification
_F = contracts_pb2.FactSupport

# The generated enum wrappers as conversions.EnumType (cast through Any: their Name() takes ValueType).
_CLASSIFICATION_ENUM: EnumType = cast(Any, contracts_pb2.ClaimClassification)
_VERDICT_ENUM: EnumType = cast(Any, contracts_pb2.Verdict)
_FACT_ENUM: EnumType = cast(Any, contracts_pb2.FactSupport)

PARSER_SOURCE = "parser"

_REF_KEYS = ("claim_id", "source_invocation_id", "tool_name", "raw_path")


@dataclass(frozen=True, slots=True)
class VerifierParse:
    ok: bool
    output: contracts_pb2.VerifierOutput | None
    error: str


# ---------------------------------------------------------------- shape and types

Classification = Annotated[int, shapes.ProtoEnum(_CLASSIFICATION_ENUM, lower=True)]
VerdictName = Annotated[int, shapes.ProtoEnum(_VERDICT_ENUM, lower=False)]
FactSupportName = Annotated[int, shapes.ProtoEnum(_FACT_ENUM, lower=True)]
Score = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)]


class EvidenceRef(Shape):
    claim_id: str = ""
    source_invocation_id: str = ""
    tool_name: str = ""
    raw_path: str = ""


class ClaimCheck(Shape):
    claim_id: str
    classification: Classification
    critical: bool = False
    evidence_refs: list[EvidenceRef] = Field(default_factory=list)
    rationale: str = ""


class VerifierGap(Shape):
    claim_id: str = ""
    description: str = ""
    critical: bool = False
    next_calls: fields.NextCalls


class FactCheck(Shape):
    claim_id: str
    fact: str
    classification: FactSupportName


class VerifierReply(Shape):
    """The Verifier's reply; ``facts_checked`` is derived when absent (R-V-6), so strict mode does not offer it."""

    claim_checks: list[ClaimCheck]
    verdict: VerdictName
    groundedness_score: Score
    rationale: str = ""
    evidence_gaps: list[VerifierGap] = Field(default_factory=list)
    facts_checked: Annotated[list[FactCheck], Field(default_factory=list, json_schema_extra={shapes.UNOFFERED: True})]


def _shape(reply: VerifierReply) -> contracts_pb2.VerifierOutput:
    """The reply as a VerifierOutput, types and enums checked, nothing yet held to the verified input."""
    output = contracts_pb2.VerifierOutput(
        verdict=contracts_pb2.Verdict.ValueType(reply.verdict),
        groundedness_score=reply.groundedness_score,
        rationale=reply.rationale,
    )
    for check in reply.claim_checks:
        added = output.claim_checks.add(
            claim_id=check.claim_id,
            classification=contracts_pb2.ClaimClassification.ValueType(check.classification),
            critical=check.critical,
            rationale=check.rationale,
        )
        for ref in check.evidence_refs:
            added.evidence_refs.add(**ref.model_dump())
    for gap in reply.evidence_gaps:
        output.evidence_gaps.add(
            claim_id=gap.claim_id,
            description=gap.description,
            critical=gap.critical,
            next_calls=[call.to_proto() for call in gap.next_calls],
        )
    for fact in reply.facts_checked:
        output.facts_checked.add(
            claim_id=fact.claim_id, fact=fact.fact, support=contracts_pb2.FactSupport.ValueType(fact.classification)
        )
    return output


# ---------------------------------------------------------------- holding the reply to the verified input


def _ref_label(ref: contracts_pb2.EvidenceRef) -> str:
    given = [f"{key}={getattr(ref, key)!r}" for key in _REF_KEYS if getattr(ref, key)]
    return "{" + ", ".join(given) + "}"


# A verified evidence item with its _REF_KEYS values, read once (proto attribute reads are not free).
_Keyed = tuple[contracts_pb2.VerifiedEvidence, tuple[str, ...]]


def _keyed(evidence: Iterable[contracts_pb2.VerifiedEvidence]) -> list[_Keyed]:
    return [(item, (item.claim_id, item.source_invocation_id, item.tool_name, item.raw_path)) for item in evidence]


def _matching(ref: contracts_pb2.EvidenceRef, evidence: list[_Keyed]) -> list[contracts_pb2.VerifiedEvidence]:
    """The items whose every key the ref gives equals the ref's (none when the ref gives no key)."""
    wanted = (ref.claim_id, ref.source_invocation_id, ref.tool_name, ref.raw_path)
    given = [index for index, value in enumerate(wanted) if value]
    if not given:
        return []
    pick = itemgetter(*given)
    target = pick(wanted)
    return [item for item, keys in evidence if pick(keys) == target]


def _hold_refs(
    check: contracts_pb2.ClaimCheck,
    evidence: list[_Keyed],
    warnings: list[str],
) -> None:
    kept: list[contracts_pb2.EvidenceRef] = []
    for ref in check.evidence_refs:
        matches = _matching(ref, evidence)
        if not matches:
            warnings.append(
                f"claim {check.claim_id!r}: evidence ref {_ref_label(ref)} matches no verified evidence; dropped"
            )
        elif all(item.claim_id != check.claim_id for item in matches):
            warnings.append(
                f"claim {check.claim_id!r}: evidence ref {_ref_label(ref)} matches only other claims' "
                "verified evidence; dropped"
            )
        else:
            copy = contracts_pb2.EvidenceRef()
            copy.CopyFrom(ref)
            kept.append(copy)
    del check.evidence_refs[:]
    check.evidence_refs.extend(kept)


def _downgrade(
    check: contracts_pb2.ClaimCheck,
    to: contracts_pb2.ClaimClassification.ValueType,
    reason: str,
    output: contracts_pb2.VerifierOutput,
) -> None:
    output.classification_changes.add(
        claim_id=check.claim_id,
        from_classification=check.classification,
        to_classification=to,
        reason=reason,
        source=PARSER_SOURCE,
    )
    check.classification = to


def _hold_checks(
    shaped: contracts_pb2.VerifierOutput,
    verifier_input: contracts_pb2.VerifierInput,
    output: contracts_pb2.VerifierOutput,
) -> None:
    claims: dict[str, contracts_pb2.Claim] = {}
    for claim in verifier_input.verified_executor_output.claims:
        claims.setdefault(claim.claim_id, claim)
    evidence = _keyed(verifier_input.verified_evidence)
    warnings: list[str] = []
    checks: dict[str, contracts_pb2.ClaimCheck] = {}
    for check in shaped.claim_checks:
        if check.claim_id not in claims:
            shown = check.claim_id if fields.is_claim_id(check.claim_id) else "(not a claim id)"
            warnings.append(f"claim check for unknown claim {shown!r}; dropped")
            continue
        if check.claim_id in checks:
            warnings.append(f"repeated claim check for claim {check.claim_id!r}; the first is kept")
            continue
        check.critical = claims[check.claim_id].critical
        _hold_refs(check, evidence, warnings)
        checks[check.claim_id] = check
    output.warnings.extend(warnings)
    for claim_id, claim in claims.items():
        given = checks.get(claim_id)
        if given is None:
            output.warnings.append(f"no claim check for verified claim {claim_id!r}; classified unsupported")
            added = output.claim_checks.add(
                claim_id=claim_id,
                classification=_C.CLAIM_CLASSIFICATION_UNSPECIFIED,
                critical=claim.critical,
                rationale="The Verifier gave no check for this claim.",
            )
            _downgrade(added, _C.CLAIM_CLASSIFICATION_UNSUPPORTED, "no claim check was given for this claim", output)
            continue
        if given.classification == _C.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION and not given.evidence_refs:
            _downgrade(
                given,
                _C.CLAIM_CLASSIFICATION_UNSUPPORTED,
                "no evidence ref matches this claim's verified evidence, so it cannot be a direct observation",
                output,
            )
        output.claim_checks.append(given)


def _hold_facts(
    shaped: contracts_pb2.VerifierOutput,
    verifier_input: contracts_pb2.VerifierInput,
    output: contracts_pb2.VerifierOutput,
) -> None:
    claims = verifier_input.verified_executor_output.claims
    classifications = {check.claim_id: check.classification for check in output.claim_checks}
    kept: list[contracts_pb2.FactCheck] = []
    for fact in shaped.facts_checked:
        if fact.claim_id not in classifications:
            output.warnings.append(f"fact for unknown claim {fact.claim_id!r}; dropped")
            continue
        allowed = fact_support_for(classifications[fact.claim_id])
        if fact.support == _F.FACT_SUPPORT_DIRECT_EVIDENCE and allowed != _F.FACT_SUPPORT_DIRECT_EVIDENCE:
            output.warnings.append(
                f"fact for claim {fact.claim_id!r} claimed direct_evidence but the claim is "
                f"{enum_short_name(_CLASSIFICATION_ENUM, classifications[fact.claim_id], lower=True)}; "
                f"lowered to {enum_short_name(_FACT_ENUM, allowed, lower=True)}"
            )
            fact.support = allowed
        kept.append(fact)
    if not kept:
        kept = derive_facts_checked(output.claim_checks, claims)
    output.facts_checked.extend(kept)


def parse_verifier_output(raw: str, verifier_input: contracts_pb2.VerifierInput) -> VerifierParse:
    """Parse a Verifier reply and hold it to the verified input; never raises on bad input."""
    obj, error = parse_json_object(raw)
    if obj is None:
        return VerifierParse(ok=False, output=None, error=error)
    reply = shapes.validate(VerifierReply, obj)
    if isinstance(reply, str):
        return VerifierParse(ok=False, output=None, error=reply)
    shaped = _shape(reply)
    output = contracts_pb2.VerifierOutput(
        verdict=shaped.verdict,
        groundedness_score=shaped.groundedness_score,
        rationale=shaped.rationale,
    )
    output.evidence_gaps.extend(shaped.evidence_gaps)
    _hold_checks(shaped, verifier_input, output)
    _hold_facts(shaped, verifier_input, output)
    return VerifierParse(ok=True, output=output, error="")
