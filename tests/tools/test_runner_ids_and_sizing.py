"""Invocation ids numbered per run, and the output bound's shortcut: a wire size that proves the JSON fits."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from diagnosis.v1 import contracts_pb2
from diagnosis_server.conversions import canonical_json_bytes, to_value
from diagnosis_server.tools.base import Toolset
from diagnosis_server.tools.runner import JSON_EXPANSION, InvocationIds, ToolRunner, fits_without_measuring

_TEXT = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=20) | st.sampled_from(
    ["\x00\x01\x02", '"\\"', "\u2028", "é" * 5]
)
_SCALARS = st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.floats(allow_nan=False, allow_infinity=False)
_JSON = st.recursive(
    _SCALARS | _TEXT,
    lambda children: st.lists(children, max_size=5) | st.dictionaries(_TEXT, children, max_size=5),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(_JSON)
def test_the_wire_size_bounds_the_canonical_json(value: Any) -> None:
    """Six times a Value's wire size (plus a few bytes) is never less than its canonical JSON: a value that
    passes the shortcut fits the bound for sure."""
    size = len(canonical_json_bytes(value))
    built = to_value(value)
    bound = JSON_EXPANSION * built.ByteSize() + 16
    assert size <= bound
    assert fits_without_measuring(built, bound) and not fits_without_measuring(built, bound - 1)


def test_the_worst_expansion_is_a_control_character() -> None:
    value = "\x01" * 1000
    assert len(json.dumps(value)) <= JSON_EXPANSION * to_value(value).ByteSize()


def test_ids_are_numbered_per_run_and_unshared_runners_never_collide() -> None:
    ids = InvocationIds()
    assert [ids.next() for _ in range(3)] == ["inv-0001", "inv-0002", "inv-0003"]
    one, two = InvocationIds.unshared(), InvocationIds.unshared()
    assert one.next() != two.next()


async def test_runners_of_one_run_share_its_counter() -> None:
    recorded: list[contracts_pb2.ToolInvocation] = []

    async def recorder(invocation: contracts_pb2.ToolInvocation) -> None:
        recorded.append(invocation)

    ids = InvocationIds()
    first = ToolRunner(run_id="run-1", toolset=Toolset([]), recorder=recorder, ids=ids)
    await first.record(
        contracts_pb2.ToolInvocation(invocation_id=ids.next(), tool_name="fixed", output=to_value({"a": 1}))
    )
    second = ToolRunner(run_id="run-1", toolset=Toolset([]), recorder=recorder, cycle=2, ids=ids)
    await second.record(
        contracts_pb2.ToolInvocation(invocation_id=ids.next(), tool_name="fixed", output=to_value({"a": 2}))
    )
    assert [i.invocation_id for i in recorded] == ["inv-0001", "inv-0002"]
    assert [i.cycle for i in recorded] == [1, 2]
