"""The answer the user reads: rendered by the service from structured fields and templates (R-A-1..R-A-6).

Only three kinds of text reach it: statements of claims that passed the Gatekeeper and the Verifier (in
the section their classification and status allow, confirmed facts with their quoted evidence), gaps and
next steps rendered from structured fields, and fixed templates. The Composer's own texts never do.
"""

from __future__ import annotations

import json

import pytest
from google.protobuf import timestamp_pb2

from diagnosis.v1 import contracts_pb2
from diagnosis_server.composition.material import Quote
from diagnosis_server.composition.notes import RunRecord, post_verification_notes, pre_verification_notes
from diagnosis_server.composition.render import (
    REJECT_SUMMARY,
    answer_text,
    render_answer,
    render_pre_verification_fallback,
    render_verified,
)
from diagnosis_server.composition.suggestions import RecordedCall
from diagnosis_server.protocols.composer import parse_composer_output
from diagnosis_server.text.normalize import BIDI_CONTROLS

from ._inputs import ALL, CAUSE, ERRORS, EXCLUDED, HYPOTHESIS, OOM, Spec, V, build, call

MARKER = "zebra-ROOT-7Q"
GAP = contracts_pb2.EvidenceGap(
    description=f"Root cause: {MARKER}; the events were never read",
    critical=True,
    next_calls=[contracts_pb2.SuggestedCall(tool_name="k8s.events")],
)


def _reply(**extra: object) -> str:
    reply: dict[str, object] = {
        "summary": f"The root cause is {MARKER}",
        "confirmed_facts": [{"text": f"{MARKER} is down", "claim_ids": ["c1"]}],
        "possible_directions": [],
        "evidence_gaps": [{"text": f"nothing about {MARKER}", "ref": "g1"}],
        "next_steps": [{"text": f"restart {MARKER}", "ref": "s1"}],
    }
    reply.update(extra)
    return json.dumps(reply)


@pytest.mark.requirement("R-A-1")
def test_no_composer_text_reaches_the_answer() -> None:
    material = build(ALL, V.VERDICT_PASS, gaps=[GAP]).material
    parsed = parse_composer_output(_reply(headline="c3"))
    output = render_answer(material, parsed)
    text = answer_text(output)
    assert MARKER not in text and MARKER not in str(output)  # nor the gap's agent-written description
    assert text.startswith(f"Likely cause (inferred from c1): {CAUSE.statement} [c3]")
    assert output.likely_cause.claim_ids == ["c3"] and list(output.likely_cause.inferred_from) == ["c1"]
    assert [i.claim_ids for i in output.confirmed_facts] == [["c1"]]  # the reply chose c1 only


def test_confirmed_facts_show_their_quote_and_source() -> None:
    ts = timestamp_pb2.Timestamp(seconds=1_732_888_330)
    calls = [RecordedCall("inv-1", "k8s.events", {}, ts, contracts_pb2.TOOL_INVOCATION_STATUS_OK)]
    output = render_verified(build([OOM], V.VERDICT_PASS, calls=calls).material)
    (fact,) = output.confirmed_facts
    assert [(q.source_invocation_id, q.raw_path, q.matched_text) for q in fact.evidence] == [
        ("inv-1", "/events/0/reason", "OOMKilled"),
        ("inv-1", "/events/0/involvedObject/name", "checkout-api"),
    ]
    lines = answer_text(output).splitlines()
    index = lines.index(f"- {OOM.statement} [c1]")
    assert lines[index + 1] == (
        '  observed in k8s.events inv-1, 2024-11-29T13:52:10Z: "OOMKilled" at /events/0/reason; '
        '"checkout-api" at /events/0/involvedObject/name'
    )


@pytest.mark.requirement("R-A-2")
def test_low_confid_keeps_facts_directions_gaps_and_steps_apart() -> None:
    gap = contracts_pb2.EvidenceGap(claim_id="c3", description="not shown directly", critical=True)
    output = render_verified(build(ALL, V.VERDICT_LOW_CONFID, gaps=[gap]).material)
    text = answer_text(output)
    assert text.startswith("Partial diagnosis with low confidence: 2 fact(s) are confirmed")
    assert "Possible directions:\n- Possibly (inferred from c1): " + CAUSE.statement + " [c3]" in text
    assert f"- Possibly: {HYPOTHESIS.statement} [c4]" in text
    assert (
        "Evidence gaps:\n- Critical: c3 is not confirmed: direct evidence would confirm it or rule it out. [c3]" in text
    )
    assert not output.HasField("likely_cause")
    confirmed = text.split("Possible directions:")[0]
    assert CAUSE.statement not in confirmed and HYPOTHESIS.statement not in confirmed


