"""The Composer guard: a Composer may choose among the allowed material and use nothing else (R-R-3, R-A-1..3).

No Composer text is shown (``composition.render`` renders the answer), but what the Composer tried is
judged, and a refused reply counts as its INVALID_OUTPUT: the node retries once, then falls back to the
deterministic rendering (R-A-5). Each violation names its rule:

- ``composer.citation``: an item cites a claim outside its section's allowed claims (a direction presented
  as a confirmed fact, an excluded claim), cites none, or names a gap or step the material does not hold;
  a headline that is not a likely cause;
- ``composer.directions_under_reject``: possible directions under REJECT (no root-cause conclusion, R-A-3);
- ``composer.cause_under_reject``: text that concludes a cause under REJECT;
- ``composer.invented_gap``: a gap the Verifier did not identify (R-A-2);
- ``composer.excluded_material``: text holding an excluded statement, however spelled (one normalization,
  across items, reordered), or a fact only excluded material names;
- ``composer.ungrounded_identifier``: text naming an identifier or quoted string that nothing allowed holds
  (a root cause no claim made).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from functools import cache

from diagnosis.v1 import contracts_pb2
from diagnosis_server.composition.material import AllowedMaterial, MaterialGap, mentions, mentions_any
from diagnosis_server.protocols.composer import ComposerParse
from diagnosis_server.text.language import causal_phrases, held_stems, stem, ungrounded_compound, vocabulary_words
from diagnosis_server.text.literal import literal_between
from diagnosis_server.text.normalize import compact, normalize, words
from diagnosis_server.verification.derivability import concrete_facts

_V = contracts_pb2.Verdict

CITATION = "composer.citation"
DIRECTIONS_UNDER_REJECT = "composer.directions_under_reject"
CAUSE_UNDER_REJECT = "composer.cause_under_reject"
INVENTED_GAP = "composer.invented_gap"
EXCLUDED_MATERIAL = "composer.excluded_material"
UNGROUNDED_IDENTIFIER = "composer.ungrounded_identifier"
RULES = (CITATION, DIRECTIONS_UNDER_REJECT, CAUSE_UNDER_REJECT, INVENTED_GAP, EXCLUDED_MATERIAL, UNGROUNDED_IDENTIFIER)

_NEGATION = re.compile(r"\b(?:no|not|cannot|can't|cant|never|without|nor|unable|neither|isn't|wasn't)\b")
# A negation counts only in the clause of the phrase it negates.
_CLAUSE = re.compile(r"[,;:.!?]|\bbut\b|\bhowever\b|\byet\b")
_NUMBER_ONLY = re.compile(r"[\d.,%]+[a-zA-Z]{0,3}")
_VERDICT_WORDS = ("PASS", "LOW_CONFID", "REJECT", "verdict")
_OVERLAP = 0.8
_MIN_WORDS = 3


@dataclass(frozen=True, slots=True)
class Violation:
    rule: str
    message: str


def _texts(output: contracts_pb2.ComposerOutput) -> list[tuple[str, str, str]]:
    """(list name, where, text) of every text of the reply."""
    out = [("summary", "summary", output.summary)]
    for name in ("confirmed_facts", "possible_directions", "evidence_gaps", "next_steps"):
        out.extend((name, f"{name}[{i}]", item.text) for i, item in enumerate(getattr(output, name)))
    return out


def _content_words(text: str) -> set[str]:
    return {w for w in words(text) if len(w) >= _MIN_WORDS}


def _holds_excluded(text: str, statement: str, allowed: Sequence[str]) -> bool:
    if mentions(text, statement, covering=allowed):
        return True
    wanted = _content_words(statement)
    if len(wanted) < _MIN_WORDS or any(wanted <= _content_words(a) for a in allowed):
        return False
    return len(wanted & _content_words(text)) >= _OVERLAP * len(wanted)


def _distinctive_facts(excluded: Iterable[str], allowed_haystack: str) -> list[re.Pattern[str]]:
    """Facts (identifiers, codes, quoted strings) that only excluded statements name, as whole-token patterns
    over normalized text."""
    out: dict[str, re.Pattern[str]] = {}
    for statement in excluded:
        for fact in concrete_facts(statement):
            key = normalize(fact)
            if len(key) >= 3 and _NUMBER_ONLY.fullmatch(fact) is None and compact(fact) not in allowed_haystack:
                out[key] = literal_between(key, r"(?<![a-z0-9])", r"(?![a-z0-9])")
    return list(out.values())


def _concludes(text: str) -> bool:
    """Causal or conclusive language that is not negated ("no root cause is given" does not conclude)."""
    normalized = normalize(text)
    for phrase in causal_phrases(text):
        # Every occurrence counts: "no root cause is confirmed, but the root cause is X" concludes.
        starts = [m.start() for m in re.finditer(re.escape(phrase), normalized)] or [0]
        if any(not _NEGATION.search(_CLAUSE.split(normalized[max(0, at - 40) : at])[-1]) for at in starts):
            return True
    return False


def _gap_for(item: contracts_pb2.ComposedItem, ref: str, gaps: Sequence[MaterialGap]) -> MaterialGap | None:
    if ref:
        return next((g for g in gaps if g.gap_id == ref), None)
    by_claim = [g for g in gaps if g.claim_id and g.claim_id in item.claim_ids]
    if by_claim:
        return by_claim[0]
    item_words = _content_words(item.text)
    best, score = None, 0.0
    for gap in gaps:
        gap_words = _content_words(gap.description)
        if not gap_words or not item_words:
            continue
        overlap = len(item_words & gap_words) / min(len(item_words), len(gap_words))
        if overlap > score:
            best, score = gap, overlap
    return best if score >= 0.5 else None


def _section_citations(
    name: str, items: Sequence[contracts_pb2.ComposedItem], allowed: Collection[str], what: str
) -> list[Violation]:
    """Each item of a section cites at least one claim, and only claims the section allows."""
    violations: list[Violation] = []
    for index, item in enumerate(items):
        if not item.claim_ids:
            violations.append(Violation(CITATION, f"{name}[{index}] cites no claim"))
        violations.extend(
            Violation(CITATION, f"{name}[{index}] cites a claim that is not {what}")
            for claim_id in item.claim_ids
            if claim_id not in allowed
        )
    return violations


def _citations(
    parse: ComposerParse, output: contracts_pb2.ComposerOutput, material: AllowedMaterial
) -> list[Violation]:
    confirmable = {c.claim_id for c in material.confirmable}
    directions = {c.claim_id for c in (*material.directions, *material.causes)}
    beside = material.allowed_claim_ids() | material.gap_claim_ids()
    unconfirmed = [c.statement for c in (*material.directions, *material.causes)]
    confirmed = [c.statement for c in material.confirmable]
    violations = _section_citations("confirmed_facts", output.confirmed_facts, confirmable, "a confirmed fact")
    for index, item in enumerate(output.confirmed_facts):
        if mentions_any(item.text, unconfirmed, covering=confirmed):
            violations.append(Violation(CITATION, f"confirmed_facts[{index}] states a claim that is not confirmed"))
    if material.verdict == _V.VERDICT_REJECT and output.possible_directions:
        violations.append(Violation(DIRECTIONS_UNDER_REJECT, "possible directions are not allowed under REJECT"))
    else:
        violations.extend(
            _section_citations("possible_directions", output.possible_directions, directions, "an allowed direction")
        )
    if parse.headline and parse.headline not in {c.claim_id for c in material.causes}:
        violations.append(Violation(CITATION, "the headline is not one of the likely causes the material allows"))
    for name in ("evidence_gaps", "next_steps"):
        for index, item in enumerate(getattr(output, name)):
            if any(claim_id not in beside for claim_id in item.claim_ids):
                violations.append(Violation(CITATION, f"{name}[{index}] cites a claim outside the allowed material"))
    step_ids = {s.step_id for s in material.next_steps}
    for (name, index), ref in parse.refs.items():
        known = {g.gap_id for g in material.evidence_gaps} if name == "evidence_gaps" else step_ids
        if name not in ("evidence_gaps", "next_steps") or ref not in known:
            violations.append(
                Violation(CITATION, f"{name}[{index}] refers to {ref!r}, which the material does not hold")
            )
    return violations


def _gaps(parse: ComposerParse, output: contracts_pb2.ComposerOutput, material: AllowedMaterial) -> list[Violation]:
    gaps = material.evidence_gaps
    if output.evidence_gaps and not gaps:
        return [Violation(INVENTED_GAP, "evidence gaps are listed but the Verifier identified none")]
    if len(output.evidence_gaps) > len(gaps):
        return [Violation(INVENTED_GAP, "more evidence gaps are listed than the Verifier identified")]
    return [
        Violation(INVENTED_GAP, f"evidence_gaps[{index}] is not one of the Verifier's gaps")
        for index, item in enumerate(output.evidence_gaps)
        if _gap_for(item, parse.refs.get(("evidence_gaps", index), ""), gaps) is None
    ]


@dataclass(frozen=True, slots=True)
class _Grounding:
    """What a text of one section may name: facts found in these texts, or words they (or the vocabulary) hold."""

    haystack: str
    texts: tuple[str, ...]

    @classmethod
    def of(cls, texts: Iterable[str]) -> _Grounding:
        """The run's ``texts``, and the neutral words every section may use (``_neutral``)."""
        kept = tuple(t for t in texts if t)
        neutral_haystack, neutral = _neutral()
        return cls("\x00".join(compact(t) for t in kept) + neutral_haystack, kept + neutral)

    def names(self, fact: str) -> bool:
        if compact(fact) in self.haystack:
            return True
        # A hyphenated word of plain parts ("crash-looping"): grounded when every part is.
        if any(ch.isdigit() for ch in fact):
            return False
        held = held_stems(self.texts)
        return all(stem(part) in held for part in ungrounded_compound(fact))


