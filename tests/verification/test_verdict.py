"""Effective verdict and evidence-retry eligibility (R-V-1..4, R-V-7, R-R-4, R-R-5)."""

from __future__ import annotations

import itertools
from typing import TypeAlias

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diagnosis.v1 import contracts_pb2
from diagnosis_server.verification.verdict import (
    claims_verdict,
    effective_verdict,
    evidence_retry_eligible,
    lowest_verdict,
    retry_context_for,
    valid_evidence_gaps,
)
from tests.support.verdicts import CONTRADICTED as CO
from tests.support.verdicts import DIRECT as DO
from tests.support.verdicts import EXTERNAL as EU
from tests.support.verdicts import INFERENCE as RI
from tests.support.verdicts import OVERSTATED as OV
from tests.support.verdicts import UNSUPPORTED as UN
from tests.support.verdicts import C

V = contracts_pb2.Verdict
Verdict: TypeAlias = contracts_pb2.Verdict.ValueType

UNSPEC = C.CLAIM_CLASSIFICATION_UNSPECIFIED
ALL_CLASSES = (DO, RI, OV, UN, EU, CO)

PASS = V.VERDICT_PASS
LOW = V.VERDICT_LOW_CONFID
REJECT = V.VERDICT_REJECT
UNSET = V.VERDICT_UNSPECIFIED
ALL_VERDICTS = (UNSET, PASS, LOW, REJECT)


def checks(*classes: int, critical: bool = True) -> list[contracts_pb2.ClaimCheck]:
    return [
        contracts_pb2.ClaimCheck(claim_id=f"c{i}", classification=c, critical=critical)  # type: ignore[arg-type]
        for i, c in enumerate(classes)
    ]


# ---------------------------------------------------------------- claims_verdict, exhaustive

# One critical check: (classification, verdict at score 0.9, verdict at score 0.3).
SINGLE = [
    (DO, PASS, LOW),
    (RI, LOW, LOW),
    (OV, LOW, LOW),
    (UN, LOW, LOW),
    (EU, LOW, LOW),
    (CO, REJECT, REJECT),
]


@pytest.mark.parametrize(("cls", "high", "low"), SINGLE)
def test_claims_verdict_single_critical_check(cls: int, high: int, low: int) -> None:
    assert claims_verdict(checks(cls), 0.9) == high
    assert claims_verdict(checks(cls), 0.3) == low


# Two critical checks, every unordered pair, at score 0.9.
PAIRS = {
    (DO, DO): PASS,
    (DO, RI): PASS,  # R-V-1: direct_observation or reasonable_inference, at least one direct
    (DO, OV): LOW,  # R-V-2
    (DO, UN): LOW,
    (DO, EU): LOW,
    (DO, CO): REJECT,  # R-V-4
    (RI, RI): LOW,  # R-V-3
    (RI, OV): LOW,
    (RI, UN): LOW,
    (RI, EU): LOW,
    (RI, CO): REJECT,
    (OV, OV): LOW,
    (OV, UN): LOW,
    (OV, EU): LOW,
    (OV, CO): REJECT,
    (UN, UN): LOW,
    (UN, EU): LOW,
    (UN, CO): REJECT,
    (EU, EU): LOW,
    (EU, CO): REJECT,
    (CO, CO): REJECT,
}


def test_pair_table_is_exhaustive() -> None:
    assert set(PAIRS) == set(itertools.combinations_with_replacement(ALL_CLASSES, 2))


@pytest.mark.parametrize(("pair", "expected"), sorted(PAIRS.items()))
def test_claims_verdict_every_pair_of_critical_checks(pair: tuple[int, int], expected: int) -> None:
    assert claims_verdict(checks(*pair), 0.9) == expected
    assert claims_verdict(checks(*reversed(pair)), 0.9) == expected


@pytest.mark.requirement("R-V-1")
def test_pass_needs_groundedness_at_least_half() -> None:
    assert claims_verdict(checks(DO, RI), 0.5) == PASS
    assert claims_verdict(checks(DO, RI), 0.4999) == LOW
    assert claims_verdict(checks(DO), float("nan")) == LOW
    assert claims_verdict(checks(DO), 1.5) == LOW


@pytest.mark.requirement("R-V-1")
def test_pass_needs_a_critical_direct_observation() -> None:
    only_inference = checks(RI) + checks(DO, critical=False)
    assert claims_verdict(only_inference, 1.0) == LOW


@pytest.mark.requirement("R-V-2")
def test_a_critical_overstated_claim_prevents_pass() -> None:
    assert claims_verdict(checks(DO, DO, OV), 1.0) == LOW


@pytest.mark.requirement("R-V-3")
def test_only_reasonable_inference_is_low_confid() -> None:
    assert claims_verdict(checks(RI, RI, RI), 1.0) == LOW


