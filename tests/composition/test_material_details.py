"""Details of the allowed material and its renderings that decide what an answer says (R-A-2, R-A-5, R-R-3).

Which records two evidence pointers share (an inference rests on the facts it shares a record with), how an
excluded statement is redacted from a gap, how a claim is named, how the Verifier's gaps are recognized in a
Composer reply, how a quote is cut, and the fallback notes.
"""

from __future__ import annotations

import pytest

from diagnosis.v1 import contracts_pb2, run_pb2
from diagnosis_server.composition.composer_rules import _gap_for
from diagnosis_server.composition.material import (
    AllowedMaterial,
    MaterialGap,
    _related,
    excluded_statements,
    mentions,
    redact,
)
from diagnosis_server.composition.notes import RunRecord, _gatekeeper_note, post_verification_notes
from diagnosis_server.composition.render import MAX_QUOTE_CHARS, _quoted
from diagnosis_server.graph.routing import RoutingError, outcomes_of, route
from diagnosis_server.protocols.fields import FieldError, next_calls
from tests.support.verdicts import DIRECT

from ._inputs import ALL, HYPOTHESIS, OOM, UNSUPPORTED_CLAIM, Spec, V, build, call


@pytest.mark.parametrize(
    ("a", "b", "related"),
    [
        ("/a", "/a", True),
        ("/a/b", "/a", True),
        ("/a", "/a/b", True),
        ("", "/x", True),
        ("/x", "", True),
        ("/deploys/0/status", "/deploys/0/version", True),
        ("/a/x", "/a/y", False),
        ("/deploys/0/a", "/deploys/1/a", False),
        ("/ab", "/a", False),
        ("/a", "/ab", False),
        ("/a/0", "/b/0", False),
        ("/a/0/x/1", "/a/0/y/2", True),
        ("/a/b/c", "/a/b/d", False),
    ],
)
def test_two_pointers_of_one_output_are_related_when_they_share_a_value_or_record(
    a: str, b: str, related: bool
) -> None:
    assert _related(a, b) is related


def test_redaction_keeps_a_statement_an_allowed_one_covers_and_skips_blank_ones() -> None:
    assert (
        redact("the disk is full on db-1", ["disk is full"], ["the disk is full on db-1"]) == "the disk is full on db-1"
    )
    assert redact("see: disk is full", ["  ", "disk is full"], []) == "see: [an unverified claim]"
    assert redact("nothing excluded here", ["disk is full"], []) == "nothing excluded here"


def test_a_claim_is_named_by_its_label_or_by_position_zero_when_unknown() -> None:
    material = AllowedMaterial(
        verdict=contracts_pb2.VERDICT_PASS, question="q", confirmable=(), labels={"a claim id": "#3", "c1": "c1"}
    )
    assert material.label("a claim id") == "#3"
    assert material.label("c1") == "c1"
    assert material.label("other id x") == "#0"
    assert material.label("c9") == "c9"


GAPS = (
    MaterialGap("g1", "", True, "a b"),  # no content word of three letters
    MaterialGap("g2", "", True, "memory disk"),
    MaterialGap("g3", "c4", True, "deploy history"),
)


def _item(text: str, *claim_ids: str) -> contracts_pb2.ComposedItem:
    return contracts_pb2.ComposedItem(text=text, claim_ids=list(claim_ids))


def test_a_reply_gap_is_recognized_by_ref_claim_or_words() -> None:
    assert _gap_for(_item("x"), "g3", GAPS) is GAPS[2]
    assert _gap_for(_item("x"), "g9", GAPS) is None
    assert _gap_for(_item("anything", "c4"), "", GAPS) is GAPS[2]
    assert _gap_for(_item("memory network"), "", GAPS) is GAPS[1]  # half the words: enough
    assert _gap_for(_item("network zones"), "", GAPS) is None
    assert _gap_for(_item("ab"), "", GAPS) is None


