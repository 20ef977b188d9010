"""The tool runner records every call, and records outputs a protobuf Value cannot hold as errors (R-C-2)."""

from __future__ import annotations

import math

import pytest

from diagnosis.v1 import contracts_pb2
from diagnosis_server.conversions import JsonObject, JsonValue, from_value
from diagnosis_server.tools.base import Toolset
from diagnosis_server.tools.runner import ToolRunner


class _Fixed:
    def __init__(self, output: JsonValue) -> None:
        self._output = output

    @property
    def name(self) -> str:
        return "fixed"

    @property
    def description(self) -> str:
        return "returns a fixed output"

    @property
    def input_schema(self) -> JsonObject:
        return {"type": "object"}

    async def call(self, arguments: JsonObject) -> JsonValue:
        return self._output


def _nested(levels: int) -> JsonValue:
    value: JsonValue = "leaf"
    for _ in range(levels):
        value = {"k": value}
    return value


async def _call(output: JsonValue) -> tuple[contracts_pb2.ToolInvocation, str]:
    recorded: list[contracts_pb2.ToolInvocation] = []

    async def recorder(invocation: contracts_pb2.ToolInvocation) -> None:
        recorded.append(invocation)

    runner = ToolRunner(run_id="run-1", toolset=Toolset([_Fixed(output)]), recorder=recorder)
    result = await runner.call("fixed", {})
    assert len(recorded) == 1 and recorded[0].invocation_id == result.invocation_id
    return recorded[0], result.error


async def test_r_c_2_an_output_is_recorded_as_given() -> None:
    output: JsonValue = {"lines": [{"message": "OOMKilled", "count": 3}], "ok": True, "ratio": 0.25}
    invocation, error = await _call(output)
    assert invocation.status == contracts_pb2.TOOL_INVOCATION_STATUS_OK and error == ""
    assert from_value(invocation.output) == output


@pytest.mark.parametrize("number", [math.nan, math.inf])
async def test_r_c_2_a_non_finite_number_is_recorded_as_an_error_not_stored(number: float) -> None:
    invocation, error = await _call({"value": number})
    assert invocation.status == contracts_pb2.TOOL_INVOCATION_STATUS_ERROR
    assert error.startswith("output is not JSON") and "finite" in error
    assert invocation.error == error
    assert invocation.output.WhichOneof("kind") == "null_value"


async def test_r_c_2_an_output_nested_too_deeply_is_recorded_as_an_error() -> None:
    invocation, error = await _call(_nested(80))
    assert invocation.status == contracts_pb2.TOOL_INVOCATION_STATUS_ERROR
    assert error == "output is nested deeper than 32"
    ok, _ = await _call(_nested(20))
    assert ok.status == contracts_pb2.TOOL_INVOCATION_STATUS_OK


@pytest.mark.parametrize("levels", [33, 34, 40, 49])
async def test_r_c_2_an_output_34_to_49_levels_deep_is_recorded_as_an_error_not_raised(levels: int) -> None:
    """Such an output used to pass conversion and fail protobuf's decode depth when the invocation was built:
    the call went unrecorded and the error escaped ToolRunner.call."""
    invocation, error = await _call(_nested(levels))
    assert invocation.status == contracts_pb2.TOOL_INVOCATION_STATUS_ERROR
    assert error == invocation.error == "output is nested deeper than 32"
    again = contracts_pb2.ToolInvocation.FromString(invocation.SerializeToString())
    assert again == invocation


async def test_r_c_2_the_deepest_accepted_output_is_recorded_whole_and_decodes() -> None:
    invocation, error = await _call(_nested(32))
    assert invocation.status == contracts_pb2.TOOL_INVOCATION_STATUS_OK and not error
    assert contracts_pb2.ToolInvocation.FromString(invocation.SerializeToString()) == invocation


async def test_r_c_2_a_scripted_replay_of_an_output_too_deep_is_recorded_as_an_error() -> None:
    recorded: list[contracts_pb2.ToolInvocation] = []

    async def recorder(invocation: contracts_pb2.ToolInvocation) -> None:
        recorded.append(invocation)

    runner = ToolRunner(run_id="run-1", toolset=Toolset([]), recorder=recorder)
    await runner.record("fixed", {}, _nested(40), invocation_id="inv-deep")
    assert recorded[0].status == contracts_pb2.TOOL_INVOCATION_STATUS_ERROR
    assert recorded[0].error == "output is nested deeper than 32"
