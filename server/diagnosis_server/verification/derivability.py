"""A deterministic derivability check of a claim against its verified evidence.

The claim's concrete facts (numbers with units, error codes, identifiers, quoted strings) are looked
up in the matched texts of its verified evidence: all found -> direct_observation; some ->
reasonable_inference; none -> unsupported; a fact that conflicts with the evidence (same key, another
value) -> contradicted. Pure: used by the embedded Verifier and as a guard beside a model Verifier.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from diagnosis.v1 import contracts_pb2

C = contracts_pb2.ClaimClassification

_QUOTED = re.compile(r"\"([^\"]{2,200})\"|'([^']{2,200})'|`([^`]{2,200})`")
_NUMBER = re.compile(
    r"(?<![\w.])(\d+(?:\.\d+)?)\s?(%|ms|s|m|h|d|[KMGT]i?B?|bytes|rps|req/s|connections|conns)?(?![\w.])",
    re.IGNORECASE,
)
# Identifiers worth checking: dotted/hyphenated/underscored names, CamelCase words with an inner
# capital (OOMKilled, BackOff), ALLCAPS codes of 3+ (ENOSPC, FATAL), and codes with digits (x509, E11000).
_IDENTIFIER = re.compile(
    r"\b([A-Za-z][A-Za-z0-9]*(?:[-_./:][A-Za-z0-9]+)+|[a-z]+[A-Z][A-Za-z0-9]*|[A-Z][a-z]+[A-Z][A-Za-z0-9]*"
    r"|[A-Z]{2,}[a-z]+[A-Za-z0-9]*"
    r"|[A-Z][A-Z0-9_]{2,}|[A-Za-z]+\d+[A-Za-z0-9]*)\b"
)
_KEY_VALUE = re.compile(r"\b([A-Za-z_][A-Za-z0-9_.-]{1,40})\s*(?:=|:)\s*\"?([A-Za-z0-9_.%/-]{1,60})\"?")
_STOP = frozenset({"HTTP", "API", "THE", "AND", "NOT", "FOR", "WITH"})


@dataclass(frozen=True, slots=True)
class Derivation:
    classification: int
    facts: tuple[str, ...]
    found: tuple[str, ...]
    conflicts: tuple[str, ...]

    @property
    def missing(self) -> tuple[str, ...]:
        return tuple(f for f in self.facts if f not in self.found)

    def reason(self) -> str:
        if self.conflicts:
            return f"evidence conflicts with {', '.join(self.conflicts)}"
        if not self.facts:
            return "the claim states no concrete fact to check"
        if not self.found:
            return f"none of {', '.join(self.facts)} is in the verified evidence"
        if self.missing:
            return f"found {', '.join(self.found)}; not found {', '.join(self.missing)}"
        return f"all of {', '.join(self.facts)} found in the verified evidence"


def _compact(text: str) -> str:
    return re.sub(r"\s+", "", text).lower()


def concrete_facts(statement: str) -> tuple[str, ...]:
    """The checkable facts of a statement, in order of appearance, without duplicates."""
    facts: list[str] = []
    quoted_spans: list[tuple[int, int]] = []
    for match in _QUOTED.finditer(statement):
        facts.append(next(g for g in match.groups() if g))
        quoted_spans.append(match.span())

    def outside_quotes(pos: int) -> bool:
        return all(not (start <= pos < end) for start, end in quoted_spans)

    for match in _IDENTIFIER.finditer(statement):
        word = match.group(1)
        if outside_quotes(match.start()) and word.upper() not in _STOP:
            facts.append(word)
    for match in _NUMBER.finditer(statement):
        if outside_quotes(match.start()):
            number, unit = match.group(1), match.group(2) or ""
            facts.append(f"{number}{unit}")
    seen: set[str] = set()
    unique: list[str] = []
    for fact in facts:
        key = _compact(fact)
        if key and key not in seen and not any(key in _compact(other) and key != _compact(other) for other in facts):
            seen.add(key)
            unique.append(fact)
    return tuple(unique)


def _key_values(text: str) -> dict[str, str]:
    return {k.lower(): v.lower() for k, v in _KEY_VALUE.findall(text)}


def derive(statement: str, matched_texts: Iterable[str]) -> Derivation:
    texts = [t for t in matched_texts if t]
    facts = concrete_facts(statement)
    haystack = _compact(" ".join(texts))
    found = tuple(f for f in facts if _compact(f) in haystack)
    claim_kv = _key_values(statement)
    evidence_kv: dict[str, str] = {}
    for text in texts:
        evidence_kv.update(_key_values(text))
    conflicts = tuple(
        f"{key}={value} (evidence: {evidence_kv[key]})"
        for key, value in claim_kv.items()
        if key in evidence_kv and evidence_kv[key] != value
    )
    if conflicts:
        classification = C.CLAIM_CLASSIFICATION_CONTRADICTED
    elif facts and len(found) == len(facts):
        classification = C.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION
    elif found:
        classification = C.CLAIM_CLASSIFICATION_REASONABLE_INFERENCE
    else:
        classification = C.CLAIM_CLASSIFICATION_UNSUPPORTED
    return Derivation(classification=classification, facts=facts, found=found, conflicts=conflicts)


def derive_claim(claim: contracts_pb2.Claim, evidence: Sequence[contracts_pb2.VerifiedEvidence]) -> Derivation:
    """Check one verified claim against the verified evidence items that belong to it."""
    return derive(claim.statement, (e.matched_text for e in evidence if e.claim_id == claim.claim_id))