@pytest.mark.requirement("R-V-4")
def test_a_critical_contradiction_rejects_whatever_else() -> None:
    assert claims_verdict(checks(DO, DO, DO, CO), 1.0) == REJECT


def test_non_critical_checks_do_not_decide() -> None:
    mixed = checks(DO) + checks(CO, UN, OV, critical=False)
    assert claims_verdict(mixed, 0.9) == PASS


def test_no_critical_check_is_never_pass() -> None:
    assert claims_verdict([], 1.0) == LOW
    assert claims_verdict(checks(DO, DO, critical=False), 1.0) == LOW


@pytest.mark.parametrize("critical", [True, False])
def test_unspecified_classification_anywhere_rejects(critical: bool) -> None:
    assert claims_verdict(checks(DO) + checks(UNSPEC, critical=critical), 1.0) == REJECT
    assert claims_verdict(checks(DO) + checks(C.ValueType(42), critical=critical), 1.0) == REJECT


# ---------------------------------------------------------------- effective_verdict, exhaustive

CLAIM_SETS = {PASS: checks(DO, RI), LOW: checks(DO, UN), REJECT: checks(DO, CO)}
RANK = {REJECT: 0, LOW: 1, PASS: 2}


def _expected(model: Verdict, claims: Verdict, ceiling: Verdict) -> Verdict:
    if UNSET in (model, ceiling):
        return REJECT
    return min((model, claims, ceiling), key=RANK.__getitem__)


@pytest.mark.requirement("R-V-7")
@pytest.mark.parametrize(
    ("ceiling", "model", "claims"), list(itertools.product(ALL_VERDICTS, ALL_VERDICTS, (PASS, LOW, REJECT)))
)
def test_effective_verdict_every_ceiling_model_and_claims_verdict(
    ceiling: Verdict, model: Verdict, claims: Verdict
) -> None:
    assert claims_verdict(CLAIM_SETS[claims], 0.9) == claims
    got = effective_verdict(model_verdict=model, checks=CLAIM_SETS[claims], groundedness_score=0.9, ceiling=ceiling)
    assert got == _expected(model, claims, ceiling)


@pytest.mark.requirement("R-V-7")
def test_low_confid_ceiling_turns_model_pass_into_low_confid() -> None:
    got = effective_verdict(model_verdict=PASS, checks=checks(DO, DO), groundedness_score=1.0, ceiling=LOW)
    assert got == LOW


@pytest.mark.requirement("R-V-7")
def test_claims_override_an_optimistic_model() -> None:
    got = effective_verdict(model_verdict=PASS, checks=checks(DO, UN), groundedness_score=1.0, ceiling=PASS)
    assert got == LOW
    got = effective_verdict(model_verdict=PASS, checks=checks(DO), groundedness_score=0.2, ceiling=PASS)
    assert got == LOW


@pytest.mark.requirement("R-V-7")
def test_a_pessimistic_model_verdict_stands() -> None:
    got = effective_verdict(model_verdict=REJECT, checks=checks(DO, DO), groundedness_score=1.0, ceiling=PASS)
    assert got == REJECT


@pytest.mark.requirement("R-V-7")
@pytest.mark.parametrize("bad", [UNSET, V.ValueType(7), V.ValueType(-1)])
def test_unknown_verdict_values_fail_closed(bad: int) -> None:
    assert effective_verdict(model_verdict=bad, checks=checks(DO), groundedness_score=1.0, ceiling=PASS) == REJECT  # type: ignore[arg-type]
    assert effective_verdict(model_verdict=PASS, checks=checks(DO), groundedness_score=1.0, ceiling=bad) == REJECT  # type: ignore[arg-type]
    assert lowest_verdict() == REJECT


_check = st.builds(
    lambda cls, critical: contracts_pb2.ClaimCheck(claim_id="c", classification=cls, critical=critical),
    st.sampled_from((*ALL_CLASSES, UNSPEC)),
    st.booleans(),
)


@pytest.mark.requirement("R-V-7")
@settings(max_examples=500, deadline=None)
@given(
    model=st.sampled_from(ALL_VERDICTS),
    ceiling=st.sampled_from(ALL_VERDICTS),
    claim_checks=st.lists(_check, max_size=6),
    score=st.floats(min_value=0, max_value=1),
)
def test_property_effective_never_exceeds_the_ceiling_nor_the_evidence(
    model: Verdict, ceiling: Verdict, claim_checks: list[contracts_pb2.ClaimCheck], score: float
) -> None:
    got = effective_verdict(model_verdict=model, checks=claim_checks, groundedness_score=score, ceiling=ceiling)
    assert got in (PASS, LOW, REJECT)
    if ceiling in RANK:
        assert RANK[got] <= RANK[ceiling]
    else:
        assert got == REJECT
    if model in RANK:
        assert RANK[got] <= RANK[model]
    critical = [c.classification for c in claim_checks if c.critical]
    if got == PASS:
        # R-V-1, as a property: never PASS with a critical claim other than direct/inference, never without a
        # critical direct observation, never under 0.5, never with an unspecified classification anywhere.
        assert all(c in (DO, RI) for c in critical)
        assert DO in critical
        assert score >= 0.5
        assert all(c.classification != UNSPEC for c in claim_checks)
    if CO in critical:
        assert got == REJECT


