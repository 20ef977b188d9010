"""The Verifier-allowed material: the only claims, gaps and next steps an answer may show (R-R-3, R-A-1..3).

Statements come only from ``verifier_input.verified_executor_output`` (never raw Executor output), their
classifications from the guarded claim checks, gaps only from the Verifier's valid gaps. An observation and
a conclusion are different claims, and a claim is shown only in the section its classification and status
allow:

| verdict    | confirmed facts                 | likely cause (headline) | possible directions                     |
| ---------- | ------------------------------- | ----------------------- | --------------------------------------- |
| PASS       | direct_observation, confirmed   | reasonable_inference (*) | hypotheses (**), other inferences (*)  |
| LOW_CONFID | direct_observation, confirmed   | none                    | reasonable_inference (*), hypotheses (**) |
| REJECT     | direct_observation, confirmed   | none                    | none (no root-cause conclusion)         |

(*) only an inference that rests on a shown confirmed fact (they share a recorded value or record of one
output, or the fact's evidence holds what the inference names); it is shown as inferred from those facts,
never as one. Under LOW_CONFID an inference resting on its own verified evidence alone is a possible direction
too, shown with that evidence ("Possibly ...").
(**) a claim of status hypothesis classified direct_observation, or reasonable_inference resting on a fact.

Everything else is excluded: overstated, unsupported, external_unknown and contradicted claims, claims
without a check, repeated claim ids, and (in the guard) every Executor claim that did not reach the
Verifier. An unspecified or unknown effective verdict is treated as REJECT (fail closed).

Gaps keep their agent-written description for the Composer's choice only (redacted of excluded
statements); what the user reads of a gap is rendered from its structured fields. Next steps are the gaps'
suggested calls that the run did not make yet, with every argument grounded in what the run knows.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from google.protobuf import timestamp_pb2

from diagnosis.v1 import contracts_pb2
from diagnosis_server.composition.suggestions import OwnPhrase, RecordedCall, Suggestion, suggestions_for
from diagnosis_server.conversions import EnumType, JsonObject, JsonValue, enum_short_name
from diagnosis_server.text.normalize import compact, display_line, display_text, normalize
from diagnosis_server.verification.derivability import concrete_facts
from diagnosis_server.verification.verdict import valid_evidence_gaps

_C = contracts_pb2.ClaimClassification
_V = contracts_pb2.Verdict

# The generated enum wrapper as conversions.EnumType (cast through Any: its Name() takes ValueType).
_VERDICT_ENUM: EnumType = cast(Any, contracts_pb2.Verdict)

_REDACTED = "[an unverified claim]"
MAX_QUOTES = 3
_KNOWN = frozenset({_V.VERDICT_PASS, _V.VERDICT_LOW_CONFID, _V.VERDICT_REJECT})


@dataclass(frozen=True, slots=True)
class Quote:
    """One verified evidence item of a claim, as it is shown: what was observed, and where."""

    source_invocation_id: str
    tool_name: str
    raw_path: str
    matched_text: str
    observed_at: timestamp_pb2.Timestamp | None = None

    def to_proto(self) -> contracts_pb2.EvidenceQuote:
        quote = contracts_pb2.EvidenceQuote(
            source_invocation_id=self.source_invocation_id,
            tool_name=self.tool_name,
            raw_path=self.raw_path,
            matched_text=self.matched_text,
        )
        if self.observed_at is not None:
            quote.observed_at.CopyFrom(self.observed_at)
        return quote


@dataclass(frozen=True, slots=True)
class MaterialClaim:
    claim_id: str
    statement: str
    classification: contracts_pb2.ClaimClassification.ValueType
    critical: bool = False
    hypothesis: bool = False
    quotes: tuple[Quote, ...] = ()
    # For an inference: the confirmed facts it rests on.
    inferred_from: tuple[str, ...] = ()
    # How the answer names it (``display_label``): its id, or ``#N`` for an id that is more than a label.
    label: str = ""

    @property
    def inferred(self) -> bool:
        return self.classification == _C.CLAIM_CLASSIFICATION_REASONABLE_INFERENCE


@dataclass(frozen=True, slots=True)
class MaterialGap:
    gap_id: str
    claim_id: str
    critical: bool
    # Agent-written: given to the Composer to choose from (excluded statements redacted), never shown.
    description: str
    calls: tuple[contracts_pb2.SuggestedCall, ...] = ()


@dataclass(frozen=True, slots=True)
class AllowedMaterial:
    verdict: contracts_pb2.Verdict.ValueType
    question: str
    # Confirmed facts: direct observations of status confirmed.
    confirmable: tuple[MaterialClaim, ...]
    # PASS only: inferences resting on confirmed facts, one of which the answer names as its headline.
    causes: tuple[MaterialClaim, ...] = ()
    # Possible directions: hypotheses and (LOW_CONFID) inferences resting on confirmed facts.
    directions: tuple[MaterialClaim, ...] = ()
    # Only the Verifier's valid gaps.
    evidence_gaps: tuple[MaterialGap, ...] = ()
    next_steps: tuple[Suggestion, ...] = ()
    # Statements of verified claims the material does not allow (the guard's, never sent to the Composer).
    excluded: tuple[str, ...] = field(default=())
    # How the answer names each verified claim (``display_label``).
    labels: Mapping[str, str] = field(default_factory=dict)

    def label(self, claim_id: str) -> str:
        return self.labels.get(claim_id) or display_label(claim_id, 0)

    def to_json(self) -> JsonObject:
        """The Composer's input projection: the allowed material, nothing else (R-R-3)."""

        def claim_json(claim: MaterialClaim) -> JsonValue:
            out: JsonObject = {"claim_id": claim.claim_id, "statement": claim.statement, "critical": claim.critical}
            if claim.inferred_from:
                out["inferred_from"] = list[JsonValue](claim.inferred_from)
            if claim.hypothesis:
                out["hypothesis"] = True
            return out

        gaps: list[JsonValue] = [
            {"gap_id": g.gap_id, "claim_id": g.claim_id, "description": g.description, "critical": g.critical}
            for g in self.evidence_gaps
        ]
        steps: list[JsonValue] = [
            {"step_id": s.step_id, "text": s.text, "claim_ids": list[JsonValue](s.claim_ids)} for s in self.next_steps
        ]
        return {
            "verdict": enum_short_name(_VERDICT_ENUM, self.verdict),
            "question": self.question,
            "confirmed_facts": [claim_json(c) for c in self.confirmable],
            "likely_causes": [claim_json(c) for c in self.causes],
            "possible_directions": [claim_json(c) for c in self.directions],
            "evidence_gaps": gaps,
            "next_steps": steps,
        }

    @property
    def shown(self) -> tuple[MaterialClaim, ...]:
        return (*self.confirmable, *self.causes, *self.directions)

    def claim(self, claim_id: str) -> MaterialClaim | None:
        return next((c for c in self.shown if c.claim_id == claim_id), None)

    def allowed_claim_ids(self) -> frozenset[str]:
        """Claims the answer may cite and state: confirmed facts, likely causes and directions."""
        return frozenset(c.claim_id for c in self.shown)

    def gap_claim_ids(self) -> frozenset[str]:
        """Claims the Verifier's gaps name; an answer may name them beside a gap or next step, never state them."""
        return frozenset(gap.claim_id for gap in self.evidence_gaps if gap.claim_id)

    def allowed_statements(self) -> tuple[str, ...]:
        return tuple(c.statement for c in self.shown)

    def quoted_texts(self) -> tuple[str, ...]:
        return tuple(q.matched_text for c in self.shown for q in c.quotes)


