"""The answer a user reads, rendered by the service (R-A-1..R-A-6, R-R-3, R-R-5).

Only three kinds of text reach the user: statements of claims that passed the Gatekeeper and the
Verifier (in the section their classification and status allow, confirmed facts with their quoted
evidence and source), gaps and next steps rendered from structured fields, and fixed templates. The
Composer's reply only chooses: which allowed claims go where, which likely cause is the headline, which
gaps and next steps to show (``render_answer``). Without a usable reply the same rendering runs on the
material alone (``render_verified``, R-A-5). Before verification, ``render_pre_verification_fallback``
says what the run did from its own record and holds no Executor claim (R-A-4).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from diagnosis.v1 import contracts_pb2
from diagnosis_server.composition.material import AllowedMaterial, MaterialClaim, MaterialGap, Quote
from diagnosis_server.composition.suggestions import COLLECT_MORE, Suggestion
from diagnosis_server.protocols.composer import ComposerParse
from diagnosis_server.text.language import finds_nothing
from diagnosis_server.text.normalize import display_line, display_text, displayable

_V = contracts_pb2.Verdict
_S = contracts_pb2.ComposerSource
_T = TypeVar("_T")

REJECT_SUMMARY = (
    "The current evidence cannot support a reliable conclusion, so no root cause is given. "
    "Only confirmed facts, evidence gaps and next steps are listed."
)
CHECK_DIRECTLY = "Check the affected service's recent changes, logs and metrics directly."
MAX_QUOTE_CHARS = 160
MAX_STEPS_SHOWN = 6

_SECTIONS = (
    ("Confirmed facts", "confirmed_facts"),
    ("Possible directions", "possible_directions"),
    ("Evidence gaps", "evidence_gaps"),
    ("Next steps", "next_steps"),
    ("What happened", "run_notes"),
)


# ---------------------------------------------------------------- items


def _claim_item(claim: MaterialClaim, material: AllowedMaterial) -> contracts_pb2.ComposedItem:
    item = contracts_pb2.ComposedItem(text=claim.statement, claim_ids=[claim.label or material.label(claim.claim_id)])
    item.inferred_from.extend(material.label(claim_id) for claim_id in claim.inferred_from)
    if claim.inferred and not claim.inferred_from and claim not in material.causes:
        item.evidence.extend(q.to_proto() for q in claim.quotes)  # a direction from its own evidence shows it
    return item


def _fact_item(claim: MaterialClaim, material: AllowedMaterial) -> contracts_pb2.ComposedItem:
    item = _claim_item(claim, material)
    item.evidence.extend(q.to_proto() for q in claim.quotes)
    return item


def _gap_text(gap: MaterialGap, material: AllowedMaterial, steps: Sequence[Suggestion]) -> str:
    prefix = "Critical: " if gap.critical else ""
    claim = material.claim(gap.claim_id) if gap.claim_id else None
    named = material.label(gap.claim_id)
    if claim is not None and claim in material.confirmable:
        text = f"{named} is confirmed, but evidence that would explain it further is missing."
    elif claim is not None:
        text = f"{named} is not confirmed: direct evidence would confirm it or rule it out."
    elif gap.claim_id:
        text = f"{named} could not be verified from the collected evidence, so it is not shown."
    else:
        calls = [s for s in steps if s.gap_id == gap.gap_id and s.call is not None]
        if calls:
            text = "Not yet looked at: " + "; ".join(s.phrase for s in calls) + "."
        else:
            text = "The Verifier identified a missing signal that the collected evidence does not show."
    return prefix + text


def _gap_item(gap: MaterialGap, material: AllowedMaterial) -> contracts_pb2.ComposedItem:
    item = contracts_pb2.ComposedItem(text=_gap_text(gap, material, material.next_steps))
    if gap.claim_id:
        item.claim_ids.append(material.label(gap.claim_id))
    return item


def _step_item(step: Suggestion) -> contracts_pb2.ComposedItem:
    item = contracts_pb2.ComposedItem(text=step.text, claim_ids=list(step.claim_ids))
    if step.call is not None:
        item.call.CopyFrom(step.call)
    return item


def _note(text: str) -> contracts_pb2.ComposedItem:
    return contracts_pb2.ComposedItem(text=text)


# ---------------------------------------------------------------- the headline


def headline_label(claim: MaterialClaim, material: AllowedMaterial) -> str:
    kind = "Conclusion" if finds_nothing(claim.statement) else "Likely cause"
    return f"{kind} (inferred from {', '.join(material.label(c) for c in claim.inferred_from)})"


def _summary(material: AllowedMaterial, cause: MaterialClaim | None, directions: int) -> str:
    facts = len(material.confirmable)
    if material.verdict == _V.VERDICT_PASS:
        if cause is not None:
            return f"{headline_label(cause, material)}: {cause.statement}"
        return f"Confirmed by recorded tool output: {facts} fact(s); no cause is inferred from them."
    if material.verdict == _V.VERDICT_LOW_CONFID:
        summary = (
            f"Partial diagnosis with low confidence: {facts} fact(s) are confirmed by recorded tool output, "
            "but the evidence does not establish a cause."
        )
        if directions:
            summary += " Possible directions are listed separately; they are not confirmed."
        return summary
    return REJECT_SUMMARY


# ---------------------------------------------------------------- choosing from the Composer's reply


@dataclass(slots=True)
class _Choice:
    cause: MaterialClaim | None = None
    facts: list[MaterialClaim] = field(default_factory=list)
    directions: list[MaterialClaim] = field(default_factory=list)
    gaps: list[MaterialGap] = field(default_factory=list)
    steps: list[Suggestion] = field(default_factory=list)


def _cited(items: Iterable[contracts_pb2.ComposedItem], allowed: Sequence[MaterialClaim]) -> list[MaterialClaim]:
    by_id = {c.claim_id: c for c in allowed}
    out: list[MaterialClaim] = []
    for item in items:
        for claim_id in item.claim_ids:
            claim = by_id.get(claim_id)
            if claim is not None and claim not in out:
                out.append(claim)
    return out


def _unique(items: Iterable[_T]) -> list[_T]:
    out: list[_T] = []
    for item in items:
        if not any(item is seen for seen in out):
            out.append(item)
    return out


def _default_cause(material: AllowedMaterial) -> MaterialClaim | None:
    critical = [c for c in material.causes if c.critical]
    ranked = critical or list(material.causes)
    return ranked[0] if ranked else None


def _choose(material: AllowedMaterial, parse: ComposerParse | None) -> _Choice:
    if parse is None or parse.output is None:
        return _Choice(
            cause=_default_cause(material),
            facts=list(material.confirmable),
            directions=list(material.directions),
            gaps=list(material.evidence_gaps),
            steps=list(material.next_steps),
        )
    output = parse.output
    causes = {c.claim_id: c for c in material.causes}
    cause = causes.get(parse.headline) or _default_cause(material)
    directions = _cited(output.possible_directions, (*material.directions, *material.causes))
    gaps_by_id = {g.gap_id: g for g in material.evidence_gaps}
    steps_by_id = {s.step_id: s for s in material.next_steps}
    gaps = [gaps_by_id[r] for (name, _), r in sorted(parse.refs.items()) if name == "evidence_gaps" and r in gaps_by_id]
    if output.evidence_gaps and not gaps:
        gaps = list(material.evidence_gaps)
    steps = [steps_by_id[r] for (name, _), r in sorted(parse.refs.items()) if name == "next_steps" and r in steps_by_id]
    return _Choice(
        cause=cause,
        facts=_cited(output.confirmed_facts, material.confirmable),
        directions=[d for d in directions if d is not cause],
        gaps=_unique(gaps),
        steps=_unique(steps) or list(material.next_steps),
    )


# ---------------------------------------------------------------- public


def render_answer(
    material: AllowedMaterial,
    parse: ComposerParse | None = None,
    *,
    source: contracts_pb2.ComposerSource.ValueType = _S.COMPOSER_SOURCE_COMPOSER,
    notes: Sequence[str] = (),
) -> contracts_pb2.ComposerOutput:
    """The answer from the allowed material, as the Composer's reply chose it (or, without one, all of it)."""
    choice = _choose(material, parse)
    if material.verdict != _V.VERDICT_PASS:
        choice.cause = None
    if material.verdict == _V.VERDICT_REJECT:
        choice.directions = []
    output = contracts_pb2.ComposerOutput(
        summary=_summary(material, choice.cause, len(choice.directions)), source=source, verdict=material.verdict
    )
    if choice.cause is not None:
        output.likely_cause.CopyFrom(_claim_item(choice.cause, material))
    output.confirmed_facts.extend(_fact_item(c, material) for c in choice.facts)
    output.possible_directions.extend(_claim_item(c, material) for c in choice.directions)
    output.evidence_gaps.extend(_gap_item(g, material) for g in choice.gaps)
    output.next_steps.extend(_step_item(s) for s in choice.steps[:MAX_STEPS_SHOWN])
    output.run_notes.extend(_note(n) for n in notes)
    return output


