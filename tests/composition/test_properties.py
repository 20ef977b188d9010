"""Properties: no rendering ever holds a claim the material does not allow (R-A-1..5, R-R-3, R-R-5)."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st

from diagnosis.v1 import contracts_pb2
from diagnosis_server.composition.guard import guard_composer_output
from diagnosis_server.composition.material import allowed_material, excluded_statements
from diagnosis_server.composition.render import answer_text, render_pre_verification_fallback, render_verified

C = contracts_pb2.ClaimClassification
V = contracts_pb2.Verdict

CLASSIFICATIONS = [
    C.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION,
    C.CLAIM_CLASSIFICATION_REASONABLE_INFERENCE,
    C.CLAIM_CLASSIFICATION_OVERSTATED,
    C.CLAIM_CLASSIFICATION_UNSUPPORTED,
    C.CLAIM_CLASSIFICATION_EXTERNAL_UNKNOWN,
    C.CLAIM_CLASSIFICATION_CONTRADICTED,
]

# What the spec lets an answer cite under each effective verdict, written independently of the code:
# confirmed facts and possible directions together. Anything else (and everything under an unknown verdict
# beyond direct observations) must never show.
CITABLE = {
    V.VERDICT_PASS: {
        C.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION,
        C.CLAIM_CLASSIFICATION_REASONABLE_INFERENCE,
        C.CLAIM_CLASSIFICATION_OVERSTATED,
    },
    V.VERDICT_LOW_CONFID: {
        C.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION,
        C.CLAIM_CLASSIFICATION_REASONABLE_INFERENCE,
        C.CLAIM_CLASSIFICATION_OVERSTATED,
    },
    V.VERDICT_REJECT: {C.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION},
    V.VERDICT_UNSPECIFIED: {C.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION},
}

_WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ ", min_size=3, max_size=24)


@dataclass
class Case:
    verifier_input: contracts_pb2.VerifierInput
    verifier_output: contracts_pb2.VerifierOutput
    effective: int
    # claim id -> (statement, classification or None when the Verifier gave no check)
    claims: dict[str, tuple[str, int | None]]


@st.composite
def cases(draw: st.DrawFn) -> Case:
    count = draw(st.integers(min_value=1, max_value=6))
    verified = contracts_pb2.VerifiedExecutorOutput(contract="executor_evidence_v2")
    output = contracts_pb2.VerifierOutput(verdict=draw(st.sampled_from([1, 2, 3])), groundedness_score=0.7)
    claims: dict[str, tuple[str, int | None]] = {}
    for i in range(count):
        claim_id = f"c{i}"
        # Distinctive: the «i» marker keeps one statement from lying inside another or inside template text.
        statement = f"«{i}» {draw(_WORD)}"
        verified.claims.add(claim_id=claim_id, statement=statement, critical=draw(st.booleans()))
        classification = draw(st.none() | st.sampled_from(CLASSIFICATIONS))
        if classification is not None:
            output.claim_checks.add(claim_id=claim_id, classification=classification, critical=True)
        claims[claim_id] = (statement, classification)
    statements = [s for s, _ in claims.values()]
    for _ in range(draw(st.integers(min_value=0, max_value=4))):
        # Gaps may be blank, name unknown claims, or quote any claim's statement (in any case).
        quoted = draw(st.sampled_from(statements))
        description = draw(
            st.sampled_from(
                ["", "   ", "no metrics for the pool", f"nothing shows {quoted}", f"CHECK {quoted.upper()} FIRST"]
            )
        )
        output.evidence_gaps.add(
            claim_id=draw(st.sampled_from(["", "c0", f"c{count - 1}", "c-unknown"])),
            description=description,
            critical=draw(st.booleans()),
        )
    verifier_input = contracts_pb2.VerifierInput(
        diagnosis_context=contracts_pb2.DiagnosisContext(question="why?", scenario="s", cycle=1),
        verified_executor_output=verified,
        verdict_ceiling=V.VERDICT_PASS,
    )
    effective = draw(st.sampled_from([V.VERDICT_PASS, V.VERDICT_LOW_CONFID, V.VERDICT_REJECT, V.VERDICT_UNSPECIFIED]))
    return Case(verifier_input, output, effective, claims)


@settings(max_examples=300, deadline=None)
@given(case=cases())
def test_r_a_1_property_rendering_never_holds_a_disallowed_claim(case: Case) -> None:
    """(a) Whatever the classifications, gaps and verdict: a claim the spec does not let the answer cite
    never appears in the deterministic rendering, in any case."""
    material = allowed_material(
        verifier_input=case.verifier_input,
        verifier_output=case.verifier_output,
        effective=case.effective,  # type: ignore[arg-type]
    )
    text = answer_text(render_verified(material)).casefold()
    for statement, classification in case.claims.values():
        if classification is None or classification not in CITABLE[case.effective]:
            assert statement.casefold() not in text
    # Contradicted, unsupported and external_unknown claims never show under any verdict.
    for statement, classification in case.claims.values():
        if classification in (
            C.CLAIM_CLASSIFICATION_CONTRADICTED,
            C.CLAIM_CLASSIFICATION_UNSUPPORTED,
            C.CLAIM_CLASSIFICATION_EXTERNAL_UNKNOWN,
        ):
            assert statement.casefold() not in text


@settings(max_examples=300, deadline=None)
@given(case=cases())
def test_r_a_5_property_the_rendering_passes_the_guard(case: Case) -> None:
    """The post-verification fallback is itself a valid answer over the allowed material."""
    material = allowed_material(
        verifier_input=case.verifier_input,
        verifier_output=case.verifier_output,
        effective=case.effective,  # type: ignore[arg-type]
    )
    excluded = excluded_statements(verifier_input=case.verifier_input, material=material)
    output = render_verified(material)
    assert guard_composer_output(output, material, excluded_statements=excluded) == []
    if material.verdict == V.VERDICT_REJECT:
        assert not output.possible_directions


_REASON_CODES = st.sampled_from(
    [
        "EXECUTOR_INVALID_OUTPUT",
        "TOOL_BLOCKED",
        "GATEKEEPER_REJECT",
        "NO_VERIFIED_EVIDENCE",
        "VERIFIER_FAILED",
        "PLANNER_FAILED",
        "RECURSION_LIMIT",
    ]
) | st.text(max_size=40)


@settings(max_examples=300, deadline=None)
@given(case=cases(), code=_REASON_CODES, code_is_a_statement=st.booleans())
def test_r_a_4_property_pre_verification_fallback_holds_no_executor_claim(
    case: Case, code: str, code_is_a_statement: bool
) -> None:
    """(b) The pre-verification fallback holds no Executor claim text at all, whatever the reason code
    (even one that carries a claim's statement), and cites no claim id."""
    if code_is_a_statement:
        code = next(iter(case.claims.values()))[0]
    output = render_pre_verification_fallback(code)
    text = answer_text(output).casefold()
    for statement, _ in case.claims.values():
        assert statement.casefold() not in text
    assert output.verdict == V.VERDICT_UNSPECIFIED
    assert output.source == contracts_pb2.COMPOSER_SOURCE_PRE_VERIFICATION_FALLBACK
    assert not output.confirmed_facts
    assert not output.possible_directions
    for field in ("evidence_gaps", "next_steps"):
        assert all(not item.claim_ids for item in getattr(output, field))
