"""Invariants every analyzer finding must keep, checked without the code under test.

A binding (R-C-1) names an invocation, its tool, an RFC 6901 JSON Pointer into that invocation's output and a
matched text that is a verbatim substring of the value found there (a string as is, any other value as its
compact JSON text). The Gatekeeper passes only such bindings (R-GK-3, R-GK-4, R-GK-5) and the Verifier reads
nothing else (R-C-5, R-V-5); a statement whose facts are not in its matched texts fabricates them (R-V-4).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from diagnosis.v1 import contracts_pb2
from diagnosis_server.agents.heuristic.findings import Finding
from diagnosis_server.agents.heuristic.observations import Binding, Observation
from diagnosis_server.verification.derivability import derive

DIRECT = contracts_pb2.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION
_MISSING = object()


def resolve_pointer(document: object, pointer: str) -> object:
    """The value an RFC 6901 JSON Pointer names in ``document``; ``KeyError`` when it names nothing."""
    if pointer == "":
        return document
    if not pointer.startswith("/"):
        raise KeyError(f"not a JSON Pointer: {pointer!r}")
    value = document
    for raw in pointer[1:].split("/"):
        token = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(value, dict):
            if token not in value:
                raise KeyError(f"{pointer}: no member {token!r}")
            value = value[token]
        elif isinstance(value, list):
            if not token.isdigit() or (token != "0" and token.startswith("0")) or int(token) >= len(value):
                raise KeyError(f"{pointer}: no element {token!r}")
            value = value[int(token)]
        else:
            raise KeyError(f"{pointer}: {token!r} below a scalar")
    return value


def text_at(value: object) -> str:
    """The text a matched text is taken from: a string itself, anything else its compact JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, sort_keys=True)


def check_binding(binding: Binding, observations: Sequence[Observation]) -> None:
    by_id = {obs.invocation_id: obs for obs in observations}
    assert binding.invocation_id in by_id, f"binding to an invocation that was not made: {binding}"
    obs = by_id[binding.invocation_id]
    assert binding.tool_name == obs.tool_name, binding
    assert binding.matched_text, f"empty matched text: {binding}"
    value = resolve_pointer(obs.output, binding.raw_path)
    assert binding.matched_text in text_at(value), f"{binding.matched_text!r} is not at {binding.raw_path}"


def assert_bound(findings: Iterable[Finding], observations: Sequence[Observation]) -> None:
    """Every binding of every finding resolves, with its matched text verbatim at its path."""
    for finding in findings:
        assert finding.bindings, f"a finding with no evidence: {finding.statement}"
        for binding in finding.bindings:
            check_binding(binding, observations)


def assert_direct(findings: Iterable[Finding]) -> None:
    """Each finding's statement is a direct observation of its own matched texts (R-V-1): nothing it names,
    quotes or counts is missing from them (R-V-4)."""
    for finding in findings:
        texts = [b.matched_text for b in finding.bindings]
        # Each bound scalar as the guard reads it too: named by its pointer ("ready: true").
        fields = [f"{b.raw_path.rsplit('/', 1)[-1]}: {b.matched_text}" for b in finding.bindings]
        derivation = derive(finding.statement, texts, bound=[*texts, *fields], fields=fields)
        assert derivation.classification == DIRECT, (finding.statement, derivation.reason())


def assert_sound(findings: Iterable[Finding], observations: Sequence[Observation]) -> None:
    findings = list(findings)
    assert_bound(findings, observations)
    assert_direct(findings)


def sound(findings: Iterable[Finding], observations: Sequence[Observation]) -> list[Finding]:
    """``findings`` as a list, after ``assert_sound``: for tests that go on to assert what was found."""
    found = list(findings)
    assert_sound(found, observations)
    return found


def one(findings: Iterable[Finding], kind: str) -> Finding:
    matching = [f for f in findings if f.kind == kind]
    assert len(matching) == 1, [(f.kind, f.service) for f in findings]
    return matching[0]


def kinds(findings: Iterable[Finding]) -> set[str]:
    return {f.kind for f in findings}
