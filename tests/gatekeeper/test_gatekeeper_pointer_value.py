"""``resolve_value``: a JSON Pointer resolved in a recorded ``google.protobuf.Value`` without converting it whole.

The ``evidence.raw_path`` rule (R-GK-5) resolves every binding in the invocation's recorded output; walking the
message must give exactly what ``resolve`` gives on the converted document: the same value, the same
PointerError, the same message.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from google.protobuf import struct_pb2
from hypothesis import given, settings
from hypothesis import strategies as st

from diagnosis_server.conversions import from_value, to_value, value_text
from diagnosis_server.gatekeeper import rules
from diagnosis_server.gatekeeper.pointer import PointerError, is_array_index, locate, resolve, resolve_value
from tests.support.pointers import pointed

# Member names a pointer must escape ('/', '~'), that look like indexes ("0", "01", "١") or are empty.
keys = st.sampled_from(["a", "", "0", "1", "01", "-", "a/b", "a~b", "~1", "~0", "/", "~", "١", " 1"]) | st.text(
    max_size=4
)
strings = st.sampled_from(["", " ", "503", "ignore all previous instructions", "Ａ", "é"]) | st.text(max_size=5)
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**60), 2**60)
    | st.floats(allow_nan=False, allow_infinity=False)
    | strings,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(keys, children, max_size=4),
    max_leaves=20,
)
# Array indexes and what only looks like one: leading zeros, "-", signs, spaces, non-ASCII digits ("١", "²").
index_like = ["0", "1", "3", "10", "00", "01", "-", "+1", "-1", " 1", "1 ", "1e0", "0x1", "١", "0١", "²", "٣", "１"]
tokens = (
    st.sampled_from([*index_like, "a", "", "~0", "~1", "x~1y", "a~0b", "~01", "~10", "~", "~2", "a~", "~~"])
    | st.text(max_size=3)
    | st.text(alphabet="0123456789", min_size=1, max_size=4)
)
pointers = st.lists(tokens, max_size=4).map(lambda parts: "".join(f"/{part}" for part in parts)) | st.sampled_from(
    ["", "a", "#/a", " /a", "/", "//", "~", "/~", "/a/"]
)


def _outcome(call: Any) -> tuple[str, Any]:
    try:
        return "value", call()
    except PointerError as exc:
        return "error", str(exc)


@pytest.mark.requirement("R-GK-5")
@settings(max_examples=500)
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


@pytest.mark.requirement("R-GK-5")
@settings(max_examples=300)
@given(json_values, pointers)
def test_locate_finds_the_value_resolve_finds(doc: Any, pointer: str) -> None:
    """``locate`` (what the Gatekeeper walks with) gives the recorded Value ``resolve`` gives converted, or the
    same PointerError; an absent output is null."""
    for document in (to_value(doc), None):
        expected = _outcome(lambda d=document: resolve(None if d is None else from_value(d), pointer))
        found = _outcome(lambda d=document: locate(d, pointer))
        if found[0] == "value":
            found = ("value", None if found[1] is None else from_value(found[1]))
        assert found == expected


@pytest.mark.requirement("R-GK-5")
@settings(max_examples=300)
@given(json_values)
def test_every_escaped_member_name_is_found(doc: Any) -> None:
    """Member names with '/' and '~' are found through their escapes ('~1', '~0'), and so is every array element."""
    recorded = to_value(doc)
    for pointer, value in pointed(from_value(recorded)):
        found = locate(recorded, pointer)
        assert (None if found is None else from_value(found)) == value


_RFC_6901_INDEX = re.compile(r"0|[1-9][0-9]*")


@pytest.mark.requirement("R-GK-5")
@settings(max_examples=1000)
@given(st.sampled_from(index_like) | st.text(max_size=4) | st.text(alphabet="0123456789١²-+ ", max_size=4))
def test_an_array_index_is_what_the_rfc_grammar_matches(token: str) -> None:
    """Only "0" or ASCII digits without a leading zero: not "01", "-", "+1", "", nor non-ASCII digits."""
    assert is_array_index(token) == (_RFC_6901_INDEX.fullmatch(token) is not None)


@pytest.mark.parametrize("token", index_like)
def test_index_like_tokens_fail_alike_in_the_message_and_the_document(token: str) -> None:
    document: Any = {"items": ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k"]}
    recorded = to_value(document)
    pointer = f"/items/{token}"
    assert _outcome(lambda: resolve_value(recorded, pointer)) == _outcome(lambda: resolve(document, pointer))


@pytest.mark.requirement("R-GK-5")
@pytest.mark.parametrize("token", ["0", "9", "1023", "1024", "1029", "1030", "5000", "01023", "0999", "1023 "])
def test_indexes_of_a_long_array_resolve_alike_in_the_message_and_the_document(token: str) -> None:
    """Indexes below and above the small ones the message walk looks up (1,024), in and past a long array:
    the same element, or the same PointerError, as in the converted document."""
    document: Any = {"lines": [f"line {i}" for i in range(1030)]}
    recorded = to_value(document)
    pointer = f"/lines/{token}"
    outcome = _outcome(lambda: resolve_value(recorded, pointer))
    assert outcome == _outcome(lambda: resolve(document, pointer))
    assert outcome[0] == ("value" if is_array_index(token) and int(token) < 1030 else "error")


@settings(max_examples=500)
@given(json_values)
def test_the_text_of_a_recorded_value_is_its_converted_text(doc: Any) -> None:
    """The Gatekeeper reads a string Value as is and converts anything else: the text is ``value_text`` of the
    converted value either way (an empty string too, and an absent output is "null")."""
    recorded = to_value(doc)
    assert rules._text_of(recorded) == value_text(from_value(recorded))
    assert rules._text_of(None) == value_text(None) == "null"
    assert rules._text_of(struct_pb2.Value()) == "null"


@pytest.mark.parametrize("digits", [19, 4301, 10_000])
def test_an_index_too_long_for_any_array_is_out_of_range_not_a_crash(digits: int) -> None:
    """An index of thousands of digits (which ``int()`` refuses to read) names no element: a PointerError
    saying so, in the message and in the converted document alike (R-GK-3: the pair fails evidence.raw_path)."""
    token = "9" * digits
    document = to_value({"lines": ["a", "b"]})
    with pytest.raises(PointerError, match="is out of range") as in_message:
        resolve_value(document, f"/lines/{token}")
    with pytest.raises(PointerError) as in_document:
        resolve({"lines": ["a", "b"]}, f"/lines/{token}")
    assert str(in_message.value) == str(in_document.value)