def test_a_quote_is_cut_at_its_bound_and_names_its_path() -> None:
    exact = contracts_pb2.EvidenceQuote(matched_text="x" * MAX_QUOTE_CHARS, raw_path="/a")
    longer = contracts_pb2.EvidenceQuote(matched_text="y" * (MAX_QUOTE_CHARS + 1))
    assert _quoted(exact) == '"' + "x" * MAX_QUOTE_CHARS + '" at /a'
    assert _quoted(longer) == '"' + "y" * (MAX_QUOTE_CHARS - 1) + '…" at /'
    assert _quoted(contracts_pb2.EvidenceQuote(matched_text='say "hi" it\'s')) == '`say "hi" it\'s` at /'


def test_fallback_notes_say_what_happened() -> None:
    refused = RunRecord(reason_code="COMPOSER_FAILED", composer_refusal=("composer.z", "composer.a", "composer.z"))
    assert post_verification_notes(refused) == [
        "The Composer's answer was refused (composer.a, composer.z); this answer was rendered by the service from "
        "the verified material alone."
    ]
    assert (
        _gatekeeper_note(RunRecord(reason_code="GATEKEEPER_REJECT", claims=2))
        == "The Executor's claims were not checked."
    )


def test_suggested_calls_are_bounded_and_checked() -> None:
    call = {"tool_name": "k8s.events", "arguments": {}}
    assert len(next_calls([call] * 8, "p")) == 8
    for value, message in (
        ([call] * 9, "p: expected at most 8 items, got 9"),
        ([{"tool_name": "t", "zz": 1, "aa": 2}], "p[0].zz: unknown field"),
        (
            [{"tool_name": "t", "arguments": {"a": float("nan")}}],
            "p[0].arguments: number nan is not a finite JSON number",
        ),
        ("x", "p: expected an array, got string"),
    ):
        with pytest.raises(FieldError) as caught:
            next_calls(value, "p")
        assert str(caught.value) == message


def test_routing_refuses_what_it_does_not_know() -> None:
    assert outcomes_of(999) == frozenset()
    with pytest.raises(RoutingError, match=r"no route for \(EXECUTOR, VERDICT_PASS\)"):
        route(run_pb2.NODE_NAME_EXECUTOR, run_pb2.NODE_OUTCOME_VERDICT_PASS)


def test_a_gap_without_a_claim_names_every_call_that_would_close_it() -> None:
    from diagnosis_server.composition.render import _gap_text
    from diagnosis_server.composition.suggestions import Suggestion

    material = AllowedMaterial(verdict=contracts_pb2.VERDICT_LOW_CONFID, question="q", confirmable=())
    gap = MaterialGap("g1", "", False, "x")
    steps = [
        Suggestion("s1", "t", contracts_pb2.SuggestedCall(tool_name="a"), (), gap_id="g1", phrase="read a"),
        Suggestion("s2", "t", contracts_pb2.SuggestedCall(tool_name="b"), (), gap_id="g1", phrase="read b"),
        Suggestion("s3", "t", None, (), gap_id="g1", phrase="no call"),
    ]
    assert _gap_text(gap, material, steps) == "Not yet looked at: read a; read b."
    assert _gap_text(MaterialGap("g2", "", True, "x"), material, steps) == (
        "Critical: The Verifier identified a missing signal that the collected evidence does not show."
    )


def test_a_reply_choosing_two_gaps_shows_both_once() -> None:
    import json

    from diagnosis_server.composition.render import render_answer
    from diagnosis_server.protocols.composer import parse_composer_output

    material = AllowedMaterial(
        verdict=contracts_pb2.VERDICT_LOW_CONFID,
        question="q",
        confirmable=(),
        evidence_gaps=(MaterialGap("g1", "", True, "memory"), MaterialGap("g2", "", False, "disk")),
    )
    reply = {
        "summary": "s",
        "evidence_gaps": [{"text": "a", "ref": "g2"}, {"text": "b", "ref": "g1"}, {"text": "c", "ref": "g2"}],
    }
    output = render_answer(material, parse_composer_output(json.dumps(reply)))
    assert [item.text.startswith("Critical: ") for item in output.evidence_gaps] == [False, True]


