"""A scripted replay records given invocations through the runner (R-C-2): a Value that holds JSON is copied as
it is, anything else is converted as a live call's output is, and what cannot be recorded is an ERROR saying why.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from google.protobuf import struct_pb2
from hypothesis import given, settings
from hypothesis import strategies as st

from diagnosis.v1 import contracts_pb2
from diagnosis_server.conversions import (
    MAX_JSON_DEPTH,
    JsonValue,
    holds_json,
    json_depth,
    to_struct,
    to_value,
    value_depth,
)
from diagnosis_server.tools.base import Toolset
from diagnosis_server.tools.runner import ToolRunner
from tests.support.values import recorded_with, wrapped

# ------------------------------------------------------------------ Values built without to_value's checks

# A leaf as a Value may hold it: JSON scalars, non-finite numbers, and a Value with no kind at all.
leaves = st.sampled_from(["string", "number", "nan", "inf", "-inf", "bool", "null", "unset"])
shapes = st.recursive(
    leaves,
    lambda children: (
        st.lists(children, max_size=3).map(lambda items: ("list", items))
        | st.dictionaries(st.text(max_size=3), children, max_size=3).map(lambda fields: ("struct", fields))
    ),
    max_leaves=12,
)


def _fill(out: struct_pb2.Value, shape: Any) -> None:
    if isinstance(shape, tuple):
        kind, children = shape
        if kind == "list":
            out.list_value.SetInParent()
            for child in children:
                _fill(out.list_value.values.add(), child)
        else:
            out.struct_value.SetInParent()
            for key, child in children.items():
                _fill(out.struct_value.fields[key], child)
        return
    if shape == "string":
        out.string_value = "503 Service Unavailable"
    elif shape == "number":
        out.number_value = 0.25
    elif shape in ("nan", "inf", "-inf"):
        out.number_value = float(shape)
    elif shape == "bool":
        out.bool_value = True
    elif shape == "null":
        out.null_value = struct_pb2.NULL_VALUE
    # "unset": no kind


def _value(shape: Any) -> struct_pb2.Value:
    out = struct_pb2.Value()
    _fill(out, shape)
    return out


def _kinds_and_numbers_ok(value: struct_pb2.Value) -> bool:
    kind = value.WhichOneof("kind")
    if kind is None:
        return False
    if kind == "number_value":
        return math.isfinite(value.number_value)
    if kind == "struct_value":
        return all(_kinds_and_numbers_ok(item) for item in value.struct_value.fields.values())
    if kind == "list_value":
        return all(_kinds_and_numbers_ok(item) for item in value.list_value.values)
    return True


# ------------------------------------------------------------------ holds_json


@settings(max_examples=400)
@given(shapes, st.integers(0, MAX_JSON_DEPTH + 2), st.booleans())
def test_a_value_holds_json_when_every_value_has_a_kind_every_number_is_finite_and_it_is_not_too_deep(
    shape: Any, levels: int, as_list: bool
) -> None:
    value = wrapped(_value(shape), levels, as_list=as_list)
    expected = _kinds_and_numbers_ok(value) and value_depth(value, limit=MAX_JSON_DEPTH + 5) <= MAX_JSON_DEPTH
    assert holds_json(value) is expected


@pytest.mark.parametrize("innermost", ["{}", "[]", "leaf"])
def test_the_depth_bound_counts_an_empty_container_as_a_level(innermost: str) -> None:
    """32 containers are JSON a Value may hold, 33 are not, whether the innermost is empty or holds a leaf."""
    leaf = {"{}": to_value({}), "[]": to_value([]), "leaf": to_value("x")}[innermost]
    inner_levels = 0 if innermost == "leaf" else 1
    at_bound = wrapped(leaf, MAX_JSON_DEPTH - inner_levels)
    past_bound = wrapped(leaf, MAX_JSON_DEPTH - inner_levels + 1)
    assert value_depth(at_bound, limit=40) == MAX_JSON_DEPTH and holds_json(at_bound)
    assert value_depth(past_bound, limit=40) == MAX_JSON_DEPTH + 1 and not holds_json(past_bound)


@settings(max_examples=200)
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.text(max_size=4),
        lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=3), c, max_size=3),
        max_leaves=10,
    )
)
def test_what_to_value_builds_holds_json(document: JsonValue) -> None:
    assert holds_json(to_value(document))
    if isinstance(document, dict):
        assert holds_json(to_struct(document))


def test_a_struct_counts_as_its_own_level() -> None:
    arguments = struct_pb2.Struct()
    arguments.fields["k"].CopyFrom(wrapped(to_value("x"), MAX_JSON_DEPTH - 1))
    assert json_depth({"k": 0}) == 1 and holds_json(arguments)
    arguments.fields["k"].CopyFrom(wrapped(to_value("x"), MAX_JSON_DEPTH))
    assert not holds_json(arguments)


# ------------------------------------------------------------------ ToolRunner.record


async def _replayed(recorded: contracts_pb2.ToolInvocation) -> contracts_pb2.ToolInvocation:
    kept: list[contracts_pb2.ToolInvocation] = []

    async def recorder(invocation: contracts_pb2.ToolInvocation) -> None:
        kept.append(invocation)

    runner = ToolRunner(run_id="run-7", toolset=Toolset([]), recorder=recorder, cycle=2)
    await runner.record(recorded)
    assert runner.invocation_ids == [recorded.invocation_id]
    return kept[0]


@pytest.mark.requirement("R-C-2")
async def test_a_replayed_invocation_is_recorded_with_its_arguments_and_output_as_given() -> None:
    output = to_value({"lines": [{"message": "dial tcp 10.0.0.7:6379: connect: connection refused"}], "max": 0.25})
    recorded = contracts_pb2.ToolInvocation(
        invocation_id="inv-0003",
        run_id="run-elsewhere",
        tool_name="logs.search",
        arguments=to_struct({"service": "checkout", "limit": 20}),
        output=output,
        status=contracts_pb2.TOOL_INVOCATION_STATUS_TRUNCATED,
        cycle=9,
    )
    kept = await _replayed(recorded)
    assert (kept.invocation_id, kept.tool_name, kept.run_id, kept.cycle) == ("inv-0003", "logs.search", "run-7", 2)
    assert kept.status == contracts_pb2.TOOL_INVOCATION_STATUS_OK and not kept.error
    assert kept.arguments == recorded.arguments
    assert kept.output == output
    assert kept.HasField("started_at")
    output.struct_value.fields["max"].number_value = 9.0  # a copy: the caller's message is not shared
    assert kept.output.struct_value.fields["max"].number_value == 0.25


@pytest.mark.requirement("R-C-2")
async def test_a_replay_without_output_is_recorded_as_null() -> None:
    kept = await _replayed(contracts_pb2.ToolInvocation(invocation_id="inv-1", tool_name="fixed"))
    assert kept.status == contracts_pb2.TOOL_INVOCATION_STATUS_OK
    assert kept.output.WhichOneof("kind") == "null_value"
    assert kept.HasField("arguments") and not kept.arguments.fields


@pytest.mark.requirement("R-C-2")
async def test_a_value_with_no_kind_inside_is_recorded_as_json_null() -> None:
    output = to_value({"a": 1})
    output.struct_value.fields["b"].SetInParent()  # a Value with no kind: from_value reads it as null
    kept = await _replayed(contracts_pb2.ToolInvocation(invocation_id="inv-1", tool_name="fixed", output=output))
    assert kept.status == contracts_pb2.TOOL_INVOCATION_STATUS_OK
    assert kept.output == to_value({"a": 1, "b": None})


@pytest.mark.requirement("R-C-2")
@pytest.mark.parametrize("number", [math.nan, math.inf, -math.inf])
async def test_a_replayed_output_with_a_non_finite_number_is_an_error(number: float) -> None:
    output = to_value({"lines": ["ok"], "ratio": 0.5})
    output.struct_value.fields["ratio"].number_value = number
    kept = await _replayed(contracts_pb2.ToolInvocation(invocation_id="inv-1", tool_name="fixed", output=output))
    assert kept.status == contracts_pb2.TOOL_INVOCATION_STATUS_ERROR
    assert kept.error.startswith("output is not JSON: number") and "is not a finite JSON number" in kept.error
    assert kept.output.WhichOneof("kind") == "null_value"


@pytest.mark.requirement("R-C-2")
@pytest.mark.parametrize("levels", [MAX_JSON_DEPTH, MAX_JSON_DEPTH + 1, 60])
async def test_a_replayed_output_deeper_than_the_bound_is_an_error_and_one_at_it_is_whole(levels: int) -> None:
    output = wrapped(to_value("leaf"), levels, as_list=True)
    kept = await _replayed(recorded_with(output))
    if levels <= MAX_JSON_DEPTH:
        assert kept.status == contracts_pb2.TOOL_INVOCATION_STATUS_OK and kept.output == output
        assert contracts_pb2.ToolInvocation.FromString(kept.SerializeToString()) == kept
    else:
        assert kept.status == contracts_pb2.TOOL_INVOCATION_STATUS_ERROR
        assert kept.error == f"output is nested deeper than {MAX_JSON_DEPTH}"


@pytest.mark.requirement("R-C-2")
async def test_replayed_arguments_deeper_than_the_bound_are_an_error() -> None:
    arguments = struct_pb2.Struct()
    arguments.fields["filter"].CopyFrom(wrapped(to_value("x"), MAX_JSON_DEPTH))
    kept = await _replayed(recorded_with(to_value({"a": 1}), arguments))
    assert kept.status == contracts_pb2.TOOL_INVOCATION_STATUS_ERROR
    assert kept.error == f"arguments is nested deeper than {MAX_JSON_DEPTH}: the tool was not run"
