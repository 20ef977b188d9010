"""CheckEvidence: parse, Gatekeeper, ceiling and verified projection for callers with executors of their own."""

from __future__ import annotations

import json
from typing import Any

import pytest

from diagnosis.v1 import contracts_pb2, gatekeeper_service_pb2
from diagnosis_server.conversions import to_struct, to_value
from diagnosis_server.evidence_check import CheckInputError, check_evidence
from diagnosis_server.gatekeeper import INVOCATION_REF
from tests.support.evidence import executor_output

G = contracts_pb2


def inv(invocation_id: str = "inv-1", *, run_id: str = "run-1", tool: str = "logs") -> contracts_pb2.ToolInvocation:
    return contracts_pb2.ToolInvocation(
        invocation_id=invocation_id,
        run_id=run_id,
        tool_name=tool,
        output=to_value({"lines": ["ERROR upstream timeout after 3000ms", "INFO ok"]}),
        status=G.TOOL_INVOCATION_STATUS_OK,
    )


def output(*ids: str, text: str = "upstream timeout", **extra: Any) -> dict[str, Any]:
    gaps = [{"description": "no trace of the upstream", "critical": True}]
    return executor_output(*((i, "logs", "/lines/0", text) for i in ids), **{"evidence_gaps": gaps, **extra})


def request(
    doc: dict[str, Any] | str, invocations: list[contracts_pb2.ToolInvocation], run_id: str = ""
) -> gatekeeper_service_pb2.CheckEvidenceRequest:
    req = gatekeeper_service_pb2.CheckEvidenceRequest(run_id=run_id, tool_invocations=invocations)
    if isinstance(doc, str):
        req.executor_output_text = doc
    else:
        req.executor_output_json.CopyFrom(to_struct(doc))
    return req


@pytest.mark.requirement("R-GK-5")
def test_text_output_passes_and_is_projected() -> None:
    response = check_evidence(request(json.dumps(output("inv-1")), [inv()]))
    assert response.parse_status == G.PARSE_STATUS_OK
    assert response.parse_error == ""
    assert response.gatekeeper_result.status == G.GATEKEEPER_STATUS_PASS
    assert response.verdict_ceiling == G.VERDICT_PASS
    assert [(e.claim_id, e.source_invocation_id, e.checked_binding_index) for e in response.verified_evidence] == [
        ("c1", "inv-1", 0)
    ]
    assert [c.claim_id for c in response.verified_executor_output.claims] == ["c1"]
    assert [g.description for g in response.verified_executor_output.evidence_gaps] == ["no trace of the upstream"]


@pytest.mark.requirement("R-C-1")
def test_json_and_text_forms_give_the_same_response() -> None:
    doc = output("inv-1", "inv-2")
    by_text = check_evidence(request(json.dumps(doc), [inv(), inv("inv-2")]))
    by_json = check_evidence(request(doc, [inv(), inv("inv-2")]))
    assert by_text == by_json


@pytest.mark.requirement("R-R-2")
def test_invalid_output_has_no_gatekeeper_result_and_no_ceiling() -> None:
    response = check_evidence(request("I think the database is down.", [inv()]))
    assert response.parse_status == G.PARSE_STATUS_INVALID_OUTPUT
    assert "not JSON" in response.parse_error
    assert not response.HasField("gatekeeper_result")
    assert response.verdict_ceiling == G.VERDICT_UNSPECIFIED
    assert len(response.verified_evidence) == 0
    assert not response.HasField("verified_executor_output")


@pytest.mark.requirement("R-GK-1")
def test_forbidden_field_in_json_form_is_rejected() -> None:
    response = check_evidence(request(output("inv-1", user_facing_answer="it is the db"), [inv()]))
    assert response.parse_status == G.PARSE_STATUS_OK
    assert response.gatekeeper_result.severity == G.GATEKEEPER_SEVERITY_REJECT
    assert response.verdict_ceiling == G.VERDICT_REJECT
    assert len(response.verified_evidence) == 0
    assert not response.HasField("verified_executor_output")


@pytest.mark.requirement("R-GK-7")
def test_low_confid_projects_only_passed_bindings() -> None:
    response = check_evidence(request(output("inv-1", "inv-404"), [inv()]))
    assert response.verdict_ceiling == G.VERDICT_LOW_CONFID
    assert [e.claim_id for e in response.verified_evidence] == ["c1"]
    assert [c.claim_id for c in response.verified_executor_output.claims] == ["c1"]
    assert "inv-404" not in str(response.verified_executor_output)


def test_run_id_is_inferred_from_the_invocations() -> None:
    response = check_evidence(request(output("inv-1", "inv-2"), [inv(), inv("inv-2", run_id="")]))
    assert response.gatekeeper_result.status == G.GATEKEEPER_STATUS_PASS


@pytest.mark.requirement("R-GK-3")
def test_explicit_run_id_makes_other_runs_invocations_foreign() -> None:
    invocations = [inv(), inv("inv-2", run_id="run-2")]
    response = check_evidence(request(output("inv-1", "inv-2"), invocations, run_id="run-1"))
    result = response.gatekeeper_result
    assert list(result.failed_rules) == [INVOCATION_REF]
    assert [cb.passed for cb in result.checked_bindings] == [True, False]
    assert "run-2" in result.errors[0].message


def test_invocations_of_different_runs_need_an_explicit_run_id() -> None:
    with pytest.raises(CheckInputError, match=r"^tool_invocations: invocations belong to different runs; set run_id$"):
        check_evidence(request(output("inv-1"), [inv(), inv("inv-2", run_id="run-2")]))


def test_duplicate_invocation_ids_are_an_input_error() -> None:
    with pytest.raises(CheckInputError, match=r"tool_invocations\[1\]\.invocation_id: duplicate id 'inv-1'"):
        check_evidence(request(output("inv-1"), [inv(), inv()], run_id="run-1"))


def test_empty_invocation_id_is_an_input_error() -> None:
    with pytest.raises(CheckInputError, match=r"tool_invocations\[0\]\.invocation_id: empty"):
        check_evidence(request(output("inv-1"), [inv("")]))


def test_missing_executor_output_is_an_input_error() -> None:
    req = gatekeeper_service_pb2.CheckEvidenceRequest(tool_invocations=[inv()])
    with pytest.raises(CheckInputError, match=r"^executor_output: missing"):
        check_evidence(req)


def test_check_input_error_is_a_value_error() -> None:
    assert issubclass(CheckInputError, ValueError)