def test_pointers_of_one_record_are_related_whatever_their_depth() -> None:
    assert _related("/deploys/0/status", "/deploys/0/version/major")
    assert _related("/deploys/0", "/deploys/0/version")
    assert not _related("/deploys/0/status", "/deploys/1/status")
    assert not _related("/summary/max", "/summary/mean/value")


# ---------------------------------------------------------------- redaction of gap descriptions


def test_an_excluded_statement_that_redaction_cannot_remove_leaves_the_gap_description_redacted_whole() -> None:
    """``orders - db`` holds the excluded statement for the comparison (spaces do not count) but not for the
    word pattern: the description cannot be made safe, so none of it is given to the Composer (R-R-3)."""
    spaced = "check whether the orders - db disk is full"
    assert redact(spaced, [UNSUPPORTED_CLAIM.statement], []) is None
    gap = contracts_pb2.EvidenceGap(description=spaced, critical=True)
    (material_gap,) = build(ALL, V.VERDICT_LOW_CONFID, gaps=[gap]).material.evidence_gaps
    assert material_gap.description == "[an unverified claim]"


def test_redaction_keeps_what_an_allowed_statement_covers_after_removing_the_rest() -> None:
    text = "the orders - db disk is full at 99%; cache is cold"
    allowed = ["the orders - db disk is full at 99%"]
    assert (
        redact(text, ["the orders-db disk is full", "cache is cold"], allowed)
        == "the orders - db disk is full at 99%; [an unverified claim]"
    )


def test_only_an_allowed_statement_holding_the_excluded_one_covers_it() -> None:
    """An allowed statement that overlaps an occurrence without holding the statement hides nothing."""
    assert mentions("the disk is full on db-1", "disk is full", covering=["full on db-1"])


def test_without_a_verifier_input_every_executor_claim_is_excluded() -> None:
    """A run that never reached the Verifier (a failed binding): all its Executor claims are excluded."""
    material = AllowedMaterial(verdict=V.VERDICT_REJECT, question="q", confirmable=())
    claims = [
        contracts_pb2.Claim(claim_id="c1", statement="checkout-api containers were OOMKilled"),
        contracts_pb2.Claim(claim_id="c2", statement="  "),
    ]
    assert excluded_statements(verifier_input=None, material=material, executor_claims=claims) == (
        "checkout-api containers were OOMKilled",
    )


# ---------------------------------------------------------------- labels and next steps of the material


def test_each_shown_claim_carries_its_display_label() -> None:
    """A plain id is its own label; any other id is named by its 1-based position in the verified output."""
    worded = Spec("the deploy claim", "a deploy of checkout-api may be involved", DIRECT, hypothesis=True)
    material = build([OOM, worded], V.VERDICT_LOW_CONFID).material
    assert [(c.claim_id, c.label) for c in material.shown] == [("c1", "c1"), ("the deploy claim", "#2")]


def test_a_step_names_a_claim_by_its_label_never_by_an_id_of_words() -> None:
    worded = Spec("see checkout-api", HYPOTHESIS.statement, DIRECT, hypothesis=True)
    steps = build([OOM, worded], V.VERDICT_LOW_CONFID).material.next_steps
    assert [(s.text, s.claim_ids) for s in steps] == [
        ("Look for evidence that directly shows #2, or rules it out.", ("#2",))
    ]


def test_a_grounded_call_of_a_tool_the_run_does_not_have_is_no_step() -> None:
    gap = contracts_pb2.EvidenceGap(
        description="events not read", critical=True, next_calls=[call("k8s.events", service="checkout-api")]
    )
    steps = build([OOM], V.VERDICT_LOW_CONFID, gaps=[gap], tools=["logs.search"]).material.next_steps
    assert [s.call for s in steps] == [None]
