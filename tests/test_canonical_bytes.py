"""canonical_bytes walks the message directly: the same bytes as json_format's MessageToDict would give."""

from __future__ import annotations

import json
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import Message
from hypothesis import given, settings
from hypothesis import strategies as st

from diagnosis.v1 import contracts_pb2, run_pb2
from diagnosis_server.conversions import canonical_bytes, to_struct


def _reference(message: Message) -> bytes:
    plain = json_format.MessageToDict(message, preserving_proto_field_name=True)
    return json.dumps(plain, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


_KEYS = st.text(min_size=1, max_size=8)
_VALUES = st.recursive(
    st.none() | st.booleans() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=10),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(_KEYS, children, max_size=4),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(_KEYS, _VALUES, max_size=5))
def test_structs_match_json_format(value: dict[str, Any]) -> None:
    struct = to_struct(value)
    assert canonical_bytes(struct) == _reference(struct)


def test_messages_with_enums_repeated_nested_int64_and_timestamps_match_json_format() -> None:
    invocation = contracts_pb2.ToolInvocation(
        invocation_id="inv-1", run_id="run-1", tool_name="logs", status=contracts_pb2.TOOL_INVOCATION_STATUS_OK
    )
    invocation.output.struct_value.update({"lines": [{"n": 1.5, "ok": True}], "none": None})
    invocation.started_at.FromNanoseconds(1_700_000_000_123_456_789)
    invocation.duration_ms = 12
    step = run_pb2.NodeStep(
        run_id="run-1", node=run_pb2.NODE_NAME_EXECUTOR, latency_ms=2**40, outcome=run_pb2.NodeOutcome.ValueType(5)
    )
    event = run_pb2.OrchestrationEvent(
        run_id="run-1", sequence=3, node=run_pb2.NodeName.ValueType(99), reason_code="X"
    )  # an unknown value
    run = run_pb2.DiagnosisRun(run_id="run-1", status=run_pb2.RUN_STATUS_SUCCESS)
    run.self_evaluation.rule_evaluation.update({"a": [1, "b"]})
    for message in (invocation, step, event, run, contracts_pb2.GatekeeperResult()):
        assert canonical_bytes(message) == _reference(message), type(message).__name__
