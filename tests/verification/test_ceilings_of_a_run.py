"""``Ceilings`` reads a verified input once for all its claims: each claim's ceiling is the one the module's rules give
it alone (R-V-1..R-V-5), whichever claims were asked about before it and in whatever order.

The reference below is the rules written out claim by claim on plain lists: the claim's own matched texts, the
other claims' ones, its bound values and the question as grounding; then the bidi, instruction and failed-binding
caps, each only when it lowers the derivation's classification.
"""

from __future__ import annotations

import random

import pytest

from diagnosis.v1 import contracts_pb2 as c
from diagnosis_server.gatekeeper.rules import INSTRUCTION_TEXT, MATCHED_TEXT
from diagnosis_server.verification.classification_ceiling import Ceiling, Ceilings, claim_ceiling, rank
from diagnosis_server.verification.derivability import derive

UNSUPPORTED = c.CLAIM_CLASSIFICATION_UNSUPPORTED
QUESTION = "why is checkout-api failing since 10:02?"

# Matched texts and statements over the same few facts, so that claims find, borrow, miss and contradict them.
TEXTS = (
    "checkout-api OOMKilled",
    "Back-off restarting failed container checkout in pod checkout-api-7d9f",
    "redis refused connection: ECONNREFUSED 10.0.4.7:6379",
    "p99 latency 2337ms",
    "status=503 upstream=payments-api",
    "exit code 137",
    "",
    "pool exhausted (max=20)",
)
STATEMENTS = (
    "checkout-api was OOMKilled",
    "checkout-api was OOMKilled with exit code 137",
    "redis refused connections (ECONNREFUSED) so checkout-api failed",
    # A conclusion from its own evidence's facts (an inference); the one above borrows checkout-api (unsupported).
    "redis refused connections with ECONNREFUSED, which caused errors",
    "p99 latency reached 2337ms",
    "status=500 from payments-api",
    "the pool is exhausted at max=20 because of slow queries",
    "something is wrong",
    "checkout-api restarts \u202eevil\u202c after OOMKilled",
    "payments-api answers 503",
    "exit code 139 was seen",
    # "quuxbasket" is in a bound value only: the value grounds the word (direct), without it the claim says more.
    "redis refused connection with ECONNREFUSED while reading quuxbasket",
)
VALUES = (
    "2026-11-30T10:02:11Z ERROR checkout-api OOMKilled container memory limit 512Mi",
    "redis refused connection: ECONNREFUSED 10.0.4.7:6379 while reading quuxbasket",
)


