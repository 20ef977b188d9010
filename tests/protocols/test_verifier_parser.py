"""The Verifier protocol parser: shape, enums and holding the reply to the verified input (R-C-6, R-V-5, R-V-6)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diagnosis.v1 import contracts_pb2
from diagnosis_server.protocols.verifier import PARSER_SOURCE, parse_verifier_output
from tests.support.verdicts import CLASSIFICATION_WORDS

C = contracts_pb2.ClaimClassification
V = contracts_pb2.Verdict
F = contracts_pb2.FactSupport


def _evidence(claim_id: str, invocation: str, tool: str, path: str, text: str, index: int) -> Any:
    return contracts_pb2.VerifiedEvidence(
        claim_id=claim_id,
        source_invocation_id=invocation,
        tool_name=tool,
        raw_path=path,
        matched_text=text,
        checked_binding_index=index,
    )


def make_input() -> contracts_pb2.VerifierInput:
    """c1 (critical) and c3 (not critical) rest on inv-1 (get_logs); c2 (critical) on inv-2 (get_metrics)."""
    verified = contracts_pb2.VerifiedExecutorOutput(contract="executor_evidence_v2")
    for claim_id, statement, critical in (
        ("c1", "checkout-api logs show 500 responses from 10:02", True),
        ("c2", "db connection pool is saturated at 100 of 100", True),
        ("c3", "a deploy of checkout-api happened at 09:58", False),
    ):
        verified.claims.add(
            claim_id=claim_id, statement=statement, critical=critical, status=contracts_pb2.CLAIM_STATUS_CONFIRMED
        )
    return contracts_pb2.VerifierInput(
        diagnosis_context=contracts_pb2.DiagnosisContext(question="why 500s?", scenario="s", cycle=1),
        verified_executor_output=verified,
        verified_evidence=[
            _evidence("c1", "inv-1", "get_logs", "/lines/0", "HTTP 500", 0),
            _evidence("c2", "inv-2", "get_metrics", "/pool/in_use", "100", 1),
            _evidence("c3", "inv-1", "get_logs", "/lines/3", "deploy started", 2),
        ],
        verdict_ceiling=V.VERDICT_PASS,
    )


def check(claim_id: str, classification: str = "direct_observation", refs: Any = None, **extra: Any) -> Any:
    default_refs = {
        "c1": [{"source_invocation_id": "inv-1", "raw_path": "/lines/0"}],
        "c2": [
            {"claim_id": "c2", "source_invocation_id": "inv-2", "tool_name": "get_metrics", "raw_path": "/pool/in_use"}
        ],
        "c3": [{"claim_id": "c3"}],
    }
    return {
        "claim_id": claim_id,
        "classification": classification,
        "critical": True,
        "evidence_refs": default_refs.get(claim_id, []) if refs is None else refs,
        "rationale": f"checked {claim_id}",
        **extra,
    }


def reply(**overrides: Any) -> str:
    body: dict[str, Any] = {
        "claim_checks": [check("c1"), check("c2"), check("c3")],
        "verdict": "PASS",
        "groundedness_score": 0.9,
        "rationale": "all observed",
        "evidence_gaps": [],
    }
    body.update(overrides)
    return json.dumps(body)


def parse(raw: str) -> contracts_pb2.VerifierOutput:
    result = parse_verifier_output(raw, make_input())
    assert result.ok, result.error
    assert result.output is not None
    return result.output


def by_id(output: contracts_pb2.VerifierOutput) -> dict[str, contracts_pb2.ClaimCheck]:
    return {c.claim_id: c for c in output.claim_checks}


@pytest.mark.requirement("R-C-6")
def test_well_formed_reply_parses_into_verifier_output() -> None:
    output = parse(
        reply(evidence_gaps=[{"claim_id": "c2", "description": "no pool metrics before 10:00", "critical": True}])
    )
    assert [c.claim_id for c in output.claim_checks] == ["c1", "c2", "c3"]
    assert all(c.classification == C.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION for c in output.claim_checks)
    assert output.verdict == V.VERDICT_PASS
    assert output.groundedness_score == pytest.approx(0.9)
    assert output.rationale == "all observed"
    assert [(g.claim_id, g.description, g.critical) for g in output.evidence_gaps] == [
        ("c2", "no pool metrics before 10:00", True)
    ]
    assert not output.warnings
    assert not output.classification_changes
    assert by_id(output)["c1"].evidence_refs[0].raw_path == "/lines/0"


@pytest.mark.requirement("R-C-6")
@pytest.mark.parametrize(
    ("word", "expected"),
    [("PASS", V.VERDICT_PASS), ("low_confid", V.VERDICT_LOW_CONFID), ("Reject", V.VERDICT_REJECT)],
)
def test_verdict_words_are_case_insensitive(word: str, expected: int) -> None:
    assert parse(reply(verdict=word)).verdict == expected


@pytest.mark.requirement("R-C-6")
def test_classification_words_are_case_insensitive() -> None:
    output = parse(
        reply(
            claim_checks=[
                check("c1", "DIRECT_OBSERVATION"),
                check("c2", "Reasonable_Inference"),
                check("c3", "contradicted"),
            ]
        )
    )
    classes = {c.claim_id: c.classification for c in output.claim_checks}
    assert classes == {
        "c1": C.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION,
        "c2": C.CLAIM_CLASSIFICATION_REASONABLE_INFERENCE,
        "c3": C.CLAIM_CLASSIFICATION_CONTRADICTED,
    }


def test_fenced_reply_is_accepted() -> None:
    output = parse("```json\n" + reply() + "\n```\n")
    assert output.verdict == V.VERDICT_PASS


@pytest.mark.requirement("R-C-6")
@pytest.mark.parametrize(
    ("raw", "fragment"),
    [
        ("not json", "not valid JSON"),
        ("[1, 2]", "not an object"),
        (reply(verdict="MAYBE"), "verdict"),
        (reply(verdict="UNSPECIFIED"), "verdict"),
        (reply(verdict=2), "verdict"),
        (json.dumps({"claim_checks": [], "groundedness_score": 0.5}), "verdict: missing"),
        (reply(groundedness_score="0.9"), "groundedness_score"),
        (reply(groundedness_score=True), "groundedness_score"),
        (reply(groundedness_score=1.5), "groundedness_score"),
        (reply(groundedness_score=-0.01), "groundedness_score"),
        (reply().replace("0.9", "NaN"), "not valid JSON"),
        (json.dumps({"verdict": "PASS", "groundedness_score": 0.5}), "claim_checks: missing"),
        (reply(claim_checks={"c1": "direct_observation"}), "claim_checks: expected an array, got object"),
        (reply(claim_checks=["c1"]), "claim_checks[0]: expected an object, got string"),
        (reply(claim_checks=[check("c1", "certain")]), "classification"),
        (reply(claim_checks=[check("c1", "unspecified")]), "classification"),
        (reply(claim_checks=[{"claim_id": "c1", "critical": True}]), "claim_checks[0].classification: missing"),
        (reply(claim_checks=[{"classification": "unsupported"}]), "claim_checks[0].claim_id: missing"),
        (reply(claim_checks=[check("c1", critical="yes")]), "critical"),
        (
            reply(claim_checks=[check("c1", refs="inv-1")]),
            "claim_checks[0].evidence_refs: expected an array, got string",
        ),
        (
            reply(claim_checks=[check("c1", refs=["inv-1"])]),
            "claim_checks[0].evidence_refs[0]: expected an object, got string",
        ),
        (
            reply(claim_checks=[check("c1", refs=[{"invocation": "inv-1"}])]),
            "evidence_refs[0].invocation: unknown field",
        ),
        (
            reply(claim_checks=[check("c1", refs=[{"raw_path": 3}])]),
            "evidence_refs[0].raw_path: expected a string, got number",
        ),
        (reply(claim_checks=[check("c1", confidence=0.3)]), "claim_checks[0].confidence: unknown field"),
        (reply(reasoning="hidden"), "reasoning: unknown field"),
        (reply(evidence_gaps=["no pool metrics"]), "evidence_gaps[0]: expected an object, got string"),
        (reply(evidence_gaps=[{"description": 5}]), "evidence_gaps[0].description: expected a string, got number"),
        (reply(rationale=["a"]), "rationale: expected a string, got array"),
        (
            reply(facts_checked=[{"claim_id": "c1", "fact": "x", "classification": "maybe"}]),
            "facts_checked[0].classification: expected 'direct_evidence'",
        ),
        (
            reply(facts_checked=[{"claim_id": "c1", "classification": "direct_evidence"}]),
            "facts_checked[0].fact: missing",
        ),
    ],
)
def test_malformed_reply_is_invalid_output(raw: str, fragment: str) -> None:
    result = parse_verifier_output(raw, make_input())
    assert not result.ok
    assert result.output is None
    assert fragment in result.error


@pytest.mark.requirement("R-V-5")
def test_ref_matching_no_verified_evidence_is_dropped_and_check_downgraded() -> None:
    output = parse(
        reply(claim_checks=[check("c1", refs=[{"source_invocation_id": "inv-999"}]), check("c2"), check("c3")])
    )
    c1 = by_id(output)["c1"]
    assert list(c1.evidence_refs) == []
    assert c1.classification == C.CLAIM_CLASSIFICATION_UNSUPPORTED
    assert any("inv-999" in w and "matches no verified evidence" in w for w in output.warnings)
    (change,) = output.classification_changes
    assert change.claim_id == "c1"
    assert change.from_classification == C.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION
    assert change.to_classification == C.CLAIM_CLASSIFICATION_UNSUPPORTED
    assert change.source == PARSER_SOURCE
    assert change.reason


@pytest.mark.requirement("R-V-5")
@pytest.mark.parametrize(
    "ref",
    [
        {"claim_id": "c1", "source_invocation_id": "inv-1", "tool_name": "get_logs", "raw_path": "/lines/1"},
        # Empty strings count as fields not given: a ref giving nothing.
        {"claim_id": "", "source_invocation_id": "", "tool_name": "", "raw_path": ""},
    ],
    ids=["one-wrong-field", "empty-string-fields"],
)
def test_ref_matching_no_verified_evidence_leaves_no_support(ref: dict[str, str]) -> None:
    output = parse(reply(claim_checks=[check("c1", refs=[ref]), check("c2"), check("c3")]))
    assert by_id(output)["c1"].classification == C.CLAIM_CLASSIFICATION_UNSUPPORTED


@pytest.mark.requirement("R-V-5")
def test_ref_giving_no_field_matches_nothing() -> None:
    output = parse(reply(claim_checks=[check("c1", refs=[{}]), check("c2"), check("c3")]))
    assert by_id(output)["c1"].classification == C.CLAIM_CLASSIFICATION_UNSUPPORTED
    assert any("matches no verified evidence" in w for w in output.warnings)


@pytest.mark.requirement("R-V-5")
@pytest.mark.parametrize(
    "ref",
    [
        {"claim_id": "c2"},
        {"source_invocation_id": "inv-2"},
        {"tool_name": "get_metrics"},
        {"claim_id": "c3", "raw_path": "/lines/3"},
    ],
)
def test_ref_to_another_claims_evidence_is_dropped(ref: dict[str, str]) -> None:
    output = parse(reply(claim_checks=[check("c1", refs=[ref]), check("c2"), check("c3")]))
    c1 = by_id(output)["c1"]
    assert list(c1.evidence_refs) == []
    assert c1.classification == C.CLAIM_CLASSIFICATION_UNSUPPORTED
    assert any("other claims" in w for w in output.warnings)


@pytest.mark.requirement("R-V-5")
def test_a_ref_to_another_claims_evidence_is_dropped_with_this_warning() -> None:
    """The warning is persisted with the evaluation (R-P-1): its words are the record."""
    output = parse(reply(claim_checks=[check("c1", refs=[{"claim_id": "c2"}]), check("c2"), check("c3")]))
    assert list(output.warnings) == [
        "claim 'c1': evidence ref {claim_id='c2'} matches only other claims' verified evidence; dropped"
    ]


@pytest.mark.requirement("R-V-5")
@pytest.mark.parametrize(
    "ref",
    [
        {"claim_id": "c1"},
        {"tool_name": "get_logs"},  # matches c1's and c3's items: one of them is c1's
        {"source_invocation_id": "inv-1", "raw_path": "/lines/0"},
        {"claim_id": "c1", "source_invocation_id": "inv-1", "tool_name": "get_logs", "raw_path": "/lines/0"},
    ],
)
def test_ref_matching_the_claims_own_evidence_is_kept(ref: dict[str, str]) -> None:
    output = parse(reply(claim_checks=[check("c1", refs=[ref]), check("c2"), check("c3")]))
    c1 = by_id(output)["c1"]
    assert len(c1.evidence_refs) == 1
    assert c1.classification == C.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION
    assert not output.classification_changes


@pytest.mark.requirement("R-V-5")
def test_only_bad_refs_are_dropped_from_a_mixed_list() -> None:
    refs = [{"source_invocation_id": "inv-404"}, {"claim_id": "c1"}, {"claim_id": "c2"}]
    output = parse(reply(claim_checks=[check("c1", refs=refs), check("c2"), check("c3")]))
    c1 = by_id(output)["c1"]
    assert [r.claim_id for r in c1.evidence_refs] == ["c1"]
    assert c1.classification == C.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION
    assert len(output.warnings) == 2


@pytest.mark.requirement("R-V-5")
def test_direct_observation_without_refs_is_downgraded() -> None:
    output = parse(reply(claim_checks=[check("c1", refs=[]), check("c2"), check("c3")]))
    assert by_id(output)["c1"].classification == C.CLAIM_CLASSIFICATION_UNSUPPORTED
    assert [ch.claim_id for ch in output.classification_changes] == ["c1"]


@pytest.mark.requirement("R-V-5")
@pytest.mark.parametrize("classification", ["reasonable_inference", "overstated", "external_unknown", "contradicted"])
def test_other_classifications_without_refs_stay(classification: str) -> None:
    output = parse(reply(claim_checks=[check("c1", classification, refs=[]), check("c2"), check("c3")]))
    assert by_id(output)["c1"].classification == C.Value("CLAIM_CLASSIFICATION_" + classification.upper())
    assert not output.classification_changes


def test_critical_comes_from_the_verified_claim_never_the_model() -> None:
    output = parse(
        reply(claim_checks=[check("c1", critical=False), check("c2", critical=False), check("c3", critical=True)])
    )
    assert {c.claim_id: c.critical for c in output.claim_checks} == {"c1": True, "c2": True, "c3": False}


def test_verified_claim_without_check_gets_an_unsupported_check() -> None:
    output = parse(reply(claim_checks=[check("c1"), check("c2")]))
    c3 = by_id(output)["c3"]
    assert c3.classification == C.CLAIM_CLASSIFICATION_UNSUPPORTED
    assert c3.critical is False
    assert any("c3" in w and "no claim check" in w for w in output.warnings)
    (change,) = output.classification_changes
    assert (change.claim_id, change.from_classification, change.to_classification, change.source) == (
        "c3",
        C.CLAIM_CLASSIFICATION_UNSPECIFIED,
        C.CLAIM_CLASSIFICATION_UNSUPPORTED,
        PARSER_SOURCE,
    )


def test_empty_claim_checks_give_every_claim_an_unsupported_check() -> None:
    output = parse(reply(claim_checks=[]))
    assert [c.classification for c in output.claim_checks] == [C.CLAIM_CLASSIFICATION_UNSUPPORTED] * 3
    assert len(output.classification_changes) == 3


def test_check_of_unknown_claim_is_dropped() -> None:
    output = parse(reply(claim_checks=[check("c1"), check("c2"), check("c3"), check("c9", refs=[{"claim_id": "c1"}])]))
    assert [c.claim_id for c in output.claim_checks] == ["c1", "c2", "c3"]
    assert any("c9" in w and "unknown claim" in w for w in output.warnings)


def test_repeated_check_keeps_the_first() -> None:
    """The repeat is dropped and the checks after it are still read (c2 and c3 keep their own checks)."""
    output = parse(reply(claim_checks=[check("c1", "overstated"), check("c1"), check("c2"), check("c3")]))
    assert [(c.claim_id, c.classification) for c in output.claim_checks] == [
        ("c1", C.CLAIM_CLASSIFICATION_OVERSTATED),
        ("c2", C.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION),
        ("c3", C.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION),
    ]
    assert list(output.warnings) == ["repeated claim check for claim 'c1'; the first is kept"]
    assert not output.classification_changes


@pytest.mark.requirement("R-V-6")
def test_facts_checked_are_derived_when_the_model_gave_none() -> None:
    output = parse(
        reply(claim_checks=[check("c1"), check("c2", "overstated"), check("c3", "contradicted")], facts_checked=[])
    )
    assert [(f.claim_id, f.support) for f in output.facts_checked] == [
        ("c1", F.FACT_SUPPORT_DIRECT_EVIDENCE),
        ("c2", F.FACT_SUPPORT_INDIRECT_SUPPORT),
        ("c3", F.FACT_SUPPORT_CONTRADICTED),
    ]
    assert output.facts_checked[0].fact == "checkout-api logs show 500 responses from 10:02"


@pytest.mark.requirement("R-V-6")
def test_derived_facts_follow_the_downgraded_classification() -> None:
    output = parse(reply(claim_checks=[check("c1", refs=[]), check("c2"), check("c3")]))
    assert output.facts_checked[0].support == F.FACT_SUPPORT_NO_EVIDENCE


@pytest.mark.requirement("R-V-6")
def test_given_facts_are_kept_for_verified_claims_only() -> None:
    facts = [
        {"claim_id": "c1", "fact": "500s from 10:02", "classification": "direct_evidence"},
        {"claim_id": "c7", "fact": "made up", "classification": "direct_evidence"},
        {"claim_id": "c2", "fact": "pool saturated", "classification": "INDIRECT_SUPPORT"},
    ]
    output = parse(reply(facts_checked=facts))
    assert [(f.claim_id, f.fact, f.support) for f in output.facts_checked] == [
        ("c1", "500s from 10:02", F.FACT_SUPPORT_DIRECT_EVIDENCE),
        ("c2", "pool saturated", F.FACT_SUPPORT_INDIRECT_SUPPORT),
    ]
    assert any("c7" in w for w in output.warnings)


@pytest.mark.requirement("R-V-5")
def test_given_direct_evidence_fact_of_a_downgraded_claim_is_lowered() -> None:
    facts = [{"claim_id": "c1", "fact": "500s", "classification": "direct_evidence"}]
    output = parse(reply(claim_checks=[check("c1", refs=[]), check("c2"), check("c3")], facts_checked=facts))
    assert [(f.claim_id, f.support) for f in output.facts_checked] == [("c1", F.FACT_SUPPORT_NO_EVIDENCE)]
    assert any("lowered" in w for w in output.warnings)


def test_evidence_gaps_are_kept_as_given() -> None:
    gaps = [
        {"claim_id": "c9", "description": "unknown claim", "critical": True},
        {"description": "   ", "critical": False},
        {"description": "no traces"},
    ]
    output = parse(reply(evidence_gaps=gaps))
    assert [(g.claim_id, g.description, g.critical) for g in output.evidence_gaps] == [
        ("c9", "unknown claim", True),
        ("", "   ", False),
        ("", "no traces", False),
    ]


# ---------------------------------------------------------------- properties

_REF_VALUES = {
    "claim_id": ["c1", "c2", "c3", "c9", ""],
    "source_invocation_id": ["inv-1", "inv-2", "inv-9"],
    "tool_name": ["get_logs", "get_metrics", "get_traces"],
    "raw_path": ["/lines/0", "/lines/3", "/pool/in_use", "/x"],
}
_refs = st.lists(
    st.fixed_dictionaries({}, optional={k: st.sampled_from(v) for k, v in _REF_VALUES.items()}), max_size=3
)
_checks = st.lists(
    st.fixed_dictionaries(
        {
            "claim_id": st.sampled_from(["c1", "c2", "c3", "c4"]),
            "classification": st.sampled_from(CLASSIFICATION_WORDS),
            "critical": st.booleans(),
            "evidence_refs": _refs,
        }
    ),
    max_size=6,
)


@pytest.mark.requirement("R-V-5")
@settings(max_examples=150, deadline=None)
@given(checks=_checks, verdict=st.sampled_from(["PASS", "LOW_CONFID", "REJECT"]), score=st.floats(0, 1))
def test_property_parsed_checks_hold_to_the_verified_input(
    checks: list[dict[str, Any]], verdict: str, score: float
) -> None:
    """Whatever the model says: one check a verified claim, critical from the claim, every kept ref matching
    the claim's own verified evidence, and no direct_observation without such a ref."""
    verifier_input = make_input()
    result = parse_verifier_output(
        json.dumps({"claim_checks": checks, "verdict": verdict, "groundedness_score": score}), verifier_input
    )
    assert result.ok, result.error
    assert result.output is not None
    claims = {c.claim_id: c for c in verifier_input.verified_executor_output.claims}
    assert [c.claim_id for c in result.output.claim_checks] == list(claims)
    for parsed in result.output.claim_checks:
        assert parsed.critical == claims[parsed.claim_id].critical
        for ref in parsed.evidence_refs:
            given_fields = {k: getattr(ref, k) for k in _REF_VALUES if getattr(ref, k)}
            assert given_fields
            assert any(
                item.claim_id == parsed.claim_id and all(getattr(item, k) == v for k, v in given_fields.items())
                for item in verifier_input.verified_evidence
            )
        if parsed.classification == C.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION:
            assert parsed.evidence_refs
    assert len(result.output.facts_checked) == len(claims)


@settings(max_examples=200, deadline=None)
@given(
    raw=st.one_of(
        st.text(max_size=200),
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=10),
            lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
            max_leaves=20,
        ).map(json.dumps),
    )
)
def test_malformed_input_never_raises(raw: str) -> None:
    result = parse_verifier_output(raw, make_input())
    assert result.ok == (result.output is not None)
    assert result.ok or result.error