@cache
def _neutral() -> tuple[str, tuple[str, ...]]:
    """The vocabulary's and the verdicts' words, which ground any section's text: the same in every run, so
    their part of a haystack (each "\x00" and its compact form) is made once."""
    words = tuple(w for w in (*vocabulary_words(), *_VERDICT_WORDS) if w)
    return "".join("\x00" + compact(w) for w in words), words


def _grounding(material: AllowedMaterial, tool_names: Collection[str]) -> tuple[_Grounding, _Grounding]:
    """What a claim section's text, and a gap or step's text, may name (besides the neutral words)."""
    claims = [material.question, *material.allowed_statements(), *material.quoted_texts(), *tool_names]
    claims += [c.claim_id for c in material.shown]
    steps = [*claims, *(g.description for g in material.evidence_gaps), *(s.text for s in material.next_steps)]
    steps += [g.claim_id for g in material.evidence_gaps]
    return _Grounding.of(claims), _Grounding.of(steps)


def composer_output_violations(
    parse: ComposerParse,
    material: AllowedMaterial,
    *,
    excluded_statements: Collection[str] = (),
    tool_names: Collection[str] = (),
) -> list[Violation]:
    """Violations of the allowed material by a parsed Composer reply; empty means accepted.

    The reply's texts are never shown (``composition.render`` renders the answer from the material), so they are
    never a reason to refuse it: a reply is refused only for what it cites (an excluded or unknown claim, gap or
    step, a headline that is no likely cause) or for a verdict stronger than allowed (directions under REJECT).
    ``excluded_statements`` and ``tool_names`` are what ``text_findings`` reads.
    """
    output = parse.output
    if output is None:
        return [Violation(CITATION, "the reply did not parse")]
    return _citations(parse, output, material) + _gaps(parse, output, material)