def _reference(claim: c.Claim, vi: c.VerifierInput, values: dict[tuple[str, str], str]) -> Ceiling:
    own = [e for e in vi.verified_evidence if e.claim_id == claim.claim_id]
    if not own:
        return Ceiling(UNSUPPORTED, "no verified evidence for this claim", False)
    others = [e.matched_text for e in vi.verified_evidence if e.claim_id != claim.claim_id]
    bound = [values[k] for e in own if (k := (e.source_invocation_id, e.raw_path)) in values]
    # Each bound scalar as "name: value", named by its pointer's last key ("lines"); the tool and that key are
    # names the binding gives.
    fields = [f"lines: {values.get((e.source_invocation_id, e.raw_path), e.matched_text)}" for e in own]
    fields = [f for f in fields if f != "lines: "]
    # The whole value at a bound pointer, of which the matched text is an excerpt, is the claim's own evidence too.
    wholes = [v for e in own if (v := values.get((e.source_invocation_id, e.raw_path))) and v != e.matched_text]
    derivation = derive(
        claim.statement,
        [*(e.matched_text for e in own), *wholes],
        run_texts=others,
        grounding=bound,
        question=QUESTION,
        bound=[*bound, *fields],
        fields=fields,
        names=[n for e in own for n in (e.tool_name, "lines")],
    )
    ceiling = Ceiling(derivation.classification, derivation.reason(), derivation.fabricated)
    if rank(ceiling.classification) <= rank(UNSUPPORTED):
        return ceiling
    audit = vi.gatekeeper_audit.checked_bindings
    if any(ch in claim.statement for ch in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"):
        return Ceiling(UNSUPPORTED, "its statement holds bidi control characters", ceiling.fabricated)
    if any(
        0 <= e.checked_binding_index < len(audit) and INSTRUCTION_TEXT in audit[e.checked_binding_index].warning_rules
        for e in own
    ):
        return Ceiling(
            UNSUPPORTED, "its evidence reads as an instruction to the diagnosis, not as an observation", False
        )
    if any(b.claim_id == claim.claim_id and not b.passed for b in audit):
        return Ceiling(UNSUPPORTED, "a binding of this claim failed the Gatekeeper", False)
    return ceiling


def _verifier_input(rng: random.Random) -> tuple[c.VerifierInput, dict[tuple[str, str], str]]:
    claims = [
        c.Claim(claim_id=f"c{i}", statement=rng.choice(STATEMENTS), critical=True, status=c.CLAIM_STATUS_CONFIRMED)
        for i in range(rng.randint(1, 6))
    ]
    audit: list[c.CheckedBinding] = []
    evidence: list[c.VerifiedEvidence] = []
    values: dict[tuple[str, str], str] = {}
    # A claim id may also have evidence and bindings without a claim of its own (and a claim none at all).
    for claim_id in [*(cl.claim_id for cl in claims), "c9"]:
        for k in range(rng.randint(0, 3)):
            passed = rng.random() < 0.8
            warning = [rng.choice((INSTRUCTION_TEXT, MATCHED_TEXT))] if passed and rng.random() < 0.25 else []
            audit.append(c.CheckedBinding(claim_id=claim_id, binding_index=k, passed=passed, warning_rules=warning))
            if not passed:
                continue
            item = c.VerifiedEvidence(
                claim_id=claim_id,
                source_invocation_id=f"inv-{rng.randint(1, 3)}",
                tool_name="logs.search",
                raw_path=f"/lines/{rng.randint(0, 2)}",
                matched_text=rng.choice(TEXTS),
                # Now and then an index out of the audit's range: it points at no binding.
                checked_binding_index=len(audit) - 1 if rng.random() < 0.9 else len(audit) + 5,
            )
            evidence.append(item)
            if rng.random() < 0.5:
                values[(item.source_invocation_id, item.raw_path)] = rng.choice(VALUES)
    rng.shuffle(evidence)
    vi = c.VerifierInput(
        diagnosis_context=c.DiagnosisContext(question=QUESTION),
        verified_executor_output=c.VerifiedExecutorOutput(claims=claims),
        verified_evidence=evidence,
        gatekeeper_audit=c.GatekeeperResult(checked_bindings=audit),
    )
    return vi, values


@pytest.mark.parametrize("seed", range(60))
def test_each_claims_ceiling_is_its_own_whatever_was_asked_before(seed: int) -> None:
    rng = random.Random(seed)
    vi, values = _verifier_input(rng)
    claims = list(vi.verified_executor_output.claims)
    ceilings = Ceilings(vi, values)
    for claim in [*claims, *reversed(claims)]:
        expected = _reference(claim, vi, values)
        assert ceilings.of(claim) == expected, claim.statement
        assert claim_ceiling(claim, vi, values) == expected


def test_the_generated_inputs_reach_every_cap_and_classification() -> None:
    """The cases above are not all alike: between them they lower claims by every cap and reach every class."""
    reasons: set[str] = set()
    classes: set[int] = set()
    for seed in range(60):
        vi, values = _verifier_input(random.Random(seed))
        ceilings = Ceilings(vi, values)
        for claim in vi.verified_executor_output.claims:
            ceiling = ceilings.of(claim)
            reasons.add(ceiling.reason)
            classes.add(ceiling.classification)
    assert {
        "its statement holds bidi control characters",
        "its evidence reads as an instruction to the diagnosis, not as an observation",
        "a binding of this claim failed the Gatekeeper",
        "no verified evidence for this claim",
    } <= reasons
    assert any(r.startswith("not bound: ") for r in reasons)  # a borrowed fact
    assert any(r.startswith("fabricated: ") for r in reasons)  # a fabricated one
    assert any(r.startswith("not observed: ") for r in reasons)  # a number no output holds
    assert any(r.startswith("blames ") for r in reasons)  # a cause its own evidence does not show
    assert {
        c.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION,
        c.CLAIM_CLASSIFICATION_REASONABLE_INFERENCE,
        c.CLAIM_CLASSIFICATION_UNSUPPORTED,
        c.CLAIM_CLASSIFICATION_CONTRADICTED,
    } <= classes


def test_a_bound_value_grounds_the_words_of_its_own_claim_only() -> None:
    """Two claims on the same refusal: the first's bound value names the quuxbasket, the second's does not;
    "quuxbasket" is grounded for the first (direct) and not for the second (overstated), asked in either order."""
    statement = "redis refused connection with ECONNREFUSED while reading quuxbasket"
    claims = [c.Claim(claim_id=i, statement=statement, critical=True) for i in ("c1", "c2")]
    evidence = [
        c.VerifiedEvidence(claim_id=i, source_invocation_id=f"inv-{i}", raw_path="/lines/0", matched_text=TEXTS[2])
        for i in ("c1", "c2")
    ]
    values = {("inv-c1", "/lines/0"): VALUES[1], ("inv-c2", "/lines/0"): TEXTS[2]}
    vi = c.VerifierInput(
        diagnosis_context=c.DiagnosisContext(question=QUESTION),
        verified_executor_output=c.VerifiedExecutorOutput(claims=claims),
        verified_evidence=evidence,
        gatekeeper_audit=c.GatekeeperResult(checked_bindings=[c.CheckedBinding(claim_id="c1", passed=True)]),
    )
    for order in (claims, claims[::-1]):
        ceilings = Ceilings(vi, values)
        got = {claim.claim_id: ceilings.of(claim).classification for claim in order}
        assert got == {"c1": c.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION, "c2": c.CLAIM_CLASSIFICATION_OVERSTATED}
