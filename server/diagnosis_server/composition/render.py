"""Deterministic safe renderings and the user-facing answer text (R-A-2..5, R-R-3, R-R-5).

``render_verified`` renders the allowed material alone, for when the Composer failed after
verification (R-A-5). ``render_pre_verification_fallback`` renders an answer with no Executor claim
at all (R-A-4). Next steps come from gaps and directions by fixed templates, never from Executor text.
"""

from __future__ import annotations

from diagnosis.v1 import contracts_pb2
from diagnosis_server.composition.material import AllowedMaterial, MaterialClaim

_V = contracts_pb2.Verdict
_S = contracts_pb2.ComposerSource

COLLECT_MORE = (
    "Collect more evidence (logs, metrics, recent deployments and configuration changes) and run the diagnosis again."
)
CHECK_DIRECTLY = "Check the affected service's recent changes, logs and metrics directly."

REJECT_SUMMARY = (
    "The current evidence cannot support a reliable conclusion, so no root cause is given. "
    "Only confirmed facts, evidence gaps and next steps are listed."
)

_PRE_VERIFICATION_REASONS: dict[str, tuple[str, str]] = {
    "EXECUTOR_INVALID_OUTPUT": (
        "the evidence-collection step did not return a valid structured result",
        "Run the diagnosis again; if it keeps failing, check the Executor agent's configuration.",
    ),
    "TOOL_BLOCKED": (
        "a tool the investigation needed is not allowed for this run",
        "Allow the tools the question needs, or ask a narrower question the allowed tools can answer.",
    ),
    "GATEKEEPER_REJECT": (
        "the collected claims did not point at recorded tool output, so none of them could be verified",
        "Run the diagnosis again so that every claim is tied to a recorded tool output.",
    ),
    "NO_VERIFIED_EVIDENCE": (
        "no claim was backed by verified tool output",
        "Make sure the tools can reach the data this question needs, then run the diagnosis again.",
    ),
    "VERIFIER_FAILED": (
        "the verification of the collected evidence did not complete",
        "Run the diagnosis again; if it keeps failing, check the Verifier agent's configuration.",
    ),
    "PLANNER_FAILED": (
        "the investigation could not be planned",
        "Run the diagnosis again; if it keeps failing, check the Planner agent's configuration.",
    ),
    "MODEL_ENDPOINT_FAILED": (
        "the model endpoint failed (it could not be reached or answered with an error)",
        "Check that the model endpoint is up and reachable from the server, then run the diagnosis again.",
    ),
    "RECURSION_LIMIT": (
        "the diagnosis reached its step limit before it finished",
        "Ask a narrower question, or run the diagnosis again.",
    ),
}
_GENERIC_REASON = (
    "an internal step of the diagnosis did not complete",
    "Run the diagnosis again later.",
)

_SECTIONS = (
    ("Confirmed facts", "confirmed_facts"),
    ("Possible directions", "possible_directions"),
    ("Evidence gaps", "evidence_gaps"),
    ("Next steps", "next_steps"),
)


def _item(text: str, claim_ids: list[str]) -> contracts_pb2.ComposedItem:
    return contracts_pb2.ComposedItem(text=text, claim_ids=claim_ids)


def _claim_item(claim: MaterialClaim) -> contracts_pb2.ComposedItem:
    return _item(claim.statement, [claim.claim_id])


def _summary(material: AllowedMaterial) -> str:
    if material.verdict == _V.VERDICT_PASS:
        if not material.confirmable:
            return "The evidence was verified, but no confirmed fact is available to state a diagnosis."
        statements = "; ".join(claim.statement for claim in material.confirmable)
        return f"Confirmed diagnosis, backed by recorded tool output: {statements}"
    if material.verdict == _V.VERDICT_LOW_CONFID:
        return (
            "The evidence is partial, so no diagnosis is confirmed. "
            f"Below, confirmed facts ({len(material.confirmable)}) rest on recorded tool output, "
            f"possible directions ({len(material.directions)}) are not confirmed, "
            f"and evidence gaps ({len(material.evidence_gaps)}) remain open."
        )
    return REJECT_SUMMARY


def _next_steps(material: AllowedMaterial) -> list[contracts_pb2.ComposedItem]:
    steps = [
        _item(f"Collect evidence for: {gap.description.strip()}", [gap.claim_id] if gap.claim_id else [])
        for gap in material.evidence_gaps
    ]
    if material.verdict != _V.VERDICT_REJECT:
        steps.extend(
            _item(f"Verify with direct evidence: {claim.statement}", [claim.claim_id]) for claim in material.directions
        )
    if not steps:
        if material.verdict == _V.VERDICT_PASS:
            steps.append(_item("Address the confirmed cause and check that the symptoms clear.", []))
        else:
            steps.append(_item(COLLECT_MORE, []))
    return steps


def render_verified(material: AllowedMaterial) -> contracts_pb2.ComposerOutput:
    """The deterministic answer from the allowed material alone (post-verification fallback, R-A-5)."""
    output = contracts_pb2.ComposerOutput(
        summary=_summary(material),
        source=_S.COMPOSER_SOURCE_POST_VERIFICATION_FALLBACK,
        verdict=material.verdict,
    )
    output.confirmed_facts.extend(_claim_item(claim) for claim in material.confirmable)
    if material.verdict != _V.VERDICT_REJECT:
        output.possible_directions.extend(_claim_item(claim) for claim in material.directions)
    output.evidence_gaps.extend(
        _item(gap.description.strip(), [gap.claim_id] if gap.claim_id else []) for gap in material.evidence_gaps
    )
    output.next_steps.extend(_next_steps(material))
    return output


def render_pre_verification_fallback(reason_code: str) -> contracts_pb2.ComposerOutput:
    """A generic answer with no Executor claim (R-A-4): no verified diagnosis, why in plain words, next steps.

    An unknown reason code gets a generic reason; the code itself is never echoed.
    """
    key = reason_code.strip().upper() if isinstance(reason_code, str) else ""
    reason, step = _PRE_VERIFICATION_REASONS.get(key, _GENERIC_REASON)
    output = contracts_pb2.ComposerOutput(
        summary=f"No verified diagnosis could be produced: {reason}.",
        source=_S.COMPOSER_SOURCE_PRE_VERIFICATION_FALLBACK,
        verdict=_V.VERDICT_UNSPECIFIED,
    )
    output.evidence_gaps.append(_item("No verified evidence is available to support a conclusion.", []))
    output.next_steps.extend([_item(step, []), _item(CHECK_DIRECTLY, [])])
    return output


def answer_text(output: contracts_pb2.ComposerOutput) -> str:
    """The user-facing text: the summary, then each non-empty section, each item with its cited claim ids."""
    parts = [output.summary.strip()]
    for title, field in _SECTIONS:
        items: list[contracts_pb2.ComposedItem] = list(getattr(output, field))
        if not items:
            continue
        lines = [f"{title}:"]
        for item in items:
            cited = f" [{', '.join(item.claim_ids)}]" if item.claim_ids else ""
            lines.append(f"- {item.text.strip()}{cited}")
        parts.append("\n".join(lines))
    return "\n\n".join(part for part in parts if part)
