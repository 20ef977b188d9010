"""``resolve_value``: a JSON Pointer resolved in a recorded ``google.protobuf.Value`` without converting it whole.

The ``evidence.raw_path`` rule (R-GK-5) resolves every binding in the invocation's recorded output; walking the
message must give exactly what ``resolve`` gives on the converted document: the same value, the same
PointerError, the same message.
"""

from __future__ import annotations

from typing import Any

import pytest
from google.protobuf import struct_pb2
from hypothesis import given
from hypothesis import strategies as st

from diagnosis_server.conversions import from_value, to_value
from diagnosis_server.gatekeeper.pointer import PointerError, resolve, resolve_value
from tests.support.pointers import pointed

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**60), 2**60)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=5),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=4), children, max_size=4),
    max_leaves=20,
)
tokens = st.sampled_from(["0", "1", "3", "01", "-", "a", "", "~0", "~1", "x~1y", "~", "~2", "10"]) | st.text(max_size=3)
pointers = st.lists(tokens, max_size=4).map(lambda parts: "".join(f"/{part}" for part in parts)) | st.sampled_from(
    ["", "a", "#/a", " /a"]
)


def _outcome(call: Any) -> tuple[str, Any]:
    try:
        return "value", call()
    except PointerError as exc:
        return "error", str(exc)


@pytest.mark.requirement("R-GK-5")
@given(json_values, pointers)
def test_resolving_in_the_message_equals_resolving_in_the_converted_document(doc: Any, pointer: str) -> None:
    recorded = to_value(doc)
    expected = _outcome(lambda: resolve(from_value(recorded), pointer))
    assert _outcome(lambda: resolve_value(recorded, pointer)) == expected


@pytest.mark.requirement("R-GK-5")
@given(json_values)
def test_every_path_of_the_document_resolves_alike(doc: Any) -> None:
    recorded = to_value(doc)
    converted = from_value(recorded)
    for pointer, _ in pointed(converted):
        assert resolve_value(recorded, pointer) == resolve(converted, pointer)
        # Out of range, a missing member, past a scalar: the same error too.
        for extra in ("/999", "/nope", "/0/0"):
            assert _outcome(lambda p=pointer + extra: resolve_value(recorded, p)) == _outcome(
                lambda p=pointer + extra: resolve(converted, p)
            )


@pytest.mark.requirement("R-GK-5")
def test_resolving_never_changes_the_recorded_output() -> None:
    recorded = to_value({"a": [{"b": 1}], "c": "x"})
    before = recorded.SerializeToString(deterministic=True)
    for pointer in ("/a/0/b", "/a/0/missing", "/missing", "/a/5", "/c/x"):
        _outcome(lambda p=pointer: resolve_value(recorded, p))
    assert recorded.SerializeToString(deterministic=True) == before


@pytest.mark.parametrize(
    ("document", "pointer", "expected"),
    [
        (None, "", ("value", None)),
        (None, "/a", ("error", "at the document root: cannot take 'a' of a null")),
        (struct_pb2.Value(), "", ("value", None)),
        (struct_pb2.Value(), "/0", ("error", "at the document root: cannot take '0' of a null")),
        (to_value(503), "/x", ("error", "at the document root: cannot take 'x' of a int")),
        (to_value(0.5), "/x", ("error", "at the document root: cannot take 'x' of a float")),
        (to_value({"a": True}), "/a/x", ("error", "at '/a': cannot take 'x' of a bool")),
    ],
)
def test_an_absent_output_is_null_and_scalars_are_named_as_before(
    document: struct_pb2.Value | None, pointer: str, expected: tuple[str, Any]
) -> None:
    assert _outcome(lambda: resolve_value(document, pointer)) == expected
