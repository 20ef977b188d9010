"""The tool runner records every call, and records outputs a protobuf Value cannot hold as errors (R-C-2)."""

from __future__ import annotations

import math
from typing import Any

import pytest

from diagnosis.v1 import contracts_pb2
from diagnosis_server.conversions import JsonObject, JsonValue, canonical_json_bytes, from_value, to_value
from diagnosis_server.tools.base import Toolset
from diagnosis_server.tools.runner import ToolBlockedError, ToolRunner
from tests.support.values import recorded_with, wrapped


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


@pytest.mark.requirement("R-C-2")
async def test_an_output_is_recorded_as_given() -> None:
    output: JsonValue = {"lines": [{"message": "OOMKilled", "count": 3}], "ok": True, "ratio": 0.25}
    invocation, error = await _call(output)
    assert invocation.status == contracts_pb2.TOOL_INVOCATION_STATUS_OK and error == ""
    assert from_value(invocation.output) == output


@pytest.mark.requirement("R-C-2")
@pytest.mark.parametrize("number", [math.nan, math.inf])
async def test_a_non_finite_number_is_recorded_as_an_error_not_stored(number: float) -> None:
    invocation, error = await _call({"value": number})
    assert invocation.status == contracts_pb2.TOOL_INVOCATION_STATUS_ERROR
    assert error.startswith("output is not JSON") and "finite" in error
    assert invocation.error == error
    assert invocation.output.WhichOneof("kind") == "null_value"


@pytest.mark.requirement("R-C-2")
async def test_an_output_nested_too_deeply_is_recorded_as_an_error() -> None:
    invocation, error = await _call(_nested(80))
    assert invocation.status == contracts_pb2.TOOL_INVOCATION_STATUS_ERROR
    assert error == "output is nested deeper than 32"
    ok, _ = await _call(_nested(20))
    assert ok.status == contracts_pb2.TOOL_INVOCATION_STATUS_OK


@pytest.mark.requirement("R-C-2")
@pytest.mark.parametrize("levels", [33, 34, 40, 49])
async def test_an_output_34_to_49_levels_deep_is_recorded_as_an_error_not_raised(levels: int) -> None:
    """Such an output used to pass conversion and fail protobuf's decode depth when the invocation was built:
    the call went unrecorded and the error escaped ToolRunner.call."""
    invocation, error = await _call(_nested(levels))
    assert invocation.status == contracts_pb2.TOOL_INVOCATION_STATUS_ERROR
    assert error == invocation.error == "output is nested deeper than 32"
    again = contracts_pb2.ToolInvocation.FromString(invocation.SerializeToString())
    assert again == invocation


@pytest.mark.requirement("R-C-2")
async def test_the_deepest_accepted_output_is_recorded_whole_and_decodes() -> None:
    invocation, error = await _call(_nested(32))
    assert invocation.status == contracts_pb2.TOOL_INVOCATION_STATUS_OK and not error
    assert contracts_pb2.ToolInvocation.FromString(invocation.SerializeToString()) == invocation


@pytest.mark.requirement("R-C-2")
async def test_a_scripted_replay_of_an_output_too_deep_is_recorded_as_an_error() -> None:
    recorded: list[contracts_pb2.ToolInvocation] = []

    async def recorder(invocation: contracts_pb2.ToolInvocation) -> None:
        recorded.append(invocation)

    deep = recorded_with(wrapped(to_value("leaf"), 40))  # deeper than to_value would build
    runner = ToolRunner(run_id="run-1", toolset=Toolset([]), recorder=recorder)
    await runner.record(deep)
    assert recorded[0].status == contracts_pb2.TOOL_INVOCATION_STATUS_ERROR
    assert recorded[0].error == "output is nested deeper than 32"


# ---------------------------------------------------------------- the output cap


async def _call_capped(output: JsonValue, max_bytes: int) -> contracts_pb2.ToolInvocation:
    recorded: list[contracts_pb2.ToolInvocation] = []

    async def recorder(invocation: contracts_pb2.ToolInvocation) -> None:
        recorded.append(invocation)

    runner = ToolRunner(
        run_id="run-1", toolset=Toolset([_Fixed(output)]), recorder=recorder, max_output_bytes=max_bytes
    )
    result = await runner.call("fixed", {})
    assert from_value(recorded[0].output) == result.output
    return recorded[0]


