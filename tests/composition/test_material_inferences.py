"""Which confirmed facts an inference rests on, and what becomes of one that rests on none (R-A-2, R-R-3).

An inference is shown only as inferred from shown confirmed facts: facts it shares a record of one recorded
output with, or whose evidence holds a fact it names that its own evidence does not hold.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from tests.support.verdicts import DIRECT, INFERENCE

from ._inputs import HYPOTHESIS, LONE_INFERENCE, OOM, Spec, V, build

STATEMENT = "memory pressure on the node explains the symptoms"  # names no concrete fact
NAMING = "checkout-api containers were OOMKilled, which explains the observed symptoms"


@pytest.mark.requirement("R-A-2")
@pytest.mark.parametrize(
    ("statement", "bindings", "rests_on"),
    [
        # A value of the same record of the same output as the fact's "OOMKilled" (/events/0/reason).
        (STATEMENT, [("inv-1", "/events/0/message", "memory pressure")], ("c1",)),
        # The same output, another record: nothing shared.
        (STATEMENT, [("inv-1", "/events/3/message", "memory pressure")], ()),
        # The same path of another output: nothing shared.
        (STATEMENT, [("inv-2", "/events/0/reason", "memory pressure")], ()),
        # It names checkout-api, which only the fact's evidence holds: it takes that fact from it.
        (NAMING, [("inv-5", "/items/0/reason", "OOMKilled")], ("c1",)),
        # Its own evidence (another output) holds all it names: it takes nothing from the fact.
        (NAMING, [("inv-5", "/items/0/name", "checkout-api"), ("inv-5", "/items/0/reason", "OOMKilled")], ()),
    ],
)
def test_an_inference_rests_on_the_facts_it_shares_a_record_with_or_takes_a_named_fact_from(
    statement: str, bindings: Sequence[tuple[str, str, str]], rests_on: tuple[str, ...]
) -> None:
    inference = Spec("c3", statement, INFERENCE, bindings)
    material = build([OOM, inference], V.VERDICT_PASS).material
    assert [(c.claim_id, c.inferred_from) for c in material.causes] == ([("c3", rests_on)] if rests_on else [])
    assert (statement in material.excluded) is not bool(rests_on)


def test_an_inference_resting_on_nothing_excludes_only_itself() -> None:
    """The claims after it are still placed: a hypothesis that follows it is a possible direction."""
    material = build([OOM, LONE_INFERENCE, HYPOTHESIS], V.VERDICT_PASS).material
    assert [c.claim_id for c in material.directions] == ["c4"]
    assert LONE_INFERENCE.statement in material.excluded and HYPOTHESIS.statement not in material.excluded


def test_claims_without_verified_evidence_have_no_quotes_and_share_no_record() -> None:
    """``allowed_material`` takes any Verifier input: a claim with no verified evidence item has no quotes,
    a fact without one lends no record to an inference, and an inference without one rests only on the facts
    whose evidence holds what it names."""
    bare_fact = Spec("c2", "checkout-api pods were rescheduled", DIRECT, ())
    hypothesis = Spec("c4", "a deploy of checkout-api may be involved", DIRECT, (), hypothesis=True)
    inference = Spec("c5", "checkout-api containers were OOMKilled, which explains the 503s", INFERENCE, ())
    material = build([OOM, bare_fact, hypothesis, inference], V.VERDICT_PASS).material
    assert [(c.claim_id, c.quotes) for c in material.confirmable[1:]] == [("c2", ())]
    assert [(c.claim_id, c.quotes) for c in material.directions] == [("c4", ())]
    assert [(c.claim_id, c.inferred_from, c.quotes) for c in material.causes] == [("c5", ("c1",), ())]


@pytest.mark.requirement("R-A-2")
def test_under_low_confid_an_inference_on_its_own_evidence_is_a_possible_direction_with_that_evidence() -> None:
    """A verified inference whose only ground is its own verified evidence: under LOW_CONFID a possible direction,
    quoted with that evidence ("Possibly ..."); under PASS never a likely cause (it rests on no shown fact)."""
    from diagnosis_server.composition.render import answer_text, render_verified

    own = Spec("c5", LONE_INFERENCE.statement, INFERENCE, (("inv-9", "/x", "vault-7Q"),))
    low = build([OOM, own], V.VERDICT_LOW_CONFID).material
    assert [(c.claim_id, c.inferred_from) for c in low.directions] == [(own.claim_id, ())]
    text = answer_text(render_verified(low))
    assert f"Possibly: {own.statement}" in text
    assert '"vault-7Q" at /x' in text.split("Possibly: ", 1)[1]  # its evidence, quoted
    passed = build([OOM, own], V.VERDICT_PASS).material
    assert not passed.causes and own.statement in passed.excluded
    # Without a verified evidence item of its own it is no direction under LOW_CONFID either.
    bare = build([OOM, LONE_INFERENCE], V.VERDICT_LOW_CONFID).material
    assert not bare.directions and LONE_INFERENCE.statement in bare.excluded
