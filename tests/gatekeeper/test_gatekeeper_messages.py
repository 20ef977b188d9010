"""The Gatekeeper's messages name where a binding went wrong (R-C-3: errors are part of the persisted result)."""

from __future__ import annotations

import json

import pytest

from diagnosis.v1 import gatekeeper_service_pb2
from diagnosis_server.conversions import JsonObject, to_value
from diagnosis_server.evidence_check import CheckInputError, check_evidence
from diagnosis_server.gatekeeper.pointer import PointerError, resolve

DOC: JsonObject = {"a": {"b": [{"c": 1}], "d/e": {"f": 2}}, "x": "y", "e": {"": {"f": 1}}}


@pytest.mark.parametrize(
    ("pointer", "message"),
    [
        ("/a/b/1", "at '/a/b': index 1 is out of range (length 1)"),
        ("/a/b/0/d", "at '/a/b/0': no member 'd'"),
        ("/a/z", "at '/a': no member 'z'"),
        ("/x/y", "at '/x': cannot take 'y' of a str"),
        ("/a/b/x", "at '/a/b': 'x' is not an array index"),
        ("/a/b/0/c/d", "at '/a/b/0/c': cannot take 'd' of a int"),
        ("/a/d~1e/g", "at '/a/d~1e': no member 'g'"),
        ("/a//x", "at '/a': no member ''"),
        ("/e//x", "at '/e/': no member 'x'"),
        ("/q", "at the document root: no member 'q'"),
        ("a", "'a' is not a JSON Pointer: it must be empty or start with '/'"),
        ("/a/b/01", "at '/a/b': '01' is not an array index"),
    ],
)
def test_a_pointer_that_does_not_resolve_says_where_it_stopped(pointer: str, message: str) -> None:
    with pytest.raises(PointerError) as caught:
        resolve(DOC, pointer)
    assert str(caught.value) == message


def one_claim_bound_to(invocation_id: str) -> str:
    """An Executor output text: one claim, bound to ``/x`` of the invocation ``invocation_id``."""
    binding = {"source_invocation_ids": [invocation_id], "tool_name": "t", "raw_path": "/x", "matched_text": "y"}
    claim = {"claim_id": "c1", "statement": "x is y", "critical": True, "status": "confirmed"}
    return json.dumps({"contract": "executor_evidence_v2", "claims": [{**claim, "evidence_bindings": [binding]}]})


def test_check_evidence_takes_the_run_id_of_its_invocations() -> None:
    """Bindings to the invocations given are this run's, whether or not they name a run."""
    for run_id in ("", "run-a"):
        request = gatekeeper_service_pb2.CheckEvidenceRequest(executor_output_text=one_claim_bound_to("i1"))
        request.tool_invocations.add(invocation_id="i1", run_id=run_id, tool_name="t", output=to_value(DOC))
        response = check_evidence(request)
        assert response.gatekeeper_result.checked_bindings[0].passed, run_id
    request.tool_invocations.add(invocation_id="i2", run_id="run-b", tool_name="t")
    with pytest.raises(CheckInputError, match="different runs"):
        check_evidence(request)


def test_an_empty_source_invocation_id_is_named_as_such() -> None:
    request = gatekeeper_service_pb2.CheckEvidenceRequest(executor_output_text=one_claim_bound_to(""))
    request.tool_invocations.add(invocation_id="i1", tool_name="t", output=to_value(DOC))
    errors = check_evidence(request).gatekeeper_result.errors
    assert [(e.rule, e.message) for e in errors] == [("evidence.invocation_ref", "source invocation id is empty")]
