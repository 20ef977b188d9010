"""conversions.to_value / to_struct: a direct build that agrees with json_format.ParseDict.

Tool outputs and arguments are recorded through these (R-C-2): what ParseDict recorded, the builder records
byte for byte, within the same depth bound; what is not JSON is a JsonValueError (a ParseError and a
ValueError), never a crash or a silently stored NaN.
"""

from __future__ import annotations

import enum
import math
from collections import OrderedDict
from typing import Any

import pytest
from google.protobuf import json_format, struct_pb2
from hypothesis import given
from hypothesis import strategies as st

from diagnosis.v1 import contracts_pb2, gatekeeper_service_pb2
from diagnosis_server.conversions import (
    MAX_JSON_DEPTH,
    MAX_VALUE_DEPTH,
    JsonObject,
    JsonTooDeep,
    JsonValue,
    JsonValueError,
    canonical_bytes,
    from_struct,
    from_value,
    json_copy,
    json_depth,
    message_to_dict,
    to_struct,
    to_value,
    value_depth,
)

finite = st.floats(allow_nan=False, allow_infinity=False)
scalars = st.none() | st.booleans() | st.integers(-(2**53), 2**53) | finite | st.text(max_size=20)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=10), inner, max_size=5),
    max_leaves=40,
)
json_objects = st.dictionaries(st.text(max_size=10), json_values, max_size=6)


def _parse_dict_value(value: Any) -> struct_pb2.Value:
    out = struct_pb2.Value()
    json_format.ParseDict(value, out)
    return out


def _nested(levels: int) -> JsonValue:
    value: JsonValue = 1
    for _ in range(levels):
        value = [value]
    return value


def _same(value: JsonValue) -> bool:
    """Equal as JSON: integral numbers come back as int, and 1 == 1.0, but -0.0 must stay a number."""
    return from_value(to_value(value)) == value


@pytest.mark.requirement("R-C-2")
@given(json_values)
def test_value_round_trips_through_from_value(value: JsonValue) -> None:
    assert _same(value)


@pytest.mark.requirement("R-C-2")
@given(json_values)
def test_value_records_the_bytes_parse_dict_recorded(value: JsonValue) -> None:
    built = to_value(value)
    assert built == _parse_dict_value(value)
    assert built.SerializeToString(deterministic=True) == _parse_dict_value(value).SerializeToString(deterministic=True)


@pytest.mark.requirement("R-C-2")
@given(json_objects)
def test_struct_round_trips_and_matches_parse_dict(value: dict[str, JsonValue]) -> None:
    expected = struct_pb2.Struct()
    json_format.ParseDict(value, expected)
    built = to_struct(value)
    assert built == expected
    assert from_struct(built) == value


@pytest.mark.requirement("R-VI-4")
@given(json_objects)
def test_canonical_bytes_of_a_built_struct_are_unchanged(value: dict[str, JsonValue]) -> None:
    expected = struct_pb2.Struct()
    json_format.ParseDict(value, expected)
    assert canonical_bytes(to_struct(value)) == canonical_bytes(expected)


@pytest.mark.parametrize("value", [[], {}, {"a": []}, {"a": {}}, [[]], [{}]])
def test_empty_containers_are_set_not_absent(value: JsonValue) -> None:
    built = to_value(value)
    assert built.WhichOneof("kind") == ("list_value" if isinstance(value, list) else "struct_value")
    assert built == _parse_dict_value(value)
    assert from_value(built) == value


def test_bool_is_not_a_number_and_none_is_null() -> None:
    assert to_value(True).WhichOneof("kind") == "bool_value"
    assert to_value(0).WhichOneof("kind") == "number_value"
    assert to_value(None).WhichOneof("kind") == "null_value"
    assert from_value(to_value([True, 1, 1.5, None, "x"])) == [True, 1, 1.5, None, "x"]


def test_subclasses_of_json_types_convert_like_their_base() -> None:
    class Level(enum.IntEnum):
        HIGH = 3

    class Name(enum.StrEnum):
        A = "a"

    value: Any = OrderedDict(level=Level.HIGH, name=Name.A, flag=True, items=(1, 2))
    assert to_value(value) == _parse_dict_value(value)
    assert from_value(to_value(value)) == {"level": 3, "name": "a", "flag": True, "items": [1, 2]}


@pytest.mark.parametrize("number", [math.nan, math.inf, -math.inf])
def test_a_non_finite_number_is_not_json(number: float) -> None:
    """NaN and infinities are not JSON: a Value holding one could not be written out as JSON later."""
    for convert in (lambda: to_value(number), lambda: to_value({"a": [number]}), lambda: to_struct({"a": number})):
        with pytest.raises(JsonValueError, match="finite"):
            convert()