@pytest.mark.requirement("R-A-3")
def test_reject_says_so_and_draws_no_conclusion() -> None:
    output = render_answer(build(ALL, V.VERDICT_REJECT).material, parse_composer_output(_reply(headline="c3")))
    text = answer_text(output)
    assert text.startswith(REJECT_SUMMARY) and "cannot support a reliable conclusion" in text
    assert not output.possible_directions and not output.HasField("likely_cause")
    assert CAUSE.statement not in text and HYPOTHESIS.statement not in text


def test_everything_not_allowed_stays_out_of_every_rendering() -> None:
    for verdict in (V.VERDICT_PASS, V.VERDICT_LOW_CONFID, V.VERDICT_REJECT):
        material = build(ALL, verdict, gaps=[GAP]).material
        for output in (render_verified(material), render_answer(material, parse_composer_output(_reply()))):
            text = answer_text(output) + str(output)
            for spec in EXCLUDED:
                assert spec.statement not in text, (verdict, spec.claim_id)


def test_gaps_are_rendered_from_their_structured_fields() -> None:
    gaps = [
        contracts_pb2.EvidenceGap(claim_id="c7", description="free text", critical=True),
        contracts_pb2.EvidenceGap(
            description="free text", critical=False, next_calls=[call("k8s.events", service="checkout-api")]
        ),
        contracts_pb2.EvidenceGap(description="free text", critical=False),
    ]
    output = render_verified(build(ALL, V.VERDICT_LOW_CONFID, gaps=gaps, tools=["k8s.events"]).material)
    assert [g.text for g in output.evidence_gaps] == [
        "Critical: c7 could not be verified from the collected evidence, so it is not shown.",
        "Not yet looked at: list the Kubernetes events of checkout-api.",
        "The Verifier identified a missing signal that the collected evidence does not show.",
    ]
    assert output.next_steps[0].call.tool_name == "k8s.events"
    assert "free text" not in answer_text(output)


def test_a_no_incident_conclusion_is_headed_as_a_conclusion() -> None:
    healthy = Spec(
        "c1",
        "checkout-api http_requests_error_rate stayed within its baseline",
        1,
        (("inv-1", "/service", "checkout-api"), ("inv-1", "/metric", "http_requests_error_rate")),
    )
    conclusion = Spec(
        "c2",
        "No incident found for checkout-api: its headline signals stayed within baseline",
        2,
        (("inv-1", "/service", "checkout-api"),),
    )
    output = render_verified(build([healthy, conclusion], V.VERDICT_PASS).material)
    assert output.summary.startswith("Conclusion (inferred from c1): No incident found")
    assert "Address the likely cause" not in answer_text(output)


def test_shown_text_loses_bidi_and_invisible_controls() -> None:
    spec = Spec(
        "c1", "checkout-api\u200b returns 503", 1, (("inv-1", "/s", "checkout-api\u202e"), ("inv-1", "/t", "503"))
    )
    text = answer_text(render_verified(build([spec], V.VERDICT_PASS).material))
    assert not any(ch in text for ch in (*BIDI_CONTROLS, "\u200b"))


def test_long_quotes_are_cut_for_display_only() -> None:
    long = "x" * 400
    spec = Spec("c1", "checkout-api logged it", 1, (("inv-1", "/service", "checkout-api"), ("inv-1", "/m", long)))
    output = render_verified(build([spec], V.VERDICT_PASS).material)
    assert output.confirmed_facts[0].evidence[1].matched_text == long
    assert "x" * 159 + "…" in answer_text(output) and long not in answer_text(output)


@pytest.mark.requirement("R-A-5")
def test_the_post_verification_fallback_says_why_it_rendered() -> None:
    material = build([OOM, ERRORS], V.VERDICT_PASS).material
    refused = render_verified(
        material, notes=post_verification_notes(RunRecord("COMPOSER_FAILED", composer_refusal=("composer.citation",)))
    )
    assert refused.source == contracts_pb2.COMPOSER_SOURCE_POST_VERIFICATION_FALLBACK
    assert "The Composer's answer was refused (composer.citation)" in answer_text(refused)
    timed_out = post_verification_notes(RunRecord("COMPOSER_FAILED", last_reason="COMPOSER_TIMEOUT"))
    assert timed_out == [
        "The Composer did not return an answer (it timed out); "
        "this answer was rendered by the service from the verified material alone."
    ]


def _checked(passed: bool, rule: str = "") -> contracts_pb2.CheckedBinding:
    return contracts_pb2.CheckedBinding(claim_id="c1", passed=passed, failed_rules=[rule] if rule else [])