# ---------------------------------------------------------------- evidence gaps and retry (R-R-4)


def _verified(*claim_ids: str) -> contracts_pb2.VerifiedExecutorOutput:
    out = contracts_pb2.VerifiedExecutorOutput(contract="executor_evidence_v2")
    for claim_id in claim_ids:
        out.claims.add(claim_id=claim_id, statement=f"statement {claim_id}", critical=True)
    return out


def gap(description: str, claim_id: str = "", critical: bool = True) -> contracts_pb2.EvidenceGap:
    return contracts_pb2.EvidenceGap(claim_id=claim_id, description=description, critical=critical)


VERIFIED = _verified("c1", "c2")


def test_valid_evidence_gaps() -> None:
    gaps = [
        gap("no pool metrics", "c2"),
        gap("no traces"),
        gap("   ", "c1"),
        gap(""),
        gap("about an unknown claim", "c9"),
        gap("minor", "c1", critical=False),
    ]
    assert [g.description for g in valid_evidence_gaps(gaps, VERIFIED)] == ["no pool metrics", "no traces", "minor"]


CRITICAL_GAP = [gap("no pool metrics", "c2")]
NON_CRITICAL_GAP = [gap("no pool metrics", "c2", critical=False)]
INVALID_CRITICAL_GAPS = [gap("  ", "c1"), gap("unknown claim", "c9")]


@pytest.mark.requirement("R-R-4")
@pytest.mark.parametrize(
    ("effective", "ceiling", "gaps", "count", "eligible"),
    [
        (LOW, PASS, CRITICAL_GAP, 0, True),
        (LOW, PASS, NON_CRITICAL_GAP + CRITICAL_GAP, 0, True),
        (LOW, PASS, CRITICAL_GAP, 1, False),  # one evidence retry at most
        (LOW, PASS, CRITICAL_GAP, 2, False),
        (LOW, LOW, CRITICAL_GAP, 0, False),  # LOW_CONFID caused by the Gatekeeper ceiling
        (LOW, PASS, NON_CRITICAL_GAP, 0, False),
        (LOW, PASS, INVALID_CRITICAL_GAPS, 0, False),
        (LOW, PASS, [], 0, False),
        (REJECT, PASS, CRITICAL_GAP, 0, False),  # R-R-5: REJECT never retries
        (PASS, PASS, CRITICAL_GAP, 0, False),
        (UNSET, PASS, CRITICAL_GAP, 0, False),
        (LOW, UNSET, CRITICAL_GAP, 0, False),
        (LOW, REJECT, CRITICAL_GAP, 0, False),
    ],
)
def test_evidence_retry_eligibility(
    effective: int, ceiling: int, gaps: list[contracts_pb2.EvidenceGap], count: int, eligible: bool
) -> None:
    got = evidence_retry_eligible(
        effective=effective,  # type: ignore[arg-type]
        ceiling=ceiling,  # type: ignore[arg-type]
        gaps=gaps,
        verified_output=VERIFIED,
        evidence_retry_count=count,
    )
    assert got is eligible


@pytest.mark.requirement("R-R-4")
@settings(max_examples=100, deadline=None)
@given(score=st.floats(min_value=0, max_value=1))
def test_no_groundedness_threshold_decides_a_retry(score: float) -> None:
    """The retry decision takes no score at all; the effective verdict alone carries it (R-R-4)."""
    got = effective_verdict(model_verdict=LOW, checks=checks(DO, UN), groundedness_score=score, ceiling=PASS)
    assert got == LOW
    assert evidence_retry_eligible(
        effective=got, ceiling=PASS, gaps=CRITICAL_GAP, verified_output=VERIFIED, evidence_retry_count=0
    )


@pytest.mark.requirement("R-R-4")
def test_retry_context_holds_only_the_critical_valid_gaps() -> None:
    gaps = [*CRITICAL_GAP, *NON_CRITICAL_GAP, *INVALID_CRITICAL_GAPS, gap("no traces")]
    context = retry_context_for(gaps, VERIFIED, evidence_retry_count=1)
    assert context.evidence_retry_count == 1
    assert [(g.claim_id, g.description) for g in context.evidence_gaps] == [
        ("c2", "no pool metrics"),
        ("", "no traces"),
    ]
    assert all(g.critical for g in context.evidence_gaps)
