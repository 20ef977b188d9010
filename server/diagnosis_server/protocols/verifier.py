"""Verifier protocol: raw Verifier text -> VerifierOutput, checked against the verified input (R-C-6, R-V-5, R-V-6).

Pinned shape::

    {"claim_checks": [{"claim_id", "classification", "critical", "evidence_refs": [{"claim_id"?,
      "source_invocation_id"?, "tool_name"?, "raw_path"?}], "rationale"}],
     "verdict", "groundedness_score", "rationale",
     "evidence_gaps": [{"claim_id"?, "description", "critical", "next_calls"?: [{"tool_name", "arguments"}]}],
     "facts_checked"?}

A check whose claim id names no verified claim is dropped (an id is never echoed whole in a warning); a gap
whose claim id names no claim is not a valid gap (``verification.verdict.valid_evidence_gaps``).

Wrong JSON, unknown keys, unknown enum words or wrong types are INVALID_OUTPUT. A well-formed reply
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

import math
from collections.abc import Iterable
from dataclasses import dataclass
from operator import itemgetter
from typing import Any, cast

from diagnosis.v1 import contracts_pb2
from diagnosis_server.conversions import EnumType, JsonObject, JsonValue, enum_from_name, enum_short_name
from diagnosis_server.protocols import fields
from diagnosis_server.protocols.facts import derive_facts_checked, fact_support_for
from diagnosis_server.protocols.json_text import parse_json_object

_C = contracts_pb2.ClaimClassification
_F = contracts_pb2.FactSupport

# The generated enum wrappers as conversions.EnumType (cast through Any: their Name() takes ValueType).
_CLASSIFICATION_ENUM: EnumType = cast(Any, contracts_pb2.ClaimClassification)
_VERDICT_ENUM: EnumType = cast(Any, contracts_pb2.Verdict)
_FACT_ENUM: EnumType = cast(Any, contracts_pb2.FactSupport)

PARSER_SOURCE = "parser"

_TOP_KEYS = frozenset({"claim_checks", "verdict", "groundedness_score", "rationale", "evidence_gaps", "facts_checked"})
_CHECK_KEYS = frozenset({"claim_id", "classification", "critical", "evidence_refs", "rationale"})
_REF_KEYS = ("claim_id", "source_invocation_id", "tool_name", "raw_path")
_GAP_KEYS = frozenset({"claim_id", "description", "critical", "next_calls"})
_FACT_KEYS = frozenset({"claim_id", "fact", "classification"})


@dataclass(frozen=True, slots=True)
class VerifierParse:
    ok: bool
    output: contracts_pb2.VerifierOutput | None
    error: str


class _Invalid(ValueError):
    pass


# ---------------------------------------------------------------- shape and types


def _keys(obj: JsonObject, allowed: frozenset[str] | tuple[str, ...], where: str) -> None:
    unknown = sorted(set(obj) - set(allowed))
    if unknown:
        raise _Invalid(f"{where} has unknown keys: {', '.join(unknown)}")


def _obj(value: JsonValue, where: str) -> JsonObject:
    if not isinstance(value, dict):
        raise _Invalid(f"{where} is not an object")
    return value


def _list(obj: JsonObject, key: str, where: str, *, required: bool) -> list[JsonValue]:
    if key not in obj:
        if required:
            raise _Invalid(f"{where}{key} is missing")
        return []
    value = obj[key]
    if not isinstance(value, list):
        raise _Invalid(f"{where}{key} is not a list")
    return value


def _str(obj: JsonObject, key: str, where: str, *, required: bool) -> str:
    if key not in obj:
        if required:
            raise _Invalid(f"{where}{key} is missing")
        return ""
    value = obj[key]
    if not isinstance(value, str):
        raise _Invalid(f"{where}{key} is not a string")
    return value


def _bool(obj: JsonObject, key: str, where: str) -> bool:
    value = obj.get(key, False)
    if not isinstance(value, bool):
        raise _Invalid(f"{where}{key} is not a boolean")
    return value


def _classification(value: JsonValue, where: str) -> contracts_pb2.ClaimClassification.ValueType:
    number = enum_from_name(_CLASSIFICATION_ENUM, value)
    if number is None:
        raise _Invalid(f"{where}classification {value!r} is not a known classification")
    return contracts_pb2.ClaimClassification.ValueType(number)


def _score(obj: JsonObject) -> float:
    if "groundedness_score" not in obj:
        raise _Invalid("groundedness_score is missing")
    value = obj["groundedness_score"]
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _Invalid("groundedness_score is not a number")
    score = float(value)
    if not math.isfinite(score) or not 0.0 <= score <= 1.0:
        raise _Invalid(f"groundedness_score {value!r} is not within [0, 1]")
    return score


def _verdict(obj: JsonObject) -> contracts_pb2.Verdict.ValueType:
    if "verdict" not in obj:
        raise _Invalid("verdict is missing")
    number = enum_from_name(_VERDICT_ENUM, obj["verdict"])
    if number is None:
        raise _Invalid(f"verdict {obj['verdict']!r} is not PASS, LOW_CONFID or REJECT")
    return contracts_pb2.Verdict.ValueType(number)


def _check(value: JsonValue, index: int) -> contracts_pb2.ClaimCheck:
    where = f"claim_checks[{index}]."
    obj = _obj(value, where.rstrip("."))
    _keys(obj, _CHECK_KEYS, where.rstrip("."))
    claim_id = _str(obj, "claim_id", where, required=True)
    if "classification" not in obj:
        raise _Invalid(f"{where}classification is missing")
    check = contracts_pb2.ClaimCheck(
        claim_id=claim_id,
        classification=_classification(obj["classification"], where),
        critical=_bool(obj, "critical", where),
        rationale=_str(obj, "rationale", where, required=False),
    )
    for ref_index, ref_value in enumerate(_list(obj, "evidence_refs", where, required=False)):
        ref_where = f"{where}evidence_refs[{ref_index}]"
        ref = _obj(ref_value, ref_where)
        _keys(ref, _REF_KEYS, ref_where)
        check.evidence_refs.add(**{key: _str(ref, key, ref_where + ".", required=False) for key in _REF_KEYS})
    return check


def _gap(value: JsonValue, index: int) -> contracts_pb2.EvidenceGap:
    where = f"evidence_gaps[{index}]"
    obj = _obj(value, where)
    _keys(obj, _GAP_KEYS, where)
    claim_id = _str(obj, "claim_id", where + ".", required=False)
    gap = contracts_pb2.EvidenceGap(
        claim_id=claim_id,
        description=_str(obj, "description", where + ".", required=False),
        critical=_bool(obj, "critical", where + "."),
    )
    if "next_calls" in obj:
        try:
            gap.next_calls.extend(fields.next_calls(obj["next_calls"], f"{where}.next_calls"))
        except fields.FieldError as exc:
            raise _Invalid(str(exc)) from None
    return gap


def _fact(value: JsonValue, index: int) -> contracts_pb2.FactCheck:
    where = f"facts_checked[{index}]"
    obj = _obj(value, where)
    _keys(obj, _FACT_KEYS, where)
    if "classification" not in obj:
        raise _Invalid(f"{where}.classification is missing")
    support = enum_from_name(_FACT_ENUM, obj["classification"])
    if support is None:
        raise _Invalid(f"{where}.classification {obj['classification']!r} is not a known fact classification")
    return contracts_pb2.FactCheck(
        claim_id=_str(obj, "claim_id", where + ".", required=True),
        fact=_str(obj, "fact", where + ".", required=True),
        support=contracts_pb2.FactSupport.ValueType(support),
    )


def _shape(obj: JsonObject) -> contracts_pb2.VerifierOutput:
    """The reply as a VerifierOutput, types and enums checked, nothing yet held to the verified input."""
    _keys(obj, _TOP_KEYS, "verifier output")
    output = contracts_pb2.VerifierOutput(
        verdict=_verdict(obj),
        groundedness_score=_score(obj),
        rationale=_str(obj, "rationale", "", required=False),
    )
    for index, value in enumerate(_list(obj, "claim_checks", "", required=True)):
        output.claim_checks.append(_check(value, index))
    for index, value in enumerate(_list(obj, "evidence_gaps", "", required=False)):
        output.evidence_gaps.append(_gap(value, index))
    for index, value in enumerate(_list(obj, "facts_checked", "", required=False)):
        output.facts_checked.append(_fact(value, index))
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
    try:
        shaped = _shape(obj)
    except _Invalid as exc:
        return VerifierParse(ok=False, output=None, error=str(exc))
    output = contracts_pb2.VerifierOutput(
        verdict=shaped.verdict,
        groundedness_score=shaped.groundedness_score,
        rationale=shaped.rationale,
    )
    output.evidence_gaps.extend(shaped.evidence_gaps)
    _hold_checks(shaped, verifier_input, output)
    _hold_facts(shaped, verifier_input, output)
    return VerifierParse(ok=True, output=output, error="")