@pytest.mark.requirement("R-A-4")
def test_a_pre_verification_fallback_says_what_happened_from_the_record() -> None:
    calls = (
        RecordedCall("inv-1", "logs.search", {}, None, contracts_pb2.TOOL_INVOCATION_STATUS_OK),
        RecordedCall("inv-2", "prometheus.query", {}, None, contracts_pb2.TOOL_INVOCATION_STATUS_ERROR),
    )
    no_claims = RunRecord(
        "GATEKEEPER_REJECT", claims=0, gatekeeper=contracts_pb2.GatekeeperResult(), calls=calls, calls_known=True
    )
    assert pre_verification_notes(no_claims) == [
        "The Executor returned no claims, so there was nothing to verify.",
        "2 tool call(s) were recorded (1 error, 1 ok); without usable output: prometheus.query.",
    ]
    result = contracts_pb2.GatekeeperResult(
        checked_bindings=[_checked(False, "evidence.invocation_ref"), _checked(False, "evidence.matched_text")],
        failed_rules=["evidence.invocation_ref", "evidence.matched_text"],
        severity=contracts_pb2.GATEKEEPER_SEVERITY_REJECT,
    )
    failed = RunRecord("GATEKEEPER_REJECT", claims=1, gatekeeper=result)
    assert pre_verification_notes(failed) == [
        "2 of 2 evidence binding(s) of the Executor's 1 claim(s) failed the Gatekeeper "
        "(failed rules: evidence.invocation_ref, evidence.matched_text), so no claim could be verified."
    ]
    assert pre_verification_notes(RunRecord("VERIFIER_FAILED", last_reason="VERIFIER_TIMEOUT")) == [
        "The Verifier did not complete (it timed out), so no claim could be classified."
    ]
    assert pre_verification_notes(RunRecord("PLANNER_FAILED", last_reason="PLANNER_INVALID_OUTPUT"))[0].startswith(
        "The Planner did not return a usable plan (its reply was not valid)"
    )
    assert pre_verification_notes(RunRecord("a claim statement as a code"))[0] == (
        "An internal step of the diagnosis did not complete."
    )


@pytest.mark.requirement("R-A-4")
def test_the_pre_verification_fallback_holds_no_claim_but_the_known_gaps_calls() -> None:
    gaps = [
        contracts_pb2.EvidenceGap(claim_id="c1", description="x", critical=True),
        contracts_pb2.EvidenceGap(
            description="y", critical=True, next_calls=[call("k8s.events", service="checkout-api")]
        ),
    ]
    known = build([OOM, ERRORS], V.VERDICT_LOW_CONFID, gaps=gaps, tools=["k8s.events"]).material
    output = render_pre_verification_fallback(
        ["The Executor returned no claims, so there was nothing to verify."], known=known
    )
    text = answer_text(output)
    assert output.verdict == V.VERDICT_UNSPECIFIED and not output.confirmed_facts and not output.possible_directions
    assert OOM.statement not in text and ERRORS.statement not in text
    assert not any(item.claim_ids for field in ("evidence_gaps", "next_steps") for item in getattr(output, field))
    assert "Not yet looked at: list the Kubernetes events of checkout-api." in text
    assert "What happened:\n- The Executor returned no claims" in text


@pytest.mark.requirement("R-A-2", "R-A-4")
@pytest.mark.parametrize(
    ("names", "said"),
    [
        (["billing-svc"], "There is no data about billing-svc in what this run could read"),
        (["billing-svc", "ledger"], "There is no data about billing-svc and ledger in what"),
        (["a-svc", "b-svc", "c-svc"], "There is no data about a-svc, b-svc and c-svc in what"),
    ],
)
def test_a_question_about_names_no_output_mentions_is_answered_as_no_data(names: list[str], said: str) -> None:
    output = render_pre_verification_fallback(["The Executor returned no claims."], no_data_about=names)
    text = answer_text(output)
    assert output.summary.startswith(said)
    assert output.summary.endswith(" could read, so no diagnosis of it can be given; what the run did is listed below.")
    assert "no incident" not in text.lower() and output.verdict == V.VERDICT_UNSPECIFIED
    assert output.source == contracts_pb2.COMPOSER_SOURCE_PRE_VERIFICATION_FALLBACK
    assert [item.text for item in output.run_notes] == ["The Executor returned no claims."]
    assert [item.text for item in output.evidence_gaps] == [
        f"No recorded tool output of this run mentions {name}." for name in names
    ]
    assert [item.text for item in output.next_steps] == [
        f"Check that {name} is the workload's name, and that the environment's sources (namespaces, "
        "Prometheus, logs) cover it (ListEnvironments), then ask again."
        for name in names
    ]
    plain = render_pre_verification_fallback(["The Executor returned no claims."])
    assert plain.summary == "No verified diagnosis could be produced; what the run did is listed below."
    assert plain.source == contracts_pb2.COMPOSER_SOURCE_PRE_VERIFICATION_FALLBACK
    assert [item.text for item in plain.evidence_gaps] == ["No verified evidence is available to support a conclusion."]


def test_quote_objects_convert_to_protos() -> None:
    quote = Quote("inv-1", "k8s.events", "/a", "OOMKilled").to_proto()
    assert quote.matched_text == "OOMKilled" and not quote.HasField("observed_at")