# A plain label: a one- or two-letter prefix or one of the usual label words, then a number ("c3", "claim-12",
# "fact_2"); any other id ("rollbacknow-1", "restart-db-2") would put the agent's words in the answer.
_PLAIN_ID = re.compile(
    r"(?:[A-Za-z]{1,2}|claim|fact|cause|obs|ev|hyp|inf|dir|gap|sym|step|item|finding)[-_.]?[0-9]{1,6}[A-Za-z]?"
    r"|[0-9]{1,6}",
    re.IGNORECASE,
)


def display_label(claim_id: str, position: int) -> str:
    """How an answer names a claim: its id when the id is a plain label (``c3``, ``claim-12``), else ``#N``
    (its 1-based position in the verified output): an agent's id is never a way to put words in the answer."""
    return claim_id if _PLAIN_ID.fullmatch(claim_id) else f"#{position}"


def normalized_verdict(verdict: contracts_pb2.Verdict.ValueType) -> contracts_pb2.Verdict.ValueType:
    """PASS, LOW_CONFID or REJECT as given; anything else is REJECT (fail closed)."""
    return verdict if verdict in _KNOWN else _V.VERDICT_REJECT


def mentions(text: str, statement: str, *, covering: Iterable[str] = ()) -> bool:
    """Whether ``text`` holds ``statement``, compared in the one normalization and without whitespace (so
    spacing, invisible characters, homoglyphs, emphasis and line breaks change nothing).

    An occurrence that lies inside an occurrence of a ``covering`` statement containing it (an allowed
    statement that says the same and more) does not count. A blank statement is never mentioned.
    """
    needle = compact(statement)
    if not needle:
        return False
    haystack = compact(text)
    for cover in covering:
        folded = compact(cover)
        if folded and needle in folded:
            haystack = haystack.replace(folded, "\x00")
    return needle in haystack