def test_an_integer_out_of_double_range_is_a_clear_error() -> None:
    with pytest.raises(JsonValueError, match="out of range"):
        to_value(10**400)
    assert from_value(to_value(2**60)) == float(2**60)


@pytest.mark.parametrize("value", [b"bytes", {1, 2}, object(), 1j])
def test_what_is_not_json_is_a_parse_error_and_a_value_error(value: Any) -> None:
    with pytest.raises(JsonValueError) as caught:
        to_value({"a": [value]})
    # Callers catch either: the CLI catches json_format.ParseError, others ValueError.
    assert isinstance(caught.value, json_format.ParseError)
    assert isinstance(caught.value, ValueError)
    with pytest.raises(json_format.ParseError):
        _parse_dict_value({"a": [value]})


def test_a_key_that_is_not_a_string_is_refused() -> None:
    bad: Any = {"a": {1: "x"}}
    with pytest.raises(JsonValueError, match="key"):
        to_value(bad)
    with pytest.raises(JsonValueError, match="key"):
        to_struct(bad)


def test_to_struct_needs_an_object() -> None:
    with pytest.raises(JsonValueError, match="dict"):
        to_struct([1])  # type: ignore[arg-type]


@pytest.mark.parametrize("levels", [MAX_JSON_DEPTH - 1, MAX_JSON_DEPTH, MAX_JSON_DEPTH + 1, 40, 49])
def test_one_depth_bound_for_every_json(levels: int) -> None:
    """MAX_JSON_DEPTH containers convert; one more is JsonTooDeep saying "nested deeper than 32"."""
    for value in (_nested(levels), _nested_objects(levels)):
        assert json_depth(value) == min(levels, MAX_JSON_DEPTH + 1)  # the walk stops past the bound
        if levels <= MAX_JSON_DEPTH:
            built = to_value(value)
            assert built == _parse_dict_value(value)
            assert value_depth(built) == levels
        else:
            with pytest.raises(JsonTooDeep, match=f"nested deeper than {MAX_JSON_DEPTH}"):
                to_value(value)


def test_the_deepest_value_decodes_back_inside_the_messages_that_hold_it() -> None:
    """34-49 levels used to convert and then fail protobuf's decode depth once inside a ToolInvocation."""
    for value in (_nested_objects(MAX_JSON_DEPTH), _nested(MAX_JSON_DEPTH)):
        invocation = contracts_pb2.ToolInvocation(invocation_id="inv-1", output=to_value(value))
        again = contracts_pb2.ToolInvocation()
        again.ParseFromString(invocation.SerializeToString())
        assert again == invocation
        request = gatekeeper_service_pb2.CheckEvidenceRequest(tool_invocations=[invocation])
        assert gatekeeper_service_pb2.CheckEvidenceRequest.FromString(request.SerializeToString()) == request
    assert MAX_VALUE_DEPTH == 2 * MAX_JSON_DEPTH + 1


def _nested_objects(levels: int) -> JsonValue:
    value: JsonValue = "leaf"
    for _ in range(levels):
        value = {"k": value}
    return value


def _fits(value: JsonValue) -> bool:
    try:
        to_value(value)
    except JsonValueError:
        return False
    return True


def test_a_cycle_is_refused_not_a_recursion_error() -> None:
    cycle: list[Any] = []
    cycle.append(cycle)
    with pytest.raises(JsonValueError, match="nested deeper"):
        to_value(cycle)
    assert json_depth(cycle) > MAX_JSON_DEPTH


def test_message_to_dict_of_a_built_value_is_the_value() -> None:
    value: JsonObject = {"lines": ["ERROR upstream timeout", "INFO ok"], "count": 2, "ratio": 0.5}
    holder = struct_pb2.Struct()
    holder.fields["v"].CopyFrom(to_value(value))
    assert message_to_dict(holder) == {"v": value}


def _containers(value: Any) -> list[Any]:
    """Every dict and list in ``value``, itself included."""
    found: list[Any] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict | list):
            found.append(item)
            stack.extend(item.values() if isinstance(item, dict) else item)
    return found


@given(json_values)
def test_a_json_copy_is_equal_and_shares_no_container(value: JsonValue) -> None:
    """What ``input_schema`` hands each run: a change to the copy never reaches the original (the cached schema)."""
    copied = json_copy(value)
    assert copied == value and type(copied) is type(value)
    originals = {id(c) for c in _containers(value)}
    assert not originals & {id(c) for c in _containers(copied)}


def test_a_json_copy_copies_subclasses_too() -> None:
    inner: dict[str, list[str]] = {"enum": ["a", "b"]}
    value: Any = OrderedDict(properties=[inner])
    copied: Any = json_copy(value)
    assert copied == {"properties": [inner]}
    copied["properties"][0]["enum"].append("c")
    assert inner == {"enum": ["a", "b"]}
