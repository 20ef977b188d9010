"""Suggested calls: a call already made is never suggested again, whatever the order of its arguments; a
recorded call is what the answer may know of an invocation, never its output (R-A-3)."""

from __future__ import annotations

import pytest
from google.protobuf import timestamp_pb2

from diagnosis.v1 import contracts_pb2
from diagnosis_server.composition.suggestions import RecordedCall
from diagnosis_server.conversions import from_struct, to_struct, to_value

from ._inputs import OOM, V, build, call, recorded

GAP_CALL = call("metrics.query", service="checkout-api", metric="container_memory_working_set_bytes")


def _gap() -> contracts_pb2.EvidenceGap:
    return contracts_pb2.EvidenceGap(description="memory was not read", critical=False, next_calls=[GAP_CALL])


def test_a_call_already_made_is_not_suggested_again_whatever_its_arguments_order() -> None:
    def made(arguments: dict[str, str]) -> RecordedCall:
        return RecordedCall("inv-9", "metrics.query", dict(arguments), None, contracts_pb2.TOOL_INVOCATION_STATUS_OK)

    in_order = made({"metric": "container_memory_working_set_bytes", "service": "checkout-api"})
    reordered = made({"service": "checkout-api", "metric": "container_memory_working_set_bytes"})
    known = ["checkout-api", "container_memory_working_set_bytes"]
    fresh = build([OOM], V.VERDICT_LOW_CONFID, gaps=[_gap()], calls=[recorded("inv-1", "k8s.events")], known=known)
    assert [s.call.tool_name for s in fresh.material.next_steps if s.call is not None] == ["metrics.query"]
    for calls in ([in_order], [reordered]):
        again = build([OOM], V.VERDICT_LOW_CONFID, gaps=[_gap()], calls=calls, known=known)
        assert [s for s in again.material.next_steps if s.call is not None] == []


def test_a_recorded_call_keeps_the_invocation_id_tool_arguments_time_and_status_only() -> None:
    started = timestamp_pb2.Timestamp(seconds=1_733_000_000, nanos=5)
    invocation = contracts_pb2.ToolInvocation(
        invocation_id="inv-7",
        run_id="run-1",
        tool_name="k8s.events",
        arguments=to_struct({"service": "checkout-api", "limit": 5}),
        output=to_value({"items": [{"reason": "OOMKilled"}]}),
        status=contracts_pb2.TOOL_INVOCATION_STATUS_TRUNCATED,
        started_at=started,
    )
    call_ = RecordedCall.of(invocation)
    truncated = contracts_pb2.TOOL_INVOCATION_STATUS_TRUNCATED
    assert call_ == RecordedCall("inv-7", "k8s.events", {"service": "checkout-api", "limit": 5}, started, truncated)
    invocation.ClearField("started_at")
    assert RecordedCall.of(invocation).started_at is None


def _steps(gaps: list[contracts_pb2.EvidenceGap], calls: list[RecordedCall]) -> list[tuple[str, dict[str, object]]]:
    built = build([OOM], V.VERDICT_LOW_CONFID, gaps=gaps, calls=calls)
    return [(s.call.tool_name, dict(from_struct(s.call.arguments))) for s in built.material.next_steps if s.call]


def test_a_value_of_a_recorded_call_grounds_a_suggested_argument() -> None:
    """``payments`` is named only by an argument the run already passed (R-A-3)."""
    gap = contracts_pb2.EvidenceGap(
        description="events not read", critical=False, next_calls=[call("kubernetes.events", namespace="payments")]
    )
    made = recorded("inv-4", "kubernetes.pods", namespace="payments")
    assert _steps([gap], [made]) == [("kubernetes.events", {"namespace": "payments"})]
    assert _steps([gap], []) == []


@pytest.mark.parametrize(
    ("terms", "kept"),
    [
        (["checkout-api", "OOMKilled"], True),
        (["checkout-api", "zebra-db"], False),  # an item of a list is an argument like any other
    ],
)
def test_every_string_in_a_list_argument_must_be_grounded(terms: list[str], kept: bool) -> None:
    suggested = call("logs.search", service="checkout-api", terms=terms)
    gap = contracts_pb2.EvidenceGap(description="logs not read", critical=False, next_calls=[suggested])
    assert _steps([gap], []) == ([("logs.search", {"service": "checkout-api", "terms": terms})] if kept else [])


def test_a_call_two_gaps_suggest_is_one_step_of_the_first_gap() -> None:
    gaps = [
        contracts_pb2.EvidenceGap(description=f"{what} not read", critical=False, next_calls=[GAP_CALL])
        for what in ("memory", "limits")
    ]
    built = build([OOM], V.VERDICT_LOW_CONFID, gaps=gaps, known=["container_memory_working_set_bytes"])
    assert [(s.step_id, s.gap_id) for s in built.material.next_steps] == [("s1", "g1")]
