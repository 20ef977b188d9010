"""The Composer guard: a parsed Composer answer may use the allowed material and nothing else (R-R-3, R-A-1..3).

Returns the violations; an empty list accepts the answer. A rejected answer counts as the Composer's
INVALID_OUTPUT: the node retries once, then falls back to ``render_verified`` (R-A-5).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from diagnosis.v1 import contracts_pb2
from diagnosis_server.composition.material import AllowedMaterial, mentions, mentions_any

_V = contracts_pb2.Verdict


def _texts(output: contracts_pb2.ComposerOutput) -> Iterable[tuple[str, str]]:
    yield "summary", output.summary
    for field in ("confirmed_facts", "possible_directions", "evidence_gaps", "next_steps"):
        for index, item in enumerate(getattr(output, field)):
            yield f"{field}[{index}]", item.text


def guard_composer_output(
    output: contracts_pb2.ComposerOutput,
    material: AllowedMaterial,
    *,
    excluded_statements: Collection[str] = (),
) -> list[str]:
    """Violations of the allowed material by a Composer answer; empty means accepted.

    ``excluded_statements`` are statements of verified claims the material does not allow
    (``composition.material.excluded_statements``); holding one verbatim (case-insensitive) is a violation.
    """
    violations: list[str] = []
    confirmable = {c.claim_id for c in material.confirmable}
    directions = {c.claim_id for c in material.directions}
    # Beside a gap or a next step, the claims the Verifier's gaps name may be cited by id too.
    allowed = material.allowed_claim_ids() | material.gap_claim_ids()
    if not output.summary.strip():
        violations.append("summary is empty")

    # A possible direction is never presented as confirmed (R-A-2), whichever claim id the item cites.
    direction_statements = [c.statement for c in material.directions]
    confirmable_statements = [c.statement for c in material.confirmable]
    for index, item in enumerate(output.confirmed_facts):
        if not item.claim_ids:
            violations.append(f"confirmed_facts[{index}] cites no claim")
        for claim_id in item.claim_ids:
            if claim_id not in confirmable:
                violations.append(f"confirmed_facts[{index}] cites {claim_id!r}, which is not a confirmable claim")
        if mentions_any(item.text, direction_statements, covering=confirmable_statements):
            violations.append(f"confirmed_facts[{index}] states a claim that is only a possible direction")

    if material.verdict == _V.VERDICT_REJECT and output.possible_directions:
        violations.append("possible directions are not allowed under REJECT")
    else:
        for index, item in enumerate(output.possible_directions):
            if not item.claim_ids:
                violations.append(f"possible_directions[{index}] cites no claim")
            for claim_id in item.claim_ids:
                if claim_id not in directions:
                    violations.append(
                        f"possible_directions[{index}] cites {claim_id!r}, which is not an allowed direction"
                    )

    if output.evidence_gaps and not material.evidence_gaps:
        violations.append("evidence gaps are listed but the Verifier identified none")
    for field in ("evidence_gaps", "next_steps"):
        for index, item in enumerate(getattr(output, field)):
            for claim_id in item.claim_ids:
                if claim_id not in allowed:
                    violations.append(f"{field}[{index}] cites {claim_id!r}, which is outside the allowed material")

    covering = material.allowed_statements()
    for where, text in _texts(output):
        for statement in excluded_statements:
            if mentions(text, statement, covering=covering):
                violations.append(f"{where} holds the statement of a claim that is not allowed")
                break
    return violations