def mentions_any(text: str, statements: Iterable[str], *, covering: Collection[str] = ()) -> bool:
    return any(mentions(text, statement, covering=covering) for statement in statements)


def _classifications(
    verifier_output: contracts_pb2.VerifierOutput,
) -> dict[str, contracts_pb2.ClaimClassification.ValueType]:
    out: dict[str, contracts_pb2.ClaimClassification.ValueType] = {}
    for check in verifier_output.claim_checks:
        out.setdefault(check.claim_id, check.classification)
    return out


def redact(text: str, excluded: Collection[str], allowed: Collection[str]) -> str | None:
    """``text`` with every excluded statement it holds replaced; None when it cannot be made safe."""
    if not mentions_any(text, excluded, covering=allowed):
        return text
    redacted = text
    for statement in excluded:
        words = normalize(statement).split()
        if not words:
            continue
        # The statement's words in order, whatever stands between them (spaces, invisible characters, emphasis).
        pattern = r"[\W_]*".join(re.escape(w) for w in words)
        redacted = re.sub(pattern, _REDACTED, normalize(redacted))
    return None if mentions_any(redacted, excluded, covering=allowed) else redacted


def _related(a: str, b: str) -> bool:
    """Two JSON Pointers of one output designate the same value, one inside the other, or values of one
    record (the same element of an array: ``/deploys/0/status`` and ``/deploys/0/version``)."""
    if a == b or a.startswith(b + "/") or b.startswith(a + "/") or not a or not b:
        return True
    common = []
    for x, y in zip(a.split("/")[1:], b.split("/")[1:], strict=False):
        if x != y:
            break
        common.append(x)
    return any(token.isdigit() for token in common)


def _rests_on(
    claim: contracts_pb2.Claim,
    claim_evidence: Sequence[contracts_pb2.VerifiedEvidence],
    facts: Sequence[MaterialClaim],
    evidence_of: dict[str, list[contracts_pb2.VerifiedEvidence]],
) -> tuple[str, ...]:
    """The confirmed facts an inference rests on: they share a recorded value or record with it, or their
    evidence holds a fact it names that its own evidence does not (a fact it takes from them)."""
    own = "\x00".join(compact(item.matched_text) for item in claim_evidence)
    named = [key for f in concrete_facts(claim.statement) if (key := compact(f)) and key not in own]
    out: list[str] = []
    for fact in facts:
        theirs = evidence_of.get(fact.claim_id, ())
        shared = any(
            mine.source_invocation_id == other.source_invocation_id and _related(mine.raw_path, other.raw_path)
            for mine in claim_evidence
            for other in theirs
        )
        held = "\x00".join(compact(other.matched_text) for other in theirs)
        if shared or any(key in held for key in named):
            out.append(fact.claim_id)
    return tuple(out)