def text_findings(
    parse: ComposerParse,
    material: AllowedMaterial,
    *,
    excluded_statements: Collection[str] = (),
    tool_names: Collection[str] = (),
) -> list[Violation]:
    """What the reply's texts hold that the material does not allow (an excluded statement, a fact only excluded
    claims name, an identifier nothing allowed holds, a cause concluded under REJECT): recorded for the audit,
    never a refusal, since no Composer text is shown."""
    output = parse.output
    if output is None:
        return []
    violations: list[Violation] = []
    allowed = material.allowed_statements()
    excluded = [s for s in (*excluded_statements, *material.excluded) if s.strip()]
    texts = _texts(output)
    joined = " ".join(text for _, _, text in texts)
    claims_grounding, steps_grounding = _grounding(material, tool_names)
    distinctive = _distinctive_facts(excluded, claims_grounding.haystack + "\x00" + steps_grounding.haystack)
    for statement in excluded:
        if any(_holds_excluded(text, statement, allowed) for _, _, text in texts) or mentions(
            joined, statement, covering=allowed
        ):
            violations.append(
                Violation(EXCLUDED_MATERIAL, "the reply holds the statement of a claim that is not allowed")
            )
            break
    joined_normal = normalize(joined)
    if any(fact.search(joined_normal) for fact in distinctive):
        violations.append(Violation(EXCLUDED_MATERIAL, "the reply names a fact that only excluded claims name"))
    for name, where, text in texts:
        grounding = steps_grounding if name in ("evidence_gaps", "next_steps") else claims_grounding
        unknown = [f for f in concrete_facts(text) if _NUMBER_ONLY.fullmatch(f) is None and not grounding.names(f)]
        if unknown:
            violations.append(Violation(UNGROUNDED_IDENTIFIER, f"{where} names what no allowed material holds"))
        if material.verdict == _V.VERDICT_REJECT and _concludes(text):
            violations.append(Violation(CAUSE_UNDER_REJECT, f"{where} concludes a cause under REJECT"))
    return violations


def composer_output_findings(
    parse: ComposerParse,
    material: AllowedMaterial,
    *,
    excluded_statements: Collection[str] = (),
    tool_names: Collection[str] = (),
) -> list[Violation]:
    """Every finding on a reply: the violations that refuse it, then what its (never shown) texts hold."""
    return composer_output_violations(
        parse, material, excluded_statements=excluded_statements, tool_names=tool_names
    ) + text_findings(parse, material, excluded_statements=excluded_statements, tool_names=tool_names)