def _matrix(series: int, points: int) -> JsonObject:
    result: list[JsonValue] = [
        {
            "metric": {"__name__": "http_requests_total", "pod": f"checkout-{i}"},
            "values": [[1700000000 + 15 * j, f"{j}.5"] for j in range(points)],
        }
        for i in range(series)
    ]
    return {"status": "success", "data": {"resultType": "matrix", "result": result}, "warnings": ["slow query"]}


async def test_an_over_size_output_is_trimmed_to_upstream_json_that_keeps_its_pointers() -> None:
    output: JsonObject = {"status": "success", "items": [{"name": f"pod-{i}", "phase": "Running"} for i in range(5000)]}
    invocation = await _call_capped(output, 4096)
    assert invocation.status == contracts_pb2.TOOL_INVOCATION_STATUS_TRUNCATED
    kept = from_value(invocation.output)
    assert isinstance(kept, dict) and isinstance(kept["items"], list) and isinstance(output["items"], list)
    assert kept["status"] == "success"
    assert 0 < len(kept["items"]) < 5000
    assert kept["items"] == output["items"][: len(kept["items"])]  # a prefix: every pointer still resolves
    assert len(canonical_json_bytes(kept)) <= 4096
    assert invocation.error == f"trimmed to fit 4096 bytes: /items kept {len(kept['items'])} of 5000 items"


async def test_a_single_huge_series_is_trimmed_inside_and_small_members_stay_whole() -> None:
    invocation = await _call_capped(_matrix(1, 5000), 8192)
    kept: Any = from_value(invocation.output)  # the upstream's JSON, navigated as such
    assert isinstance(kept, dict)
    assert kept["warnings"] == ["slow query"] and kept["status"] == "success"
    series = kept["data"]["result"]
    assert len(series) == 1 and series[0]["metric"]["pod"] == "checkout-0"
    assert 0 < len(series[0]["values"]) < 5000
    assert series[0]["values"][3] == [1700000045, "3.5"]
    assert "/data/result/0/values kept" in invocation.error and "of 5000 items" in invocation.error


async def test_many_series_keep_the_first_ones_whole() -> None:
    invocation = await _call_capped(_matrix(40, 50), 16384)
    kept: Any = from_value(invocation.output)
    series = kept["data"]["result"]
    assert 0 < len(series) < 40
    assert all(len(s["values"]) == 50 for s in series[:-1])
    assert invocation.error.startswith("trimmed to fit 16384 bytes: /data/result kept")


async def test_an_output_that_cannot_be_trimmed_under_the_bound_is_an_error() -> None:
    invocation = await _call_capped({"blob": "x" * 10_000, "items": [1, 2, 3]}, 4096)
    assert invocation.status == contracts_pb2.TOOL_INVOCATION_STATUS_ERROR
    assert "cannot be trimmed" in invocation.error
    assert invocation.output.WhichOneof("kind") == "null_value"


async def test_a_string_is_never_cut() -> None:
    long_line = "E" * 3000
    invocation = await _call_capped({"lines": [long_line, long_line, long_line]}, 4096)
    assert from_value(invocation.output) == {"lines": [long_line]}


async def test_an_evidence_retry_reads_what_the_earlier_cycles_recorded_and_calls_nothing_again() -> None:
    """An evidence retry's Executor reads the first cycle's outputs beside its own: only earlier cycles' calls
    that have an output, with their arguments, in the order recorded; the first cycle itself reads nothing."""
    recorded: list[contracts_pb2.ToolInvocation] = []

    async def recorder(invocation: contracts_pb2.ToolInvocation) -> None:
        recorded.append(invocation)

    async def listed() -> list[contracts_pb2.ToolInvocation]:
        return list(recorded)

    toolset = Toolset([_Fixed({"items": [{"host": "id.acme.internal"}]})])
    first = ToolRunner(run_id="run-1", toolset=toolset, recorder=recorder, recorded=listed)
    await first.call("fixed", {"kind": "ingresses"})
    with pytest.raises(ToolBlockedError):  # recorded BLOCKED: no output to read again
        await first.call("absent", {})
    assert await first.earlier() == []  # the first cycle has no earlier one
    retry = ToolRunner(run_id="run-1", toolset=toolset, recorder=recorder, recorded=listed, cycle=2)
    await retry.call("fixed", {"kind": "pods"})
    earlier = await retry.earlier()
    assert [(r.tool_name, r.arguments, r.output) for r in earlier] == [
        ("fixed", {"kind": "ingresses"}, {"items": [{"host": "id.acme.internal"}]})
    ]
    assert len(recorded) == 3  # reading the earlier cycle called nothing