def _quotes(evidence: Sequence[contracts_pb2.VerifiedEvidence], calls: dict[str, RecordedCall]) -> tuple[Quote, ...]:
    """The most telling evidence of a claim (its longest matched texts), in the claim's own order."""
    ranked = sorted(range(len(evidence)), key=lambda i: (-len(evidence[i].matched_text), i))[:MAX_QUOTES]
    quotes: list[Quote] = []
    for item in (evidence[i] for i in sorted(ranked)):
        call = calls.get(item.source_invocation_id)
        quotes.append(
            Quote(
                source_invocation_id=item.source_invocation_id,
                tool_name=item.tool_name,
                raw_path=item.raw_path,
                matched_text=display_text(item.matched_text),
                observed_at=call.started_at if call is not None else None,
            )
        )
    return tuple(quotes)


def allowed_material(
    *,
    verifier_input: contracts_pb2.VerifierInput,
    verifier_output: contracts_pb2.VerifierOutput,
    effective: contracts_pb2.Verdict.ValueType,
    recorded_calls: Sequence[RecordedCall] = (),
    known_values: Iterable[str] = (),
    tool_names: Collection[str] | None = None,
    own_phrase: OwnPhrase | None = None,
) -> AllowedMaterial:
    """What the Verifier allows an answer under the effective verdict to show (see the module table)."""
    verdict = normalized_verdict(effective)
    classifications = _classifications(verifier_output)
    calls = {call.invocation_id: call for call in recorded_calls}
    evidence_of: dict[str, list[contracts_pb2.VerifiedEvidence]] = {}
    for item in verifier_input.verified_evidence:
        evidence_of.setdefault(item.claim_id, []).append(item)

    counts: dict[str, int] = {}
    for claim in verifier_input.verified_executor_output.claims:
        counts[claim.claim_id] = counts.get(claim.claim_id, 0) + 1

    labels = {
        claim.claim_id: display_label(claim.claim_id, position)
        for position, claim in reversed(list(enumerate(verifier_input.verified_executor_output.claims, start=1)))
    }

    def material(claim: contracts_pb2.Claim, inferred_from: tuple[str, ...] = ()) -> MaterialClaim:
        return MaterialClaim(
            claim_id=claim.claim_id,
            statement=display_line(claim.statement),
            classification=classifications.get(claim.claim_id, _C.CLAIM_CLASSIFICATION_UNSPECIFIED),
            critical=claim.critical,
            hypothesis=claim.status == contracts_pb2.CLAIM_STATUS_HYPOTHESIS,
            quotes=_quotes(evidence_of.get(claim.claim_id, ()), calls),
            inferred_from=inferred_from,
            label=labels[claim.claim_id],
        )

    # Conclusions the guard lets through as possible directions only (``ClassificationChange.direction_only``).
    tentative = {
        change.claim_id
        for change in verifier_output.classification_changes
        if change.source == "guard" and change.direction_only
    }
    confirmable: list[MaterialClaim] = []
    pending: list[contracts_pb2.Claim] = []
    excluded: list[str] = []
    for claim in verifier_input.verified_executor_output.claims:
        classification = classifications.get(claim.claim_id, _C.CLAIM_CLASSIFICATION_UNSPECIFIED)
        if counts[claim.claim_id] != 1:
            excluded.append(claim.statement)  # a repeated claim id is never material
        elif claim.claim_id in tentative and verdict == _V.VERDICT_LOW_CONFID and evidence_of.get(claim.claim_id):
            # A conclusion resting on verified evidence that says more than it shows: a possibility, with its
            # evidence, never a fact or the likely cause.
            pending.append(claim)
        elif (
            classification == _C.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION
            and claim.status == contracts_pb2.CLAIM_STATUS_CONFIRMED
        ):
            confirmable.append(material(claim))
        elif classification in (
            _C.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION,
            _C.CLAIM_CLASSIFICATION_REASONABLE_INFERENCE,
        ):
            pending.append(claim)
        else:
            excluded.append(claim.statement)

    causes: list[MaterialClaim] = []
    directions: list[MaterialClaim] = []
    for claim in pending:
        classification = classifications[claim.claim_id]
        inferred_from: tuple[str, ...] = ()
        if claim.claim_id in tentative:
            directions.append(material(claim))
            continue
        if classification == _C.CLAIM_CLASSIFICATION_REASONABLE_INFERENCE:
            inferred_from = _rests_on(claim, evidence_of.get(claim.claim_id, ()), confirmable, evidence_of)
            if not inferred_from and not (verdict == _V.VERDICT_LOW_CONFID and evidence_of.get(claim.claim_id)):
                excluded.append(claim.statement)  # a conclusion that rests on no shown fact is not shown
                continue
            # Under LOW_CONFID a verified inference resting on its own verified evidence is a possible direction,
            # shown with that evidence, even when no fact of it is shown.
        shown = material(claim, inferred_from)
        if verdict == _V.VERDICT_REJECT:
            excluded.append(claim.statement)
        elif verdict == _V.VERDICT_PASS and shown.inferred and not shown.hypothesis:
            causes.append(shown)
        else:
            directions.append(shown)

    allowed_texts = [c.statement for c in (*confirmable, *causes, *directions)]
    gaps: list[MaterialGap] = []
    for gap in valid_evidence_gaps(verifier_output.evidence_gaps, verifier_input.verified_executor_output):
        description = redact(display_text(gap.description), excluded, allowed_texts)
        gaps.append(
            MaterialGap(
                gap_id=f"g{len(gaps) + 1}",
                claim_id=gap.claim_id,
                critical=gap.critical,
                description=description if description is not None else _REDACTED,
                calls=tuple(gap.next_calls),
            )
        )
    known = [
        verifier_input.diagnosis_context.question,
        *allowed_texts,
        *(q.matched_text for c in (*confirmable, *causes, *directions) for q in c.quotes),
        *known_values,
    ]
    steps = suggestions_for(
        verdict=verdict,
        gaps=gaps,
        causes=causes,
        directions=directions,
        recorded_calls=recorded_calls,
        known_values=known,
        tool_names=tool_names,
        label=lambda claim_id: labels.get(claim_id, claim_id),
        own_phrase=own_phrase,
    )
    return AllowedMaterial(
        verdict=verdict,
        question=display_text(verifier_input.diagnosis_context.question),
        confirmable=tuple(confirmable),
        causes=tuple(causes),
        directions=tuple(directions),
        evidence_gaps=tuple(gaps),
        next_steps=tuple(steps),
        excluded=tuple(s for s in excluded if s.strip()),
        labels=labels,
    )


def excluded_statements(
    *,
    verifier_input: contracts_pb2.VerifierInput | None,
    material: AllowedMaterial,
    executor_claims: Iterable[contracts_pb2.Claim] = (),
) -> tuple[str, ...]:
    """Statements of claims the material does not allow: verified ones, and every Executor claim that never
    reached the Verifier (a failed binding). An answer must never hold them."""
    allowed = {(c.claim_id, c.statement) for c in material.shown}
    claims = list(verifier_input.verified_executor_output.claims) if verifier_input is not None else []
    claims += list(executor_claims)
    out = [
        claim.statement
        for claim in claims
        if (claim.claim_id, display_line(claim.statement)) not in allowed and claim.statement.strip()
    ]
    return tuple(dict.fromkeys(out))
