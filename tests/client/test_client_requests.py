"""Request building shared by both clients: CheckEvidence from keywords, ListRuns filters, Diagnose context."""

from __future__ import annotations

import pytest
from google.protobuf import struct_pb2

from diagnosis._requests import check_evidence_request, diagnose_request, list_runs_request
from diagnosis.v1 import contracts_pb2, gatekeeper_service_pb2, run_pb2

INVOCATION = {"invocation_id": "inv-1", "run_id": "run-1", "tool_name": "logs", "output": {"lines": ["x"]}}


def test_check_evidence_from_keywords_accepts_messages_proto_json_text_and_objects() -> None:
    message = contracts_pb2.ToolInvocation(invocation_id="inv-2", run_id="run-1", tool_name="metrics")
    built = check_evidence_request(
        None, run_id="run-1", tool_invocations=[INVOCATION, message], executor_output={"contract": "x"}
    )
    assert [i.invocation_id for i in built.tool_invocations] == ["inv-1", "inv-2"]
    lines = built.tool_invocations[0].output.struct_value["lines"]
    assert isinstance(lines, struct_pb2.ListValue) and lines[0] == "x"
    assert built.WhichOneof("executor_output") == "executor_output_json"
    assert built.executor_output_json["contract"] == "x"
    text = check_evidence_request(None, run_id="", tool_invocations=(), executor_output="raw text")
    assert text.executor_output_text == "raw text"
    struct = struct_pb2.Struct()
    struct.update({"contract": "y"})
    assert (
        check_evidence_request(None, run_id="", tool_invocations=(), executor_output=struct).executor_output_json
        == struct
    )


def test_check_evidence_request_passes_a_ready_request_through_and_refuses_mixing() -> None:
    request = gatekeeper_service_pb2.CheckEvidenceRequest(run_id="r", executor_output_text="t")
    assert check_evidence_request(request, run_id="", tool_invocations=(), executor_output=None) is request
    with pytest.raises(TypeError, match="not both"):
        check_evidence_request(request, run_id="", tool_invocations=[INVOCATION], executor_output=None)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"tool_invocations": [{"invocation_id": 5}]}, ValueError, r"tool_invocations\[0\]"),
        ({"tool_invocations": [{"no_such_field": 1}]}, ValueError, r"tool_invocations\[0\]"),
        ({"executor_output": {"bad": object()}}, ValueError, "executor_output"),
        ({"executor_output": 42}, TypeError, "executor_output"),
    ],
)
def test_bad_check_evidence_input_is_a_clear_error(
    kwargs: dict[str, object], error: type[Exception], match: str
) -> None:
    values: dict[str, object] = {"run_id": "", "tool_invocations": (), "executor_output": None, **kwargs}
    with pytest.raises(error, match=match):
        check_evidence_request(None, **values)  # type: ignore[arg-type]


def test_list_runs_and_diagnose_requests() -> None:
    request = list_runs_request(10, "tok", "failed", "reject")
    assert (request.page_size, request.page_token) == (10, "tok")
    assert request.status == run_pb2.RUN_STATUS_FAILED
    assert request.verdict == contracts_pb2.VERDICT_REJECT
    diagnose = diagnose_request("why?", "search-disk-full")
    assert (diagnose.question, diagnose.context.scenario) == ("why?", "search-disk-full")
