"""The fail-closed property: whatever the agents write, every run ends stored and safe.

Hostile Executor, Verifier, Composer and Planner outputs (see ``strategies``) run through the real graph
and a real store; every example must end SUCCESS with a safe answer, no statement outside the allowed
material (R-A-1..R-A-4), verdicts under the ceiling (R-V-7), traceable evidence (R-C-5, R-V-5), and
nothing raw persisted (R-P-5, R-S-4).
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings

from diagnosis.v1 import contracts_pb2
from diagnosis_server.store import open_repository
from tests.golden.leaks import Haystack

from .examples import PROPERTY_EXAMPLES, PROPERTY_TIMEOUT_S
from .harness import MEMORY_URL, Case, LoopHarness, RecordingStore, assert_safe_run, golden_case, run_case
from .strategies import ZERO_WIDTH, QuotingProvider, Tokens, disguises, hostile_case


@pytest.fixture(scope="module")
def harness() -> Iterator[LoopHarness]:
    loop = LoopHarness()
    try:
        yield loop
    finally:
        loop.close()


@pytest.mark.requirement("R-A-1")
@pytest.mark.property
@pytest.mark.timeout(PROPERTY_TIMEOUT_S)
@settings(
    max_examples=PROPERTY_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
)
@given(case=hostile_case())
def test_hostile_agents_never_break_a_run_or_leak_into_the_answer(harness: LoopHarness, case: Case) -> None:
    """R-A-1, R-A-4, R-A-6, R-P-5, R-P-6, R-S-4, R-V-7: fail closed on any agent output."""
    store = RecordingStore(harness.repository)
    outcome = harness.run(run_case(case, store, wrap=QuotingProvider))
    assert_safe_run(case, outcome)


@pytest.mark.requirement("R-A-2")
async def test_a_possible_direction_is_never_presented_as_a_confirmed_fact() -> None:
    """R-A-2: a Composer that states a possible direction under "confirmed facts", citing a confirmable claim's
    id, is refused by the guard; the fallback rendering keeps the direction a direction."""
    case = golden_case("low-confid-to-composer")
    verifier = json.loads(case.outputs["verifier"][0])
    verifier["claim_checks"][1]["classification"] = "direct_observation"
    verifier["claim_checks"][1]["evidence_refs"] = [{"claim_id": "c2", "raw_path": "/events/0/reason"}]
    case.outputs["verifier"] = [json.dumps(verifier)]
    executor = json.loads(case.outputs["executor"][0])
    executor["claims"][1]["status"] = "hypothesis"  # c2: a possible direction
    case.outputs["executor"] = [json.dumps(executor)]
    direction = "checkout-api containers are OOMKilled at the 512Mi memory limit"
    composer = {
        "summary": "Partial evidence.",
        "confirmed_facts": [{"text": f"{direction}.", "claim_ids": ["c1"]}],
        "possible_directions": [{"text": direction, "claim_ids": ["c2"]}],
    }
    case.outputs["composer"] = [json.dumps(composer)] * 2
    repository = await open_repository(MEMORY_URL)
    try:
        outcome = await run_case(case, RecordingStore(repository))
    finally:
        await repository.close()
    run = outcome.stored
    assert run is not None
    assert_safe_run(case, outcome)
    assert run.verdict == contracts_pb2.VERDICT_LOW_CONFID
    assert run.answer.source == contracts_pb2.COMPOSER_SOURCE_POST_VERIFICATION_FALLBACK
    assert all(direction not in item.text for item in run.answer.confirmed_facts)
    assert [item.text for item in run.answer.possible_directions] == [direction]


@pytest.mark.requirement("R-A-1")
@pytest.mark.parametrize("zero_width", ZERO_WIDTH)
def test_every_disguise_of_a_token_is_seen_through(zero_width: str) -> None:
    """R-A-1: the invariant above searches after normalization, so each disguise the hostile Composer uses
    (spacing, zero-width characters, soft hyphen, fullwidth, homoglyphs, markdown, reordering, splitting over
    two items, a paraphrase keeping the token) is still found, and only the token itself is."""
    tokens = Tokens(1234)
    token, other = tokens.new("s"), tokens.new("s")
    for texts in disguises(f"checkout-api pods are OOMKilled {token}", token, zero_width):
        answer = Haystack("Diagnosis below.\n\nNext steps:\n" + "\n".join(f"- {t}" for t in texts))
        assert token in answer, texts
        assert other not in answer, texts