def render_verified(material: AllowedMaterial, *, notes: Sequence[str] = ()) -> contracts_pb2.ComposerOutput:
    """The deterministic answer from the allowed material alone (post-verification fallback, R-A-5)."""
    return render_answer(material, None, source=_S.COMPOSER_SOURCE_POST_VERIFICATION_FALLBACK, notes=notes)


def _names(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def render_pre_verification_fallback(
    notes: Sequence[str],
    *,
    known: AllowedMaterial | None = None,
    no_data_about: Sequence[str] = (),
) -> contracts_pb2.ComposerOutput:
    """An answer with no Executor claim (R-A-4): no verified diagnosis, what happened from the run's record,
    and the gaps and next steps an earlier cycle's Verifier identified (never their claims' statements).
    ``no_data_about``: names of the question no recorded output mentions (checked by the caller): the answer
    says there is no data about them (R-A-2), never that there is no incident."""
    summary = "No verified diagnosis could be produced; what the run did is listed below."
    if no_data_about:
        named = _names(no_data_about)
        summary = (
            f"There is no data about {named} in what this run could read, so no diagnosis of it can be given; "
            "what the run did is listed below."
        )
    output = contracts_pb2.ComposerOutput(
        summary=summary,
        source=_S.COMPOSER_SOURCE_PRE_VERIFICATION_FALLBACK,
        verdict=_V.VERDICT_UNSPECIFIED,
    )
    output.run_notes.extend(_note(n) for n in notes)
    for name in no_data_about:
        output.evidence_gaps.append(_note(f"No recorded tool output of this run mentions {name}."))
        output.next_steps.append(
            _note(
                f"Check that {name} is the workload's name, and that the environment's sources (namespaces, "
                "Prometheus, logs) cover it (ListEnvironments), then ask again."
            )
        )
    # Only gaps about no claim, and the calls that would close them: nothing of an Executor claim (R-A-4).
    gaps = tuple(g for g in known.evidence_gaps if not g.claim_id) if known is not None else ()
    if known is not None and gaps:
        bare = AllowedMaterial(
            verdict=_V.VERDICT_REJECT,
            question=known.question,
            confirmable=(),
            evidence_gaps=gaps,
            next_steps=tuple(s for s in known.next_steps if s.call is not None and not s.claim_ids),
        )
        output.evidence_gaps.extend(_gap_item(g, bare) for g in bare.evidence_gaps)
        output.next_steps.extend(_step_item(s) for s in bare.next_steps[:MAX_STEPS_SHOWN])
    elif not no_data_about:
        output.evidence_gaps.append(_note("No verified evidence is available to support a conclusion."))
    if not output.next_steps:
        output.next_steps.extend([_note(COLLECT_MORE), _note(CHECK_DIRECTLY)])
    return output


def _quote_mark(text: str) -> str:
    for mark in ('"', "'", "`"):
        if mark not in text:
            return f"{mark}{text}{mark}"
    return f'"{text}"'


def shown_data(value: str) -> str:
    """A value from an output or a record (a pointer, a tool name, an id) as data: as is when it passes the
    display check, else its JSON form (escapes visible) through the check."""
    return value if displayable(value) else display_text(json.dumps(value))


def _quoted(quote: contracts_pb2.EvidenceQuote) -> str:
    text = display_text(quote.matched_text)
    if len(text) > MAX_QUOTE_CHARS:
        text = text[: MAX_QUOTE_CHARS - 1] + "…"
    return f"{_quote_mark(text)} at {shown_data(quote.raw_path or '/')}"


def quote_lines(quotes: Sequence[contracts_pb2.EvidenceQuote]) -> list[str]:
    """One line per recorded call: where it was observed (tool, invocation, time) and the quotes found there."""
    lines: list[str] = []
    by_call: dict[str, list[contracts_pb2.EvidenceQuote]] = {}
    for quote in quotes:
        by_call.setdefault(quote.source_invocation_id, []).append(quote)
    for invocation_id, found in by_call.items():
        where = f"{shown_data(found[0].tool_name)} {shown_data(invocation_id)}"
        if found[0].HasField("observed_at"):
            where += f", {found[0].observed_at.ToDatetime().strftime('%Y-%m-%dT%H:%M:%SZ')}"
        lines.append(f"observed in {where}: " + "; ".join(_quoted(q) for q in found))
    return lines


def _cite(item: contracts_pb2.ComposedItem) -> str:
    return f" [{', '.join(shown_data(i) for i in item.claim_ids)}]" if item.claim_ids else ""


def _line(field_name: str, item: contracts_pb2.ComposedItem, verdict: int) -> list[str]:
    text = display_line(item.text)
    if field_name == "possible_directions":
        inferred = ", ".join(shown_data(i) for i in item.inferred_from)
        label = f"Possibly (inferred from {inferred})" if item.inferred_from else "Possibly"
        text = f"{label}: {text}"
    lines = [f"- {text}{_cite(item)}"]
    if field_name in ("confirmed_facts", "possible_directions"):
        lines.extend(f"  {line}" for line in quote_lines(item.evidence))
    return lines


def answer_text(output: contracts_pb2.ComposerOutput) -> str:
    """The user-facing text: the headline, then each non-empty section; bidi and invisible characters removed."""
    summary = display_text(output.summary)
    if output.HasField("likely_cause"):
        summary += _cite(output.likely_cause)
    parts = [summary]
    for title, field_name in _SECTIONS:
        items: list[contracts_pb2.ComposedItem] = list(getattr(output, field_name))
        if not items:
            continue
        lines = [f"{title}:"]
        for item in items:
            lines.extend(_line(field_name, item, output.verdict))
        parts.append("\n".join(lines))
    return "\n\n".join(part for part in parts if part)


__all__ = [
    "CHECK_DIRECTLY",
    "REJECT_SUMMARY",
    "Quote",
    "answer_text",
    "headline_label",
    "quote_lines",
    "render_answer",
    "render_pre_verification_fallback",
    "render_verified",
]
